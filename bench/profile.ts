// Where a request's time goes inside swbucket's worker — the tool behind the explanations in
// RESULTS.md; not part of `npm run bench`.
//
//   node --import tsx bench/profile.ts put 1024 3     timeline of 3 PUTs of 1 MiB (size in KiB)
//   node --import tsx bench/profile.ts get 1 3        timeline of 3 GETs of 1 KiB
//   node --import tsx bench/profile.ts complete 262144 2   Complete of a 256 MiB upload (8 MiB parts)
//   node --import tsx bench/profile.ts delete 1 2     one Delete Multiple of 1,000 objects, calls grouped
//   node --import tsx bench/profile.ts body           what reading a PUT body costs in any service
//                                                     worker, step by step (a probe worker, not swbucket's)
import { execFileSync } from 'node:child_process';
import { startEnv, call, type Env } from './lib/env.ts';
import { grouped, serviceWorkerOf, traceRequest } from './lib/trace.ts';

const op = process.argv[2] ?? 'put';
const kib = Number(process.argv[3] ?? 1);
const count = Number(process.argv[4] ?? 3);
const log = (s: string) => console.log(s);

/** A probe worker on the bench origin: reads a PUT body one way or another and says how long each step took. */
const PROBE_SW = `
self.addEventListener('install', (e) => e.waitUntil(self.skipWaiting()));
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
let db;
const openDb = () => db ??= new Promise((res) => { const o = indexedDB.open('probe', 1); o.onupgradeneeded = () => o.result.createObjectStore('s'); o.onsuccess = () => res(o.result); });
const put = async (blob, durability) => { const d = await openDb(); const tx = d.transaction('s', 'readwrite', { durability }); tx.objectStore('s').put(blob, 'k'); await new Promise((r) => tx.oncomplete = r); };
self.addEventListener('fetch', (e) => { const u = new URL(e.request.url); if (!u.hostname.endsWith('.svc.localhost')) return;
  e.respondWith((async () => {
    const mode = u.pathname.slice(1); const t0 = performance.now(); const marks = {};
    if (mode === 'request.blob()') await e.request.blob();
    else {
      const r = e.request.body.getReader(); const chunks = [];
      for (;;) { const { done, value } = await r.read(); if (done) break; chunks.push(value); }
      marks.read = performance.now() - t0;
      if (mode !== 'read') {
        let t = performance.now(); const b = new Blob(chunks); marks.newBlob = performance.now() - t;
        if (mode !== 'read+newBlob') { t = performance.now(); await put(b, mode.split('/')[1]); marks.idbPut = performance.now() - t; }
      }
    }
    return new Response(JSON.stringify({ ms: performance.now() - t0, ...marks }));
  })()); });`;

async function bodyProbe(env: Env): Promise<void> {
  env.bench.bodies.set('/probe/sw.js', PROBE_SW);
  env.bench.bodies.set('/probe/index.html', `<script>navigator.serviceWorker.register('/probe/sw.js', { scope: '/probe/' })</script>`);
  const page = await env.context.newPage();
  await page.goto(env.bench.url + '/probe/index.html');
  await page.waitForFunction('navigator.serviceWorker.controller !== null');
  for (const mib of [1, 16, 64]) {
    // A string, not a function: tsx would add helpers the page does not have.
    const out = await page.evaluate(`(async () => {
      const body = new Blob([new Uint8Array(${mib} * 1048576).map((_, i) => i * 7)]);
      const modes = ['request.blob()', 'read', 'read+newBlob', 'read+newBlob+put/strict', 'read+newBlob+put/relaxed'];
      const res = {};
      for (let rep = 0; rep < 7; rep++) for (const mode of modes) {
        const t0 = performance.now();
        const j = await (await fetch('http://probe.svc.localhost/' + mode, { method: 'PUT', body })).json();
        j.page = performance.now() - t0;
        (res[mode] ??= []).push(j);
      }
      const med = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
      return modes.map((m) => m.padEnd(26) + ['page', 'ms', 'read', 'newBlob', 'idbPut'].filter((k) => res[m][0][k] !== undefined)
        .map((k) => (k === 'ms' ? 'worker' : k) + ' ' + med(res[m].map((j) => j[k])).toFixed(1)).join('  ')).join('\\n');
    })()`);
    log(`--- PUT ${mib} MiB through a probe worker, medians of 7 (ms)\n${out}`);
  }
}

const env = await startEnv(log);
try {
  if (op === 'body') {
    await bodyProbe(env);
  } else {
    const sw = env.pages.sw;
    const bucket = 'prof';
    await call(sw, 'ensureBucket', 'sw', bucket);
    await call(sw, 'makeBlob', 'b', kib * 1024, 3);
    await call(sw, 'makeBlob', 'warm', 1024, 4);
    // Warm up: wasm compiled, keys imported, databases open.
    for (let i = 0; i < 20; i++) await call(sw, 'put', 'sw', bucket, 'warm', 'warm', 1);
    if (op === 'get') await call(sw, 'put', 'sw', bucket, 'k', 'b', 1);
    const worker = serviceWorkerOf(env);
    for (let n = 0; n < count; n++) {
      let request: () => Promise<number>;
      if (op === 'put') request = () => call<number>(sw, 'put', 'sw', bucket, 'k', 'b', 1);
      else if (op === 'get') request = () => call<number>(sw, 'get', 'sw', bucket, 'k', kib * 1024, 1);
      else if (op === 'complete') {
        // A new key each time, so Complete replaces nothing; parts of at most 8 MiB.
        const up = await call<{ uploadId: string; etags: string[] }>(sw, 'uploadParts', bucket, `mp${n}`, 'b', Math.min(8 * 1024 * 1024, kib * 1024), 4);
        execFileSync('sync'); // as the bench does: the parts' writeback is not Complete's
        request = () => call<number>(sw, 'complete', bucket, `mp${n}`, up.uploadId, up.etags);
      } else if (op === 'delete') {
        await call(sw, 'put', 'sw', bucket, 'd', 'warm', 1000, 4);
        request = () => call<number>(sw, 'deleteMany', 'sw', bucket, 'd', 1000);
      } else throw new Error(`unknown op ${op}`);
      let pageMs = 0;
      const trace = await traceRequest(worker, async () => {
        pageMs = await request();
      });
      log(`\n${op} ${op === 'delete' ? '1,000 objects' : `${kib} KiB`} #${n + 1}: ${pageMs.toFixed(2)} ms measured in the page`);
      if (op === 'delete') {
        log('  calls   summed ms   first start → last end   what');
        for (const g of grouped(trace)) log(`${String(g.n).padStart(7)} ${g.sum.toFixed(1).padStart(10)}   ${g.first.toFixed(1).padStart(8)} → ${g.last.toFixed(1).padStart(8)}   ${g.what}`);
      } else {
        log('   start     end    took  (ms from the fetch event)');
        for (const e of trace) log(`${e.t0.toFixed(2).padStart(8)} ${e.t1.toFixed(2).padStart(7)} ${(e.t1 - e.t0).toFixed(2).padStart(7)}  ${e.what}`);
      }
    }
  }
} finally {
  await env.close();
}
