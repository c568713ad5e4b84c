// Figure 1: the MD5 engine the worker uses (hash-wasm, from protocol/md5.ts) against node:crypto
// (OpenSSL) on the same 64 MiB. The engine runs in a dedicated browser worker — where it runs in
// production, not in Node — and both sides are fed 64 KiB updates, the chunk size a service
// worker receives a request body in (measured: Chromium delivers PUT bodies in 65,536-byte reads).
import { createHash } from 'node:crypto';
import { call } from '../lib/env.ts';
import { fill } from '../browser/fill.ts';
import { interleave, median, MiB, KiB, pairs, spread } from '../lib/stats.ts';
import { row, type Row } from '../lib/report.ts';
import type { Ctx } from '../lib/context.ts';

const SIZE = 64 * MiB;
const SEED = 1;

export async function md5Figure({ env, log }: Ctx): Promise<Row[]> {
  const data = fill(SIZE, SEED);
  const expected = createHash('md5').update(data).digest('hex');
  const rows: Row[] = [];
  let engine = '';
  for (const chunk of [64 * KiB, 4 * MiB]) {
    const ms = await interleave(['engine', 'node'] as const, 9, async (side) => {
      if (side === 'node') {
        const t0 = performance.now();
        const h = createHash('md5');
        for (let at = 0; at < SIZE; at += chunk) h.update(data.subarray(at, at + chunk));
        if (h.digest('hex') !== expected) throw new Error('node md5 mismatch');
        return performance.now() - t0;
      }
      const r = await call<{ ms: number; digest: string; engine: string }>(env.pages.raw, 'md5', SIZE, SEED, chunk);
      if (r.digest !== expected) throw new Error(`worker md5 ${r.digest} != ${expected}`);
      engine = r.engine;
      return r.ms;
    }, { budgetMs: 20_000 });
    const mibps = (xs: number[]) => (SIZE / MiB) / (median(xs) / 1000);
    const first = chunk === 64 * KiB;
    rows.push(row(
      1,
      `MD5 64 MiB, ${chunk / KiB} KiB updates: ${engine} (browser worker) vs node:crypto`,
      mibps(ms.engine),
      mibps(ms.node),
      'MiB/s',
      first ? { op: '>=', value: 0.7 } : null,
      `${first ? 'the PUT path (readBody)' : 'md5OfBlob slices, reported'}; ms engine ${spread(ms.engine)}, node ${spread(ms.node)}`,
      pairs(ms.node, ms.engine), // throughput ratio of a round = node's time / the engine's time
    ));
    log(`  MD5 ${chunk / KiB} KiB updates: ${engine} ${median(ms.engine).toFixed(0)} ms, node ${median(ms.node).toFixed(0)} ms`);
  }
  return rows;
}
