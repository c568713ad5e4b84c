/// <reference lib="webworker" />
// The service worker: a thin adapter around handle(). It claims only the service's hosts
// ({endpoint} and *.{endpoint}, any scheme and port) and the mount on its own origin, answers them
// itself, never from the network, and keeps nothing between events but a cache of open handles.
import { createHandler, type Handle } from './core/handler.ts';
import { SvcError, errorResponse } from './core/errors.ts';
import { openIdbStore } from './store/idb.ts';
import { createRequestLog } from './log/ring.ts';

declare const self: ServiceWorkerGlobalScope;
declare const __SWBUCKET_VERSION__: string;

// Registered as /sw.js?endpoint=…&mount=… by the page's startService().
const params = new URL(self.location.href).searchParams;
const endpoint = params.get('endpoint') || 'svc.localhost';
const mount = params.get('mount') || '/svc/';
const mountRoot = mount.replace(/\/$/, '');

const log = createRequestLog({ indexedDB: self.indexedDB });
let handle: Promise<Handle> | null = null;

function handler(): Promise<Handle> {
  handle ??= openIdbStore({ indexedDB: self.indexedDB }).then(
    // The browser withholds Content-Length from the worker: the body's length stands in for it.
    (store) => createHandler({ store, endpoint, mount, contentLength: 'body', onLog: (entry) => log.write(entry) }),
    (e) => {
      handle = null;
      throw e;
    },
  );
  return handle;
}

/** Decided synchronously: ours or not (architecture rule 3). */
function claims(url: URL): boolean {
  if (url.hostname === endpoint || url.hostname.endsWith('.' + endpoint)) return true;
  return url.origin === self.location.origin && (url.pathname === mountRoot || url.pathname.startsWith(mountRoot + '/'));
}

async function answer(event: FetchEvent): Promise<Response> {
  try {
    return await (await handler())(event.request, event);
  } catch (e) {
    // Only reached when the database cannot be opened at all; the handler itself never throws.
    const err = new SvcError('ServiceUnavailable', `The object store cannot be opened: ${e instanceof Error ? e.message : e}`);
    return errorResponse(err, new URL(event.request.url).pathname, '', event.request.method);
  }
}

self.addEventListener('install', (event) => event.waitUntil(self.skipWaiting()));
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('message', (event) => {
  if ((event.data as { type?: string } | null)?.type === 'swbucket:hello') {
    event.ports[0]?.postMessage({ version: __SWBUCKET_VERSION__, endpoint, mount });
  }
});

self.addEventListener('fetch', (event) => {
  if (claims(new URL(event.request.url))) event.respondWith(answer(event));
});
