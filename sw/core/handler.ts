// handle(request) → response: the whole service as one runtime-neutral function over a Store.
// The service worker, the HTTP server and the tests are thin adapters around it.
import { checkListingParams, hostDialect, resolveAddress } from './address.ts';
import type { Target } from '../../protocol/address.ts';
import { authenticate, claimedAccessKeyId } from './auth.ts';
import { SvcError, asSvcError, errorResponse } from './errors.ts';
import { httpDate } from './http.ts';
import { findRoute } from './routes.ts';
import { DEFAULT_ENDPOINTS, DIALECTS, signatureDialect, type Dialect, type DialectName, type Endpoints } from './dialect.ts';
import { applyCors, corsPreflight, guardedHeaders } from './cors.ts';
import type { Context, ReadMissingRange } from './context.ts';
import type { CorsRule, Store } from '../store/types.ts';
import { NotFetchedError } from '../store/errors.ts';
import { redactEntry } from './redact.ts';

export interface LogEntry {
  time: number;
  requestId: string;
  method: string;
  url: string;
  /** Operation name from the dispatch table, e.g. PutObject; '' when none was found. */
  operation: string;
  /** The dialect the request spoke (dialect.ts); absent in entries an earlier swbucket logged. */
  dialect?: DialectName;
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
  /** SVC's service host; bucket hosts are `{bucket}.{endpoint}`. The same as `endpoints.svc`. */
  endpoint?: string;
  /** Each dialect's service host; default `svc.localhost`, `nos.localhost`, `s3.localhost`. */
  endpoints?: Partial<Endpoints>;
  /** The dialect of an unsigned request to a host that is no dialect's (the mount, the server's own address). Default 'svc'. */
  dialect?: DialectName;
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
  /**
   * How an S3 answer a bucket's CORS rules do not allow reaches the page. 'headers' (default):
   * without CORS headers, and the browser keeps it from the page. 'network-error': a service
   * worker's own answers pass no browser CORS check, so the refusal is a network error there, as
   * the page would meet it in production, and the rules are checked as a preflight would check them.
   */
  corsRefusal?: 'headers' | 'network-error';
  /**
   * Fetches the bytes of an object a replica in the read-through `cache` mode only lists
   * (sw/replica/), so that a request that needs them runs again; rejects with an SvcError
   * (ServiceUnavailable) when the remote cannot give them.
   */
  fetchMissing?: (bucket: string, key: string) => Promise<void>;
  /**
   * A range of a large object a `cache`-mode replica only lists, read from the remote, so that a
   * player or a ranged download starts without waiting for the whole (fetched meanwhile).
   */
  readMissingRange?: ReadMissingRange;
}

/** How many objects a request may fetch on the way (a GET one; an export of a cache bucket could need many). */
const FETCHES_PER_REQUEST = 3;

/** Headers every response exposes to a cross-origin page, beyond the dialect's own ones it carries. */
const EXPOSED = [
  'ETag', 'Content-Range', 'Accept-Ranges', 'Content-Disposition', 'Content-Length', 'Content-Type', 'Last-Modified',
  'Content-Encoding', 'Content-Language', 'Cache-Control', 'Expires', 'Location',
];
const OWN_EXPOSED = ['request-id', 'version-id', 'acl', 'object-md5'];
const S3_EXPOSED = ['x-amz-id-2', 'x-amz-delete-marker', 'x-amz-checksum-crc32', 'x-amz-checksum-crc32c', 'x-amz-checksum-sha1', 'x-amz-checksum-sha256'];

export function newRequestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('').toUpperCase();
}

function preflight(req: Request): Response {
  return new Response(null, {
    status: 200,
    headers: {
      'access-control-allow-methods': 'GET, HEAD, PUT, POST, DELETE',
      // A page's own request: answered for any origin, never with credentials.
      'access-control-allow-headers': req.headers.get('access-control-request-headers') ?? '*',
      'access-control-max-age': '86400',
    },
  });
}

/**
 * The origin of a page's cross-origin request: its Origin header, or where a service worker does
 * not see that header, its referrer's origin. Null for a request that is not a page's CORS request.
 */
function requestOrigin(req: Request, url: URL): string | null {
  let origin = req.headers.get('origin');
  if (origin === null && req.mode === 'cors') {
    try {
      const from = new URL(req.referrer);
      if (from.protocol === 'http:' || from.protocol === 'https:') origin = from.origin;
    } catch {
      // no referrer (or a policy that sends none): nothing to go by
    }
  }
  return origin === null || origin === url.origin ? null : origin;
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

const bodiless = (method: string, status: number) => method === 'HEAD' || status === 204 || status === 304;

/**
 * The headers of docs/protocol.md, "Every response", and no body where HTTP allows none. Also for
 * an adapter's own answers (the worker's 503), so they too carry CORS and a request id.
 */
export function finish(res: Response, method: string, requestId: string, now: number, dialect: Dialect = DIALECTS.svc): Response {
  // `res.body` is read only where a body must go: in WebKit, once a worker has asked for a Blob
  // answer's body stream, the worker reads the Blob and sends it on chunk by chunk, instead of
  // handing the Blob itself to the browser.
  if (bodiless(method, res.status) && res.body !== null) {
    res = new Response(null, { status: res.status, headers: res.headers });
  }
  const h = res.headers;
  const p = dialect.prefix;
  h.set(`${p}request-id`, requestId);
  // S3's second request id: clients log it beside the first; here there is one runtime to name.
  if (dialect.name === 's3') h.set('x-amz-id-2', requestId);
  h.set('date', httpDate(now));
  h.set('connection', 'keep-alive');
  h.set('server', 'swbucket');
  // A preflight a bucket's CORS rules answered (cors.ts) keeps what they granted; one refused grants nothing.
  if (h.has('access-control-allow-origin') || (method === 'OPTIONS' && res.status >= 400)) return res;
  h.set('access-control-allow-origin', '*');
  const meta = [...h.keys()].filter((n) => n.startsWith(`${p}meta-`));
  const exposed = [...EXPOSED, ...OWN_EXPOSED.map((n) => p + n), ...(dialect.name === 's3' ? S3_EXPOSED : []), ...meta];
  h.set('access-control-expose-headers', exposed.join(', '));
  return res;
}

export type Handle = (request: Request, context?: ExecutionContext) => Promise<Response>;

export function createHandler(options: HandlerOptions): Handle {
  const endpoints: Endpoints = {
    ...DEFAULT_ENDPOINTS,
    ...options.endpoints,
    ...(options.endpoint !== undefined ? { svc: options.endpoint } : {}),
  };
  const address = { endpoints, mount: options.mount ?? '/svc/', anyHostIsService: options.anyHostIsService ?? false };
  const fallbackDialect = options.dialect ?? 'svc';
  const now = Date.now;

  return async function handle(req: Request, context?: ExecutionContext): Promise<Response> {
    const started = now();
    const requestId = newRequestId();
    let target: Target | null = null;
    let operation = '';
    let ctx: Context | undefined;
    let code: string | undefined;
    let res: Response;
    let dialect = DIALECTS[fallbackDialect];
    // Common headers on every answer; an object read's also sandboxed, whatever its status.
    const complete = (r: Response): Response => finish(OBJECT_READS.has(operation) ? sandbox(r) : r, req.method, requestId, now(), dialect);
    /** The CORS rules of the bucket a URL names, if it names one that has them. */
    const bucketCors = async (url: URL): Promise<CorsRule[] | undefined> => {
      let named: Target | null;
      try {
        named = resolveAddress(url, address);
      } catch {
        return undefined;
      }
      return named && named.kind !== 'service' ? (await options.store.getBucket(named.bucket))?.cors : undefined;
    };
    /**
     * The CORS rules that govern this request's answer: an S3 request from a page of another
     * origin to a bucket that has them, read before the request runs, as a preflight would have
     * read them (a PutBucketCors is answered under the rules it replaces).
     */
    let corsRules: { rules: CorsRule[]; origin: string } | undefined;
    const readBucketCors = async (url: URL): Promise<void> => {
      if (dialect.name !== 's3' || !target || target.kind === 'service') return;
      const origin = requestOrigin(req, url);
      if (origin === null) return;
      const rules = (await options.store.getBucket(target.bucket))?.cors;
      if (rules) corsRules = { rules, origin };
    };
    /** The answer under those rules: their CORS headers, or none (or in a worker, a network error). */
    const withBucketCors = (r: Response): Response => {
      if (!corsRules) return r;
      const inWorker = options.corsRefusal === 'network-error';
      const allowed = applyCors(r, corsRules.rules, corsRules.origin, req.method, inWorker ? guardedHeaders(req.headers) : []);
      if (allowed) return allowed;
      if (!inWorker) return r;
      void r.body?.cancel().catch(() => {});
      code = 'CORSNotAllowed';
      return Response.error();
    };
    /**
     * The operation, run again after fetching an object a cache-mode replica only lists. Only one
     * that reads no request body runs twice — a GET, a HEAD, a copy, a move — and nothing is cloned
     * for it (in a worker, where Content-Length is withheld, a clone of every PUT would hold its body twice).
     */
    const runsTwice = req.method === 'GET' || req.method === 'HEAD' || [...req.headers.keys()].some((name) => /^x-(amz|svc|nos)-(copy|move)-source$/.test(name));
    const runFetching = async (op: (ctx: Context) => Promise<Response>, c: Context): Promise<Response> => {
      for (let fetched = 0; ; fetched++) {
        try {
          return await op(c);
        } catch (e) {
          if (!(e instanceof NotFetchedError) || !options.fetchMissing || !runsTwice || fetched === FETCHES_PER_REQUEST) throw e;
          await options.fetchMissing(e.bucket, e.key);
        }
      }
    };
    try {
      const url = new URL(req.url);
      // The signature's dialect, else the host's: a client signs in the dialect it speaks.
      // (Chosen before the address is checked: a bad bucket name is refused in the dialect spoken.)
      dialect = DIALECTS[signatureDialect(req.headers, url.searchParams, req.method) ?? hostDialect(url, endpoints) ?? fallbackDialect];
      if (req.method === 'OPTIONS') {
        // A bucket with CORS rules answers its preflights by them; any other preflight is allowed.
        const rules = await bucketCors(url);
        if (!rules && dialect.name === 's3' && (!req.headers.has('origin') || !req.headers.has('access-control-request-method'))) {
          // S3 answers an OPTIONS that is no preflight as a bad request.
          throw new SvcError('BadRequest', 'Insufficient information. Origin and Access-Control-Request-Method are needed for a CORS preflight.');
        }
        res = rules ? corsPreflight(rules, req) : preflight(req);
      } else {
        target = resolveAddress(url, address);
        if (!target) throw new SvcError('InvalidArgument', `${url.host} is not a host of this service.`);
        checkListingParams(url);
        await readBucketCors(url);
        const route = findRoute(req.method, target, url.searchParams, req.headers, dialect);
        operation = route.name;
        let bodyRead: Blob | undefined;
        const withheldLength = async (): Promise<number> => {
          if (req.method === 'GET' || req.method === 'HEAD') return 0;
          try {
            bodyRead = await req.blob();
          } catch {
            throw new SvcError('IncompleteBody', 'The request body could not be read to its end.');
          }
          return bodyRead.size;
        };
        const { caller, payload } = await authenticate({
          method: req.method, headers: req.headers, query: url.searchParams, url, target, store: options.store, now: now(), dialect,
          ...(options.contentLength === 'body' ? { withheldLength } : {}),
        });
        ctx = {
          req, query: url.searchParams, bucket: target.bucket, key: target.key, caller,
          store: options.store, now, endpoint: endpoints[dialect.name], dialect, contentLength: options.contentLength ?? 'header',
          bytesIn: 0, ...(payload ? { payload } : {}), ...(bodyRead ? { bodyRead } : {}),
          ...(options.readMissingRange ? { readMissingRange: options.readMissingRange } : {}),
        };
        res = await runFetching(route.op, ctx);
      }
      res = withBucketCors(complete(res));
    } catch (e) {
      const report = (unexpected: unknown) => {
        try {
          options.onInternalError?.(unexpected);
        } catch {
          // a failing reporter must not turn the 500 into something else
        }
      };
      let err = asSvcError(e);
      if (!err) {
        report(e);
        err = new SvcError('InternalError');
      }
      code = err.code;
      const resource = target ? (target.kind === 'service' ? '/' : `/${target.bucket}/${target.key}`) : '';
      res = complete(errorResponse(err, resource, requestId, req.method));
      try {
        res = withBucketCors(res);
      } catch (corsFailure) {
        // handle() always answers: this error as it is, without the bucket's CORS headers.
        report(corsFailure);
      }
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
          dialect: dialect.name,
          bucket: target?.bucket ?? '',
          key: target?.key ?? '',
          status: res.status,
          ...(code ? { code } : {}),
          bytesIn: ctx?.bytesIn ?? 0,
          bytesOut: bodiless(req.method, res.status) ? 0 : Number(res.headers.get('content-length') ?? 0) || 0,
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
