// The worker's fallbacks (sw/fetch-handler.ts) when the service cannot answer as usual, with a stub
// `self` as in test/unit/fetch-handler.test.ts: a 503 when the database cannot be opened is still an
// answer a cross-origin page can read (CORS, a request id), and an internal error (500) names its
// request id in the body while the error itself, with its stack, goes to the worker's console.
import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { IDBFactory } from 'fake-indexeddb';
import { createFetchHandler, type FetchEventLike } from '../../sw/fetch-handler.ts';
import { signHeaders } from '../support/sign.ts';

const SCOPE = 'http://app.test/';
const g = globalThis as unknown as { self?: unknown };
let stub: { registration: { scope: string }; location: { href: string }; indexedDB: IDBFactory };

beforeEach(() => {
  stub = { registration: { scope: SCOPE }, location: { href: `${SCOPE}sw.js` }, indexedDB: new IDBFactory() };
  g.self = stub;
});
afterEach(() => {
  delete g.self;
  vi.restoreAllMocks();
});

const event = (request: Request): FetchEventLike => ({ request, waitUntil: () => {} });
const signed = (method: string, url: string) => new Request(url, { method, headers: signHeaders(method, url, new Headers()) });
const tag = (text: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];

/** "Every response": the headers a page on another origin needs to read the answer at all. */
function expectCommonHeaders(r: Response): string {
  expect(r.headers.get('access-control-allow-origin')).toBe('*');
  const exposed = (r.headers.get('access-control-expose-headers') ?? '').split(/,\s*/).map((n) => n.toLowerCase());
  expect(exposed).toEqual(expect.arrayContaining(['etag', 'content-range', 'accept-ranges', 'content-disposition', 'content-length', 'last-modified', 'x-svc-request-id', 'x-svc-version-id', 'x-svc-acl']));
  expect(r.headers.get('server')).toBe('swbucket');
  expect(r.headers.get('date')).toMatch(/GMT$/);
  const id = r.headers.get('x-svc-request-id');
  expect(id).toMatch(/^[0-9A-F]{16}$/);
  return id!;
}

describe('the worker when its database cannot be opened', () => {
  it('503 ServiceUnavailable with the CORS headers and a request id, in the header and the body; HEAD has no body', async () => {
    stub.indexedDB = new Proxy(stub.indexedDB, {
      get(target, prop) {
        if (prop === 'open') return () => {
          throw new Error('the disk is full');
        };
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const handler = createFetchHandler({ log: false });
    const r = await handler.respond(event(signed('GET', 'http://photos.svc.localhost/k')));
    expect(r.status).toBe(503);
    const id = expectCommonHeaders(r);
    const text = await r.text();
    expect(tag(text, 'Code')).toBe('ServiceUnavailable');
    expect(tag(text, 'RequestId')).toBe(id);
    expect(r.headers.get('content-type')).toBe('application/xml');

    const head = await handler.respond(event(signed('HEAD', 'http://photos.svc.localhost/k')));
    expect(head.status).toBe(503);
    expectCommonHeaders(head);
    expect(head.body).toBeNull();
    // on the mount too: the same answer
    const mounted = await handler.respond(event(signed('GET', `${SCOPE}svc/photos/k`)));
    expect(mounted.status).toBe(503);
    expect(tag(await mounted.text(), 'RequestId')).toBe(expectCommonHeaders(mounted));
  });
});

describe('the worker on an internal error', () => {
  it("500 InternalError naming its request id, nothing of the error in the body; the error and its stack go to the worker's console", async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const handler = createFetchHandler({ log: false });
    const ok = await handler.respond(event(signed('PUT', 'http://photos.svc.localhost/')));
    expect(ok.status).toBe(200);
    // The store is open; now every transaction fails the way nobody expected.
    vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(() => {
      throw new Error('disk on fire');
    });
    const r = await handler.respond(event(signed('GET', 'http://photos.svc.localhost/k')));
    expect(r.status).toBe(500);
    const id = expectCommonHeaders(r);
    const text = await r.text();
    expect(tag(text, 'Code')).toBe('InternalError');
    expect(tag(text, 'RequestId')).toBe(id);
    expect(text).not.toContain('disk on fire');
    const reported = errors.mock.calls.flat().find((a): a is Error => a instanceof Error && a.message === 'disk on fire');
    expect(reported, JSON.stringify(errors.mock.calls.map((c) => c.map(String)))).toBeDefined();
    expect(reported!.stack).toContain('disk on fire');
  });

  it('a throw around the handler (not inside it) is a 500 too, not a 503 or a rejected respond()', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const handler = createFetchHandler({ log: false });
    expect((await handler.respond(event(signed('PUT', 'http://photos.svc.localhost/')))).status).toBe(200);
    // The first thing the handler does is draw its request id: make that throw, once.
    vi.spyOn(globalThis.crypto, 'getRandomValues').mockImplementationOnce(() => {
      throw new Error('no entropy left');
    });
    const r = await handler.respond(event(signed('GET', 'http://photos.svc.localhost/k')));
    expect(r.status).toBe(500);
    const text = await r.text();
    expect(tag(text, 'Code')).toBe('InternalError');
    expect(tag(text, 'RequestId')).toBe(expectCommonHeaders(r));
    expect(errors.mock.calls.flat().some((a) => a instanceof Error && a.message === 'no entropy left')).toBe(true);
  });
});
