// Figure 10 ("engines", `npm run bench -- --only engines`): what each browser engine costs.
//
// (a) In each engine — Chromium, Firefox ESR, WebKitGTK with ephemeral storage ('webkit', where
//     IndexedDB refuses Blobs and swbucket keeps bodies as pieces) and WebKitGTK with storage on
//     disk ('webkit-disk') — PUT and GET of 1 KiB, 1 MiB and 16 MiB objects through swbucket's
//     built worker (dist-site/sw.js, the built site's page and its typed client) against that same
//     engine's storage floor (bench/browser/storage-floor-sw.ts: one strict IndexedDB put of the
//     body, as a Blob, or as one ArrayBuffer where Blobs are refused). Same rounds, order rotated,
//     medians; rates (higher is better), ratio = swbucket's rate ÷ the floor's. In 'webkit' a third
//     side, the storage floor keeping 256 KiB pieces as swbucket must there, shows what the pieces
//     cost by themselves.
//     Chromium is the run's own (a persistent profile on disk, as figures 1–9); the others are
//     launched one at a time through test/browser/support/engines.ts.
// (b) In Chromium, bodies as 256 KiB pieces beside Blobs: the same built worker registered a second
//     time, on an origin of its own, with ?bodies=pieces. PUT and GET of 1 MiB and 16 MiB and a
//     2-byte range GET of a 16 MiB object; ratio = the pieces' rate ÷ the Blobs'.
// (c) Memory during a 100 MiB PUT (the largest one PUT may have), Firefox and Chromium: VmRSS of
//     every browser process sampled every 50 ms, for a body sent to a plain HTTP server from a page
//     no worker controls, for a body sent to a URL swbucket's worker answers without reading it (its
//     hello, /__swbucket), and for a real PUT through the typed client.
//
// Every time is taken inside the page with performance.now() (WebDriver's round trip in WebKit is a
// few ms per call and never counted).
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { launchEngine, type Engine, type EngineName, type EnginePage } from '../../test/browser/support/engines.ts';
import { playwrightEnginePage } from '../../test/browser/support/engines/chromium.ts';
import { startStaticServer } from '../../test/browser/support/static-server.ts';
import { bundle } from '../lib/env.ts';
import { KiB, MiB, median, pairs, rounds, sizeName, spread } from '../lib/stats.ts';
import { row, type Row, type Target } from '../lib/report.ts';
import { watchRss, type RssWatch } from '../lib/rss.ts';
import type { Ctx } from '../lib/context.ts';
import { limits } from '../../sw/core/limits.ts';

export const ENGINES: readonly EngineName[] = ['chromium', 'firefox', 'webkit', 'webkit-disk'];

/** Per size: operations timed in one sample, rounds kept, and a time budget for the size. */
const PLAN = [
  { size: KiB, batch: 20, reps: 9, budgetMs: 10_000 },
  { size: MiB, batch: 4, reps: 9, budgetMs: 10_000 },
  { size: 16 * MiB, batch: 1, reps: 7, budgetMs: 18_000 },
];
/** Engine by engine, swbucket's PUT and GET at half the rate of that engine's storage floor or better. */
const TARGET: Target = { op: '>=', value: 0.5 };

const PIECES_PLAN = [
  { size: MiB, batch: 4, reps: 9, budgetMs: 10_000 },
  { size: 16 * MiB, batch: 1, reps: 7, budgetMs: 18_000 },
];
/** The range of the pieces figure: the last byte of one 256 KiB piece and the first of the next. */
const RANGE = { size: 16 * MiB, start: 8 * MiB - 1, end: 8 * MiB, batch: 10, reps: 9 };

const MEM_SIZE = limits.putObjectBytes;
const MEM_REPS = 3;

/** swbucket, the storage floor, and (webkit) the storage floor keeping 256 KiB pieces. */
type Side = 'sw' | 'store' | 'pieces';
const FLOOR_FORM: Record<string, string> = { blob: 'Blobs', bytes: 'ArrayBuffers', pieces: '256 KiB pieces' };
export interface EngineTimes {
  name: EngineName;
  version: string;
  /** How swbucket's worker kept bodies there ('blobs' or 'pieces'), and the floor ('blob' or 'bytes'). */
  bodies: string;
  floorForm: string;
  /** The page's client signing a PUT (WebCrypto HMAC), ms; MD5 (the worker's own code, in a dedicated worker) in MiB/s. */
  signMs: number;
  md5MiBps: number;
  /** Per size, median ms per operation (`pieces` only where that floor ran). */
  medians: Record<number, Partial<Record<Side, { put: number; get: number }>> & Record<'sw' | 'store', { put: number; get: number }>>;
}

/** A body sent to a plain server from a page no worker controls; to swbucket's worker, unread; a swbucket PUT. */
type MemoryWhat = 'network' | 'unread' | 'put';
const MEMORY_WHATS: readonly MemoryWhat[] = ['network', 'unread', 'put'];

export interface MemoryCase {
  engine: 'firefox' | 'chromium';
  what: MemoryWhat;
  /** Per rep: growth in MiB (peak − before) per process kind (summed over its processes), and the whole. */
  reps: {
    ms: number;
    /** MiB: VmRSS peak − before and after − before, summed over the kind's processes; RssAnon and RssShmem peak − before. */
    byKind: Record<string, { peak: number; after: number; anon: number; shmem: number; processes: number }>;
    total: { peak: number; after: number };
  }[];
}

export interface EnginesResult {
  rows: Row[];
  engines: EngineTimes[];
  skipped: { name: EngineName; why: string }[];
  pieces?: Record<string, { blobs: number; pieces: number }>;
  memory: MemoryCase[];
}

/** The engines this figure has launched and not yet closed: a run stopped by its watchdog closes them (closeEngines). */
const launched = new Set<Engine>();

async function launch(name: EngineName): Promise<Engine> {
  const engine = await launchEngine(name);
  launched.add(engine);
  return engine;
}

async function close(engine: Engine | undefined): Promise<void> {
  if (!engine) return;
  launched.delete(engine);
  await engine.close().catch(() => {});
}

/** Closes whatever engine the figure has open (WebKit's driver and Xvfb would outlive this process otherwise). */
export async function closeEngines(): Promise<void> {
  await Promise.all([...launched].map((e) => close(e)));
}

/** window.__bench[name](...args) in an engine's page. */
function ecall<T>(page: EnginePage, name: string, ...args: unknown[]): Promise<T> {
  return page.evaluate((a: { n: string; args: unknown[] }) => (window as unknown as { __bench: Record<string, (...x: unknown[]) => unknown> }).__bench[a.n]!(...a.args) as T, { n: name, args });
}

/** The bench harness, as a script element (the same as Playwright's addScriptTag), unless already there. */
async function inject(page: EnginePage, harness: string): Promise<void> {
  await page.evaluate((src: string) => {
    if ((window as unknown as { __bench?: unknown }).__bench) return;
    const s = document.createElement('script');
    s.textContent = src;
    document.head.appendChild(s);
  }, harness);
}

async function openSite(page: EnginePage, url: string, harness: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(() => Boolean((window as unknown as { swbucket?: { client?: unknown } }).swbucket?.client), undefined, { timeout: 30_000 });
  await inject(page, harness);
}

async function openFloor(page: EnginePage, url: string, harness: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(() => (window as unknown as { floorReady?: unknown }).floorReady !== undefined && navigator.serviceWorker.controller !== null, undefined, { timeout: 30_000 });
  await inject(page, harness);
}

const rate = (size: number, ms: number) => (size >= MiB ? (size / MiB) / (ms / 1000) : 1000 / ms);
const unitOf = (size: number) => (size >= MiB ? 'MiB/s' : 'ops/s');

/** PUT then GET of `batch` keys per side and round, both sides in the same rounds; ms per operation. */
async function putGetRounds(
  pages: Record<string, EnginePage>, sides: readonly string[], bucketOf: (side: string) => string, kindOf: (side: string) => 'sw' | 'store',
  plan: { size: number; batch: number; reps: number; budgetMs: number }, tag: string,
): Promise<{ put: Record<string, number[]>; get: Record<string, number[]> }> {
  const { size, batch, reps, budgetMs } = plan;
  const blobId = `${tag}-${size}`;
  for (const s of sides) await ecall(pages[s]!, 'makeBlob', blobId, size, size & 0xffff);
  const put = Object.fromEntries(sides.map((s) => [s, [] as number[]]));
  const get = Object.fromEntries(sides.map((s) => [s, [] as number[]]));
  const prefix = `${tag}-${sizeName(size).replace(' ', '')}-`;
  await rounds(sides, reps, async (side, keep) => {
    const p = await ecall<number>(pages[side]!, 'put', kindOf(side), bucketOf(side), prefix, blobId, batch);
    const g = await ecall<number>(pages[side]!, 'get', kindOf(side), bucketOf(side), prefix, size, batch);
    if (keep) {
      put[side]!.push(p / batch);
      get[side]!.push(g / batch);
    }
  }, { budgetMs });
  for (const s of sides) await ecall(pages[s]!, 'dropBlob', blobId);
  return { put, get };
}

/** One engine: swbucket against the storage floor (and, when given, the floor keeping pieces), every size of PLAN. */
async function measureEngine(
  name: EngineName, version: string, site: EnginePage, floor: EnginePage, piecesFloor: EnginePage | null, bucket: string, log: Ctx['log'],
): Promise<{ times: EngineTimes; rows: Row[] }> {
  const { bodies } = await ecall<{ bodies: string | null }>(site, 'swInfo');
  const floorForm = await ecall<string>(floor, 'floorForm');
  if (piecesFloor && (await ecall<string>(piecesFloor, 'floorForm')) !== 'pieces') throw new Error('the storage floor at /storage-floor-pieces/ does not keep pieces');
  await ecall(site, 'ensureBucket', 'sw', bucket);
  log(`  ${version}: swbucket keeps bodies as ${bodies}, the storage floor as ${FLOOR_FORM[floorForm]}${piecesFloor ? ' (and a second floor as 256 KiB pieces)' : ''}`);
  const times: EngineTimes = { name, version, bodies: bodies ?? 'unknown', floorForm, signMs: NaN, md5MiBps: NaN, medians: {} };
  const rows: Row[] = [];
  const pages: Record<string, EnginePage> = { sw: site, store: floor, ...(piecesFloor ? { pieces: piecesFloor } : {}) };
  const sides = Object.keys(pages) as Side[];
  for (const plan of PLAN) {
    const { size, batch } = plan;
    const { put, get } = await putGetRounds(pages, sides, () => bucket, (s) => (s === 'sw' ? 'sw' : 'store'), plan, 'eng');
    const m = Object.fromEntries(sides.map((s) => [s, { put: median(put[s]!), get: median(get[s]!) }])) as EngineTimes['medians'][number];
    times.medians[size] = m;
    log(`  ${name} ${sizeName(size)}: ` + sides.map((s) => `${s === 'sw' ? 'swbucket' : s === 'store' ? 'floor' : 'pieces floor'} PUT ${m[s]!.put.toFixed(1)} ms GET ${m[s]!.get.toFixed(1)} ms`).join(' | '));
    for (const op of ['PUT', 'GET'] as const) {
      const xs = op === 'PUT' ? put : get;
      const key = op === 'PUT' ? 'put' : 'get';
      const common = `${version}; swbucket keeps ${bodies}; ${batch > 1 ? `${batch} ops per sample; ` : ''}ms/op swbucket ${spread(xs.sw!, 2)}`;
      rows.push(row(10, `${name}: ${op} ${sizeName(size)} vs its storage floor`, rate(size, m.sw[key]), rate(size, m.store[key]), unitOf(size), TARGET,
        `${common}, floor (${FLOOR_FORM[floorForm]}) ${spread(xs.store!, 2)}`, pairs(xs.store!, xs.sw!)));
      if (m.pieces) {
        rows.push(row(10, `${name}: ${op} ${sizeName(size)} vs a storage floor keeping 256 KiB pieces`, rate(size, m.sw[key]), rate(size, m.pieces[key]), unitOf(size), null,
          `${common}, floor keeping pieces ${spread(xs.pieces!, 2)}`, pairs(xs.pieces!, xs.sw!)));
      }
    }
  }
  // Two parts of swbucket's PUT the floor has none of, measured in this engine: the page's client
  // signing the request, and the worker hashing every byte for the ETag (its MD5 code in a dedicated
  // worker on the floor's origin, 64 KiB updates as a body arrives in; median of 3 over 16 MiB).
  times.signMs = await ecall<number>(site, 'signN', bucket, 'eng-sign', 50);
  const md5: number[] = [];
  for (let i = 0; i < 3; i++) md5.push((await ecall<{ ms: number }>(floor, 'md5', 16 * MiB, 1, 64 * KiB)).ms);
  times.md5MiBps = 16 / (median(md5) / 1000);
  log(`  ${name}: the client signs a PUT in ${times.signMs.toFixed(2)} ms; MD5 at ${times.md5MiBps.toFixed(0)} MiB/s`);
  return { times, rows };
}

/** Process kinds whose growth is reported in rows: the parent (browser) process and the content (renderer) processes. */
const MAIN_KIND = { firefox: 'parent', chromium: 'browser' } as const;
const isContent = (engine: 'firefox' | 'chromium', kind: string) =>
  engine === 'firefox' ? /Web Co|Web Content|Isolated/i.test(kind) : kind === 'renderer';

function summarise(engine: 'firefox' | 'chromium', w: RssWatch, ms: number): MemoryCase['reps'][number] {
  const byKind: MemoryCase['reps'][number]['byKind'] = {};
  for (const p of w.processes) {
    const k = (byKind[p.kind] ??= { peak: 0, after: 0, anon: 0, shmem: 0, processes: 0 });
    k.peak += (p.peak - p.before) / MiB;
    k.after += (p.after - p.before) / MiB;
    k.anon += (p.anon.peak - p.anon.before) / MiB;
    k.shmem += (p.shmem.peak - p.shmem.before) / MiB;
    k.processes++;
  }
  return { ms, byKind, total: { peak: (w.total.peak - w.total.before) / MiB, after: (w.total.after - w.total.before) / MiB } };
}

/**
 * A plain HTTP server for the memory figure: GET / is an empty page (no worker controls it), PUT /sink
 * reads the body to its end and answers 200.
 */
async function startSink(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.method === 'PUT') {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><meta charset="utf-8"><title>sink</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, 'localhost', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * The 100 MiB PUT three ways, rotated, MEM_REPS of each: to the sink from `plain` (a page no worker
 * controls), unread and real from `site` (the built site's page); RSS of the engine's processes.
 */
async function measureMemory(engine: 'firefox' | 'chromium', site: EnginePage, plain: EnginePage, sinkUrl: string, bucket: string, log: Ctx['log']): Promise<MemoryCase[]> {
  await ecall(site, 'ensureBucket', 'sw', bucket);
  await ecall(site, 'makeBlob', 'eng-mem', MEM_SIZE, 0x1010);
  await ecall(plain, 'makeBlob', 'eng-mem', MEM_SIZE, 0x1010);
  const cases = Object.fromEntries(MEMORY_WHATS.map((what) => [what, { engine, what, reps: [] } as MemoryCase])) as Record<MemoryWhat, MemoryCase>;
  const label = { network: 'body to a plain server, no worker', unread: 'body unread by the worker (PUT /__swbucket)', put: 'swbucket PUT' };
  try {
    await new Promise((r) => setTimeout(r, 2000)); // let the Blobs' making settle
    await rounds(MEMORY_WHATS, MEM_REPS, async (what) => {
      let ms = 0;
      const w = await watchRss(engine, async () => {
        ms = what === 'network' ? await ecall<number>(plain, 'putTo', `${sinkUrl}/sink`, 'eng-mem')
          : what === 'unread' ? await ecall<number>(site, 'putUnread', 'eng-mem')
            : await ecall<number>(site, 'put', 'sw', bucket, 'eng-mem-', 'eng-mem', 1);
      });
      if (what === 'put') await ecall(site, 'removeKeys', bucket, ['eng-mem-0']);
      const s = summarise(engine, w, ms);
      cases[what].reps.push(s);
      const main = s.byKind[MAIN_KIND[engine]];
      const content = Object.entries(s.byKind).filter(([k]) => isContent(engine, k)).reduce((a, [, v]) => a + v.peak, 0);
      log(`  ${engine} ${label[what]}, ${MEM_SIZE / MiB} MiB in ${ms.toFixed(0)} ms: `
        + `${MAIN_KIND[engine]} +${(main?.peak ?? NaN).toFixed(0)} MiB at peak (anon +${(main?.anon ?? NaN).toFixed(0)}, shmem +${(main?.shmem ?? NaN).toFixed(0)}; +${(main?.after ?? NaN).toFixed(0)} 1 s after), `
        + `content +${content.toFixed(0)} MiB, all +${s.total.peak.toFixed(0)} MiB (${w.samples} samples)`);
      await new Promise((r) => setTimeout(r, 500));
    }, { warmup: 0 });
  } finally {
    await ecall(site, 'dropBlob', 'eng-mem');
    await ecall(plain, 'dropBlob', 'eng-mem');
  }
  return MEMORY_WHATS.map((what) => cases[what]);
}

function memoryRows(c: MemoryCase): Row[] {
  const what = c.what === 'network' ? `a ${MEM_SIZE / MiB} MiB PUT to a plain server (no worker)`
    : c.what === 'unread' ? `a ${MEM_SIZE / MiB} MiB PUT body the worker does not read` : `a ${MEM_SIZE / MiB} MiB swbucket PUT`;
  const main = MAIN_KIND[c.engine];
  const kinds = [...new Set(c.reps.flatMap((r) => Object.keys(r.byKind)))];
  const contentOf = (r: MemoryCase['reps'][number]) => Object.entries(r.byKind).filter(([k]) => isContent(c.engine, k));
  const mainPeaks = c.reps.map((r) => r.byKind[main]?.peak ?? NaN);
  const contentPeaks = c.reps.map((r) => contentOf(r).reduce((a, [, v]) => a + v.peak, 0));
  const f0 = (x: number) => x.toFixed(0);
  const perKind = kinds.map((k) => `${k} ${c.reps.map((r) => (r.byKind[k] ? `+${f0(r.byKind[k].peak)}` : '–')).join('/')}`).join(', ');
  const parts = (k: string) => `RssAnon +${c.reps.map((r) => f0(r.byKind[k]?.anon ?? NaN)).join('/')}, RssShmem +${c.reps.map((r) => f0(r.byKind[k]?.shmem ?? NaN)).join('/')}, `
    + `VmRSS 1 s after +${c.reps.map((r) => f0(r.byKind[k]?.after ?? NaN)).join('/')}`;
  const how = {
    network: 'fetch() PUT of a Blob from a page no worker controls to a Node server that reads it and answers 200',
    unread: 'fetch() PUT of a Blob to /__swbucket on the site\'s origin, answered with the worker\'s hello, the body unread',
    put: 'window.swbucket.client.putObject(…, { checksum: false }) of a Blob',
  }[c.what];
  const common = `${how}; `
    + `baseline: MiB sent; VmRSS of every ${c.engine === 'firefox' ? 'Firefox' : 'Chromium'} process every 50 ms, peak − before, ${c.reps.length} reps (${c.reps.map((r) => `${f0(r.ms)} ms`).join(', ')}); `
    + `peak MiB per process kind, rep by rep: ${perKind}; ${main}: ${parts(main)}; all processes together +${c.reps.map((r) => f0(r.total.peak)).join('/')} at peak, +${c.reps.map((r) => f0(r.total.after)).join('/')} 1 s after`;
  const Engine = c.engine === 'firefox' ? 'Firefox' : 'Chromium';
  return [
    row(10, `${Engine} ${main} process RSS growth during ${what}`, median(mainPeaks), MEM_SIZE / MiB, 'MiB', null, common),
    row(10, `${Engine} ${c.engine === 'firefox' ? 'content' : 'renderer'} processes RSS growth during ${what}`, median(contentPeaks), MEM_SIZE / MiB, 'MiB', null, common),
  ];
}

export async function enginesFigure({ env, log, bucket }: Ctx): Promise<EnginesResult> {
  const harness = await bundle('harness.ts');
  // The MD5 worker on the storage floor's origin as well (it is on the bench origin for figure 1).
  env.storage.bodies.set('/md5-worker.js', await bundle('md5-worker.ts'));
  const rows: Row[] = [];
  const engines: EngineTimes[] = [];
  const skipped: EnginesResult['skipped'] = [];
  const memory: MemoryCase[] = [];
  const siteUrl = env.site.url + '/';
  const floorUrl = env.storage.url + '/storage-floor/index.html';

  for (const name of ENGINES) {
    const t0 = Date.now();
    if (name === 'chromium') {
      // The run's own Chromium: its profile on disk, its pages already open (figure 2's).
      const site = playwrightEnginePage(env.pages.sw);
      const floor = playwrightEnginePage(env.pages.store);
      const r = await measureEngine(name, `Chromium ${env.chromiumVersion}`, site, floor, null, bucket, log);
      engines.push(r.times);
      rows.push(...r.rows);
      log(`  chromium done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      continue;
    }
    let engine: Engine | undefined;
    try {
      engine = await launch(name);
      const site = await engine.newPage();
      await openSite(site, siteUrl, harness);
      const floor = await engine.newPage();
      await openFloor(floor, floorUrl, harness);
      // Where swbucket keeps pieces (IndexedDB refuses Blobs), a floor keeping pieces too.
      let piecesFloor: EnginePage | null = null;
      if ((await ecall<{ bodies: string | null }>(site, 'swInfo')).bodies === 'pieces') {
        piecesFloor = await engine.newPage();
        await openFloor(piecesFloor, env.storage.url + '/storage-floor-pieces/index.html', harness);
      }
      const r = await measureEngine(name, engine.version, site, floor, piecesFloor, bucket, log);
      engines.push(r.times);
      rows.push(...r.rows);
    } catch (e) {
      const why = (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
      log(`  ${name}: not measured: ${why}`);
      skipped.push({ name, why });
    } finally {
      await close(engine);
    }
    log(`  ${name} done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }

  // (b) Chromium: the same built worker with ?bodies=pieces on an origin of its own. It is served as
  // /sw-pieces.js (the bytes of dist-site/sw.js): the site's startService() leaves a worker whose
  // path is not its own sw.js in place, where it would register plain /sw.js over /sw.js?bodies=pieces.
  let pieces: EnginesResult['pieces'];
  {
    const t0 = Date.now();
    const origin = await startStaticServer(join(process.cwd(), 'dist-site'));
    const page = await env.context.newPage();
    try {
      origin.bodies.set('/sw-pieces.js', await readFile(join(process.cwd(), 'dist-site', 'sw.js')));
      origin.bodies.set('/pieces-start.html', `<!doctype html><meta charset="utf-8"><title>pieces</title><script>
        window.started = navigator.serviceWorker.register('/sw-pieces.js?bodies=pieces', { scope: '/' }).then(() =>
          navigator.serviceWorker.controller ? true
            : new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', () => resolve(true), { once: true })));
        window.started.then((v) => (window.ready = v));
      </script>`);
      const piecesPage = playwrightEnginePage(page);
      await piecesPage.goto(origin.url + '/pieces-start.html');
      await piecesPage.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true, undefined, { timeout: 30_000 });
      await openSite(piecesPage, origin.url + '/', harness);
      const blobsPage = playwrightEnginePage(env.pages.sw);
      const info = { blobs: await ecall<{ bodies: string; scriptUrl: string }>(blobsPage, 'swInfo'), pieces: await ecall<{ bodies: string; scriptUrl: string }>(piecesPage, 'swInfo') };
      if (info.blobs.bodies !== 'blobs' || info.pieces.bodies !== 'pieces') {
        throw new Error(`expected Blobs and pieces, the workers keep ${info.blobs.bodies} (${info.blobs.scriptUrl}) and ${info.pieces.bodies} (${info.pieces.scriptUrl})`);
      }
      log(`  Chromium, bodies as pieces (${new URL(info.pieces.scriptUrl).pathname}${new URL(info.pieces.scriptUrl).search}) beside Blobs (${new URL(info.blobs.scriptUrl).pathname})`);
      await ecall(piecesPage, 'ensureBucket', 'sw', bucket);
      const pages = { blobs: blobsPage, pieces: piecesPage };
      const sides = ['blobs', 'pieces'] as const;
      pieces = {};
      const note = (xs: Record<string, number[]>, batch: number) =>
        `Chromium ${env.chromiumVersion}, on disk; ${batch > 1 ? `${batch} ops per sample; ` : ''}ms/op pieces ${spread(xs.pieces!, 2)}, Blobs ${spread(xs.blobs!, 2)}`;
      for (const plan of PIECES_PLAN) {
        const { put, get } = await putGetRounds(pages, sides, () => bucket, () => 'sw', plan, 'pcs');
        for (const op of ['PUT', 'GET'] as const) {
          const xs = op === 'PUT' ? put : get;
          const m = { blobs: median(xs.blobs!), pieces: median(xs.pieces!) };
          pieces[`${op} ${sizeName(plan.size)}`] = m;
          log(`  pieces vs Blobs, ${op} ${sizeName(plan.size)}: ${m.pieces.toFixed(1)} ms vs ${m.blobs.toFixed(1)} ms`);
          rows.push(row(10, `Chromium, bodies as pieces vs Blobs: ${op} ${sizeName(plan.size)}`, rate(plan.size, m.pieces), rate(plan.size, m.blobs), unitOf(plan.size), null,
            note(xs, plan.batch), pairs(xs.blobs!, xs.pieces!)));
        }
      }
      // The range: one 16 MiB object on each side (not timed), then batches of 2-byte range GETs.
      for (const s of sides) {
        await ecall(pages[s], 'makeBlob', 'pcs-range', RANGE.size, 0x77);
        await ecall(pages[s], 'put', 'sw', bucket, 'pcs-range-', 'pcs-range', 1);
        await ecall(pages[s], 'dropBlob', 'pcs-range');
      }
      const ranged: Record<string, number[]> = { blobs: [], pieces: [] };
      await rounds(sides, RANGE.reps, async (s, keep) => {
        const ms = await ecall<number>(pages[s], 'rangeN', bucket, 'pcs-range-0', RANGE.start, RANGE.end, RANGE.batch);
        if (keep) ranged[s]!.push(ms / RANGE.batch);
      });
      const m = { blobs: median(ranged.blobs!), pieces: median(ranged.pieces!) };
      pieces['range'] = m;
      log(`  pieces vs Blobs, 2-byte range of 16 MiB: ${m.pieces.toFixed(2)} ms vs ${m.blobs.toFixed(2)} ms`);
      rows.push(row(10, 'Chromium, bodies as pieces vs Blobs: GET 2 bytes of a 16 MiB object', 1000 / m.pieces, 1000 / m.blobs, 'ops/s', null,
        `bytes ${RANGE.start}–${RANGE.end}: the last byte of one 256 KiB piece and the first of the next; ${note(ranged, RANGE.batch)}`, pairs(ranged.blobs!, ranged.pieces!)));
    } catch (e) {
      const why = (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
      log(`  pieces vs Blobs: not measured: ${why}`);
      skipped.push({ name: 'chromium', why: `pieces vs Blobs: ${why}` });
    } finally {
      await page.close().catch(() => {});
      await origin.close();
    }
    log(`  pieces vs Blobs done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }

  // (c) Memory during a 100 MiB PUT: Firefox in a launch of its own (nothing left over from above),
  // then the run's Chromium.
  {
    const t0 = Date.now();
    const sink = await startSink();
    let firefox: Engine | undefined;
    try {
      firefox = await launch('firefox');
      const page = await firefox.newPage();
      await openSite(page, siteUrl, harness);
      const plain = await firefox.newPage();
      await plain.goto(sink.url + '/');
      await inject(plain, harness);
      memory.push(...await measureMemory('firefox', page, plain, sink.url, bucket, log));
    } catch (e) {
      const why = (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
      log(`  Firefox memory: not measured: ${why}`);
      skipped.push({ name: 'firefox', why: `memory: ${why}` });
    } finally {
      await close(firefox);
    }
    const plainPage = await env.context.newPage();
    try {
      const plain = playwrightEnginePage(plainPage);
      await plain.goto(sink.url + '/');
      await inject(plain, harness);
      memory.push(...await measureMemory('chromium', playwrightEnginePage(env.pages.sw), plain, sink.url, bucket, log));
    } catch (e) {
      const why = (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
      log(`  Chromium memory: not measured: ${why}`);
      skipped.push({ name: 'chromium', why: `memory: ${why}` });
    } finally {
      await plainPage.close().catch(() => {});
      await sink.close();
    }
    for (const c of memory) rows.push(...memoryRows(c));
    log(`  memory done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }

  return { rows, engines, skipped, ...(pieces ? { pieces } : {}), memory };
}

/** The figure's matrix for the log and RESULTS.md: per engine and size, PUT and GET ratios against the floor. */
export function enginesMatrix(r: EnginesResult): string {
  const head = '| engine | bodies (swbucket / floor) | ' + PLAN.map((p) => `PUT ${sizeName(p.size)} | GET ${sizeName(p.size)}`).join(' | ') + ' |';
  const sep = '| --- | --- | ' + PLAN.map(() => '---: | ---:').join(' | ') + ' |';
  const lines = r.engines.map((e) => `| ${e.name} | ${e.bodies} / ${FLOOR_FORM[e.floorForm]} | `
    + PLAN.map((p) => {
      const m = e.medians[p.size]!;
      return `${(m.store.put / m.sw.put).toFixed(2)} | ${(m.store.get / m.sw.get).toFixed(2)}`;
    }).join(' | ') + ' |');
  return [head, sep, ...lines].join('\n');
}
