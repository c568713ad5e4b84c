// swbucket/node: the HTTP server, the same handle() behind Node's http through @hono/node-server's
// Request/Response bridge. Data lives in memory (fake-indexeddb) and is gone when it stops.
// Both are optional peers (a browser app never needs them), loaded when a server starts.
import type { AddressInfo } from 'node:net';
import type { Server, ServerResponse } from 'node:http';
import { createHandler, type LogEntry } from '../sw/core/handler.ts';
import { openIdbStore } from '../sw/store/idb.ts';
import { DEFAULT_ENDPOINT } from '../protocol/instance.ts';

export interface ServerOptions {
  /** Default 9000; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Bucket hosts are `{bucket}.{endpoint}`; any other host is the service host (path style). Default `svc.localhost`. */
  endpoint?: string;
  /** One line per request; default: stdout. */
  log?: (line: string) => void;
}

export interface RunningServer {
  url: string;
  port: number;
  endpoint: string;
  close(): Promise<void>;
}

export function formatLogLine(e: LogEntry): string {
  const path = new URL(e.url).pathname + new URL(e.url).search;
  return [
    new Date(e.time).toISOString(), e.status, e.method, `${new URL(e.url).host}${path}`, e.operation || '-',
    e.code ?? '-', `in=${e.bytesIn}`, `out=${e.bytesOut}`, `${e.durationMs}ms`, `id=${e.requestId}`, e.accessKeyId ?? 'anonymous',
  ].join(' ');
}

/**
 * Node's Headers joins a repeated header with ", "; the signing rule joins repeated x-svc-*
 * headers with ",". Rebuild those from the raw headers (rare: only when one repeats).
 */
function joinRepeatedSvcHeaders(req: Request, raw: string[]): Request {
  const values = new Map<string, string[]>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (name.startsWith('x-svc-')) values.set(name, [...(values.get(name) ?? []), raw[i + 1]!.trim()]);
  }
  const repeated = [...values].filter(([, v]) => v.length > 1);
  if (repeated.length === 0) return req;
  const headers = new Headers(req.headers);
  for (const [name, v] of repeated) headers.set(name, v.join(','));
  return new Request(req, { headers });
}

const PEERS = '@hono/node-server fake-indexeddb';

/** An optional peer, or an error that says how to install it. */
async function peer<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    if ((e as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw e;
    throw new Error(`The swbucket server needs two packages that a browser app does not: npm install --save-dev ${PEERS}`);
  }
}

export async function startServer(o: ServerOptions = {}): Promise<RunningServer> {
  const [{ serve }, fake] = await Promise.all([peer(() => import('@hono/node-server')), peer(() => import('fake-indexeddb'))]);
  const { IDBFactory } = fake;
  // The store (and idb under it) use IndexedDB's classes as globals (IDBKeyRange, IDBRequest, …),
  // as in a browser; lend them where this process has none.
  for (const [name, value] of Object.entries(fake)) {
    if (name.startsWith('IDB') && !(name in globalThis)) Object.defineProperty(globalThis, name, { value, configurable: true, writable: true });
  }
  const endpoint = o.endpoint ?? DEFAULT_ENDPOINT;
  const store = await openIdbStore({ indexedDB: new IDBFactory(), name: 'swbucket' });
  const log = o.log ?? ((line: string) => console.log(line));
  const handle = createHandler({
    store,
    endpoint,
    anyHostIsService: true,
    onLog: (entry) => log(formatLogLine(entry)),
    onInternalError: (e) => console.error('internal error:', e),
  });
  const host = o.host ?? '127.0.0.1';
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({
      fetch: (req, env: { incoming: { rawHeaders: string[] } }) => handle(joinRepeatedSvcHeaders(req, env.incoming.rawHeaders)),
      port: o.port ?? 9000,
      hostname: host,
      overrideGlobalObjects: false,
    }, () => resolve(s as Server)) as Server;
    s.once('error', reject);
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
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    endpoint,
    close: () => new Promise<void>((resolve) => {
      server.close(() => {
        store.close();
        resolve();
      });
      server.closeAllConnections();
    }),
  };
}
