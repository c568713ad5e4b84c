// Starting the service from a page: register the worker and resolve only when it controls the
// page (architecture rule 4), recovering from a hard reload and telling a worker of another build.

declare const __SWBUCKET_VERSION__: string;

/** The build of this page; the worker reports its own. */
export const PAGE_VERSION: string = typeof __SWBUCKET_VERSION__ === 'string' ? __SWBUCKET_VERSION__ : 'dev';

export interface StartOptions {
  /** Service host; bucket hosts are `{bucket}.{endpoint}`. Default `svc.localhost`. */
  endpoint?: string;
  /** Path on this origin that stands for the service host. Default `/svc/`. */
  mount?: string;
  /** Where the built worker is served. Default `/sw.js`. */
  scriptUrl?: string;
  /** Give up waiting for the worker after this long. Default 15 s. */
  timeoutMs?: number;
}

export interface RunningService {
  endpoint: string;
  mount: string;
  /** The worker's build (equal to PAGE_VERSION once started). */
  version: string;
  registration: ServiceWorkerRegistration;
}

export class ServiceStartError extends Error {
  constructor(
    readonly reason: 'unsupported' | 'insecure' | 'register-failed' | 'timeout' | 'version-mismatch',
    message: string,
  ) {
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

/** Asks the controlling worker which build it is. */
function hello(worker: ServiceWorker): Promise<{ version: string; endpoint: string; mount: string }> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = (e) => resolve(e.data);
    worker.postMessage({ type: 'swbucket:hello' }, [channel.port2]);
  });
}

function controllerChange(): Promise<void> {
  return new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', () => resolve(), { once: true }));
}

export async function startService(options: StartOptions = {}): Promise<RunningService> {
  const endpoint = options.endpoint ?? 'svc.localhost';
  const mount = options.mount ?? '/svc/';
  const timeoutMs = options.timeoutMs ?? 15_000;
  if (!('serviceWorker' in navigator)) {
    throw window.isSecureContext
      ? new ServiceStartError('unsupported', 'This browser does not offer service workers (a private window may disable them).')
      : new ServiceStartError('insecure', `Service workers need a secure origin: open this page over https:// or from http://localhost, not ${location.origin}.`);
  }
  const script = `${options.scriptUrl ?? '/sw.js'}?${new URLSearchParams({ endpoint, mount })}`;
  let registration: ServiceWorkerRegistration;
  try {
    registration = await navigator.serviceWorker.register(script, { scope: '/', updateViaCache: 'none' });
  } catch (e) {
    throw new ServiceStartError('register-failed', `The service worker could not be registered: ${e instanceof Error ? e.message : e}`);
  }

  if (!navigator.serviceWorker.controller) {
    if (registration.active && !sessionStorage.getItem(RELOAD_GUARD)) {
      // A hard reload leaves the page uncontrolled although the worker is active: reload once.
      sessionStorage.setItem(RELOAD_GUARD, '1');
      location.reload();
      return new Promise<never>(() => {});
    }
    // First visit: the new worker claims this page when it activates.
    await withTimeout(controllerChange(), timeoutMs, 'the service worker to take control');
  }
  sessionStorage.removeItem(RELOAD_GUARD);

  let info = await withTimeout(hello(navigator.serviceWorker.controller!), timeoutMs, 'the service worker to answer');
  if (info.version !== PAGE_VERSION) {
    // An older (or newer) build still controls the page: fetch the current worker and let it take over.
    const changed = controllerChange();
    await registration.update();
    // Only a script that changed installs a new worker; otherwise there is nothing to wait for.
    if (registration.installing || registration.waiting) {
      await withTimeout(changed, timeoutMs, 'the updated service worker').catch(() => {});
    }
    info = await withTimeout(hello(navigator.serviceWorker.controller!), timeoutMs, 'the service worker to answer');
    if (info.version !== PAGE_VERSION) {
      throw new ServiceStartError('version-mismatch',
        `This page is build ${PAGE_VERSION} but its service worker is build ${info.version}. Close the other tabs of this site and reload.`);
    }
  }
  return { endpoint: info.endpoint, mount: info.mount, version: info.version, registration };
}
