// handle(request) → response: the whole service as one runtime-neutral function over a Store.
// The service worker, the HTTP server and the tests are thin adapters around it.
import { checkListingParams, resolveAddress } from './address.ts';
import type { Target } from '../../protocol/address.ts';
import { authenticate, claimedAccessKeyId } from './auth.ts';
import { SvcError, asSvcError, errorResponse } from './errors.ts';
import { httpDate } from './http.ts';
import { findRoute } from './routes.ts';
import type { Context } from './context.ts';
import type { Store } from '../store/types.ts';
import { redactEntry } from './redact.ts';

export interface LogEntry {
  time: number;
  requestId: string;
  method: string;
  url: string;
  /** Operation name from the dispatch table, e.g. PutObject; '' when none was found. */
  operation: string;
  bucket: string;
  key: string;
  status: number;
  /** Error code, when the response is an error. */
  code?: string;
  bytesIn: number;
  bytesOut: number;
  durationMs: number;
  /** The access key the request signed with, or claimed to when it was refused; absent when anonymous. */
  accessKeyId?: string;
  requestHeaders: [string, string][];
  responseHeaders: [string, string][];
}

/** What the runtime offers for work that outlives the response (a service worker's waitUntil). */
export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
}

export interface HandlerOptions {
  store: Store;
  /** Service host; bucket hosts are `{bucket}.{endpoint}`. */
  endpoint?: string;
  /** Path on the page's own origin that stands for the service host. */
  mount?: string;
  /** A host that is not the endpoint's is the service host (the HTTP server on 127.0.0.1). */
  anyHostIsService?: boolean;
  /** 'body' where the runtime withholds Content-Length (the browser): the body's length stands in. */
  contentLength?: 'header' | 'body';
  /**
   * Called once per request after the response is made. A returned promise is handed to the
   * execution context's waitUntil, so logging never delays the answer.
   */
  onLog?: (entry: LogEntry) => void | Promise<void>;
  /** Called with anything unexpected that became a 500. */
  onInternalError?: (error: unknown) => void;
}

/** Headers every response exposes to a cross-origin page, beyond the x-svc-* ones it carries. */
const EXPOSED = [
  'ETag', 'Content-Range', 'Accept-Ranges', 'Content-Disposition', 'Content-Length', 'Content-Type', 'Last-Modified',
  'Content-Encoding', 'Content-Language', 'Cache-Control', 'Expires', 'Location',
  'x-svc-request-id', 'x-svc-version-id', 'x-svc-acl', 'x-svc-object-md5',
];

export function newRequestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('').toUpperCase();
}

function preflight(req: Request): Response {
  return new Response(null, {
    status: 200,
    headers: {
      'access-control-allow-methods': 'GET, HEAD, PUT, POST, DELETE',
      'access-control-allow-headers': req.headers.get('access-control-request-headers') ?? '*',
      'access-control-max-age': '86400',
    },
  });
}

/** Operations that answer with a stored object (its bytes, or only its headers). */
const OBJECT_READS = new Set(['GetObject', 'HeadObject']);

/**
 * A stored HTML or SVG opened from the page-origin mount is served by the page's own origin:
 * sandboxed, it runs in an opaque origin and cannot reach that origin's storage or service.
 */
function sandbox(res: Response): Response {
  res.headers.set('x-content-type-options', 'nosniff');
  res.headers.set('content-security-policy', 'sandbox');
  return res;
}

/**
 * The headers of docs/protocol.md, "Every response", and no body where HTTP allows none. Also for
 * an adapter's own answers (the worker's 503), so they too carry CORS and a request id.
 */
export function finish(res: Response, method: string, requestId: string, now: number): Response {
  if (res.body !== null && (method === 'HEAD' || res.status === 204 || res.status === 304)) {
    res = new Response(null, { status: res.status, headers: res.headers });
  }
  const h = res.headers;
  h.set('x-svc-request-id', requestId);
  h.set('date', httpDate(now));
  h.set('connection', 'keep-alive');
  h.set('server', 'swbucket');
  h.set('access-control-allow-origin', '*');
  const own = [...h.keys()].filter((n) => n.startsWith('x-svc-meta-'));
  h.set('access-control-expose-headers', [...EXPOSED, ...own].join(', '));
  return res;
}

export type Handle = (request: Request, context?: ExecutionContext) => Promise<Response>;

export function createHandler(options: HandlerOptions): Handle {
  const endpoint = options.endpoint ?? 'svc.localhost';
  const address = { endpoint, mount: options.mount ?? '/svc/', anyHostIsService: options.anyHostIsService ?? false };
  const now = Date.now;

  return async function handle(req: Request, context?: ExecutionContext): Promise<Response> {
    const started = now();
    const requestId = newRequestId();
    let target: Target | null = null;
    let operation = '';
    let ctx: Context | undefined;
    let code: string | undefined;
    let res: Response;
    // Common headers on every answer; an object read's also sandboxed, whatever its status.
    const complete = (r: Response): Response => finish(OBJECT_READS.has(operation) ? sandbox(r) : r, req.method, requestId, now());
    try {
      const url = new URL(req.url);
      if (req.method === 'OPTIONS') {
        res = preflight(req);
      } else {
        target = resolveAddress(url, address);
        if (!target) throw new SvcError('InvalidArgument', `${url.host} is not a host of this service.`);
        checkListingParams(url);
        const route = findRoute(req.method, target, url.searchParams, req.headers);
        operation = route.name;
        const caller = await authenticate({
          method: req.method, headers: req.headers, query: url.searchParams, target, store: options.store, now: now(),
        });
        ctx = {
          req, query: url.searchParams, bucket: target.bucket, key: target.key, caller,
          store: options.store, now, endpoint, contentLength: options.contentLength ?? 'header',
          bytesIn: 0,
        };
        res = await route.op(ctx);
      }
      res = complete(res);
    } catch (e) {
      let err = asSvcError(e);
      if (!err) {
        try {
          options.onInternalError?.(e);
        } catch {
          // a failing reporter must not turn the 500 into something else
        }
        err = new SvcError('InternalError');
      }
      code = err.code;
      const resource = target ? (target.kind === 'service' ? '/' : `/${target.bucket}/${target.key}`) : '';
      res = complete(errorResponse(err, resource, requestId, req.method));
    }
    if (options.onLog) {
      try {
        // Also on a refused request, the key it claimed; never a signature (redact.ts).
        const accessKeyId = ctx?.caller?.accessKeyId ?? claimedAccessKeyId(req.headers, new URL(req.url).searchParams);
        const logged = options.onLog(redactEntry({
          time: started,
          requestId,
          method: req.method,
          url: req.url,
          operation,
          bucket: target?.bucket ?? '',
          key: target?.key ?? '',
          status: res.status,
          ...(code ? { code } : {}),
          bytesIn: ctx?.bytesIn ?? 0,
          bytesOut: res.body === null ? 0 : Number(res.headers.get('content-length') ?? 0) || 0,
          durationMs: now() - started,
          ...(accessKeyId !== undefined ? { accessKeyId } : {}),
          requestHeaders: [...req.headers],
          responseHeaders: [...res.headers],
        }));
        if (logged) context?.waitUntil(logged.catch(() => {}));
      } catch {
        // logging must never break an answer
      }
    }
    return res;
  };
}
