// startService(): make sure a swbucket worker controls this page and say which one. It registers
// swbucket's own worker (sw.js beside the page's base), or, when the page's scope already belongs to
// another worker (an app's own, composing swbucket/sw), uses that one and never replaces it. Ready
// means the page is controlled and the worker answered the hello with the page's version.
import {
  CLAIM_MESSAGE, DEFAULT_ENDPOINT, DEFAULT_ENDPOINTS, HELLO_PATH, SHELL_MESSAGE, WORKER_BANNER, instanceNames, type Endpoints, type WorkerHello,
} from '../../protocol/instance.ts';
import { VERSION } from '../../protocol/version.ts';
import { deleteAllData, type DeleteAllDataOptions } from './data.ts';
import { SeedError, seedIfEmpty, type Seed } from './seed.ts';
import { canStreamUploads } from '../client/engine.ts';
import { preloadClient } from '../client/preload.ts';
import { serviceReplicas, type PageReplicaConfig, type ServiceReplicas } from './replicas.ts';

/** The swbucket version of this page's code; the worker reports its own. */
export const PAGE_VERSION: string = VERSION;

/** Options of {@link startService}: where the worker is, the service's endpoint and mount, and what to seed a new store with. */
export interface StartOptions {
  /**
   * swbucket's worker script. Default `sw.js` resolved against the page's base URL (`/sw.js` for
   * an app at the root, `/demo/sw.js` for one at `/demo/`), where `npx swbucket init` and the
   * Vite plugin put it; a page opened at a deep link (`/gallery/view/`) with no sw.js beside it
   * finds the one in the nearest folder above that has swbucket's.
   */
  scriptUrl?: string;
  /** The registration's scope. Default the script's folder. */
  scope?: string;
  /** Service host of swbucket's own dialect; bucket hosts are `{bucket}.{endpoint}`. Default `svc.localhost`. */
  endpoint?: string;
  /**
   * The hosts of the S3 and NOS dialects. Default `s3.localhost` (the AWS SDK's
   * `endpoint: 'http://s3.localhost'`) and `nos.localhost`.
   */
  endpoints?: { s3?: string; nos?: string };
  /** Path on this origin that stands for the service host. Default `svc/` under the scope. */
  mount?: string;
  /** Names the database, the request log and its channel. Default `swbucket`. */
  name?: string;
  /**
   * false: register nothing, only wait for the worker that controls (or will control) this page,
   * e.g. one the app registers itself. Default true.
   */
  register?: boolean;
  /** Give up waiting for the worker after this long. Default 15 s. */
  timeoutMs?: number;
  /**
   * Ask the browser to keep this origin's storage (`navigator.storage.persist()`) so that it is not
   * evicted when the device runs low on space. Default true. The answer is in `storage.persisted`.
   */
  persist?: boolean;
  /**
   * Keep the app's pages and files (not its API answers) in swbucket's worker, so that the app
   * reloads offline after its first visit, and the client's parts that load on first use are there
   * too. Network first: online, every page and file is fetched as ever. Default true; false for an
   * app that does its own caching (with its own worker, swbucket's worker keeps nothing anyway).
   */
  offline?: boolean;
  /**
   * Data for an empty store, so that a demo or a lesson opens with something in it: the URL of an
   * archive (made by the console's Export, `swbucket export` or `client.exportArchive()`, resolved
   * against the page), or a function that fills the store through a client signed as root. It runs
   * only while the store holds no bucket and no account but root: on the first start, and again
   * after deleteAllData(); never over data the app's users made. `seeded` says whether it ran.
   */
  seed?: Seed;
  /**
   * Buckets to keep as offline-first replicas of remote S3 buckets (AWS S3, R2, MinIO, Ceph): each
   * bound (the bucket created when missing) and synced by the worker at start, soon after every
   * write, while the page is open, and on demand (`service.replicas`). Replicas stay bound across
   * reloads; this option adds or updates them.
   */
  replicas?: PageReplicaConfig[];
}

/** Whether the browser keeps this origin's data (README, "Good to know": "What a browser may evict"). */
export interface StorageState {
  /**
   * true: persistent, evicted only by the user. false: best-effort, the browser may evict it under
   * storage pressure. null: the browser offers no answer (no `navigator.storage`). When the browser
   * asks the user (Firefox), this is the state when startService resolved, updated when they answer.
   */
  persisted: boolean | null;
  /** False where the browser cannot be asked to keep the data: it has no `navigator.storage.persist()` (WebKitGTK). */
  canAskToPersist: boolean;
  /**
   * How the worker keeps objects' bytes: 'blobs', or 'pieces' where this browser's IndexedDB
   * refuses Blobs (WebKit with ephemeral storage, as in Safari's private windows, where the data
   * also goes when the window closes). null when the worker did not say.
   */
  bodies: 'blobs' | 'pieces' | null;
  /**
   * False where fetch() cannot send a ReadableStream body (Firefox, WebKit): swbucket/client reads
   * such a body into a Blob before sending it.
   */
  streamedUploads: boolean;
  /**
   * False where the worker's requests carry no body stream (Firefox): it reads a body whole before
   * checking its size, so an upload over the limit is refused only once the browser has it all.
   * null when the worker did not say.
   */
  streamedRequestBodies: boolean | null;
  /** What this browser lacks, a sentence each for a person (the console's Settings shows them); empty when nothing. */
  limits: string[];
}

/** What the browser and its worker said they lack, in words. */
function limitsOf(s: Omit<StorageState, 'limits'>): string[] {
  const out: string[] = [];
  if (s.bodies === 'pieces') {
    out.push('This browser\'s IndexedDB keeps no Blobs here (a private window, or storage kept only in memory): objects are '
      + 'stored as pieces of bytes, and the data may last only as long as this window.');
  }
  if (!s.canAskToPersist) out.push('This browser cannot be asked to keep this site\'s storage (no navigator.storage.persist()): it stays best-effort.');
  if (!s.streamedUploads) out.push('This browser cannot send a stream as an upload: swbucket/client reads a ReadableStream body into memory first.');
  if (s.streamedRequestBodies === false) {
    out.push('This browser hands the worker whole request bodies, not streams: an upload over the size limit or the quota is refused only once it has arrived.');
  }
  return out;
}

/** The service once {@link startService} resolved: its endpoint, mount and version, and what the browser's storage allows. */
export interface RunningService {
  /** The service's host, e.g. `svc.localhost`: buckets are `{bucket}.{endpoint}`. */
  endpoint: string;
  /** Each dialect's host: `svc` (the same as `endpoint`), `s3` (e.g. `s3.localhost`, for the AWS SDK), `nos`. */
  endpoints: Endpoints;
  /** The mount path on this origin, e.g. `/svc/`. */
  mount: string;
  /** The instance name: its database and request log are named after it. */
  name: string;
  /** The worker's swbucket version (equal to PAGE_VERSION once started). */
  version: string;
  /** The worker's script URL: swbucket's sw.js, or the app's own worker. */
  scriptUrl: string;
  /** The worker's registration. */
  registration: ServiceWorkerRegistration;
  /** Whether the origin's storage is persistent (asked for unless `persist: false`). */
  storage: StorageState;
  /** True when this start filled the empty store from the `seed` option. */
  seeded: boolean;
  /** The worker's replicas of remote S3 buckets: add, syncNow, status, conflicts, pause, resume. */
  replicas: ServiceReplicas;
  /** Deletes this instance's database and request log: `deleteAllData(service)`. */
  deleteAllData(options?: DeleteAllDataOptions): Promise<void>;
  /**
   * The same URL on this page's mount: what a link, a download or a new tab needs, since a
   * navigation to the service's own hosts never reaches this origin's worker. Takes a URL of the
   * service host or a bucket host, e.g. a presigned URL from swbucket/client.
   */
  mountUrl(url: string): string;
}

/** Why {@link startService} failed, as `ServiceStartError.reason`; the error's message says what to do. */
export type StartFailure =
  | 'unsupported' | 'insecure' | 'register-failed' | 'no-worker' | 'timeout' | 'not-swbucket' | 'version-mismatch' | 'options-mismatch'
  | 'seed-failed';

/** What {@link startService} rejects with: a `reason` to test and a message that says what to do. */
export class ServiceStartError extends Error {
  constructor(readonly reason: StartFailure, message: string) {
    super(message);
    this.name = 'ServiceStartError';
  }
}

const RELOAD_GUARD = 'swbucket:reloaded-for-control';

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new ServiceStartError('timeout', `Timed out after ${ms} ms waiting for ${what}.`)), ms);
    promise.then((v) => {
      clearTimeout(timer);
      resolve(v);
    }, (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

function controllerChange(): Promise<void> {
  return new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', () => resolve(), { once: true }));
}

const pathOf = (url: string) => new URL(url).pathname;

function activeScript(reg: ServiceWorkerRegistration): string | null {
  return (reg.active ?? reg.waiting ?? reg.installing)?.scriptURL ?? null;
}

/** Resolves once the registration's active worker has finished activating. */
function activated(registration: ServiceWorkerRegistration): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (registration.active?.state === 'activated') resolve();
    };
    for (const worker of [registration.installing, registration.waiting, registration.active]) worker?.addEventListener('statechange', check);
    registration.addEventListener('updatefound', () => registration.installing?.addEventListener('statechange', check));
    check();
  });
}

/**
 * Whether this page already reloaded to be controlled, moments ago: the guard names the page and
 * the time, so a guard left behind (the reloaded page did not run startService again, or another
 * page of the tab's session set it) never stops a later page from trying.
 */
function reloadedHere(): boolean {
  try {
    const guard = JSON.parse(sessionStorage.getItem(RELOAD_GUARD) ?? 'null') as { href?: unknown; at?: unknown } | null;
    return guard?.href === location.href && typeof guard.at === 'number' && Date.now() - guard.at < RELOAD_GUARD_MS;
  } catch {
    return false;
  }
}

/** How long a reload to be controlled counts as this page's try (see reloadedHere). */
const RELOAD_GUARD_MS = 30_000;

/**
 * Asks the active worker to claim this page (swbucket's own worker does; an app's own may not
 * listen) and waits briefly for it: no reload needed. WebKit loads some pages from the network
 * rather than through the worker (docs/browser.md, "Opening objects in a tab").
 */
async function claimed(registration: ServiceWorkerRegistration): Promise<boolean> {
  const active = registration.active;
  if (!active) return false;
  const changed = controllerChange().then(() => true);
  active.postMessage(CLAIM_MESSAGE);
  return Promise.race([changed, new Promise<boolean>((resolve) => setTimeout(() => resolve(Boolean(navigator.serviceWorker.controller)), CLAIM_WAIT_MS))]);
}

/** How long startService waits for a worker asked to claim the page. */
const CLAIM_WAIT_MS = 1000;

/** How long a claim may trail the worker's activation before the page counts as left out. */
const CLAIM_GRACE_MS = 500;

/**
 * Waits for the worker to control the page: a new worker claims open pages as it activates.
 * False when it is active and still does not control the page (a hard reload, or no claim).
 */
async function controlled(registration: ServiceWorkerRegistration, timeoutMs: number): Promise<boolean> {
  const changed = controllerChange();
  await withTimeout(Promise.race([changed, activated(registration)]), timeoutMs, 'the service worker to activate');
  if (navigator.serviceWorker.controller) return true;
  return Promise.race([changed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), CLAIM_GRACE_MS))]);
}

/** Asks the controlling worker who it is; null when the answer is not a swbucket worker's. */
async function hello(scope: string): Promise<WorkerHello | null> {
  try {
    // `?engine`: also what the worker's engine lacks (it opens the store to find out).
    const res = await fetch(new URL(HELLO_PATH + '?engine', scope), { cache: 'no-store' });
    if (!res.ok || !(res.headers.get('content-type') ?? '').includes('json')) return null;
    const body = (await res.json()) as Partial<WorkerHello>;
    return typeof body.swbucket === 'string' ? (body as WorkerHello) : null;
  } catch {
    return null;
  }
}

/**
 * The registration to use: the one that would control the scope when it runs another worker (the
 * app's own, never replaced), else swbucket's own, registered — unless `register: false`, which
 * waits for whatever the app registers.
 */
async function registrationFor(
  ownScript: URL, scope: string, options: StartOptions, timeoutMs: number,
): Promise<{ registration: ServiceWorkerRegistration; registered: boolean; script?: URL }> {
  // The registration that would control the scope now: the one with the longest scope above it.
  const found = await navigator.serviceWorker.getRegistration(scope);
  const existing = found ? activeScript(found) : null;
  if (found && existing !== null && pathOf(existing) !== ownScript.pathname) return { registration: found, registered: false };
  if (options.register === false) {
    // The app registers its worker itself, perhaps at this very moment.
    const registration = await withTimeout(navigator.serviceWorker.ready, timeoutMs, 'a service worker').catch(() => {
      throw new ServiceStartError('no-worker', 'No service worker is registered for this page. Register your worker before calling '
        + 'startService({ register: false }), or leave `register` on so that swbucket registers its own sw.js.');
    });
    return { registration, registered: false };
  }
  const params = [
    ['endpoint', options.endpoint], ['s3', options.endpoints?.s3], ['nos', options.endpoints?.nos],
    ['mount', options.mount], ['name', options.name], ['offline', options.offline === false ? 'false' : undefined],
  ] as const;
  for (const [param, value] of params) {
    if (value !== undefined) ownScript.searchParams.set(param, value);
  }
  try {
    return { registration: await navigator.serviceWorker.register(ownScript.href, { scope, updateViaCache: 'none' }), registered: true };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    if (options.scriptUrl !== undefined) {
      throw new ServiceStartError('register-failed', `The service worker ${ownScript.pathname} (the scriptUrl option) could not be registered: ${why}`);
    }
    // A page opened cold at a deep link (/gallery/view/) looks for sw.js beside itself, where
    // there is none: the app's is in a folder above, at its base. The engines word the failure
    // differently (a single-page app's server answering its page there is a "SecurityError: The
    // operation is insecure" in Firefox), so any failure sends the search up.
    const above = await swbucketScriptAbove(ownScript);
    if (above.found) {
      const parentScope = options.scope !== undefined ? scope : new URL('./', above.found).href;
      return { registration: await navigator.serviceWorker.register(above.found.href, { scope: parentScope, updateViaCache: 'none' }), registered: true, script: above.found };
    }
    throw new ServiceStartError('register-failed', `swbucket's service worker was not found: not at ${above.tried.join(', ')} `
      + `(registering ${ownScript.pathname}: ${why}). `
      + '`npx swbucket init <publicDir>` copies sw.js into your app\'s public folder (served at its base), or use the swbucket/vite plugin; '
      + 'if it lives elsewhere, pass startService({ scriptUrl }).');
  }
}

/**
 * swbucket's sw.js in a folder above `script`'s (with `script`'s query), the nearest first: a file
 * there that starts with swbucket's banner, as the package's worker does — never an app's own
 * worker, nor the page a single-page app's server answers for any path.
 */
async function swbucketScriptAbove(script: URL): Promise<{ found?: URL; tried: string[] }> {
  const tried = [script.pathname];
  for (let dir = new URL('../', script); ; dir = new URL('../', dir)) {
    const candidate = new URL('sw.js' + script.search, dir);
    tried.push(candidate.pathname);
    const head = await fetch(candidate, { cache: 'no-store' }).then(async (res) => {
      if (!res.ok || !res.body) return '';
      const reader = res.body.getReader();
      const first = await reader.read();
      void reader.cancel().catch(() => {});
      return new TextDecoder().decode(first.value ?? new Uint8Array());
    }, () => '');
    if (head.startsWith(WORKER_BANNER)) return { found: candidate, tried };
    if (dir.pathname === '/') return { tried };
  }
}

/** A service URL (the service host or a bucket host) turned into the same URL on this page's mount. */
function mountUrlFor({ endpoint, mount }: WorkerHello): (url: string) => string {
  return (input) => {
    const url = new URL(input);
    const bucket = url.hostname.endsWith('.' + endpoint) ? url.hostname.slice(0, -endpoint.length - 1) : null;
    if (bucket === null && url.hostname !== endpoint) throw new TypeError(`${input} is not a URL of the service at ${endpoint}.`);
    return `${location.origin}${mount}${bucket === null ? '' : bucket + '/'}${url.pathname.slice(1)}${url.search}`;
  };
}

/**
 * Registers swbucket's service worker (`sw.js` beside the page, from `npx swbucket init` or the Vite
 * plugin), waits until it controls this page, and resolves when the service answers. Call it once,
 * and wait for it before the first request: until then a request to `svc.localhost` has no worker
 * to answer it. Rejects with a {@link ServiceStartError} that says what to do (no service workers,
 * an insecure origin, a missing `sw.js`, a worker of another version, …).
 *
 * @example
 * import { startService, createClient } from 'swbucket';
 * const service = await startService();
 * const s3 = createClient({ accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' }); // the root account
 */
export async function startService(options: StartOptions = {}): Promise<RunningService> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  if (!('serviceWorker' in navigator)) {
    throw window.isSecureContext
      ? new ServiceStartError('unsupported', 'This browser does not offer service workers (a private window may disable them).')
      : new ServiceStartError('insecure', `Service workers need a secure origin: open this page over https:// or from http://localhost, not ${location.origin}.`);
  }
  if (options.name !== undefined) instanceNames(options.name); // a bad name fails here, not in the worker
  let ownScript = new URL(options.scriptUrl ?? 'sw.js', document.baseURI);
  const scope = new URL(options.scope ?? './', ownScript).href;

  // Asked while the worker starts: a browser that asks the user (Firefox) must not hold up the start.
  const storage: StorageState = {
    persisted: null,
    canAskToPersist: typeof navigator.storage?.persist === 'function',
    bodies: null,
    streamedUploads: canStreamUploads(),
    streamedRequestBodies: null,
    limits: [],
  };
  const storageAnswer = storageState(options.persist !== false).then((persisted) => {
    storage.persisted = persisted;
  });

  const { registration, registered, script: foundAbove } = await registrationFor(ownScript, scope, options, timeoutMs);
  if (foundAbove) ownScript = foundAbove;

  if (navigator.serviceWorker.controller && (registration.installing || registration.waiting) && registered) {
    // swbucket's worker is being replaced (new options in its URL, or a new build): it takes over
    // at once, so wait for it rather than ask the one on its way out.
    await withTimeout(controllerChange(), timeoutMs, 'the updated service worker');
  }
  if (!navigator.serviceWorker.controller && !(await controlled(registration, timeoutMs)) && !(await claimed(registration))) {
    if (!reloadedHere()) {
      // An active worker that does not control the page and did not claim it when asked: after a
      // hard reload (which bypasses workers), or a worker that does not claim open pages. A
      // reload puts the page under it.
      sessionStorage.setItem(RELOAD_GUARD, JSON.stringify({ href: location.href, at: Date.now() }));
      location.reload();
      return new Promise<never>(() => {});
    }
    sessionStorage.removeItem(RELOAD_GUARD);
    throw new ServiceStartError('timeout', `The service worker ${pathOf(activeScript(registration) ?? ownScript.href)} is active, but this browser `
      + 'did not let it control this page, neither when it was asked to claim the page nor after a reload. If it is your own worker, have it '
      + `call clients.claim() when it activates and when it receives the message "${CLAIM_MESSAGE}".`);
  }
  sessionStorage.removeItem(RELOAD_GUARD);

  const ready = await navigator.serviceWorker.ready;
  const script = navigator.serviceWorker.controller!.scriptURL;
  const isOwn = pathOf(script) === ownScript.pathname;
  let info = await hello(ready.scope);
  if (info && info.swbucket !== PAGE_VERSION && isOwn) {
    // An older (or newer) copy of swbucket's worker controls the page: fetch the current one.
    const changed = controllerChange();
    await ready.update().catch(() => {});
    // Only a script that changed installs a new worker; otherwise there is nothing to wait for.
    if (ready.installing || ready.waiting) await withTimeout(changed, timeoutMs, 'the updated service worker').catch(() => {});
    info = await hello(ready.scope);
  }
  if (!info) {
    throw new ServiceStartError('not-swbucket', `The service worker that controls this page (${pathOf(script)}) does not answer for swbucket. `
      + (isOwn ? 'Is it swbucket\'s sw.js? Run `npx swbucket init <publicDir>` to copy it.'
        : 'If it is your app\'s own worker, add swbucket to it: `createFetchHandler()` from swbucket/sw, as the README shows.'));
  }
  if (info.swbucket !== PAGE_VERSION) {
    throw new ServiceStartError('version-mismatch', `This page runs swbucket ${PAGE_VERSION} but its service worker ${pathOf(script)} runs swbucket ${info.swbucket}. `
      + (isOwn ? 'Run `npx swbucket init <publicDir>` again to copy the matching worker (the swbucket/vite plugin serves it from the package instead), then reload.'
        : 'Rebuild your service worker against the installed swbucket, then reload.'));
  }
  const mount = options.mount === undefined ? undefined : new URL(options.mount, ready.scope).pathname.replace(/\/?$/, '/');
  const endpoints = info.endpoints ?? { ...DEFAULT_ENDPOINTS, svc: info.endpoint };
  const wanted = {
    endpoint: options.endpoint?.toLowerCase(), mount, name: options.name,
    's3 endpoint': options.endpoints?.s3?.toLowerCase(), 'nos endpoint': options.endpoints?.nos?.toLowerCase(),
  };
  const served = { endpoint: info.endpoint, mount: info.mount, name: info.name, 's3 endpoint': endpoints.s3, 'nos endpoint': endpoints.nos };
  for (const [field, value] of Object.entries(wanted)) {
    const actual = served[field as keyof typeof wanted];
    if (value !== undefined && value !== actual) {
      throw new ServiceStartError('options-mismatch', `startService was given ${field} "${value}", but the worker ${pathOf(script)} serves ${field} "${actual}". `
        + 'Pass the same options to the worker (createFetchHandler) and to startService.');
    }
  }
  // Chromium answers at once; a prompt the user has not answered yet leaves today's state.
  await Promise.race([storageAnswer, new Promise((resolve) => setTimeout(resolve, PERSIST_WAIT_MS))]);
  if (storage.persisted === null) storage.persisted = await persistedNow();
  storage.bodies = info.bodies ?? null;
  storage.streamedRequestBodies = info.requestBodyStream ?? null;
  storage.limits = limitsOf(storage);
  let seeded = false;
  if (options.seed !== undefined) {
    try {
      seeded = await seedIfEmpty(info, options.seed);
    } catch (e) {
      if (e instanceof SeedError) throw new ServiceStartError('seed-failed', e.message);
      throw e;
    }
  }
  const replicas = serviceReplicas(ready.scope, info.name);
  for (const config of options.replicas ?? []) await replicas.add(config);
  // Replicas added by an earlier page sync while this one is open too.
  if (!options.replicas?.length && (await replicas.status().catch(() => [])).length > 0) replicas.keepSyncing(60_000);
  const service: RunningService = {
    endpoint: info.endpoint, endpoints, mount: info.mount, name: info.name, version: info.swbucket, scriptUrl: script, registration: ready,
    storage, seeded, deleteAllData: (deleteOptions) => deleteAllData(service, deleteOptions),
    mountUrl: mountUrlFor(info), replicas,
  };
  // (An app's own worker ignores the message: it does its own caching.)
  if (options.offline !== false) void keepShell();
  return service;
}

/** Resource entries that are the app's API calls, not its files: never kept. */
const API_INITIATORS = new Set(['fetch', 'xmlhttprequest', 'beacon']);

/**
 * Once swbucket's worker controls the page: loads the client's lazy parts through it, then names
 * the page and the files it loaded — most of them before the worker existed — for the worker to keep
 * (sw/shell.ts). Best effort: the app runs the same without it, only not offline.
 */
async function keepShell(): Promise<void> {
  await preloadClient().catch(() => {});
  const files = (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
    .filter((e) => !API_INITIATORS.has(e.initiatorType)).map((e) => e.name);
  navigator.serviceWorker.controller?.postMessage({ type: SHELL_MESSAGE, urls: [location.href, ...files] });
}

/** How long startService waits for persist() once the worker is ready. */
const PERSIST_WAIT_MS = 1000;

/** navigator.storage.persisted(), or null where the browser has no answer; never throws. */
async function persistedNow(): Promise<boolean | null> {
  try {
    return typeof navigator.storage?.persisted === 'function' ? await navigator.storage.persisted() : null;
  } catch {
    return null;
  }
}

/** Asks for persistent storage (when `ask`) and says whether the origin has it; never throws. */
async function storageState(ask: boolean): Promise<boolean | null> {
  if (ask && typeof navigator.storage?.persist === 'function') {
    try {
      return await navigator.storage.persist();
    } catch {
      // e.g. an opaque origin: fall through to what the browser says now
    }
  }
  return persistedNow();
}
