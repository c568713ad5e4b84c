// swbucket/sw: the service inside a service worker, as two calls for whoever owns the worker (an
// app's own, or swbucket's standalone worker.ts). claims() decides synchronously which requests are
// the service's: its hosts, the mount on the worker's own origin, and the hello that startService()
// sends. respond() answers them. Nothing else: no listeners, no skipWaiting, no clients.claim.
import { createHandler, finish, newRequestId, type Handle } from './core/handler.ts';
import { SvcError, errorResponse } from './core/errors.ts';
import { openIdbStore } from './store/idb.ts';
import { sweepHeld } from './store/holders.ts';
import { createRequestLog } from './log/ring.ts';
import {
  DEFAULT_ENDPOINTS, DEFAULT_MOUNT_PATH, DEFAULT_NAME, HELLO_PATH, REPLICAS_PATH, REPLICA_SYNC_TAG, CREDENTIALS_NEEDED, CREDENTIALS_WAIT_MS, DECISION_MAX_MS, DECISION_NEEDED, DECISION_WAIT_MS, expiringSoon, instanceNames, type Endpoints, type WorkerHello,
} from '../protocol/instance.ts';
import { createReplicas, fetchMissingVia, readMissingRangeVia, tellReplicas, type Credentials, type ReplicaConfig, type Replicas } from './replica/replicas.ts';
import type { Resolution } from './replica/sync.ts';
import type { Store } from './store/types.ts';
import { VERSION } from '../protocol/version.ts';

export type { WorkerHello };

/** Options of {@link createFetchHandler}; the same as startService()'s, which must agree with them. */
export interface FetchHandlerOptions {
  /** Service host of swbucket's own dialect; bucket hosts are `{bucket}.{endpoint}`. Default `svc.localhost`. */
  endpoint?: string;
  /**
   * The service hosts of the other dialects: `s3` (default `s3.localhost`: the AWS SDK's
   * `endpoint: 'http://s3.localhost'`) and `nos` (default `nos.localhost`). The worker answers all.
   */
  endpoints?: { s3?: string; nos?: string };
  /**
   * Path on the worker's own origin that stands for the service host, for navigations (links,
   * downloads) that never reach a worker as requests to another host. Default `svc/` under the
   * worker's scope: `/svc/` for a worker at the root, `/demo/svc/` for one at `/demo/`.
   */
  mount?: string;
  /** Names the database, the request log and its channel. Default `swbucket`. */
  name?: string;
  /** Keep the request log (the console's live view). Default true. */
  log?: boolean;
  /**
   * How objects' bytes are kept: 'detect' (default) keeps Blobs unless this browser's IndexedDB
   * refuses them (WebKit's ephemeral storage), then pieces of bytes. 'pieces' forces that form
   * anywhere (to measure it, or to try what a private window does).
   */
  bodies?: 'detect' | 'blobs' | 'pieces';
}

/** What respond() needs of a FetchEvent: its request, and a way to finish work after the answer. */
export interface FetchEventLike {
  readonly request: Request;
  /** Keeps the worker alive until `promise` settles (the request log's write, a commit finishing). */
  waitUntil(promise: Promise<unknown>): void;
}

/** The service inside a service worker: which requests are its own, and their answers. */
export interface FetchHandler {
  /** True for the requests this handler answers; decided synchronously, as a fetch listener must. */
  claims(url: URL | string): boolean;
  /** The answer to a request claims() accepted: never rejects (a failure is an error answer). */
  respond(event: FetchEventLike): Promise<Response>;
  /** What the worker tells startService() about itself. */
  readonly hello: WorkerHello;
  /**
   * A sync round of every replica (a worker's `sync` event, Background Sync): resolves when they
   * completed or failed; a failure is in their status, and they retry by themselves.
   */
  syncReplicas(): Promise<void>;
}

declare const self: ServiceWorkerGlobalScope;

function normalizeMount(mount: string, scope: URL): string {
  const path = new URL(mount, scope).pathname;
  return path.endsWith('/') ? path : path + '/';
}

/** A navigation of a whole tab (a link, a typed URL, a reload) to this origin, not a frame's or a fetch. */
const isTopLevelView = (req: Request, url: URL, origin: string): boolean =>
  req.mode === 'navigate' && req.destination === 'document' && req.method === 'GET' && url.origin === origin;

/** An object answer the browser would show (sandboxed, not an attachment to save). */
const isShownObject = (res: Response): boolean =>
  /\bsandbox\b/.test(res.headers.get('content-security-policy') ?? '')
  && !/^\s*attachment/i.test(res.headers.get('content-disposition') ?? '');

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * What a tab opening an object on the mount gets: a fixed page of this origin, with no script,
 * that shows the object in a frame of the same URL, whose request (a frame's, not a tab's) gets
 * the object answer, sandboxed as always. WebKit sends every navigation that starts in a sandboxed
 * document (a link, a reload, a typed URL, back) to the network instead of the worker, so a tab
 * that showed the object itself was lost to the service from then on (docs/browser.md,
 * "Opening objects in a tab"). The frame has no sandbox attribute: in WebKit that too makes its
 * load skip the worker; the object's own Content-Security-Policy sandboxes it.
 */
function framePage(object: Response, url: URL): Response {
  void object.body?.cancel().catch(() => {});
  const path = url.pathname;
  let name = path.slice(path.lastIndexOf('/') + 1);
  try {
    name = decodeURIComponent(name);
  } catch {
    // shown as sent
  }
  const html = '<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">'
    + `<title>${escapeHtml(name || path)}</title>`
    + '<style>html,body{margin:0;height:100%}iframe{border:0;display:block;width:100%;height:100%}</style>'
    + `<iframe src="${escapeHtml(path + url.search)}" title="${escapeHtml(name || path)}"></iframe>\n`;
  const headers = new Headers(object.headers);
  for (const name of [...headers.keys()]) {
    if (!name.startsWith('x-svc-request-id') && !name.startsWith('access-control-') && name !== 'date' && name !== 'server') headers.delete(name);
  }
  headers.set('content-type', 'text/html; charset=utf-8');
  headers.set('x-content-type-options', 'nosniff');
  headers.set('cache-control', 'no-store');
  headers.set('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; base-uri 'none'; form-action 'none'");
  // The object's status (a 404 for the ifNotFound fallback), so the tab's own answer says the same.
  return new Response(html, { status: object.status === 206 ? 200 : object.status, headers });
}

/**
 * The service for a service worker an app owns (Workbox or hand-written): call `claims()` in the
 * fetch listener, and answer with `respond()`. It adds no listeners and calls neither skipWaiting
 * nor clients.claim: the lifecycle stays the app's (README, "An app with its own service worker").
 *
 * @example
 * const swbucket = createFetchHandler();
 * self.addEventListener('fetch', (event) => {
 *   if (swbucket.claims(event.request.url)) event.respondWith(swbucket.respond(event));
 * });
 */
export function createFetchHandler(options: FetchHandlerOptions = {}): FetchHandler {
  const name = options.name ?? DEFAULT_NAME;
  const names = instanceNames(name);
  const endpoints: Endpoints = {
    s3: (options.endpoints?.s3 ?? DEFAULT_ENDPOINTS.s3).toLowerCase(),
    nos: (options.endpoints?.nos ?? DEFAULT_ENDPOINTS.nos).toLowerCase(),
    svc: (options.endpoint ?? DEFAULT_ENDPOINTS.svc).toLowerCase(),
  };
  const endpoint = endpoints.svc;
  const hosts = Object.values(endpoints);
  const scope = new URL(self.registration?.scope ?? new URL('/', self.location.href).href);
  const mount = normalizeMount(options.mount ?? DEFAULT_MOUNT_PATH, scope);
  const mountRoot = mount.slice(0, -1);
  const helloUrl = new URL(HELLO_PATH, scope);
  const replicasUrl = new URL(REPLICAS_PATH, scope);
  const hello: WorkerHello = { swbucket: VERSION, endpoint, endpoints, mount, name };
  const log = options.log === false ? null : createRequestLog({ indexedDB: self.indexedDB, database: names.logDatabase, channel: names.logChannel });
  let handle: Promise<Handle> | null = null;
  let bodyForm: WorkerHello['bodies'];
  /** The replicas, with the store (sw/replica/); credentials pages gave for replicas whose own are not kept. */
  let replicas: Replicas | undefined;
  const pageCredentials = new Map<string, Credentials>();
  /** Rounds waiting for a page to hand over credentials, by bucket. */
  const awaitingCredentials = new Map<string, (() => void)[]>();
  /** Conflicts waiting for a page's policy function, by the id of the question: a page took it up (heard), or answered (done). */
  const awaitingDecisions = new Map<string, { heard(): void; done(answer: { resolution?: unknown; error?: string } | undefined): void }>();
  /** Buckets whose last question no page answered: their conflicts wait, unasked, until a page binds them again. */
  const noDecider = new Set<string>();
  /** The pages (client ids) that bound a bucket with a policy function since this worker started. */
  const decidingPages = new Map<string, Set<string>>();

  // Opened on the first request and kept while the worker lives; a failed open is tried again.
  function handler(): Promise<Handle> {
    handle ??= openIdbStore({ indexedDB: self.indexedDB, name: names.database, bodies: options.bodies ?? 'detect' }).then(
      // The browser withholds Content-Length from the worker: the body's length stands in for it.
      (store) => {
        bodyForm = store.bodyForm;
        // What an import in a worker or tab that stopped had stored is nobody's (the lock of a running one is held).
        void sweepHeld(store).catch(() => {});
        replicas = startReplicas(store);
        const r = replicas;
        return createHandler({
          store, endpoints, mount, contentLength: 'body', corsRefusal: 'network-error',
          // A 500 answers with its request id only; the worker's console gets the error and its stack.
          onInternalError: (error) => console.error('swbucket: internal error', error),
          fetchMissing: fetchMissingVia(r), readMissingRange: readMissingRangeVia(r),
          onLog: (entry) => {
            tellReplicas(r, entry);
            return log?.write(entry);
          },
        });
      },
      (e) => {
        handle = null;
        throw e;
      },
    );
    return handle;
  }

  /**
   * The replicas over the store: one round at a time per replica across every worker and tab of
   * the origin (Web Locks), their events broadcast to the pages, credentials from the pages for
   * replicas that keep none.
   */
  function startReplicas(store: Store): Replicas {
    const locks = (self.navigator as (Navigator & { locks?: LockManager }) | undefined)?.locks;
    const channel = new BroadcastChannel(names.replicaChannel);
    const r = createReplicas({
      store,
      ...(locks ? { lock: <T>(lockName: string, fn: () => Promise<T>) => locks.request(`${name}:${lockName}`, fn) as Promise<T> } : {}),
      credentialsFor: async (bucket) => {
        const held = pageCredentials.get(bucket);
        if (held && !expiringSoon(held)) return held;
        // A worker the browser stopped and started again has lost what pages gave it, and what it
        // holds may be about to expire: the pages that bound the replica are asked (src/browser/replicas.ts).
        channel.postMessage({ type: CREDENTIALS_NEEDED, bucket });
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(done, CREDENTIALS_WAIT_MS);
          awaitingCredentials.set(bucket, [...(awaitingCredentials.get(bucket) ?? []), done]);
        });
        return pageCredentials.get(bucket);
      },
      decideFor: async (bucket, conflict) => {
        if (noDecider.has(bucket)) return undefined;
        // The pages known to hold the function all gone (closed, reloaded): none to wait for. A
        // worker started since they bound it knows none, and asks whichever pages are open.
        const clients = (self as unknown as { clients?: Clients }).clients;
        const known = [...(decidingPages.get(bucket) ?? [])];
        const open = await Promise.all(known.map((id) => clients?.get(id).catch(() => undefined)));
        if (known.length > 0 && open.every((c) => !c)) return undefined;
        if ((await clients?.matchAll({ type: 'window' }).catch(() => undefined))?.length === 0) return undefined;
        const id = crypto.randomUUID();
        // A page that holds the function says so at once; then it has longer to decide (it may
        // ask its user). No page heard it: none holds it, and later conflicts are not asked.
        let heard = false;
        const answer = await new Promise<{ resolution?: unknown; error?: string } | undefined>((resolve) => {
          let timer = setTimeout(() => done(undefined), DECISION_WAIT_MS);
          const done = (a: { resolution?: unknown; error?: string } | undefined) => {
            clearTimeout(timer);
            awaitingDecisions.delete(id);
            resolve(a);
          };
          awaitingDecisions.set(id, {
            heard() {
              if (heard) return;
              heard = true;
              clearTimeout(timer);
              timer = setTimeout(() => done(undefined), DECISION_MAX_MS);
            },
            done,
          });
          channel.postMessage({ type: DECISION_NEEDED, bucket, id, conflict });
        });
        if (!answer) {
          if (!heard) noDecider.add(bucket);
          return undefined;
        }
        if (answer.error !== undefined) throw new Error(`The replica's policy function (in a page) failed for ${conflict.key}: ${answer.error}`);
        return answer.resolution as Resolution | undefined; // checked by the round, as any policy function's answer
      },
    });
    r.on((e) => {
      channel.postMessage(e);
      // Offline: where the engine has Background Sync (Chromium), the browser wakes the worker once it is online again.
      if (e.type === 'status' && e.status.state === 'offline') {
        void (self.registration as ServiceWorkerRegistration & { sync?: { register(tag: string): Promise<void> } })?.sync?.register(REPLICA_SYNC_TAG).catch(() => {});
      }
    });
    void r.start().catch((e) => console.error('swbucket: the replicas could not start', e));
    return r;
  }

  /** A page's question about the replicas (POST REPLICAS_PATH, JSON `{ op, … }`): JSON answers, `{ error }` with a 4xx for a refusal. */
  async function replicaControl(req: Request, clientId: string | undefined): Promise<Response> {
    const answer = (body: unknown, status = 200) => Response.json(body ?? null, { status, headers: { 'cache-control': 'no-store' } });
    let q: { op?: string; bucket?: string; config?: ReplicaConfig & { policyInPage?: boolean }; credentials?: Credentials; id?: string; allowDeletes?: boolean; origin?: string; resolution?: unknown; error?: unknown };
    try {
      q = await req.json();
    } catch {
      return answer({ error: 'The request is not JSON.' }, 400);
    }
    try {
      await handler();
      const r = replicas!;
      switch (q.op) {
        case 'add':
          if (!q.config) return answer({ error: 'add needs a config.' }, 400);
          noDecider.delete(q.config.bucket);
          if (q.config.policyInPage && clientId) decidingPages.set(q.config.bucket, new Set([...(decidingPages.get(q.config.bucket) ?? []), clientId]));
          else decidingPages.delete(q.config.bucket);
          await r.add(q.config);
          return answer({ ok: true });
        case 'deciding':
          awaitingDecisions.get(String(q.id))?.heard();
          return answer({ ok: true });
        case 'decide':
          awaitingDecisions.get(String(q.id))?.done({ resolution: q.resolution, ...(q.error !== undefined ? { error: String(q.error) } : {}) });
          return answer({ ok: true });
        case 'credentials':
          if (!q.bucket || !q.credentials) return answer({ error: 'credentials needs a bucket and credentials.' }, 400);
          pageCredentials.set(q.bucket, q.credentials);
          for (const done of awaitingCredentials.get(q.bucket) ?? []) done();
          awaitingCredentials.delete(q.bucket);
          return answer({ ok: true });
        case 'remove':
          await r.remove(String(q.bucket));
          return answer({ ok: true });
        case 'sync':
          return answer(await r.syncNow({ ...(q.bucket !== undefined ? { bucket: q.bucket } : {}), ...(q.allowDeletes ? { allowDeletes: true } : {}) }));
        case 'soon':
          await r.soon();
          return answer({ ok: true });
        case 'status':
          return answer(await r.status());
        case 'pause':
          await r.pause(q.bucket);
          return answer({ ok: true });
        case 'resume':
          await r.resume(q.bucket);
          return answer({ ok: true });
        case 'conflicts':
          return answer(await r.conflicts(String(q.bucket)));
        case 'dismiss':
          await r.dismissConflict(String(q.bucket), String(q.id));
          return answer({ ok: true });
        case 'pending':
          return answer(await r.pending(String(q.bucket)));
        case 'remoteOnly':
          return answer(await r.remoteOnly(String(q.bucket)));
        case 'check':
          return answer(await r.check(String(q.bucket), q.origin));
        default:
          return answer({ error: `Unknown op "${q.op}".` }, 400);
      }
    } catch (e) {
      return answer({ error: e instanceof Error ? e.message : String(e), name: e instanceof Error ? e.name : 'Error' }, 409);
    }
  }

  function claims(input: URL | string): boolean {
    const url = typeof input === 'string' ? new URL(input) : input;
    if (hosts.some((host) => url.hostname === host || url.hostname.endsWith('.' + host))) return true;
    if (url.origin !== scope.origin) return false;
    return url.pathname === helloUrl.pathname || url.pathname === replicasUrl.pathname || url.pathname === mountRoot || url.pathname.startsWith(mount);
  }

  async function respond(event: FetchEventLike): Promise<Response> {
    const url = new URL(event.request.url);
    if (url.origin === scope.origin && url.pathname === replicasUrl.pathname) return replicaControl(event.request, (event as { clientId?: string }).clientId || undefined);
    if (url.origin === scope.origin && url.pathname === helloUrl.pathname) {
      if (!url.searchParams.has('engine')) return Response.json(hello, { headers: { 'cache-control': 'no-store' } });
      // What the engine lacks (startService asks): the store is opened to say how it keeps bodies,
      // which it finds out as it opens; one that cannot be opened leaves that unsaid here, and
      // every request then says why.
      await handler().catch(() => {});
      const engine = { requestBodyStream: 'body' in event.request, ...(bodyForm ? { bodies: bodyForm } : {}) };
      return Response.json({ ...hello, ...engine }, { headers: { 'cache-control': 'no-store' } });
    }
    // The worker's own answers are still the service's: the common headers (CORS, request id).
    const fallback = (err: SvcError): Response => {
      const requestId = newRequestId();
      return finish(errorResponse(err, url.pathname, requestId, event.request.method), event.request.method, requestId, Date.now());
    };
    let service: Handle;
    try {
      service = await handler();
    } catch (e) {
      // The database cannot be opened at all.
      return fallback(new SvcError('ServiceUnavailable', `The object store cannot be opened: ${e instanceof Error ? e.message : e}`));
    }
    // The replicas' rounds give way while the app's requests are answered.
    const answered = replicas?.localRequest();
    try {
      const res = await service(event.request, event);
      return isTopLevelView(event.request, url, scope.origin) && isShownObject(res) ? framePage(res, url) : res;
    } catch (e) {
      // The handler answers every failure itself (a 500 reported through onInternalError); this
      // is only for what happens around it.
      console.error('swbucket: internal error', e);
      return fallback(new SvcError('InternalError'));
    } finally {
      answered?.();
    }
  }

  async function syncReplicas(): Promise<void> {
    await handler();
    await replicas!.soon();
  }

  return { claims, respond, hello, syncReplicas };
}
