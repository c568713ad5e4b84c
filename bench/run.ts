// `npm run bench`: swbucket's benchmarks. Builds the site, starts the servers (the built site, the
// bench origin with the floor worker, s3rver) and one Chromium, runs every figure side by side
// with its baseline, prints a table, and writes bench/results.json and bench/RESULTS.md.
// Targets live here, never in the test suite. Exits 0 when it ran, whatever the figures say
// (`--strict`: 1 when a target is missed); 2 when it could not run.
//
//   npm run bench                      all figures
//   npm run bench -- --only 1,4,5      some figures (5 and 7 bring 4: they read its 256 MiB object);
//                                      printed only: the results files are rewritten by whole runs
//   npm run bench -- --only 8          the Node server alone: no build, no browser
//   npm run bench -- --only engines    figure 10 alone (also `--only 10`, or `npm run bench -- engines`):
//                                      each browser engine against its own storage floor
//   npm run bench -- --only s3         figures 11 and 12 (also `--only 11,12`, or `npm run bench -- s3`):
//                                      S3's dialect through the worker vs SVC's, and the server in S3's
//                                      dialect vs s3rver, the AWS SDK the client of both
//   npm run bench -- --only replica    figure 13 alone (also `--only 13`, or `npm run bench -- replica`):
//                                      a replica's push and pull against the AWS SDK moving the same
//                                      objects, and what a replica costs a local PUT's acknowledgement
//   npm run bench -- --strict          exit 1 on a missed target
//   npm run bench -- --out DIR         write results.json and RESULTS.md to DIR instead (with --only too)
//   npm run bench -- --no-diagnose     skip the request timelines traced at the end (evidence for RESULTS.md)
import { fileURLToPath } from 'node:url';
import { mkdir } from 'node:fs/promises';
import { startEnv, call, type Env } from './lib/env.ts';
import { formatTable, machine, writeResults, type Row } from './lib/report.ts';
import { explainMisses, METHOD_NOTES } from './lib/explain.ts';
import type { Ctx } from './lib/context.ts';
import { md5Figure } from './figures/md5.ts';
import { putGetFigures, type PutGetResult } from './figures/putget.ts';
import { multipartFigure } from './figures/multipart.ts';
import { moveRangeFigure } from './figures/move-range.ts';
import { smallObjectsFigure } from './figures/small.ts';
import { memoryFigure } from './figures/memory.ts';
import { serverFigure } from './figures/server.ts';
import { archiveFigure } from './figures/archive.ts';
import { closeEngines, enginesFigure, enginesMatrix, type EnginesResult } from './figures/engines.ts';
import { s3EdgeFigure, type S3EdgeResult } from './figures/s3-edge.ts';
import { s3ServerFigure } from './figures/s3-server.ts';
import { replicaFigure, type ReplicaResult } from './figures/replica.ts';
import { diagnose, type Diagnostics } from './lib/diagnose.ts';

const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s`;
const log = (line: string) => console.log(`[${elapsed()}] ${line}`);

const args = process.argv.slice(2);
const strict = args.includes('--strict');
/** Figures that have a name as well as a number: `--only engines`, or the name alone (`npm run bench -- engines`). */
const NAMED: Record<string, number[]> = { engines: [10], s3: [11, 12], replica: [13] };
const figuresOf = (s: string) => (Object.hasOwn(NAMED, s) ? NAMED[s]! : [Number(s)]);
const onlyArg = args[args.indexOf('--only') + 1];
const onlyList = [
  ...(args.includes('--only') && onlyArg ? onlyArg.split(',').flatMap(figuresOf) : []),
  ...args.filter((a) => Object.hasOwn(NAMED, a)).flatMap(figuresOf),
];
const unknown = [...(args.includes('--only') && onlyArg ? onlyArg.split(',') : [])].filter((x) => !figuresOf(x).every((n) => Number.isInteger(n) && n >= 1 && n <= 13));
if (unknown.length) {
  console.error(`bench: --only takes figure numbers (1–13) or names (${Object.keys(NAMED).join(', ')}), not ${unknown.join(', ')}`);
  process.exit(2);
}
const only = onlyList.length ? new Set(onlyList) : null;
const wants = (n: number) => !only || only.has(n) || (n === 4 && (only.has(5) || only.has(7))) || (n === 2 && only.has(3)) || (n === 3 && only.has(2));
/**
 * Figures 1–7, 9, 11 and 13 run in Chromium, 10 in every engine (Chromium is the run's own); 8 and
 * 12 (the Node server) need no browser.
 */
const wantsBrowser = [1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 13].some(wants);
/**
 * Figures 1–9 must finish in under 10 minutes (9.5, to leave time to close); figure 10 runs four
 * engines one after another, about 3 minutes on a quiet machine, and has 5 more of its own;
 * figures 11 and 12 (issue 24's S3 dialect, about 2 minutes together) have 2 more of their own;
 * figure 13 (replicas, about 6½–8½ minutes, more on a loaded machine) 12 more.
 */
const BUDGET_MS = (9.5 + (wants(10) ? 5 : 0) + (wants(11) || wants(12) ? 2 : 0) + (wants(13) ? 12 : 0)) * 60 * 1000;

// A run that hangs must not hold a shared machine: past the budget, close what was started (a few
// seconds at most) and stop.
let running: Env | undefined;
const watchdog = setTimeout(() => {
  console.error(`[${elapsed()}] bench: over the ${BUDGET_MS / 60000}-minute budget, stopping`);
  const closing = Promise.all([running?.close(), closeEngines()]);
  Promise.race([closing, new Promise((r) => setTimeout(r, 5000))]).finally(() => process.exit(2));
}, BUDGET_MS);
watchdog.unref();

async function main(): Promise<number> {
  let env: Env | undefined;
  const rows: Row[] = [];
  let putget: PutGetResult | undefined;
  try {
    if (wantsBrowser) {
      env = running = await startEnv(log);
      log(`Chromium ${env.chromiumVersion}; site ${env.site.url}, bench origin ${env.bench.url}, s3rver ${env.s3.url}`);
      await call(env.pages.sw, 'ensureBucket', 'sw', 'bench');
    }
    const ctx = (): Ctx => ({ env: env!, log, bucket: 'bench' });
    const figure = async <T>(n: number, title: string, run: () => Promise<T>, rowsOf: (r: T) => Row[]): Promise<T> => {
      log(`figure ${n}: ${title}`);
      const t0 = Date.now();
      const result = await run();
      const made = rowsOf(result);
      rows.push(...made);
      for (const r of made) {
        log(`  → ${r.name}: ratio ${r.ratio.toFixed(2)}${r.target ? ` (${r.target}: ${r.pass ? 'pass' : 'MISS'})` : ''}`);
      }
      log(`figure ${n} done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      return result;
    };

    if (wants(1)) await figure(1, 'MD5 engine vs node:crypto, 64 MiB', () => md5Figure(ctx()), (r) => r);
    if (wants(2)) {
      putget = await figure(2, 'PUT/GET vs floor worker, raw IndexedDB (and s3rver: figure 3)', () => putGetFigures(ctx()), (r) => [...r.rows2, ...r.rows3]);
    }
    let big: { bigKey: string; bigSize: number } | undefined;
    if (wants(4)) big = await figure(4, 'multipart: Complete, concurrent parts, small parts vs PUT, List Parts', () => multipartFigure(ctx()), (r) => r.rows);
    if (wants(5) && big) await figure(5, 'Move and Range', () => moveRangeFigure(ctx(), big.bigKey, big.bigSize), (r) => r);
    if (wants(6)) await figure(6, '1,000 small objects vs s3rver', () => smallObjectsFigure(ctx()), (r) => r);
    if (wants(7) && big) await figure(7, "worker heap during a 256 MiB GET and a 100 MiB PUT", () => memoryFigure(ctx(), big.bigKey, big.bigSize), (r) => r);
    if (wants(8)) await figure(8, 'the Node server: --data (LMDB) vs in memory vs s3rver, over HTTP', () => serverFigure(log), (r) => r);
    if (wants(9)) await figure(9, 'archives: export and import through the worker', () => archiveFigure(ctx()), (r) => r);
    let s3edge: S3EdgeResult | undefined;
    if (wants(11)) {
      s3edge = await figure(11, "S3's dialect through the worker (aws4fetch, the AWS SDK in the page) vs SVC's, 1 KiB and 1 MiB",
        () => s3EdgeFigure(ctx()), (r) => r.rows);
    }
    if (wants(12)) await figure(12, 'the Node server in S3\'s dialect vs s3rver, the AWS SDK in Node the client of both', () => s3ServerFigure(log), (r) => r);
    let replica: ReplicaResult | undefined;
    if (wants(13)) {
      replica = await figure(13, 'replicas: push and pull against the AWS SDK in the page, and a local PUT\'s acknowledgement with a replica paused or live',
        () => replicaFigure(ctx()), (r) => r.rows);
    }
    let engines: EnginesResult | undefined;
    if (wants(10)) {
      engines = await figure(10, 'engines: Chromium, Firefox, WebKit (ephemeral and on disk) against their own storage floor; pieces vs Blobs; memory of a 100 MiB PUT',
        () => enginesFigure(ctx()), (r) => r.rows);
      log('figure 10, swbucket\'s rate ÷ its engine\'s storage floor (higher is better; 1 = as fast as the floor):\n' + enginesMatrix(engines));
    }

    // Last: tracing rewires the worker's globals. Evidence for the explanations of missed targets.
    let diag: Diagnostics | undefined;
    if ([1, 2, 3, 4, 5, 6, 7, 9].some(wants) && !args.includes('--no-diagnose')) {
      log('diagnostics: request timelines inside the worker, IndexedDB durability');
      diag = await diagnose(ctx());
    }

    rows.sort((a, b) => a.figure - b.figure);
    console.log('\n' + formatTable(rows) + '\n');
    const m = machine(env?.chromiumVersion ?? 'not run', started);
    const missed = rows.filter((r) => r.pass === false);
    const outDir = args.includes('--out') ? args[args.indexOf('--out') + 1] : undefined;
    if (outDir) {
      // Anywhere else, any figures: e.g. `--only engines --out /tmp/engines` to read one figure's notes and explanations.
      await mkdir(outDir, { recursive: true });
      await writeResults(outDir, rows, m, explainMisses(rows, putget, diag, engines, s3edge, replica), METHOD_NOTES);
      log(`wrote ${outDir}/results.json and ${outDir}/RESULTS.md: ${rows.filter((r) => r.pass).length} targets met, ${missed.length} missed`);
    } else if (only) {
      // The results files describe one whole run; a few figures must not pass for all of them.
      log(`--only: bench/results.json and bench/RESULTS.md left as they are (a run without --only rewrites them; --out DIR writes them there); ${rows.filter((r) => r.pass).length} targets met, ${missed.length} missed`);
    } else {
      const dir = fileURLToPath(new URL('.', import.meta.url));
      await writeResults(dir, rows, m, explainMisses(rows, putget, diag, engines, s3edge, replica), METHOD_NOTES);
      log(`wrote bench/results.json and bench/RESULTS.md: ${rows.filter((r) => r.pass).length} targets met, ${missed.length} missed`);
    }
    for (const r of missed) log(`  MISS ${r.name}: ratio ${r.ratio.toFixed(2)}, target ${r.target}`);
    return strict && missed.length > 0 ? 1 : 0;
  } finally {
    await env?.close();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`[${elapsed()}] bench failed:`, e);
    process.exit(2);
  },
);
