// The remote bucket as a replica sees it: a small S3 client over fetch, signed with the same SigV4
// code the console's playground signs with (protocol/sigv4.ts). Only what a sync needs: list with
// ETags, head, get, put and delete with S3's conditional headers, and multipart uploads. It runs in a
// service worker and in Node alike. Nothing here decides anything: errors say what went wrong and
// whether trying again can help (RemoteError.retryable); the sync (sync.ts) decides what to do.
import { XMLParser } from 'fast-xml-parser';
import { hexToBase64, joinBytes } from '../../protocol/bytes.ts';
import { createMd5, md5OfBlob } from '../../protocol/md5.ts';
import { presignRequestV4, signRequestV4, uriEncode } from '../../protocol/sigv4.ts';
import { STANDARD_HEADERS, type Bytes, type ObjectHeaders, type StandardHeader } from '../store/types.ts';

/** What signs requests to the remote: static keys, or temporary ones with their session token. */
export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Sent as `x-amz-security-token` (temporary credentials: STS, Cognito, an app's backend). */
  sessionToken?: string;
  /** When temporary credentials expire (ms since the epoch, or a Date): they are asked for again before. */
  expiration?: number | Date;
}

/** Where the remote bucket is. */
export interface RemoteBucket {
  /** The S3 endpoint: `https://s3.us-east-1.amazonaws.com`, `https://ACCOUNT.r2.cloudflarestorage.com`, `http://127.0.0.1:9000`. */
  endpoint: string;
  region: string;
  bucket: string;
  /** A key prefix on the remote under which the replica's keys live (`photos/` maps local `a.jpg` to `photos/a.jpg`). */
  prefix?: string;
  /** `{endpoint}/{bucket}/{key}` rather than `{bucket}.{host}/{key}` (MinIO, Ceph, swbucket serve, most local servers). */
  forcePathStyle?: boolean;
}

/** A remote object as a listing or a HEAD shows it; `key` is the replica's (without the prefix). */
export interface RemoteEntry {
  key: string;
  /** Unquoted. */
  etag: string;
  size: number;
  lastModified: number;
  versionId?: string;
}

/** One version of a remote object, as ListObjectVersions shows it. */
export interface RemoteVersion extends RemoteEntry {
  /** The key's current version (a delete marker when the key is deleted). */
  latest: boolean;
  deleteMarker: boolean;
}

/** Why a request to the remote failed, and whether trying again may help. */
export class RemoteError extends Error {
  override readonly name = 'RemoteError';
  constructor(
    message: string,
    /** HTTP status; 0 when no answer came (offline, refused, cut, a CORS refusal in a browser). */
    readonly status: number,
    /** S3's error code, or `NetworkError`. */
    readonly code: string,
    /** A network failure, a 5xx, 503 SlowDown, 429: the same request may pass later. */
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

export interface Remote {
  readonly where: RemoteBucket;
  /** Every object under the prefix, by key (the replica's keys: prefix taken off), all pages. */
  list(): Promise<RemoteEntry[]>;
  head(key: string): Promise<RemoteEntry | undefined>;
  /** One small signed request that lists (nothing of) the bucket: throws what stands in the way of any request. */
  ping(): Promise<void>;
  /**
   * Every version under the prefix, delete markers among them, all pages, as the remote lists
   * them: each key's newest first. On a bucket that was never versioned, one version a key.
   */
  versions(): Promise<RemoteVersion[]>;
  /**
   * The object's bytes (of `versionId`, else its current version) and response metadata, with their
   * MD5 (hex) computed as they arrived; undefined when there is none. Where the ETag is an MD5 (an
   * object written whole, not encrypted with a KMS or customer key), bytes that do not match it are
   * fetched again once: the same bytes twice mean the ETag is not their MD5 after all (they are
   * taken); different bytes twice, a RemoteError (BadDigest) that may pass on a retry.
   */
  get(key: string, versionId?: string): Promise<{ entry: RemoteEntry; headers: ObjectHeaders; body: Bytes; md5: string } | undefined>;
  /**
   * Bytes `start`–`end` of the object while it is `etag`, streamed as they arrive, with its
   * headers; undefined when the remote holds another object there, or none, or sends the whole.
   */
  getRange(key: string, start: number, end: number, etag: string): Promise<{ headers: ObjectHeaders; body: ReadableStream<Uint8Array> } | undefined>;
  /**
   * Writes the object when `condition` holds on the remote: `{ ifNoneMatch: true }` only where the
   * key holds nothing, `{ ifMatch: etag }` only over that object. 'preconditionFailed' when the
   * remote refused it for that. `md5`, the bytes' MD5 (hex) where known, goes as Content-MD5: the
   * remote refuses bytes changed on the way (BadDigest), and the PUT is sent again once with the
   * MD5 of the bytes themselves; refused twice, it is a RemoteError that may pass on a retry.
   */
  put(key: string, body: Bytes, headers: ObjectHeaders, condition: Condition, md5?: string): Promise<{ etag: string; versionId?: string } | 'preconditionFailed'>;
  /** Copies the remote's object at `from` (while it is `etag`) to `key`, on the remote: the answer's ETag, or 'preconditionFailed'. */
  copy(key: string, from: string, etag: string): Promise<{ etag: string } | 'preconditionFailed'>;
  /** Deletes the key's object; with `ifMatch`, only that one (where the remote honours it); with `versionId`, that version for good. */
  remove(key: string, condition?: { ifMatch?: string; quoteIfMatch?: boolean; versionId?: string }): Promise<'ok' | 'preconditionFailed'>;
  /** The remote bucket's CORS rules; undefined when it has none. */
  cors(): Promise<{ allowedOrigins: string[]; allowedMethods: string[]; allowedHeaders: string[]; exposeHeaders: string[] }[] | undefined>;
  createUpload(key: string, headers: ObjectHeaders): Promise<string>;
  uploadPart(key: string, uploadId: string, partNumber: number, body: Blob): Promise<string>;
  /** The parts the remote holds of an upload; undefined when the upload is gone (completed, aborted, expired). */
  listParts(key: string, uploadId: string): Promise<{ partNumber: number; etag: string; size: number }[] | undefined>;
  completeUpload(key: string, uploadId: string, parts: { partNumber: number; etag: string }[], condition: Condition): Promise<{ etag: string; versionId?: string } | 'preconditionFailed'>;
  abortUpload(key: string, uploadId: string): Promise<void>;
}

export type Condition = { ifNoneMatch?: boolean; ifMatch?: string; quoteIfMatch?: boolean };

const REPEATED = new Set(['Contents', 'Part', 'CORSRule', 'AllowedOrigin', 'AllowedMethod', 'AllowedHeader', 'ExposeHeader']);
const xml = new XMLParser({
  ignoreAttributes: true, removeNSPrefix: true, parseTagValue: false, processEntities: true, htmlEntities: false, trimValues: true,
  isArray: (name) => REPEATED.has(name),
});

const unquote = (etag: string | null | undefined): string => (etag ?? '').trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1');

/** `{key, etag, …}` from a ListObjectsV2 `Contents`. */
function entryOf(c: Record<string, unknown>, prefix: string): RemoteEntry | undefined {
  const full = String(c.Key ?? '');
  if (!full.startsWith(prefix)) return undefined;
  return { key: full.slice(prefix.length), etag: unquote(String(c.ETag ?? '')), size: Number(c.Size ?? 0), lastModified: Date.parse(String(c.LastModified ?? '')) || 0 };
}

const VERSION_ENTRIES = /<(Version|DeleteMarker)>[\s\S]*?<\/\1>/g;

/** A `Version` or `DeleteMarker` of a ListObjectVersions answer; S3's `null` version id (written unversioned) is none. */
function versionOf(v: Record<string, unknown>, prefix: string, deleteMarker: boolean): RemoteVersion | undefined {
  const e = entryOf(v, prefix);
  const versionId = String(v.VersionId ?? '');
  return e && { ...e, ...(versionId && versionId !== 'null' ? { versionId } : {}), latest: v.IsLatest === 'true', deleteMarker };
}

/** The response metadata of an object as its headers carry it. */
function headersOf(h: Headers): ObjectHeaders {
  const headers: Partial<Record<StandardHeader, string>> = {};
  for (const name of STANDARD_HEADERS) {
    const v = h.get(name);
    if (v !== null && v !== '') headers[name] = v;
  }
  const meta: [string, string][] = [];
  for (const [name, value] of h) if (name.startsWith('x-amz-meta-')) meta.push([name.slice('x-amz-meta-'.length), value]);
  return { contentType: h.get('content-type') ?? 'application/octet-stream', headers, meta };
}

function entryFromHeaders(key: string, h: Headers): RemoteEntry {
  const versionId = h.get('x-amz-version-id');
  return {
    key, etag: unquote(h.get('etag')), size: Number(h.get('content-length') ?? 0), lastModified: Date.parse(h.get('last-modified') ?? '') || 0,
    ...(versionId && versionId !== 'null' ? { versionId } : {}),
  };
}

/** A network failure, a 5xx, 503 SlowDown, 429, or bytes changed on the way (BadDigest): the same request may pass later. */
const isRetryable = (status: number, code: string) => status === 0 || status === 429 || status >= 500 || code === 'BadDigest';

/**
 * Whether an answer's ETag is the MD5 of the object's bytes, as S3 makes it for an object written
 * whole (no `-N`) and not encrypted with a KMS or customer key (an encryption header a page's CORS
 * hides is caught by the second GET instead: see Remote.get).
 */
const etagIsMd5 = (etag: string, h: Headers): boolean => /^[0-9a-f]{32}$/i.test(etag)
  && !/^aws:kms/.test(h.get('x-amz-server-side-encryption') ?? '') && !h.has('x-amz-server-side-encryption-customer-algorithm');

const md5Of = async (body: Bytes): Promise<string> => {
  if (body instanceof Blob) return md5OfBlob(body);
  const h = await createMd5();
  h.update(body);
  return h.digest();
};

/**
 * The ETag an answer carries, unquoted. A page sees only the headers the remote's CORS exposes:
 * without ETag a sync could not tell what the remote stored, so that stops it, saying what to add.
 */
function etagOf(res: Response, what: string): string {
  const etag = unquote(res.headers.get('etag'));
  if (etag === '') {
    throw new RemoteError(`${what}: the answer shows no ETag. From a page, the remote bucket's CORS configuration must expose it (ExposeHeader ETag, and x-amz-version-id).`, res.status, 'ETagNotExposed', false);
  }
  return etag;
}

/** How a remote is talked to, beside where it is. */
export interface RemoteOptions {
  /**
   * How long a request may go unanswered before it counts as a failure (retried later), in ms;
   * default 30,000. A request with a body, and an answer's body, get more: one more second for
   * every 64 KiB, the slowest link a sync is meant to work over.
   */
  timeoutMs?: number;
}

/** Answers up to this size are hashed as they arrive (larger ones once whole). */
const HASHED_AS_READ_BYTES = 1024 * 1024;

/** How long a presigned GET's or HEAD's URL is valid: sent at once, it needs only the 15 minutes of clock skew S3 allows a header-signed request. */
const PRESIGNED_SECONDS = 900;

/** The slowest transfer a request is given time for (bytes per second): below it, it counts as stalled. */
const SLOWEST_BYTES_PER_S = 64 * 1024;

export function createRemote(where: RemoteBucket, credentials: () => Promise<Credentials>, options: RemoteOptions = {}): Remote {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const prefix = where.prefix ?? '';
  const base = new URL(where.endpoint.endsWith('/') ? where.endpoint : `${where.endpoint}/`);
  const urlOf = (key: string | null, query = ''): URL => {
    const path = key === null ? '' : uriEncode(prefix + key, true);
    const u = where.forcePathStyle
      ? new URL(`${base.protocol}//${base.host}${base.pathname}${encodeURIComponent(where.bucket)}/${path}`)
      : new URL(`${base.protocol}//${where.bucket}.${base.host}${base.pathname}${path}`);
    u.search = query;
    return u;
  };

  const answers = new WeakMap<Response, { what: string; ended(): void; signal: AbortSignal }>();
  /** An answer's text, read whole; a cut or a stall on the way is a RemoteError that may pass on a retry. */
  const textOf = (res: Response): Promise<string> => reading(res, () => res.text());

  /**
   * An answer's body with its MD5 (a pull needs it for the local ETag). A small one is hashed as
   * it arrives and kept as bytes (Chromium makes each Blob in its browser process: about a
   * millisecond each, measured, more than the rest of a small pull); a large one is read into a
   * Blob by the browser (which may keep it out of the worker's memory, and hands it to IndexedDB
   * as it is) and hashed from there, a slice at a time.
   */
  const hashedBody = (res: Response): Promise<{ body: Bytes; md5: string }> => reading(res, async () => {
    const length = Number(res.headers.get('content-length') ?? NaN);
    if (!(length <= HASHED_AS_READ_BYTES) || !res.body) {
      const body = await res.blob();
      return { body, md5: await md5OfBlob(body) };
    }
    const h = await createMd5();
    const chunks: Uint8Array[] = [];
    for (const reader = res.body.getReader(); ;) {
      const next = await reader.read();
      if (next.done) break;
      h.update(next.value);
      chunks.push(next.value);
    }
    return { body: joinBytes(chunks), md5: h.digest() };
  });

  async function reading<T>(res: Response, read: () => Promise<T>): Promise<T> {
    const a = answers.get(res);
    try {
      return await read();
    } catch (e) {
      if (a?.signal.reason instanceof RemoteError) throw a.signal.reason;
      throw new RemoteError(`${a?.what ?? 'A request'}: the answer from ${base.host} broke off (${(e as Error).message || 'network error'}).`, 0, 'NetworkError', true);
    } finally {
      a?.ended();
    }
  }

  /**
   * A signed request; an answer that is not 2xx (or one of `accept`) is a RemoteError. A body of
   * bytes is hashed into the signature unless `unsigned` (UNSIGNED-PAYLOAD, as a Blob always is).
   */
  async function send(method: string, url: URL, o: { headers?: Record<string, string>; body?: Blob | Uint8Array; unsigned?: boolean; accept?: number[]; what: string }): Promise<Response> {
    const c = await credentials();
    const headers = new Headers(o.headers);
    if ((method === 'GET' || method === 'HEAD') && Object.keys(o.headers ?? {}).every((h) => h === 'range')) {
      // Signed in its URL, a GET or HEAD is a "simple" request: no CORS preflight for each new key
      // (a Range of one span is a safelisted header; it is not signed, as S3 allows).
      url = new URL(url);
      await presignRequestV4({ method, url, accessKeyId: c.accessKeyId, secret: c.secretAccessKey, region: where.region, expiresSeconds: PRESIGNED_SECONDS, ...(c.sessionToken ? { sessionToken: c.sessionToken } : {}) });
    } else {
      if (c.sessionToken) headers.set('x-amz-security-token', c.sessionToken);
      const small = o.body instanceof Uint8Array && !o.unsigned ? o.body : undefined;
      await signRequestV4({
        method, url, headers, accessKeyId: c.accessKeyId, secret: c.secretAccessKey, region: where.region,
        ...(small ? { body: small } : o.body ? { unsignedPayload: true } : {}),
      });
    }
    // A remote that never answers, or stalls mid-body, must not hold the round (and its lock) forever.
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (bytes: number) => {
      clearTimeout(timer);
      const ms = timeoutMs + (bytes / SLOWEST_BYTES_PER_S) * 1000;
      timer = setTimeout(() => controller.abort(new RemoteError(`${o.what}: no answer from ${base.host} within ${Math.round(ms / 1000)} s.`, 0, 'Timeout', true)), ms);
      (timer as { unref?: () => void }).unref?.();
    };
    arm(o.body instanceof Uint8Array ? o.body.byteLength : o.body?.size ?? 0);
    let res: Response;
    try {
      res = await fetch(url, { method, headers, ...(o.body ? { body: o.body as BodyInit } : {}), redirect: 'manual', cache: 'no-store', signal: controller.signal });
    } catch (e) {
      clearTimeout(timer);
      if (controller.signal.reason instanceof RemoteError) throw controller.signal.reason;
      throw new RemoteError(`${o.what}: no answer from ${base.host} (${(e as Error).message || 'network error'}): offline, the remote down, or (in a browser) its CORS configuration refusing this origin.`, 0, 'NetworkError', true);
    }
    arm(Number(res.headers.get('content-length') ?? 0) || 0);
    answers.set(res, { what: o.what, ended: () => clearTimeout(timer), signal: controller.signal });
    if (res.ok || o.accept?.includes(res.status)) return res;
    const text = method === 'HEAD' ? '' : await textOf(res).catch(() => '');
    // A HEAD's error has no body, so no code: S3's meaning of its status stands in.
    const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? ({ 400: 'BadRequest', 403: 'AccessDenied', 404: 'NotFound' } as Record<number, string>)[res.status] ?? `HTTP${res.status}`;
    const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? res.statusText;
    const hint = res.status === 301 || res.status === 307 ? ' The bucket is in another region: give the replica that region, or its regional endpoint.'
      : res.status === 403 ? ' Check the replica\'s credentials and that they may read and write this bucket.'
        : code === 'NoSuchBucket' ? ` The remote bucket "${where.bucket}" does not exist at ${base.host}: create it, or correct the name.` : '';
    throw new RemoteError(`${o.what}: ${res.status} ${code}${message ? `: ${message}` : ''}.${hint}`, res.status, code, isRetryable(res.status, code));
  }

  const conditionHeaders = (c: Condition): Record<string, string> => ({
    ...(c.ifNoneMatch ? { 'if-none-match': '*' } : {}),
    // RGW 16 compares If-Match with the ETag as written, unquoted; S3 takes either (the sync probes which).
    ...(c.ifMatch !== undefined ? { 'if-match': c.quoteIfMatch === false ? c.ifMatch : `"${c.ifMatch}"` } : {}),
  });

  const metaHeaders = (h: ObjectHeaders): Record<string, string> => {
    const out: Record<string, string> = { 'content-type': h.contentType };
    for (const [name, value] of Object.entries(h.headers)) if (value !== undefined) out[name] = value;
    for (const [name, value] of h.meta) out[`x-amz-meta-${name}`] = value;
    return out;
  };

  return {
    where,
    async list() {
      const out: RemoteEntry[] = [];
      let token: string | undefined;
      do {
        const q = new URLSearchParams({ 'list-type': '2', ...(prefix ? { prefix } : {}), ...(token ? { 'continuation-token': token } : {}) });
        const res = await send('GET', urlOf(null, q.toString()), { what: `Listing ${where.bucket}` });
        const doc = xml.parse(await textOf(res)) as { ListBucketResult?: { Contents?: Record<string, unknown>[]; IsTruncated?: string; NextContinuationToken?: string } };
        const page = doc.ListBucketResult;
        if (!page) throw new RemoteError(`Listing ${where.bucket}: the answer is not a ListBucketResult.`, 200, 'MalformedAnswer', false);
        for (const c of page.Contents ?? []) {
          const e = entryOf(c, prefix);
          if (e && e.key !== '') out.push(e);
        }
        token = page.IsTruncated === 'true' ? page.NextContinuationToken : undefined;
      } while (token);
      return out;
    },
    async versions() {
      const out: RemoteVersion[] = [];
      let marker: { key: string; versionId: string } | undefined;
      do {
        const q = new URLSearchParams({ versions: '', ...(prefix ? { prefix } : {}), ...(marker ? { 'key-marker': marker.key, 'version-id-marker': marker.versionId } : {}) });
        const res = await send('GET', urlOf(null, q.toString()), { what: `Listing the versions in ${where.bucket}` });
        const text = await textOf(res);
        const page = (xml.parse(text.replace(VERSION_ENTRIES, '')) as { ListVersionsResult?: { IsTruncated?: string; NextKeyMarker?: string; NextVersionIdMarker?: string } }).ListVersionsResult;
        if (!page) throw new RemoteError(`Listing the versions in ${where.bucket}: the answer is not a ListVersionsResult.`, 200, 'MalformedAnswer', false);
        // Versions and delete markers are read in the order the answer gives them (a parse into
        // two lists would lose which came first); each is parsed on its own. Their text holds no
        // '<' (XML escapes it), so an element's end is the first closing tag of its name.
        for (const [entry, name] of text.matchAll(VERSION_ENTRIES)) {
          const v = (xml.parse(entry) as Record<string, Record<string, unknown>>)[name!]!;
          const e = versionOf(v, prefix, name === 'DeleteMarker');
          if (e && e.key !== '') out.push(e);
        }
        marker = page.IsTruncated === 'true' && page.NextKeyMarker !== undefined ? { key: page.NextKeyMarker, versionId: page.NextVersionIdMarker ?? '' } : undefined;
      } while (marker);
      return out;
    },
    async ping() {
      const q = new URLSearchParams({ 'list-type': '2', 'max-keys': '1', prefix: `${prefix}.swbucket/` });
      await (await send('GET', urlOf(null, q.toString()), { what: `Listing ${where.bucket}` })).body?.cancel();
    },
    async head(key) {
      const res = await send('HEAD', urlOf(key), { accept: [404], what: `HEAD ${key}` });
      if (res.status === 404) return undefined;
      etagOf(res, `HEAD ${key}`);
      return entryFromHeaders(key, res.headers);
    },
    async get(key, versionId) {
      const once = async () => {
        const res = await send('GET', urlOf(key, versionId ? new URLSearchParams({ versionId }).toString() : ''), { accept: [404], what: `GET ${key}` });
        if (res.status === 404) {
          await res.body?.cancel().catch(() => {});
          return undefined;
        }
        const { body, md5 } = await hashedBody(res);
        const etag = unquote(res.headers.get('etag'));
        return { res, body, md5, matches: !etagIsMd5(etag, res.headers) || md5 === etag.toLowerCase() };
      };
      let got = await once();
      if (got && !got.matches) {
        const again = await once();
        if (again && !again.matches && again.md5 !== got.md5) {
          throw new RemoteError(`GET ${key}: the bytes that arrived do not match the object's ETag (their MD5), twice, and differ from each other: they are being changed on the way.`, 200, 'BadDigest', true);
        }
        got = again;
      }
      if (!got) return undefined;
      const { res, body, md5 } = got;
      return { entry: { ...entryFromHeaders(key, res.headers), size: body instanceof Blob ? body.size : body.byteLength }, headers: headersOf(res.headers), body, md5 };
    },
    async getRange(key, start, end, etag) {
      const res = await send('GET', urlOf(key), { headers: { range: `bytes=${start}-${end}` }, accept: [404], what: `GET ${key} (bytes ${start}-${end})` });
      // Read by whoever asked, at their pace (a player pauses): no stall timer once the headers are here.
      answers.get(res)?.ended();
      if (res.status !== 206 || !res.body || unquote(res.headers.get('etag')) !== etag) {
        await res.body?.cancel().catch(() => {});
        return undefined;
      }
      return { headers: headersOf(res.headers), body: res.body };
    },
    async put(key, body, headers, condition, md5) {
      const once = (digest: string | undefined) => send('PUT', urlOf(key), {
        headers: { ...metaHeaders(headers), ...conditionHeaders(condition), ...(digest ? { 'content-md5': hexToBase64(digest) } : {}) },
        body, unsigned: true, accept: [412], what: `PUT ${key}`,
      });
      let res: Response;
      try {
        res = await once(md5);
      } catch (e) {
        if (!(e instanceof RemoteError && e.code === 'BadDigest') || md5 === undefined) throw e;
        // Changed on the way, or `md5` is not these bytes' (an object imported with another ETag): sent again with theirs.
        res = await once(await md5Of(body));
      }
      if (res.status === 412) return 'preconditionFailed';
      const versionId = res.headers.get('x-amz-version-id');
      return { etag: etagOf(res, `PUT ${key}`), ...(versionId && versionId !== 'null' ? { versionId } : {}) };
    },
    async copy(key, from, etag) {
      const source = `/${where.bucket}/${uriEncode(prefix + from, true)}`;
      const res = await send('PUT', urlOf(key), {
        headers: { 'x-amz-copy-source': source, 'x-amz-copy-source-if-match': `"${etag}"` }, body: new Uint8Array(0), accept: [412], what: `Copying ${from} to ${key}`,
      });
      if (res.status === 412) return 'preconditionFailed';
      const text = await textOf(res);
      if (/<Error>/.test(text)) throw new RemoteError(`Copying ${from} to ${key}: ${/<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? 'InternalError'}.`, 200, 'InternalError', true);
      return { etag: unquote((xml.parse(text) as { CopyObjectResult?: { ETag?: string } }).CopyObjectResult?.ETag) };
    },
    async remove(key, condition = {}) {
      const res = await send('DELETE', urlOf(key, condition.versionId ? new URLSearchParams({ versionId: condition.versionId }).toString() : ''), { headers: conditionHeaders(condition), accept: [404, 412], what: `DELETE ${key}` });
      return res.status === 412 ? 'preconditionFailed' : 'ok';
    },
    async cors() {
      const res = await send('GET', urlOf(null, 'cors'), { accept: [404], what: `Reading the CORS configuration of ${where.bucket}` });
      if (res.status === 404) return undefined;
      const doc = xml.parse(await textOf(res)) as { CORSConfiguration?: { CORSRule?: Record<string, string[] | undefined>[] } };
      return (doc.CORSConfiguration?.CORSRule ?? []).map((r) => ({
        allowedOrigins: r.AllowedOrigin ?? [], allowedMethods: r.AllowedMethod ?? [], allowedHeaders: r.AllowedHeader ?? [], exposeHeaders: r.ExposeHeader ?? [],
      }));
    },
    async createUpload(key, headers) {
      const res = await send('POST', urlOf(key, 'uploads'), { headers: metaHeaders(headers), body: new Uint8Array(0), what: `Starting an upload of ${key}` });
      const id = (xml.parse(await textOf(res)) as { InitiateMultipartUploadResult?: { UploadId?: string } }).InitiateMultipartUploadResult?.UploadId;
      if (!id) throw new RemoteError(`Starting an upload of ${key}: the answer names no UploadId.`, 200, 'MalformedAnswer', false);
      return String(id);
    },
    async uploadPart(key, uploadId, partNumber, body) {
      const q = new URLSearchParams({ partNumber: String(partNumber), uploadId });
      const res = await send('PUT', urlOf(key, q.toString()), { body, what: `Part ${partNumber} of ${key}` });
      return etagOf(res, `Part ${partNumber} of ${key}`);
    },
    async listParts(key, uploadId) {
      const res = await send('GET', urlOf(key, new URLSearchParams({ uploadId }).toString()), { accept: [404], what: `Listing the parts of ${key}` });
      if (res.status === 404) return undefined;
      const doc = xml.parse(await textOf(res)) as { ListPartsResult?: { Part?: Record<string, unknown>[] } };
      return (doc.ListPartsResult?.Part ?? []).map((p) => ({ partNumber: Number(p.PartNumber), etag: unquote(String(p.ETag ?? '')), size: Number(p.Size ?? 0) }));
    },
    async completeUpload(key, uploadId, parts, condition) {
      const list = parts.map((p) => `<Part><PartNumber>${p.partNumber}</PartNumber><ETag>"${p.etag}"</ETag></Part>`).join('');
      const body = new TextEncoder().encode(`<CompleteMultipartUpload>${list}</CompleteMultipartUpload>`);
      const res = await send('POST', urlOf(key, new URLSearchParams({ uploadId }).toString()), {
        headers: { 'content-type': 'application/xml', ...conditionHeaders(condition) }, body, accept: [412], what: `Completing the upload of ${key}`,
      });
      if (res.status === 412) return 'preconditionFailed';
      const text = await textOf(res);
      // S3 may answer a late failure of Complete as a 200 whose document is an Error.
      if (/<Error>/.test(text)) {
        const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? 'InternalError';
        if (code === 'PreconditionFailed') return 'preconditionFailed';
        throw new RemoteError(`Completing the upload of ${key}: ${code}.`, 200, code, code === 'InternalError' || code === 'SlowDown');
      }
      const etag = unquote((xml.parse(text) as { CompleteMultipartUploadResult?: { ETag?: string } }).CompleteMultipartUploadResult?.ETag);
      const versionId = res.headers.get('x-amz-version-id');
      return { etag, ...(versionId && versionId !== 'null' ? { versionId } : {}) };
    },
    async abortUpload(key, uploadId) {
      await send('DELETE', urlOf(key, new URLSearchParams({ uploadId }).toString()), { accept: [404], what: `Aborting the upload of ${key}` });
    },
  };
}
