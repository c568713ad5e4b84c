// Object operations: PUT, GET, HEAD, DELETE, Delete Multiple, Copy, Move, PUT Object Meta.
import { fail } from '../errors.ts';
import { limits } from '../limits.ts';
import { ownedBucket, readableBucket } from '../access.ts';
import { readBody, readXmlBody } from '../body.ts';
import {
  contentDisposition, httpDate, isMediaType, modifiedSince, parseRange, quoteEtag, utf8Length,
} from '../http.ts';
import { children, childText, parseXml, xmlResponse } from '../xml.ts';
import { bucketNameProblem, isValidBucketName } from '../../../protocol/address.ts';
import { md5OfBlob } from '../../../protocol/md5.ts';
import { STANDARD_HEADERS, type ObjectHeaders, type ObjectRecord } from '../../store/types.ts';
import { blobOf, responseBody } from '../../store/pieces.ts';
import type { Context } from '../context.ts';

const META_PREFIX = 'x-svc-meta-';
const DEFAULT_TYPE = 'application/octet-stream';

export function checkKeyLength(key: string, code: 'InvalidArgument' | 'KeyTooLong' = 'InvalidArgument'): void {
  if (utf8Length(key) > limits.keyBytes) fail(code, `The key may not be longer than ${limits.keyBytes} bytes.`);
}

/**
 * The response metadata a request sets: Content-Type, the standard headers and x-svc-meta-*.
 * `strictType`: PUT Object Meta replaces a Content-Type that is not `type/subtype`.
 */
export function objectHeadersFrom(h: Headers, strictType = false): ObjectHeaders {
  const type = h.get('content-type');
  const contentType = type === null || (strictType && !isMediaType(type)) ? DEFAULT_TYPE : type;
  const headers: ObjectHeaders['headers'] = {};
  for (const name of STANDARD_HEADERS) {
    const value = h.get(name);
    if (value !== null) headers[name] = value;
  }
  const meta: [string, string][] = [];
  for (const [name, value] of h) {
    if (!name.startsWith(META_PREFIX)) continue;
    const short = name.slice(META_PREFIX.length);
    if (short === '') fail('InvalidArgument', 'A user metadata header needs a name after x-svc-meta-.');
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

function lastSegment(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}

/** The headers an object is served with (GET, HEAD, and the ifNotFound fallback). */
function objectResponseHeaders(o: ObjectRecord, download: string | null): Headers {
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
  else if (!o.headers['content-disposition']) h.set('content-disposition', contentDisposition('inline', lastSegment(o.key)));
  for (const [name, value] of o.meta) h.append(META_PREFIX + name, value);
  if (o.objectMd5) h.set('x-svc-object-md5', o.objectMd5);
  if (o.versionId !== undefined) h.set('x-svc-version-id', String(o.versionId));
  return h;
}

/** The headers a write answers with: the new ETag, and its versionId when it got one. */
export function writtenHeaders(o: ObjectRecord): Record<string, string> {
  return o.versionId === undefined
    ? { etag: quoteEtag(o.etag) }
    : { etag: quoteEtag(o.etag), 'x-svc-version-id': String(o.versionId) };
}

/** Turns a store refusal of a write into its error. */
export function written<T>(result: T | 'noSuchBucket' | 'quotaExceeded'): T {
  if (result === 'noSuchBucket') return fail('NoSuchBucket');
  if (result === 'quotaExceeded') return fail('QuotaExceeded', "The write would pass the bucket owner's storage quota.");
  return result;
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

/** What a version id in a request may be (docs/protocol.md, "Versioning"). */
const VERSION_ID = new RegExp(`^\\d{1,${limits.versionIdDigits}}$`);

/** ?versionId=N, when the request names a version. */
function versionIdOf(ctx: Context): number | undefined {
  const text = ctx.query.get('versionId');
  if (text === null) return undefined;
  if (!VERSION_ID.test(text)) return fail('NoSuchVersion', `There is no version "${text}".`);
  return Number(text);
}

function downloadName(ctx: Context): string | null {
  const name = ctx.query.get('download');
  if (name !== null && utf8Length(name) > limits.downloadNameBytes) {
    fail('InvalidArgument', `The download name may not exceed ${limits.downloadNameBytes} bytes.`);
  }
  return name;
}

export async function getObject(ctx: Context): Promise<Response> {
  const bucket = await readableBucket(ctx);
  const versionId = versionIdOf(ctx);
  const download = downloadName(ctx);
  const found = inBucket(await ctx.store.getObject(bucket, ctx.key, versionId));
  if (!found && versionId !== undefined) return fail('NoSuchVersion');
  if (!found) {
    const fallback = ctx.query.get('ifNotFound');
    const other = fallback ? inBucket(await ctx.store.getObject(bucket, fallback)) : undefined;
    if (!other) return fail('NoSuchKey');
    return new Response(responseBody(other.body), { status: 404, headers: objectResponseHeaders(other.object, download) });
  }
  const { object, body } = found;
  if (!modifiedSince(ctx.req.headers.get('if-modified-since'), object.lastModified, ctx.now())) return notModified(object);
  const headers = objectResponseHeaders(object, download);
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
  const object = inBucket(await ctx.store.headObject(bucket, ctx.key, versionId))
    ?? fail(versionId === undefined ? 'NoSuchKey' : 'NoSuchVersion');
  if (!modifiedSince(ctx.req.headers.get('if-modified-since'), object.lastModified, ctx.now())) return notModified(object);
  return new Response(null, { status: 200, headers: objectResponseHeaders(object, null) });
}

export async function putObject(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  checkKeyLength(ctx.key);
  const headers = objectHeadersFrom(ctx.req.headers);
  const room = await ctx.store.roomFor(bucket, { key: ctx.key });
  const body = await readBody(ctx, { max: limits.putObjectBytes, tooLarge: 'EntityTooLarge', requireLength: true, room });
  const made = written(await ctx.store.putObject(
    bucket,
    { key: ctx.key, size: body.size, etag: body.md5, lastModified: ctx.now(), ...headers },
    body.body,
  ));
  return new Response(null, { status: 200, headers: writtenHeaders(made) });
}

export async function deleteObject(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  if (written(await ctx.store.deleteObject(bucket, ctx.key)) === 'noSuchKey') fail('NoSuchKey');
  return new Response(null, { status: 200 });
}

export async function deleteObjects(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const doc = parseXml(await readXmlBody(ctx, limits.deleteBodyBytes), 'Delete');
  const quietText = childText(doc, 'Quiet')?.trim().toLowerCase();
  if (quietText !== undefined && quietText !== 'true' && quietText !== 'false') fail('MalformedXML', 'Quiet must be true or false.');
  const quiet = quietText === 'true';
  const objects = children(doc, 'Object');
  if (objects.length === 0) fail('MalformedXML', 'At least one Object is required.');
  if (objects.length > limits.deleteObjects) fail('MalformedXML', `At most ${limits.deleteObjects} objects per request.`);
  const requested = objects.map((o) => {
    const key = childText(o, 'Key') ?? fail('MalformedXML', 'Every Object needs a Key.');
    const versionText = childText(o, 'VersionId')?.trim();
    // A VersionId that is not a number names no version: NoSuchVersion for that entry.
    const versionId = versionText === undefined ? undefined : VERSION_ID.test(versionText) ? Number(versionText) : -1;
    return { key, versionId, versionText };
  });
  const outcomes = written(await ctx.store.deleteObjects(bucket, requested));
  const deleted: Record<string, string>[] = [];
  const errors: Record<string, string>[] = [];
  requested.forEach((r, i) => {
    if (outcomes[i] === 'deleted') deleted.push(r.versionText === undefined ? { Key: r.key } : { Key: r.key, VersionId: r.versionText });
    else errors.push({ Key: r.key, Code: 'NoSuchVersion', Message: 'The specified version does not exist.' });
  });
  if (quiet && errors.length === 0) return new Response(null, { status: 200 });
  const result: Record<string, unknown> = {};
  if (!quiet) result.Deleted = deleted;
  result.Error = errors;
  return xmlResponse({ DeleteResult: result });
}

/** `x-svc-copy-source` / `x-svc-move-source`: URL-encoded `/{bucket}/{key}`. */
function sourceOf(header: string): { bucket: string; key: string } {
  let value: string;
  try {
    value = decodeURIComponent(header.trim());
  } catch {
    return fail('InvalidArgument', 'The source header is not valid percent-encoded UTF-8.');
  }
  const path = value.startsWith('/') ? value.slice(1) : value;
  const slash = path.indexOf('/');
  const bucket = path.slice(0, slash);
  const key = path.slice(slash + 1);
  if (slash <= 0 || key === '') fail('InvalidArgument', 'The source must be /{bucket}/{key}.');
  if (!isValidBucketName(bucket)) fail('InvalidBucketName', bucketNameProblem(bucket));
  return { bucket, key };
}

function oneSourceHeader(ctx: Context): void {
  if (ctx.req.headers.has('x-svc-copy-source') && ctx.req.headers.has('x-svc-move-source')) {
    fail('InvalidArgument', 'Send x-svc-copy-source or x-svc-move-source, not both.');
  }
}

export async function copyObject(ctx: Context): Promise<Response> {
  oneSourceHeader(ctx);
  const destination = await ownedBucket(ctx);
  checkKeyLength(ctx.key);
  const source = sourceOf(ctx.req.headers.get('x-svc-copy-source')!);
  const from = await readableBucket(ctx, source.bucket);
  const found = inBucket(await ctx.store.getObject(from, source.key)) ?? fail('NoSuchKey');
  const { object, body } = found;
  // A copy is a new single-request object: its ETag is the plain MD5 of the bytes.
  const etag = isMultipart(object) ? await md5OfBlob(await blobOf(body)) : object.etag;
  const made = written(await ctx.store.putObject(destination, {
    key: ctx.key,
    size: object.size,
    etag,
    lastModified: ctx.now(),
    contentType: object.contentType,
    headers: object.headers,
    meta: object.meta,
  }, body));
  return new Response(null, { status: 200, headers: writtenHeaders(made) });
}

export async function moveObject(ctx: Context): Promise<Response> {
  oneSourceHeader(ctx);
  const bucket = await ownedBucket(ctx);
  checkKeyLength(ctx.key);
  const source = sourceOf(ctx.req.headers.get('x-svc-move-source')!);
  if (source.bucket !== ctx.bucket) fail('InvalidArgument', 'A move across buckets is not supported; copy, then delete.');
  if (source.key === ctx.key) fail('InvalidArgument', 'The source and destination of a move are the same object.');
  const moved = written(await ctx.store.moveObject(bucket, source.key, ctx.key, ctx.now()));
  if (moved === 'noSuchKey') return fail('NoSuchKey');
  return new Response(null, { status: 200, headers: writtenHeaders(moved) });
}

export async function putObjectMeta(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const headers = objectHeadersFrom(ctx.req.headers, true);
  // The request has no payload of its own; a Content-MD5, if sent, must still match what came.
  await readBody(ctx, { max: limits.smallXmlBodyBytes, tooLarge: 'EntityTooLarge', requireLength: false });
  const result = written(await ctx.store.putObjectMeta(bucket, ctx.key, headers, ctx.now()));
  // A missing object is a bare 404, without an error code (docs/protocol.md, "Errors").
  if (result === 'noSuchKey') return new Response(null, { status: 404 });
  return new Response(null, { status: 200 });
}

