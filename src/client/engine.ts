// What this browser's fetch can send, found out by asking it, never by its name.

let streams: boolean | undefined;

/**
 * Whether fetch() can send a ReadableStream as a request body. Chromium can (with `duplex:
 * 'half'`); Firefox does not read the `duplex` option and sends the text "[object ReadableStream]"
 * (with a text/plain Content-Type), and WebKit refuses such a request (NotSupportedError).
 */
export function canStreamUploads(): boolean {
  if (streams !== undefined) return streams;
  try {
    let asked = false;
    const init = {
      method: 'POST',
      body: new ReadableStream(),
      get duplex() {
        asked = true;
        return 'half';
      },
    };
    const typed = new Request('http://localhost/', init as RequestInit).headers.has('content-type');
    streams = asked && !typed;
  } catch {
    streams = false;
  }
  return streams;
}

/** The service worker that controls this page now (undefined outside a page, or where there are none). */
export function controllerNow(): ServiceWorker | null | undefined {
  return globalThis.navigator?.serviceWorker?.controller;
}

/**
 * How long after a failed request a change of controller still counts as its cause: as long as an
 * old worker that said it was idle refuses requests while it waits to be replaced (HANDED_OVER_MS
 * in sw/takeover.ts). The swap takes milliseconds on a quiet machine, but more on a loaded one.
 */
const TAKEOVER_MS = 3_000;

/**
 * Whether a request that failed with `error` was cut off by a new build of the worker taking over:
 * Firefox and WebKit end the replaced worker with the requests it is still answering and send
 * them to the network, where the bucket host answers nothing. The new build waits until the old
 * one is idle (sw/takeover.ts), but a request that reaches the old one in the moment before the
 * swap still fails this way. Such a failure is a TypeError, and the page's controller changes
 * from `before` (at most TAKEOVER_MS later).
 */
export async function cutOffByTakeover(error: unknown, before: ServiceWorker | null | undefined): Promise<boolean> {
  const container = globalThis.navigator?.serviceWorker;
  if (!container || !before || !(error instanceof TypeError)) return false;
  if (container.controller !== before) return true;
  const changed = controllerChange(container, TAKEOVER_MS);
  // No other worker on its way (none installing, waiting or activating in this one's place): no
  // takeover cut the request off, and a plain network failure is reported at once, not after
  // TAKEOVER_MS. Anything unclear waits, as before.
  const registration = await Promise.resolve(container.getRegistration?.()).catch(() => undefined);
  if (container.controller === before && registration && !registration.installing && !registration.waiting && registration.active === before) {
    changed.cancel();
    return false;
  }
  return changed;
}

/** How long a request may wait for its answer once the page's controller has changed under it. */
export const DROPPED_MS = 5_000;
/** And a second more per whole MiB of its body: a body crosses from the page to its worker far faster. */
const DROPPED_MS_PER_MIB = 1_000;

/**
 * How long after a change of controller a request with a body of `bodyBytes` is given up as
 * dropped (sendWatched), or null for one never given up: a stream (its size is unknown, and it
 * cannot be sent again) and, to an endpoint a server may answer, a body over 1 MiB (on its way
 * over a network, it may take longer).
 */
export function dropLimit(bodyBytes: number, endpoint: URL): number | null {
  const MiB = 1024 * 1024;
  if (!Number.isFinite(bodyBytes)) return null;
  if (bodyBytes > MiB && !workerOnly(endpoint)) return null;
  return DROPPED_MS + Math.floor(bodyBytes / MiB) * DROPPED_MS_PER_MIB;
}

/** A `*.localhost` host on the default port: only a worker answers it (controlledFor). */
function workerOnly(endpoint: URL): boolean {
  return endpoint.hostname.endsWith('.localhost') && endpoint.port === '';
}

/**
 * Sends with `send(signal)`; where a page's controller changes while the answer is awaited and no
 * answer comes within `limitMs` after (dropLimit), gives up with a TypeError (the request is
 * aborted). WebKit can drop a request that reaches the old worker in the moment it is replaced: no
 * answer and no error, for ever (docs/browser.md), a 12 MiB PUT as well as a small GET. The old
 * worker answers what it still holds before the swap (sw/takeover.ts), so an answer awaited that
 * long after it is one that will not come. `limitMs` null sends without a limit.
 */
export async function sendWatched(send: (signal?: AbortSignal) => Promise<Response>, signal: AbortSignal | undefined, limitMs: number | null): Promise<Response> {
  const container = globalThis.navigator?.serviceWorker;
  if (limitMs === null || !container?.controller) return send(signal);
  const mine = new AbortController();
  const stop = () => mine.abort(signal?.reason);
  signal?.addEventListener('abort', stop, { once: true });
  if (signal?.aborted) stop();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let dropped = false;
  const changed = () => {
    timer = setTimeout(() => {
      dropped = true;
      mine.abort();
    }, limitMs);
  };
  container.addEventListener('controllerchange', changed, { once: true });
  try {
    return await send(mine.signal);
  } catch (e) {
    if (dropped) throw new TypeError(`swbucket: no answer within ${Math.round(limitMs / 1000)} s after the service worker was replaced (the browser dropped the request).`);
    throw e;
  } finally {
    clearTimeout(timer);
    container.removeEventListener('controllerchange', changed);
    signal?.removeEventListener('abort', stop);
  }
}

/** True when the page's controller changes within `ms`, false when it does not. */
function controllerChange(container: ServiceWorkerContainer, ms: number): Promise<boolean> & { cancel(): void } {
  let cancel = () => {};
  const p = new Promise<boolean>((resolve) => {
    const changed = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      container.removeEventListener('controllerchange', changed);
      resolve(false);
    }, ms);
    container.addEventListener('controllerchange', changed, { once: true });
    cancel = () => {
      clearTimeout(timer);
      container.removeEventListener('controllerchange', changed);
      resolve(false);
    };
  });
  return Object.assign(p, { cancel: () => cancel() });
}

/** How long a request waits for startService()'s worker to take control of the page. */
const CONTROL_MS = 10_000;

/**
 * Waits, in a page that no service worker controls yet, until one does — startService() may be
 * under way — when the endpoint is one only a worker answers (a `*.localhost` host on the default
 * port, as `svc.localhost` is): sent now, the request would leave the browser for whatever listens
 * on that port of this machine. Rejects with what to do when no worker takes control in time.
 * Elsewhere (Node, a worker, a server's endpoint) it returns at once.
 */
export async function controlledFor(endpoint: URL): Promise<void> {
  const container = globalThis.navigator?.serviceWorker;
  if (!container || container.controller || typeof window === 'undefined') return;
  if (!workerOnly(endpoint)) return;
  if ((await controllerChange(container, CONTROL_MS)) || container.controller) return;
  throw new Error(`swbucket: no service worker controls this page, so a request to ${endpoint.origin} would leave the browser. `
    + 'Call startService() (from swbucket or swbucket/browser) and wait for it before the first request: `const service = await startService()`.');
}
