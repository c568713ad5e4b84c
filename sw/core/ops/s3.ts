// Operations only S3's dialect has (docs/protocol.md, "Dialects"): ListObjectsV2, GetBucketLocation,
// the ACL as S3's AccessControlPolicy document, and UploadPartCopy. Each is the store's own
// listing or write under S3's names; nothing here keeps state of its own.
import { fail } from '../errors.ts';
import { limits } from '../limits.ts';
import { ownedBucket } from '../access.ts';
import { isoDate, quoteEtag } from '../http.ts';
import { inBucket, copySource, written } from './objects.ts';
import { listingEncoder, listingEntries, listingPage } from './buckets.ts';
import { uploadPartTarget } from './multipart.ts';
import { md5OfBlob } from '../../../protocol/md5.ts';
import { blobOf } from '../../store/pieces.ts';
import { xmlAnswer, type Context } from '../context.ts';

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

export async function listObjectsV2(ctx: Context): Promise<Response> {
  if (ctx.query.get('list-type') !== '2') fail('InvalidArgument', 'list-type must be 2 (ListObjectsV2); leave it out for ListObjects.');
  const bucket = await ownedBucket(ctx);
  const { prefix, maxKeys } = listingPage(ctx);
  const { encode, field } = listingEncoder(ctx);
  const delimiter = ctx.query.get('delimiter') ?? '';
  const token = ctx.query.get('continuation-token');
  const startAfter = ctx.query.get('start-after') ?? '';
  // A token goes on from where the last page ended, past start-after as that page already was.
  const after = token !== null ? keyOfToken(token) : startAfter;
  const marker = after > startAfter ? after : startAfter;
  const { entries, truncated } = inBucket(await ctx.store.listObjects(bucket, { prefix, marker, delimiter, maxKeys }));
  const last = entries.at(-1);
  const result: Record<string, unknown> = { Name: ctx.bucket, Prefix: encode(prefix) };
  if (token !== null) result.ContinuationToken = token;
  if (truncated && last) result.NextContinuationToken = tokenOf(last.kind === 'prefix' ? last.prefix : last.object.key);
  result.KeyCount = entries.length;
  result.MaxKeys = maxKeys;
  if (delimiter) result.Delimiter = encode(delimiter);
  Object.assign(result, field);
  result.IsTruncated = truncated && last !== undefined;
  if (startAfter) result.StartAfter = encode(startAfter);
  const listed = listingEntries(entries, encode);
  if (ctx.query.get('fetch-owner') === 'true') {
    const account = await ctx.store.getAccount(bucket.owner);
    const owner = { ID: bucket.owner, DisplayName: account?.displayName ?? bucket.owner };
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
  const account = await ctx.store.getAccount(bucket.owner);
  const owner = { ID: bucket.owner, DisplayName: account?.displayName ?? bucket.owner };
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
  if (!m || Number(m[1]) > Number(m[2]) || Number(m[2]) >= size) {
    return fail('InvalidArgument', `The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy, within the source's ${size} bytes.`);
  }
  return { start: Number(m[1]), end: Number(m[2]) };
}

/** A part whose bytes are (a range of) an object already stored. */
export async function uploadPartCopy(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const { upload, partNumber } = await uploadPartTarget(ctx, bucket);
  const { object, body } = await copySource(ctx);
  const range = copyRange(ctx.req.headers.get('x-amz-copy-source-range'), object.size);
  const whole = await blobOf(body);
  const bytes = range ? whole.slice(range.start, range.end + 1) : whole;
  if (bytes.size > limits.partBytes) fail('EntityTooLarge', `A part may not exceed ${limits.partBytes} bytes.`);
  const etag = await md5OfBlob(bytes);
  const lastModified = ctx.now();
  const stored = await ctx.store.uploadPart(bucket, { uploadId: upload.uploadId, partNumber, etag, size: bytes.size, lastModified }, bytes);
  if (stored === 'noSuchUpload') fail('NoSuchUpload');
  written(stored);
  const headers: Record<string, string> = object.versionId === undefined ? {} : { 'x-amz-copy-source-version-id': String(object.versionId) };
  return xmlAnswer(ctx, { CopyPartResult: { LastModified: isoDate(lastModified), ETag: quoteEtag(etag) } }, 200, headers);
}
