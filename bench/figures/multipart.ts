// Figure 4: multipart. Complete composes the stored parts' Blobs without copying, so completing a
// 256 MiB upload (32 parts) should cost about what completing a 1 MiB one does. Also: 8 parts of
// 8 MiB sent concurrently vs one after another, Upload Part of 1 KiB parts against PUT of 1 KiB
// objects (8 in flight each), and List Parts over 10,000 parts.
import { execFileSync } from 'node:child_process';
import { call } from '../lib/env.ts';
import { KiB, MiB, interleave, median, pairs, spread } from '../lib/stats.ts';
import { row, type Row } from '../lib/report.ts';
import type { Ctx } from '../lib/context.ts';

const BIG = 256 * MiB;
const PART = 8 * MiB;

export interface MultipartResult {
  rows: Row[];
  /** A completed 256 MiB multipart object left for figures 5 and 7. */
  bigKey: string;
  bigSize: number;
}

interface Uploaded {
  uploadId: string;
  etags: string[];
  ms: number;
}

export async function multipartFigure({ env, log, bucket }: Ctx): Promise<MultipartResult> {
  const sw = env.pages.sw;
  const rows: Row[] = [];

  // ---- Complete: 256 MiB in 32 parts vs 1 MiB in 1 part. Each round first uploads both (not
  // timed; new keys, so Complete never also replaces and deletes an older object), flushes the disk
  // (`sync`: the parts' writeback is Upload Part's cost, and a strict commit's fsync would wait
  // behind it), then times the two Completes back to back, which goes first alternating: both run
  // on the same quiet disk, right after the same uploads.
  await call(sw, 'makeBlob', 'mp-big', BIG, 0x256);
  await call(sw, 'makeBlob', 'mp-small', MiB, 0x1);
  let bigKey = '';
  const old: string[] = [];
  const complete = { big: [] as number[], small: [] as number[] };
  const started = Date.now();
  for (let rep = 0; rep < 9 && (rep < 3 || Date.now() - started < 60_000); rep++) {
    const up = {
      big: await call<Uploaded>(sw, 'uploadParts', bucket, `mp-big-${rep}`, 'mp-big', PART, 4),
      small: await call<Uploaded>(sw, 'uploadParts', bucket, `mp-small-${rep}`, 'mp-small', PART, 4),
    };
    execFileSync('sync');
    for (const side of rep % 2 ? (['small', 'big'] as const) : (['big', 'small'] as const)) {
      complete[side].push(await call<number>(sw, 'complete', bucket, `mp-${side}-${rep}`, up[side].uploadId, up[side].etags));
    }
    log(`  round ${rep + 1}: 32 × 8 MiB parts sent in ${up.big.ms.toFixed(0)} ms; Complete 256 MiB ${complete.big.at(-1)!.toFixed(1)} ms, 1 MiB ${complete.small.at(-1)!.toFixed(1)} ms`);
    if (bigKey) old.push(bigKey);
    bigKey = `mp-big-${rep}`;
    old.push(`mp-small-${rep}`);
  }
  // Keep only the last 256 MiB object (figures 5 and 7 read it); the rest is deleted, not timed.
  await call(sw, 'removeKeys', bucket, old);
  await call(sw, 'dropBlob', 'mp-big');
  await call(sw, 'dropBlob', 'mp-small');
  rows.push(row(4, 'Complete 256 MiB (32 × 8 MiB parts) vs Complete 1 MiB (1 part)', median(complete.big), median(complete.small), 'ms',
    { op: '<=', value: 2 }, `both uploaded, disk flushed (sync), then both Completes back to back; ms big ${spread(complete.big)}, small ${spread(complete.small)}`,
    pairs(complete.big, complete.small)));
  log(`  Complete: 256 MiB ${median(complete.big).toFixed(1)} ms, 1 MiB ${median(complete.small).toFixed(1)} ms`);

  // ---- 8 parts of 8 MiB: 8 in flight vs one after another (parts only; the upload is then aborted).
  await call(sw, 'makeBlob', 'mp-64', 8 * PART, 0x64);
  const parts = await interleave(['concurrent', 'sequential'] as const, 5, async (side, rep) => {
    const key = `mp-par-${rep}`;
    const up = await call<Uploaded>(sw, 'uploadParts', bucket, key, 'mp-64', PART, side === 'concurrent' ? 8 : 1);
    await call(sw, 'abort', bucket, key, up.uploadId);
    return up.ms;
  }, { budgetMs: 30_000 });
  await call(sw, 'dropBlob', 'mp-64');
  rows.push(row(4, '8 × 8 MiB parts: 8 concurrent vs sequential', median(parts.concurrent), median(parts.sequential), 'ms', null,
    `time to send all parts; ms concurrent ${spread(parts.concurrent)}, sequential ${spread(parts.sequential)}`,
    pairs(parts.concurrent, parts.sequential)));
  log(`  8 × 8 MiB parts: concurrent ${median(parts.concurrent).toFixed(0)} ms, sequential ${median(parts.sequential).toFixed(0)} ms`);

  // ---- Small parts: 200 Upload Parts of 1 KiB into one upload vs 200 PUTs of 1 KiB to distinct
  // keys, 8 in flight each, in interleaved rounds after a warm-up round. Each round's clean-up
  // (abort the upload, delete the keys) is not timed.
  const SMALL_N = 200;
  await call(sw, 'makeBlob', 'mp-1k', KiB, 0x1001);
  const small = await interleave(['part', 'put'] as const, 9, async (side, rep) => {
    if (side === 'part') {
      const key = `mp-1k-part-${rep}`;
      const up = await call<{ uploadId: string; ms: number }>(sw, 'uploadPartsOf', bucket, key, 'mp-1k', SMALL_N, 8);
      await call(sw, 'abort', bucket, key, up.uploadId);
      return up.ms;
    }
    const prefix = `mp-1k-put-${rep}-`;
    const ms = await call<number>(sw, 'put', 'sw', bucket, prefix, 'mp-1k', SMALL_N, 8);
    await call(sw, 'removeKeys', bucket, Array.from({ length: SMALL_N }, (_, i) => `${prefix}${i}`));
    return ms;
  }, { budgetMs: 30_000 });
  await call(sw, 'dropBlob', 'mp-1k');
  const opsPerS = (xs: number[]) => SMALL_N / (median(xs) / 1000);
  rows.push(row(4, 'Upload Part 1 KiB (8 in flight) vs PUT 1 KiB (8 in flight)', opsPerS(small.part), opsPerS(small.put), 'ops/s',
    { op: '>=', value: 0.9 },
    `${SMALL_N} ops per sample (parts into one upload; PUTs to distinct keys); ms Upload Part ${spread(small.part, 0)}, PUT ${spread(small.put, 0)}`,
    pairs(small.put, small.part)));
  log(`  ${SMALL_N} × 1 KiB, 8 in flight: Upload Part ${opsPerS(small.part).toFixed(0)} ops/s, PUT ${opsPerS(small.put).toFixed(0)} ops/s`);

  // ---- List Parts over 10,000 parts (10 pages of 1,000), against 10 × the first page alone:
  // a ratio near 1 means a page deep in the list (by part-number marker) costs what the first does.
  const t0 = performance.now();
  const uploadId = await call<string>(sw, 'uploadTinyParts', bucket, 'mp-list', 10_000, 8);
  const setupS = (performance.now() - t0) / 1000;
  log(`  10,000 one-byte parts uploaded in ${setupS.toFixed(1)} s (setup: ${(10_000 / setupS).toFixed(0)} Upload Part/s, 8 in flight)`);
  const list = await interleave(['all', 'first'] as const, 5, async (side) => {
    const r = await call<{ ms: number; count: number }>(sw, 'listAllParts', bucket, 'mp-list', uploadId, side === 'all' ? Infinity : 1);
    if (r.count !== (side === 'all' ? 10_000 : 1000)) throw new Error(`List Parts gave ${r.count} parts`);
    return r.ms;
  }, { budgetMs: 20_000 });
  await call(sw, 'abort', bucket, 'mp-list', uploadId);
  const all = median(list.all);
  rows.push(row(4, 'List Parts, all 10,000 parts (10 pages) vs 10 × first page', all, 10 * median(list.first), 'ms', null,
    `${Math.round(10_000 / (all / 1000))} parts/s; setup sent ${(10_000 / setupS).toFixed(0)} one-byte parts/s; ms all ${spread(list.all)}, first page ${spread(list.first)}`,
    pairs(list.all, list.first.map((x) => 10 * x))));
  log(`  List Parts: 10,000 in ${all.toFixed(0)} ms, first 1,000 in ${median(list.first).toFixed(0)} ms`);

  return { rows, bigKey, bigSize: BIG };
}
