// The engine interface (sw/store/engine/types.ts), one suite every engine runs (memory, IndexedDB
// over fake-indexeddb, LMDB): key order as IndexedDB orders keys, gets and ranges (prefix, bounds,
// reverse, limit), reads sent together, writes seen by the step's own later reads, range deletes,
// atomic steps — a step that throws leaves nothing, and a step cannot wait for anything but its
// reads — and fault injection (sw/store/engine/faults.ts). Then IndexedDB's group commit, and the
// IndexedDB engine reading a database today's store wrote, through the schema's tables.
import { describe, it, expect, afterAll } from 'vitest';
import { IDBFactory } from 'fake-indexeddb';
import { open as openLmdb } from 'lmdb';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryEngine } from '../../sw/store/engine/memory.ts';
import { idbEngine } from '../../sw/store/engine/idb.ts';
import { lmdbEngine } from '../../node/engine-lmdb.ts';
import { compareKeys } from '../../sw/store/engine/keys.ts';
import { faultyEngine } from '../../sw/store/engine/faults.ts';
import { openIdbStore } from '../../sw/store/idb.ts';
import { ACCOUNTS as TODAY_ACCOUNTS, BODIES, BUCKETS, OBJECTS as TODAY_OBJECTS, PARTS, UPLOADS, VERSIONS } from '../../sw/store/schema.ts';
import { all, count, get, getRead, range, rangeRead, type Engine, type Key, type Table } from '../../sw/store/engine/types.ts';

interface Obj { bucket: string; key: string; n: number }
interface Acc { id: string; used: number }

const OBJECTS: Table<Obj> = { name: 'objects', parts: 2, key: (o) => [o.bucket, o.key] };
const ACCOUNTS: Table<Acc> = { name: 'accounts', parts: 1, key: (a) => [a.id] };
/** A table of bare bytes under out-of-line keys, as the store keeps body pieces. */
const BYTES: Table<Uint8Array> = { name: 'bytes', parts: 2 };
const TABLES = [OBJECTS, ACCOUNTS, BYTES] as Table<unknown>[];

async function openIdb(): Promise<Engine> {
  const factory = new IDBFactory();
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const req = factory.open('engine-test', 1);
    req.onupgradeneeded = () => {
      // As today's stores are: in-line keys for the objects, out-of-line for the accounts.
      req.result.createObjectStore('objects', { keyPath: ['bucket', 'key'] });
      req.result.createObjectStore('accounts');
      req.result.createObjectStore('bytes');
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  return idbEngine(db);
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function openLmdbEngine(): Promise<Engine> {
  const dir = mkdtempSync(join(tmpdir(), 'swbucket-engine-'));
  dirs.push(dir);
  return lmdbEngine(openLmdb({ path: dir, maxDbs: 16, overlappingSync: false, eventTurnBatching: false }), { dir });
}

const ENGINES: [string, () => Promise<Engine>][] = [
  ['memory', async () => memoryEngine()],
  ['IndexedDB (fake-indexeddb)', openIdb],
  ['LMDB', openLmdbEngine],
];

// Keys a listing meets: astral characters (surrogate pairs) sort before U+E000–U+FFFF by code
// unit; a key sorts before every longer key it begins.
const KEYS = ['a', 'a/b', 'ab', '\u{1F600}', '\uE000', 'z', '', 'a\u0000'];

for (const [name, open] of ENGINES) {
  describe(`engine: ${name}`, () => {
    async function seeded(): Promise<Engine> {
      const e = await open();
      await e.write(TABLES, function* (w) {
        for (const [i, key] of KEYS.entries()) w.put(OBJECTS, { bucket: 'b1', key, n: i });
        w.put(OBJECTS, { bucket: 'b0', key: 'x', n: 100 });
        w.put(OBJECTS, { bucket: 'b2', key: 'y', n: 200 });
        w.put(ACCOUNTS, { id: 'alice', used: 5 });
      });
      return e;
    }
    const keysOf = (objects: Obj[]) => objects.map((o) => o.key);
    const sorted = [...KEYS].sort((x, y) => compareKeys([x], [y]));

    it('lists a prefix in IndexedDB key order, forwards and backwards, with a limit', async () => {
      const e = await seeded();
      expect(sorted).toEqual(['', 'a', 'a\u0000', 'a/b', 'ab', 'z', '\u{1F600}', '\uE000']);
      const seen = await e.read(TABLES, function* () {
        return yield* all(
          rangeRead(OBJECTS, { prefix: ['b1'] }),
          rangeRead(OBJECTS, { prefix: ['b1'] }, { reverse: true, limit: 3 }),
          rangeRead(OBJECTS, { prefix: ['b1'] }, { limit: 2 }),
          rangeRead(OBJECTS, { prefix: [] }),
        );
      });
      expect(keysOf(seen[0])).toEqual(sorted);
      expect(keysOf(seen[1])).toEqual(sorted.slice(-3).reverse());
      expect(keysOf(seen[2])).toEqual(sorted.slice(0, 2));
      expect(seen[3].map((o) => `${o.bucket}:${o.key}`)).toEqual(['b0:x', ...sorted.map((k) => `b1:${k}`), 'b2:y']);
    });

    it('bounds a range: from a key (after it when open), to a key (before it when open)', async () => {
      const e = await seeded();
      const r = (start?: Key, startOpen?: boolean, end?: Key, endOpen?: boolean) =>
        e.read(TABLES, function* () {
          return keysOf(yield* range(OBJECTS, { prefix: ['b1'], ...(start ? { start, startOpen } : {}), ...(end ? { end, endOpen } : {}) }));
        });
      expect(await r(['b1', 'a'])).toEqual(sorted.slice(1));
      expect(await r(['b1', 'a'], true)).toEqual(sorted.slice(2));
      expect(await r(undefined, false, ['b1', 'ab'])).toEqual(sorted.slice(0, 5));
      expect(await r(undefined, false, ['b1', 'ab'], true)).toEqual(sorted.slice(0, 4));
      expect(await r(['b1', 'a'], true, ['b1', 'z'], true)).toEqual(['a\u0000', 'a/b', 'ab']);
    });

    it('counts a range; keeps bare bytes under the keys given, read back in key order', async () => {
      const e = await seeded();
      await e.write(TABLES, function* (w) {
        for (const [id, n] of [['y', 2], ['x', 10], ['x', 2], ['x', 0]] as const) w.put(BYTES, new Uint8Array([n, 7]), [id, n]);
      });
      const read = await e.read(TABLES, function* () {
        return yield* all(
          rangeRead(BYTES, { prefix: ['x'] }),
          rangeRead(BYTES, { prefix: [], start: ['x', 2], end: ['y', 2] }),
        );
      });
      expect(read.map((values) => values.map((v) => (expect(v).toBeInstanceOf(Uint8Array), Array.from(v)))))
        .toEqual([[0, 2, 10], [2, 10, 2]].map((ns) => ns.map((n) => [n, 7])));
      expect(await e.read(TABLES, function* () {
        return [
          yield* count(OBJECTS, { prefix: ['b1'] }),
          yield* count(OBJECTS, { prefix: ['b1'], start: ['b1', 'a'], startOpen: true, end: ['b1', 'z'] }),
          yield* count(BYTES, { prefix: [] }),
          yield* count(ACCOUNTS, { prefix: ['nobody'] }),
        ];
      })).toEqual([KEYS.length, 4, 4, 0]);
      await expect(e.write(TABLES, function* (w) {
        w.put(BYTES, new Uint8Array([1]));
      })).rejects.toThrow(/needs a key/);
    });

    it('gets one record of a one-part and of a two-part table; a missing one is undefined', async () => {
      const e = await seeded();
      expect(await e.read(TABLES, function* () {
        const [acc, obj, none] = yield* all(getRead(ACCOUNTS, ['alice']), getRead(OBJECTS, ['b1', 'ab']), getRead(OBJECTS, ['b1', 'nope']));
        return { acc, obj, none };
      })).toEqual({ acc: { id: 'alice', used: 5 }, obj: { bucket: 'b1', key: 'ab', n: 2 }, none: undefined });
    });

    it("a step's reads see its own writes; deletes and range deletes", async () => {
      const e = await seeded();
      const inside = await e.write(TABLES, function* (w) {
        w.put(ACCOUNTS, { id: 'alice', used: 9 });
        const acc = yield* get(ACCOUNTS, ['alice']);
        w.delete(OBJECTS, ['b1', 'z']);
        w.deleteRange(OBJECTS, { prefix: ['b1'], start: ['b1', 'a'], end: ['b1', 'ab'], endOpen: true });
        return { used: acc?.used, left: keysOf(yield* range(OBJECTS, { prefix: ['b1'] })) };
      });
      const left = ['', 'ab', '\u{1F600}', '\uE000'];
      expect(inside).toEqual({ used: 9, left });
      expect(await e.read(TABLES, function* () {
        return keysOf(yield* range(OBJECTS, { prefix: ['b1'] }));
      })).toEqual(left);
      // The neighbours of the range are untouched.
      expect(await e.read(TABLES, function* () {
        return (yield* range(OBJECTS, { prefix: [] })).map((o) => o.bucket).filter((b) => b !== 'b1');
      })).toEqual(['b0', 'b2']);
    });

    it('a step that throws leaves nothing it wrote, and the error reaches the caller', async () => {
      const e = await seeded();
      await expect(e.write(TABLES, function* (w) {
        w.put(ACCOUNTS, { id: 'alice', used: 1_000 });
        w.deleteRange(OBJECTS, { prefix: ['b1'] });
        yield* get(ACCOUNTS, ['alice']);
        throw new Error('refused half-way');
      })).rejects.toThrow('refused half-way');
      expect(await e.read(TABLES, function* () {
        const [acc, objects] = yield* all(getRead(ACCOUNTS, ['alice']), rangeRead(OBJECTS, { prefix: ['b1'] }));
        return { used: acc?.used, count: objects.length };
      })).toEqual({ used: 5, count: KEYS.length });
    });

    it('a step may yield only reads: a Promise (an await in disguise) fails it, leaving nothing', async () => {
      const e = await seeded();
      await expect(e.write(TABLES, function* (w) {
        w.put(ACCOUNTS, { id: 'alice', used: 77 });
        yield Promise.resolve(1) as never;
      })).rejects.toThrow(/may yield only reads.*not a Promise/);
      expect(await e.read(TABLES, function* () {
        return (yield* get(ACCOUNTS, ['alice']))?.used;
      })).toBe(5);
    });

    it('a read step cannot write; a key part that no engine can store is refused', async () => {
      const e = await seeded();
      await expect(e.read(TABLES, function* (w) {
        w.put(ACCOUNTS, { id: 'x', used: 0 });
      })).rejects.toThrow('A read step cannot write.');
      await expect(e.write(TABLES, function* (w) {
        w.put(OBJECTS, { bucket: 'b1', key: 1.5 as unknown as string, n: 0 });
      })).rejects.toThrow(/non-negative safe integer/);
    });

    it('under fault injection, the chosen write fails at its commit and leaves nothing; the others commit', async () => {
      const full = new Error('the disk is full');
      const e = faultyEngine(await seeded(), { failWrite: (n) => (n === 2 ? full : undefined) });
      const put = (id: string) => e.write(TABLES, function* (w) {
        w.put(ACCOUNTS, { id, used: 1 });
        w.deleteRange(OBJECTS, { prefix: ['b2'] });
        return id;
      });
      const outcomes = await Promise.allSettled([put('one'), put('two'), put('three')]);
      expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual(['one', 'the disk is full', 'three']);
      expect(e.writes).toBe(3);
      expect(await e.read(TABLES, function* () {
        return (yield* range(ACCOUNTS, { prefix: [] })).map((a) => a.id);
      })).toEqual(['alice', 'one', 'three']);
    });

    it('steps given together each see the ones before them', async () => {
      const e = await seeded();
      const bump = () => e.write(TABLES, function* (w) {
        const acc = (yield* get(ACCOUNTS, ['alice']))!;
        w.put(ACCOUNTS, { ...acc, used: acc.used + 1 });
        return acc.used + 1;
      });
      expect((await Promise.all(Array.from({ length: 20 }, bump))).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => 6 + i));
    });
  });
}

describe('engine: IndexedDB group commit', () => {
  it('write steps that arrive while one commits share one transaction; each sees those before it', async () => {
    const factory = new IDBFactory();
    const db = await new Promise<IDBDatabase>((resolve) => {
      const req = factory.open('group', 1);
      req.onupgradeneeded = () => req.result.createObjectStore('accounts');
      req.onsuccess = () => resolve(req.result);
    });
    let transactions = 0;
    const open = db.transaction.bind(db);
    db.transaction = ((...args: Parameters<IDBDatabase['transaction']>) => {
      if (args[1] === 'readwrite') transactions++;
      return open(...args);
    }) as IDBDatabase['transaction'];
    const e = idbEngine(db);
    const bump = () => e.write([ACCOUNTS as Table<unknown>], function* (w) {
      const used = (yield* get(ACCOUNTS, ['a']))?.used ?? 0;
      w.put(ACCOUNTS, { id: 'a', used: used + 1 });
      return used + 1;
    });
    const results = await Promise.all(Array.from({ length: 20 }, bump));
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    // The first alone, the other 19 together.
    expect(transactions).toBe(2);
  });
});

describe("engine: IndexedDB over today's database", () => {
  it('reads what the current store wrote, through the schema tables: accounts, buckets, objects, versions, uploads, parts', async () => {
    const factory = new IDBFactory();
    const store = await openIdbStore({ indexedDB: factory, name: 'today' });
    await store.createBucket({ name: 'photos', owner: 'svcadmin', acl: 'private', created: 1, nextVersionId: 1 });
    const bucket = await store.getBucket('photos');
    const ref = { name: 'photos', id: bucket!.id };
    await store.putBucketVersioning(ref, 'Enabled');
    const object = (o: { key: string; etag: string }) => ({ ...o, size: 2, lastModified: 5, contentType: 'text/plain', headers: {}, meta: [] as [string, string][] });
    await store.putObject(ref, object({ key: 'a.txt', etag: 'e1' }), new TextEncoder().encode('v1') as Uint8Array<ArrayBuffer>);
    await store.putObject(ref, object({ key: 'a.txt', etag: 'e2' }), new TextEncoder().encode('v2') as Uint8Array<ArrayBuffer>);
    await store.createMultipartUpload(ref, { uploadId: 'u1', key: 'big.bin', initiated: 7, contentType: 'application/octet-stream', headers: {}, meta: [] });
    await store.uploadPart(ref, { uploadId: 'u1', partNumber: 1, etag: 'p1', size: 3, lastModified: 8 }, new Uint8Array([1, 2, 3]));
    store.close();

    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const req = factory.open('today');
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    const e = idbEngine(db);
    const tables = [TODAY_ACCOUNTS, BUCKETS, TODAY_OBJECTS, VERSIONS, UPLOADS, PARTS, BODIES] as Table<unknown>[];
    const seen = await e.read(tables, function* () {
      const [root, photos, current, history, upload, parts] = yield* all(
        getRead(TODAY_ACCOUNTS, ['svcadmin']), getRead(BUCKETS, ['photos']), rangeRead(TODAY_OBJECTS, { prefix: ['photos'] }),
        rangeRead(VERSIONS, { prefix: ['photos', 'a.txt'] }), getRead(UPLOADS, ['u1']), rangeRead(PARTS, { prefix: ['u1'] }),
      );
      const body = yield* get(BODIES, [current[0]!.chunks[0]!.id]);
      return { root: root?.root, bucket: photos?.id, current: current.map((o) => [o.key, o.etag]), history: history.map((o) => o.etag),
        upload: upload?.key, parts: parts.map((p) => [p.partNumber, p.etag]), body: body !== undefined };
    });
    expect(seen).toEqual({
      root: true, bucket: bucket!.id, current: [['a.txt', 'e2']], history: ['e1'], upload: 'big.bin', parts: [[1, 'p1']], body: true,
    });
  });
});
