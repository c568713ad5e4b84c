// A database written by the store before it was written over engines (IndexedDB schema 5: Blob
// bodies, or bodies as pieces) opens in this engine upgraded to schema 8 and reads the same:
// every version byte for byte, uploads, parts, accounts with their usage (issue 22). The database
// is made again in the page from the fixture (test/fixtures/legacy-idb-*.json.gz, written by the
// earlier store: test/unit/legacy-data.test.ts) by the same restoreDump the Node test uses, then opened by the product's store module
// bundled as a page script, with the body form detected as the worker detects it. WebKit with
// ephemeral storage refuses Blobs, so it gets the database with pieces only.
import { describe, it, expect, beforeAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { useServicePage } from './support/fixture.ts';
import { restoreDump } from '../support/legacy-dump.ts';

const service = useServicePage();
const fixture = (name: string) => join(import.meta.dirname, '../fixtures', name);
const expected = JSON.parse(readFileSync(fixture('legacy-expected.json'), 'utf8'));

/** The product's store module, sw/store/idb.ts with everything under it, as a classic script. */
let storeScript = '';
beforeAll(async () => {
  const out = await build({
    stdin: { contents: "import { openIdbStore } from './sw/store/idb.ts';\n(globalThis as any).__openIdbStore = openIdbStore;\n", resolveDir: process.cwd(), loader: 'ts' },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    write: false,
  });
  storeScript = out.outputFiles[0]!.text;
});

interface InPage {
  script: string;
  /** test/support/legacy-dump.ts's restoreDump, as source: the page makes the database with it. */
  restoreSource: string;
  name: string;
  dump: unknown;
}

const forms = service.name === 'webkit' ? (['pieces'] as const) : (['blobs', 'pieces'] as const);

describe(`a schema-5 database in ${service.name}`, () => {
  for (const form of forms) {
    it(`with bodies as ${form}: upgraded to 6, every version, upload, part and account reads as it was written`, { timeout: 60_000 }, async () => {
      const dump = JSON.parse(gunzipSync(readFileSync(fixture(`legacy-idb-${form}.json.gz`))).toString('utf8'));
      const got = await service.page.evaluate(async ({ script, restoreSource, name, dump }: InPage) => {
        (0, eval)(script);
        const restore = (0, eval)(`(${restoreSource})`) as (factory: IDBFactory, name: string, dump: unknown) => Promise<void>;
        await new Promise<void>((resolve, reject) => {
          const del = indexedDB.deleteDatabase(name);
          del.onsuccess = () => resolve();
          del.onerror = () => reject(del.error);
        });
        await restore(indexedDB, name, dump);

        // What the store's reads answer, as test/support/described.ts puts it.
        type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
        const store: Any = await (globalThis as Any).__openIdbStore({ name });
        const hex = (b: ArrayBuffer) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, '0')).join('');
        const bytesOf = async (body: Any): Promise<ArrayBuffer> =>
          new Response(body instanceof Blob || body instanceof Uint8Array ? body : body.stream()).arrayBuffer();
        const out: Record<string, unknown> = {
          accounts: (await store.listAccounts()).map(({ accessKeyId, usedBytes, quotaBytes }: Any) => ({ accessKeyId, usedBytes, quotaBytes })),
        };
        for (const b of await store.listAllBuckets()) {
          const ref = { name: b.name, id: b.id };
          const listed = await store.listObjectVersions(ref, { prefix: '', marker: '', versionIdMarker: '', maxKeys: 1000 });
          const versions = [];
          for (const v of listed.versions) {
            const got = await store.getObject(ref, v.object.key, v.object.versionId);
            const { chunks: _c, bucket: _b, ...record } = v.object;
            versions.push({ ...record, isLatest: v.isLatest, sha256: hex(await crypto.subtle.digest('SHA-256', await bytesOf(got.body))) });
          }
          const uploads = await store.listMultipartUploads(ref, { prefix: '', keyMarker: '', uploadIdMarker: '', maxUploads: 1000 });
          const parts = [];
          for (const u of uploads.uploads) {
            const p = await store.listParts(ref, u.uploadId, 0, 1000);
            parts.push(...p.parts.map(({ bodyId: _, ...part }: Any) => part));
          }
          out[b.name] = { bucket: { ...b, id: undefined }, versions, uploads: uploads.uploads.map(({ bucketId: _, ...u }: Any) => u), parts };
        }
        const version = (await store.db()).version;
        store.close();
        await new Promise<void>((resolve) => {
          const del = indexedDB.deleteDatabase(name);
          del.onsuccess = del.onerror = del.onblocked = () => resolve();
        });
        return { version, described: JSON.parse(JSON.stringify(out)) };
      }, { script: storeScript, restoreSource: restoreDump.toString(), name: `legacy-${form}`, dump } satisfies InPage);
      expect(got.version).toBe(8);
      expect(got.described).toEqual(JSON.parse(JSON.stringify(expected)));
    });
  }
});
