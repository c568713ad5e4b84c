// Figure 6: 1,000 small (1 KiB) objects: PUT all (4 in flight), list all, Delete Multiple all, in
// operations per second, against s3rver doing the same from the same browser.
import { call } from '../lib/env.ts';
import { KiB, median, pairs, rounds, spread } from '../lib/stats.ts';
import { row, type Row } from '../lib/report.ts';
import type { Ctx } from '../lib/context.ts';

const N = 1000;

export async function smallObjectsFigure({ env, log, bucket }: Ctx): Promise<Row[]> {
  const page = { sw: env.pages.sw, s3: env.pages.raw };
  const bucketOf = { sw: bucket, s3: env.s3.bucket };
  for (const p of [env.pages.sw, env.pages.raw]) await call(p, 'makeBlob', 'small', KiB, 0x5);
  const ms = { sw: { put: [] as number[], list: [] as number[], del: [] as number[] }, s3: { put: [] as number[], list: [] as number[], del: [] as number[] } };
  await rounds(['sw', 's3'] as const, 3, async (side, keep, rep) => {
    const prefix = `small-${rep + 1}-`;
    const put = await call<number>(page[side], 'put', side, bucketOf[side], prefix, 'small', N, 4);
    const list = await call<{ ms: number; count: number }>(page[side], 'list', side, bucketOf[side], prefix);
    if (list.count !== N) throw new Error(`${side} listed ${list.count} of ${N}`);
    const del = await call<number>(page[side], 'deleteMany', side, bucketOf[side], prefix, N);
    if (keep) {
      ms[side].put.push(put);
      ms[side].list.push(list.ms);
      ms[side].del.push(del);
    }
    log(`  ${side} round ${rep + 1}: PUT ${N} in ${put.toFixed(0)} ms, list ${list.ms.toFixed(0)} ms, delete ${del.toFixed(0)} ms`);
  }, { warmup: 0, budgetMs: 60_000, minReps: 2 });
  for (const p of [env.pages.sw, env.pages.raw]) await call(p, 'dropBlob', 'small');
  const ops = (xs: number[]) => N / (median(xs) / 1000);
  return [
    row(6, 'PUT 1,000 × 1 KiB (4 in flight) vs s3rver', ops(ms.sw.put), ops(ms.s3.put), 'ops/s', { op: '>=', value: 1 },
      `ms swbucket ${spread(ms.sw.put, 0)}, s3rver ${spread(ms.s3.put, 0)}`, pairs(ms.s3.put, ms.sw.put)),
    row(6, 'List 1,000 objects vs s3rver', ops(ms.sw.list), ops(ms.s3.list), 'objects/s', null,
      `ms swbucket ${spread(ms.sw.list)}, s3rver ${spread(ms.s3.list)}`, pairs(ms.s3.list, ms.sw.list)),
    row(6, 'Delete Multiple 1,000 objects vs s3rver', ops(ms.sw.del), ops(ms.s3.del), 'objects/s', { op: '>=', value: 1 },
      `one request each; ms swbucket ${spread(ms.sw.del)}, s3rver ${spread(ms.s3.del)}`, pairs(ms.s3.del, ms.sw.del)),
  ];
}
