// The rows every figure produces, the table printed at the end, bench/results.json and bench/RESULTS.md.
import { execFileSync } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { median } from './stats.ts';

export interface Target {
  /** How the ratio must compare with `value`, e.g. { op: '<=', value: 1.5 }. */
  op: '<=' | '>=' | '<' | '>';
  value: number;
  /** Applied to the figure's value instead of the ratio (the memory target is absolute). */
  on?: 'value';
}

export interface Row {
  figure: number;
  name: string;
  /** swbucket's figure (median), in `unit`. */
  value: number;
  /** The baseline's figure (median), in `unit`, measured side by side in the same run. */
  baseline: number;
  /** value / baseline: the ratio of the medians. */
  ratio: number;
  /** Human-readable target ("ratio <= 1.5"), or null when the figure is reported only. */
  target: string | null;
  /** null when the figure has no target. */
  pass: boolean | null;
  unit: string;
  notes: string;
}

export function row(
  figure: number, name: string, value: number, baseline: number, unit: string, target: Target | null, notes: string,
  roundRatios?: number[],
): Row {
  const ratio = value / baseline;
  // The ratios of single rounds (both sides back to back) show how far one round can stray.
  if (roundRatios && roundRatios.length > 1) {
    notes += `; per-round ratios ${Math.min(...roundRatios).toFixed(2)}–${Math.max(...roundRatios).toFixed(2)} (median ${median(roundRatios).toFixed(2)})`;
  }
  const subject = target?.on === 'value' ? value : ratio;
  const pass = target === null ? null
    : target.op === '<=' ? subject <= target.value
      : target.op === '>=' ? subject >= target.value
        : target.op === '<' ? subject < target.value
          : subject > target.value;
  const text = target === null ? null : `${target.on === 'value' ? 'value' : 'ratio'} ${target.op} ${target.value}`;
  return { figure, name, value, baseline, ratio, target: text, pass, unit, notes };
}

const num = (x: number) => (Number.isFinite(x) ? (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2)) : String(x));
const verdict = (r: Row) => (r.pass === null ? '—' : r.pass ? 'pass' : 'MISS');

export function formatTable(rows: Row[]): string {
  const head = ['fig', 'figure', 'swbucket', 'baseline', 'unit', 'ratio', 'target', 'result'];
  const body = rows.map((r) => [String(r.figure), r.name, num(r.value), num(r.baseline), r.unit, num(r.ratio), r.target ?? '', verdict(r)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 2 && i <= 5 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'sw', 'src'], { encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head} with uncommitted changes in sw/ or src/` : head;
  } catch {
    return 'unknown';
  }
}

export interface Machine {
  nproc: number;
  cpu: string;
  memoryGiB: number;
  chromium: string;
  node: string;
  date: string;
  durationS: number;
  /** The commit measured, and whether sw/ or src/ had changes not committed. */
  commit: string;
  /** The 1-minute load average at the end of the run (what else the shared machine was doing). */
  load: number;
}

export function machine(chromium: string, started: number): Machine {
  return {
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    chromium,
    node: process.version,
    date: new Date().toISOString(),
    durationS: Math.round((Date.now() - started) / 1000),
    commit: gitCommit(),
    load: loadavg()[0] ?? NaN,
  };
}

/**
 * Runs of an earlier version kept in bench/earlier/*.json (the same figures, measured the same way
 * on this machine), each shown beside this run: a change's rows side by side with the old numbers.
 */
async function earlierSections(rows: Row[]): Promise<string[]> {
  const dir = new URL('../earlier/', import.meta.url);
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.json')).sort();
  const out: string[] = [];
  for (const file of files) {
    const e = JSON.parse(await readFile(new URL(file, dir), 'utf8')) as { label: string; commit: string; date: string; runs: Row[][] };
    const ratios = (name: string) => e.runs.map((run) => run.find((r) => r.name === name)).filter((r) => r !== undefined).map((r) => num(r.ratio));
    const shared = rows.filter((r) => ratios(r.name).length > 0);
    if (shared.length === 0) continue;
    out.push(
      `## Beside ${e.label}`, '',
      `Ratios of ${e.runs.length} runs at ${e.commit} (${e.date}, this machine; bench/earlier/${file}) and of this run. Each ratio is against its own baseline measured in the same run, so ratios compare across runs; the spread between runs of one version is the noise.`, '',
      '| fig | figure | earlier ratios | this run | unit |', '| --- | --- | ---: | ---: | --- |',
      ...shared.map((r) => `| ${r.figure} | ${r.name} | ${ratios(r.name).join(', ')} | ${num(r.ratio)} | ${r.unit} |`), '',
    );
  }
  return out;
}

export async function writeResults(
  dir: string, rows: Row[], m: Machine, explanations: { misses: string[]; observations: string[] }, methodNotes: string[],
): Promise<void> {
  await writeFile(`${dir}/results.json`, JSON.stringify(rows, null, 2) + '\n');
  const mdRows = rows.map((r) =>
    `| ${r.figure} | ${r.name} | ${num(r.value)} | ${num(r.baseline)} | ${r.unit} | ${num(r.ratio)} | ${r.target ?? '—'} | ${verdict(r)} | ${r.notes} |`);
  const missed = rows.filter((r) => r.pass === false);
  const md = [
    '# swbucket benchmarks',
    '',
    'Written by `npm run bench` (bench/run.ts). Every figure is a ratio against a baseline measured side by side',
    'in the same run: medians of repeated, interleaved runs. Targets live here, never in the test suite.',
    '',
    `- date: ${m.date}; swbucket at ${m.commit}`,
    `- machine: ${m.nproc} cores (${m.cpu}), ${m.memoryGiB} GiB, shared and noisy (load average ${m.load.toFixed(1)} at the end of the run)`,
    `- browser: Chromium ${m.chromium} (headless, persistent on-disk profile); Node ${m.node}`,
    `- run time: ${m.durationS} s`,
    `- result: ${rows.filter((r) => r.pass === true).length} targets met, ${missed.length} missed, ${rows.filter((r) => r.pass === null).length} figures reported without a target`,
    '',
    '| fig | figure | swbucket | baseline | unit | ratio | target | result | notes |',
    '| --- | --- | ---: | ---: | --- | ---: | --- | --- | --- |',
    ...mdRows,
    '',
    '## How it is measured',
    '',
    ...methodNotes.map((n) => `- ${n}`),
    '',
    '## Missed targets: what bounds them',
    '',
    ...(missed.length === 0 ? ['Every target was met in this run.'] : ['Each missed target with its cause, measured in this run.', '', ...explanations.misses]),
    '',
    ...(explanations.observations.length ? ['## Also seen', '', ...explanations.observations, ''] : []),
    ...(await earlierSections(rows)),
  ].join('\n');
  await writeFile(`${dir}/RESULTS.md`, md);
}
