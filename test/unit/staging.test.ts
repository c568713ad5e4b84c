// A large PUT body is written ahead while it streams in (sw/core/body.ts readStagedBody, the
// IndexedDB store's stageBody; from 8 MiB on): the object then has several chunks. What must hold: the object is
// byte for byte what was sent; a PUT that fails for any reason — bad digest, cut body, over the
// quota, its bucket replaced, the store refusing a chunk — leaves nothing behind, no body and no
// staged record; and the staged chunks of a store instance that is gone are swept when a store opens.
import { describe, it, expect } from 'vitest';
import { createHash } from 'node:crypto';
import { IDBFactory } from 'fake-indexeddb';
import { createHandler } from '../../sw/core/handler.ts';
import { openIdbStore } from '../../sw/store/idb.ts';
import type { Store } from '../../sw/store/types.ts';
import { send, buildRequest, errorCode } from '../support/service.ts';
import { contents, integrity, SOUND } from '../support/stores.ts';
import { signHeaders, ROOT } from '../support/sign.ts';

const U = 'http://big.svc.localhost';
const KiB = 1024;
const MiB = 1024 * KiB;
const md5hex = (b: Uint8Array): string => createHash('md5').update(b).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pattern(size: number, seed = 1): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  let x = seed * 2654435761;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

async function service(o: { staging?: boolean; contentLength?: 'header' | 'body' } = {}) {
  const factory = new IDBFactory();
  const store = await openIdbStore({ indexedDB: factory, name: 'staging-test', staging: o.staging ?? true });
  const handle = createHandler({ store, contentLength: o.contentLength ?? 'header' });
  expect((await send(handle, 'PUT', `${U}/`)).status).toBe(200);
  return { factory, store, handle };
}

interface StreamOptions {
  /** Bytes per chunk of the request body (1 MiB). */
  step?: number;
  /** Wait this long between chunks, so each chunk write finishes before the next arrives. */
  pauseMs?: number;
  /** Fail the stream after this many bytes. */
  failAfter?: number;
  headers?: Record<string, string>;
  /** Content-Length to declare, or none (as a browser's worker sees); the body's size by default. */
  length?: number | 'omit';
}

/** A signed PUT whose body arrives as a stream in `step`-byte chunks. */
function streamedPut(url: string, bytes: Uint8Array, o: StreamOptions = {}): Request {
  const step = o.step ?? MiB;
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (o.failAfter !== undefined && sent >= o.failAfter) return c.error(new Error('connection reset'));
      if (sent >= bytes.length) return c.close();
      if (o.pauseMs) await sleep(o.pauseMs);
      c.enqueue(bytes.slice(sent, sent + step));
      sent += step;
    },
  });
  const headers = new Headers(o.headers ?? {});
  if (o.length !== 'omit') headers.set('content-length', String(o.length ?? bytes.length));
  signHeaders('PUT', url, headers, ROOT, new Date());
  return new Request(url, { method: 'PUT', headers, body, duplex: 'half' } as RequestInit);
}

async function bodiesAndStaged(store: Store) {
  const db = await (store as unknown as { db(): Promise<import('idb').IDBPDatabase> }).db();
  return { bodies: await db.count('bodies'), staged: await db.count('staged') };
}

async function getBytes(handle: (r: Request) => Promise<Response>, key: string, range?: string) {
  const res = await handle(await buildRequest('GET', `${U}/${key}`, range ? { headers: { range } } : {}));
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) };
}

describe('large PUT bodies written while they stream in', () => {
  it('a streamed 12 MiB body is stored in several chunks, whole: GET, ranges across chunk boundaries', async () => {
    const { store, handle } = await service();
    const bytes = pattern(12 * MiB, 7);
    const res = await handle(streamedPut(`${U}/big.bin`, bytes, { pauseMs: 2 }));
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('etag')).toBe(`"${md5hex(bytes)}"`);

    const c = await contents(store);
    const object = c.objects.find((o) => o.key === 'big.bin')!;
    expect(object.chunks.length, 'written ahead in several chunks').toBeGreaterThan(2);
    expect(object.chunks.reduce((n, ch) => n + ch.size, 0)).toBe(bytes.length);
    expect(integrity(c)).toEqual(SOUND);
    expect(await bodiesAndStaged(store)).toEqual({ bodies: object.chunks.length, staged: 0 });

    const got = await getBytes(handle, 'big.bin');
    expect(got.status).toBe(200);
    expect(md5hex(got.bytes)).toBe(md5hex(bytes));
    // A range that starts in one chunk and ends in another.
    const first = object.chunks[0]!.size;
    const ranged = await getBytes(handle, 'big.bin', `bytes=${first - 10}-${first + 9}`);
    expect(ranged.status).toBe(206);
    expect(ranged.bytes).toEqual(bytes.slice(first - 10, first + 10));
  });

  it('overwriting and deleting a staged object frees all its chunks', async () => {
    const { store, handle } = await service();
    expect((await handle(streamedPut(`${U}/o.bin`, pattern(11 * MiB, 1), { pauseMs: 2 }))).status).toBe(200);
    expect((await handle(streamedPut(`${U}/o.bin`, pattern(10 * MiB, 2), { pauseMs: 2 }))).status).toBe(200);
    expect((await contents(store)).objects[0]!.chunks.length).toBeGreaterThan(1);
    expect(integrity(await contents(store))).toEqual(SOUND);
    expect((await send(handle, 'DELETE', `${U}/o.bin`)).status).toBe(200);
    expect(integrity(await contents(store))).toEqual(SOUND);
    expect(await bodiesAndStaged(store)).toEqual({ bodies: 0, staged: 0 });
  });

  it('a body under the staging threshold is one chunk in one write, as without staging', async () => {
    const { store, handle } = await service();
    const bytes = pattern(7 * MiB, 3);
    expect((await handle(streamedPut(`${U}/small.bin`, bytes, { pauseMs: 1 }))).status).toBe(200);
    const c = await contents(store);
    expect(c.objects.map((o) => o.chunks.length)).toEqual([1]);
    expect(integrity(c)).toEqual(SOUND);
  });

  describe('a PUT that fails leaves nothing behind', () => {
    const failures: [string, (handle: (r: Request) => Promise<Response>, store: Store) => Promise<Response>, number, string][] = [
      ['Content-MD5 that does not match', (h) => h(streamedPut(`${U}/x.bin`, pattern(12 * MiB), {
        pauseMs: 1, headers: { 'content-md5': md5hex(pattern(10)) },
      })), 400, 'BadDigest'],
      ['a body cut off after 10 MiB', (h) => h(streamedPut(`${U}/x.bin`, pattern(12 * MiB), { pauseMs: 1, failAfter: 10 * MiB })), 400, 'IncompleteBody'],
      ['a body shorter than its Content-Length', (h) => h(streamedPut(`${U}/x.bin`, pattern(12 * MiB), { pauseMs: 1, length: 13 * MiB })), 400, 'IncompleteBody'],
      ['a body longer than its Content-Length', (h) => h(streamedPut(`${U}/x.bin`, pattern(12 * MiB), { pauseMs: 1, length: 10 * MiB + 5 })), 400, 'IncompleteBody'],
      ['the quota passed while it streams (no Content-Length, as in the browser)', async (h, store) => {
        await store.putAccount({ accessKeyId: ROOT.accessKeyId, secret: ROOT.secret, displayName: ROOT.accessKeyId, quotaBytes: 10 * MiB });
        return h(streamedPut(`${U}/x.bin`, pattern(12 * MiB), { pauseMs: 1, length: 'omit' }));
      }, 403, 'QuotaExceeded'],
    ];
    for (const [what, put, status, code] of failures) {
      it(what, async () => {
        const { store, handle } = await service({ contentLength: what.includes('no Content-Length') ? 'body' : 'header' });
        const res = await put(handle, store);
        const text = await res.text();
        expect(res.status, text).toBe(status);
        expect(errorCode(text)).toBe(code);
        expect(await bodiesAndStaged(store)).toEqual({ bodies: 0, staged: 0 });
        expect((await send(handle, 'HEAD', `${U}/x.bin`)).status).toBe(404);
        expect(integrity(await contents(store))).toEqual(SOUND);
      });
    }

    it('its bucket deleted and created again while it streams: 404 NoSuchBucket, chunks discarded', async () => {
      const { store, handle } = await service();
      let released!: () => void;
      const gate = new Promise<void>((r) => (released = r));
      const bytes = pattern(12 * MiB, 5);
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          if (sent === 10 * MiB) await gate;
          if (sent >= bytes.length) return c.close();
          c.enqueue(bytes.slice(sent, sent + 512 * KiB));
          sent += 512 * KiB;
          await sleep(1);
        },
      });
      const headers = new Headers({ 'content-length': String(bytes.length) });
      signHeaders('PUT', `${U}/x.bin`, headers, ROOT, new Date());
      const pending = handle(new Request(`${U}/x.bin`, { method: 'PUT', headers, body, duplex: 'half' } as RequestInit));
      while (sent < 10 * MiB) await sleep(5);
      await sleep(20);
      expect((await bodiesAndStaged(store)).staged, 'chunks were written ahead').toBeGreaterThan(0);
      expect((await send(handle, 'DELETE', `${U}/`)).status).toBe(200);
      expect((await send(handle, 'PUT', `${U}/`)).status).toBe(200);
      released();
      const res = await pending;
      const text = await res.text();
      expect(res.status, text).toBe(404);
      expect(errorCode(text)).toBe('NoSuchBucket');
      expect(await bodiesAndStaged(store)).toEqual({ bodies: 0, staged: 0 });
      expect(integrity(await contents(store))).toEqual(SOUND);
    });

    it('the store refusing a chunk write: the error is answered, no chunk stays', async () => {
      const { store, handle } = await service();
      const stageBody = store.stageBody!.bind(store);
      let writes = 0;
      (store as { stageBody?: Store['stageBody'] }).stageBody = () => {
        const stage = stageBody();
        return {
          write: async (blob) => {
            if (++writes === 3) throw new Error('disk on fire');
            return stage.write(blob);
          },
          discard: () => stage.discard(),
        };
      };
      const res = await handle(streamedPut(`${U}/x.bin`, pattern(14 * MiB), { pauseMs: 1 }));
      expect(res.status).toBe(500);
      expect(errorCode(await res.text())).toBe('InternalError');
      expect(writes).toBe(3);
      expect(await bodiesAndStaged(store)).toEqual({ bodies: 0, staged: 0 });
    });
  });

  describe('sweeping staged bodies', () => {
    it('a store opening deletes the staged chunks of an instance that is gone, and keeps those of one alive', async () => {
      const factory = new IDBFactory();
      const gone = await openIdbStore({ indexedDB: factory, name: 'sweep', staging: true });
      const alive = await openIdbStore({ indexedDB: factory, name: 'sweep', staging: true });
      const a = gone.stageBody!();
      await a.write(new Blob([pattern(300 * KiB, 1) as Uint8Array<ArrayBuffer>]));
      await a.write(new Blob([pattern(300 * KiB, 2) as Uint8Array<ArrayBuffer>]));
      const b = alive.stageBody!();
      await b.write(new Blob([pattern(300 * KiB, 3) as Uint8Array<ArrayBuffer>]));
      expect(await bodiesAndStaged(alive)).toEqual({ bodies: 3, staged: 3 });

      gone.close(); // as a worker stopped mid-PUT: its stage is never committed nor discarded
      const next = await openIdbStore({ indexedDB: factory, name: 'sweep', staging: true });
      expect(await bodiesAndStaged(next)).toEqual({ bodies: 1, staged: 1 });
      await b.discard();
      expect(await bodiesAndStaged(next)).toEqual({ bodies: 0, staged: 0 });
    });
  });

  it('without staging (the default with a factory other than the global indexedDB), the same PUT is one chunk', async () => {
    const { store, handle } = await service({ staging: false });
    expect(store.stageBody).toBeUndefined();
    const bytes = pattern(12 * MiB, 9);
    expect((await handle(streamedPut(`${U}/one.bin`, bytes, { pauseMs: 1 }))).status).toBe(200);
    const c = await contents(store);
    expect(c.objects.map((o) => o.chunks.length)).toEqual([1]);
    expect(md5hex((await getBytes(handle, 'one.bin')).bytes)).toBe(md5hex(bytes));
  });
});
