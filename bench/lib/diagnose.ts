// Evidence for the explanations, gathered in the same run (last, because tracing rewires the
// worker's globals): timelines of single requests inside swbucket's worker, and what IndexedDB's
// strict durability costs on this disk.
import { call } from './env.ts';
import { grouped, serviceWorkerOf, shape, traceRequest, type RequestShape } from './trace.ts';
import { KiB, MiB, interleave, median, rounds } from './stats.ts';
import type { Ctx } from './context.ts';

export interface Diagnostics {
  /** Per traced request kind, the median facts of 5 timelines (3 for Complete). */
  shapes: Record<string, { page: number; response: number; readTx: string; writeMs: number; commitMs: number; logMs: number; newBlobMs: number }>;
  /** Delete Multiple of 1,000: IndexedDB requests issued, time until the last one succeeded, and the commit after it. */
  deleteMany?: { requests: number; breakdown: string; requestsMs: number; commitMs: number; response: number; /** ms from the fetch event: the body read, checked and parsed before it. */ txOpenedAt: number };
  /** A 1 KiB GET seen from the page, split: signing, until the headers, the body after them (median ms). */
  getSplit?: Record<'sw' | 'floor', { sign: number; headers: number; body: number }>;
  /** The storage floor worker's GETs traced the same way: its answer, ms after the fetch event, and the page's ms (medians of 5). */
  storageFloorGet?: Record<string, { page: number; response: number }>;
  /** Raw IndexedDB put from the page, strict vs relaxed durability, median ms. */
  durability: Record<string, { strict: number; relaxed: number }>;
}

function summarize(shapes: RequestShape[], pageMs: number[]) {
  const m = (f: (s: RequestShape) => number) => median(shapes.map(f).filter(Number.isFinite));
  return {
    page: median(pageMs),
    response: m((s) => s.response),
    // "accounts 0.5, buckets 1.1, objects+versions+bodies 1.6": each answered at (median ms after the fetch event).
    readTx: (shapes[0]?.readTx ?? []).map((t, i) => `${t.stores} at ${median(shapes.map((x) => x.readTx[i]?.doneAt ?? NaN).filter(Number.isFinite)).toFixed(1)}`).join(', '),
    writeMs: m((s) => s.writeTx?.ms ?? NaN),
    commitMs: m((s) => s.writeTx?.commitMs ?? NaN),
    logMs: m((s) => s.logTxMs ?? NaN),
    newBlobMs: m((s) => s.newBlobMs),
  };
}

export async function diagnose({ env, log, bucket }: Ctx): Promise<Diagnostics> {
  const sw = env.pages.sw;
  const raw = env.pages.raw;
  const out: Diagnostics = { shapes: {}, durability: {} };

  // Strict vs relaxed, raw IndexedDB from the page (no worker), 1 KiB and 1 MiB.
  for (const size of [KiB, MiB]) {
    const id = `dur-${size}`;
    await call(raw, 'makeBlob', id, size, 9);
    const ms = await interleave(['strict', 'relaxed'] as const, 9, (d) => call<number>(raw, 'idbPutDurability', `dur/${size}`, id, d));
    await call(raw, 'dropBlob', id);
    out.durability[size === KiB ? '1 KiB' : '1 MiB'] = { strict: median(ms.strict), relaxed: median(ms.relaxed) };
  }
  log(`  raw IndexedDB put, strict vs relaxed: ${Object.entries(out.durability).map(([k, v]) => `${k} ${v.strict.toFixed(1)} vs ${v.relaxed.toFixed(1)} ms`).join(', ')}`);

  // A 1 KiB GET from the page, split in parts, swbucket vs the floor (before the worker is instrumented).
  await call(sw, 'makeBlob', 'split', KiB, 24);
  await call(env.pages.floor, 'makeBlob', 'split', KiB, 24);
  await call(sw, 'put', 'sw', bucket, 'split-', 'split', 1);
  await call(env.pages.floor, 'put', 'floor', bucket, 'split-', 'split', 1);
  type Split = { sign: number; headers: number; body: number };
  const splits = { sw: [] as Split[], floor: [] as Split[] };
  await rounds(['sw', 'floor'] as const, 25, async (side, keep) => {
    const r = await call<Split>(side === 'sw' ? sw : env.pages.floor, 'getSplit', side, bucket, 'split-0');
    if (keep) splits[side].push(r);
  });
  const med = (xs: Split[]): Split => ({ sign: median(xs.map((x) => x.sign)), headers: median(xs.map((x) => x.headers)), body: median(xs.map((x) => x.body)) });
  out.getSplit = { sw: med(splits.sw), floor: med(splits.floor) };
  log(`  GET 1 KiB from the page: swbucket signing ${out.getSplit.sw.sign.toFixed(2)} ms, headers after ${out.getSplit.sw.headers.toFixed(2)} ms, body ${out.getSplit.sw.body.toFixed(2)} ms more; floor headers after ${out.getSplit.floor.headers.toFixed(2)} ms, body ${out.getSplit.floor.body.toFixed(2)} ms more`);

  // Timelines inside swbucket's worker.
  const worker = serviceWorkerOf(env);
  await call(sw, 'makeBlob', 'diag-1k', KiB, 21);
  await call(sw, 'makeBlob', 'diag-1m', MiB, 22);
  await call(sw, 'put', 'sw', bucket, 'diag-1k-', 'diag-1k', 1);
  await call(sw, 'put', 'sw', bucket, 'diag-1m-', 'diag-1m', 1);
  const kinds: [string, () => Promise<number>][] = [
    ['PUT 1 KiB', () => call(sw, 'put', 'sw', bucket, 'diag-1k-', 'diag-1k', 1)],
    ['PUT 1 MiB', () => call(sw, 'put', 'sw', bucket, 'diag-1m-', 'diag-1m', 1)],
    ['GET 1 KiB', () => call(sw, 'get', 'sw', bucket, 'diag-1k-', KiB, 1)],
    ['GET 1 MiB', () => call(sw, 'get', 'sw', bucket, 'diag-1m-', MiB, 1)],
  ];
  for (const [name, request] of kinds) {
    const shapes: RequestShape[] = [];
    const pageMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      shapes.push(shape(await traceRequest(worker, async () => {
        pageMs.push(await request());
      })));
    }
    const s = out.shapes[name] = summarize(shapes, pageMs);
    log(`  ${name}: ${s.page.toFixed(1)} ms in the page; in the worker, answer at ${s.response.toFixed(1)} ms; read-only transactions answered: ${s.readTx}`
      + (Number.isFinite(s.writeMs) ? `; write transaction ${s.writeMs.toFixed(1)} ms, of which commit ${s.commitMs.toFixed(1)} ms` : '')
      + `; log transaction ${s.logMs.toFixed(1)} ms after`);
  }

  // The storage floor's GETs, traced in its own worker: what a one-get worker's handler costs.
  const store = env.pages.store;
  const floorWorker = env.context.serviceWorkers().find((w) => w.url().startsWith(env.storage.url));
  if (floorWorker) {
    out.storageFloorGet = {};
    for (const [name, size, blobId] of [['GET 1 KiB', KiB, 'diag-1k'], ['GET 1 MiB', MiB, 'diag-1m']] as const) {
      await call(store, 'makeBlob', blobId, size, 21);
      await call(store, 'put', 'store', bucket, `${blobId}-`, blobId, 1);
      const responses: number[] = [];
      const pageMs: number[] = [];
      for (let i = 0; i < 5; i++) {
        const s = shape(await traceRequest(floorWorker, async () => {
          pageMs.push(await call<number>(store, 'get', 'store', bucket, `${blobId}-`, size, 1));
        }));
        responses.push(s.response);
      }
      await call(store, 'dropBlob', blobId);
      const f = out.storageFloorGet[name] = { page: median(pageMs), response: median(responses.filter(Number.isFinite)) };
      log(`  storage floor ${name}: ${f.page.toFixed(1)} ms in the page; in its worker, answer at ${f.response.toFixed(1)} ms`);
    }
  }

  // Complete of 32 parts vs 1 part (16 KiB parts: what Complete does depends on the part count, not the bytes).
  await call(sw, 'makeBlob', 'diag-32p', 32 * 16 * KiB, 23);
  for (const [name, partSize] of [['Complete 32 parts', 16 * KiB], ['Complete 1 part', 32 * 16 * KiB]] as const) {
    const shapes: RequestShape[] = [];
    const pageMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const key = `diag-mp-${partSize}-${i}`;
      const up = await call<{ uploadId: string; etags: string[] }>(sw, 'uploadParts', bucket, key, 'diag-32p', partSize, 4);
      shapes.push(shape(await traceRequest(worker, async () => {
        pageMs.push(await call<number>(sw, 'complete', bucket, key, up.uploadId, up.etags));
      })));
      await call(sw, 'removeKeys', bucket, [key]);
    }
    const s = out.shapes[name] = summarize(shapes, pageMs);
    log(`  ${name}: ${s.page.toFixed(1)} ms in the page; answer at ${s.response.toFixed(1)} ms; write transaction ${s.writeMs.toFixed(1)} ms, of which commit ${s.commitMs.toFixed(1)} ms`);
  }
  await call(sw, 'dropBlob', 'diag-32p');

  // One Delete Multiple of 1,000.
  await call(sw, 'put', 'sw', bucket, 'diag-del-', 'diag-1k', 1000, 4);
  const trace = await traceRequest(worker, () => call(sw, 'deleteMany', 'sw', bucket, 'diag-del-', 1000));
  const tx = trace.find((e) => e.what.startsWith('tx swbucket readwrite'));
  if (tx) {
    const inside = trace.filter((e) => e.what.startsWith('idb ') && e.t0 >= tx.t0 && e.t1 <= tx.t1);
    const last = Math.max(...inside.map((e) => e.t1));
    const breakdown = grouped(inside).map((g) => `${g.n} × ${g.what.replace('idb ', '')}`).join(', ');
    out.deleteMany = {
      requests: inside.length,
      breakdown,
      requestsMs: last - tx.t0,
      commitMs: tx.t1 - last,
      response: trace.find((e) => e.what.startsWith('response ready'))?.t1 ?? NaN,
      txOpenedAt: tx.t0,
    };
    log(`  Delete Multiple 1,000 in the worker: transaction opened at ${tx.t0.toFixed(0)} ms; ${inside.length} IndexedDB requests (${breakdown}) over ${out.deleteMany.requestsMs.toFixed(0)} ms, then commit ${out.deleteMany.commitMs.toFixed(0)} ms`);
  }
  await call(sw, 'dropBlob', 'diag-1k');
  await call(sw, 'dropBlob', 'diag-1m');
  return out;
}
