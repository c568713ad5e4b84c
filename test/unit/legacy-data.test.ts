// Data written before the store was written over engines opens and reads the same after the
// upgrade (issue 22): a --data directory (LMDB layout 1) and IndexedDB databases (schema 5, with
// Blob bodies and with bodies as pieces), each made by the stores of that time
// (scripts/legacy-fixtures.ts as of commit 8fd498a, removed since), with what their reads answered
// then (test/fixtures/legacy-expected.json). After the upgrade every version reads byte for byte,
// the store invariants hold, writes work, and a directory's large bodies are pieces.
import { describe, it, expect } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { IDBFactory } from 'fake-indexeddb';
import { openLmdbStore } from '../../node/lmdb-store.ts';
import { startServer } from '../../node/server.ts';
import { openIdbStore } from '../../sw/store/idb.ts';
import { engineOf } from '../../sw/store/rules/store.ts';
import { BODIES } from '../../sw/store/schema.ts';
import { get } from '../../sw/store/engine/types.ts';
import type { BucketRef, Store } from '../../sw/store/types.ts';
import { described } from '../support/described.ts';
import { restoreDump, type Dump } from '../support/legacy-dump.ts';
import { contents, integrity, SOUND, tempDir } from '../support/stores.ts';

const fixture = (name: string) => join(import.meta.dirname, '../fixtures', name);
const expected = JSON.parse(readFileSync(fixture('legacy-expected.json'), 'utf8'));

/** Reads and writes that must work on the upgraded data. */
async function stillWorks(store: Store): Promise<void> {
  const photos = (await store.getBucket('photos'))!;
  const ref: BucketRef = { name: photos.name, id: photos.id };
  const body = new Uint8Array(40_000).fill(7);
  const put = await store.putObject(ref, { key: 'new.bin', size: body.byteLength, etag: 'n', lastModified: 1, contentType: 'a/b', headers: {}, meta: [] }, body);
  expect(typeof put).toBe('object');
  // The old multipart object, deleted; a folder, deleted in one request; the upload in progress, completed.
  expect(await store.deleteObject(ref, 'mp.bin')).toBe('ok');
  expect(await store.deleteObjects(ref, [{ key: 'folder/1' }, { key: 'folder/2' }, { key: 'folder/3' }])).toEqual(['deleted', 'deleted', 'deleted']);
  const versioned = (await store.getBucket('versioned'))!;
  const done = await store.completeMultipartUpload({ name: versioned.name, id: versioned.id }, 'upload-open', [{ partNumber: 3, etag: 'p3' }],
    { key: 'later.bin', etag: 'l-1', lastModified: 2, contentType: 'a/b', headers: {}, meta: [] }, 1);
  expect(done).toMatchObject({ key: 'later.bin', size: 500 });
  const listed = await store.listObjects(ref, { prefix: '', marker: '', delimiter: '/', maxKeys: 100 });
  expect(listed).not.toBe('noSuchBucket');
  if (listed === 'noSuchBucket') return;
  expect(listed.entries.map((e) => (e.kind === 'object' ? e.object.key : e.prefix))).toEqual(['a.txt', 'big.bin', 'new.bin', '\u{1F600}/']);
  expect(integrity(await contents(store))).toEqual(SOUND);
}

describe('a --data directory written by the LMDB store of layout 1', () => {
  it('opens upgraded: every version reads byte for byte, the invariants hold, large bodies are pieces, writes work', async () => {
    const dir = tempDir();
    execFileSync('tar', ['xzf', fixture('legacy-data-dir.tar.gz'), '-C', dir]);
    const store = await openLmdbStore({ path: join(dir, 'data') });
    try {
      expect(store.upgradedFrom).toBe(1);
      expect(await described(store)).toEqual(expected);
      expect(integrity(await contents(store))).toEqual(SOUND);
      const photos = (await store.getBucket('photos'))!;
      const big = await store.headObject({ name: 'photos', id: photos.id }, 'big.bin');
      const id = typeof big === 'object' ? big.chunks[0]!.id : '';
      const record = await engineOf.get(store)!.read([BODIES], () => get(BODIES, [id]));
      expect(record).toEqual({ id, pieces: 2, pieceBytes: 256 * 1024, size: 300 * 1024 });
    } finally {
      await store.close();
    }
    // Opened again (layout 2 now): the same, and then written to.
    const again = await openLmdbStore({ path: join(dir, 'data') });
    try {
      expect(again.upgradedFrom).toBeUndefined();
      expect(await described(again)).toEqual(expected);
      await stillWorks(again);
    } finally {
      await again.close();
    }
  });
});

it('`swbucket serve --data` on such a directory says it upgraded it (startServer: dataUpgradedFrom)', async () => {
  const dir = tempDir();
  execFileSync('tar', ['xzf', fixture('legacy-data-dir.tar.gz'), '-C', dir]);
  const first = await startServer({ port: 0, log: () => {}, dataDir: join(dir, 'data') });
  await first.close();
  const second = await startServer({ port: 0, log: () => {}, dataDir: join(dir, 'data') });
  await second.close();
  expect([first.dataUpgradedFrom, second.dataUpgradedFrom]).toEqual([1, undefined]);
});

for (const form of ['blobs', 'pieces'] as const) {
  describe(`an IndexedDB database of schema 5 with bodies as ${form}`, () => {
    it('opens upgraded to schema 8: every version reads byte for byte, the invariants hold, writes work', async () => {
      const dump = JSON.parse(gunzipSync(readFileSync(fixture(`legacy-idb-${form}.json.gz`))).toString('utf8')) as Dump;
      expect(dump.version).toBe(5);
      const factory = new IDBFactory();
      await restoreDump(factory, 'legacy', dump);
      const store = await openIdbStore({ indexedDB: factory, name: 'legacy', bodies: form });
      try {
        expect((await store.db()).version).toBe(8);
        expect(await described(store)).toEqual(expected);
        expect(integrity(await contents(store))).toEqual(SOUND);
        await stillWorks(store);
      } finally {
        store.close();
      }
    });
  });
}
