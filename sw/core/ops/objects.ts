// Object operations: PUT, GET, HEAD, DELETE, Delete Multiple, Copy, Move, PUT Object Meta. Where
// the dialects differ (dialect.ts), the difference is read from ctx.dialect.
import { SvcError, fail } from '../errors.ts';
import { NotFetchedError } from '../../store/errors.ts';
import { limits } from '../limits.ts';
import { checkObjectAcl, ownedBucket, readableBucket } from '../access.ts';
import { readBody, readXmlBody } from '../body.ts';
import {
  ASCII_HEADER_VALUE, contentDisposition, httpDate, isoDate, isMediaType, modifiedSince, parseRange, preconditions, quoteEtag, utf8Length, writeCondition,
} from '../http.ts';
import { children, childText, parseXml } from '../xml.ts';
import { bucketNameProblem, isValidBucketName } from '../../../protocol/address.ts';
import { md5OfBlob } from '../../../protocol/md5.ts';
import { STANDARD_HEADERS, type BucketRecord, type BucketRef, type ConditionRefusal, type ObjectHeaders, type ObjectPart, type ObjectRecord, type WriteCondition } from '../../store/types.ts';
import { blobOf, responseBody } from '../../store/pieces.ts';
import { own, xmlAnswer, type Context } from '../context.ts';

const DEFAULT_TYPE = 'application/octet-stream';

export function checkKeyLength(key: string, code: 'InvalidArgument' | 'KeyTooLong' = 'InvalidArgument'): void {
  if (utf8Length(key) > limits.keyBytes) fail(code, `The key may not be longer than ${limits.keyBytes} bytes.`);
}

/**
 * The response metadata a request sets: Content-Type, the standard headers and user metadata
 * (x-svc-meta-*, x-nos-meta-*, x-amz-meta-*). `strictType`: PUT Object Meta replaces a
 * Content-Type that is not `type/subtype`. `h`: where they are sent, when not in headers (S3's POST form).
 */
export function objectHeadersFrom(ctx: Context, strictType = false, h: Headers = ctx.req.headers): ObjectHeaders {
  const metaPrefix = own(ctx, 'meta-');
  const type = h.get('content-type');
  const contentType = type === null || (strictType && !isMediaType(type)) ? DEFAULT_TYPE : type;
  const headers: ObjectHeaders['headers'] = {};
  for (const name of STANDARD_HEADERS) {
    const value = h.get(name);
    if (value !== null) headers[name] = value;
  }
  if (ctx.dialect.name === 's3' && headers['content-encoding'] !== undefined) {
    // `aws-chunked` names how the request's body was framed, not how the object is encoded: S3 drops it.
    const kept = headers['content-encoding'].split(',').map((t) => t.trim()).filter((t) => t !== '' && t.toLowerCase() !== 'aws-chunked');
    if (kept.length > 0) headers['content-encoding'] = kept.join(', ');
    else delete headers['content-encoding'];
  }
  const meta: [string, string][] = [];
  for (const [name, value] of h) {
    if (!name.startsWith(metaPrefix)) continue;
    const short = name.slice(metaPrefix.length);
    if (short === '') fail('InvalidArgument', `A user metadata header needs a name after ${metaPrefix}.`);
    meta.push([short, value]);
  }
  checkMetadataSize(meta);
  return { contentType, headers, meta };
}

export function checkMetadataSize(meta: [string, string][]): void {
  // Names and values come from headers, which are byte strings: one character per byte sent.
  const bytes = meta.reduce((n, [name, value]) => n + name.length + value.length, 0);
  if (bytes > limits.userMetadataBytes) {
    fail('InvalidArgument', `User metadata may not exceed ${limits.userMetadataBytes} bytes (names and values).`);
  }
}

const isMultipart = (o: ObjectRecord) => o.etag.includes('-');

/**
 * A multipart object's parts as its upload numbered them. An object completed before they were
 * kept has one chunk per part, taken as numbered from 1 on; undefined where even that is gone (an
 * S3 object such an object's archive brought back as one body). SVC's multipart ETags all end in
 * -1, whatever the count.
 */
export function partsOf(o: ObjectRecord): ObjectPart[] | undefined {
  if (o.parts || !isMultipart(o)) return o.parts;
  const count = Number(o.etag.slice(o.etag.indexOf('-') + 1));
  return count === 1 || o.chunks.length === count ? o.chunks.map((c, i) => ({ partNumber: i + 1, size: c.size })) : undefined;
}

/** `?partNumber=`, as Upload Part and S3's part reads take it: an integer from 1 to 10,000. */
export function partNumberParam(ctx: Context): number {
  const text = ctx.query.get('partNumber') ?? '';
  const n = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= limits.partNumberMax)) fail('InvalidArgument', `partNumber must be an integer from 1 to ${limits.partNumberMax}.`);
  return n;
}

/** S3's `?partNumber=` on GET and HEAD, checked before the object is read; undefined when absent. */
function partNumberOf(ctx: Context): number | undefined {
  if (ctx.dialect.name !== 's3' || !ctx.query.has('partNumber')) return undefined;
  const n = partNumberParam(ctx);
  if (ctx.req.headers.has('range')) fail('InvalidRequest', 'Cannot specify both Range header and partNumber query parameter.');
  return n;
}

/** Where an object is, as Complete and a form POST name it: its bucket's virtual host and the key, encoded. */
export function objectLocation(ctx: Context, key: string): string {
  return `http://${ctx.bucket}.${ctx.endpoint}/${key.split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * The bytes `?partNumber=N` reads: that part of a multipart object (its headers say how many it
 * has), or the whole of any other object as its part 1.
 */
function partSpan(o: ObjectRecord, n: number): { start: number; size: number; count?: number } {
  if (!isMultipart(o)) return n === 1 ? { start: 0, size: o.size } : fail('InvalidPart', `The object is not a multipart object: its only part is 1, not ${n}.`);
  const parts = partsOf(o)
    ?? fail('NotImplemented', 'This object was brought back from an archive that did not keep its parts apart; read it with a Range.');
  let start = 0;
  for (const part of parts) {
    if (part.partNumber === n) return { start, size: part.size, count: parts.length };
    start += part.size;
  }
  return fail('InvalidPart', `The object has no part ${n}.`);
}

/** Narrows an object's answer to one part: 206 with its Content-Range, and the object's parts count. */
function partHeaders(headers: Headers, o: ObjectRecord, span: { start: number; size: number; count?: number }): number {
  headers.set('content-length', String(span.size));
  if (span.count !== undefined) headers.set('x-amz-mp-parts-count', String(span.count));
  if (span.size === 0) return 200;
  headers.set('content-range', `bytes ${span.start}-${span.start + span.size - 1}/${o.size}`);
  return 206;
}

function lastSegment(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}

/** S3's `response-*` parameters: a GET's own choice of the headers it is answered with. */
const OVERRIDES = ['content-type', 'content-language', 'expires', 'cache-control', 'content-disposition', 'content-encoding'];

/** The headers an object is served with (GET, HEAD, and the ifNotFound fallback). */
function objectResponseHeaders(ctx: Context, o: ObjectRecord, download: string | null): Headers {
  const h = new Headers({
    etag: quoteEtag(o.etag),
    'content-type': o.contentType,
    'last-modified': httpDate(o.lastModified),
    'accept-ranges': 'bytes',
    'content-length': String(o.size),
  });
  for (const name of STANDARD_HEADERS) {
    const value = o.headers[name];
    if (value !== undefined && value !== '') h.set(name, value);
  }
  if (download !== null) h.set('content-disposition', contentDisposition('attachment', download));
  else if (!o.headers['content-disposition'] && ctx.dialect.inlineName) h.set('content-disposition', contentDisposition('inline', lastSegment(o.key)));
  for (const [name, value] of o.meta) h.append(own(ctx, 'meta-') + name, value);
  if (o.objectMd5 && ctx.dialect.name !== 's3') h.set(own(ctx, 'object-md5'), o.objectMd5);
  if (o.versionId !== undefined) h.set(own(ctx, 'version-id'), String(o.versionId));
  if (ctx.dialect.name === 's3') {
    // S3 gives the stored checksum when asked, for the whole object only.
    if (o.checksum && ctx.req.headers.get('x-amz-checksum-mode')?.toUpperCase() === 'ENABLED' && !ctx.req.headers.has('range') && !ctx.query.has('partNumber')) {
      h.set(`x-amz-checksum-${o.checksum.algorithm.toLowerCase()}`, o.checksum.value);
      h.set('x-amz-checksum-type', 'FULL_OBJECT');
    }
    for (const name of OVERRIDES) {
      const value = ctx.query.get(`response-${name}`);
      if (value === null) continue;
      if (!ctx.caller) fail('InvalidRequest', 'Request specific response headers cannot be used for anonymous GET requests.');
      if (!ASCII_HEADER_VALUE.test(value)) fail('InvalidArgument', `response-${name} must be printable ASCII (a filename beyond it goes in filename*=UTF-8''…, percent-encoded).`);
      h.set(name, value);
    }
  }
  return h;
}

/** The headers a write answers with: the new ETag, and its versionId when it got one. */
export function writtenHeaders(ctx: Context, o: ObjectRecord): Record<string, string> {
  return o.versionId === undefined
    ? { etag: quoteEtag(o.etag) }
    : { etag: quoteEtag(o.etag), [own(ctx, 'version-id')]: String(o.versionId) };
}

/** Turns a store refusal of a write into its error. */
export function written<T>(result: T | 'noSuchBucket' | 'quotaExceeded'): T {
  if (result === 'noSuchBucket') return fail('NoSuchBucket');
  if (result === 'quotaExceeded') return fail('QuotaExceeded', "The write would pass the bucket owner's storage quota.");
  return result;
}

/** Turns a conditional write's refusal into its error: 412 PreconditionFailed, or 404 NoSuchKey for If-Match with no object. */
export function held<T>(result: T | ConditionRefusal): T {
  if (result === 'preconditionFailed') return fail('PreconditionFailed');
  if (result === 'noSuchKey') return fail('NoSuchKey', 'If-Match names an object, and the key has none.');
  return result as T;
}

/**
 * The request's conditional write (S3: If-Match, If-None-Match), or undefined. Tested here against
 * the object now at the key, so that a write it refuses is refused before its body is read; the
 * store tests it again as the write commits, since another write may come between.
 */
export async function writeConditionOf(ctx: Context, bucket: BucketRef): Promise<WriteCondition | undefined> {
  const condition = ctx.dialect.allConditionals ? writeCondition(ctx.req.headers) : undefined;
  if (condition) held(condition(inBucket(await ctx.store.headObject(bucket, ctx.key))) ?? 'ok');
  return condition;
}

/**
 * Turns a read's 'noSuchBucket' into its error: the bucket the request was authorised for was
 * deleted since, perhaps re-created by someone else (docs/browser.md, "Bucket identity").
 */
export function inBucket<T>(result: T | 'noSuchBucket'): T {
  if (result === 'noSuchBucket') return fail('NoSuchBucket');
  return result;
}

function notModified(o: ObjectRecord): Response {
  return new Response(null, {
    status: 304,
    headers: { etag: quoteEtag(o.etag), 'last-modified': httpDate(o.lastModified) },
  });
}

/**
 * A read's conditional headers: If-Modified-Since in every dialect; in S3's also If-Match,
 * If-None-Match and If-Unmodified-Since. The answer they call for, or undefined to go on.
 */
function conditional(ctx: Context, o: ObjectRecord): Response | undefined {
  if (!ctx.dialect.allConditionals) {
    return modifiedSince(ctx.req.headers.get('if-modified-since'), o.lastModified, ctx.now()) ? undefined : notModified(o);
  }
  const outcome = preconditions(ctx.req.headers, o, ctx.now());
  if (outcome === 'failed') return fail('PreconditionFailed');
  return outcome === 'notModified' ? notModified(o) : undefined;
}

/** What a version id in a request may be (docs/protocol.md, "Versioning"). */
export const VERSION_ID = new RegExp(`^\\d{1,${limits.versionIdDigits}}$`);

/**
 * ?versionId=N, when the request names a version. In S3's dialect `null` names the version written
 * while versioning was off, as ListObjectVersions lists it: here the current object while it has
 * no id (moved into the history, it gets one).
 */
function versionIdOf(ctx: Context): number | undefined | 'null' {
  const text = ctx.query.get('versionId');
  if (text === null) return undefined;
  if (text === 'null' && ctx.dialect.name === 's3') return 'null';
  if (!VERSION_ID.test(text)) return fail('NoSuchVersion', `There is no version "${text}".`);
  return Number(text);
}

/** The current object's record when it is the `null` version (it has no id); undefined otherwise. */
function nullVersion<T extends { object: ObjectRecord } | ObjectRecord>(found: T | undefined): T | undefined {
  if (found === undefined) return undefined;
  const record: ObjectRecord = 'object' in found ? found.object : found;
  return record.versionId === undefined ? found : undefined;
}

function downloadName(ctx: Context): string | null {
  // S3 has response-content-disposition instead, and ignores what it does not know.
  const name = ctx.dialect.name === 's3' ? null : ctx.query.get('download');
  if (name !== null && utf8Length(name) > limits.downloadNameBytes) {
    fail('InvalidArgument', `The download name may not exceed ${limits.downloadNameBytes} bytes.`);
  }
  return name;
}

/** Objects over this size, listed only (cache mode), answer a range from their remote rather than wait to be fetched whole. */
const RANGE_FROM_REMOTE_BYTES = 1024 * 1024;

/**
 * A range of the current object at `ctx.key` when the cache mode only lists it and it is large:
 * read from the remote (the whole is fetched meanwhile); undefined to read it as any other.
 */
async function rangeFromRemote(ctx: Context, bucket: BucketRef, download: string | null): Promise<Response | undefined> {
  const range = ctx.req.headers.get('range');
  if (range === null || !ctx.readMissingRange) return undefined;
  const listed = inBucket(await ctx.store.headObject(bucket, ctx.key));
  if (!listed?.notFetched || listed.size <= RANGE_FROM_REMOTE_BYTES) return undefined;
  const unchanged = conditional(ctx, listed);
  if (unchanged) return unchanged;
  const { start, end } = parseRange(range, listed.size);
  const got = await ctx.readMissingRange(bucket.name, ctx.key, { start, end }, listed.etag);
  if (!got) return undefined;
  const headers = objectResponseHeaders(ctx, { ...listed, ...got.headers }, download);
  headers.set('content-range', `bytes ${start}-${end}/${listed.size}`);
  headers.set('content-length', String(end - start + 1));
  return new Response(got.body, { status: 206, headers });
}

export async function getObject(ctx: Context): Promise<Response> {
  const bucket = await readableBucket(ctx);
  const versionId = versionIdOf(ctx);
  const partNumber = partNumberOf(ctx);
  const download = downloadName(ctx);
  let found;
  try {
    found = versionId === 'null'
      ? nullVersion(inBucket(await ctx.store.getObject(bucket, ctx.key)))
      : inBucket(await ctx.store.getObject(bucket, ctx.key, versionId));
  } catch (e) {
    // Listed only (the handler fetches it and asks again), unless a range of it can come from the remote.
    const fromRemote = e instanceof NotFetchedError && versionId === undefined && partNumber === undefined ? await rangeFromRemote(ctx, bucket, download) : undefined;
    if (fromRemote) return fromRemote;
    throw e;
  }
  if (!found && versionId !== undefined) return fail('NoSuchVersion');
  if (!found) {
    const fallback = ctx.dialect.name === 's3' ? null : ctx.query.get('ifNotFound');
    const other = fallback ? inBucket(await ctx.store.getObject(bucket, fallback)) : undefined;
    if (!other) return fail('NoSuchKey');
    return new Response(responseBody(other.body), { status: 404, headers: objectResponseHeaders(ctx, other.object, download) });
  }
  const { object, body } = found;
  const unchanged = conditional(ctx, object);
  if (unchanged) return unchanged;
  const headers = objectResponseHeaders(ctx, object, download);
  if (partNumber !== undefined) {
    const span = partSpan(object, partNumber);
    const status = partHeaders(headers, object, span);
    return new Response(responseBody(body.slice(span.start, span.start + span.size)), { status, headers });
  }
  const range = ctx.req.headers.get('range');
  if (range === null) return new Response(responseBody(body), { status: 200, headers });
  const { start, end } = parseRange(range, object.size);
  headers.set('content-range', `bytes ${start}-${end}/${object.size}`);
  headers.set('content-length', String(end - start + 1));
  return new Response(responseBody(body.slice(start, end + 1)), { status: 206, headers });
}

export async function headObject(ctx: Context): Promise<Response> {
  const bucket = await readableBucket(ctx);
  const versionId = versionIdOf(ctx);
  const partNumber = partNumberOf(ctx);
  const object = (versionId === 'null'
    ? nullVersion(inBucket(await ctx.store.headObject(bucket, ctx.key)))
    : inBucket(await ctx.store.headObject(bucket, ctx.key, versionId)))
    ?? fail(versionId === undefined ? 'NoSuchKey' : 'NoSuchVersion');
  // Listed from a replica's remote only: its headers come with its bytes (the handler fetches
  // them), unless it was fetched before and its bytes let go since.
  if (object.notFetched && !object.headersKept) throw new NotFetchedError(bucket.name, ctx.key);
  const unchanged = conditional(ctx, object);
  if (unchanged) return unchanged;
  const headers = objectResponseHeaders(ctx, object, null);
  const status = partNumber === undefined ? 200 : partHeaders(headers, object, partSpan(object, partNumber));
  return new Response(null, { status, headers });
}

export async function putObject(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  checkObjectAcl(ctx, bucket, ctx.req.headers.get('x-amz-acl'));
  checkKeyLength(ctx.key);
  const headers = objectHeadersFrom(ctx);
  const condition = await writeConditionOf(ctx, bucket);
  const room = await ctx.store.roomFor(bucket, { key: ctx.key });
  const body = await readBody(ctx, { max: limits.putObjectBytes, tooLarge: 'EntityTooLarge', requireLength: true, room });
  const checksum = body.checksum ? { checksum: { algorithm: body.checksum.algorithm, value: body.checksum.value } } : {};
  const made = held(written(await ctx.store.putObject(
    bucket,
    { key: ctx.key, size: body.size, etag: body.md5, lastModified: ctx.now(), ...headers, ...checksum },
    body.body,
    condition,
  )));
  const answer = writtenHeaders(ctx, made);
  if (body.checksum) answer[body.checksum.header] = body.checksum.value;
  return new Response(null, { status: 200, headers: answer });
}

export async function deleteObject(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  if (ctx.dialect.deleteMissing === 'noContent') {
    // S3: a delete succeeds whether or not the key (or the version named) held anything.
    const versionId = versionIdOf(ctx);
    if (versionId !== undefined) {
      const entries = await s3DeleteEntries(ctx, bucket, [{ key: ctx.key, versionId }]);
      if (entries.length > 0) written(await ctx.store.deleteObjects(bucket, entries));
      return new Response(null, { status: 204, headers: { [own(ctx, 'version-id')]: ctx.query.get('versionId')! } });
    }
    written(await ctx.store.deleteObject(bucket, ctx.key));
    return new Response(null, { status: 204 });
  }
  if (written(await ctx.store.deleteObject(bucket, ctx.key)) === 'noSuchKey') fail('NoSuchKey');
  return new Response(null, { status: 200 });
}

/**
 * S3's deletes of versions: `null` is the current object while it has no id, and deletes nothing
 * once it has one (that object is another version). What names nothing is left out: S3 reports
 * it deleted all the same.
 */
async function s3DeleteEntries(ctx: Context, bucket: BucketRecord, entries: { key: string; versionId?: number | 'null' }[]) {
  const out: { key: string; versionId?: number }[] = [];
  for (const e of entries) {
    if (e.versionId !== 'null') out.push(e as { key: string; versionId?: number });
    else if (nullVersion(inBucket(await ctx.store.headObject(bucket, e.key)))) out.push({ key: e.key });
  }
  return out;
}

export async function deleteObjects(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  // An Object is at most 12 tags (Object, Key, VersionId, ETag, LastModifiedTime, Size, opened and closed).
  const doc = parseXml(await readXmlBody(ctx, limits.deleteBodyBytes), 'Delete', limits.deleteObjects * 12 + 16);
  const quietText = childText(doc, 'Quiet')?.trim().toLowerCase();
  if (quietText !== undefined && quietText !== 'true' && quietText !== 'false') fail('MalformedXML', 'Quiet must be true or false.');
  const quiet = quietText === 'true';
  const objects = children(doc, 'Object');
  if (objects.length === 0) fail('MalformedXML', 'At least one Object is required.');
  if (objects.length > limits.deleteObjects) fail('MalformedXML', `At most ${limits.deleteObjects} objects per request.`);
  const s3 = ctx.dialect.name === 's3';
  const requested = objects.map((o) => {
    const key = childText(o, 'Key') ?? fail('MalformedXML', 'Every Object needs a Key.');
    const versionText = childText(o, 'VersionId')?.trim();
    // A VersionId that is not a number names no version: NoSuchVersion for that entry (in S3, deleted: there is nothing).
    const versionId = versionText === undefined ? undefined : VERSION_ID.test(versionText) ? Number(versionText) : s3 && versionText === 'null' ? 'null' as const : -1;
    return { key, versionId, versionText };
  });
  const deleted: Record<string, string>[] = [];
  const errors: Record<string, string>[] = [];
  const named = (r: (typeof requested)[number]): Record<string, string> => (r.versionText === undefined ? { Key: r.key } : { Key: r.key, VersionId: r.versionText });
  if (s3) {
    // A version id that cannot be one (an empty VersionId) is an error; one that names nothing was deleted.
    const valid = requested.filter((r) => r.versionId !== -1);
    const entries = await s3DeleteEntries(ctx, bucket, valid);
    if (entries.length > 0) written(await ctx.store.deleteObjects(bucket, entries));
    for (const r of requested) {
      if (r.versionId === -1) errors.push({ Key: r.key, Code: 'NoSuchVersion', Message: 'The specified version does not exist.' });
      else deleted.push(named(r));
    }
  } else {
    const outcomes = written(await ctx.store.deleteObjects(bucket, requested as { key: string; versionId?: number }[]));
    requested.forEach((r, i) => {
      if (outcomes[i] === 'deleted') deleted.push(named(r));
      else errors.push({ Key: r.key, Code: 'NoSuchVersion', Message: 'The specified version does not exist.' });
    });
  }
  // S3 answers a quiet delete with an empty DeleteResult; SVC and NOS with no body at all.
  if (quiet && errors.length === 0 && ctx.dialect.name !== 's3') return new Response(null, { status: 200 });
  const result: Record<string, unknown> = {};
  if (!quiet) result.Deleted = deleted;
  result.Error = errors;
  return xmlAnswer(ctx, { DeleteResult: result });
}

/**
 * `x-svc-copy-source` / `x-svc-move-source`: URL-encoded `/{bucket}/{key}`. S3's
 * `x-amz-copy-source` may leave out the first slash and name a version: `?versionId=N`.
 */
export function sourceOf(header: string): { bucket: string; key: string; versionId?: number; versionText?: string } {
  let value: string;
  let versionText: string | undefined;
  const raw = header.trim();
  const q = raw.indexOf('?versionId=');
  try {
    value = decodeURIComponent(q < 0 ? raw : raw.slice(0, q));
    if (q >= 0) versionText = decodeURIComponent(raw.slice(q + '?versionId='.length));
  } catch {
    return fail('InvalidArgument', 'The source header is not valid percent-encoded UTF-8.');
  }
  const path = value.startsWith('/') ? value.slice(1) : value;
  const slash = path.indexOf('/');
  const bucket = path.slice(0, slash);
  const key = path.slice(slash + 1);
  if (slash <= 0 || key === '') fail('InvalidArgument', 'The source must be /{bucket}/{key}.');
  if (!isValidBucketName(bucket)) fail('InvalidBucketName', bucketNameProblem(bucket));
  if (versionText === undefined) return { bucket, key };
  if (versionText === 'null') return { bucket, key, versionText };
  if (!VERSION_ID.test(versionText)) return fail('NoSuchVersion', `There is no version "${versionText}".`);
  return { bucket, key, versionId: Number(versionText), versionText };
}

function oneSourceHeader(ctx: Context): void {
  if (ctx.req.headers.has(own(ctx, 'copy-source')) && ctx.req.headers.has(own(ctx, 'move-source'))) {
    fail('InvalidArgument', `Send ${own(ctx, 'copy-source')} or ${own(ctx, 'move-source')}, not both.`);
  }
}

/**
 * The object a copy reads (CopyObject, S3's UploadPartCopy): its source header's, when the caller
 * may read it and, in S3, its `x-amz-copy-source-if-*` conditions hold.
 */
export async function copySource(ctx: Context) {
  const source = sourceOf(ctx.req.headers.get(own(ctx, 'copy-source'))!);
  const from = await readableBucket(ctx, source.bucket);
  const named = inBucket(await ctx.store.getObject(from, source.key, source.versionId));
  const found = (source.versionText === 'null' ? nullVersion(named) : named)
    ?? fail(source.versionText === undefined ? 'NoSuchKey' : 'NoSuchVersion');
  if (ctx.dialect.allConditionals && preconditions(ctx.req.headers, found.object, ctx.now(), 'x-amz-copy-source-') !== 'ok') {
    fail('PreconditionFailed');
  }
  return { source, ...found };
}

export async function copyObject(ctx: Context): Promise<Response> {
  oneSourceHeader(ctx);
  const destination = await ownedBucket(ctx);
  checkObjectAcl(ctx, destination, ctx.req.headers.get('x-amz-acl'));
  checkKeyLength(ctx.key);
  const { source, object, body } = await copySource(ctx);
  // A copy is written as a PUT is, in one step (its MD5 read first): no larger than a PUT's body.
  // A larger object copies in parts (UploadPartCopy), as S3's over 5 GB do.
  if (object.size > limits.putObjectBytes) {
    fail('InvalidRequest', `The specified copy source is larger than the maximum allowable size for a copy source: ${limits.putObjectBytes} (copy it in parts: UploadPartCopy).`);
  }
  const condition = await writeConditionOf(ctx, destination);
  // S3 copies the source's metadata, or with `x-amz-metadata-directive: REPLACE` takes the request's.
  const directive = ctx.dialect.name === 's3' ? (ctx.req.headers.get('x-amz-metadata-directive') ?? 'COPY').trim().toUpperCase() : 'COPY';
  if (directive !== 'COPY' && directive !== 'REPLACE') fail('InvalidArgument', 'x-amz-metadata-directive must be COPY or REPLACE.');
  if (directive === 'COPY' && ctx.dialect.name === 's3' && source.bucket === ctx.bucket && source.key === ctx.key && source.versionId === undefined) {
    fail('InvalidRequest', "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata "
      + '(send x-amz-metadata-directive: REPLACE).');
  }
  const metadata = directive === 'REPLACE'
    ? objectHeadersFrom(ctx)
    : { contentType: object.contentType, headers: object.headers, meta: object.meta };
  // A copy is a new single-request object: its ETag is the plain MD5 of the bytes.
  const etag = isMultipart(object) ? await md5OfBlob(await blobOf(body)) : object.etag;
  const made = held(written(await ctx.store.putObject(destination, {
    key: ctx.key, size: object.size, etag, lastModified: ctx.now(), ...metadata, ...(object.checksum ? { checksum: object.checksum } : {}),
  }, body, condition)));
  if (ctx.dialect.name !== 's3') return new Response(null, { status: 200, headers: writtenHeaders(ctx, made) });
  const headers: Record<string, string> = made.versionId === undefined ? {} : { 'x-amz-version-id': String(made.versionId) };
  if (object.versionId !== undefined) headers['x-amz-copy-source-version-id'] = String(object.versionId);
  return xmlAnswer(ctx, { CopyObjectResult: { LastModified: isoDate(made.lastModified), ETag: quoteEtag(made.etag) } }, 200, headers);
}

export async function moveObject(ctx: Context): Promise<Response> {
  oneSourceHeader(ctx);
  const bucket = await ownedBucket(ctx);
  checkKeyLength(ctx.key);
  const source = sourceOf(ctx.req.headers.get(own(ctx, 'move-source'))!);
  if (source.bucket !== ctx.bucket) fail('InvalidArgument', 'A move across buckets is not supported; copy, then delete.');
  if (source.key === ctx.key) fail('InvalidArgument', 'The source and destination of a move are the same object.');
  const moved = written(await ctx.store.moveObject(bucket, source.key, ctx.key, ctx.now()));
  if (moved === 'noSuchKey') return fail('NoSuchKey');
  return new Response(null, { status: 200, headers: writtenHeaders(ctx, moved) });
}

export async function putObjectMeta(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const headers = objectHeadersFrom(ctx, true);
  // The request has no payload of its own; a Content-MD5, if sent, must still match what came.
  await readBody(ctx, { max: limits.smallXmlBodyBytes, tooLarge: 'EntityTooLarge', requireLength: false });
  const result = written(await ctx.store.putObjectMeta(bucket, ctx.key, headers, ctx.now()));
  // A missing object is a bare 404, without an error code (docs/protocol.md, "Errors").
  if (result === 'noSuchKey') return new Response(null, { status: 404 });
  return new Response(null, { status: 200 });
}

