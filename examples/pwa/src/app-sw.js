// The app's own service worker: Workbox precaching and an API route of the app, with swbucket
// composed in as one more route. swbucket's route comes first, so its requests (the service's hosts
// and the page mount) never reach the app's routes.
import { precacheAndRoute } from 'workbox-precaching';
import { registerRoute } from 'workbox-routing';
import { createFetchHandler } from 'swbucket/sw';

const swbucket = createFetchHandler();
for (const method of ['GET', 'HEAD', 'PUT', 'POST', 'DELETE']) {
  registerRoute(({ url }) => swbucket.claims(url), ({ request, event }) => swbucket.respond({ request, waitUntil: (p) => event.waitUntil(p) }), method);
}

// The app's own API, answered offline by its worker.
registerRoute(({ url }) => url.pathname.endsWith('/api/ping'), () => Response.json({ pong: true, from: 'app-sw' }));

precacheAndRoute(self.__WB_MANIFEST);

// The lifecycle is the app's to choose; this one takes over at once.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
