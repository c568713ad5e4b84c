/// <reference lib="webworker" />
// swbucket's own service worker, shipped prebuilt as sw.js: the fetch handler of swbucket/sw plus
// the lifecycle a worker of its own needs (take over from an older build once it is idle, claim
// open pages: sw/takeover.ts), and the app shell kept for offline use (sw/shell.ts). Its options come
// from its URL, where startService() puts them: sw.js?endpoint=…&s3=…&nos=…&mount=…&name=…&offline=false (and
// bodies=…, see FetchHandlerOptions)
import { createFetchHandler } from './fetch-handler.ts';
import { createInFlight, installTakeover } from './takeover.ts';
import { SHELL_MESSAGE, createShell } from './shell.ts';
import { CLAIM_MESSAGE, DEFAULT_NAME, REPLICA_SYNC_TAG } from '../protocol/instance.ts';

declare const self: ServiceWorkerGlobalScope & { swbucketPrecache?: unknown };

const params = new URL(self.location.href).searchParams;
const swbucket = createFetchHandler({
  endpoint: params.get('endpoint') || undefined,
  endpoints: { s3: params.get('s3') || undefined, nos: params.get('nos') || undefined },
  mount: params.get('mount') || undefined,
  name: params.get('name') || undefined,
  // Not set by startService: a registration of sw.js?bodies=pieces measures or tries that form.
  bodies: params.get('bodies') === 'pieces' ? 'pieces' : params.get('bodies') === 'blobs' ? 'blobs' : 'detect',
});
const inFlight = createInFlight();
// The app's pages and files, kept for offline reloads (sw/shell.ts), unless startService({ offline: false }).
const shell = params.get('offline') === 'false' ? null : createShell({
  cacheName: `${params.get('name') || DEFAULT_NAME}-shell`,
  scope: self.registration.scope,
  excluded: (url) => swbucket.claims(url),
});

/** The build's files that swbucket/vite names at the end of this script (relative to it), as URLs. */
function precached(): string[] {
  const names = self.swbucketPrecache;
  if (!Array.isArray(names)) return [];
  return names.filter((n): n is string => typeof n === 'string').map((n) => new URL(n, self.location.href).href);
}

installTakeover(self, inFlight);
// startService() asks for this when its page is not controlled (it came from the network, as
// WebKit sends some navigations), before it falls back to a reload.
self.addEventListener('message', (event) => {
  if (event.data === CLAIM_MESSAGE) event.waitUntil(self.clients.claim());
  const data = event.data as { type?: unknown; urls?: unknown } | null;
  if (shell && data?.type === SHELL_MESSAGE) event.waitUntil(shell.keep(data.urls, precached()));
});
// Background Sync (Chromium): the browser wakes the worker once it is online again, to sync the replicas.
self.addEventListener('sync', (event) => {
  const e = event as ExtendableEvent & { tag?: string };
  if (e.tag === REPLICA_SYNC_TAG) e.waitUntil(swbucket.syncReplicas());
});
self.addEventListener('fetch', (event) => {
  if (!swbucket.claims(event.request.url)) {
    if (shell?.handles(event.request)) event.respondWith(shell.respond(event.request));
  } else if (inFlight.handedOver && new URL(event.request.url).origin !== self.location.origin) {
    // About to be replaced (sw/takeover.ts): a network error now, not an answer cut off. The
    // mount's GETs (this origin) are answered still: sent to the network they would get the app's page.
    event.respondWith(Response.error());
  } else {
    event.respondWith(inFlight.track(swbucket.respond(event)));
  }
});
