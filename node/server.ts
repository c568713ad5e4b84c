// swbucket/node: the HTTP server, the same handle() behind Node's http through @hono/node-server's
// Request/Response bridge. Data lives in memory (fake-indexeddb) and is gone when it stops, or with
// `dataDir` on disk in an LMDB environment (lmdb-store.ts) and kept across restarts.
// All three are optional peers (a browser app never needs them), loaded when a server starts.
import type { AddressInfo } from 'node:net';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHandler, finish, newRequestId, type LogEntry } from '../sw/core/handler.ts';
import { claimedAccessKeyId } from '../sw/core/auth.ts';
import { SvcError, errorResponse } from '../sw/core/errors.ts';
import { redactEntry } from '../sw/core/redact.ts';
import { openIdbStore } from '../sw/store/idb.ts';
import { sweepHeld } from '../sw/store/holders.ts';
import { DEFAULT_ENDPOINTS, type DialectName, type Endpoints } from '../protocol/instance.ts';
import { createReplicas, fetchMissingVia, readMissingRangeVia, tellReplicas, type ReplicaConfig, type Replicas } from '../sw/replica/replicas.ts';

/** Options of {@link startServer} (and of `swbucket serve`). */
export interface ServerOptions {
  /** Default 9000; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Bucket hosts are `{bucket}.{endpoint}`; any other host is the service host (path style). Default `svc.localhost`. */
  endpoint?: string;
  /** The S3 and NOS dialects' hosts, for virtual-host requests: default `s3.localhost`, `nos.localhost`. */
  endpoints?: { s3?: string; nos?: string };
  /**
   * The dialect of an unsigned request to a host that is no dialect's (the server's own address,
   * path style): a signed request speaks its signature's. Default 'svc'.
   */
  dialect?: DialectName;
  /** One line per request; default: stdout. */
  log?: (line: string) => void;
  /**
   * Keep the data in this directory (created when missing; one server at a time), durably: a write
   * is on disk before its answer. Default: in memory, gone when the server stops.
   */
  dataDir?: string;
  /** How long a request body may stop arriving before it is answered 400 RequestTimeout, in ms. Default 20,000. */
  bodyIdleMs?: number;
  /**
   * Buckets kept as replicas of remote S3 buckets (sw/replica/): each synced at start, soon after a
   * write, on a timer and on demand (`server.replicas.syncNow()`). Replicas added before are kept
   * with the data (`dataDir`) and start again with it.
   */
  replicas?: ReplicaConfig[];
}

/** A server {@link startServer} started. */
export interface RunningServer {
  /** Its URL, e.g. `http://127.0.0.1:9000`: the endpoint for swbucket/client in Node. */
  url: string;
  /** The port it listens on (the one picked, for port 0). */
  port: number;
  /** The service host for virtual-host addressing (`{bucket}.{endpoint}`). */
  endpoint: string;
  /** Each dialect's host (`svc` is `endpoint`). */
  endpoints: Endpoints;
  /** The directory the data is kept in (absolute), or undefined when it lives in memory. */
  dataDir: string | undefined;
  /**
   * Set when this start upgraded the data directory from the layout an earlier swbucket wrote
   * (its number): the data is read as before; an earlier swbucket can no longer open it.
   */
  dataUpgradedFrom?: number;
  /** The server's replicas: add, syncNow, status, conflicts, pause and resume them. */
  replicas: Replicas;
  /** Stops accepting requests, finishes those under way and closes the store (the data directory is free again). */
  close(): Promise<void>;
}

/** The stdout line of a request; never a signature (redact.ts), whoever built the entry. */
export function formatLogLine(entry: LogEntry): string {
  const e = redactEntry(entry);
  // The URL as logged, host and path and query, without its scheme (not re-parsed: `…` stays `…`).
  const where = e.url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  return [
    new Date(e.time).toISOString(), e.status, e.method, where, e.operation || '-',
    e.code ?? '-', `in=${e.bytesIn}`, `out=${e.bytesOut}`, `${e.durationMs}ms`, `id=${e.requestId}`, e.accessKeyId ?? 'anonymous',
  ].join(' ');
}

/**
 * Log lines to stdout, the lines of one turn of the event loop in one write: under load a write
 * per request (a system call each, stdout being a pipe or a file) cost as much as the hashing of a
 * 1 KiB PUT (issue 13). A line is out before the next turn, so a `tail -f` sees it at once.
 */
function stdoutLines(): { write(line: string): void; flush(): void } {
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const text = pending.join('\n') + '\n';
    pending = [];
    process.stdout.write(text);
  };
  return {
    write(line) {
      if (pending.push(line) === 1) setImmediate(flush);
    },
    flush,
  };
}

/** What a failure's answer and log line need of Node's request. */
type Incoming = Pick<IncomingMessage, 'method' | 'url' | 'headers' | 'rawHeaders'>;
type Outgoing = Pick<ServerResponse, 'headersSent' | 'writeContinue'>;

/**
 * A request's body as the handler reads it, watched: a body whose next bytes do not come within
 * `idleMs` errors with 400 RequestTimeout (as S3 answers one that stalls), so a client that stops
 * sending mid-body is answered, instead of holding the request until Node's own timeout (300 s).
 * With `continueTo` (`Expect: 100-continue`), the 100 goes out when the handler first reads the
 * body, so a request refused before that (a bad signature, no such bucket, no permission) is
 * answered without its body ever crossing the network, as S3 does.
 */
function watchedBody(req: Request, idleMs: number, continueTo?: Outgoing): { request: Request; continued: () => boolean } {
  if (req.body === null) return { request: req, continued: () => true };
  const reader = req.body.getReader();
  let continued = continueTo === undefined;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!continued) {
        continued = true;
        if (!continueTo!.headersSent) continueTo!.writeContinue();
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stalled = new Promise<'stalled'>((resolve) => {
        timer = setTimeout(() => resolve('stalled'), idleMs);
      });
      try {
        const next = await Promise.race([reader.read(), stalled]);
        if (next === 'stalled') {
          reader.cancel().catch(() => {});
          controller.error(new SvcError('RequestTimeout', `Your socket connection to the server was not read from or written to within ${idleMs / 1000} s: the body stopped arriving.`));
        } else if (next.done) controller.close();
        else controller.enqueue(next.value);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 }); // nothing is pulled before the handler asks
  const init: RequestInit & { duplex: 'half' } = { method: req.method, headers: req.headers, body, signal: req.signal, duplex: 'half' };
  return { request: new Request(req.url, init), continued: () => continued };
}

/** Raw header pairs as the request log keeps them (names lower-cased). */
function headerPairs(raw: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!.toLowerCase(), raw[i + 1]!]);
  return out;
}

const PEERS = '@hono/node-server fake-indexeddb lmdb';

/** An optional peer, or an error that says how to install it. */
async function peer<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    if ((e as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw e;
    throw new Error(`The swbucket server needs packages that a browser app does not: npm install --save-dev ${PEERS}`);
  }
}

/**
 * The service over HTTP in Node, on the same handler as the worker: for tests, scripts and
 * clients that cannot run a page (boto3, curl). In memory unless `dataDir` is given.
 *
 * @example
 * import { startServer } from 'swbucket/node';
 * const server = await startServer({ port: 0 });
 * // createClient({ endpoint: server.url, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' })
 * await server.close();
 */
export async function startServer(o: ServerOptions = {}): Promise<RunningServer> {
  const [{ getRequestListener, RequestError }, fake] = await Promise.all([peer(() => import('@hono/node-server')), peer(() => import('fake-indexeddb'))]);
  const { IDBFactory } = fake;
  // The store (and idb under it) use IndexedDB's classes as globals (IDBKeyRange, IDBRequest, …),
  // as in a browser; lend them where this process has none.
  for (const [name, value] of Object.entries(fake)) {
    if (name.startsWith('IDB') && !(name in globalThis)) Object.defineProperty(globalThis, name, { value, configurable: true, writable: true });
  }
  const endpoints: Endpoints = {
    svc: o.endpoint ?? DEFAULT_ENDPOINTS.svc, s3: o.endpoints?.s3 ?? DEFAULT_ENDPOINTS.s3, nos: o.endpoints?.nos ?? DEFAULT_ENDPOINTS.nos,
  };
  const endpoint = endpoints.svc;
  const store = o.dataDir === undefined
    ? await openIdbStore({ indexedDB: new IDBFactory(), name: 'swbucket' })
    : await (await peer(() => import('./lmdb-store.ts'))).openLmdbStore({ path: o.dataDir });
  // What an import stopped by a kill had stored is nobody's: this process is the directory's only one.
  await sweepHeld(store);
  const stdout = o.log ? null : stdoutLines();
  const log = o.log ?? stdout!.write;
  const report = (e: unknown) => console.error('internal error:', e);
  const replicas = createReplicas({ store });
  const handle = createHandler({
    store,
    endpoints,
    ...(o.dialect ? { dialect: o.dialect } : {}),
    anyHostIsService: true,
    onLog: (entry) => {
      log(formatLogLine(entry));
      tellReplicas(replicas, entry);
    },
    onInternalError: report,
    fetchMissing: fetchMissingVia(replicas), readMissingRange: readMissingRangeVia(replicas),
  });
  const host = o.host ?? '127.0.0.1';

  /**
   * A failure around handle(), which itself never throws: in the bridge from Node's request (a
   * Host or path it cannot turn into a URL: 400) or anything unexpected (500). @hono/node-server
   * would answer either with a bare status; this is the service's XML answer instead, with a
   * request id, the common headers and a log line.
   */
  function failed(incoming: Incoming | undefined, error: unknown): Response {
    const started = Date.now();
    const unreadable = error instanceof RequestError;
    if (!unreadable) report(error);
    const err = unreadable
      ? new SvcError('InvalidArgument', `The request cannot be read: ${error.message}.`)
      : new SvcError('InternalError');
    const requestId = newRequestId();
    const method = incoming?.method ?? 'GET';
    const res = finish(errorResponse(err, '', requestId, method), method, requestId, Date.now());
    try {
      const url = `http://${incoming?.headers.host ?? host}${incoming?.url ?? ''}`;
      let accessKeyId: string | undefined;
      try {
        const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
        accessKeyId = claimedAccessKeyId(new Headers(incoming?.headers.authorization ? { authorization: incoming.headers.authorization } : {}), new URLSearchParams(query));
      } catch {
        // an Authorization header Headers refuses names no key
      }
      log(formatLogLine({
        time: started, requestId, method, url, operation: '', bucket: '', key: '', status: res.status, code: err.code,
        bytesIn: 0, bytesOut: method === 'HEAD' ? 0 : Number(res.headers.get('content-length') ?? 0) || 0,
        durationMs: Date.now() - started, ...(accessKeyId !== undefined ? { accessKeyId } : {}),
        requestHeaders: headerPairs(incoming?.rawHeaders ?? []), responseHeaders: [...res.headers],
      }));
    } catch {
      // logging must never break an answer
    }
    return res;
  }

  /** The request @hono/node-server is turning into a Request (its errorHandler is not told which). */
  let reading: IncomingMessage | undefined;
  /** Requests sent with `Expect: 100-continue` (watchedBody). */
  const expectingContinue = new WeakSet<object>();
  const listener = getRequestListener(
    async (req: Request, env: { incoming: Incoming; outgoing: Outgoing }) => {
      // The replicas' rounds give way while clients' requests are answered.
      const answered = replicas.localRequest();
      try {
        const gated = watchedBody(req, o.bodyIdleMs ?? 20_000, expectingContinue.has(env.incoming) ? env.outgoing : undefined);
        const res = await handle(gated.request);
        // Refused before its body was asked for: the client may still send that body, which must
        // not be read as the next request on this connection.
        if (!gated.continued()) res.headers.set('connection', 'close');
        // A client that asked to close after this answer is not kept waiting for the idle timeout
        // (every answer says keep-alive otherwise, docs/protocol.md).
        if (/(^|,)\s*close\s*(,|$)/i.test(env.incoming.headers.connection ?? '')) res.headers.set('connection', 'close');
        return res;
      } catch (e) {
        return failed(env.incoming, e);
      } finally {
        answered();
      }
    },
    // Called, synchronously within the listener call below, when no Request can be made at all.
    { hostname: host, overrideGlobalObjects: false, errorHandler: (e) => failed(reading, e) },
  );
  const answer = (incoming: IncomingMessage, outgoing: ServerResponse) => {
    reading = incoming;
    try {
      void listener(incoming, outgoing);
    } finally {
      reading = undefined;
    }
  };
  const server = await new Promise<Server>((resolve, reject) => {
    const s = createServer(answer);
    // Node would answer `Expect: 100-continue` with a 100 at once; it waits for the handler instead.
    s.on('checkContinue', (incoming, outgoing) => {
      expectingContinue.add(incoming);
      answer(incoming, outgoing);
    });
    // Node answers 417 to an Expect other than 100-continue before any handler sees it; S3 ignores
    // what it does not expect, so the request goes to the handler as any other.
    s.on('checkExpectation', answer);
    s.once('error', reject);
    s.listen(o.port ?? 9000, host, () => resolve(s));
  }).catch(async (e: unknown) => {
    await store.close(); // the data directory is free again for the next attempt
    throw e;
  });
  // A client that closes its side mid-body (Content-Length 10, 5 bytes sent) makes Node's parser
  // fail; by default Node then answers a bare 400 and drops the socket before the handler can say
  // IncompleteBody. When a request is being answered, end its body stream where the bytes stopped
  // (the handler then sees the short body) and let the handler's response go out.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    const answering = (socket as { _httpMessage?: ServerResponse })._httpMessage;
    if (answering && !answering.headersSent && socket.writable && answering.req && !answering.req.complete) {
      // Marked complete, the message ends without Node tearing the socket down with it.
      answering.req.complete = true;
      answering.req.push(null);
      answering.once('finish', () => socket.end());
      return;
    }
    if (socket.writable && err.code !== 'ECONNRESET') socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    socket.destroy();
  });
  const port = (server.address() as AddressInfo).port;
  // Replicas kept with the data start again; those given now are added (or updated).
  for (const r of o.replicas ?? []) await replicas.add(r);
  await replicas.start();
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    endpoint,
    endpoints,
    dataDir: 'path' in store ? store.path : undefined,
    ...('upgradedFrom' in store && store.upgradedFrom !== undefined ? { dataUpgradedFrom: store.upgradedFrom } : {}),
    replicas,
    close: () => new Promise<void>((resolve) => {
      replicas.stop();
      server.close(() => {
        stdout?.flush();
        // On disk, closing waits for writes in flight and releases the directory.
        void Promise.resolve(store.close()).catch(report).finally(resolve);
      });
      server.closeAllConnections();
    }),
  };
}
