// The attack (issue 12, "quota before the body"): an account with a tiny quota sends huge bodies,
// to make the service hold them before it refuses. What must hold (contract §2; docs/protocol.md,
// "Accounts"): a PUT or Upload Part whose declared Content-Length would pass the owner's quota is
// 403 QuotaExceeded before any of its body is read; in the browser's mode (contentLength: 'body',
// no Content-Length) the body is read as it streams and refused as soon as the bytes read pass
// what the quota leaves, never buffered whole.
//
// - the server in a child process (swbucket serve), whose memory is sampled: 8 concurrent PUTs
//   declaring 100 MiB each over a 1,000-byte quota;
// - the handler directly with Content-Length: answered without a single read from the body;
// - the handler in the browser's mode: an endless body is cancelled after about the quota.
import { describe, it, expect, afterAll } from 'vitest';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { unwrap } from 'idb';
import { newService, send, errorCode, type SendOptions } from '../support/service.ts';
import { signHeaders, ROOT } from '../support/sign.ts';
import { accountXml, dbState, orphans } from './identity-helpers.ts';
import { freePort } from '../support/ports.ts';

type Creds = { accessKeyId: string; secret: string };
const QUOTA: Creds = { accessKeyId: 'tiny', secret: 'tiny-secret' };
const MiB = 1024 * 1024;
const ROOT_DIR = new URL('../../', import.meta.url).pathname;
const SVC = 'http://svc.localhost';
const tag = (text: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------------------------------------
// the server in a child process


/** Resident memory of a process, in bytes (Linux). */
function rss(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) * 1024;
}

interface Answer {
  status: number;
  text: string;
  /** Body bytes the client had sent when the answer came. */
  sentBeforeAnswer: number;
}

/**
 * A signed PUT declaring `length` bytes: the headers go at once, the body only if no answer came
 * within `patienceMs` (then streamed from one shared buffer, so this process's memory stays flat).
 */
function declaredPut(port: number, path: string, creds: Creds, length: number, patienceMs: number): Promise<Answer> {
  const url = `http://127.0.0.1:${port}${path}`;
  const headers = Object.fromEntries(signHeaders('PUT', url, new Headers({ 'content-length': String(length) }), creds));
  const chunk = Buffer.alloc(MiB, 'q');
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'PUT', path, headers, agent: false });
    let sent = 0;
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const at = sent;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), sentBeforeAnswer: at });
      });
      res.on('error', reject);
    });
    req.on('error', (e) => {
      if (!answered) reject(e);
    });
    req.flushHeaders();
    setTimeout(async () => {
      while (!answered && sent < length) {
        const n = Math.min(chunk.length, length - sent);
        sent += n;
        if (!req.write(chunk.subarray(0, n))) {
          await new Promise<void>((r) => {
            req.once('drain', r);
            req.once('response', () => r());
            req.once('close', r);
          });
        }
      }
      if (!answered) req.end();
    }, patienceMs);
  });
}

describe('the server process: 8 concurrent PUTs declaring 100 MiB over a 1,000-byte quota', () => {
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(5000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('every answer is 403 QuotaExceeded before any body byte is sent, and the server\'s memory grows by less than 64 MiB', { timeout: 120_000 }, async () => {
    const port = await freePort();
    child = spawn(process.execPath, ['--import', 'tsx', 'node/cli.ts', 'serve', '--port', String(port)], {
      cwd: ROOT_DIR,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d) => (output = (output + d).slice(-4000)));
    child.stderr!.on('data', (d) => (output = (output + d).slice(-4000)));
    const base = `http://127.0.0.1:${port}`;
    const call = async (method: string, path: string, creds: Creds, body?: string) => {
      const url = base + path;
      const init: RequestInit = { method, headers: signHeaders(method, url, new Headers(), creds) };
      if (body !== undefined) init.body = new TextEncoder().encode(body);
      const res = await fetch(url, init);
      return { status: res.status, text: await res.text() };
    };
    for (let tries = 0; ; tries++) {
      if (child.exitCode !== null) throw new Error(`the server exited: ${output}`);
      try {
        if ((await fetch(base + '/')).status === 403) break;
      } catch {
        // not listening yet
      }
      if (tries > 150) throw new Error(`the server did not answer: ${output}`);
      await sleep(100);
    }
    expect((await call('PUT', `/?account=${QUOTA.accessKeyId}`, ROOT, accountXml(QUOTA.secret, 1000))).status).toBe(200);
    expect((await call('PUT', '/tiny-bucket/', QUOTA)).status).toBe(200);
    // Warm up the refusal path, then take the resting memory.
    for (let i = 0; i < 3; i++) {
      const r = await declaredPut(port, `/tiny-bucket/warm-${i}`, QUOTA, 2000, 5000);
      expect(r.status, r.text).toBe(403);
    }
    const pid = child.pid!;
    const rest: number[] = [];
    for (let i = 0; i < 10; i++) {
      rest.push(rss(pid));
      await sleep(50);
    }
    const baseline = Math.max(...rest);

    const samples: number[] = [];
    const sampler = setInterval(() => {
      try {
        samples.push(rss(pid));
      } catch {
        // exited; the answers below say why
      }
    }, 50);
    let answers: Answer[];
    try {
      answers = await Promise.all(Array.from({ length: 8 }, (_, i) =>
        declaredPut(port, `/tiny-bucket/huge-${i}`, QUOTA, 100 * MiB, 3000)));
      await sleep(300); // whatever the server still does after answering
    } finally {
      clearInterval(sampler);
    }
    samples.push(rss(pid));

    for (const a of answers) {
      expect(a.status, a.text).toBe(403);
      expect(tag(a.text, 'Code')).toBe('QuotaExceeded');
    }
    const growth = Math.max(...samples) - baseline;
    expect(growth, `RSS ${(baseline / MiB).toFixed(0)} MiB → peak ${(Math.max(...samples) / MiB).toFixed(0)} MiB`).toBeLessThan(64 * MiB);
    expect(answers.map((a) => a.sentBeforeAnswer), 'body bytes sent before each answer').toEqual(answers.map(() => 0));

    // Nothing was stored, and the server still serves.
    expect((await call('GET', '/tiny-bucket/', QUOTA)).text).not.toContain('<Key>');
    expect((await call('GET', '/?accounts', ROOT)).text).toMatch(/<AccessKeyId>tiny<\/AccessKeyId>[\s\S]*?<UsedBytes>0<\/UsedBytes>/);
  });
});

// ------------------------------------------------------------------------------------------------
// the handler directly

interface Source {
  stream: ReadableStream<Uint8Array>;
  /** Bytes handed to the reader so far. */
  pulled(): number;
  cancelled(): boolean;
}

/** A body of `total` bytes (Infinity: endless) in 1 MiB chunks, made only as they are read. */
function lazyBody(total: number): Source {
  const chunk = new Uint8Array(MiB).fill(120);
  let pulled = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (pulled >= total) {
        c.close();
        return;
      }
      const n = Math.min(chunk.length, total - pulled);
      pulled += n;
      c.enqueue(n === chunk.length ? chunk : chunk.slice(0, n));
    },
    cancel() {
      cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, pulled: () => pulled, cancelled: () => cancelled };
}

async function quotaScene(mode: 'header' | 'body', quota: number) {
  const svc = await newService({ contentLength: mode });
  const ok = async (method: string, url: string, o: SendOptions = {}) => {
    const r = await send(svc.handle, method, url, { auth: QUOTA, ...o });
    expect(r.status, `${method} ${url}: ${r.text}`).toBe(200);
    return r;
  };
  await ok('PUT', `${SVC}/?account=${QUOTA.accessKeyId}`, { auth: 'root', body: accountXml(QUOTA.secret, quota) });
  const B = 'http://tiny.svc.localhost';
  await ok('PUT', `${B}/`);
  const id = tag((await ok('POST', `${B}/big?uploads`)).text, 'UploadId')!;
  const state = async () => dbState(unwrap(await (svc.store as unknown as { db(): Promise<import('idb').IDBPDatabase> }).db()));
  /** Sends `source` as the body of a signed PUT, with or without a declared length. */
  const put = async (path: string, source: Source, declared?: number) => {
    const url = `${B}${path}`;
    const h = new Headers();
    if (declared !== undefined) h.set('content-length', String(declared));
    signHeaders('PUT', url, h, QUOTA);
    const res = await svc.handle(new Request(url, { method: 'PUT', headers: h, body: source.stream, duplex: 'half' } as RequestInit));
    return { status: res.status, text: await res.text() };
  };
  return { svc, ok, B, id, state, put };
}

const targets = [
  { name: 'PUT Object', path: () => '/big' },
  { name: 'Upload Part', path: (id: string) => `/big?partNumber=1&uploadId=${id}` },
];

describe('the handler, with Content-Length (the server, direct calls)', () => {
  for (const t of targets) {
    it(`${t.name} declaring 100 MiB over a 1,000-byte quota → 403 QuotaExceeded without reading a byte of the body`, async () => {
      const s = await quotaScene('header', 1000);
      const before = await s.state();
      const body = lazyBody(100 * MiB);
      const r = await s.put(t.path(s.id), body, 100 * MiB);
      expect(r.status, r.text).toBe(403);
      expect(errorCode(r.text)).toBe('QuotaExceeded');
      expect(body.pulled(), 'body bytes read').toBe(0);
      expect(await s.state()).toEqual(before);
    });

    it(`${t.name} declaring one byte more than the quota leaves → 403 before the body; exactly what it leaves → 200`, async () => {
      const s = await quotaScene('header', 3 * MiB);
      await s.ok('PUT', `${s.B}/present`, { body: new Uint8Array(MiB) });
      const over = lazyBody(2 * MiB + 1);
      const r = await s.put(t.path(s.id), over, 2 * MiB + 1);
      expect(r.status, r.text).toBe(403);
      expect(errorCode(r.text)).toBe('QuotaExceeded');
      expect(over.pulled()).toBe(0);
      const fits = await s.put(t.path(s.id), lazyBody(2 * MiB), 2 * MiB);
      expect(fits.status, fits.text).toBe(200);
    });
  }

  it('a PUT replacing an object (versioning off) may declare what the quota leaves plus what it frees', async () => {
    const s = await quotaScene('header', 3 * MiB);
    await s.ok('PUT', `${s.B}/present`, { body: new Uint8Array(MiB) });
    const r = await s.put('/present', lazyBody(3 * MiB), 3 * MiB);
    expect(r.status, r.text).toBe(200);
  });
});

describe('the handler in the browser\'s mode (contentLength: \'body\', no Content-Length)', () => {
  for (const t of targets) {
    it(`${t.name} with an endless body over a 3 MiB quota → 403 QuotaExceeded once the bytes pass it; the stream is cancelled`, async () => {
      const s = await quotaScene('body', 3 * MiB);
      await s.ok('PUT', `${s.B}/present`, { body: new Uint8Array(MiB) }); // leaves 2 MiB
      const before = await s.state();
      const body = lazyBody(Infinity);
      const r = await s.put(t.path(s.id), body);
      expect(r.status, r.text).toBe(403);
      expect(errorCode(r.text)).toBe('QuotaExceeded');
      // What the quota leaves, plus the chunk that passed it, plus at most one read ahead.
      expect(body.pulled(), 'body bytes read').toBeGreaterThan(2 * MiB);
      expect(body.pulled(), 'body bytes read').toBeLessThanOrEqual(4 * MiB);
      expect(body.cancelled(), 'the body stream was cancelled').toBe(true);
      const after = await s.state();
      expect(after).toEqual(before);
      expect(orphans(after)).toEqual({ unreferenced: [], dangling: [] });
    });

    it(`${t.name} with a body of exactly what the quota leaves → 200`, async () => {
      const s = await quotaScene('body', 3 * MiB);
      await s.ok('PUT', `${s.B}/present`, { body: new Uint8Array(MiB) });
      const r = await s.put(t.path(s.id), lazyBody(2 * MiB));
      expect(r.status, r.text).toBe(200);
    });
  }
});
