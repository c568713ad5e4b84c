// Figure 9: archives. Export and import throughput through the worker, each beside what the same
// bytes cost as plain requests in the same rounds: exporting 4 × 64 MiB objects into a Blob in the
// page vs GETting them one by one; importing that archive (conflict=overwrite, every object's MD5
// checked) vs PUTting the objects one by one.
import { call } from '../lib/env.ts';
import { MiB, interleave, median, pairs, spread } from '../lib/stats.ts';
import { row, type Row } from '../lib/report.ts';
import type { Ctx } from '../lib/context.ts';

const OBJECTS = 4;
const SIZE = 64 * MiB;
const SMALL_COUNT = 2000;
const SMALL_SIZE = 1024;

export async function archiveFigure({ env, log }: Ctx): Promise<Row[]> {
  const sw = env.pages.sw;
  const bucket = 'bench-archive';
  await call(sw, 'ensureBucket', 'sw', bucket);
  await call(sw, 'makeBlob', 'ar-body', SIZE, 0xa9);
  await call(sw, 'put', 'sw', bucket, 'ar-', 'ar-body', OBJECTS);
  const total = OBJECTS * SIZE;
  const mibs = (ms: number) => total / MiB / (ms / 1000);

  const exp = await interleave(['export', 'get'] as const, 5, async (side) => {
    if (side === 'get') return mibs(await call<number>(sw, 'get', 'sw', bucket, 'ar-', SIZE, OBJECTS));
    const r = await call<{ ms: number; bytes: number; objectBytes: number }>(sw, 'exportBucket', bucket, 'ar-archive');
    if (r.objectBytes !== total) throw new Error(`export held ${r.objectBytes} object bytes, expected ${total}`);
    return mibs(r.ms);
  }, { budgetMs: 60_000 });
  log(`  export ${median(exp.export).toFixed(0)} MiB/s, GET ${median(exp.get).toFixed(0)} MiB/s`);

  const imp = await interleave(['import', 'unhashed', 'put'] as const, 5, async (side) => {
    if (side === 'put') return mibs(await call<number>(sw, 'put', 'sw', bucket, 'ar-', 'ar-body', OBJECTS));
    return mibs(await call<number>(sw, 'importBlob', 'ar-archive', total, side === 'import'));
  }, { budgetMs: 120_000 });
  log(`  import ${median(imp.import).toFixed(0)} MiB/s, without Content-MD5 ${median(imp.unhashed).toFixed(0)} MiB/s, PUT ${median(imp.put).toFixed(0)} MiB/s`);

  await call(sw, 'dropBlob', 'ar-body');
  await call(sw, 'dropBlob', 'ar-archive');
  await call(sw, 'removeKeys', bucket, Array.from({ length: OBJECTS }, (_, i) => `ar-${i}`));

  // Many small objects: an import's commit is one step that reads each object's slot, so its cost
  // per object is what this row shows, beside PUTs of the same objects, 8 at a time.
  const small = 'bench-archive-small';
  await call(sw, 'ensureBucket', 'sw', small);
  await call(sw, 'makeBlob', 'ar-small', SMALL_SIZE, 0xb1);
  await call(sw, 'put', 'sw', small, 's-', 'ar-small', SMALL_COUNT, 8);
  await call(sw, 'exportBucket', small, 'ar-small-archive');
  const perSecond = (ms: number) => SMALL_COUNT / (ms / 1000);
  const many = await interleave(['import', 'put'] as const, 5, async (side) => {
    if (side === 'put') return perSecond(await call<number>(sw, 'put', 'sw', small, 's-', 'ar-small', SMALL_COUNT, 8));
    return perSecond(await call<number>(sw, 'importBlob', 'ar-small-archive', SMALL_COUNT * SMALL_SIZE));
  }, { budgetMs: 90_000 });
  log(`  import ${median(many.import).toFixed(0)} objects/s, PUT ${median(many.put).toFixed(0)} objects/s`);
  await call(sw, 'dropBlob', 'ar-small');
  await call(sw, 'dropBlob', 'ar-small-archive');
  for (let at = 0; at < SMALL_COUNT; at += 1000) {
    await call(sw, 'removeKeys', small, Array.from({ length: Math.min(1000, SMALL_COUNT - at) }, (_, i) => `s-${at + i}`));
  }
  return [
    row(9, 'Export 256 MiB (4 × 64 MiB) into the page vs GET of the same objects', median(exp.export), median(exp.get), 'MiB/s', null,
      `MiB/s export ${spread(exp.export, 0)}, GET ${spread(exp.get, 0)}`, pairs(exp.export, exp.get)),
    row(9, "Import that archive (overwrite, each object's MD5 checked; the client's Content-MD5 of the whole) vs PUT of the same objects", median(imp.import), median(imp.put), 'MiB/s', null,
      `MiB/s import ${spread(imp.import, 0)}, PUT ${spread(imp.put, 0)}`, pairs(imp.import, imp.put)),
    row(9, 'The same import without Content-MD5 (checksum: false) vs PUT of the same objects', median(imp.unhashed), median(imp.put), 'MiB/s', null,
      `MiB/s import ${spread(imp.unhashed, 0)}, PUT ${spread(imp.put, 0)}`, pairs(imp.unhashed, imp.put)),
    row(9, `Import ${SMALL_COUNT.toLocaleString('en')} × 1 KiB objects (overwrite, one commit) vs PUT of the same, 8 at a time`, median(many.import), median(many.put), 'objects/s', null,
      `objects/s import ${spread(many.import, 0)}, PUT ${spread(many.put, 0)}`, pairs(many.import, many.put)),
  ];
}
