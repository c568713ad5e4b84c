// Figure 8: the Node HTTP server. `swbucket serve --data DIR` (LMDB, every write synced before its
// answer) against the same server in memory and against s3rver with a data directory, each its own
// process, driven over loopback HTTP from this one: PUT and GET of 1 KiB (operations per second,
// 40 one after another per sample) and PUT of 1 MiB (ms); then the same under 16 connections at
// once (issue 13: the server at least as fast as s3rver for 1 KiB PUT and GET). Then, on a fresh
// --data server, four anonymous clients looping 1-byte range reads of a 256 MiB public object
// while another request is timed and the server's memory watched (issue 22: a range reads only
// the pieces it covers, off a server that stays responsive). No browser.
import http from 'node:http';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signHeaders } from '../../test/support/sign.ts';
import { freePort } from '../../test/support/ports.ts';
import { KiB, MiB, median, pairs, rounds, spread } from '../lib/stats.ts';
import { row, type Row } from '../lib/report.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BUCKET = 'bench';

export type Side = 'disk' | 'memory' | 's3';
const SIDES: readonly Side[] = ['disk', 'memory', 's3'];

export interface Server {
  port: number;
  signed: boolean;
  child: ChildProcess;
  /** One kept-alive connection, as a client would hold. */
  agent: http.Agent;
  /** 16 kept-alive connections, for requests in flight together. */
  pool: http.Agent;
}

/** Requests in flight together in the concurrent rows. */
const CONNECTIONS = 16;

/** s3rver in a process of its own, as the swbucket servers are, on `dir`. */
const S3RVER_MAIN = `
import S3rver from 's3rver';
const [dir, port] = process.argv.slice(1);
await new S3rver({ directory: dir, silent: true, address: '127.0.0.1', port: Number(port), configureBuckets: [{ name: '${BUCKET}', configs: [] }] }).run();
console.log('ready');
`;

/** One server as a process of its own on a free port, its bucket `bench` made (figures 8 and 12). */
export async function start(side: Side, dir: string): Promise<Server> {
  const port = await freePort();
  const args = side === 's3'
    ? ['--input-type=module', '-e', S3RVER_MAIN, join(dir, 's3rver'), String(port)]
    : ['--import', 'tsx', 'node/cli.ts', 'serve', '--port', String(port), ...(side === 'disk' ? ['--data', join(dir, 'swbucket')] : [])];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  // The swbucket servers log a line per request: read and dropped, as a terminal would show it.
  child.stdout!.on('data', (d: Buffer) => {
    if (out.length < 4000) out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const until = Date.now() + 30_000;
  while (!/listening on|ready/.test(out)) {
    if (child.exitCode !== null) throw new Error(`${side} server exited: ${out}`);
    if (Date.now() > until) throw new Error(`${side} server did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const server = {
    port, signed: side !== 's3', child,
    agent: new http.Agent({ keepAlive: true, maxSockets: 1 }),
    pool: new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS }),
  };
  if (side !== 's3') await request(server, 'PUT', `/${BUCKET}/`);
  return server;
}

/** One request, path style; signed as root for swbucket (s3rver takes unsigned ones). */
function request(s: Server, method: string, path: string, body?: Buffer, agent = s.agent): Promise<number> {
  const h = new Headers();
  if (body !== undefined || method === 'PUT') h.set('content-length', String(body?.length ?? 0));
  if (s.signed) signHeaders(method, `http://127.0.0.1:${s.port}${path}`, h);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: s.port, method, path, headers: Object.fromEntries(h), agent }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve(bytes) : reject(new Error(`${method} ${path}: ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** ms for `n` PUTs of `body`, one after another, to new keys. */
async function timePuts(s: Server, prefix: string, body: Buffer, n: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await request(s, 'PUT', `/${BUCKET}/${prefix}${i}`, body);
  return performance.now() - t0;
}

async function timeGets(s: Server, prefix: string, size: number, n: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    if ((await request(s, 'GET', `/${BUCKET}/${prefix}${i}`)) !== size) throw new Error('short GET');
  }
  return performance.now() - t0;
}

/** ms for `n` requests made by `one(i)`, CONNECTIONS of them in flight at a time. */
async function timeConcurrent(n: number, one: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (next < n) await one(next++);
  }));
  return performance.now() - t0;
}

/** A request's status and body text; signed as root unless `anon`. */
function call(s: Server, method: string, path: string, o: { body?: Buffer; headers?: Record<string, string>; anon?: boolean } = {}): Promise<{ status: number; text: string }> {
  const h = new Headers(o.headers);
  if (o.body !== undefined || method === 'PUT' || method === 'POST') h.set('content-length', String(o.body?.length ?? 0));
  if (!o.anon) signHeaders(method, `http://127.0.0.1:${s.port}${path}`, h);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: s.port, method, path, headers: Object.fromEntries(h), agent: s.pool }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('latin1')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

/**
 * The resident memory of a process, MiB: all of it (VmRSS), its own (RssAnon: heap, buffers) and
 * the file pages it maps (RssFile: here LMDB's data file, mapped read-only, which the kernel keeps
 * as page cache and may drop at any time).
 */
async function rssMiB(pid: number): Promise<{ rss: number; anon: number; file: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)![1]) / 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
}

/**
 * A 256 MiB public object on a fresh --data server (32 parts of 8 MiB, completed), then the
 * latency of an unrelated request (a GET of a missing key) alone, and while four anonymous
 * clients loop 1-byte range reads of the object; the server's VmRSS before and at its highest.
 */
async function rangeLoadRows(dir: string, log: (line: string) => void): Promise<Row[]> {
  const s = await start('disk', join(dir, 'ranges'));
  try {
    const part = Buffer.alloc(8 * MiB);
    const parts: string[] = [];
    const id = /<UploadId>([^<]+)</.exec((await call(s, 'POST', `/${BUCKET}/big?uploads`)).text)![1]!;
    for (let n = 1; n <= 32; n++) {
      part.fill(n);
      const r = await call(s, 'PUT', `/${BUCKET}/big?partNumber=${n}&uploadId=${id}`, { body: part });
      if (r.status !== 200) throw new Error(`part ${n}: ${r.status}`);
      parts.push(`<Part><PartNumber>${n}</PartNumber><ETag>"${createHash('md5').update(part).digest('hex')}"</ETag></Part>`);
    }
    const done = await call(s, 'POST', `/${BUCKET}/big?uploadId=${id}`, { body: Buffer.from(`<CompleteMultipartUpload>${parts.join('')}</CompleteMultipartUpload>`) });
    if (done.status !== 200) throw new Error(`complete: ${done.status} ${done.text}`);
    await call(s, 'PUT', `/${BUCKET}/?acl`, { headers: { 'x-svc-acl': 'public-read' } });
    const probe = async () => {
      const t0 = performance.now();
      const r = await call(s, 'GET', `/${BUCKET}/missing-${Math.random()}`, { anon: true });
      if (r.status !== 404 && r.status !== 403) throw new Error(`probe: ${r.status}`);
      return performance.now() - t0;
    };
    const idle: number[] = [];
    for (let i = 0; i < 40; i++) idle.push(await probe());
    const before = await rssMiB(s.child.pid!);
    const peak = { ...before };
    let stop = false;
    let ranges = 0;
    const clients = Array.from({ length: 4 }, async () => {
      while (!stop) {
        const at = Math.floor(Math.random() * 256 * MiB);
        const r = await call(s, 'GET', `/${BUCKET}/big`, { anon: true, headers: { range: `bytes=${at}-${at}` } });
        if (r.status !== 206 || r.text.length !== 1) throw new Error(`range: ${r.status}, ${r.text.length} bytes`);
        ranges++;
      }
    });
    const loaded: number[] = [];
    const until = performance.now() + 8000;
    while (performance.now() < until) {
      loaded.push(await probe());
      const now = await rssMiB(s.child.pid!);
      for (const k of ['rss', 'anon', 'file'] as const) peak[k] = Math.max(peak[k], now[k]);
      await new Promise((r) => setTimeout(r, 20));
    }
    stop = true;
    await Promise.all(clients);
    log(`  ranges: ${ranges} 1-byte ranges of 256 MiB in 8 s by 4 clients; probe median ${median(loaded).toFixed(1)} ms (idle ${median(idle).toFixed(1)} ms); RssAnon ${before.anon.toFixed(0)} → peak ${peak.anon.toFixed(0)} MiB (VmRSS ${before.rss.toFixed(0)} → ${peak.rss.toFixed(0)}, RssFile ${before.file.toFixed(0)} → ${peak.file.toFixed(0)})`);
    return [
      row(8, 'server --data: a 404 while 4 clients loop 1-byte ranges of a 256 MiB object vs idle', median(loaded), median(idle), 'ms',
        { op: '<', value: 50, on: 'value' }, `${ranges} ranges answered in 8 s; probe ms loaded ${spread(loaded, 1)}, idle ${spread(idle, 1)}`),
      row(8, 'server --data: memory growth during those range reads (RssAnon peak − before)', peak.anon - before.anon, 256, 'MiB',
        { op: '<', value: 64, on: 'value' }, `baseline: the object's size; RssAnon ${before.anon.toFixed(0)} MiB before, ${peak.anon.toFixed(0)} MiB at the highest of ${loaded.length} samples; the pages of LMDB's mapped data file the reads touched are counted apart (RssFile ${before.file.toFixed(0)} → ${peak.file.toFixed(0)} MiB: page cache, dropped by the kernel as it needs)`),
    ];
  } finally {
    s.agent.destroy();
    s.pool.destroy();
    s.child.kill('SIGKILL');
  }
}

export async function serverFigure(log: (line: string) => void): Promise<Row[]> {
  const dir = await mkdtemp(join(tmpdir(), 'swbucket-bench-server-'));
  const servers: Partial<Record<Side, Server>> = {};
  try {
    for (const side of SIDES) servers[side] = await start(side, dir);
    const small = Buffer.alloc(KiB, 0x5a);
    const big = Buffer.alloc(MiB, 0xa5);
    const N_SMALL = 40;
    const N_BIG = 4;
    const ms = Object.fromEntries(SIDES.map((s) => [s, { put: [] as number[], get: [] as number[], big: [] as number[] }])) as Record<Side, { put: number[]; get: number[]; big: number[] }>;
    await rounds(SIDES, 9, async (side, keep, rep) => {
      const s = servers[side]!;
      const put = await timePuts(s, `s${rep + 1}-`, small, N_SMALL);
      const get = await timeGets(s, `s${rep + 1}-`, KiB, N_SMALL);
      const bigPut = await timePuts(s, `b${rep + 1}-`, big, N_BIG);
      if (keep) {
        ms[side].put.push(put / N_SMALL);
        ms[side].get.push(get / N_SMALL);
        ms[side].big.push(bigPut / N_BIG);
      }
    }, { budgetMs: 60_000 });
    const m = (side: Side, what: 'put' | 'get' | 'big') => median(ms[side][what]);
    log('  ' + SIDES.map((s) => `${s}: PUT 1 KiB ${m(s, 'put').toFixed(2)} ms, GET 1 KiB ${m(s, 'get').toFixed(2)} ms, PUT 1 MiB ${m(s, 'big').toFixed(1)} ms`).join(' | '));

    const ops = (x: number) => 1000 / x;
    const out: Row[] = [];
    const against = { memory: 'the in-memory server', s3: 's3rver (data directory)' } as const;
    for (const base of ['memory', 's3'] as const) {
      const note = (what: 'put' | 'get' | 'big') => `ms/op --data ${spread(ms.disk[what], 2)}, ${base === 's3' ? 's3rver' : 'memory'} ${spread(ms[base][what], 2)}`;
      out.push(
        row(8, `server PUT 1 KiB: --data (LMDB) vs ${against[base]}`, ops(m('disk', 'put')), ops(m(base, 'put')), 'ops/s', null,
          `${N_SMALL} ops per sample; ${note('put')}`, pairs(ms[base].put, ms.disk.put)),
        row(8, `server GET 1 KiB: --data (LMDB) vs ${against[base]}`, ops(m('disk', 'get')), ops(m(base, 'get')), 'ops/s', null,
          `${N_SMALL} ops per sample; ${note('get')}`, pairs(ms[base].get, ms.disk.get)),
        row(8, `server PUT 1 MiB: --data (LMDB) vs ${against[base]}`, m('disk', 'big'), m(base, 'big'), 'ms', null,
          `${N_BIG} ops per sample; ${note('big')}`, pairs(ms.disk.big, ms[base].big)),
      );
    }

    // Under 16 connections: 320 PUTs and GETs of 1 KiB, 32 PUTs of 1 MiB per sample.
    const N_CSMALL = 320;
    const N_CBIG = 32;
    const cms = Object.fromEntries(SIDES.map((x) => [x, { put: [] as number[], get: [] as number[], big: [] as number[] }])) as Record<Side, { put: number[]; get: number[]; big: number[] }>;
    await rounds(SIDES, 7, async (side, keep, rep) => {
      const s = servers[side]!;
      const put = await timeConcurrent(N_CSMALL, (i) => request(s, 'PUT', `/${BUCKET}/c${rep + 1}-${i}`, small, s.pool));
      const get = await timeConcurrent(N_CSMALL, async (i) => {
        if ((await request(s, 'GET', `/${BUCKET}/c${rep + 1}-${i}`, undefined, s.pool)) !== KiB) throw new Error('short GET');
      });
      const bigPut = await timeConcurrent(N_CBIG, (i) => request(s, 'PUT', `/${BUCKET}/cb${rep + 1}-${i}`, big, s.pool));
      if (keep) {
        cms[side].put.push(put / N_CSMALL);
        cms[side].get.push(get / N_CSMALL);
        cms[side].big.push(bigPut / N_CBIG);
      }
    }, { budgetMs: 60_000 });
    const c = (side: Side, what: 'put' | 'get' | 'big') => median(cms[side][what]);
    log(`  ${CONNECTIONS} connections: ` + SIDES.map((x) => `${x}: PUT 1 KiB ${ops(c(x, 'put')).toFixed(0)}/s, GET 1 KiB ${ops(c(x, 'get')).toFixed(0)}/s, PUT 1 MiB ${(c(x, 'big')).toFixed(2)} ms/op`).join(' | '));
    for (const side of ['memory', 'disk'] as const) {
      const label = side === 'memory' ? 'in memory' : '--data (LMDB)';
      const note = (what: 'put' | 'get' | 'big', per: number) => `${per} ops per sample; ms/op (wall ÷ ops) ${label} ${spread(cms[side][what], 3)}, s3rver ${spread(cms.s3[what], 3)}`;
      // The targets are for the default server (in memory); --data is reported beside it.
      const target = side === 'memory' ? { op: '>=' as const, value: 1 } : null;
      out.push(
        row(8, `server ${label}, ${CONNECTIONS} connections: PUT 1 KiB vs s3rver`, ops(c(side, 'put')), ops(c('s3', 'put')), 'ops/s', target,
          note('put', N_CSMALL), pairs(cms.s3.put, cms[side].put)),
        row(8, `server ${label}, ${CONNECTIONS} connections: GET 1 KiB vs s3rver`, ops(c(side, 'get')), ops(c('s3', 'get')), 'ops/s', target,
          note('get', N_CSMALL), pairs(cms.s3.get, cms[side].get)),
        row(8, `server ${label}, ${CONNECTIONS} connections: PUT 1 MiB vs s3rver`, c(side, 'big'), c('s3', 'big'), 'ms', null,
          note('big', N_CBIG), pairs(cms[side].big, cms.s3.big)),
      );
    }
    for (const s of Object.values(servers)) s.child.kill('SIGKILL');
    out.push(...(await rangeLoadRows(dir, log)));
    return out;
  } finally {
    for (const s of Object.values(servers)) {
      s.agent.destroy();
      s.pool.destroy();
      s.child.kill('SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
  }
}
