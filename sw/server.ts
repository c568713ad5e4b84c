// The HTTP server: the same handle() behind Node's http, through @hono/node-server's
// Request/Response bridge. Data lives in memory (fake-indexeddb) and is gone when it stops.
//   npm run serve [-- --port 9000 --host 127.0.0.1 --endpoint svc.localhost]
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { serve, type HttpBindings } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Server, ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { createHandler, type LogEntry } from './core/handler.ts';
import { openIdbStore } from './store/idb.ts';

export interface ServerOptions {
  port?: number;
  host?: string;
  endpoint?: string;
  /** One line per request; default: stdout. */
  log?: (line: string) => void;
}

export interface RunningServer {
  url: string;
  port: number;
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

export async function startServer(o: ServerOptions = {}): Promise<RunningServer> {
  const store = await openIdbStore({ indexedDB: new IDBFactory(), name: 'swbucket' });
  const log = o.log ?? ((line: string) => console.log(line));
  const handle = createHandler({
    store,
    ...(o.endpoint ? { endpoint: o.endpoint } : {}),
    anyHostIsService: true,
    onLog: (entry) => log(formatLogLine(entry)),
    onInternalError: (e) => console.error('internal error:', e),
  });
  const host = o.host ?? '127.0.0.1';
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({
      fetch: (req, env) => handle(joinRepeatedSvcHeaders(req, (env as HttpBindings).incoming.rawHeaders)),
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
    url: `http://${host}:${port}`,
    port,
    close: () => new Promise<void>((resolve) => {
      server.close(() => {
        store.close();
        resolve();
      });
      server.closeAllConnections();
    }),
  };
}

function argValue(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i >= 0) return args[i + 1];
  return args.find((a) => a.startsWith(name + '='))?.slice(name.length + 1);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const portText = argValue(args, '--port') ?? process.env.PORT ?? '9000';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`swbucket: invalid port "${portText}"`);
    process.exit(2);
  }
  const endpoint = argValue(args, '--endpoint') ?? 'svc.localhost';
  const running = await startServer({ port, host: argValue(args, '--host') ?? '127.0.0.1', endpoint });
  console.log(`swbucket listening on ${running.url} (data in memory, gone when it stops)`);
  console.log(`  virtual host: curl -H 'Host: photos.${endpoint}' ${running.url}/key`);
  console.log(`  path style:   ${running.url}/photos/key`);
  console.log('  root credentials: svcadmin / svcadmin-secret');
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`swbucket: ${signal}, stopping`);
    setTimeout(() => process.exit(1), 5000).unref();
    void running.close().then(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => {
    console.error('swbucket:', e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
