// Two attacks on the edges of the service (contract sections 2 and 7; docs/protocol.md,
// "CanonicalizedHeaders" and "Every response"):
// - headers sent twice, and other request shapes the bridge from Node's http may choke on: never a
//   bare 500; a repeated x-svc-* header is signed joined by ", ", on the server as in a browser;
// - the request log as a place to steal credentials from: no signature in the server's stdout, in
//   the handler's log entries, in the request log ring or what it broadcasts; the claimed access
//   key is there, also on refused requests.
// Real sockets to startServer (node:net, so a header can be sent twice and a Host can be anything),
// and the handler called directly.
import { describe, it, expect, beforeAll, afterAll, afterEach, vi } from 'vitest';
import net from 'node:net';
import { IDBFactory } from 'fake-indexeddb';
import { newService } from '../support/service.ts';
import { ROOT, hmac, presign, signHeaders } from '../support/sign.ts';
import { formatLogLine, startServer, type RunningServer } from '../../node/server.ts';
import { createRequestLog, readLog } from '../../sw/log/ring.ts';
import type { LogEntry } from '../../sw/core/handler.ts';

const code = (text: string) => /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
const requestIdIn = (text: string) => /<RequestId>([^<]*)<\/RequestId>/.exec(text)?.[1];
const exp = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

// ------------------------------------------------------------------------------------------------
// Raw HTTP/1.1 over a socket: every header line exactly as given, repeated ones included.

interface RawRes {
  status: number;
  /** Lower-cased names; repeated headers keep every value. */
  headers: [string, string][];
  header(name: string): string | undefined;
  text: string;
}

function rawRequest(port: number, head: string, body = ''): Promise<RawRes> {
  const isHead = head.startsWith('HEAD ');
  return new Promise((resolve, reject) => {
    // Written, not ended: a half-closed socket makes Node abort the request before it is answered.
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head + body));
    let all = Buffer.alloc(0);
    let done = false;
    /** The response once it is whole (the service answers keep-alive, so the socket may stay open). */
    const parse = (closed: boolean): RawRes | null => {
      const text = all.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return closed ? { status: 0, headers: [], header: () => undefined, text } : null;
      const lines = text.slice(0, split).split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
      const headers = lines.slice(1).map((l): [string, string] => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]);
      const header = (name: string) => headers.find(([n]) => n === name)?.[1];
      let rest = text.slice(split + 4);
      if (isHead || status === 204 || status === 304) rest = '';
      else if (header('transfer-encoding') === 'chunked') {
        let out = '';
        for (;;) {
          const eol = rest.indexOf('\r\n');
          if (eol < 0) return closed ? { status, headers, header, text: out } : null;
          const size = parseInt(rest.slice(0, eol), 16);
          if (!size) break;
          if (rest.length < eol + 2 + size + 2) return closed ? { status, headers, header, text: out } : null;
          out += rest.slice(eol + 2, eol + 2 + size);
          rest = rest.slice(eol + 2 + size + 2);
        }
        rest = out;
      } else if (header('content-length') !== undefined) {
        const length = Number(header('content-length'));
        if (Buffer.byteLength(rest, 'latin1') < length && !closed) return null;
        rest = rest.slice(0, length);
      } else if (!closed) return null;
      return { status, headers, header, text: Buffer.from(rest, 'latin1').toString('utf8') };
    };
    const finish = (closed: boolean) => {
      if (done) return;
      const r = parse(closed);
      if (!r) return;
      done = true;
      socket.destroy();
      resolve(r);
    };
    socket.on('data', (c: Buffer) => {
      all = Buffer.concat([all, c]);
      finish(false);
    });
    socket.on('error', (e) => (done ? undefined : reject(e)));
    socket.setTimeout(20_000, () => socket.destroy(new Error('timed out')));
    socket.on('close', () => finish(true));
  });
}

/** A request with these header lines (in order, repeats kept) to the server, path style. */
function send(srv: RunningServer, method: string, pathAndQuery: string, lines: [string, string][], body?: string, host?: string): Promise<RawRes> {
  const all: [string, string][] = [['Host', host ?? `127.0.0.1:${srv.port}`], ...lines];
  if (body !== undefined && !lines.some(([n]) => /^(content-length|transfer-encoding)$/i.test(n))) all.push(['Content-Length', String(Buffer.byteLength(body))]);
  all.push(['Connection', 'close']);
  return rawRequest(srv.port, `${method} ${pathAndQuery} HTTP/1.1\r\n${all.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`, body ?? '');
}

/**
 * Signed header lines: x-svc-date and Authorization computed over `headers` as a Headers object
 * joins them (", "), then every original line, repeats kept as separate lines.
 */
function signedLines(method: string, url: string, lines: [string, string][], creds: { accessKeyId: string; secret: string } = ROOT, now?: Date): [string, string][] {
  const h = new Headers();
  for (const [n, v] of lines) h.append(n, v);
  signHeaders(method, url, h, creds, now);
  return [['x-svc-date', h.get('x-svc-date')!], ['Authorization', h.get('authorization')!], ...lines];
}

// ------------------------------------------------------------------------------------------------

describe('the HTTP server: repeated headers, and never a bare 500', () => {
  let srv: RunningServer;
  const lines: string[] = [];
  const base = () => `http://127.0.0.1:${srv.port}`;
  const lineOf = (id: string | undefined) => lines.find((l) => id !== undefined && l.includes(`id=${id}`));

  beforeAll(async () => {
    srv = await startServer({ port: 0, log: (l) => lines.push(l) });
    const bucket = await send(srv, 'PUT', '/rep-bucket/', signedLines('PUT', `${base()}/rep-bucket/`, []), '');
    expect(bucket.status, bucket.text).toBe(200);
  });
  afterAll(async () => {
    await srv?.close();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** The service's own answer: XML with the request id of its header, and a log line with that id. */
  function expectServiceAnswer(r: RawRes, where: string, method = 'GET'): void {
    const id = r.header('x-svc-request-id');
    expect(id, `${where}: request id (status ${r.status}, ${r.text})`).toMatch(/^[0-9A-F]{16}$/);
    expect(r.header('access-control-allow-origin'), where).toBe('*');
    if (r.status >= 400 && method !== 'HEAD') {
      expect(r.header('content-type'), where).toBe('application/xml');
      expect(requestIdIn(r.text), `${where}: ${r.text}`).toBe(id);
    }
    expect(lineOf(id), `${where}: log line of ${id}`).toContain(` ${r.status} `);
  }

  it('unsigned, with an x-svc-* header sent twice → the XML 403 AccessDenied with a request id and a log line', async () => {
    const r = await send(srv, 'GET', '/rep-bucket/k', [['x-svc-a', '1'], ['x-svc-a', '2']]);
    expect(r.status, r.text).toBe(403);
    expect(code(r.text)).toBe('AccessDenied');
    expectServiceAnswer(r, 'unsigned x-svc-a twice');
  });

  it('signed over the values joined by ", " → 200; the object keeps the joined value', async () => {
    const meta: [string, string][] = [['x-svc-meta-a', '1'], ['X-Svc-Meta-A', ' 2 '], ['x-svc-meta-tag', 'red'], ['x-svc-meta-tag', 'blue']];
    const put = await send(srv, 'PUT', '/rep-bucket/joined.txt', signedLines('PUT', `${base()}/rep-bucket/joined.txt`, meta), 'body');
    expect(put.status, put.text).toBe(200);
    expectServiceAnswer(put, 'signed PUT with repeated x-svc-meta-*', 'PUT');
    const get = await send(srv, 'GET', '/rep-bucket/joined.txt', signedLines('GET', `${base()}/rep-bucket/joined.txt`, []));
    expect(get.status).toBe(200);
    expect(get.text).toBe('body');
    expect(get.header('x-svc-meta-a')).toBe('1, 2');
    expect(get.header('x-svc-meta-tag')).toBe('red, blue');
  });

  it('signed over the values joined by "," → 403 AccessDenied, whose StringToSign shows the ", " join', async () => {
    const date = new Date().toUTCString();
    const sts = `PUT\n\n\n\nx-svc-date:${date}\nx-svc-meta-a:1,2\n/rep-bucket/comma.txt`;
    const r = await send(srv, 'PUT', '/rep-bucket/comma.txt', [
      ['x-svc-date', date], ['Authorization', `SVC svcadmin:${hmac(ROOT.secret, sts)}`], ['x-svc-meta-a', '1'], ['x-svc-meta-a', '2'],
    ], 'x');
    expect(r.status, r.text).toBe(403);
    expect(code(r.text)).toBe('AccessDenied');
    expect(r.text).toContain('x-svc-meta-a:1, 2');
  });

  it('no combination of repeated or odd headers answers a 500; each is the service\'s answer or Node\'s own 4xx', async () => {
    const u = (p: string) => `${base()}${p}`;
    const date = new Date().toUTCString();
    const cases: [string, string, string, [string, string][], string?][] = [
      ['two Authorization headers', 'GET', '/rep-bucket/joined.txt', [['Authorization', 'SVC svcadmin:abc='], ['Authorization', 'SVC other:def=']]],
      ['two x-svc-date', 'GET', '/rep-bucket/joined.txt', signedLines('GET', u('/rep-bucket/joined.txt'), [['x-svc-date', date], ['x-svc-date', date]])],
      ['two Date', 'GET', '/rep-bucket/joined.txt', [['Date', date], ['Date', date], ['Authorization', 'SVC svcadmin:abc=']]],
      ['two Content-MD5', 'PUT', '/rep-bucket/md5', signedLines('PUT', u('/rep-bucket/md5'), [['Content-MD5', 'XUFAKrxLKna5cZ2REBfFkg=='], ['Content-MD5', 'XUFAKrxLKna5cZ2REBfFkg==']]), 'hello'],
      ['two Content-Type', 'PUT', '/rep-bucket/ct', signedLines('PUT', u('/rep-bucket/ct'), [['Content-Type', 'text/plain'], ['Content-Type', 'text/html']]), 'x'],
      ['two Range', 'GET', '/rep-bucket/joined.txt', signedLines('GET', u('/rep-bucket/joined.txt'), [['Range', 'bytes=0-1'], ['Range', 'bytes=2-3']])],
      ['two If-Modified-Since', 'GET', '/rep-bucket/joined.txt', signedLines('GET', u('/rep-bucket/joined.txt'), [['If-Modified-Since', date], ['If-Modified-Since', date]])],
      ['two copy sources', 'PUT', '/rep-bucket/copy', signedLines('PUT', u('/rep-bucket/copy'), [['x-svc-copy-source', '/rep-bucket/joined.txt'], ['x-svc-copy-source', '/rep-bucket/joined.txt']]), ''],
      ['two move sources', 'PUT', '/rep-bucket/move', signedLines('PUT', u('/rep-bucket/move'), [['x-svc-move-source', '/rep-bucket/joined.txt'], ['x-svc-move-source', '/rep-bucket/x']]), ''],
      ['two x-svc-acl', 'PUT', '/rep-acl-bucket/', signedLines('PUT', u('/rep-acl-bucket/'), [['x-svc-acl', 'private'], ['x-svc-acl', 'public-read']]), ''],
      ['two x-svc-object-md5 on Complete', 'POST', '/rep-bucket/mp?uploadId=nope', signedLines('POST', u('/rep-bucket/mp?uploadId=nope'), [['x-svc-object-md5', 'a'.repeat(32)], ['x-svc-object-md5', 'b'.repeat(32)]]), '<x/>'],
      ['a header named x-svc- and an empty x-svc-meta-', 'PUT', '/rep-bucket/empty', signedLines('PUT', u('/rep-bucket/empty'), [['x-svc-', 'v'], ['x-svc-meta-', 'w'], ['x-svc-meta-', '']]), 'x'],
      ['an x-svc value with a Latin-1 byte', 'PUT', '/rep-bucket/latin', [['x-svc-meta-a', 'caf\xe9'], ['x-svc-meta-a', '\xff']], 'x'],
      ['a repeated x-svc header 200 times', 'GET', '/rep-bucket/joined.txt', signedLines('GET', u('/rep-bucket/joined.txt'), Array.from({ length: 200 }, (): [string, string] => ['x-svc-meta-n', 'v']))],
      ['two Content-Length that differ', 'PUT', '/rep-bucket/cl', [['Content-Length', '1'], ['Content-Length', '2']], 'x'],
      ['two Host', 'GET', '/rep-bucket/joined.txt', [['Host', 'other.example']]],
      ['two Transfer-Encoding', 'PUT', '/rep-bucket/te', [['Transfer-Encoding', 'chunked'], ['Transfer-Encoding', 'chunked']], '1\r\nx\r\n0\r\n\r\n'],
      ['HEAD with two x-svc headers', 'HEAD', '/rep-bucket/joined.txt', signedLines('HEAD', u('/rep-bucket/joined.txt'), [['x-svc-z', '1'], ['x-svc-z', '2']])],
      ['OPTIONS with two request-headers', 'OPTIONS', '/rep-bucket/joined.txt', [['Access-Control-Request-Headers', 'x-svc-a'], ['Access-Control-Request-Headers', 'x-svc-b']]],
    ];
    for (const [what, method, path, headerLines, body] of cases) {
      const r = await send(srv, method, path, headerLines, body);
      expect(r.status, `${what}: ${r.status} ${r.text}`).toBeGreaterThan(0);
      expect(r.status, `${what}: ${r.text}`).toBeLessThan(500);
      // Node's parser refuses some shapes outright (a bare 400 before any handler runs); anything
      // that reaches the service is its answer, with a request id and a log line.
      if (r.header('x-svc-request-id') === undefined) expect(r.status, what).toBe(400);
      else expectServiceAnswer(r, what, method);
    }
  });

  it('a Host or path the bridge cannot turn into a URL → the XML 400 with a request id and a log line', async () => {
    for (const [what, path, host] of [
      ['a Host with a space', '/rep-bucket/k', 'a b'],
      ['a Host with a backslash', '/rep-bucket/k', 'a\\b'],
      ['a backslash in the path', '/rep-bucket/a\\b', undefined],
    ] as const) {
      const r = await send(srv, 'GET', path, [], undefined, host);
      expect(r.status, `${what}: ${r.text}`).toBe(400);
      expect(code(r.text), what).toBe('InvalidArgument');
      expectServiceAnswer(r, what);
    }
  });

  it('a throw around handle() → the XML 500 InternalError with a request id and a log line, and the error is reported', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    // The first thing handle() does is draw its request id: make that throw, once.
    vi.spyOn(globalThis.crypto, 'getRandomValues').mockImplementationOnce(() => {
      throw new Error('no entropy left');
    });
    const r = await send(srv, 'GET', '/rep-bucket/joined.txt', signedLines('GET', `${base()}/rep-bucket/joined.txt`, []));
    expect(r.status, r.text).toBe(500);
    expect(code(r.text)).toBe('InternalError');
    expect(r.text).not.toContain('no entropy left');
    expectServiceAnswer(r, 'a throw around handle()');
    expect(lineOf(r.header('x-svc-request-id'))).toMatch(/ svcadmin$/);
    expect(errors.mock.calls.some((args) => args.some((a) => a instanceof Error && a.message === 'no entropy left'))).toBe(true);
  });
});

describe('the handler: repeated x-svc-* headers', () => {
  it('a Request with a header appended twice is signed over the ", " join, as the browser and the server send it', async () => {
    const { handle } = await newService();
    const req = (method: string, url: string, h: Headers, body?: string) => {
      if (body !== undefined) h.set('content-length', String(body.length));
      signHeaders(method, url, h);
      return handle(new Request(url, { method, headers: h, ...(body !== undefined ? { body: new TextEncoder().encode(body) } : {}) }));
    };
    expect((await req('PUT', 'http://twice.svc.localhost/', new Headers(), '')).status).toBe(200);
    const h = new Headers();
    h.append('x-svc-meta-a', '1');
    h.append('X-Svc-Meta-A', '2');
    expect(h.get('x-svc-meta-a')).toBe('1, 2');
    const put = await req('PUT', 'http://twice.svc.localhost/k', h, 'x');
    expect(put.status, await put.clone().text()).toBe(200);
    const got = await req('GET', 'http://twice.svc.localhost/k', new Headers());
    expect(got.headers.get('x-svc-meta-a')).toBe('1, 2');
    // unsigned with a repeat: the service's 403, not a failure
    const anon = await handle(new Request('http://twice.svc.localhost/k', { headers: [['x-svc-a', '1'], ['x-svc-a', '2']] }));
    expect(anon.status).toBe(403);
    expect(requestIdIn(await anon.text())).toBe(anon.headers.get('x-svc-request-id'));
  });
});

// ------------------------------------------------------------------------------------------------
// Logs: the same traffic to the server and to the handler (with the log ring behind it).

interface Wire {
  what: string;
  method: string;
  /** Path-style URL on `base`. */
  url: string;
  headers: [string, string][];
  body?: string;
  status: number;
  /** The access key the log must name: the claimed one, also when refused; undefined when anonymous. */
  key: string | undefined;
}

/** Signed and presigned traffic, refused traffic, and every signature it carries. */
function traffic(base: string): { wires: Wire[]; signatures: string[] } {
  const signatures: string[] = [];
  const B = `${base}/logbkt`;
  const sigOf = (h: Headers) => {
    const sig = h.get('authorization')!.split(':')[1]!;
    signatures.push(sig);
    return sig;
  };
  const signed = (what: string, method: string, url: string, status: number, o: {
    lines?: [string, string][]; body?: string; creds?: { accessKeyId: string; secret: string }; now?: Date; dateHeader?: boolean;
  } = {}): Wire => {
    const h = new Headers(o.lines ?? []);
    if (o.body !== undefined) h.set('content-length', String(Buffer.byteLength(o.body)));
    if (o.dateHeader) h.set('date', (o.now ?? new Date()).toUTCString());
    signHeaders(method, url, h, o.creds, o.now);
    sigOf(h);
    return { what, method, url, headers: [...h], ...(o.body !== undefined ? { body: o.body } : {}), status, key: (o.creds ?? ROOT).accessKeyId };
  };
  const presigned = (method: string, url: string, expires: number, creds = ROOT) => {
    const p = presign(method, url, expires, creds);
    signatures.push(new URL(p).searchParams.get('Signature')!);
    return p;
  };
  const plain = (what: string, url: string, status: number, key: string | undefined, headers: [string, string][] = []): Wire =>
    ({ what, method: 'GET', url, headers, status, key });

  const referred = presigned('GET', `${B}/other`, exp(300));
  const renamed = presigned('GET', `${B}/k`, exp(300)).replace('&Signature=', '&Sig%6Eature=');
  expect(renamed).toContain('Sig%6Eature=');
  // A wrong signature is a signature too: it must not be logged either.
  const wrongPresigned = presign('GET', `${B}/k`, exp(300), { accessKeyId: 'svcadmin', secret: 'not-the-secret' });
  signatures.push(new URL(wrongPresigned).searchParams.get('Signature')!);

  const wires: Wire[] = [
    signed('signed PUT bucket', 'PUT', `${B}/`, 200, { body: '' }),
    signed('signed PUT object', 'PUT', `${B}/k`, 200, { body: 'hello', lines: [['content-type', 'text/plain']] }),
    signed('signed GET', 'GET', `${B}/k`, 200),
    signed('signed GET with Date', 'GET', `${B}/k`, 200, { dateHeader: true }),
    plain('presigned GET', presigned('GET', `${B}/k`, exp(300)), 200, 'svcadmin'),
    plain('presigned GET with an encoded parameter name', renamed, 200, 'svcadmin'),
    plain('presigned GET with a presigned Referer', presigned('GET', `${B}/k`, exp(300)), 200, 'svcadmin', [['referer', referred]]),
    plain('anonymous GET', `${B}/k`, 403, undefined, [['referer', `${base}/page?a=1&Signature=${encodeURIComponent(signatures[0]!)}`]]),
    // refused: the claimed key is logged all the same
    signed('a bad signature', 'GET', `${B}/k`, 403, { creds: { accessKeyId: 'svcadmin', secret: 'wrong-secret' } }),
    signed('an unknown key', 'GET', `${B}/k`, 403, { creds: { accessKeyId: 'nobody', secret: 'nobody-secret' } }),
    signed('date skew', 'GET', `${B}/k`, 403, { now: new Date(Date.now() - 3600_000) }),
    plain('an expired presigned URL', presigned('GET', `${B}/k`, exp(-60)), 403, 'svcadmin'),
    plain('a presigned URL with a wrong signature', wrongPresigned, 403, 'svcadmin'),
    plain('presigned + ifNotFound', presigned('GET', `${B}/gone`, exp(300)) + '&ifNotFound=k', 403, 'svcadmin'),
  ];
  return { wires, signatures };
}

/** Every form a signature could take in text: as is, percent-encoded, and its first 12 characters. */
function expectNoSignature(text: string, signatures: string[], where: string): void {
  for (const sig of signatures) {
    for (const form of [sig, encodeURIComponent(sig), sig.slice(0, 12), encodeURIComponent(sig).slice(0, 12)]) {
      expect(text.includes(form), `${where} holds ${form}`).toBe(false);
    }
  }
}

describe('logs never hold a signature', () => {
  it("the server's stdout: no signature, Signature shown as …, the claimed key also on refused requests", async () => {
    const lines: string[] = [];
    const srv = await startServer({ port: 0, log: (l) => lines.push(l) });
    try {
      const { wires, signatures } = traffic(srv.url);
      expect(signatures.length).toBeGreaterThanOrEqual(12);
      for (const w of wires) {
        const u = new URL(w.url);
        const r = await send(srv, w.method, u.pathname + u.search, w.headers.filter(([n]) => n !== 'host'), w.body);
        expect(r.status, `${w.what}: ${r.text}`).toBe(w.status);
        const line = lines.find((l) => l.includes(`id=${r.header('x-svc-request-id')}`));
        expect(line, w.what).toBeDefined();
        expect(line!.endsWith(` ${w.key ?? 'anonymous'}`), `${w.what}: ${line}`).toBe(true);
        if (/Sig(n|%6E)ature=/.test(u.search)) expect(line, w.what).toMatch(/ature=…[ &]/);
      }
      expect(lines.length).toBeGreaterThanOrEqual(wires.length);
      expectNoSignature(lines.join('\n'), signatures, 'stdout');
    } finally {
      await srv.close();
    }
  });

  it('the handler\'s entries, the request log ring and its broadcast: Authorization "SVC key:…", every Signature …, the claimed key', async () => {
    const factory = new IDBFactory();
    const ring = createRequestLog({ indexedDB: factory, database: 'hostile-log', channel: 'hostile-log' });
    const broadcast: LogEntry[] = [];
    const listener = new BroadcastChannel('hostile-log');
    listener.onmessage = (e: MessageEvent<LogEntry>) => broadcast.push(e.data);
    const entries: LogEntry[] = [];
    const writes: Promise<void>[] = [];
    const { handle } = await newService({
      onLog: (e) => {
        entries.push(e);
        const w = ring.write(e);
        writes.push(w);
        return w;
      },
    });
    try {
      const { wires, signatures } = traffic('http://svc.localhost');
      for (const w of wires) {
        const r = await handle(new Request(w.url, {
          method: w.method, headers: w.headers, ...(w.body !== undefined && w.body !== '' ? { body: new TextEncoder().encode(w.body) } : {}),
        }));
        expect(r.status, `${w.what}: ${await r.text()}`).toBe(w.status);
        const e = entries.at(-1)!;
        expect(e.requestId).toBe(r.headers.get('x-svc-request-id'));
        expect(e.accessKeyId, w.what).toBe(w.key);
        const auth = e.requestHeaders.find(([n]) => n === 'authorization')?.[1];
        if (w.headers.some(([n]) => n === 'authorization')) expect(auth, w.what).toBe(`SVC ${w.key}:…`);
        if (/Sig(n|%6E)ature=/.test(new URL(w.url).search)) expect(e.url, w.what).toMatch(/ature=…(&|$)/);
        const referer = e.requestHeaders.find(([n]) => n === 'referer')?.[1];
        if (referer !== undefined) expect(referer, w.what).toContain('Signature=…');
      }
      // Written directly to the ring, unredacted: the ring redacts too.
      const raw: LogEntry = {
        ...entries[2]!, requestId: 'RAW0000000000000', url: `http://svc.localhost/logbkt/k?Signature=${encodeURIComponent(signatures[1]!)}`,
        requestHeaders: [['authorization', `SVC svcadmin:${signatures[1]}`]],
      };
      writes.push(ring.write(raw));
      await Promise.all(writes);
      expectNoSignature(JSON.stringify(entries), signatures, 'handler entries');
      const stored = await readLog(100, factory, 'hostile-log');
      expect(stored.length).toBe(wires.length + 1);
      expectNoSignature(JSON.stringify(stored), signatures, 'the log ring');
      expect(stored[0]!.requestHeaders).toEqual([['authorization', 'SVC svcadmin:…']]);
      expect(stored[0]!.url).toBe('http://svc.localhost/logbkt/k?Signature=…');
      await vi.waitFor(() => expect(broadcast.length).toBe(wires.length + 1));
      expectNoSignature(JSON.stringify(broadcast), signatures, 'the broadcast');
      // formatLogLine, given an entry nobody redacted, redacts it too
      expectNoSignature(formatLogLine(raw), signatures, 'formatLogLine');
      expect(formatLogLine(raw)).toContain('svc.localhost/logbkt/k?Signature=… ');
    } finally {
      listener.close();
    }
  });
});
