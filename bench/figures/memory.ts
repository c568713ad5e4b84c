// Figure 7: the worker's JS heap while it streams a 256 MiB GET (the multipart object of figure
// 4) and while it takes a PUT of the largest size one PUT may have (100 MiB, sw/core/limits.ts: the
// issue's 256 MiB is over that limit). Through CDP on the service worker: garbage-collect, read the
// heap, then sample it as fast as CDP answers while the page runs the request, and take the peak
// growth. ArrayBuffer backing stores count too (backingStorageSize, where Chromium reports it):
// bytes held in Uint8Arrays live outside the JS heap proper.
import { call } from '../lib/env.ts';
import { attachToServiceWorker } from '../lib/cdp.ts';
import { MiB, median, spread } from '../lib/stats.ts';
import { row, type Row } from '../lib/report.ts';
import type { Ctx } from '../lib/context.ts';
import { limits } from '../../sw/core/limits.ts';

interface HeapUsage {
  usedSize: number;
  totalSize: number;
  backingStorageSize?: number;
}

const PUT_SIZE = limits.putObjectBytes;
const PROBE_SIZE = 16 * MiB;

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
  /** Runs `expression` in the worker (a number back, never an object: a remote object handle would keep what it refers to alive). */
  const evaluate = async (expression: string) => {
    const r = await session.send<{ result: { value?: unknown }; exceptionDetails?: { text: string } }>('Runtime.evaluate', { expression, returnByValue: true });
    if (r.exceptionDetails) throw new Error(`worker: ${expression}: ${r.exceptionDetails.text}`);
    return r.result.value;
  };
  const get = { growth: [] as number[], samples: [] as number[] };
  const put = { growth: [] as number[], samples: [] as number[] };
  let control = NaN;
  let refused = '';
  let refusedGrowth = NaN;
  try {
    await session.send('HeapProfiler.enable');
    const first = await session.send<HeapUsage>('Runtime.getHeapUsage');
    if (first.backingStorageSize === undefined) log('  (this Chromium reports no backingStorageSize: ArrayBuffers are not counted)');
    for (let rep = 0; rep < 3; rep++) {
      let ms = 0;
      const g = await peakGrowth(async () => {
        ms = await call<number>(sw, 'getKey', 'sw', bucket, bigKey, bigSize);
      });
      get.growth.push(g.growth);
      get.samples.push(g.samples);
      log(`  GET 256 MiB in ${ms.toFixed(0)} ms: heap ${g.before.toFixed(1)} MiB before, peak +${g.growth.toFixed(2)} MiB (${g.samples} samples)`);
    }

    // PUT of PUT_SIZE: a Blob made in the page before measuring, sent through the page's typed client
    // (key mem-put-0), removed after each rep (not measured). A PUT the worker refuses (e.g. over
    // its size limit) gives no figure: the row says why, with the growth seen until the refusal.
    await call(sw, 'makeBlob', 'mem-put', PUT_SIZE, 0x257);
    try {
      for (let rep = 0; rep < 3 && !refused; rep++) {
        let ms = 0;
        const g = await peakGrowth(async () => {
          try {
            ms = await call<number>(sw, 'put', 'sw', bucket, 'mem-put-', 'mem-put', 1);
          } catch (e) {
            refused = (e instanceof Error ? e.message : String(e)).split('\n')[0]!.replace(/^page\.evaluate: /, '');
          }
        });
        await call(sw, 'removeKeys', bucket, ['mem-put-0']);
        if (refused) {
          refusedGrowth = g.growth;
          log(`  PUT ${PUT_SIZE / MiB} MiB refused (${refused}): heap ${g.before.toFixed(1)} MiB before, peak +${g.growth.toFixed(2)} MiB until then (${g.samples} samples)`);
          break;
        }
        put.growth.push(g.growth);
        put.samples.push(g.samples);
        log(`  PUT ${PUT_SIZE / MiB} MiB in ${ms.toFixed(0)} ms: heap ${g.before.toFixed(1)} MiB before, peak +${g.growth.toFixed(2)} MiB (${g.samples} samples)`);
      }
    } finally {
      await call(sw, 'dropBlob', 'mem-put');
    }

    // Control: 16 MiB held by the worker itself (a Uint8Array on its global, made through the same
    // CDP session) must show as about 16 MiB growth on the same probe, or the probe is blind (e.g.
    // ArrayBuffers not counted) and a small growth above proves nothing.
    try {
      control = (await peakGrowth(() => evaluate(`(globalThis.__swbProbe = new Uint8Array(${PROBE_SIZE}).fill(1)).length`))).growth;
    } finally {
      await evaluate('delete globalThis.__swbProbe');
      await session.send('HeapProfiler.collectGarbage');
    }
    log(`  control: a 16 MiB Uint8Array made in the worker grows its heap by ${control.toFixed(1)} MiB at its peak`);
  } finally {
    await session.close();
  }
  const controlNote = `control: a 16 MiB Uint8Array made in the worker (Runtime.evaluate) peaks at +${control.toFixed(1)} MiB`;
  return [
    row(7, 'Worker JS heap growth streaming a 256 MiB GET (vs bytes streamed)', median(get.growth), bigSize / MiB, 'MiB',
      { op: '<', value: 32, on: 'value' },
      `peak over ${spread(get.samples, 0)} CDP samples per GET; growth MiB ${spread(get.growth, 2)}; ${controlNote}`),
    row(7, `Worker JS heap growth during a ${PUT_SIZE / MiB} MiB PUT (the largest allowed)`, refused ? NaN : median(put.growth), PUT_SIZE / MiB, 'MiB',
      { op: '<', value: 32, on: 'value' },
      refused
        ? `no figure: the worker refused the PUT (${refused}), after a peak growth of +${refusedGrowth.toFixed(1)} MiB; ${controlNote}`
        : `baseline: MiB sent; peak over ${spread(put.samples, 0)} CDP samples per PUT; growth MiB ${spread(put.growth, 2)}; ${controlNote}`),
  ];
}
