/// <reference lib="webworker" />
// swbucket's own service worker, shipped prebuilt as sw.js: the fetch handler of swbucket/sw plus
// the lifecycle a worker of its own needs (take over from an older build once it is idle, claim
// open pages: sw/takeover.ts). Its options come from its URL, where startService() puts them:
// sw.js?endpoint=…&mount=…&name=… (and bodies=…, see FetchHandlerOptions)
import { createFetchHandler } from './fetch-handler.ts';
import { createInFlight, installTakeover } from './takeover.ts';
import { CLAIM_MESSAGE } from '../protocol/instance.ts';

declare const self: ServiceWorkerGlobalScope;

const params = new URL(self.location.href).searchParams;
const swbucket = createFetchHandler({
  endpoint: params.get('endpoint') || undefined,
  mount: params.get('mount') || undefined,
  name: params.get('name') || undefined,
  // Not set by startService: a registration of sw.js?bodies=pieces measures or tries that form.
  bodies: params.get('bodies') === 'pieces' ? 'pieces' : params.get('bodies') === 'blobs' ? 'blobs' : 'detect',
});
const inFlight = createInFlight();

installTakeover(self, inFlight);
// startService() asks for this when its page is not controlled (it came from the network, as
// WebKit sends some navigations), before it falls back to a reload.
self.addEventListener('message', (event) => {
  if (event.data === CLAIM_MESSAGE) event.waitUntil(self.clients.claim());
});
self.addEventListener('fetch', (event) => {
  if (swbucket.claims(event.request.url)) event.respondWith(inFlight.track(swbucket.respond(event)));
});
