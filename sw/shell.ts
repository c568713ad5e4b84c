/// <reference lib="webworker" />
// The app shell, kept by swbucket's own worker so that an app made from the README reloads offline.
// Such an app has no worker of its own (an app that has one keeps doing its own caching: README, "An
// app with its own service worker"). Network first, so that online nothing changes: a page or a
// static file of the app is fetched as ever, and a copy kept; only when the network fails is the
// copy answered. Never the app's API answers (fetch() and XHR calls), never a range, never what says
// no-store. What the first visit loaded before the worker existed, the page names once the worker
// controls it (startService() posts SHELL_MESSAGE with the URLs its performance entries list); the
// rest of a build made with swbucket/vite (lazy routes never opened) the plugin names in sw.js itself.

export { SHELL_MESSAGE } from '../protocol/instance.ts';

/** Requests of these destinations are the app's files; '' (fetch, XHR) is its API. */
const FILES = new Set<RequestDestination>(['document', 'script', 'style', 'image', 'font', 'manifest', 'worker', 'sharedworker']);
/** Copies kept at most; the oldest go first (an app's old builds, a dev server's module versions). */
const MAX_ENTRIES = 1_000;
/** URLs taken from one SHELL_MESSAGE at most. */
const MAX_URLS = 2_000;

export interface ShellOptions {
  /** The cache's name (per instance). */
  cacheName: string;
  /** The worker's scope: only the app's files under it are kept. */
  scope: string;
  /** Paths under the scope that are not the app's files (the mount, the hello). */
  excluded: (url: URL) => boolean;
}

export interface Shell {
  /** Whether `request` is a page or file of the app, kept by this shell. Synchronous, as a fetch listener needs. */
  handles(request: Request): boolean;
  /** Network first; the kept copy when the network fails (for a page never kept: the scope's page). */
  respond(request: Request): Promise<Response>;
  /**
   * Fetches and keeps what is not kept yet of the URLs a page names (SHELL_MESSAGE; at most
   * MAX_URLS of them) and of the build's own list (`trusted`, not limited); any outside the shell are ignored.
   */
  keep(urls: unknown, trusted?: string[]): Promise<void>;
}

export function createShell(o: ShellOptions): Shell {
  const scope = new URL(o.scope);
  let writes = 0;

  const inScope = (url: URL) => url.origin === scope.origin && url.pathname.startsWith(scope.pathname) && !o.excluded(url);

  function handles(request: Request): boolean {
    if (request.method !== 'GET' || request.headers.has('range')) return false;
    if (request.mode !== 'navigate' && !FILES.has(request.destination)) return false;
    return inScope(new URL(request.url));
  }

  async function store(request: Request | string, response: Response): Promise<void> {
    if (response.status !== 200 || response.type !== 'basic' || /no-store/i.test(response.headers.get('cache-control') ?? '')) return;
    const cache = await caches.open(o.cacheName);
    await cache.put(request, response);
    if (++writes % 50 === 0) await trim(cache);
  }

  async function trim(cache: Cache): Promise<void> {
    const keys = await cache.keys();
    // keys() lists in the order the entries were put: the oldest first.
    for (const old of keys.slice(0, Math.max(0, keys.length - MAX_ENTRIES))) await cache.delete(old);
  }

  async function respond(request: Request): Promise<Response> {
    try {
      const response = await fetch(request);
      // Kept while the answer goes on; a failure to keep a copy is not the page's.
      store(request, response.clone()).catch(() => {});
      return response;
    } catch (offline) {
      const cache = await caches.open(o.cacheName);
      const kept = (await cache.match(request, { ignoreVary: true }))
        // A page never opened before (a deep link into a single-page app): the app's own page.
        ?? (request.mode === 'navigate' ? await cache.match(scope.href, { ignoreVary: true }) : undefined);
      if (kept) return kept;
      throw offline;
    }
  }

  async function keep(urls: unknown, trusted: string[] = []): Promise<void> {
    if (!Array.isArray(urls)) return;
    const wanted = new Set<string>([scope.href]);
    for (const u of [...urls.slice(0, MAX_URLS), ...trusted]) {
      if (typeof u !== 'string') continue;
      const url = URL.canParse(u) ? new URL(u) : null;
      if (url && (url.protocol === 'http:' || url.protocol === 'https:') && inScope(url)) wanted.add(url.href.replace(/#.*$/, ''));
    }
    const cache = await caches.open(o.cacheName);
    await Promise.all([...wanted].map(async (url) => {
      if (await cache.match(url)) return;
      // The browser's HTTP cache mostly has it already: this rarely goes to the network.
      const response = await fetch(url, { credentials: 'same-origin' }).catch(() => null);
      if (response) await store(url, response).catch(() => {});
    }));
  }

  return { handles, respond, keep };
}
