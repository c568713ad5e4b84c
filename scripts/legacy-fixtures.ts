// Writes test/fixtures/legacy-*: a --data directory and an IndexedDB database as the stores before
// issue 22 wrote them (node/lmdb-store.ts layout 1, sw/store/idb.ts schema 5), so that the store
// over engines is tested against data made by that code. Run once, at the commit that adds the
// fixtures (it imports the stores of that commit): node --import tsx scripts/legacy-fixtures.ts
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { openIdbStore } from '../sw/store/idb.ts';
import { openLmdbStore } from '../node/lmdb-store.ts';
import type { BucketRef, Store } from '../sw/store/types.ts';
import { described } from '../test/support/described.ts';

const pattern = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff) as Uint8Array<ArrayBuffer>;
const meta = { contentType: 'text/plain', headers: { 'cache-control': 'no-cache' }, meta: [['color', 'blue']] as [string, string][] };
const at = Date.UTC(2026, 10, 25, 12);

async function seed(store: Store): Promise<void> {
  await store.putAccount({ accessKeyId: 'alice', secret: 'alice-secret', displayName: 'Alice', quotaBytes: 10 * 1024 * 1024 });
  await store.createBucket({ name: 'photos', owner: 'svcadmin', acl: 'public-read', created: at, nextVersionId: 1 });
  await store.createBucket({ name: 'versioned', owner: 'alice', acl: 'private', created: at, nextVersionId: 1 });
  const photos = (await store.getBucket('photos')) as BucketRef;
  const versioned = (await store.getBucket('versioned')) as BucketRef;
  const put = (b: BucketRef, key: string, body: Uint8Array<ArrayBuffer>, etag: string) =>
    store.putObject(b, { key, size: body.byteLength, etag, lastModified: at, ...meta }, body);
  await put(photos, 'a.txt', pattern(100, 1), 'e1');
  await put(photos, 'big.bin', pattern(300 * 1024, 2), 'e2');
  await put(photos, '\u{1F600}/smile.txt', pattern(10, 3), 'e3');
  for (const key of ['folder/1', 'folder/2', 'folder/3']) await put(photos, key, pattern(20, 4), 'e4');
  await store.putBucketVersioning(versioned, 'Enabled');
  await put(versioned, 'doc.txt', pattern(50, 5), 'v1');
  await put(versioned, 'doc.txt', pattern(60, 6), 'v2');
  await put(versioned, 'gone.txt', pattern(70, 7), 'v3');
  await store.deleteObject(versioned, 'gone.txt');
  // A completed multipart object, and an upload in progress.
  await store.createMultipartUpload(photos, { uploadId: 'upload-done', key: 'mp.bin', initiated: at, ...meta });
  await store.uploadPart(photos, { uploadId: 'upload-done', partNumber: 1, etag: 'p1', size: 40 * 1024, lastModified: at }, pattern(40 * 1024, 8));
  await store.uploadPart(photos, { uploadId: 'upload-done', partNumber: 2, etag: 'p2', size: 1000, lastModified: at }, pattern(1000, 9));
  await store.completeMultipartUpload(photos, 'upload-done', [{ partNumber: 1, etag: 'p1' }, { partNumber: 2, etag: 'p2' }],
    { key: 'mp.bin', etag: 'mp-2', lastModified: at, ...meta }, 1);
  await store.createMultipartUpload(versioned, { uploadId: 'upload-open', key: 'later.bin', initiated: at, ...meta });
  await store.uploadPart(versioned, { uploadId: 'upload-open', partNumber: 3, etag: 'p3', size: 500, lastModified: at }, pattern(500, 10));
}

// LMDB: the directory, packed.
const dir = mkdtempSync(join(tmpdir(), 'legacy-lmdb-'));
const lmdb = await openLmdbStore({ path: join(dir, 'data') });
await seed(lmdb);
writeFileSync('test/fixtures/legacy-expected.json', JSON.stringify(await described(lmdb), null, 1) + '\n');
await lmdb.close();
execFileSync('tar', ['czf', join(process.cwd(), 'test/fixtures/legacy-data-dir.tar.gz'), '-C', dir, 'data']);
rmSync(dir, { recursive: true });

// IndexedDB, with Blob bodies and with bodies as pieces: every object store's schema and records,
// bytes as base64, gzipped.
const encode = async (v: unknown): Promise<unknown> => {
  if (v instanceof Blob) return { $blob: Buffer.from(await v.arrayBuffer()).toString('base64') };
  if (v instanceof Uint8Array) return { $bytes: Buffer.from(v).toString('base64') };
  if (Array.isArray(v)) return Promise.all(v.map(encode));
  if (v && typeof v === 'object') return Object.fromEntries(await Promise.all(Object.entries(v).map(async ([k, x]) => [k, await encode(x)])));
  return v;
};
for (const bodies of ['blobs', 'pieces'] as const) {
  const idb = await openIdbStore({ indexedDB: new IDBFactory(), name: 'legacy', bodies });
  await seed(idb);
  if (JSON.stringify(await described(idb)) !== JSON.stringify(JSON.parse(readFileSync('test/fixtures/legacy-expected.json', 'utf8')))) {
    throw new Error(`the IndexedDB store (${bodies}) does not read as the LMDB one`);
  }
  const db = await idb.db();
  const stores = [];
  for (const name of db.objectStoreNames) {
    const s = db.transaction(name).store;
    const keys = await s.getAllKeys();
    const values = await s.getAll();
    stores.push({
      name,
      keyPath: s.keyPath,
      indexes: [...s.indexNames].map((i) => ({ name: i, keyPath: s.index(i).keyPath })),
      records: await Promise.all(keys.map(async (k, i) => ({ key: await encode(k), value: await encode(values[i]) }))),
    });
  }
  writeFileSync(`test/fixtures/legacy-idb-${bodies}.json.gz`, gzipSync(JSON.stringify({ version: db.version, stores }) + '\n'));
  idb.close();
}
console.log('wrote test/fixtures/legacy-data-dir.tar.gz and test/fixtures/legacy-idb-{blobs,pieces}.json.gz');
