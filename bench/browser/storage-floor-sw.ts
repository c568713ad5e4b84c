/// <reference lib="webworker" />
// The storage floor: the least a durable store can do in a service worker. PUT reads the body into
// a Blob (request.blob(), no hashing) and stores it with one IndexedDB put in its own strict
// readwrite transaction, answering after the commit; GET is one get in a readonly transaction,
// answered with the stored Blob. The honest limit of swbucket's durable PUT and GET (issue 13):
// whatever swbucket costs beyond this is its own work, not the storage's.
//
// Where IndexedDB refuses Blobs (WebKit's ephemeral storage: Safari's private windows, WebKitGTK's
// automation sessions), the floor keeps the body's bytes instead: request.arrayBuffer(), one
// ArrayBuffer per body, answered as new Response(bytes). Which form it keeps is found out once, as
// the database opens (a one-byte Blob put in a transaction that is then aborted, as swbucket's own
// store asks), and said at GET {scope}__form: {"form":"blob"|"bytes"|"pieces"}. Chromium, Firefox
// and WebKit with storage on disk keep Blobs, so figure 2's floor is unchanged.
//
// Registered as storage-floor-sw.js?pieceBytes=N (figure 10, bench/pages/storage-floor-pieces/), it
// keeps a body as swbucket keeps it where Blobs are refused: pieces of N bytes, each a record of its
// own, all put in the one strict transaction beside a head record; a GET reads the pieces with one
// getAll and answers a Blob of them. Its own database, so the two floors never share a record.
declare const self: ServiceWorkerGlobalScope;
export {}; // a module, so `self` above is this file's own declaration

type Form = 'blob' | 'bytes' | 'pieces';
interface Stored {
  id: string;
  blob?: Blob;
  bytes?: ArrayBuffer;
  /** A head record (pieces form): how many pieces follow, under `${id}#000000`, `${id}#000001`, … */
  pieces?: number;
}

const pieceBytes = Number(new URL(self.location.href).searchParams.get('pieceBytes')) || 0;
const pieceId = (id: string, n: number) => `${id}#${String(n).padStart(6, '0')}`;

let opened: Promise<{ db: IDBDatabase; form: Form }> | null = null;
function db(): Promise<{ db: IDBDatabase; form: Form }> {
  opened ??= new Promise<IDBDatabase>((resolve, reject) => {
    const open = indexedDB.open(pieceBytes ? 'storage-floor-pieces' : 'storage-floor', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('bodies', { keyPath: 'id' });
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  }).then(async (d) => ({ db: d, form: pieceBytes ? 'pieces' : (await refusesBlobs(d)) ? 'bytes' : 'blob' }));
  return opened;
}

/** A one-byte Blob put in a transaction that is aborted: refused where IndexedDB keeps no Blobs. */
async function refusesBlobs(d: IDBDatabase): Promise<boolean> {
  const tx = d.transaction('bodies', 'readwrite');
  try {
    await new Promise<void>((resolve, reject) => {
      const r = tx.objectStore('bodies').put({ id: '\uffffprobe', blob: new Blob([new Uint8Array([1])]) });
      r.onsuccess = () => resolve();
      r.onerror = (event) => {
        event.preventDefault();
        reject(r.error);
      };
    });
    return false;
  } catch {
    return true;
  } finally {
    try {
      tx.abort();
    } catch {
      // already ended
    }
  }
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
  if (url.href === new URL('__form', self.registration.scope).href) {
    event.respondWith(db().then(({ form }) => Response.json({ form })));
    return;
  }
  if (!url.hostname.endsWith('.svc.localhost')) return;
  event.respondWith((async () => {
    const id = url.hostname + url.pathname;
    const { db: d, form } = await db();
    if (event.request.method === 'PUT') {
      if (form === 'pieces') {
        const bytes = await event.request.arrayBuffer();
        const count = Math.ceil(bytes.byteLength / pieceBytes);
        const tx = d.transaction('bodies', 'readwrite', { durability: 'strict' });
        const store = tx.objectStore('bodies');
        store.put({ id, pieces: count });
        for (let n = 0; n < count; n++) store.put({ id: pieceId(id, n), bytes: bytes.slice(n * pieceBytes, (n + 1) * pieceBytes) });
        await done(tx);
        return new Response(null, { status: 200 });
      }
      const value: Stored = form === 'blob' ? { id, blob: await event.request.blob() } : { id, bytes: await event.request.arrayBuffer() };
      const tx = d.transaction('bodies', 'readwrite', { durability: 'strict' });
      tx.objectStore('bodies').put(value);
      await done(tx);
      return new Response(null, { status: 200 });
    }
    if (form === 'pieces') {
      const tx = d.transaction('bodies', 'readonly');
      const req = tx.objectStore('bodies').getAll(IDBKeyRange.bound(pieceId(id, 0), pieceId(id, 999999)));
      await done(tx);
      const pieces = (req.result as Stored[]).map((p) => p.bytes!);
      if (pieces.length === 0) return new Response(null, { status: 404 });
      const blob = new Blob(pieces);
      return new Response(blob, { status: 200, headers: { 'content-length': String(blob.size) } });
    }
    const tx = d.transaction('bodies', 'readonly');
    const req = tx.objectStore('bodies').get(id);
    await done(tx);
    const stored = req.result as Stored | undefined;
    const body = stored?.blob ?? stored?.bytes;
    if (!body) return new Response(null, { status: 404 });
    const size = body instanceof Blob ? body.size : body.byteLength;
    return new Response(body, { status: 200, headers: { 'content-length': String(size) } });
  })());
});
