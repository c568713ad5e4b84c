// The real Node HTTP server (node/server.ts): routing by Host header and by path style, the wire
// details only a real socket shows (Content-Length, HEAD, chunked uploads), logging, shutdown.
// Requests go through node:http so that the Host header can be set (fetch cannot).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { signHeaders } from '../support/sign.ts';
import { startServer } from '../../node/server.ts';
import { freePort } from '../support/ports.ts';
import { rawRequest, type RawResponse } from '../support/http.ts';

const ROOT_DIR = new URL('../../', import.meta.url).pathname;

type HttpRes = RawResponse;

interface ReqOpts {
  method: string;
  path: string;
  /** Host header to send. */
  host: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body with Transfer-Encoding: chunked and no Content-Length. */
  chunked?: boolean;
  /** Sign as root for this URL (the CanonicalizedResource does not depend on the host). */
  signAs?: string;
  /** Connect to this address (default 127.0.0.1). */
  address?: string;
}

function request(port: number, o: ReqOpts): Promise<HttpRes> {
  const h = new Headers(o.headers ?? {});
  const body = o.body === undefined ? undefined : Buffer.isBuffer(o.body) ? o.body : Buffer.from(o.body, 'utf8');
  if (o.chunked) h.set('transfer-encoding', 'chunked');
  else if (body !== undefined || o.method === 'PUT' || o.method === 'POST') h.set('content-length', String(body?.length ?? 0));
  if (o.signAs) signHeaders(o.method, o.signAs, h);
  const headers: Record<string, string> = { host: o.host };
  for (const [k, v] of h) headers[k] = v;
  return rawRequest(port, {
    method: o.method, path: o.path, headers, ...(body !== undefined ? { body } : {}), split: o.chunked === true,
    ...(o.address ? { address: o.address } : {}),
  });
}

const code = (text: string) => /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
const md5hex = (b: string | Buffer) => createHash('md5').update(b).digest('hex');


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------------------------------------
describe('startServer', () => {
  let srv: Awaited<ReturnType<typeof startServer>>;
  const lines: string[] = [];
  // the server's store may outlive a test run: use fresh bucket names
  const b = 'srv' + Date.now().toString(36) + Math.floor(Math.random() * 1e6).toString(36);
  const vhost = (port: number) => `${b}.svc.localhost:${port}`;
  let port: number;

  beforeAll(async () => {
    srv = await startServer({ port: 0, host: '127.0.0.1', log: (line: string) => lines.push(line) });
    port = srv.port;
    const r = await request(port, { method: 'PUT', path: '/', host: vhost(port), signAs: `http://${b}.svc.localhost/` });
    expect(r.status, r.text).toBe(200);
  });
  afterAll(async () => {
    await srv?.close();
  });

  it('listens on a free port when asked for port 0 and reports its URL', () => {
    expect(Number.isInteger(srv.port)).toBe(true);
    expect(srv.port).toBeGreaterThan(0);
    expect(srv.url).toMatch(new RegExp(`^http://[^/]+:${srv.port}/?$`));
  });

  it('routes by the Host header: PUT, GET, HEAD and a Range GET on the bucket host', async () => {
    const body = 'hello world';
    const put = await request(port, { method: 'PUT', path: '/dir/k.txt', host: vhost(port), body, headers: { 'content-type': 'text/plain' }, signAs: `http://${b}.svc.localhost/dir/k.txt` });
    expect(put.status, put.text).toBe(200);
    expect(put.headers.etag).toBe(`"${md5hex(body)}"`);

    const get = await request(port, { method: 'GET', path: '/dir/k.txt', host: vhost(port), signAs: `http://${b}.svc.localhost/dir/k.txt` });
    expect(get.status, get.text).toBe(200);
    expect(get.text).toBe(body);
    expect(get.headers['content-type']).toBe('text/plain');
    expect(get.headers['content-length']).toBe('11');
    expect(get.headers.etag).toBe(`"${md5hex(body)}"`);
    expect(get.headers['accept-ranges']).toBe('bytes');

    const head = await request(port, { method: 'HEAD', path: '/dir/k.txt', host: vhost(port), signAs: `http://${b}.svc.localhost/dir/k.txt` });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe('11');
    expect(head.headers.etag).toBe(`"${md5hex(body)}"`);
    expect(head.body.length).toBe(0);

    const range = await request(port, { method: 'GET', path: '/dir/k.txt', host: vhost(port), headers: { range: 'bytes=0-4' }, signAs: `http://${b}.svc.localhost/dir/k.txt` });
    expect(range.status, range.text).toBe(206);
    expect(range.text).toBe('hello');
    expect(range.headers['content-range']).toBe('bytes 0-4/11');
    expect(range.headers['content-length']).toBe('5');

    const suffix = await request(port, { method: 'GET', path: '/dir/k.txt', host: vhost(port), headers: { range: 'bytes=-5' }, signAs: `http://${b}.svc.localhost/dir/k.txt` });
    expect(suffix.status).toBe(206);
    expect(suffix.text).toBe('world');
  });

  it('a Host header without a port works as well (ports are ignored)', async () => {
    const put = await request(port, { method: 'PUT', path: '/noport', host: `${b}.svc.localhost`, body: 'np', signAs: `http://${b}.svc.localhost/noport` });
    expect(put.status, put.text).toBe(200);
    const get = await request(port, { method: 'GET', path: '/noport', host: vhost(port), signAs: `http://${b}.svc.localhost/noport` });
    expect(get.text).toBe('np');
  });

  it('path style on any host that is not *.svc.localhost', async () => {
    const put = await request(port, { method: 'PUT', path: `/${b}/ps/key`, host: `127.0.0.1:${port}`, body: 'path style', signAs: `http://127.0.0.1:${port}/${b}/ps/key` });
    expect(put.status, put.text).toBe(200);
    const viaHost = await request(port, { method: 'GET', path: '/ps/key', host: vhost(port), signAs: `http://${b}.svc.localhost/ps/key` });
    expect(viaHost.status, viaHost.text).toBe(200);
    expect(viaHost.text).toBe('path style');
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'svc.localhost']) {
      const g = await request(port, { method: 'GET', path: `/${b}/ps/key`, host, signAs: `http://127.0.0.1:${port}/${b}/ps/key` });
      expect(g.status, `${host}: ${g.text}`).toBe(200);
      expect(g.text).toBe('path style');
    }
    const list = await request(port, { method: 'GET', path: `/${b}/?prefix=ps/`, host: `127.0.0.1:${port}`, signAs: `http://127.0.0.1:${port}/${b}/?prefix=ps/` });
    expect(list.status, list.text).toBe(200);
    expect(list.text).toContain('<Key>ps/key</Key>');
    const buckets = await request(port, { method: 'GET', path: '/', host: `127.0.0.1:${port}`, signAs: `http://svc.localhost/` });
    expect(buckets.status, buckets.text).toBe(200);
    expect(buckets.text).toContain(`<Name>${b}</Name>`);
  });

  it('a chunked PUT without Content-Length is 411 MissingContentLength', async () => {
    const r = await request(port, { method: 'PUT', path: '/chunked', host: vhost(port), body: 'some chunked body', chunked: true, signAs: `http://${b}.svc.localhost/chunked` });
    expect(r.status, r.text).toBe(411);
    expect(code(r.text)).toBe('MissingContentLength');
    const g = await request(port, { method: 'GET', path: '/chunked', host: vhost(port), signAs: `http://${b}.svc.localhost/chunked` });
    expect(g.status).toBe(404);
    expect(code(g.text)).toBe('NoSuchKey');
    const del = await request(port, { method: 'POST', path: '/?delete', host: vhost(port), body: '<Delete><Object><Key>noport</Key></Object></Delete>', chunked: true, signAs: `http://${b}.svc.localhost/?delete` });
    expect(del.status, del.text).toBe(411);
    expect(code(del.text)).toBe('MissingContentLength');
  });

  it('every response carries x-svc-request-id (unique), Date, Connection and Server: swbucket', async () => {
    const r1 = await request(port, { method: 'GET', path: '/missing', host: vhost(port), signAs: `http://${b}.svc.localhost/missing` });
    const r2 = await request(port, { method: 'GET', path: '/missing', host: vhost(port), signAs: `http://${b}.svc.localhost/missing` });
    for (const r of [r1, r2]) {
      expect(r.status).toBe(404);
      expect(code(r.text)).toBe('NoSuchKey');
      expect(r.headers['x-svc-request-id']).toBeTruthy();
      expect(r.headers.server).toBe('swbucket');
      expect(r.headers.date).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
      expect(r.headers.connection).toBeTruthy();
      expect(r.headers['content-type']).toMatch(/^application\/xml/);
      // the error body's RequestId is the response's request id
      expect(/<RequestId>([^<]*)<\/RequestId>/.exec(r.text)?.[1]).toBe(r.headers['x-svc-request-id']);
    }
    expect(r1.headers['x-svc-request-id']).not.toBe(r2.headers['x-svc-request-id']);
  });

  it('a request with Connection: close is answered close, and the server closes the socket after the answer (no wait for the idle timeout)', async () => {
    const answer = await new Promise<{ text: string; closedBy: 'server' | 'timeout' }>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => s.write(`GET /missing HTTP/1.1\r\nhost: ${vhost(port)}\r\nconnection: close\r\n\r\n`));
      let text = '';
      // Node keeps an idle kept-alive socket 5 s: the socket must end well before that.
      const timer = setTimeout(() => resolve({ text, closedBy: 'timeout' }), 4_000);
      s.on('data', (d) => (text += d.toString('latin1')));
      s.on('end', () => {
        clearTimeout(timer);
        resolve({ text, closedBy: 'server' });
      });
    });
    expect(answer.text).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer.text.toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(answer.closedBy).toBe('server');
  });

  it('anonymous requests are refused through the server too', async () => {
    const r = await request(port, { method: 'PUT', path: '/anon', host: vhost(port), body: 'x' });
    expect(r.status).toBe(403);
    expect(code(r.text)).toBe('AccessDenied');
  });

  it('a 5 MiB body round-trips intact', { timeout: 30_000 }, async () => {
    const big = Buffer.alloc(5 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + 7) & 0xff;
    const put = await request(port, { method: 'PUT', path: '/big.bin', host: vhost(port), body: big, signAs: `http://${b}.svc.localhost/big.bin` });
    expect(put.status, put.text).toBe(200);
    expect(put.headers.etag).toBe(`"${md5hex(big)}"`);
    const get = await request(port, { method: 'GET', path: '/big.bin', host: vhost(port), signAs: `http://${b}.svc.localhost/big.bin` });
    expect(get.status).toBe(200);
    expect(get.body.length).toBe(big.length);
    expect(md5hex(get.body)).toBe(md5hex(big));
  });

  it('TRACE and other unknown methods are 405 MethodNotAllowed, never 500', async () => {
    for (const method of ['TRACE', 'PATCH', 'PROPFIND']) {
      const r = await request(port, { method, path: '/dir/k.txt', host: vhost(port), signAs: `http://${b}.svc.localhost/dir/k.txt` });
      expect(r.status, `${method}: ${r.text}`).toBe(405);
      expect(code(r.text)).toBe('MethodNotAllowed');
    }
  });

  it('a GET with a body is not a server error', async () => {
    const r = await request(port, { method: 'GET', path: '/dir/k.txt', host: vhost(port), body: 'unexpected', signAs: `http://${b}.svc.localhost/dir/k.txt` });
    expect(r.status).toBeLessThan(500);
  });

  it('survives garbage on the socket', async () => {
    await new Promise<void>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => s.end('GARBAGE \u0000\u0001 NOT HTTP\r\n\r\n'));
      s.on('error', () => resolve());
      s.on('close', () => resolve());
      s.resume();
    });
    const r = await request(port, { method: 'GET', path: '/dir/k.txt', host: vhost(port), signAs: `http://${b}.svc.localhost/dir/k.txt` });
    expect(r.status).toBe(200);
  });

  it('logs one line per request', async () => {
    await sleep(200);
    const start = lines.length;
    const reqs = [
      { method: 'GET', path: '/dir/k.txt' },
      { method: 'HEAD', path: '/dir/k.txt' },
      { method: 'GET', path: '/missing-for-log' },
      { method: 'PUT', path: '/logged', body: 'x' },
    ];
    for (const q of reqs) {
      await request(port, { ...q, host: vhost(port), signAs: `http://${b}.svc.localhost${q.path}` });
    }
    for (let i = 0; i < 40 && lines.length < start + reqs.length; i++) await sleep(50);
    await sleep(200);
    const mine = lines.slice(start);
    expect(mine.length, mine.join('\n')).toBe(reqs.length);
    for (const [i, q] of reqs.entries()) {
      expect(typeof mine[i]).toBe('string');
      expect(mine[i]!.length).toBeGreaterThan(0);
      expect(mine[i]).toContain(q.method);
    }
    // the line format is not fixed; a log line must not leak the signature (docs/protocol.md, "Emulator-only")
    for (const l of mine) expect(l).not.toMatch(/SVC svcadmin:/);
  });
});

describe('close()', () => {
  it('stops listening', async () => {
    const srv = await startServer({ port: 0, host: '127.0.0.1', log: () => {} });
    const r = await request(srv.port, { method: 'GET', path: '/', host: `127.0.0.1:${srv.port}` });
    expect(r.status).toBe(403); // anonymous service-host listing
    await srv.close();
    await expect(request(srv.port, { method: 'GET', path: '/', host: `127.0.0.1:${srv.port}` })).rejects.toThrow();
  });
});

// ------------------------------------------------------------------------------------------------
describe('the server process', () => {
  async function waitForAnswer(port: number, child: ReturnType<typeof spawn>, ms = 20_000): Promise<number> {
    const until = Date.now() + ms;
    let lastErr: unknown;
    while (Date.now() < until) {
      if (child.exitCode !== null) throw new Error(`server exited early with ${child.exitCode}`);
      for (const address of ['127.0.0.1', '::1']) {
        try {
          const r = await request(port, { method: 'GET', path: '/', host: `localhost:${port}`, address });
          return r.status;
        } catch (e) {
          lastErr = e;
        }
      }
      await sleep(200);
    }
    throw new Error(`no answer on port ${port}: ${String(lastErr)}`);
  }

  function exitOf(child: ReturnType<typeof spawn>): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
      else child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  async function runAndStop(args: string[], env: NodeJS.ProcessEnv, port: number) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'node/cli.ts', 'serve', ...args], {
      cwd: ROOT_DIR,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const exited = exitOf(child);
    try {
      const status = await waitForAnswer(port, child);
      expect(status, output).toBe(403); // anonymous GET / on the service host
      const t0 = Date.now();
      child.kill('SIGTERM');
      const result = await Promise.race([exited, sleep(5000).then(() => 'timeout' as const)]);
      expect(result, `did not exit within 5 s after SIGTERM\n${output}`).not.toBe('timeout');
      expect(result, output).toEqual({ code: 0, signal: null });
      expect(Date.now() - t0).toBeLessThan(5000);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }

  it('swbucket serve --port N answers and exits 0 on SIGTERM within 5 s', { timeout: 40_000 }, async () => {
    const port = await freePort();
    await runAndStop(['--port', String(port)], {}, port);
  });

  it('PORT=N in the environment sets the port', { timeout: 40_000 }, async () => {
    const port = await freePort();
    await runAndStop([], { PORT: String(port) }, port);
  });
});
