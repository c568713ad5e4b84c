// Operations only S3's dialect has (docs/protocol.md, "Dialects"): ListObjectsV2, GetBucketLocation,
// the ACL as S3's AccessControlPolicy document, UploadPartCopy, POST Object (form uploads) and the
// bucket's CORS configuration (enforced by cors.ts). Each is the store's own
// listing or write under S3's names; nothing here keeps state of its own.
import { SvcError, fail } from '../errors.ts';
import { limits } from '../limits.ts';
import { checkObjectAcl, ownedBucket, readableBucket } from '../access.ts';
import { ASCII_HEADER_VALUE, HEADER_NAME, httpDate, isoDate, quoteEtag } from '../http.ts';
import { VERSION_ID, checkKeyLength, copySource, held, inBucket, objectHeadersFrom, objectLocation, partsOf, written } from './objects.ts';
import { listingEncoder, listingEntries, listingPage, ownerOf } from './buckets.ts';
import { uploadPartTarget } from './multipart.ts';
import { md5OfBlob } from '../../../protocol/md5.ts';
import { SIGV4_ALGORITHM, credentialOf, isAmzDate, verifyV4 } from '../../../protocol/sigv4.ts';
import { blobOf } from '../../store/pieces.ts';
import { STANDARD_HEADERS, type Account, type ObjectPart } from '../../store/types.ts';
import { pageTruncated, xmlAnswer, type Context } from '../context.ts';
import { corsDocument, parseCorsConfiguration } from '../cors.ts';
import { bodySource, readStream, readXmlBody } from '../body.ts';
import { formBoundary, readFormStart } from '../form.ts';
import { checkXmlText } from '../address.ts';

/**
 * A continuation token: the key the next page starts after, base64url'd with a version letter, so
 * that a client treats it as opaque (S3's are) and a token from elsewhere is refused, not misread.
 */
function tokenOf(key: string): string {
  const bytes = new TextEncoder().encode(key);
  return 'k' + btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function keyOfToken(token: string): string {
  try {
    if (!/^k[A-Za-z0-9_-]*$/.test(token)) throw new Error();
    const bin = atob(token.slice(1).replace(/-/g, '+').replace(/_/g, '/'));
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
  } catch {
    return fail('InvalidArgument', 'The continuation token provided is incorrect.');
  }
}

/**
 * S3's ListBuckets paging: `prefix`, `max-buckets` (1–10,000; all when absent) and the
 * `continuation-token` of the page before, which names the last bucket it listed.
 */
export function bucketPage<B extends { name: string }>(ctx: Context, all: B[]): { buckets: B[]; paging: Record<string, string> } {
  const prefix = ctx.query.get('prefix') ?? '';
  const maxText = ctx.query.get('max-buckets');
  const max = maxText === null ? Infinity : Number(maxText);
  if (maxText !== null && !(/^\d{1,5}$/.test(maxText) && max >= 1 && max <= limits.maxBucketsMax)) {
    fail('InvalidArgument', `max-buckets must be an integer from 1 to ${limits.maxBucketsMax}.`);
  }
  const token = ctx.query.get('continuation-token') || null;
  const after = token === null ? null : keyOfToken(token);
  const chosen = all.filter((b) => b.name.startsWith(prefix) && (after === null || b.name > after));
  const buckets = chosen.slice(0, max);
  const paging: Record<string, string> = {};
  if (chosen.length > buckets.length) paging.ContinuationToken = tokenOf(buckets.at(-1)!.name);
  if (prefix) paging.Prefix = prefix;
  return { buckets, paging };
}

export async function listObjectsV2(ctx: Context): Promise<Response> {
  if (ctx.query.get('list-type') !== '2') fail('InvalidArgument', 'list-type must be 2 (ListObjectsV2); leave it out for ListObjects.');
  const bucket = await ownedBucket(ctx);
  const { prefix, maxKeys } = listingPage(ctx);
  const { encode, field } = listingEncoder(ctx);
  const delimiter = ctx.query.get('delimiter') ?? '';
  const given = ctx.query.get('continuation-token');
  const token = given || null; // an empty one goes on from nowhere, and is echoed as sent
  const startAfter = ctx.query.get('start-after') ?? '';
  // A token goes on from where the last page ended, past start-after as that page already was.
  const after = token !== null ? keyOfToken(token) : startAfter;
  const marker = after > startAfter ? after : startAfter;
  const { entries, truncated } = inBucket(await ctx.store.listObjects(bucket, { prefix, marker, delimiter, maxKeys }));
  const last = entries.at(-1);
  const result: Record<string, unknown> = { Name: ctx.bucket, Prefix: encode(prefix) };
  if (given !== null) result.ContinuationToken = given;
  if (truncated && last) result.NextContinuationToken = tokenOf(last.kind === 'prefix' ? last.prefix : last.object.key);
  result.KeyCount = entries.length;
  result.MaxKeys = maxKeys;
  if (delimiter) result.Delimiter = encode(delimiter);
  Object.assign(result, field);
  result.IsTruncated = truncated && last !== undefined;
  if (startAfter) result.StartAfter = encode(startAfter);
  const listed = listingEntries(entries, encode);
  if (ctx.query.get('fetch-owner') === 'true') {
    const owner = await ownerOf(ctx, bucket.owner);
    listed.Contents = listed.Contents.map((c) => ({ ...c, Owner: owner }));
  }
  Object.assign(result, listed);
  return xmlAnswer(ctx, { ListBucketResult: result });
}

/** Every bucket is where the service is: S3's answer for us-east-1, an empty LocationConstraint. */
export async function getBucketLocation(ctx: Context): Promise<Response> {
  await ownedBucket(ctx);
  return xmlAnswer(ctx, { LocationConstraint: '' });
}

/** The bucket's canned ACL as S3's AccessControlPolicy: the owner's FULL_CONTROL, and everyone's READ when public-read. */
export async function getBucketAcl(ctx: Context): Promise<Response> {
  const bucket = inBucket(await ctx.store.readBucket(await ownedBucket(ctx)));
  const owner = await ownerOf(ctx, bucket.owner);
  const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
  const grants: unknown[] = [{ Grantee: { '@_xmlns:xsi': XSI, '@_xsi:type': 'CanonicalUser', ...owner }, Permission: 'FULL_CONTROL' }];
  if (bucket.acl === 'public-read') {
    grants.push({ Grantee: { '@_xmlns:xsi': XSI, '@_xsi:type': 'Group', URI: 'http://acs.amazonaws.com/groups/global/AllUsers' }, Permission: 'READ' });
  }
  return xmlAnswer(ctx, { AccessControlPolicy: { Owner: owner, AccessControlList: { Grant: grants } } });
}

/** `x-amz-copy-source-range: bytes=first-last`, within the source's size. */
function copyRange(header: string | null, size: number): { start: number; end: number } | undefined {
  if (header === null) return undefined;
  const m = /^bytes=(\d{1,16})-(\d{1,16})$/.exec(header.trim());
  if (!m || Number(m[1]) > Number(m[2])) {
    return fail('InvalidArgument', 'The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy.');
  }
  if (Number(m[2]) >= size) throw new SvcError('InvalidRange', `The range ${header.trim()} is not within the source's ${size} bytes.`, { 'content-range': `bytes */${size}` });
  return { start: Number(m[1]), end: Number(m[2]) };
}

/** A part whose bytes are (a range of) an object already stored. */
export async function uploadPartCopy(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const { upload, partNumber } = await uploadPartTarget(ctx, bucket);
  const { object, body } = await copySource(ctx);
  const range = copyRange(ctx.req.headers.get('x-amz-copy-source-range'), object.size);
  // Sized, then read: only the range, and only when it fits a part (a whole 600 MiB source was
  // read to copy one byte of it where bodies are kept as pieces).
  if ((range ? range.end - range.start + 1 : object.size) > limits.partBytes) fail('EntityTooLarge', `A part may not exceed ${limits.partBytes} bytes.`);
  const bytes = await blobOf(range ? body.slice(range.start, range.end + 1) : body);
  const etag = await md5OfBlob(bytes);
  const lastModified = ctx.now();
  const stored = await ctx.store.uploadPart(bucket, { uploadId: upload.uploadId, partNumber, etag, size: bytes.size, lastModified }, bytes);
  if (stored === 'noSuchUpload') fail('NoSuchUpload');
  written(stored);
  const headers: Record<string, string> = object.versionId === undefined ? {} : { 'x-amz-copy-source-version-id': String(object.versionId) };
  return xmlAnswer(ctx, { CopyPartResult: { LastModified: isoDate(lastModified), ETag: quoteEtag(etag) } }, 200, headers);
}

/** Form fields S3 leaves out of the policy's checks. */
const UNCHECKED_FIELDS = new Set(['policy', 'x-amz-signature', 'file']);

type Condition = { name: string; test: (value: string | undefined) => boolean } | { range: [number, number] };

/** The policy's conditions; a document that is not one is InvalidPolicyDocument. */
function policyConditions(text: string, now: number): Condition[] {
  const invalid = (why: string): never => fail('InvalidPolicyDocument', `Invalid Policy: ${why}`);
  let doc: { expiration?: unknown; conditions?: unknown };
  try {
    doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(text), (c) => c.charCodeAt(0))));
  } catch {
    return invalid('the policy is not base64 of a JSON document.');
  }
  if (typeof doc !== 'object' || doc === null) return invalid('the policy is not a JSON object.');
  const expiration = typeof doc.expiration === 'string' ? Date.parse(doc.expiration) : NaN;
  if (Number.isNaN(expiration)) return invalid('expiration must be an ISO 8601 date.');
  if (now > expiration) fail('AccessDenied', 'Invalid according to Policy: Policy expired.');
  if (!Array.isArray(doc.conditions)) return invalid('conditions must be an array.');
  // Each condition is read one level deep, and named by its place, never written back whole: a
  // document nested 100,000 deep is refused as one that cannot be read, not recursed into.
  return doc.conditions.map((c: unknown, at): Condition => {
    const unreadable = (): never => invalid(`condition ${at + 1} cannot be read: it must be ["eq"|"starts-with", "$field", "value"], ["content-length-range", min, max] or {"field": "value"}.`);
    if (Array.isArray(c)) {
      if (c.length !== 3) return unreadable();
      const [op, a, b] = c as unknown[];
      const name = typeof op === 'string' ? op.toLowerCase() : '';
      if (name === 'content-length-range') {
        const [min, max] = [a, b].map((n) => (typeof n === 'number' || (typeof n === 'string' && /^\d{1,16}$/.test(n)) ? Number(n) : NaN));
        if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min! < 0 || min! > max!) return unreadable();
        return { range: [min!, max!] };
      }
      if (typeof a !== 'string' || !a.startsWith('$') || typeof b !== 'string') return unreadable();
      const field = a.slice(1).toLowerCase();
      if (name === 'eq') return { name: field, test: (v) => v === b };
      if (name === 'starts-with') return { name: field, test: (v) => v !== undefined && v.startsWith(b) };
      return invalid(`condition ${at + 1} is not eq, starts-with or content-length-range.`);
    }
    if (typeof c === 'object' && c !== null && Object.keys(c).length === 1) {
      const [name, value] = Object.entries(c)[0]!;
      if (typeof value === 'string') return { name: name.toLowerCase(), test: (v) => v === value };
    }
    return unreadable();
  });
}

/**
 * Who signed a form: SigV4's signature over the policy document as sent (base64), by a credential
 * for S3 dated the day of the form's x-amz-date. The account, or the error S3 answers.
 */
async function formSigner(ctx: Context, fields: Map<string, string>): Promise<{ account: Account; policy: string }> {
  const policy = fields.get('policy') ?? fail('AccessDenied', 'Bucket POST must contain a policy and its signature (createPresignedPost).');
  if (fields.get('x-amz-algorithm') !== SIGV4_ALGORITHM) fail('InvalidArgument', `x-amz-algorithm must be ${SIGV4_ALGORITHM}.`);
  const credential = credentialOf(fields.get('x-amz-credential') ?? '')
    ?? fail('InvalidArgument', 'x-amz-credential must be {key}/{date}/{region}/s3/aws4_request.');
  const { accessKeyId, date, service } = credential;
  if (service !== 's3') fail('InvalidArgument', `x-amz-credential names the service "${service}"; a form for S3 is signed for "s3".`);
  const amzDate = fields.get('x-amz-date') ?? '';
  if (!isAmzDate(amzDate)) fail('InvalidArgument', 'x-amz-date must be the time of signing, 20260101T000000Z.');
  if (amzDate.slice(0, 8) !== date) fail('InvalidArgument', `x-amz-credential's date ${date} is not the day of x-amz-date, ${amzDate}.`);
  const account = await ctx.store.getAccount(accessKeyId)
    ?? fail('InvalidAccessKeyId', `The AWS Access Key Id "${accessKeyId}" does not exist in this service's records.`);
  const signature = fields.get('x-amz-signature') ?? '';
  if (!(await verifyV4(account.secret, credential, policy, signature))) {
    fail('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided: the policy was signed with another secret, or changed.');
  }
  return { account, policy };
}

/** `success_action_redirect` as S3 reads it: a URL it cannot read, or not http(s), is as if absent. */
function redirectOf(value: string | undefined): URL | undefined {
  if (!value || !/^https?:\/\//i.test(value)) return undefined;
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/**
 * S3's POST Object: an upload from an HTML form, its authority a policy document the bucket's
 * owner signed (`createPresignedPost`), checked field by field: every field must be named by a
 * condition, every condition must hold, and the policy must not have expired. All of it is
 * checked from the fields before the file part is read (form.ts), and the file is read only up to
 * the size the policy and the service allow.
 */
export async function postObject(ctx: Context): Promise<Response> {
  const type = ctx.req.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type)) fail('PreconditionFailed', 'Bucket POST must be of the enclosure-type multipart/form-data.');
  const boundary = formBoundary(type) ?? fail('MalformedPOSTRequest', 'The Content-Type of a form names no boundary of 1 to 70 characters.');
  const declared = Number(ctx.req.headers.get('content-length') ?? 0);
  if (declared > limits.putObjectBytes + limits.formFieldsBytes) fail('EntityTooLarge', `The body may not exceed ${limits.putObjectBytes} bytes.`);
  const source = await bodySource(ctx);
  const { fields, file } = await readFormStart(source.stream, boundary, limits.formFieldsBytes);
  try {
    if (!file) return fail('InvalidArgument', 'POST requires exactly one file upload per request.');
    const key = (fields.get('key') ?? fail('InvalidArgument', 'Bucket POST must contain a field named \'key\'.')).replace(/\$\{filename\}/g, file.filename);
    // The key rules of every other write: a key no other request could name is never stored.
    if (key === '') fail('InvalidArgument', 'User key must have a length greater than zero.');
    checkXmlText(key, 'key');
    checkKeyLength(key);
    fields.set('key', key);
    fields.set('bucket', ctx.bucket);

    const { account, policy } = await formSigner(ctx, fields);
    const conditions = policyConditions(policy, ctx.now());
    for (const [name] of fields) {
      if (UNCHECKED_FIELDS.has(name) || name.startsWith('x-ignore-') || name === 'bucket') continue;
      if (!conditions.some((c) => 'name' in c && c.name === name)) {
        fail('AccessDenied', `Invalid according to Policy: Extra input fields: ${name}`);
      }
    }
    let [least, most] = [0, limits.putObjectBytes];
    for (const c of conditions) {
      if ('range' in c) [least, most] = [Math.max(least, c.range[0]), Math.min(most, c.range[1])];
      else if (!c.test(fields.get(c.name))) fail('AccessDenied', `Invalid according to Policy: Policy Condition failed: ${c.name}`);
    }

    ctx.caller = account;
    const bucket = await ownedBucket(ctx);
    checkObjectAcl(ctx, bucket, fields.get('acl'));
    const sent = new Headers();
    for (const [name, value] of fields) {
      if (name !== 'content-type' && !STANDARD_HEADERS.includes(name as (typeof STANDARD_HEADERS)[number]) && !name.startsWith('x-amz-meta-')) continue;
      // The object will be answered with these as headers: what a header cannot carry is refused now.
      if (!HEADER_NAME.test(name)) fail('InvalidArgument', `The form field name "${name}" cannot be a header's name.`);
      if (!ASCII_HEADER_VALUE.test(value)) fail('InvalidArgument', `The form field ${name} must be printable ASCII: it is stored as a header.`);
      sent.set(name, value);
    }
    const metadata = objectHeadersFrom(ctx, false, sent);
    const redirect = redirectOf(fields.get('success_action_redirect'));
    const room = await ctx.store.roomFor(bucket, { key });
    const read = await readStream(ctx, file.stream, { max: most, tooLarge: 'EntityTooLarge', room });
    if (read.size < least) fail('EntityTooSmall', `Your proposed upload is ${read.size} bytes; the policy allows ${least} to ${most}.`);
    const etag = read.md5;
    const made = held(written(await ctx.store.putObject(bucket, { key, size: read.size, etag, lastModified: ctx.now(), ...metadata }, await read.body())));
    const location = objectLocation(ctx, key);
    const headers: Record<string, string> = { etag: quoteEtag(etag), location };
    if (made.versionId !== undefined) headers['x-amz-version-id'] = String(made.versionId);
    if (redirect) {
      redirect.searchParams.set('bucket', ctx.bucket);
      redirect.searchParams.set('key', key);
      redirect.searchParams.set('etag', quoteEtag(etag));
      return new Response(null, { status: 303, headers: { ...headers, location: redirect.href } });
    }
    const status = fields.get('success_action_status');
    if (status === '201') return xmlAnswer(ctx, { PostResponse: { Location: location, Bucket: ctx.bucket, Key: key, ETag: quoteEtag(etag) } }, 201, headers);
    return new Response(null, { status: status === '200' ? 200 : 204, headers });
  } finally {
    // Refused, or read to its part's end: nothing more of the body is read.
    file?.stream.cancel().catch(() => {});
  }
}

export async function getBucketCors(ctx: Context): Promise<Response> {
  const bucket = inBucket(await ctx.store.readBucket(await ownedBucket(ctx)));
  if (!bucket.cors) return fail('NoSuchCORSConfiguration');
  return xmlAnswer(ctx, corsDocument(bucket.cors));
}

export async function putBucketCors(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const rules = parseCorsConfiguration(await readXmlBody(ctx, limits.smallXmlBodyBytes, false));
  if ((await ctx.store.putBucketCors(bucket, rules)) === 'noSuchBucket') fail('NoSuchBucket');
  return new Response(null, { status: 200 });
}

export async function deleteBucketCors(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  if ((await ctx.store.putBucketCors(bucket, undefined)) === 'noSuchBucket') fail('NoSuchBucket');
  return new Response(null, { status: 204 });
}

/** An object's ACL, which here is its bucket's (object ACLs are not kept): the bucket's grants. */
export async function getObjectAcl(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  if (!inBucket(await ctx.store.headObject(bucket, ctx.key))) fail('NoSuchKey');
  return getBucketAcl(ctx);
}

export async function putObjectAcl(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  if (!inBucket(await ctx.store.headObject(bucket, ctx.key))) fail('NoSuchKey');
  if (!ctx.req.headers.has('x-amz-acl')) fail('NotImplemented', 'Only a canned ACL in x-amz-acl, the bucket\'s own, is accepted for an object.');
  checkObjectAcl(ctx, bucket, ctx.req.headers.get('x-amz-acl'));
  return new Response(null, { status: 200 });
}

/** A page of a multipart object's parts, after `x-amz-part-number-marker`, at most `x-amz-max-parts`. */
function partsPage(ctx: Context, parts: ObjectPart[]): Record<string, unknown> {
  const number = (name: string, fallback: number, max: number): number => {
    const text = ctx.req.headers.get(name)?.trim();
    if (text === undefined) return fallback;
    if (!/^\d{1,9}$/.test(text) || Number(text) > max) fail('InvalidArgument', `${name} must be an integer from 0 to ${max}.`);
    return Number(text);
  };
  const maxParts = number('x-amz-max-parts', limits.maxPartsMax, limits.maxPartsMax);
  const marker = number('x-amz-part-number-marker', 0, limits.partNumberMax);
  const after = parts.filter((p) => p.partNumber > marker);
  const page = after.slice(0, maxParts);
  return {
    PartsCount: parts.length,
    PartNumberMarker: marker,
    NextPartNumberMarker: page.at(-1)?.partNumber ?? marker,
    MaxParts: maxParts,
    IsTruncated: pageTruncated(ctx, after.length > page.length, page.length),
    Part: page.map((p) => ({ PartNumber: p.partNumber, Size: p.size })),
  };
}

/** GetObjectAttributes: what an object is, without its bytes (ObjectParts for a multipart object). */
export async function getObjectAttributes(ctx: Context): Promise<Response> {
  const bucket = await readableBucket(ctx);
  const versionText = ctx.query.get('versionId');
  const versionId = versionText === null ? undefined : VERSION_ID.test(versionText) ? Number(versionText) : -1;
  const object = inBucket(await ctx.store.headObject(bucket, ctx.key, versionId === -1 ? undefined : versionId));
  if (!object || versionId === -1) return fail(versionText === null ? 'NoSuchKey' : 'NoSuchVersion');
  const asked = new Set((ctx.req.headers.get('x-amz-object-attributes') ?? '').split(',').map((a) => a.trim()).filter(Boolean));
  if (asked.size === 0) fail('InvalidArgument', 'x-amz-object-attributes must name at least one of ETag, Checksum, ObjectParts, StorageClass, ObjectSize.');
  const result: Record<string, unknown> = {};
  if (asked.has('ETag')) result.ETag = object.etag;
  if (asked.has('Checksum') && object.checksum) result.Checksum = { [`Checksum${object.checksum.algorithm}`]: object.checksum.value, ChecksumType: 'FULL_OBJECT' };
  const parts = asked.has('ObjectParts') ? partsOf(object) : undefined;
  if (parts) result.ObjectParts = partsPage(ctx, parts);
  if (asked.has('StorageClass')) result.StorageClass = 'STANDARD';
  if (asked.has('ObjectSize')) result.ObjectSize = object.size;
  const headers: Record<string, string> = { 'last-modified': httpDate(object.lastModified) };
  if (object.versionId !== undefined) headers['x-amz-version-id'] = String(object.versionId);
  return xmlAnswer(ctx, { GetObjectAttributesResponse: result }, 200, headers);
}
