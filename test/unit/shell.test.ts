// sw/shell.ts, the app shell swbucket's worker keeps, with the worker's fetch and Cache Storage
// stood in for: which requests it keeps (the app's pages and files under the scope, never its API
// answers, ranges, other origins or the service's own paths), network first, the kept copy only
// when the network fails, and what a page names being fetched once. The real thing, in every engine:
// test/browser/engine-offline.test.ts.
import { describe, it, expect, vi, beforeEach, afterEach } from 'vitest';
import { createShell } from '../../sw/shell.ts';

const SCOPE = 'https://app.example/demo/';

/** Cache Storage as a worker has it, over Maps (keys in the order they were put, as the real one). */
function fakeCaches() {
  const stores = new Map<string, Map<string, Response>>();
  const keyOf = (r: Request | string) => (typeof r === 'string' ? r : r.url);
  const open = async (name: string) => {
    const store = stores.get(name) ?? new Map<string, Response>();
    stores.set(name, store);
    return {
      async put(r: Request | string, res: Response) {
        store.delete(keyOf(r));
        store.set(keyOf(r), res);
      },
      async match(r: Request | string) {
        return store.get(keyOf(r))?.clone();
      },
      async keys() {
        return [...store.keys()].map((u) => new Request(u));
      },
      async delete(r: Request | string) {
        return store.delete(keyOf(r));
      },
    };
  };
  return { open, stores };
}

/** A Request as the worker's fetch event has it: mode and destination are the browser's to set. */
function request(url: string, o: { mode?: RequestMode; destination?: RequestDestination; method?: string; headers?: Record<string, string> } = {}): Request {
  const r = new Request(url, { method: o.method ?? 'GET', headers: o.headers ?? {} });
  Object.defineProperty(r, 'mode', { value: o.mode ?? 'cors' });
  Object.defineProperty(r, 'destination', { value: o.destination ?? '' });
  return r;
}

/** A response as fetch gives it for the app's origin (type basic), its clones too. */
class BasicResponse extends Response {
  override get type(): ResponseType {
    return 'basic';
  }
  override clone(): Response {
    return Object.setPrototypeOf(super.clone(), BasicResponse.prototype) as Response;
  }
}
const basic = (body: string, init: ResponseInit = {}) => new BasicResponse(body, { status: 200, ...init });

let storage: ReturnType<typeof fakeCaches>;
let online: boolean;
let fetched: string[];
let version: number;

beforeEach(() => {
  storage = fakeCaches();
  online = true;
  fetched = [];
  version = 1;
  vi.stubGlobal('caches', { open: storage.open });
  vi.stubGlobal('fetch', async (input: Request | string) => {
    const url = typeof input === 'string' ? input : input.url;
    fetched.push(url);
    if (!online) throw new TypeError('Failed to fetch');
    if (url.endsWith('/private.js')) return basic('secret', { headers: { 'cache-control': 'private, no-store' } });
    if (url.endsWith('/missing.js')) return new BasicResponse('no', { status: 404 });
    return basic(`${new URL(url).pathname} v${version}`);
  });
});
afterEach(() => {
  vi.unstubAllGlobals();
});

const shell = () => createShell({ cacheName: 'swbucket-shell', scope: SCOPE, excluded: (u) => u.pathname.startsWith('/demo/svc/') || u.pathname === '/demo/__swbucket' });
const keptPaths = () => [...(storage.stores.get('swbucket-shell')?.keys() ?? [])].map((u) => new URL(u).pathname);
const settle = () => new Promise((r) => setTimeout(r, 0));

describe('sw/shell: the app shell', () => {
  it("keeps the app's pages and files under its scope, and nothing else", () => {
    const s = shell();
    const yes = [
      request(SCOPE, { mode: 'navigate', destination: 'document' }),
      request(`${SCOPE}gallery/view/`, { mode: 'navigate', destination: 'document' }),
      request(`${SCOPE}assets/index-abc.js`, { destination: 'script' }),
      request(`${SCOPE}assets/index.css`, { destination: 'style' }),
      request(`${SCOPE}logo.png`, { destination: 'image' }),
      request(`${SCOPE}font.woff2`, { destination: 'font' }),
    ];
    const no = [
      request(`${SCOPE}api/items`),                                          // the app's API (fetch)
      request(`${SCOPE}api/items`, { destination: 'script', method: 'POST' }),
      request(`${SCOPE}video.mp4`, { destination: 'video' }),
      request(`${SCOPE}big.png`, { destination: 'image', headers: { range: 'bytes=0-9' } }),
      request('https://app.example/other/page', { mode: 'navigate', destination: 'document' }), // outside the scope
      request('https://cdn.example/lib.js', { destination: 'script' }),    // another origin
      request(`${SCOPE}svc/photos/cat.png`, { mode: 'navigate', destination: 'document' }), // the mount
      request(`${SCOPE}__swbucket`),
    ];
    expect(yes.map((r) => s.handles(r))).toEqual(yes.map(() => true));
    expect(no.map((r) => s.handles(r))).toEqual(no.map(() => false));
  });

  it('answers from the network while it answers, keeping a copy; the copy only when it fails', async () => {
    const s = shell();
    const page = () => request(`${SCOPE}gallery/`, { mode: 'navigate', destination: 'document' });
    expect(await (await s.respond(page())).text()).toBe('/demo/gallery/ v1');
    version = 2;
    expect(await (await s.respond(page())).text()).toBe('/demo/gallery/ v2');
    await settle();
    online = false;
    expect(await (await s.respond(page())).text()).toBe('/demo/gallery/ v2');
    // A file never fetched fails as it would without the worker.
    await expect(s.respond(request(`${SCOPE}never.js`, { destination: 'script' }))).rejects.toThrow(TypeError);
  });

  it("offline, a page never opened gets the scope's page (a deep link into a single-page app)", async () => {
    const s = shell();
    await s.respond(request(SCOPE, { mode: 'navigate', destination: 'document' }));
    await settle();
    online = false;
    expect(await (await s.respond(request(`${SCOPE}gallery/view/`, { mode: 'navigate', destination: 'document' }))).text()).toBe('/demo/ v1');
    await expect(s.respond(request(`${SCOPE}gallery/app.js`, { destination: 'script' }))).rejects.toThrow(TypeError);
  });

  it('does not keep what says no-store, a failed answer, or what a page names outside the shell', async () => {
    const s = shell();
    await s.respond(request(`${SCOPE}private.js`, { destination: 'script' }));
    await s.respond(request(`${SCOPE}missing.js`, { destination: 'script' }));
    await s.keep([`${SCOPE}assets/a.js`, `${SCOPE}assets/a.js#x`, 'https://cdn.example/lib.js', `${SCOPE}svc/photos/cat.png`, 'javascript:alert(1)', 42, null, `${SCOPE}private.js`]);
    await settle();
    expect(keptPaths().sort()).toEqual(['/demo/', '/demo/assets/a.js']);
    // What is kept already is not fetched again; a list that is not one is ignored.
    fetched = [];
    await s.keep([`${SCOPE}assets/a.js`]);
    await s.keep('not a list');
    expect(fetched).toEqual([]);
  });

  it("keeps the build's own list (swbucket/vite) with what a page names, still only inside the shell", async () => {
    const s = shell();
    const build = Array.from({ length: 300 }, (_, i) => `${SCOPE}assets/chunk-${i}.js`);
    await s.keep([`${SCOPE}page.js`], [...build, 'https://cdn.example/lib.js', `${SCOPE}svc/photos/cat.png`]);
    await settle();
    const paths = keptPaths();
    expect(paths.filter((p) => p.startsWith('/demo/assets/chunk-'))).toHaveLength(300);
    expect(paths.filter((p) => !p.startsWith('/demo/assets/chunk-')).sort()).toEqual(['/demo/', '/demo/page.js']);
  });
});
