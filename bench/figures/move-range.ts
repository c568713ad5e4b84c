// Figure 5: Move only rewrites metadata, so moving 64 MiB should cost what moving 1 KiB does; a
// Range read slices the composed Blob, so the last 1 MiB of a 256 MiB multipart object should cost
// what a 1 MiB object does.
import { call } from '../lib/env.ts';
import { KiB, MiB, interleave, median, pairs, spread } from '../lib/stats.ts';
import { row, type Row } from '../lib/report.ts';
import type { Ctx } from '../lib/context.ts';

export async function moveRangeFigure({ env, log, bucket }: Ctx, bigKey: string, bigSize: number): Promise<Row[]> {
  const sw = env.pages.sw;
  const rows: Row[] = [];

  // Move: each object goes a → b, then b → a, and so on.
  await call(sw, 'makeBlob', 'mv-big', 64 * MiB, 0x640);
  await call(sw, 'makeBlob', 'mv-small', KiB, 0x641);
  await call(sw, 'put', 'sw', bucket, 'mv-big-a', 'mv-big', 1);
  await call(sw, 'put', 'sw', bucket, 'mv-small-a', 'mv-small', 1);
  await call(sw, 'dropBlob', 'mv-big');
  await call(sw, 'dropBlob', 'mv-small');
  const at = { big: 'a', small: 'a' };
  const move = await interleave(['big', 'small'] as const, 9, async (side) => {
    const from = at[side];
    const to = from === 'a' ? 'b' : 'a';
    at[side] = to;
    return call<number>(sw, 'move', bucket, `mv-${side}-${from}0`, `mv-${side}-${to}0`);
  }, { budgetMs: 20_000 });
  await call(sw, 'removeKeys', bucket, [`mv-big-${at.big}0`, `mv-small-${at.small}0`]);
  rows.push(row(5, 'Move 64 MiB vs Move 1 KiB', median(move.big), median(move.small), 'ms', { op: '<=', value: 2 },
    `ms 64 MiB ${spread(move.big, 2)}, 1 KiB ${spread(move.small, 2)}`, pairs(move.big, move.small)));
  log(`  Move: 64 MiB ${median(move.big).toFixed(2)} ms, 1 KiB ${median(move.small).toFixed(2)} ms`);

  // Range: last 1 MiB of the 256 MiB multipart object (figure 4's) vs bytes 0–1 MiB of a 1 MiB object.
  await call(sw, 'makeBlob', 'rg-small', MiB, 0x1001);
  await call(sw, 'put', 'sw', bucket, 'rg-small', 'rg-small', 1);
  await call(sw, 'dropBlob', 'rg-small');
  const range = await interleave(['big', 'small'] as const, 9, async (side) =>
    side === 'big'
      ? call<number>(sw, 'range', bucket, bigKey, bigSize - MiB, bigSize - 1)
      : call<number>(sw, 'range', bucket, 'rg-small0', 0, MiB - 1), { budgetMs: 20_000 });
  rows.push(row(5, 'Range: last 1 MiB of 256 MiB multipart vs 1 MiB object', median(range.big), median(range.small), 'ms',
    { op: '<=', value: 2 }, `ms 256 MiB ${spread(range.big, 2)}, 1 MiB ${spread(range.small, 2)}`, pairs(range.big, range.small)));
  log(`  Range: 256 MiB multipart ${median(range.big).toFixed(2)} ms, 1 MiB object ${median(range.small).toFixed(2)} ms`);
  return rows;
}
