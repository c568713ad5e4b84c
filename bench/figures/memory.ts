// Figure 7: the worker's JS heap while it streams a 256 MiB GET (the multipart object of figure
// 4). Through CDP on the service worker: garbage-collect, read the heap, then sample it as fast as
// CDP answers while the page reads the object, and take the peak growth. ArrayBuffer backing
// stores count too (backingStorageSize, where Chromium reports it): bytes held in Uint8Arrays
// live outside the JS heap proper.
import { call } from '../lib/env.ts';
import { attachToServiceWorker } from '../lib/cdp.ts';
import { MiB, median, spread } from '../lib/stats.ts';
import { row, type Row } from '../lib/report.ts';
import type { Ctx } from '../lib/context.ts';

interface HeapUsage {
  usedSize: number;
  totalSize: number;
  backingStorageSize?: number;
}

export async function memoryFigure({ env, log, bucket }: Ctx, bigKey: string, bigSize: number): Promise<Row[]> {
  const sw = env.pages.sw;
  const session = await attachToServiceWorker(env);
  const used = async () => {
    const h = await session.send<HeapUsage>('Runtime.getHeapUsage');
    return h.usedSize + (h.backingStorageSize ?? 0);
  };
  /** Peak growth of the worker's heap (MiB) while `request` runs, sampled as fast as CDP answers. */
  const peakGrowth = async (request: () => Promise<unknown>) => {
    await session.send('HeapProfiler.collectGarbage');
    const before = await used();
    let peak = before;
    let n = 0;
    let finished = false;
    const running = request().finally(() => {
      finished = true;
    });
    while (!finished) {
      peak = Math.max(peak, await used());
      n++;
    }
    await running;
    return { growth: (peak - before) / MiB, before: before / MiB, samples: n };
  };
  const growth: number[] = [];
  const samples: number[] = [];
  let control = NaN;
  try {
    await session.send('HeapProfiler.enable');
    const first = await session.send<HeapUsage>('Runtime.getHeapUsage');
    if (first.backingStorageSize === undefined) log('  (this Chromium reports no backingStorageSize: ArrayBuffers are not counted)');
    for (let rep = 0; rep < 3; rep++) {
      let ms = 0;
      const g = await peakGrowth(async () => {
        ms = await call<number>(sw, 'getKey', 'sw', bucket, bigKey, bigSize);
      });
      growth.push(g.growth);
      samples.push(g.samples);
      log(`  GET 256 MiB in ${ms.toFixed(0)} ms: heap ${g.before.toFixed(1)} MiB before, peak +${g.growth.toFixed(2)} MiB (${g.samples} samples)`);
    }
    // Control: a 16 MiB PUT holds its body's chunks in the worker until new Blob(chunks), so the
    // same probe must see about 16 MiB there — or it would be blind, not the GET lean.
    await call(sw, 'makeBlob', 'mem-control', 16 * MiB, 0x16);
    control = (await peakGrowth(() => call(sw, 'put', 'sw', bucket, 'mem-control', 'mem-control', 1))).growth;
    await call(sw, 'dropBlob', 'mem-control');
    await call(sw, 'removeKeys', bucket, ['mem-control0']);
    log(`  control: a 16 MiB PUT grows the worker's heap by ${control.toFixed(1)} MiB at its peak`);
  } finally {
    await session.close();
  }
  return [row(7, 'Worker JS heap growth streaming a 256 MiB GET (vs bytes streamed)', median(growth), bigSize / MiB, 'MiB',
    { op: '<', value: 32, on: 'value' },
    `peak over ${spread(samples, 0)} CDP samples per GET; growth MiB ${spread(growth, 2)}; control: a 16 MiB PUT peaks at +${control.toFixed(1)} MiB`)];
}
