// A timeline of one request inside swbucket's service worker. The worker's bundle keeps its
// functions to itself, so this wraps the globals it calls instead — IndexedDB requests and
// transactions, WebCrypto, WebAssembly, Blob, FetchEvent.respondWith, BroadcastChannel — through
// Playwright's handle on the worker, and reads back what they recorded. Used by bench/profile.ts
// and by the diagnostics at the end of a run (it changes the worker's globals: run it last).
import type { Worker } from 'playwright-core';
import type { Env } from './env.ts';

export interface TraceEntry {
  what: string;
  /** ms from the fetch event. */
  t0: number;
  t1: number;
}

// Runs inside the service worker: installs the wrappers once (later calls only clear the record).
const INSTRUMENT = `(() => {
  if (self.__trace) { self.__trace.length = 0; return 'reset'; }
  const trace = self.__trace = [];
  const now = () => performance.now();
  const mark = (what, t0, t1) => trace.push({ what, t0, t1 });
  const wrapAsync = (obj, name, label) => {
    const orig = obj[name];
    obj[name] = function (...a) { const t0 = now(); const p = orig.apply(this, a); p.then(() => mark(label, t0, now()), () => mark(label + ' (failed)', t0, now())); return p; };
  };
  // IndexedDB: each request from its call to its success event; each transaction from creation to complete.
  for (const [proto, names] of [[IDBObjectStore.prototype, ['get', 'getAll', 'getAllKeys', 'getKey', 'put', 'add', 'delete', 'openCursor', 'openKeyCursor', 'count']], [IDBIndex.prototype, ['openCursor', 'openKeyCursor', 'get', 'getAll']], [IDBCursor.prototype, ['continue']]]) {
    for (const n of names) {
      const orig = proto[n];
      if (!orig) continue;
      proto[n] = function (...a) {
        const t0 = now();
        const store = this.objectStore ? this.objectStore.name + '.' + this.name : (this.source ? this.source.name : this.name);
        const req = orig.apply(this, a);
        const label = 'idb ' + (proto === IDBCursor.prototype ? 'cursor' : store) + '.' + n;
        if (req) req.addEventListener('success', () => mark(label, t0, now()));
        else mark(label, t0, now());
        return req;
      };
    }
  }
  const tx = IDBDatabase.prototype.transaction;
  IDBDatabase.prototype.transaction = function (stores, mode, opts) {
    const t0 = now();
    const t = tx.call(this, stores, mode, opts);
    const label = 'tx ' + this.name + ' ' + (mode || 'readonly') + (opts && opts.durability ? '/' + opts.durability : '') + ' [' + [].concat(stores).join(',') + ']';
    t.addEventListener('complete', () => mark(label, t0, now()));
    return t;
  };
  for (const n of ['importKey', 'sign', 'verify', 'digest']) wrapAsync(crypto.subtle, n, 'crypto.subtle.' + n);
  for (const n of ['instantiate', 'compile']) wrapAsync(WebAssembly, n, 'WebAssembly.' + n);
  const RealBlob = Blob;
  self.Blob = class extends RealBlob { constructor(...a) { const t0 = performance.now(); super(...a); trace.push({ what: 'new Blob(' + ((a[0] && a[0].length) || 0) + ' parts)', t0, t1: performance.now() }); } };
  const rw = FetchEvent.prototype.respondWith;
  FetchEvent.prototype.respondWith = function (p) {
    const t0 = now();
    trace.push({ what: 'fetch event ' + this.request.method + ' ' + this.request.url, t0, t1: t0, start: true });
    return rw.call(this, Promise.resolve(p).then((res) => { mark('response ready ' + res.status, t0, now()); return res; }));
  };
  const post = BroadcastChannel.prototype.postMessage;
  BroadcastChannel.prototype.postMessage = function (m) { const t0 = now(); post.call(this, m); mark('BroadcastChannel.postMessage', t0, now()); };
  return 'installed';
})()`;

export function serviceWorkerOf(env: Env): Worker {
  const worker = env.context.serviceWorkers().find((w) => w.url().startsWith(env.site.url));
  if (!worker) throw new Error('swbucket service worker not found');
  return worker;
}

/** Runs `request` (which sends exactly one request to the worker) and returns the worker's timeline of it. */
export async function traceRequest(worker: Worker, request: () => Promise<unknown>): Promise<TraceEntry[]> {
  await worker.evaluate(INSTRUMENT);
  await new Promise((r) => setTimeout(r, 200)); // what the previous request left (its log write) lands first
  await worker.evaluate(INSTRUMENT); // and is cleared
  await request();
  await new Promise((r) => setTimeout(r, 300)); // the log write after the answer (waitUntil) lands in the trace
  const raw = (await worker.evaluate('self.__trace')) as (TraceEntry & { start?: boolean })[];
  const start = raw.find((e) => e.start)?.t0 ?? raw[0]?.t0 ?? 0;
  return raw.map((e) => ({ what: e.what, t0: e.t0 - start, t1: e.t1 - start })).sort((a, b) => a.t0 - b.t0);
}

export interface RequestShape {
  /** Response ready, ms after the fetch event. */
  response: number;
  /** Read-only transactions of the service's database, in order, and when their last request was answered (ms after the fetch event). */
  readTx: { stores: string; doneAt: number }[];
  /** The write transaction: from its creation to `complete`, and the part of that after its last request succeeded (the commit). */
  writeTx?: { ms: number; commitMs: number; requests: number };
  /** The request-log transaction that follows the answer. */
  logTxMs?: number;
  newBlobMs: number;
}

/** The facts of one request's timeline the explanations cite. */
export function shape(trace: TraceEntry[]): RequestShape {
  const response = trace.find((e) => e.what.startsWith('response ready'))?.t1 ?? NaN;
  const readTx = trace
    .filter((e) => e.what.startsWith('tx swbucket readonly'))
    .map((tx) => {
      const stores = tx.what.replace(/^tx swbucket readonly \[(.*)\]$/, '$1').split(',');
      // Its requests: on one of its stores, issued while it was open.
      const mine = trace.filter((e) => e.what.startsWith('idb ') && stores.some((st) => e.what.startsWith(`idb ${st}.`)) && e.t0 >= tx.t0 && e.t0 <= tx.t1);
      return { stores: stores.join('+'), doneAt: Math.max(tx.t0, ...mine.map((e) => e.t1)) };
    });
  const w = trace.find((e) => e.what.startsWith('tx swbucket readwrite'));
  let writeTx: RequestShape['writeTx'];
  if (w) {
    const inside = trace.filter((e) => e.what.startsWith('idb ') && e.t0 >= w.t0 && e.t1 <= w.t1);
    const lastRequest = Math.max(w.t0, ...inside.map((e) => e.t1));
    writeTx = { ms: w.t1 - w.t0, commitMs: w.t1 - lastRequest, requests: inside.length };
  }
  const log = trace.find((e) => e.what.startsWith('tx swbucket-log'));
  const newBlobMs = trace.filter((e) => e.what.startsWith('new Blob')).reduce((n, e) => n + e.t1 - e.t0, 0);
  return { response, readTx, ...(writeTx ? { writeTx } : {}), ...(log ? { logTxMs: log.t1 - log.t0 } : {}), newBlobMs };
}

/** Calls grouped by what they were: count, summed duration, first start and last end. */
export function grouped(trace: TraceEntry[]): { what: string; n: number; sum: number; first: number; last: number }[] {
  const groups = new Map<string, { what: string; n: number; sum: number; first: number; last: number }>();
  for (const e of trace) {
    const g = groups.get(e.what) ?? { what: e.what, n: 0, sum: 0, first: Infinity, last: 0 };
    g.n++;
    g.sum += e.t1 - e.t0;
    g.first = Math.min(g.first, e.t0);
    g.last = Math.max(g.last, e.t1);
    groups.set(e.what, g);
  }
  return [...groups.values()];
}
