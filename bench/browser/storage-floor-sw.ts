/// <reference lib="webworker" />
// The storage floor: the least a durable store can do in a service worker. PUT reads the body into
// a Blob (request.blob(), no hashing) and stores it with one IndexedDB put in its own strict
// readwrite transaction, answering after the commit; GET is one get in a readonly transaction,
// answered with the stored Blob. The honest limit of swbucket's durable PUT and GET (issue 13):
// whatever swbucket costs beyond this is its own work, not the storage's.
declare const self: ServiceWorkerGlobalScope;
export {}; // a module, so `self` above is this file's own declaration

let opened: Promise<IDBDatabase> | null = null;
function db(): Promise<IDBDatabase> {
  opened ??= new Promise((resolve, reject) => {
    const open = indexedDB.open('storage-floor', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('bodies', { keyPath: 'id' });
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  return opened;
}

function done(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error('aborted'));
  });
}

self.addEventListener('install', (event) => event.waitUntil(self.skipWaiting()));
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (!url.hostname.endsWith('.svc.localhost')) return;
  event.respondWith((async () => {
    const id = url.hostname + url.pathname;
    if (event.request.method === 'PUT') {
      const blob = await event.request.blob();
      const tx = (await db()).transaction('bodies', 'readwrite', { durability: 'strict' });
      tx.objectStore('bodies').put({ id, blob });
      await done(tx);
      return new Response(null, { status: 200 });
    }
    const tx = (await db()).transaction('bodies', 'readonly');
    const req = tx.objectStore('bodies').get(id);
    await done(tx);
    const blob = (req.result as { blob: Blob } | undefined)?.blob;
    if (!blob) return new Response(null, { status: 404 });
    return new Response(blob, { status: 200, headers: { 'content-length': String(blob.size) } });
  })());
});
