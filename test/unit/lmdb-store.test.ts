// What only the LMDB store (node/lmdb-store.ts) has to show: its keys sort as IndexedDB's do, its
// data outlives the store object, one store at a time holds a directory, a failing step leaves
// nothing behind while the steps committed with it stay, and a full disk is told apart from other
// failures. Everything else it shares with idb.ts is run by the conformance table and the store,
// objects, versioning, multipart and quota tests over both stores.
import { describe, it, expect } from 'vitest';
import { spawn } from 'node:child_process';
import { writeFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { openLmdbStore, isDiskFull, DataDirError } from '../../node/lmdb-store.ts';
import { tupleKey, stringOf } from '../../node/lmdb-keys.ts';
import { createHandler } from '../../sw/core/handler.ts';
import { send } from '../support/service.ts';
import { tempDir, contents, integrity, SOUND } from '../support/stores.ts';
import type { BucketRef } from '../../sw/store/types.ts';

const B = 'http://photos.svc.localhost';
const cmp = (a: Buffer, b: Buffer) => Buffer.compare(a, b);
/** IndexedDB's order for strings: UTF-16 code units, which is what JS's < compares. */
const utf16 = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Strings that tell UTF-16 order from UTF-8 order, and the edges of each encoded width. */
const EDGES = [
  '', '\u0000', '\u0001', '\u007e', '\u007f', '\u0080', 'a', 'a\u0000', 'a\u0000b', 'ab', 'é', '\u07ff', '\u0800',
  '\u407e', '\u407f', '\u4080', '\ud7ff', '\ud800\udc00', '😀', '𝄞', '\udbff\udfff', '\ue000', '\uf8ff', '\ufffd',
  '\uffff', 'a😀', 'a\ue000', '😀a', '\ue000a',
];

function randomString(r: () => number): string {
  const pools = [[0x20, 0x7f], [0x80, 0x800], [0x800, 0xd800], [0xe000, 0x10000]] as const;
  let s = '';
  for (let n = Math.floor(r() * 6); n > 0; n--) {
    const x = r();
    if (x < 0.2) s += String.fromCodePoint(0x10000 + Math.floor(r() * 0xfffff)); // astral: a surrogate pair
    else {
      const [lo, hi] = pools[Math.floor(r() * pools.length)]!;
      s += String.fromCharCode(lo + Math.floor(r() * (hi - lo)));
    }
  }
  return s;
}

function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('keys sort as IndexedDB compound keys do', () => {
  it('one string: byte order is UTF-16 code-unit order, also where UTF-8 differs', () => {
    const r = rng(7);
    const strings = [...EDGES, ...Array.from({ length: 400 }, () => randomString(r))];
    const byKey = [...strings].sort((a, b) => cmp(tupleKey([a]), tupleKey([b])));
    expect(byKey).toEqual([...strings].sort(utf16));
    // The case lmdb-js's own encoding (UTF-8) gets the other way round.
    expect(cmp(tupleKey(['😀']), tupleKey(['\ue000']))).toBe(-1);
    expect(Buffer.compare(Buffer.from('😀'), Buffer.from('\ue000'))).toBe(1);
  });

  it('tuples: [bucket, key] then versionId; a shorter key before the longer ones it begins', () => {
    const r = rng(11);
    const tuples: [string, string, number][] = [];
    for (let i = 0; i < 300; i++) tuples.push([pickOf(r, ['a', 'ab', 'b']), randomString(r), Math.floor(r() * 2 ** 40)]);
    tuples.push(['a', '', 0], ['a', '', 1], ['a', 'x', 2 ** 53 - 1], ['a', 'x', 256], ['a', 'x\u0000', 0]);
    const model = (x: [string, string, number], y: [string, string, number]) => utf16(x[0], y[0]) || utf16(x[1], y[1]) || x[2] - y[2];
    expect([...tuples].sort((x, y) => cmp(tupleKey(x), tupleKey(y)))).toEqual([...tuples].sort(model));
    // The start of a tuple's range sorts before all its longer keys; after() past them all.
    const start = tupleKey(['a', 'x']);
    expect(cmp(start, tupleKey(['a', 'x', 0]))).toBe(-1);
    expect(cmp(Buffer.concat([start, Buffer.from([0xff])]), tupleKey(['a', 'x\u0000', 0]))).toBe(-1);
    expect(cmp(Buffer.concat([start, Buffer.from([0xff])]), tupleKey(['a', 'x', 2 ** 53 - 1]))).toBe(1);
  });

  it('an open last part starts every key beginning with that text', () => {
    const group = tupleKey(['b', 'dir/'], true);
    for (const k of ['dir/', 'dir/a', 'dir/😀', 'dir/\ue000']) expect(cmp(group, tupleKey(['b', k]))).toBeLessThanOrEqual(0);
    const past = Buffer.concat([group, Buffer.from([0xff])]);
    for (const k of ['dir/', 'dir/\ufffd\ufffd', 'dir/😀']) expect(cmp(past, tupleKey(['b', k]))).toBe(1);
    for (const k of ['dir0', 'dis', 'e']) expect(cmp(past, tupleKey(['b', k]))).toBe(-1);
  });

  it('stringOf reads a one-part key back', () => {
    const r = rng(3);
    for (const s of [...EDGES.filter((x) => !x.includes('\u0000')), ...Array.from({ length: 200 }, () => randomString(r))]) {
      expect(stringOf(tupleKey([s]))).toBe(s);
    }
  });
});

function pickOf<T>(r: () => number, xs: T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

async function bucketIn(store: Awaited<ReturnType<typeof openLmdbStore>>, name = 'photos'): Promise<BucketRef> {
  expect(await store.createBucket({ name, owner: 'svcadmin', acl: 'private', created: Date.now(), nextVersionId: 1 })).toBe('ok');
  const b = await store.getBucket(name);
  return { name, id: b!.id };
}

const obj = (key: string, size: number) => ({ key, size, etag: 'e', lastModified: 1, contentType: 'text/plain', headers: {}, meta: [] as [string, string][] });

describe('the data outlives the store', () => {
  it('a new directory starts with the root account; what was written is there after reopening', async () => {
    const dir = join(tempDir(), 'data'); // created by the store
    let store = await openLmdbStore({ path: dir });
    expect(await store.listAccounts()).toEqual([{ accessKeyId: 'svcadmin', secret: 'svcadmin-secret', displayName: 'svcadmin', usedBytes: 0, root: true }]);
    const handle = createHandler({ store });
    expect((await send(handle, 'PUT', `${B}/`)).status).toBe(200);
    expect((await send(handle, 'PUT', `${B}/a/😀.txt`, { body: 'hello', headers: { 'x-svc-meta-who': 'me' } })).status).toBe(200);
    expect((await send(handle, 'PUT', `${B}/empty`, { body: '' })).status).toBe(200);
    await store.close();

    store = await openLmdbStore({ path: dir });
    const again = createHandler({ store });
    const got = await send(again, 'GET', `${B}/a/😀.txt`);
    expect(got.status).toBe(200);
    expect(got.text).toBe('hello');
    expect(got.headers.get('x-svc-meta-who')).toBe('me');
    const empty = await send(again, 'GET', `${B}/empty`);
    expect([empty.status, empty.text]).toEqual([200, '']);
    expect((await store.listAccounts())[0]!.usedBytes).toBe(5);
    expect(integrity(await contents(store))).toEqual(SOUND);
    await store.close();
  });

  it('a directory written by a later layout is refused, not misread', async () => {
    const dir = tempDir();
    const env = open({ path: dir, maxDbs: 16 });
    await env.openDB<number, string>('meta', {}).put('schema', 99);
    await env.close();
    await expect(openLmdbStore({ path: dir })).rejects.toThrow(/later swbucket/);
    // and the refusal released the directory: the next open gets as far as the same refusal
    await expect(openLmdbStore({ path: dir })).rejects.toThrow(/later swbucket/);
  });
});

describe('one store at a time holds a directory', () => {
  it('a second open in this process is refused until the first closes', async () => {
    const dir = tempDir();
    const first = await openLmdbStore({ path: dir });
    await expect(openLmdbStore({ path: dir })).rejects.toThrow(DataDirError);
    await first.close();
    await (await openLmdbStore({ path: dir })).close();
  });

  it('the lock is an OS lock: held by another process, refused with the pid its file names; freed when that process dies; what the file says alone holds nothing', async () => {
    const dir = tempDir();
    const lock = join(dir, 'swbucket.lock');
    // What the file says is for people: a live pid in it, with no lock held, is no claim.
    writeFileSync(lock, '1\n');
    await (await openLmdbStore({ path: dir })).close();
    const other = spawn('flock', ['--no-fork', '--exclusive', lock, 'sh', '-c', 'echo 4242 > "$0"; echo ready; exec sleep 30', lock], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      await new Promise<void>((r) => other.stdout!.once('data', () => r()));
      await expect(openLmdbStore({ path: dir })).rejects.toThrow(/in use by another swbucket server \(pid 4242, as its lock file says\)/);
    } finally {
      other.kill('SIGKILL');
      await new Promise((r) => other.once('exit', r));
    }
    const store = await openLmdbStore({ path: dir });
    expect(readFileSync(lock, 'utf8').trim()).toBe(String(process.pid));
    await store.close();
  });

  it('where flock(1) is missing, the lock is a pid file: a live pid in it is refused, a dead one taken over', async () => {
    const dir = tempDir();
    const lock = join(dir, 'swbucket.lock');
    const path = process.env.PATH;
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    process.env.PATH = '/nonexistent'; // no flock(1) to be found
    try {
      writeFileSync(lock, `${other.pid}\n`);
      await expect(openLmdbStore({ path: dir })).rejects.toThrow(new RegExp(`in use by another swbucket server \\(pid ${other.pid}\\)`));
      other.kill('SIGKILL');
      await new Promise((r) => other.once('exit', r));
      const store = await openLmdbStore({ path: dir });
      expect(readFileSync(lock, 'utf8').trim()).toBe(String(process.pid));
      await store.close();
      expect(existsSync(lock)).toBe(false);
    } finally {
      process.env.PATH = path;
      other.kill('SIGKILL');
    }
  });

  it('a path that cannot be a directory is a clear error', async () => {
    const file = join(tempDir(), 'file');
    writeFileSync(file, 'x');
    await expect(openLmdbStore({ path: join(file, 'data') })).rejects.toThrow(/cannot keep data in .*ENOTDIR/);
  });
});

describe('a step is whole or absent', () => {
  it('a step that fails after writing leaves nothing; steps committed with it stay', async () => {
    const store = await openLmdbStore({ path: tempDir() });
    try {
      const ref = await bucketIn(store);
      await store.putObject(ref, obj('source', 3), new Blob(['abc']));
      // Queued in one turn, so lmdb-js commits them together. The move deletes its source, then
      // fails on a destination key LMDB cannot take (the handler never sends one: 1000-byte limit).
      const [moved, put] = await Promise.allSettled([
        store.moveObject(ref, 'source', 'x'.repeat(3000), 2),
        store.putObject(ref, obj('other', 4), new Blob(['defg'])),
      ]);
      expect(moved.status).toBe('rejected');
      expect(put.status).toBe('fulfilled');
      expect((await store.headObject(ref, 'source')) as object).toMatchObject({ key: 'source', size: 3 });
      expect((await store.headObject(ref, 'other')) as object).toMatchObject({ key: 'other', size: 4 });
      const c = await contents(store);
      expect(integrity(c)).toEqual(SOUND);
      expect(c.accounts[0]!.usedBytes).toBe(7);
    } finally {
      await store.close();
    }
  });
});

describe('a full disk', () => {
  const dir = process.cwd();
  it('ENOSPC and MDB_MAP_FULL are a full store; EIO only when the disk has no room left', () => {
    expect(isDiskFull({ code: 28 }, dir, 10)).toBe(true);
    expect(isDiskFull({ code: 'ENOSPC' }, dir, 10)).toBe(true);
    expect(isDiskFull({ code: -30792 }, dir, 10)).toBe(true);
    expect(isDiskFull({ code: 5 }, dir, 10)).toBe(false); // this disk has room: a real I/O error
    expect(isDiskFull({ code: 5 }, dir, Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(isDiskFull(new Error('other'), dir, 10)).toBe(false);
    expect(isDiskFull(undefined, dir, 10)).toBe(false);
  });
});
