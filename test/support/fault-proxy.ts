// A reverse proxy in front of an S3 server (radosgw from test/support/rgw.ts, or `swbucket serve`)
// that a test steers while it runs: the remote down (connections refused or reset), a connection
// cut in the middle of a request body or of a response body, an answer replaced with S3's
// 500 InternalError or 503 SlowDown, an answer lost after the remote acted on the request, a
// request held (latency) or never answered, and a record of every request.
//
//   const proxy = await startFaultProxy({ target: rgw.endpoint });
//   new S3Client({ endpoint: proxy.url, forcePathStyle: true, ... })   // signs for the proxy's host
//   proxy.fault({ match: { method: 'PUT', key: 'big' }, fault: { kind: 'cut-request', afterBytes: 1 << 20 } });
//   proxy.fault({ match: { method: 'GET' }, fault: { kind: 'error', status: 503 }, times: 2 });
//   proxy.fault({ delayMs: 300, forMs: 2000 });                          // every request, for 2 s
//   proxy.fault({ match: { method: 'PUT' }, holdUntil: released });       // held until a promise settles
//   proxy.requests({ method: 'PUT', key: 'big' })                        // what reached the proxy
//
// The client signs for the proxy's address, and the proxy forwards each request as it came: the
// same method, target and headers, byte for byte and in order, Host included (a SigV4 signature
// covers Host, so rewriting it to the remote's address would make the remote refuse the request).
// This works because both remotes route path-style requests by their path whatever the Host says:
// radosgw without `rgw dns name` (measured: a request signed for Host proxy.test:8080 is answered
// 200, and a virtual-host name is not read as a bucket), and `swbucket serve` for any Host that is
// not under one of its endpoints (s3.localhost and the like). CORS preflights are forwarded
// untouched, like any other request. The remote's answer comes back as it was sent: status,
// headers (raw, in order), body.
//
// Bodies are streamed both ways with backpressure, never held whole. Each request goes to the
// remote on a connection of its own (no pool), so a connection the remote closed while idle never
// turns into a fault no test asked for; the proxy keeps its clients' connections open 60 s.
//
// A cut looks to the client as a network failure: its socket is reset (RST), never answered. The
// remote, when a cut reaches it, sees its connection end (FIN) after the bytes it was sent, as when
// a client goes away mid-upload.
import http from 'node:http';
import net from 'node:net';
import { randomBytes } from 'node:crypto';

/** What a rule's predicate sees of a request (and what is recorded of it). */
export interface RequestInfo {
  method: string;
  /** The request target's path, as sent (percent-encoded). */
  path: string;
  /** The raw query string, without '?' ('' if none). */
  query: string;
  params: URLSearchParams;
  /** Path-style: the first segment, and the rest decoded ('' when absent). */
  bucket: string;
  key: string;
  /** Lower-case names; a header sent twice is joined with ', '. */
  headers: Record<string, string>;
}

export type Match =
  | ((r: RequestInfo) => boolean)
  | {
      method?: string | string[];
      path?: string | RegExp;
      bucket?: string;
      key?: string | RegExp;
      /** A parameter's name that must be present ('uploads', 'uploadId'), or a pattern for the raw query. */
      query?: string | RegExp;
      header?: Record<string, string | RegExp>;
    };

export type Fault =
  /** The client's connection is reset as soon as the request's headers arrive; the remote sees nothing. */
  | { kind: 'reset' }
  /**
   * The request goes to the remote with the first `afterBytes` bytes of its body, then both
   * connections are cut (the remote's ended, the client's reset). With `reachRemote: false` the
   * remote is never contacted: the proxy reads `afterBytes` bytes from the client, then resets it.
   * A body of `afterBytes` or fewer bytes reaches the remote whole before the cut (whether the
   * remote then acts on it is a race: use 'drop-answer' for that).
   */
  | { kind: 'cut-request'; afterBytes: number; reachRemote?: boolean }
  /** The remote's answer is relayed (status, headers) with `afterBytes` bytes of its body, then the client is reset. */
  | { kind: 'cut-response'; afterBytes: number }
  /** The remote gets the whole request and answers; the proxy waits for that answer, then resets the client. */
  | { kind: 'drop-answer' }
  /**
   * S3's error answer (XML with Code, Message, RequestId, HostId; no Retry-After), by default
   * without contacting the remote: 500 InternalError, 503 SlowDown unless `code` says. With
   * `reachRemote: true` the remote gets the request and acts on it, and its answer is replaced.
   */
  | { kind: 'error'; status: number; code?: string; message?: string; reachRemote?: boolean }
  /** The request is never answered nor forwarded, until the client gives up or the proxy closes. */
  | { kind: 'hang' }
  /**
   * One bit of the body's byte `at` is flipped on the way to the remote (`request`) or to the
   * client (`response`); lengths, headers and timing stay as they were, so only a check of the
   * bytes themselves finds it. A body shorter than `at` + 1 goes unchanged.
   */
  | { kind: 'flip-bit'; in: 'request' | 'response'; at: number }
  /** The remote's answer goes to the client with these headers replaced (an ETag another server would send, say). */
  | { kind: 'answer-headers'; headers: Record<string, string> };

export interface Rule {
  /** Which requests (default: every one). */
  match?: Match;
  /** What happens to them; without one, the request is only delayed (`delayMs`) and forwarded. */
  fault?: Fault;
  /** The request is held this long first (before the fault, or before it is forwarded). */
  delayMs?: number;
  /**
   * The request is held until this settles (after `delayMs`): a test lets it go once what it must
   * see while the request is under way has happened, instead of guessing a time that is long enough.
   */
  holdUntil?: Promise<unknown>;
  /** How many matching requests it applies to (default 1, or unlimited with `forMs`); Infinity: until cleared. */
  times?: number;
  /** It applies for this long from now, then is spent. */
  forMs?: number;
}

export interface RuleHandle {
  /** Requests it has applied to so far. */
  hits(): number;
  /** True once spent (its times used, its time over) or removed. */
  spent(): boolean;
  remove(): void;
}

export type Outcome = 'pending' | 'answered' | 'cut' | 'reset' | 'hung' | 'failed';

export interface Recorded extends Omit<RequestInfo, 'params'> {
  seq: number;
  /** The fault applied ('delay' for a delay alone). */
  fault?: Fault['kind'] | 'delay';
  /** The status the client was sent (none when cut before an answer). */
  status?: number;
  /** answered: the client got a whole answer; cut/reset: a fault cut it; hung: never answered; failed: the remote could not be reached, or a side went away. */
  outcome: Outcome;
  /** Whether the request was sent to the remote. */
  reachedRemote: boolean;
  /** Request body bytes read from the client, and sent to the remote. */
  bytesIn: number;
  bytesToRemote: number;
  /** Response body bytes sent to the client. */
  bytesOut: number;
  startedAt: number;
  endedAt?: number;
}

export interface FaultProxy {
  /** http://127.0.0.1:PORT: the endpoint clients use (and sign for). */
  url: string;
  port: number;
  target: string;
  /** Adds a rule; the first rule (in the order added) that matches a request and is not spent applies to it. */
  fault(rule: Rule): RuleHandle;
  /** Removes every rule (requests already held stay held). */
  clear(): void;
  /** The requests seen so far, oldest first (those matching `match`, if given). */
  requests(match?: Match): Recorded[];
  /** Forgets the recorded requests. */
  forget(): void;
  /** Connections accepted, and reset on arrival while down('reset'). */
  connections(): { accepted: number; reset: number };
  /**
   * The remote is down: 'refuse' (default) stops listening, so connections are refused; 'reset'
   * accepts connections and resets them at once. Either way open connections are reset and
   * requests in flight cut.
   */
  down(mode?: 'refuse' | 'reset'): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

const ERROR_TEXT: Record<number, [string, string]> = {
  500: ['InternalError', 'We encountered an internal error. Please try again.'],
  503: ['SlowDown', 'Please reduce your request rate.'],
};

function infoOf(req: http.IncomingMessage): RequestInfo {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q + 1);
  const rest = path.replace(/^\/+/, '');
  const slash = rest.indexOf('/');
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  const rawKey = slash < 0 ? '' : rest.slice(slash + 1);
  let key = rawKey;
  try {
    key = decodeURIComponent(rawKey);
  } catch {
    /* kept as sent */
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { method: req.method ?? 'GET', path, query, params: new URLSearchParams(query), bucket, key, headers };
}

const test = (want: string | RegExp, value: string) => (typeof want === 'string' ? want === value : want.test(value));

export function matches(m: Match | undefined, r: RequestInfo): boolean {
  if (m === undefined) return true;
  if (typeof m === 'function') return m(r);
  if (m.method !== undefined && !(Array.isArray(m.method) ? m.method : [m.method]).includes(r.method)) return false;
  if (m.path !== undefined && !test(m.path, r.path)) return false;
  if (m.bucket !== undefined && m.bucket !== r.bucket) return false;
  if (m.key !== undefined && !test(m.key, r.key)) return false;
  if (m.query !== undefined && !(typeof m.query === 'string' ? r.params.has(m.query) : m.query.test(r.query))) return false;
  for (const [name, want] of Object.entries(m.header ?? {})) {
    const v = r.headers[name.toLowerCase()];
    if (v === undefined || !test(want, v)) return false;
  }
  return true;
}

/** Resolves once everything written to `socket` has been handed to the kernel (at most `ms`). */
async function flushed(socket: net.Socket | null | undefined, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (socket && !socket.destroyed && (socket.connecting || socket.writableLength > 0) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 2));
  }
}

interface ActiveRule extends Rule {
  hits: number;
  until: number;
  removed: boolean;
}

/** `chunk`, which starts at byte `offset` of its body, with one bit of the body's byte `at` flipped (a copy; the same chunk when `at` is elsewhere). */
function flipped(chunk: Buffer, offset: number, at: number): Buffer {
  if (at < offset || at >= offset + chunk.length) return chunk;
  const copy = Buffer.from(chunk);
  copy[at - offset]! ^= 0x10;
  return copy;
}

export async function startFaultProxy(o: { target: string; port?: number }): Promise<FaultProxy> {
  const target = new URL(o.target);
  if (target.protocol !== 'http:') throw new Error(`startFaultProxy: the target must be http://, not ${o.target}`);
  const targetHost = target.hostname.replace(/^\[|\]$/g, '');
  const targetPort = Number(target.port || 80);

  let rules: ActiveRule[] = [];
  let records: Recorded[] = [];
  let seq = 0;
  let mode: 'up' | 'refuse' | 'reset' = 'up';
  let closed = false;
  const counts = { accepted: 0, reset: 0 };
  const sockets = new Set<net.Socket>();
  /** Each exchange in flight, ended at once by down() and close(). */
  const active = new Set<() => void>();

  const ruleLive = (r: ActiveRule) => !r.removed && r.hits < (r.times ?? (r.forMs !== undefined ? Infinity : 1)) && Date.now() < r.until;

  function pick(info: RequestInfo): ActiveRule | undefined {
    rules = rules.filter(ruleLive);
    const rule = rules.find((r) => matches(r.match, info));
    if (rule) rule.hits++;
    return rule;
  }

  const web = http.createServer({ requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 60_000 });
  web.keepAliveTimeout = 60_000;
  // A bug here must not pass for a remote's fault: it is thrown again, where the test runner sees it.
  const run = (req: http.IncomingMessage, res: http.ServerResponse, expectsContinue: boolean) =>
    exchange(req, res, expectsContinue).catch((e: unknown) => {
      req.socket.resetAndDestroy();
      setImmediate(() => {
        throw e;
      });
    });
  web.on('request', (req, res) => void run(req, res, false));
  // A client waiting for 100 Continue: the remote's 100 (or its refusal) is relayed, not made up here.
  web.on('checkContinue', (req, res) => void run(req, res, true));
  web.on('clientError', (_err, socket) => socket.destroy());

  const tcp = net.createServer((socket) => {
    counts.accepted++;
    if (mode === 'reset') {
      counts.reset++;
      socket.resetAndDestroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    web.emit('connection', socket);
  });

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(port, '127.0.0.1', () => {
        tcp.off('error', reject);
        resolve((tcp.address() as net.AddressInfo).port);
      });
    });
  const port = await listen(o.port ?? 0);

  async function exchange(req: http.IncomingMessage, res: http.ServerResponse, expectsContinue: boolean): Promise<void> {
    const info = infoOf(req);
    const { params: _params, ...seen } = info;
    const rec: Recorded = { seq: ++seq, ...seen, fault: undefined, status: undefined, outcome: 'pending', reachedRemote: false, bytesIn: 0, bytesToRemote: 0, bytesOut: 0, startedAt: Date.now(), endedAt: undefined };
    records.push(rec);
    const rule = pick(info);
    const fault = rule?.fault;
    if (rule) rec.fault = fault?.kind ?? 'delay';
    const client = req.socket;
    let remote: http.ClientRequest | undefined;
    let over = false;
    const finish = (outcome: Outcome) => {
      if (over) return;
      over = true;
      rec.outcome = outcome;
      rec.endedAt = Date.now();
      active.delete(abort);
    };
    /** The client's connection reset and the remote's ended: a network failure on both sides. */
    const cut = (outcome: Outcome) => {
      finish(outcome);
      if (!client.destroyed) client.resetAndDestroy();
      remote?.destroy();
    };
    const abort = () => cut(fault?.kind === 'hang' ? 'hung' : 'cut');
    active.add(abort);
    // The client went away (its own timeout, or a cut): the remote's side goes too.
    res.once('close', () => {
      if (!over) {
        remote?.destroy();
        finish(fault?.kind === 'hang' ? 'hung' : 'failed');
      }
    });

    if (rule?.delayMs) {
      await new Promise((r) => setTimeout(r, rule.delayMs));
      if (over) return;
    }
    if (rule?.holdUntil) {
      await rule.holdUntil.catch(() => {});
      if (over) return;
    }

    switch (fault?.kind) {
      case 'reset':
        return cut('reset');
      case 'hang':
        req.pause();
        return;
      case 'error':
        if (!fault.reachRemote) return answerError(fault, true);
        break;
      case 'cut-request':
        if (fault.reachRemote === false) {
          if (expectsContinue) res.writeContinue();
          return readThenCut(fault.afterBytes);
        }
        break;
    }

    // Forward the request as it came.
    rec.reachedRemote = true;
    const limit = fault?.kind === 'cut-request' ? fault.afterBytes : undefined;
    remote = http.request({ host: targetHost, port: targetPort, method: req.method, path: req.url, headers: req.rawHeaders, agent: false });
    remote.on('error', () => {
      if (!over) cut('failed');
    });
    remote.on('continue', () => {
      if (!over) res.writeContinue();
    });
    remote.on('response', (answer) => relay(answer));
    if (limit === 0) {
      remote.flushHeaders();
      await flushed(await socketOf(remote));
      return cut('cut');
    }
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      rec.bytesIn += chunk.length;
      if (limit !== undefined && rec.bytesToRemote + chunk.length >= limit) {
        const part = chunk.subarray(0, limit - rec.bytesToRemote);
        rec.bytesToRemote += part.length;
        req.pause();
        remote!.write(part, () => void flushed(remote!.socket).then(() => cut('cut')));
        return;
      }
      if (fault?.kind === 'flip-bit' && fault.in === 'request') chunk = flipped(chunk, rec.bytesToRemote, fault.at);
      rec.bytesToRemote += chunk.length;
      if (!remote!.write(chunk)) {
        req.pause();
        remote!.once('drain', () => req.resume());
      }
    });
    req.on('end', () => {
      if (over) return;
      if (limit === undefined) return void remote!.end();
      // A body no longer than the limit: all of it reached the remote; the cut comes now.
      void flushed(remote!.socket).then(() => cut('cut'));
    });

    function relay(answer: http.IncomingMessage): void {
      if (over) {
        answer.destroy();
        return;
      }
      // The remote went away mid-answer: so does the client's connection.
      answer.on('error', () => {
        if (!over) cut('failed');
      });
      answer.on('close', () => {
        if (!over && !answer.complete) cut('failed');
      });
      if (fault?.kind === 'drop-answer' || (fault?.kind === 'error' && fault.reachRemote)) {
        // The remote has acted; what it says is read and dropped.
        answer.resume();
        answer.on('end', () => {
          if (over) return;
          if (fault.kind === 'drop-answer') cut('cut');
          else answerError(fault, false);
        });
        return;
      }
      res.sendDate = false; // the remote's own Date is among its headers
      if (fault?.kind === 'answer-headers') {
        const replaced = new Set(Object.keys(fault.headers).map((h) => h.toLowerCase()));
        const kept = answer.rawHeaders.flatMap((v, i, all) => (i % 2 === 0 && !replaced.has(v.toLowerCase()) ? [v, all[i + 1]!] : []));
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, [...kept, ...Object.entries(fault.headers).flat()]);
      } else res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
      rec.status = answer.statusCode;
      const outLimit = fault?.kind === 'cut-response' ? fault.afterBytes : undefined;
      if (outLimit === 0) {
        res.flushHeaders();
        void flushed(client).then(() => cut('cut'));
        return;
      }
      // Set once the cut is under way: the answer's end, which may still come, must not end it whole.
      let cutting = false;
      answer.on('data', (chunk: Buffer) => {
        if (over || cutting) return;
        if (outLimit !== undefined && rec.bytesOut + chunk.length >= outLimit) {
          const part = chunk.subarray(0, outLimit - rec.bytesOut);
          rec.bytesOut += part.length;
          cutting = true;
          answer.pause();
          res.write(part, () => void flushed(client).then(() => cut('cut')));
          return;
        }
        if (fault?.kind === 'flip-bit' && fault.in === 'response') chunk = flipped(chunk, rec.bytesOut, fault.at);
        rec.bytesOut += chunk.length;
        if (!res.write(chunk)) {
          answer.pause();
          res.once('drain', () => answer.resume());
        }
      });
      answer.on('end', () => {
        if (over || cutting) return;
        res.end(() => finish('answered'));
      });
    }

    /** Reads `n` bytes of the body from the client (sending nothing on), then resets it. */
    function readThenCut(n: number): void {
      if (n === 0) return cut('cut');
      req.on('data', (chunk: Buffer) => {
        if (over) return;
        rec.bytesIn += chunk.length;
        if (rec.bytesIn >= n) {
          req.pause();
          cut('cut');
        }
      });
      req.on('end', () => cut('cut'));
    }

    /** S3's error answer; `unread`: the body has not been read (it is, first, unless the client waits for 100 Continue). */
    function answerError(f: Extract<Fault, { kind: 'error' }>, unread: boolean): void {
      const send = () => {
        if (over) return;
        const [code, message] = ERROR_TEXT[f.status] ?? ['InternalError', 'We encountered an internal error. Please try again.'];
        const requestId = randomBytes(8).toString('hex').toUpperCase();
        const hostId = randomBytes(24).toString('base64');
        const body = req.method === 'HEAD' ? '' : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${f.code ?? code}</Code><Message>${f.message ?? message}</Message><RequestId>${requestId}</RequestId><HostId>${hostId}</HostId></Error>`;
        rec.status = f.status;
        res.sendDate = true;
        res.writeHead(f.status, {
          'content-type': 'application/xml',
          'content-length': Buffer.byteLength(body),
          'x-amz-request-id': requestId,
          'x-amz-id-2': hostId,
          server: 'AmazonS3',
          connection: 'close',
        });
        rec.bytesOut = Buffer.byteLength(body);
        res.end(body, () => finish('answered'));
      };
      if (!unread || expectsContinue || req.readableEnded) return send();
      // Read the body first, as S3 does, so the client is not cut off mid-send.
      req.on('data', (chunk: Buffer) => (rec.bytesIn += chunk.length));
      req.on('end', send);
    }
  }

  function socketOf(r: http.ClientRequest): Promise<net.Socket> {
    return r.socket ? Promise.resolve(r.socket) : new Promise((resolve) => r.once('socket', resolve));
  }

  function endAll(): void {
    for (const abort of [...active]) abort();
    for (const s of sockets) s.resetAndDestroy();
  }

  const stopListening = () => new Promise<void>((resolve) => (tcp.listening ? tcp.close(() => resolve()) : resolve()));

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    target: o.target,
    fault(rule: Rule): RuleHandle {
      const r: ActiveRule = { ...rule, hits: 0, until: rule.forMs !== undefined ? Date.now() + rule.forMs : Infinity, removed: false };
      rules.push(r);
      return { hits: () => r.hits, spent: () => !ruleLive(r), remove: () => void (r.removed = true) };
    },
    clear() {
      for (const r of rules) r.removed = true;
      rules = [];
    },
    requests: (match?: Match) => records.filter((r) => matches(match, { ...r, params: new URLSearchParams(r.query) })).map((r) => ({ ...r })),
    forget() {
      records = [];
    },
    connections: () => ({ ...counts }),
    async down(how: 'refuse' | 'reset' = 'refuse') {
      mode = how;
      if (how === 'refuse') await Promise.all([stopListening(), Promise.resolve(endAll())]);
      else endAll();
    },
    async up() {
      if (closed) throw new Error('the proxy is closed');
      mode = 'up';
      if (!tcp.listening) await listen(port);
    },
    async close() {
      closed = true;
      mode = 'refuse';
      const stopped = stopListening();
      endAll();
      await stopped;
      web.close();
    },
  };
}
