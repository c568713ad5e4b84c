// The typed client: one method per operation of docs/protocol.md, signed with WebCrypto.
// It speaks only the wire format, so the same code talks to a real service by changing the
// endpoint (the account and archive calls aside, which are the emulator's administration).
import { canStreamUploads, controlledFor, controllerNow, cutOffByTakeover, dropLimit, sendWatched } from './engine.ts';
import { SvcClientError, errorFrom } from './errors.ts';
import { presignQuery, signRequest, type Credentials } from './sign.ts';
import { md5Hex } from './hashing.ts';
import { hexToBase64 } from '../../protocol/bytes.ts';
import { upload } from './upload.ts';
import { bucketNameProblem, isValidBucketName } from '../../protocol/address.ts';
import type {
  AccountSummary, Acl, ArchiveDownload, Body, Client, ExportOptions, ImportOptions, ImportResult, ClientOptions, DeleteObjectsResult, GetObjectOptions, GetObjectResult, ListObjectsOptions,
  ListObjectsPage, ObjectHeadersInput, ObjectInfo, ObjectSummary, PartSummary, PutObjectOptions, UploadOptions, UploadResult,
  UploadSummary, VersionSummary, WriteResult,
} from './types.ts';

type Node = Record<string, unknown>;
const parseXml = async (text: string): Promise<unknown> => (await import('./xml.ts')).parseXml(text);
/** Text for an XML request body; a CR as &#13;, since a parser reads a literal one as LF. */
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#13;');
const node = (v: unknown): Node => (typeof v === 'object' && v !== null ? (v as Node) : {});
const list = (v: unknown): Node[] => (Array.isArray(v) ? v.map(node) : v === undefined ? [] : [node(v)]);
const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined ? '' : String(v));
const unquote = (etag: string | null): string => (etag ?? '').replace(/^"(.*)"$/, '$1');

function bodyBlob(body: Body | undefined): Blob | undefined {
  if (body === undefined) return undefined;
  // A Blob reaches the worker ~10× faster than a typed array (docs/browser.md, "Blob request bodies").
  if (body instanceof Blob) return body;
  if (typeof body === 'string' || body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return new Blob([body as BlobPart]);
  // Anything else would be sent as its String(): "[object Object]".
  throw new TypeError(`swbucket: a body must be a Blob, File, ArrayBuffer, typed array or string, not ${describeValue(body)}. `
    + 'To store an object as JSON, pass JSON.stringify(value) with { contentType: \'application/json\' }.');
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return `a ${typeof value}`;
  const name = (value as object).constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : 'a plain object';
}

/** Keys go in the path; `.` and `..` segments would be resolved away by URL parsing, so then `/` is sent as %2F. */
export function encodeKeyPath(key: string): string {
  const segments = key.split('/');
  const dots = segments.some((s) => s === '.' || s === '..');
  return dots ? encodeURIComponent(key) : segments.map(encodeURIComponent).join('/');
}

/** The header prefix of the dialect a client speaks: swbucket's own, or NetEase NOS's (ClientOptions.dialect). */
type Prefix = 'x-svc-' | 'x-nos-';

function headersFor(input: ObjectHeadersInput, p: Prefix): Headers {
  const h = new Headers();
  if (input.contentType !== undefined) h.set('content-type', input.contentType);
  if (input.contentEncoding !== undefined) h.set('content-encoding', input.contentEncoding);
  if (input.cacheControl !== undefined) h.set('cache-control', input.cacheControl);
  if (input.expires !== undefined) h.set('expires', input.expires);
  if (input.contentDisposition !== undefined) h.set('content-disposition', input.contentDisposition);
  if (input.contentLanguage !== undefined) h.set('content-language', input.contentLanguage);
  for (const [name, value] of Object.entries(input.metadata ?? {})) h.set(`${p}meta-${name}`, value);
  return h;
}

function objectInfo(res: Response, p: Prefix): ObjectInfo {
  const metadata: Record<string, string> = {};
  for (const [name, value] of res.headers) {
    if (name.startsWith(`${p}meta-`)) metadata[name.slice(`${p}meta-`.length)] = value;
  }
  const version = res.headers.get(`${p}version-id`);
  const objectMd5 = res.headers.get(`${p}object-md5`);
  return {
    etag: unquote(res.headers.get('etag')),
    size: Number(res.headers.get('content-length') ?? 0),
    contentType: res.headers.get('content-type') ?? '',
    lastModified: new Date(res.headers.get('last-modified') ?? 0),
    metadata,
    headers: res.headers,
    ...(version ? { versionId: Number(version) } : {}),
    ...(objectMd5 ? { objectMd5 } : {}),
  };
}

function written(res: Response, p: Prefix): WriteResult {
  const version = res.headers.get(`${p}version-id`);
  return {
    etag: unquote(res.headers.get('etag')),
    requestId: res.headers.get(`${p}request-id`),
    ...(version ? { versionId: Number(version) } : {}),
  };
}

function rangeHeader(range: NonNullable<GetObjectOptions['range']>): string {
  if (typeof range === 'string') return range;
  if ('suffix' in range) return `bytes=-${range.suffix}`;
  return `bytes=${range.start}-${range.end ?? ''}`;
}

interface RequestInput {
  bucket?: string;
  key?: string;
  /** A list value is sent as that parameter repeated. */
  query?: Record<string, string | number | string[] | undefined>;
  headers?: Headers;
  body?: Body | ReadableStream<Uint8Array>;
  signal?: AbortSignal;
  /** Statuses that are answers, not failures (e.g. 304, 404 with ifNotFound). */
  accept?: number[];
}

/** The methods a request may be sent again with: HTTP's idempotent ones (a move, a PUT, is not). */
const RESENDABLE = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);

/**
 * A client for the service: in a page, the worker that startService() registered (the default
 * endpoint, `http://svc.localhost`); anywhere, a `swbucket serve` server by its URL. Requests are
 * signed with the credentials given; without them, only public-read objects can be read.
 *
 * @example
 * const s3 = createClient({ accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
 * const server = createClient({ endpoint: 'http://127.0.0.1:9000', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
 */
export function createClient(options: ClientOptions = {}): Client {
  const endpoint = new URL(options.endpoint ?? 'http://svc.localhost');
  const creds: Credentials | null = options.accessKeyId && options.secretAccessKey
    ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
    : null;
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const dialect = options.dialect ?? 'svc';
  const p: Prefix = dialect === 'nos' ? 'x-nos-' : 'x-svc-';

  // An IP address has no subdomains, and Node does not resolve `{bucket}.localhost`.
  const pathStyle = options.pathStyle ?? (/^[\d.]+$|^\[/.test(endpoint.hostname) || endpoint.hostname === 'localhost');

  function urlFor(bucket: string, key: string, query: URLSearchParams): URL {
    const origin = `${endpoint.protocol}//${bucket && !pathStyle ? `${bucket}.` : ''}${endpoint.host}`;
    const path = !bucket ? '' : pathStyle ? `${bucket}/${encodeKeyPath(key)}` : encodeKeyPath(key);
    const url = new URL(`${origin}/${path}`);
    // Value-less sub-resources (`?uploads`) are written bare, as the service signs them.
    url.search = [...query].map(([n, v]) => (v === '' ? encodeURIComponent(n) : `${encodeURIComponent(n)}=${encodeURIComponent(v)}`)).join('&');
    return url;
  }

  function queryOf(q: RequestInput['query']): URLSearchParams {
    const out = new URLSearchParams();
    for (const [name, value] of Object.entries(q ?? {})) {
      if (Array.isArray(value)) for (const v of value) out.append(name, v);
      else if (value !== undefined) out.set(name, String(value));
    }
    return out;
  }

  async function request(method: string, input: RequestInput = {}): Promise<Response> {
    const bucket = input.bucket ?? '';
    const key = input.key ?? '';
    // Said here, before the name is lower-cased into a host name and the signature no longer matches.
    if (bucket !== '' && !isValidBucketName(bucket)) throw new SvcClientError('InvalidBucketName', 400, bucketNameProblem(bucket), null);
    const query = queryOf(input.query);
    const headers = new Headers(input.headers);
    let stream = input.body instanceof ReadableStream ? input.body : undefined;
    let body = stream ?? bodyBlob(input.body as Body | undefined);
    if (stream && !canStreamUploads()) {
      // Firefox and WebKit cannot send a stream: it is read into a Blob first (in memory).
      body = await new Response(stream).blob();
      stream = undefined;
    }
    // fetch sends a Blob's own type as its Content-Type when none is set (a picked File's
    // "image/png"): set it here, so that what is signed is what is sent.
    if (body instanceof Blob && body.type && !headers.has('content-type')) headers.set('content-type', body.type);
    if (creds) await signRequest(method, bucket, key, query, headers, creds, dialect);
    const send = (signal?: AbortSignal) => doFetch(urlFor(bucket, key, query), {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      // A stream body is sent as it is read (fetch requires saying so).
      ...(stream ? { duplex: 'half' } as RequestInit : {}),
      ...(signal ? { signal } : {}),
    });
    // A request dropped in a takeover is given up after a while, unless its body may still be on
    // its way (dropLimit).
    const bodyBytes = body === undefined ? 0 : body instanceof Blob ? body.size : Infinity; // (a stream: its size is not known)
    const watched = () => sendWatched(send, input.signal, dropLimit(bodyBytes, endpoint));
    await controlledFor(endpoint);
    const controller = controllerNow();
    let res: Response;
    try {
      res = await watched();
    } catch (e) {
      // Cut off by a new build of the worker taking over (Firefox, WebKit): sent once more when
      // sending it twice does what sending it once does. A stream cannot be sent again.
      if (stream || !RESENDABLE.has(method) || headers.has(`${p}move-source`) || !(await cutOffByTakeover(e, controller))) throw e;
      res = await watched();
    }
    if (res.ok || input.accept?.includes(res.status)) return res;
    throw await errorFrom(res, method);
  }

  const xml = async (res: Response): Promise<Node> => node(await parseXml(await res.text()));

  async function contentMd5(body: Blob): Promise<string> {
    return hexToBase64(await md5Hex(body));
  }

  const client: Client = {
    endpoint: endpoint.origin,
    /** The Authorization a request would carry, and the StringToSign behind it (for learning). */
    async explainSignature(method: string, bucket: string, key: string, query: Record<string, string> = {}, headers = new Headers()) {
      if (!creds) return null;
      const h = new Headers(headers);
      const stringToSign = await signRequest(method, bucket, key, queryOf(query), h, creds, dialect);
      return { stringToSign, authorization: h.get('authorization')!, date: h.get(`${p}date`)!, url: urlFor(bucket, key, queryOf(query)).toString() };
    },

    /** A URL anyone can use until it expires: for links and `<img src>`. */
    async presign(bucket: string, key: string, o: { expiresIn?: number; method?: 'GET' | 'HEAD'; query?: Record<string, string> } = {}): Promise<string> {
      if (!creds) throw new Error('presign needs credentials: createClient({ accessKeyId, secretAccessKey })');
      if (!isValidBucketName(bucket)) throw new SvcClientError('InvalidBucketName', 400, bucketNameProblem(bucket), null);
      const expires = Math.floor(Date.now() / 1000) + (o.expiresIn ?? 3600);
      const query = await presignQuery(o.method ?? 'GET', bucket, key, queryOf(o.query), creds, expires, dialect);
      return urlFor(bucket, key, query).toString();
    },

    // ---- buckets ----
    async listBuckets(): Promise<{ owner: { id: string; displayName: string }; buckets: { name: string; creationDate: Date }[] }> {
      const doc = node((await xml(await request('GET'))).ListAllMyBucketsResult);
      const owner = node(doc.Owner);
      return {
        owner: { id: text(owner.ID), displayName: text(owner.DisplayName) },
        buckets: list(node(doc.Buckets).Bucket).map((b) => ({ name: text(b.Name), creationDate: new Date(text(b.CreationDate)) })),
      };
    },
    async createBucket(bucket: string, o: { acl?: Acl } = {}): Promise<void> {
      await request('PUT', { bucket, headers: new Headers(o.acl ? { [`${p}acl`]: o.acl } : {}) });
    },
    async ensureBucket(bucket: string, o: { acl?: Acl } = {}): Promise<{ created: boolean }> {
      // Asked first: on every start but the first the bucket is there, and a refused create would
      // show in the browser's console as a failed request each time.
      if (await client.headBucket(bucket).catch(() => false)) return { created: false };
      try {
        await client.createBucket(bucket, o);
        return { created: true };
      } catch (e) {
        // The service answers BucketAlreadyExists whoever owns it: HEAD tells ours (200) from another's (403).
        if (!(e instanceof SvcClientError) || e.code !== 'BucketAlreadyExists') throw e;
        if (await client.headBucket(bucket).catch(() => false)) return { created: false };
        throw e;
      }
    },
    async deleteBucket(bucket: string): Promise<void> {
      await request('DELETE', { bucket });
    },
    /** True when the bucket exists and is the caller's; false when it does not exist. */
    async headBucket(bucket: string): Promise<boolean> {
      const res = await request('HEAD', { bucket, accept: [404] });
      return res.status === 200;
    },
    async getBucketAcl(bucket: string): Promise<Acl> {
      return (await request('GET', { bucket, query: { acl: '' } })).headers.get(`${p}acl`) as Acl;
    },
    async putBucketAcl(bucket: string, acl: Acl): Promise<void> {
      await request('PUT', { bucket, query: { acl: '' }, headers: new Headers({ [`${p}acl`]: acl }) });
    },
    async getBucketVersioning(bucket: string): Promise<'Enabled' | 'Suspended' | undefined> {
      const status = text(node((await xml(await request('GET', { bucket, query: { versioning: '' } }))).VersioningConfiguration).Status);
      return status === 'Enabled' || status === 'Suspended' ? status : undefined;
    },
    async putBucketVersioning(bucket: string, status: 'Enabled' | 'Suspended'): Promise<void> {
      const body = `<VersioningConfiguration><Status>${status}</Status></VersioningConfiguration>`;
      await request('PUT', { bucket, query: { versioning: '' }, body });
    },

    async listObjects(bucket: string, o: ListObjectsOptions = {}): Promise<ListObjectsPage> {
      const res = await request('GET', { bucket, query: { prefix: o.prefix, delimiter: o.delimiter, marker: o.marker, 'max-keys': o.maxKeys ?? 1000 } });
      const doc = node((await xml(res)).ListBucketResult);
      const next = text(doc.NextMarker);
      return {
        objects: list(doc.Contents).map((c) => ({
          key: text(c.Key), lastModified: new Date(text(c.LastModified)), etag: unquote(text(c.ETag)), size: Number(text(c.Size)), storageClass: text(c.StorageClass),
        })),
        commonPrefixes: list(doc.CommonPrefixes).map((p) => text(p.Prefix)),
        isTruncated: text(doc.IsTruncated) === 'true',
        ...(doc.NextMarker !== undefined ? { nextMarker: next } : {}),
      };
    },
    /** Every page of a listing, following NextMarker. */
    async *listObjectsPages(bucket: string, o: ListObjectsOptions = {}): AsyncGenerator<ListObjectsPage> {
      let marker = o.marker;
      for (;;) {
        const page = await client.listObjects(bucket, { ...o, ...(marker !== undefined ? { marker } : {}) });
        yield page;
        if (!page.isTruncated || page.nextMarker === undefined) return;
        marker = page.nextMarker;
      }
    },
    /** Every object (and, with a delimiter, every common prefix as `{ prefix }`). */
    async *listAllObjects(bucket: string, o: ListObjectsOptions = {}): AsyncGenerator<ObjectSummary | { prefix: string }> {
      for await (const page of client.listObjectsPages(bucket, o)) {
        const entries: (ObjectSummary | { prefix: string })[] = [...page.objects, ...page.commonPrefixes.map((prefix) => ({ prefix }))];
        entries.sort((a, b) => { const x = 'key' in a ? a.key : a.prefix; const y = 'key' in b ? b.key : b.prefix; return x < y ? -1 : x > y ? 1 : 0; });
        yield* entries;
      }
    },
    async listVersions(bucket: string, o: { prefix?: string; marker?: string; versionIdMarker?: string; maxKeys?: number } = {}) {
      const res = await request('GET', {
        bucket, query: { versions: '', prefix: o.prefix, marker: o.marker, 'version-id-marker': o.versionIdMarker, 'max-keys': o.maxKeys },
      });
      const doc = node((await xml(res)).ListVersionsResult);
      return {
        versions: list(doc.Version).map((v): VersionSummary => ({
          key: text(v.Key), versionId: text(v.VersionId), isLatest: text(v.IsLatest) === 'true',
          lastModified: new Date(text(v.LastModified)), etag: unquote(text(v.ETag)), size: Number(text(v.Size)),
        })),
        isTruncated: text(doc.IsTruncated) === 'true',
        ...(doc.NextMarker !== undefined ? { nextMarker: text(doc.NextMarker), nextVersionIdMarker: text(doc.NextVersionIdMarker) } : {}),
      };
    },
    async *listAllVersions(bucket: string, o: { prefix?: string; maxKeys?: number } = {}): AsyncGenerator<VersionSummary> {
      let markers: { marker?: string; versionIdMarker?: string } = {};
      for (;;) {
        const page = await client.listVersions(bucket, { ...o, ...markers });
        yield* page.versions;
        if (!page.isTruncated || page.nextMarker === undefined) return;
        markers = { marker: page.nextMarker, versionIdMarker: page.nextVersionIdMarker ?? '' };
      }
    },

    // ---- objects ----
    async putObject(bucket: string, key: string, body: Body, o: PutObjectOptions = {}): Promise<WriteResult> {
      const blob = bodyBlob(body)!;
      const headers = headersFor(o, p);
      if (o.checksum !== false) headers.set('content-md5', await contentMd5(blob));
      return written(await request('PUT', { bucket, key, headers, body: blob, ...(o.signal ? { signal: o.signal } : {}) }), p);
    },
    async getObject(bucket: string, key: string, o: GetObjectOptions = {}): Promise<GetObjectResult> {
      const headers = new Headers();
      if (o.range !== undefined) headers.set('range', rangeHeader(o.range));
      if (o.ifModifiedSince) headers.set('if-modified-since', o.ifModifiedSince.toUTCString());
      const res = await request('GET', {
        bucket, key, headers, query: { versionId: o.versionId, download: o.download, ifNotFound: o.ifNotFound },
        accept: o.ifNotFound ? [304, 404] : [304], ...(o.signal ? { signal: o.signal } : {}),
      });
      // ifNotFound: a 404 with an ETag is the fallback object; without one, the key is missing.
      if (res.status === 404 && !res.headers.get('etag')) throw await errorFrom(res);
      return { ...objectInfo(res, p), status: res.status, response: res, contentRange: res.headers.get('content-range'), notModified: res.status === 304 };
    },
    async headObject(bucket: string, key: string, o: { versionId?: number; ifModifiedSince?: Date } = {}): Promise<ObjectInfo & { notModified: boolean }> {
      const headers = new Headers();
      if (o.ifModifiedSince) headers.set('if-modified-since', o.ifModifiedSince.toUTCString());
      const res = await request('HEAD', { bucket, key, headers, query: { versionId: o.versionId }, accept: [304] });
      return { ...objectInfo(res, p), notModified: res.status === 304 };
    },
    async deleteObject(bucket: string, key: string): Promise<void> {
      await request('DELETE', { bucket, key });
    },
    async deleteObjects(bucket: string, objects: (string | { key: string; versionId?: number })[], o: { quiet?: boolean } = {}): Promise<DeleteObjectsResult> {
      const items = objects.map((x) => (typeof x === 'string' ? { key: x } : x)).map((x) =>
        `<Object><Key>${esc(x.key)}</Key>${x.versionId !== undefined ? `<VersionId>${x.versionId}</VersionId>` : ''}</Object>`);
      const body = new Blob([`<?xml version="1.0" encoding="UTF-8"?><Delete><Quiet>${o.quiet === true}</Quiet>${items.join('')}</Delete>`]);
      const res = await request('POST', { bucket, query: { delete: '' }, body, headers: new Headers({ 'content-md5': await contentMd5(body) }) });
      const raw = await res.text();
      if (raw === '') return { deleted: [], errors: [] };
      const doc = node(node(await parseXml(raw)).DeleteResult);
      return {
        deleted: list(doc.Deleted).map((d) => ({ key: text(d.Key), ...(d.VersionId !== undefined ? { versionId: text(d.VersionId) } : {}) })),
        errors: list(doc.Error).map((e) => ({ key: text(e.Key), code: text(e.Code), message: text(e.Message) })),
      };
    },
    async copyObject(source: { bucket: string; key: string }, bucket: string, key: string): Promise<WriteResult> {
      const headers = new Headers({ [`${p}copy-source`]: `/${source.bucket}/${encodeURIComponent(source.key)}` });
      return written(await request('PUT', { bucket, key, headers }), p);
    },
    async moveObject(bucket: string, from: string, to: string): Promise<WriteResult> {
      const headers = new Headers({ [`${p}move-source`]: `/${bucket}/${encodeURIComponent(from)}` });
      return written(await request('PUT', { bucket, key: to, headers }), p);
    },
    /** Replaces the object's response headers and metadata; what is not given is cleared. */
    async putObjectMeta(bucket: string, key: string, meta: ObjectHeadersInput): Promise<void> {
      await request('PUT', { bucket, key, query: { meta: '' }, headers: headersFor(meta, p) });
    },

    // ---- multipart ----
    async createMultipartUpload(bucket: string, key: string, o: ObjectHeadersInput = {}): Promise<string> {
      const doc = node((await xml(await request('POST', { bucket, key, query: { uploads: '' }, headers: headersFor(o, p) }))).InitiateMultipartUploadResult);
      return text(doc.UploadId);
    },
    async uploadPart(
      bucket: string, key: string, uploadId: string, partNumber: number, body: Body,
      o: { checksum?: boolean; md5Hex?: string; signal?: AbortSignal } = {},
    ): Promise<{ etag: string }> {
      const blob = bodyBlob(body)!;
      const headers = new Headers();
      if (o.md5Hex) headers.set('content-md5', hexToBase64(o.md5Hex));
      else if (o.checksum !== false) headers.set('content-md5', await contentMd5(blob));
      const res = await request('PUT', { bucket, key, query: { partNumber, uploadId }, headers, body: blob, ...(o.signal ? { signal: o.signal } : {}) });
      return { etag: unquote(res.headers.get('etag')) };
    },
    async completeMultipartUpload(
      bucket: string, key: string, uploadId: string, parts: { partNumber: number; etag: string }[],
      o: { objectMd5?: string; metadata?: Record<string, string> } = {},
    ): Promise<WriteResult & { location: string }> {
      const body = `<CompleteMultipartUpload>${parts.map((p) => `<Part><PartNumber>${p.partNumber}</PartNumber><ETag>"${p.etag}"</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
      const headers = headersFor({ metadata: o.metadata ?? {} }, p);
      if (o.objectMd5) headers.set(`${p}object-md5`, o.objectMd5);
      const res = await request('POST', { bucket, key, query: { uploadId }, body, headers });
      const doc = node((await xml(res)).CompleteMultipartUploadResult);
      const version = res.headers.get(`${p}version-id`);
      return {
        etag: unquote(text(doc.ETag)), location: text(doc.Location), requestId: res.headers.get(`${p}request-id`),
        ...(version ? { versionId: Number(version) } : {}),
      };
    },
    async abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
      await request('DELETE', { bucket, key, query: { uploadId } });
    },
    async listParts(bucket: string, key: string, uploadId: string, o: { maxParts?: number; partNumberMarker?: number } = {}) {
      const res = await request('GET', { bucket, key, query: { uploadId, 'max-parts': o.maxParts, 'part-number-marker': o.partNumberMarker } });
      const doc = node((await xml(res)).ListPartsResult);
      return {
        parts: list(doc.Part).map((p): PartSummary => ({
          partNumber: Number(text(p.PartNumber)), etag: unquote(text(p.ETag)), size: Number(text(p.Size)), lastModified: new Date(text(p.LastModified)),
        })),
        isTruncated: text(doc.IsTruncated) === 'true',
        nextPartNumberMarker: Number(text(doc.NextPartNumberMarker) || 0),
      };
    },
    async *listAllParts(bucket: string, key: string, uploadId: string): AsyncGenerator<PartSummary> {
      let marker = 0;
      for (;;) {
        const page = await client.listParts(bucket, key, uploadId, { partNumberMarker: marker });
        yield* page.parts;
        if (!page.isTruncated) return;
        marker = page.nextPartNumberMarker;
      }
    },
    async listMultipartUploads(bucket: string, o: { prefix?: string; keyMarker?: string; uploadIdMarker?: string; maxUploads?: number } = {}) {
      const res = await request('GET', {
        bucket, query: { uploads: '', prefix: o.prefix, 'key-marker': o.keyMarker, 'upload-id-marker': o.uploadIdMarker, 'max-uploads': o.maxUploads },
      });
      const doc = node((await xml(res)).ListMultipartUploadsResult);
      return {
        uploads: list(doc.Upload).map((u): UploadSummary => ({ key: text(u.Key), uploadId: text(u.UploadId), initiated: new Date(text(u.Initiated)) })),
        isTruncated: text(doc.IsTruncated) === 'true',
        nextKeyMarker: text(doc.NextKeyMarker),
        nextUploadIdMarker: text(doc.NextUploadIdMarker),
      };
    },
    async *listAllMultipartUploads(bucket: string, o: { prefix?: string } = {}): AsyncGenerator<UploadSummary> {
      let markers: { keyMarker?: string; uploadIdMarker?: string } = {};
      for (;;) {
        const page = await client.listMultipartUploads(bucket, { ...o, ...markers });
        yield* page.uploads;
        if (!page.isTruncated) return;
        markers = { keyMarker: page.nextKeyMarker, uploadIdMarker: page.nextUploadIdMarker };
      }
    },

    /** Single PUT below the part size, multipart above it: concurrent, retried, abortable, resumable. */
    upload(bucket: string, key: string, body: Blob, o: UploadOptions = {}): Promise<UploadResult> {
      return upload(client, bucket, key, body, o);
    },

    // ---- accounts (the emulator's administration; root only) ----
    async putAccount(accessKeyId: string, o: { secretAccessKey?: string; displayName?: string; quotaBytes?: number }): Promise<void> {
      const body = '<Account>'
        + (o.secretAccessKey !== undefined ? `<SecretAccessKey>${esc(o.secretAccessKey)}</SecretAccessKey>` : '')
        + (o.displayName !== undefined ? `<DisplayName>${esc(o.displayName)}</DisplayName>` : '')
        + (o.quotaBytes !== undefined ? `<QuotaBytes>${o.quotaBytes}</QuotaBytes>` : '')
        + '</Account>';
      await request('PUT', { query: { account: accessKeyId }, body });
    },
    async deleteAccount(accessKeyId: string): Promise<void> {
      await request('DELETE', { query: { account: accessKeyId } });
    },
    async listAccounts(): Promise<AccountSummary[]> {
      const doc = node((await xml(await request('GET', { query: { accounts: '' } }))).ListAccountsResult);
      return list(doc.Account).map((a) => ({
        accessKeyId: text(a.AccessKeyId), displayName: text(a.DisplayName), usedBytes: Number(text(a.UsedBytes)), root: text(a.Root) === 'true',
        ...(a.QuotaBytes !== undefined ? { quotaBytes: Number(text(a.QuotaBytes)) } : {}),
      }));
    },

    // ---- archives (the emulator's backup and restore; root only) ----
    async exportArchive(o: ExportOptions = {}): Promise<ArchiveDownload> {
      const res = await request('GET', {
        query: { export: '', bucket: o.buckets, versions: o.versions ? '' : undefined, accounts: o.accounts ? '' : undefined },
        ...(o.signal ? { signal: o.signal } : {}),
      });
      const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'swbucket.tar';
      return {
        body: res.body ?? new Blob([]).stream(),
        fileName: name,
        objects: Number(res.headers.get('x-svc-archive-objects') ?? 0),
        objectBytes: Number(res.headers.get('x-svc-archive-object-bytes') ?? 0),
      };
    },
    async importArchive(archive: Blob | BufferSource | ReadableStream<Uint8Array>, o: ImportOptions = {}): Promise<ImportResult> {
      const headers = new Headers({ 'content-type': 'application/x-tar' });
      let body = archive;
      // Signed with the request: the service refuses other bytes under this signature (BadDigest).
      if (!(archive instanceof ReadableStream) && o.checksum !== false) {
        body = archive instanceof Blob ? archive : new Blob([archive]);
        headers.set('content-md5', await contentMd5(body));
      }
      const res = await request('POST', {
        query: { import: '', conflict: o.conflict },
        body,
        headers,
        ...(o.signal ? { signal: o.signal } : {}),
      });
      const doc = node((await xml(res)).ImportResult);
      const n = (name: string) => Number(text(doc[name]));
      return {
        accountsCreated: n('AccountsCreated'), accountsUpdated: n('AccountsUpdated'), accountsSkipped: n('AccountsSkipped'),
        bucketsCreated: n('BucketsCreated'), bucketsExisting: n('BucketsExisting'),
        objectsRestored: n('ObjectsRestored'), objectsSkipped: n('ObjectsSkipped'), bytesRestored: n('BytesRestored'),
      };
    },
  };
  return client;
}
