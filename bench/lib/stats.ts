// Medians and side-by-side sampling. Every figure compares two (or more) sides measured in the
// same run, alternating which goes first, so a noisy neighbour on this shared machine hits both.

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export interface RoundOptions {
  /** Rounds run first and not kept (JIT, caches, the first IndexedDB file of a size). Default 1. */
  warmup?: number;
  /**
   * Stop starting new rounds after this long, once `minReps` rounds are kept: on a loaded machine
   * a figure gets fewer samples instead of pushing the whole run past its 10-minute budget.
   */
  budgetMs?: number;
  minReps?: number;
}

/**
 * Runs up to `reps` rounds; each round runs every side once, the order rotated each round (A B C,
 * B C A, C A B, …) so that no side always runs first or right after another. `run` is told whether
 * this round is kept. Returns the number of rounds kept.
 */
export async function rounds<S extends string>(
  sides: readonly S[],
  reps: number,
  run: (side: S, keep: boolean, rep: number) => Promise<void>,
  o: RoundOptions = {},
): Promise<number> {
  const warmup = o.warmup ?? 1;
  const t0 = Date.now();
  let kept = 0;
  for (let rep = -warmup; rep < reps; rep++) {
    if (rep >= (o.minReps ?? 3) && o.budgetMs !== undefined && Date.now() - t0 > o.budgetMs) break;
    const shift = ((rep % sides.length) + sides.length) % sides.length;
    for (const side of [...sides.slice(shift), ...sides.slice(0, shift)]) await run(side, rep >= 0, rep);
    if (rep >= 0) kept++;
  }
  return kept;
}

/** rounds() for one number per side and round: the kept samples of each side, index i from round i. */
export async function interleave<S extends string>(
  sides: readonly S[],
  reps: number,
  run: (side: S, rep: number) => Promise<number>,
  o: RoundOptions = {},
): Promise<Record<S, number[]>> {
  const out = Object.fromEntries(sides.map((s) => [s, [] as number[]])) as Record<S, number[]>;
  await rounds(sides, reps, async (side, keep, rep) => {
    const v = await run(side, rep);
    if (keep) out[side].push(v);
  }, o);
  return out;
}

/** The per-round ratios a[i] / b[i] (both sides of round i ran back to back): their spread is the figure's uncertainty. */
export function pairs(a: number[], b: number[]): number[] {
  return a.map((x, i) => x / b[i]!).filter(Number.isFinite);
}

/** A sample set in a note: "n=7, 12.1–15.3". */
export function spread(xs: number[], digits = 1): string {
  return `n=${xs.length}, ${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
}

export const KiB = 1024;
export const MiB = 1024 * KiB;

export function sizeName(bytes: number): string {
  return bytes >= MiB ? `${bytes / MiB} MiB` : `${bytes / KiB} KiB`;
}
