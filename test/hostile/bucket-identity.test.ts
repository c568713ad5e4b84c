// The attack (issue 12, "a bucket's identity is not its name"): Alice's write is checked against
// her bucket `contested`; before it commits, she deletes the bucket and Bob, another account,
// creates one under the same name. What must hold (docs/browser.md, "Bucket identity"; contract §1):
// Alice's request answers 404 NoSuchBucket, and nothing changes — not Bob's bucket, objects, uploads
// or usage, nor anything else in the database — and no body record is left behind.
//
// Every write, against the handler directly, in both runtimes: Content-Length delivered (the HTTP
// server) and contentLength: 'body' (the browser worker). A write with a body is held in the middle
// of it by a ReadableStream the test controls; one without is held right after its ownership check
// (its getBucket) by a store wrapper that pauses there.
//
// Every read likewise: held after its check (or after it found its upload, or its first object),
// it answers 404 NoSuchBucket and returns nothing of Bob's — no bytes, no listing, no metadata —
// rather than read his bucket of the same name.
import { describe, it, expect } from 'vitest';
import { IDBFactory } from 'fake-indexeddb';
import { unwrap } from 'idb';
import { createHandler } from '../../sw/core/handler.ts';
import { openIdbStore } from '../../sw/store/idb.ts';
import type { Store } from '../../sw/store/types.ts';
import { send, errorCode, type SendOptions } from '../support/service.ts';
import { signHeaders } from '../support/sign.ts';
import { accountXml, dbState, orphans } from './identity-helpers.ts';

type Creds = { accessKeyId: string; secret: string };
type Mode = 'header' | 'body';
type Res = Awaited<ReturnType<typeof send>>;

const ALICE: Creds = { accessKeyId: 'alice', secret: 'alice-secret' };
const BOB: Creds = { accessKeyId: 'bob', secret: 'bob-secret-1' };
const SVC = 'http://svc.localhost';
const X = 'http://contested.svc.localhost';
const SRC = 'http://alice-src.svc.localhost';
const tag = (text: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];

type Read = 'getBucket' | 'getUpload' | 'getObject';
/** Which call of the armed kind to hold, by its arguments; the first one when absent. */
type When = (...args: unknown[]) => boolean;

/**
 * A store whose next read of the armed kind (and arguments) returns only when released: getBucket
 * holds a request right after its ownership check, getUpload right after it found its upload,
 * getObject right after that read.
 */
function pausing(store: Store) {
  let armed: { read: Read; when?: When; reached: () => void; go: Promise<void> } | undefined;
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== 'getBucket' && prop !== 'getUpload' && prop !== 'getObject') return value;
      return async (...args: unknown[]) => {
        const found = await (target[prop] as (...a: unknown[]) => Promise<unknown>)(...args);
        const a = armed;
        if (a?.read === prop && (a.when?.(...args) ?? true)) {
          armed = undefined;
          a.reached();
          await a.go;
        }
        return found;
      };
    },
  });
  return {
    store: proxy,
    arm(read: Read, when?: When) {
      let reached!: () => void;
      let release!: () => void;
      const at = new Promise<void>((r) => (reached = r));
      armed = { read, ...(when ? { when } : {}), reached, go: new Promise<void>((r) => (release = r)) };
      return { reached: at, release };
    },
  };
}

async function scene(mode: Mode) {
  const store = await openIdbStore({ indexedDB: new IDBFactory(), name: 'identity' });
  const pause = pausing(store);
  const handle = createHandler({ store: pause.store, contentLength: mode });
  const call = (method: string, url: string, auth: Creds | 'root' | 'anon', o: SendOptions = {}) =>
    send(handle, method, url, { auth, ...o });
  const ok = async (method: string, url: string, auth: Creds | 'root', o: SendOptions = {}): Promise<Res> => {
    const r = await call(method, url, auth, o);
    expect(r.status, `${method} ${url}: ${r.text}`).toBeLessThan(300);
    return r;
  };
  for (const c of [ALICE, BOB]) await ok('PUT', `${SVC}/?account=${c.accessKeyId}`, 'root', { body: accountXml(c.secret) });
  await ok('PUT', `${X}/`, ALICE);
  const db = async () => unwrap(await store.db());
  return { mode, handle, call, ok, pause, db };
}
type Scene = Awaited<ReturnType<typeof scene>>;

interface Held {
  /** Resolves once the request is under way past its checks (reading its body, or paused after getBucket). */
  started: Promise<void>;
  release(): void;
  answer: Promise<Answer>;
}
interface Answer {
  status: number;
  text: string;
  headers: Headers;
}

const answered = (r: Response) => r.text().then((text) => ({ status: r.status, text, headers: r.headers }));

/** A signed request whose body stops halfway until released. */
function heldBody(s: Scene, method: string, url: string, body: string, headers: Record<string, string> = {}): Held {
  const bytes = new TextEncoder().encode(body);
  const half = Math.floor(bytes.length / 2);
  let reading!: () => void;
  let release!: () => void;
  const started = new Promise<void>((r) => (reading = r));
  const released = new Promise<void>((r) => (release = r));
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytes.slice(0, half));
    },
    async pull(c) {
      // Asked for more than the first half: the request passed its checks and reads its body.
      reading();
      await released;
      c.enqueue(bytes.slice(half));
      c.close();
    },
  }, { highWaterMark: 0 });
  const h = new Headers(headers);
  if (s.mode === 'header') h.set('content-length', String(bytes.length));
  signHeaders(method, url, h, ALICE);
  const answer = s.handle(new Request(url, { method, headers: h, body: stream, duplex: 'half' } as RequestInit)).then(answered);
  return { started: guard(started, answer), release, answer };
}

/**
 * A request held right after its ownership check (or, with 'getUpload', after finding its upload;
 * with 'getObject', after reading an object), of the call `when` picks when given.
 */
function heldAfterCheck(s: Scene, method: string, url: string, o: SendOptions = {}, at: Read = 'getBucket', when?: When): Held {
  const gate = s.pause.arm(at, when);
  const answer = s.call(method, url, ALICE, o).then((r) => ({ status: r.status, text: r.text, headers: r.headers }));
  return { started: guard(gate.reached, answer), release: gate.release, answer };
}

/** `started`, or a failure when the request is answered before it got there. */
function guard(started: Promise<void>, answer: Held['answer']): Promise<void> {
  return Promise.race([
    started,
    answer.then((r) => {
      throw new Error(`answered before it was held: ${r.status} ${r.text}`);
    }),
  ]);
}

interface Case {
  name: string;
  /** Alice's own doings in her bucket before the request. */
  before?(s: Scene): Promise<Record<string, string>>;
  request(s: Scene, v: Record<string, string>): Held;
  /** What Alice must remove so that she can delete her bucket (her request has not committed). */
  clear?(s: Scene, v: Record<string, string>): Promise<void>;
  /** Bob's doings in the new bucket of the same name. */
  bob?(s: Scene): Promise<void>;
  /** Further checks, after the database was compared. */
  after?(s: Scene): Promise<void>;
  /** Further checks of Alice's answer (a HEAD has no body to carry the error code). */
  answer?(r: Answer): void;
}

const BOB_BYTES = 'bob-bytes-'.repeat(10);
const bobPutsK = async (s: Scene) => {
  await s.ok('PUT', `${X}/k`, BOB, { body: BOB_BYTES, headers: { 'content-type': 'text/plain' } });
};
const bobsKIsIntact = async (s: Scene) => {
  const r = await s.ok('GET', `${X}/k`, BOB);
  expect(r.text).toBe(BOB_BYTES);
  expect(r.headers.get('content-type')).toBe('text/plain');
  expect([...r.headers.keys()].filter((n) => n.startsWith('x-svc-meta-'))).toEqual([]);
};
async function initiate(s: Scene, url: string, auth: Creds): Promise<string> {
  return tag((await s.ok('POST', `${url}?uploads`, auth)).text, 'UploadId')!;
}

const cases: Case[] = [
  {
    name: 'PUT Object',
    request: (s) => heldBody(s, 'PUT', `${X}/k`, 'alice-bytes-'.repeat(50)),
    bob: bobPutsK,
    after: bobsKIsIntact,
  },
  {
    name: 'PUT Object into an empty new bucket (charged to no one)',
    request: (s) => heldBody(s, 'PUT', `${X}/alice-only`, 'alice-bytes-'.repeat(50)),
    after: async (s) => {
      expect((await s.ok('GET', `${X}/`, BOB)).text).not.toContain('<Key>');
    },
  },
  {
    name: 'Delete Multiple (Bob\'s object of the same key survives)',
    before: async (s) => {
      await s.ok('PUT', `${X}/k`, ALICE, { body: 'alice' });
      return {};
    },
    request: (s) => heldBody(s, 'POST', `${X}/?delete`, '<Delete><Object><Key>k</Key></Object></Delete>'),
    clear: async (s) => {
      await s.ok('DELETE', `${X}/k`, ALICE);
    },
    bob: bobPutsK,
    after: bobsKIsIntact,
  },
  {
    name: 'PUT Object Meta',
    before: async (s) => {
      await s.ok('PUT', `${X}/k`, ALICE, { body: 'alice' });
      return {};
    },
    request: (s) => heldBody(s, 'PUT', `${X}/k?meta`, '  ', { 'content-type': 'text/html', 'x-svc-meta-owner': 'alice' }),
    clear: async (s) => {
      await s.ok('DELETE', `${X}/k`, ALICE);
    },
    bob: bobPutsK,
    after: bobsKIsIntact,
  },
  {
    name: 'PUT Bucket Versioning',
    request: (s) => heldBody(s, 'PUT', `${X}/?versioning`, '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>'),
    bob: bobPutsK,
    after: async (s) => {
      expect((await s.ok('GET', `${X}/?versioning`, BOB)).text).not.toContain('<Status>');
      // Still unversioned: an overwrite keeps no history.
      await s.ok('PUT', `${X}/k`, BOB, { body: 'again' });
      expect((await s.ok('GET', `${X}/?versions`, BOB)).text.match(/<Version>/g)).toHaveLength(1);
    },
  },
  {
    name: 'Upload Part of an upload begun in the old bucket',
    before: async (s) => {
      const id = await initiate(s, `${X}/k`, ALICE);
      await s.ok('PUT', `${X}/k?partNumber=1&uploadId=${id}`, ALICE, { body: 'part one' });
      return { id };
    },
    request: (s, v) => heldBody(s, 'PUT', `${X}/k?partNumber=2&uploadId=${v.id}`, 'alice-part-'.repeat(40)),
    clear: async (s, v) => {
      await s.ok('DELETE', `${X}/k?uploadId=${v.id}`, ALICE);
    },
    bob: async (s) => {
      const id = await initiate(s, `${X}/k`, BOB);
      await s.ok('PUT', `${X}/k?partNumber=1&uploadId=${id}`, BOB, { body: BOB_BYTES });
    },
  },
  {
    name: 'Complete of an upload begun in the old bucket',
    before: async (s) => {
      const id = await initiate(s, `${X}/k`, ALICE);
      const etag = (await s.ok('PUT', `${X}/k?partNumber=1&uploadId=${id}`, ALICE, { body: 'part one' })).headers.get('etag')!;
      return { id, etag };
    },
    request: (s, v) => heldBody(s, 'POST', `${X}/k?uploadId=${v.id}`,
      `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${v.etag}</ETag></Part></CompleteMultipartUpload>`),
    clear: async (s, v) => {
      await s.ok('DELETE', `${X}/k?uploadId=${v.id}`, ALICE);
    },
    bob: bobPutsK,
    after: bobsKIsIntact,
  },
  {
    name: 'Initiate Multipart Upload (no upload lands in Bob\'s bucket)',
    request: (s) => heldAfterCheck(s, 'POST', `${X}/k?uploads`),
    after: async (s) => {
      expect((await s.ok('GET', `${X}/?uploads`, BOB)).text).not.toContain('<Upload>');
      await s.ok('DELETE', `${X}/`, BOB); // nothing of Alice's keeps Bob's bucket from being deleted
    },
  },
  {
    name: 'PUT Bucket ACL (Bob\'s private bucket stays private)',
    request: (s) => heldAfterCheck(s, 'PUT', `${X}/?acl`, { headers: { 'x-svc-acl': 'public-read' } }),
    bob: bobPutsK,
    after: async (s) => {
      expect(errorCode((await s.call('GET', `${X}/k`, 'anon')).text)).toBe('AccessDenied');
      expect((await s.ok('GET', `${X}/?acl`, BOB)).headers.get('x-svc-acl')).toBe('private');
    },
  },
  {
    name: 'Copy into a re-created destination',
    before: async (s) => {
      await s.ok('PUT', `${SRC}/`, ALICE);
      await s.ok('PUT', `${SRC}/s`, ALICE, { body: 'alice-source-'.repeat(20) });
      return {};
    },
    request: (s) => heldAfterCheck(s, 'PUT', `${X}/k`, { headers: { 'x-svc-copy-source': '/alice-src/s' } }),
    after: async (s) => {
      expect((await s.ok('GET', `${X}/`, BOB)).text).not.toContain('<Key>');
    },
  },
  {
    name: 'Move (Bob\'s object is not re-keyed)',
    request: (s) => heldAfterCheck(s, 'PUT', `${X}/moved`, { headers: { 'x-svc-move-source': '/contested/k' } }),
    bob: bobPutsK,
    after: async (s) => {
      await bobsKIsIntact(s);
      expect((await s.call('GET', `${X}/moved`, BOB)).status).toBe(404);
    },
  },
  {
    name: 'DELETE Object (Bob\'s object of the same key survives)',
    request: (s) => heldAfterCheck(s, 'DELETE', `${X}/k`),
    bob: bobPutsK,
    after: bobsKIsIntact,
  },
  {
    name: 'DELETE Bucket (Bob\'s bucket of the same name survives)',
    request: (s) => heldAfterCheck(s, 'DELETE', `${X}/`),
    after: async (s) => {
      expect((await s.call('HEAD', `${X}/`, BOB)).status).toBe(200);
    },
  },
  {
    name: 'Abort of an upload begun in the old bucket, held after the ownership check',
    before: async (s) => ({ id: await initiate(s, `${X}/k`, ALICE) }),
    request: (s, v) => heldAfterCheck(s, 'DELETE', `${X}/k?uploadId=${v.id}`),
    clear: async (s, v) => {
      await s.ok('DELETE', `${X}/k?uploadId=${v.id}`, ALICE);
    },
    bob: async (s) => {
      await initiate(s, `${X}/k`, BOB);
    },
  },
  {
    name: 'Abort of an upload begun in the old bucket, held after finding the upload',
    before: async (s) => ({ id: await initiate(s, `${X}/k`, ALICE) }),
    request: (s, v) => heldAfterCheck(s, 'DELETE', `${X}/k?uploadId=${v.id}`, {}, 'getUpload'),
    clear: async (s, v) => {
      await s.ok('DELETE', `${X}/k?uploadId=${v.id}`, ALICE);
    },
    bob: async (s) => {
      await initiate(s, `${X}/k`, BOB);
    },
  },
];

// ---- reads ------------------------------------------------------------------------------------

const DST = 'http://alice-dst.svc.localhost';
const alicePutsK = async (s: Scene) => {
  await s.ok('PUT', `${X}/k`, ALICE, { body: 'alice' });
  return {};
};
const aliceDeletesK = async (s: Scene) => {
  await s.ok('DELETE', `${X}/k`, ALICE);
};
const noObjectHeaders = (r: Answer) => {
  for (const name of ['etag', 'last-modified', 'x-svc-version-id']) expect(r.headers.get(name), name).toBeNull();
  expect(r.headers.get('content-type')).not.toBe('text/plain'); // Bob's object's
};

const reads: Case[] = [
  {
    name: 'GET Object of a key Bob has too (Bob\'s bytes are not returned)',
    before: alicePutsK,
    request: (s) => heldAfterCheck(s, 'GET', `${X}/k`),
    clear: aliceDeletesK,
    bob: bobPutsK,
    answer: noObjectHeaders,
    after: bobsKIsIntact,
  },
  {
    name: 'HEAD Object of a key Bob has too (none of his metadata is returned)',
    before: alicePutsK,
    request: (s) => heldAfterCheck(s, 'HEAD', `${X}/k`),
    clear: aliceDeletesK,
    bob: bobPutsK,
    answer: (r) => {
      expect(r.text).toBe('');
      noObjectHeaders(r);
      expect(r.headers.get('content-length') ?? '0').toBe('0');
    },
  },
  {
    name: 'GET Object with ifNotFound naming Bob\'s key, held after the ownership check',
    request: (s) => heldAfterCheck(s, 'GET', `${X}/missing?ifNotFound=k`),
    bob: bobPutsK,
    answer: noObjectHeaders,
  },
  {
    name: 'GET Object with ifNotFound naming Bob\'s key, held after the first key was not found',
    request: (s) => heldAfterCheck(s, 'GET', `${X}/missing?ifNotFound=k`, {}, 'getObject', (_bucket, key) => key === 'missing'),
    bob: bobPutsK,
    answer: noObjectHeaders,
  },
  {
    name: 'List Objects (Bob\'s keys are not listed)',
    request: (s) => heldAfterCheck(s, 'GET', `${X}/`),
    bob: bobPutsK,
  },
  {
    name: 'List Object Versions (Bob\'s versions are not listed)',
    request: (s) => heldAfterCheck(s, 'GET', `${X}/?versions`),
    bob: bobPutsK,
  },
  {
    name: 'List Multipart Uploads (Bob\'s uploads are not listed)',
    request: (s) => heldAfterCheck(s, 'GET', `${X}/?uploads`),
    bob: async (s) => {
      await initiate(s, `${X}/k`, BOB);
    },
  },
  {
    name: 'List Parts of an upload begun in the old bucket, held after finding the upload',
    before: async (s) => {
      const id = await initiate(s, `${X}/k`, ALICE);
      await s.ok('PUT', `${X}/k?partNumber=1&uploadId=${id}`, ALICE, { body: 'part one' });
      return { id };
    },
    request: (s, v) => heldAfterCheck(s, 'GET', `${X}/k?uploadId=${v.id}`, {}, 'getUpload'),
    clear: async (s, v) => {
      await s.ok('DELETE', `${X}/k?uploadId=${v.id}`, ALICE);
    },
    bob: async (s) => {
      const id = await initiate(s, `${X}/k`, BOB);
      await s.ok('PUT', `${X}/k?partNumber=1&uploadId=${id}`, BOB, { body: BOB_BYTES });
    },
  },
  {
    name: 'GET Bucket ACL (not the old bucket\'s, not Bob\'s)',
    before: async (s) => {
      await s.ok('PUT', `${X}/?acl`, ALICE, { headers: { 'x-svc-acl': 'public-read' } });
      return {};
    },
    request: (s) => heldAfterCheck(s, 'GET', `${X}/?acl`),
    answer: (r) => {
      expect(r.headers.get('x-svc-acl')).toBeNull();
    },
  },
  {
    name: 'GET Bucket Versioning (not the old bucket\'s, not Bob\'s)',
    before: async (s) => {
      await s.ok('PUT', `${X}/?versioning`, ALICE, { body: '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>' });
      return {};
    },
    request: (s) => heldAfterCheck(s, 'GET', `${X}/?versioning`),
    bob: async (s) => {
      await s.ok('PUT', `${X}/?versioning`, BOB, { body: '<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>' });
    },
    answer: (r) => {
      expect(r.text).not.toContain('<Status>');
    },
  },
  {
    name: 'Copy whose source bucket is re-created, held after the source\'s read check (nothing copied)',
    before: async (s) => {
      await s.ok('PUT', `${DST}/`, ALICE);
      await s.ok('PUT', `${X}/k`, ALICE, { body: 'alice' });
      return {};
    },
    request: (s) => heldAfterCheck(s, 'PUT', `${DST}/c`, { headers: { 'x-svc-copy-source': '/contested/k' } },
      'getBucket', (name) => name === 'contested'),
    clear: aliceDeletesK,
    bob: bobPutsK,
    after: async (s) => {
      expect((await s.ok('GET', `${DST}/`, ALICE)).text).not.toContain('<Key>');
      expect((await s.call('GET', `${DST}/c`, ALICE)).status).toBe(404);
      await bobsKIsIntact(s);
    },
  },
];

function attack(title: string, list: Case[]) {
  for (const mode of ['header', 'body'] as Mode[]) {
    describe(`${title} (contentLength: '${mode}')`, () => {
      for (const c of list) {
        it(`${c.name} → 404 NoSuchBucket, nothing changed`, async () => {
          const s = await scene(mode);
          const v = (await c.before?.(s)) ?? {};
          const held = c.request(s, v);
          await held.started;

          await c.clear?.(s, v);
          await s.ok('DELETE', `${X}/`, ALICE);
          await s.ok('PUT', `${X}/`, BOB);
          await c.bob?.(s);
          const before = await dbState(await s.db());

          held.release();
          const r = await held.answer;
          expect(r.status, r.text).toBe(404);
          // A HEAD answers with its status alone.
          if (r.text !== '' || !c.answer) expect(errorCode(r.text)).toBe('NoSuchBucket');
          expect(r.text).not.toContain('bob-bytes');
          c.answer?.(r);
          const after = await dbState(await s.db());
          expect(after, 'the database after Alice\'s late request').toEqual(before);
          expect(orphans(after)).toEqual({ unreferenced: [], dangling: [] });
          await c.after?.(s);
        });
      }
    });
  }
}

attack('Alice\'s write commits after her bucket was deleted and Bob created one of the same name', cases);
attack('Alice\'s read, after her bucket was deleted and Bob created one of the same name', reads);
