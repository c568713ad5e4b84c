// swbucket/sw's createFetchHandler (sw/fetch-handler.ts) in Node, with a stub `self` that stands in
// for a service worker's global scope: a registration at http://app.test/demo/, its own
// IndexedDB (fake-indexeddb), and recorders for everything a handler must leave to the worker that
// composes it (listeners, skipWaiting, clients.claim).
import { describe, it, expect, beforeEach, afterEach, vi, type Mock } from 'vitest';
import { readFileSync } from 'node:fs';
import { IDBFactory } from 'fake-indexeddb';
import { createFetchHandler, type FetchEventLike } from '../../sw/fetch-handler.ts';
import { signHeaders } from '../support/sign.ts';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const SCOPE = 'http://app.test/demo/';

interface StubSelf {
  registration?: { scope: string };
  location: { href: string };
  indexedDB: IDBFactory;
  addEventListener: Mock;
  removeEventListener: Mock;
  skipWaiting: Mock;
  clients: { claim: Mock };
}

let stub: StubSelf;
const g = globalThis as unknown as { self?: StubSelf };

beforeEach(() => {
  stub = {
    registration: { scope: SCOPE },
    location: { href: `${SCOPE}sw.js` },
    indexedDB: new IDBFactory(),
    addEventListener: vi.fn(),
    removeEventListener: vi.fn(),
    skipWaiting: vi.fn(async () => {}),
    clients: { claim: vi.fn(async () => {}) },
  };
  g.self = stub;
});
/** What the events of a test handed to waitUntil: finished before the next test starts. */
const outliving: Promise<unknown>[] = [];
afterEach(async () => {
  // The request log writes a moment after the answer (and broadcasts then): a test's entries must
  // not reach the next test's listeners.
  await Promise.allSettled(outliving.splice(0));
  delete g.self;
});

/** What a FetchEvent offers respond(), with waitUntil recorded. */
function eventFor(request: Request): FetchEventLike & { waitUntil: Mock<(promise: Promise<unknown>) => void> } {
  return { request, waitUntil: vi.fn<(promise: Promise<unknown>) => void>((p) => void outliving.push(p)) };
}

/**
 * A request signed as root. The signature covers `/{bucket}/{key}`, whatever URL carries it: a
 * request on the mount (`/demo/svc/photos/k`) is signed as its service-host twin
 * (`http://svc.localhost/photos/k`), which is what swbucket/client does too.
 */
function signed(method: string, url: string, o: { signAs?: string; body?: string; headers?: Record<string, string> } = {}): Request {
  const headers = new Headers(o.headers ?? {});
  // A string body would otherwise get a Content-Type after signing, which the signature covers.
  if (o.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/octet-stream');
  signHeaders(method, o.signAs ?? url, headers);
  return new Request(url, { method, headers, ...(o.body !== undefined ? { body: o.body } : {}) });
}

async function databases(factory: IDBFactory): Promise<string[]> {
  return (await factory.databases()).map((d) => d.name!).sort();
}

describe('createFetchHandler: what it does to the worker', () => {
  it('registers no listeners and calls neither skipWaiting nor clients.claim, even while answering', async () => {
    const before = Object.keys(stub).sort();
    const handler = createFetchHandler();
    handler.claims('http://svc.localhost/');
    await handler.respond(eventFor(new Request(`${SCOPE}__swbucket`)));
    const res = await handler.respond(eventFor(signed('PUT', 'http://photos.svc.localhost/')));
    expect(res.status).toBe(200);
    expect(stub.addEventListener).not.toHaveBeenCalled();
    expect(stub.removeEventListener).not.toHaveBeenCalled();
    expect(stub.skipWaiting).not.toHaveBeenCalled();
    expect(stub.clients.claim).not.toHaveBeenCalled();
    // Nor an `onfetch = …` or any other property set on the worker's global scope.
    expect(Object.keys(stub).sort()).toEqual(before);
  });

  it('opens no database until the first request that needs one (the hello needs none)', async () => {
    const handler = createFetchHandler();
    expect(await databases(stub.indexedDB)).toEqual([]);
    await handler.respond(eventFor(new Request(`${SCOPE}__swbucket`)));
    await new Promise((r) => setTimeout(r, 20)); // an open, had one started, would have happened by now
    expect(await databases(stub.indexedDB)).toEqual([]);
    await handler.respond(eventFor(signed('GET', 'http://svc.localhost/')));
    expect(await databases(stub.indexedDB)).toEqual(['swbucket']);
  });
});

describe('claims()', () => {
  const DEFAULT_CLAIMED = [
    'http://svc.localhost/',
    'https://svc.localhost:8443/photos/k',
    'http://photos.svc.localhost/k',
    'https://photos.svc.localhost:8443/k?acl',
    'http://PHOTOS.SVC.LOCALHOST/k',
    'http://s3.localhost/photos/k',
    'http://photos.s3.localhost/k?list-type=2',
    'https://photos.nos.localhost:8443/k',
    `${SCOPE}svc/photos/k`,
    `${SCOPE}svc/`,
    `${SCOPE}svc`,
    `${SCOPE}svc/photos/k?versions`,
    `${SCOPE}__swbucket`,
  ];
  const DEFAULT_NOT_CLAIMED = [
    'http://app.test/svc/photos/k', // the mount of a worker at the root, outside this scope
    'http://app.test/__swbucket', // the hello outside this scope
    `${SCOPE}index.html`,
    `${SCOPE}`,
    `${SCOPE}svcx/photos/k`,
    `${SCOPE}sw.js`,
    'http://other.test/demo/svc/x', // another origin
    'https://app.test/demo/svc/x', // another scheme is another origin
    'http://app.test:8080/demo/svc/x', // and so is another port
    'http://svc.localhost.evil.test/',
    'http://evilsvc.localhost/',
    'http://evils3.localhost/',
    'http://s3.localhost.evil.test/',
    'http://localhost/',
  ];

  it.each(DEFAULT_CLAIMED)('claims %s', (url) => {
    const handler = createFetchHandler();
    expect(handler.claims(url)).toBe(true);
    expect(handler.claims(new URL(url))).toBe(true);
  });

  it.each(DEFAULT_NOT_CLAIMED)('leaves %s to the worker', (url) => {
    const handler = createFetchHandler();
    expect(handler.claims(url)).toBe(false);
    expect(handler.claims(new URL(url))).toBe(false);
  });

  it("follows { endpoint: 'store.localhost', mount: '/files/' }: the mount is where it says, the hello stays under the scope", () => {
    const handler = createFetchHandler({ endpoint: 'store.localhost', mount: '/files/' });
    for (const url of [
      'http://store.localhost/', 'http://photos.store.localhost/k', 'https://photos.store.localhost:8443/k',
      'http://app.test/files/photos/k', 'http://app.test/files', `${SCOPE}__swbucket`,
    ]) {
      expect(handler.claims(url), url).toBe(true);
      expect(handler.claims(new URL(url)), url).toBe(true);
    }
    for (const url of [
      'http://svc.localhost/', 'http://photos.svc.localhost/k', `${SCOPE}svc/photos/k`, `${SCOPE}svc`,
      `${SCOPE}files/photos/k`, 'http://other.test/files/x', 'http://store.localhost.evil.test/', 'http://app.test/filesx',
    ]) {
      expect(handler.claims(url), url).toBe(false);
    }
    expect(handler.hello).toMatchObject({ endpoint: 'store.localhost', mount: '/files/' });
  });

  it('resolves a relative mount against the scope, and lower-cases the endpoint', () => {
    const handler = createFetchHandler({ endpoint: 'Store.Localhost', mount: 'files' });
    expect(handler.hello).toMatchObject({ endpoint: 'store.localhost', mount: '/demo/files/' });
    expect(handler.claims('http://photos.store.localhost/k')).toBe(true);
    expect(handler.claims(`${SCOPE}files/photos/k`)).toBe(true);
    expect(handler.claims(`${SCOPE}files`)).toBe(true);
    expect(handler.claims('http://app.test/files/photos/k')).toBe(false);
  });

  it('without a registration (a worker script run outside one) the scope is the origin root', () => {
    delete stub.registration;
    const handler = createFetchHandler();
    expect(handler.hello.mount).toBe('/svc/');
    expect(handler.claims('http://app.test/svc/photos/k')).toBe(true);
    expect(handler.claims('http://app.test/__swbucket')).toBe(true);
    expect(handler.claims(`${SCOPE}svc/photos/k`)).toBe(false);
  });
});

const DEFAULTS = { svc: 'svc.localhost', s3: 's3.localhost', nos: 'nos.localhost' };

describe('respond(): the hello', () => {
  it('answers JSON with the version, endpoint, mount and name, not to be cached', async () => {
    const handler = createFetchHandler();
    const event = eventFor(new Request(`${SCOPE}__swbucket`, { cache: 'no-store' }));
    const res = await handler.respond(event);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.json();
    expect(body).toEqual({ swbucket: VERSION, endpoint: 'svc.localhost', endpoints: DEFAULTS, mount: '/demo/svc/', name: 'swbucket' });
    expect(handler.hello).toEqual(body);
    expect(event.waitUntil).not.toHaveBeenCalled();
  });

  it('with ?engine, also how the store keeps bodies and whether requests carry a body stream', async () => {
    const handler = createFetchHandler();
    const res = await handler.respond(eventFor(new Request(`${SCOPE}__swbucket?engine`)));
    expect(await res.json()).toEqual({
      swbucket: VERSION, endpoint: 'svc.localhost', endpoints: DEFAULTS, mount: '/demo/svc/', name: 'swbucket', bodies: 'blobs', requestBodyStream: true,
    });
    expect(await databases(stub.indexedDB)).toEqual(['swbucket']);
  });

  it('says what the options made of it', async () => {
    const handler = createFetchHandler({ endpoint: 'store.localhost', endpoints: { s3: 'S3.Test.Localhost' }, mount: '/files/', name: 'second' });
    const res = await handler.respond(eventFor(new Request(`${SCOPE}__swbucket`)));
    expect(await res.json()).toEqual({
      swbucket: VERSION, endpoint: 'store.localhost', endpoints: { svc: 'store.localhost', s3: 's3.test.localhost', nos: 'nos.localhost' },
      mount: '/files/', name: 'second',
    });
    expect(handler.claims('http://photos.s3.test.localhost/k')).toBe(true);
    expect(handler.claims('http://photos.s3.localhost/k')).toBe(false);
  });
});

describe('respond(): requests go to the service', () => {
  const channels: BroadcastChannel[] = [];
  afterEach(() => {
    for (const c of channels.splice(0)) c.close();
  });
  /**
   * What the request log broadcasts on `name` from now on, about `bucket` (a log of an earlier
   * test may still be writing).
   */
  function listen(name: string, bucket: string): { operation: string; url: string; status: number }[] {
    const got: { operation: string; url: string; status: number; bucket: string }[] = [];
    const c = new BroadcastChannel(name);
    c.onmessage = (e: MessageEvent) => {
      const entry = e.data as (typeof got)[number];
      if (entry.bucket === bucket) got.push(entry);
    };
    channels.push(c);
    return got;
  }

  it('a signed PUT bucket, PUT object and GET object, on the bucket host and on the mount; each log write goes to waitUntil', async () => {
    const logged = listen('swbucket-log', 'photos');
    const handler = createFetchHandler();
    const events: ReturnType<typeof eventFor>[] = [];
    const respond = async (request: Request) => {
      const event = eventFor(request);
      events.push(event);
      return handler.respond(event);
    };

    const bucket = await respond(signed('PUT', 'http://photos.svc.localhost/'));
    expect(bucket.status, await bucket.clone().text()).toBe(200);

    // Through the mount, as a page on the worker's origin would send it (no Content-Length: the
    // browser withholds it from the worker, the body's length stands in).
    const put = await respond(signed('PUT', `${SCOPE}svc/photos/notes/hello.txt`, {
      signAs: 'http://svc.localhost/photos/notes/hello.txt', body: 'hello, worker', headers: { 'content-type': 'text/plain' },
    }));
    expect(put.status, await put.clone().text()).toBe(200);
    expect(put.headers.get('server')).toBe('swbucket');

    const got = await respond(signed('GET', 'http://photos.svc.localhost/notes/hello.txt'));
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('text/plain');
    expect(await got.text()).toBe('hello, worker');

    const onMount = await respond(signed('GET', `${SCOPE}svc/photos/notes/hello.txt`, { signAs: 'http://svc.localhost/photos/notes/hello.txt' }));
    expect(onMount.status).toBe(200);
    expect(await onMount.text()).toBe('hello, worker');

    // Unsigned: the service's own answer, not the worker's.
    const anonymous = await respond(new Request('http://photos.svc.localhost/notes/hello.txt'));
    expect(anonymous.status).toBe(403);
    expect(await anonymous.text()).toContain('<Code>AccessDenied</Code>');

    for (const event of events) {
      expect(event.waitUntil).toHaveBeenCalledTimes(1);
      const [promise] = event.waitUntil.mock.calls[0]!;
      expect(promise).toBeInstanceOf(Promise);
      await expect(promise).resolves.toBeUndefined();
    }
    await vi.waitFor(() => expect(logged.map((e) => [e.operation, e.status])).toEqual([
      ['CreateBucket', 200], ['PutObject', 200], ['GetObject', 200], ['GetObject', 200], ['GetObject', 403],
    ]));
    expect(logged[1]!.url).toBe(`${SCOPE}svc/photos/notes/hello.txt`);
  });

  it('{ log: false } keeps no log: nothing goes to waitUntil, nothing is broadcast', async () => {
    const logged = listen('swbucket-log', 'unlogged');
    const handler = createFetchHandler({ log: false });
    for (const request of [signed('PUT', 'http://unlogged.svc.localhost/'), signed('PUT', 'http://unlogged.svc.localhost/k', { body: 'x' })]) {
      const event = eventFor(request);
      const res = await handler.respond(event);
      expect(res.status).toBe(200);
      expect(event.waitUntil).not.toHaveBeenCalled();
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(logged).toEqual([]);
  });

  it('a database that cannot be opened answers ServiceUnavailable, and the next request tries again', async () => {
    const real = stub.indexedDB;
    let failures = 1;
    stub.indexedDB = new Proxy(real, {
      get(target, prop) {
        if (prop === 'open' && failures > 0) {
          failures--;
          return () => {
            throw new Error('quota exhausted');
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const handler = createFetchHandler({ log: false });
    const first = await handler.respond(eventFor(signed('PUT', 'http://photos.svc.localhost/')));
    expect(first.status).toBe(503);
    const text = await first.text();
    expect(text).toContain('<Code>ServiceUnavailable</Code>');
    expect(text).toContain('quota exhausted');
    const second = await handler.respond(eventFor(signed('PUT', 'http://photos.svc.localhost/')));
    expect(second.status).toBe(200);
  });
});

describe('name', () => {
  it("name 'second' keeps its objects in the database 'second' and logs on 'second-log'", async () => {
    const channel = new BroadcastChannel('second-log');
    const logged: { operation: string }[] = [];
    channel.onmessage = (e: MessageEvent) => logged.push(e.data as { operation: string });
    try {
      const handler = createFetchHandler({ name: 'second' });
      expect(handler.hello.name).toBe('second');
      const res = await handler.respond(eventFor(signed('PUT', 'http://photos.svc.localhost/')));
      expect(res.status).toBe(200);
      expect(await databases(stub.indexedDB)).toContain('second');
      expect(await databases(stub.indexedDB)).not.toContain('swbucket');
      await vi.waitFor(() => expect(logged.map((e) => e.operation)).toEqual(['CreateBucket']));

      // Another instance on the same factory shares nothing with it.
      const other = createFetchHandler({ log: false });
      const list = await other.respond(eventFor(signed('GET', 'http://photos.svc.localhost/')));
      expect(list.status).toBe(404);
      expect(await list.text()).toContain('<Code>NoSuchBucket</Code>');
    } finally {
      channel.close();
    }
  });

  it.each(['', 'has space', '-leading-dash', 'a/b', 'x'.repeat(65)])('the invalid name %j throws a TypeError at creation', (name) => {
    expect(() => createFetchHandler({ name })).toThrow(TypeError);
    expect(() => createFetchHandler({ name })).toThrow(/instance name/);
  });
});

describe('respond(): a tab opening an object on the mount gets the frame page', () => {
  /** A request as the browser hands a navigation to the worker (Node's Request cannot be made with mode 'navigate'). */
  const navigation = (request: Request, destination: 'document' | 'iframe' = 'document'): Request => new Proxy(request, {
    get: (target, p) => {
      if (p === 'mode') return 'navigate';
      if (p === 'destination') return destination;
      const v = Reflect.get(target, p, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });

  async function withPublicObject() {
    const handler = createFetchHandler();
    const respond = (r: Request) => handler.respond(eventFor(r));
    expect((await respond(signed('PUT', 'http://pub.svc.localhost/', { headers: { 'x-svc-acl': 'public-read' } }))).status).toBe(200);
    const put = await respond(signed('PUT', 'http://pub.svc.localhost/docs/a&b "c".html', { body: '<p>stored</p>', headers: { 'content-type': 'text/html' } }));
    expect(put.status).toBe(200);
    return respond;
  }
  const url = `${SCOPE}svc/pub/docs/a%26b%20%22c%22.html`;

  it('a script-free page of the origin with one frame of the same URL, the object\'s status, the key as title', async () => {
    const respond = await withPublicObject();
    const res = await respond(navigation(new Request(`${url}?x=1&y=2`)));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; base-uri 'none'; form-action 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-svc-request-id')).toBeTruthy();
    expect(res.headers.get('etag')).toBeNull(); // not the object's answer
    const html = await res.text();
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain('<title>a&#38;b &#34;c&#34;.html</title>');
    expect(html).toContain('<iframe src="/demo/svc/pub/docs/a%26b%20%22c%22.html?x=1&#38;y=2"');
    expect(html).not.toMatch(/<iframe[^>]*sandbox/);
    // The ifNotFound fallback keeps its 404.
    const fallback = await respond(navigation(new Request(`${SCOPE}svc/pub/missing.html?ifNotFound=${encodeURIComponent('docs/a&b "c".html')}`)));
    expect(fallback.status).toBe(404);
    expect(await fallback.text()).toContain('<iframe');
  });

  it("the frame's own request, a fetch, and a download get the object itself", async () => {
    const respond = await withPublicObject();
    for (const request of [navigation(new Request(url), 'iframe'), new Request(url), navigation(new Request(`${url}?download=x.html`))]) {
      const res = await respond(request);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toBe('sandbox');
      expect(await res.text()).toBe('<p>stored</p>');
    }
  });
});
