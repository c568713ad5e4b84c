/// <reference lib="webworker" />
// The floor: the least a service worker can do for a PUT or GET of `http://{bucket}.svc.localhost/{key}`.
// PUT reads the request body into a Blob (request.blob(), no hashing, no IndexedDB) and keeps it
// in memory; GET answers with that ready Blob. Whatever swbucket costs beyond this is its own work.
declare const self: ServiceWorkerGlobalScope;
export {}; // a module, so `self` above is this file's own declaration

const kept = new Map<string, Blob>();

self.addEventListener('install', (event) => event.waitUntil(self.skipWaiting()));
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (!url.hostname.endsWith('.svc.localhost')) return;
  event.respondWith((async () => {
    const key = url.hostname + url.pathname;
    if (event.request.method === 'PUT') {
      kept.set(key, await event.request.blob());
      return new Response(null, { status: 200 });
    }
    const blob = kept.get(key);
    if (!blob) return new Response(null, { status: 404 });
    return new Response(blob, { status: 200, headers: { 'content-length': String(blob.size) } });
  })());
});
