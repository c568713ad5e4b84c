// Figures 2 and 3: PUT and GET of 1 KiB, 1 MiB, 16 MiB and 64 MiB objects through swbucket's
// worker, against the floor worker, raw IndexedDB from a page, and s3rver over loopback HTTP.
// All four sides run in the same rounds (order rotated each round), so one noisy second on this
// shared machine lands on every side alike.
import { call } from '../lib/env.ts';
import { KiB, MiB, median, pairs, rounds, sizeName, spread } from '../lib/stats.ts';
import { row, type Row } from '../lib/report.ts';
import type { Ctx } from '../lib/context.ts';

type Side = 'sw' | 'floor' | 'store' | 'idb' | 's3';
const SIDES: readonly Side[] = ['sw', 'floor', 'store', 'idb', 's3'];

/** Per size: how many operations one sample times (small objects are timed in batches), and how many samples. */
const PLAN = [
  { size: KiB, batch: 40, reps: 11, budgetMs: 35_000 },
  { size: MiB, batch: 4, reps: 11, budgetMs: 25_000 },
  { size: 16 * MiB, batch: 1, reps: 9, budgetMs: 30_000 },
  { size: 64 * MiB, batch: 1, reps: 7, budgetMs: 60_000 },
];

export interface PutGetResult {
  rows2: Row[];
  rows3: Row[];
  /** Per size and side, median ms per operation (for the explanations). */
  medians: Record<number, Record<Side, { put: number; get: number }>>;
}

export async function putGetFigures({ env, log, bucket }: Ctx): Promise<PutGetResult> {
  const page = { sw: env.pages.sw, floor: env.pages.floor, store: env.pages.store, idb: env.pages.raw, s3: env.pages.raw };
  const bucketOf = (side: Side) => (side === 's3' ? env.s3.bucket : bucket);
  const rows2: Row[] = [];
  const rows3: Row[] = [];
  const medians: PutGetResult['medians'] = {};

  for (const { size, batch, reps, budgetMs } of PLAN) {
    const name = sizeName(size);
    const blobId = `pg-${size}`;
    const pages = [env.pages.sw, env.pages.floor, env.pages.store, env.pages.raw];
    for (const p of pages) await call(p, 'makeBlob', blobId, size, size & 0xffff);
    const put = Object.fromEntries(SIDES.map((s) => [s, [] as number[]])) as Record<Side, number[]>;
    const get = Object.fromEntries(SIDES.map((s) => [s, [] as number[]])) as Record<Side, number[]>;
    const prefix = `pg-${name.replace(' ', '')}-`;
    await rounds(SIDES, reps, async (side, keep) => {
      // A PUT (batch of `batch` keys, one after another), then GETs of what was just written.
      const p = await call<number>(page[side], 'put', side, bucketOf(side), prefix, blobId, batch);
      const g = await call<number>(page[side], 'get', side, bucketOf(side), prefix, size, batch);
      if (keep) {
        put[side].push(p / batch);
        get[side].push(g / batch);
      }
    }, { budgetMs });
    for (const p of pages) await call(p, 'dropBlob', blobId);

    const m = Object.fromEntries(SIDES.map((s) => [s, { put: median(put[s]), get: median(get[s]) }])) as Record<Side, { put: number; get: number }>;
    medians[size] = m;
    log(`  ${name}: ` + SIDES.map((s) => `${s} PUT ${m[s].put.toFixed(2)} ms GET ${m[s].get.toFixed(2)} ms`).join(' | '));

    const small = size === KiB;
    // 1 KiB is reported in operations per second (higher is better); larger sizes in ms per operation.
    const v = (ms: number) => (small ? 1000 / ms : ms);
    const unit = small ? 'ops/s' : 'ms';
    const note = (op: 'PUT' | 'GET', side: Side, xs: Record<Side, number[]>) =>
      `${batch > 1 ? `${batch} ops per sample; ` : ''}ms/op swbucket ${spread(xs.sw, 2)}, ${side} ${spread(xs[side], 2)}`;

    // Per-round ratios: swbucket's time over the other side's (for ops/s rows, the inverse).
    const r = (op: Record<Side, number[]>, side: Side) => (small ? pairs(op[side], op.sw) : pairs(op.sw, op[side]));

    // Figure 2 (a): the in-memory floor. GET within 1.3× (for 1 KiB, in ops/s: ≥ 1/1.3). A PUT is
    // held to the storage floor below: no durable store can come near a worker that stores nothing.
    rows2.push(row(2, `PUT ${name} vs floor worker`, v(m.sw.put), v(m.floor.put), unit, null, note('PUT', 'floor', put), r(put, 'floor')));
    rows2.push(row(2, `GET ${name} vs floor worker`, v(m.sw.get), v(m.floor.get), unit,
      small ? { op: '>=', value: 0.77 } : { op: '<=', value: 1.3 }, note('GET', 'floor', get), r(get, 'floor')));
    // Figure 2 (c): the storage floor, what a durable store cannot beat: PUT within 1.3×, GET within
    // 1.2× (for 1 KiB, in ops/s: ≥ 1/1.3 and ≥ 1/1.2).
    rows2.push(row(2, `PUT ${name} vs storage floor worker`, v(m.sw.put), v(m.store.put), unit,
      small ? { op: '>=', value: 0.77 } : { op: '<=', value: 1.3 }, note('PUT', 'store', put), r(put, 'store')));
    rows2.push(row(2, `GET ${name} vs storage floor worker`, v(m.sw.get), v(m.store.get), unit,
      small ? { op: '>=', value: 0.83 } : { op: '<=', value: 1.2 }, note('GET', 'store', get), r(get, 'store')));
    // Figure 2 (b): raw IndexedDB from the page, reported.
    rows2.push(row(2, `PUT ${name} vs raw IndexedDB`, v(m.sw.put), v(m.idb.put), unit, null, note('PUT', 'idb', put), r(put, 'idb')));
    rows2.push(row(2, `GET ${name} vs raw IndexedDB`, v(m.sw.get), v(m.idb.get), unit, null, note('GET', 'idb', get), r(get, 'idb')));
    // Figure 3: s3rver. swbucket faster on every row.
    rows3.push(row(3, `PUT ${name} vs s3rver`, v(m.sw.put), v(m.s3.put), unit,
      small ? { op: '>', value: 1 } : { op: '<', value: 1 }, note('PUT', 's3', put), r(put, 's3')));
    rows3.push(row(3, `GET ${name} vs s3rver`, v(m.sw.get), v(m.s3.get), unit,
      small ? { op: '>', value: 1 } : { op: '<', value: 1 }, note('GET', 's3', get), r(get, 's3')));
  }
  return { rows2, rows3, medians };
}
