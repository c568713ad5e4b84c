// Bucket operations (docs/protocol.md, "Buckets") and the service host's bucket list.
import { fail } from '../errors.ts';
import { limits } from '../limits.ts';
import { ownedBucket, requireCaller } from '../access.ts';
import { isoDate, quoteEtag } from '../http.ts';
import { childText, parseXml } from '../xml.ts';
import { readXmlBody } from '../body.ts';
import { VERSION_ID, inBucket } from './objects.ts';
import { bucketPage } from './s3.ts';
import type { Acl, ListEntry } from '../../store/types.ts';
import { own, pageTruncated, xmlAnswer, type Context } from '../context.ts';

export function aclFrom(ctx: Context, fallback?: Acl): Acl {
  const value = ctx.req.headers.get(own(ctx, 'acl'))?.trim() ?? fallback;
  if (value !== 'private' && value !== 'public-read') {
    if (value === undefined && ctx.dialect.name === 's3') {
      return fail('NotImplemented', 'Only the canned ACLs private and public-read are supported, set with x-amz-acl; an AccessControlPolicy document is not.');
    }
    // S3's other canned ACLs are S3's, not this service's: 501; anything else is no ACL at all.
    const canned = ['public-read-write', 'authenticated-read', 'aws-exec-read', 'bucket-owner-read', 'bucket-owner-full-control', 'log-delivery-write'];
    return fail(ctx.dialect.name === 's3' && value !== undefined && canned.includes(value) ? 'NotImplemented' : 'InvalidArgument', `${own(ctx, 'acl')} must be private or public-read.`);
  }
  return value;
}

export async function createBucket(ctx: Context): Promise<Response> {
  const caller = requireCaller(ctx);
  const acl = aclFrom(ctx, 'private');
  const created = await ctx.store.createBucket({
    name: ctx.bucket, owner: caller.accessKeyId, acl, created: ctx.now(), nextVersionId: 1,
  });
  if (created === 'exists') {
    // S3 tells its owner apart; SVC and NOS do not (docs/protocol.md, "Dialects").
    if (ctx.dialect.name === 's3' && (await ctx.store.getBucket(ctx.bucket))?.owner === caller.accessKeyId) {
      fail('BucketAlreadyOwnedByYou', 'Your previous request to create the named bucket succeeded and you already own it.');
    }
    fail('BucketAlreadyExists', `The bucket "${ctx.bucket}" already exists.`);
  }
  if (created === 'noSuchOwner') fail('AccessDenied', `The account "${caller.accessKeyId}" no longer exists.`);
  return new Response(null, { status: 200, headers: { location: `/${ctx.bucket}` } });
}

export async function deleteBucket(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  // S3 deletes a bucket whose only contents are uploads in progress, and those with it.
  const result = await ctx.store.deleteBucket(bucket, { abortUploads: ctx.dialect.name === 's3' });
  if (result === 'noSuchBucket') fail('NoSuchBucket');
  if (result === 'notEmpty') fail('BucketNotEmpty', `The bucket "${ctx.bucket}" still holds objects or uploads.`);
  if (result === 'replicated') fail('InvalidBucketState', `The bucket "${ctx.bucket}" is the replica of a remote bucket: remove the replica first (changes not yet pushed would be lost).`);
  return new Response(null, { status: ctx.dialect.name === 's3' ? 204 : 200 });
}

export async function headBucket(ctx: Context): Promise<Response> {
  await ownedBucket(ctx);
  return new Response(null, { status: 200 });
}

export async function getBucketAcl(ctx: Context): Promise<Response> {
  const bucket = inBucket(await ctx.store.readBucket(await ownedBucket(ctx)));
  return new Response(null, { status: 200, headers: { [own(ctx, 'acl')]: bucket.acl } });
}

export async function putBucketAcl(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  if ((await ctx.store.putBucketAcl(bucket, aclFrom(ctx))) === 'noSuchBucket') fail('NoSuchBucket');
  return new Response(null, { status: 200 });
}

/** A query integer within [0, max], or the default when absent. */
export function intParam(ctx: Context, name: string, fallback: number, max: number): number {
  const value = ctx.query.get(name);
  if (value === null) return fallback;
  if (!/^\d{1,7}$/.test(value) || Number(value) > max) fail('InvalidArgument', `${name} must be an integer from 0 to ${max}.`);
  return Number(value);
}

/** prefix, marker and max-keys: the paging that object and version listings share. */
export function listingPage(ctx: Context, markerName = 'marker') {
  return {
    prefix: ctx.query.get('prefix') ?? '',
    marker: ctx.query.get(markerName) ?? '',
    maxKeys: intParam(ctx, 'max-keys', ctx.dialect.maxKeysDefault, limits.maxKeysMax),
  };
}

/**
 * S3's `encoding-type=url`: keys and prefixes in a listing percent-encoded (as `encodeURIComponent`
 * with `/` kept), so that a key XML cannot carry still lists. Other values are refused.
 */
export function listingEncoder(ctx: Context): { encode: (text: string) => string; field: Record<string, string> } {
  const type = ctx.query.get('encoding-type');
  if (type === null || ctx.dialect.name !== 's3') return { encode: (t) => t, field: {} };
  if (type !== 'url') fail('InvalidArgument', 'Invalid Encoding Method specified in Request: encoding-type must be url.');
  return { encode: (t) => encodeURIComponent(t).replace(/%2F/g, '/'), field: { EncodingType: 'url' } };
}

export async function listObjects(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const { prefix, marker, maxKeys } = listingPage(ctx);
  const { encode, field } = listingEncoder(ctx);
  const delimiter = ctx.query.get('delimiter') ?? '';
  const { entries, truncated } = inBucket(await ctx.store.listObjects(bucket, { prefix, marker, delimiter, maxKeys }));
  const last = entries.at(-1);
  // ListObjects (v1) encodes its keys, markers and delimiter, not its Prefix (as S3, and boto3 reading it).
  const result: Record<string, unknown> = { Name: ctx.bucket, Prefix: prefix, Marker: encode(marker), MaxKeys: maxKeys };
  if (delimiter) result.Delimiter = encode(delimiter);
  Object.assign(result, field);
  // A page of none (max-keys=0) is not cut short.
  result.IsTruncated = truncated && last !== undefined;
  if (truncated && last) result.NextMarker = encode(last.kind === 'prefix' ? last.prefix : last.object.key);
  const listed = listingEntries(entries, encode);
  if (ctx.dialect.name === 's3') {
    const owner = await ownerOf(ctx, bucket.owner);
    listed.Contents = listed.Contents.map((c) => ({ ...c, Owner: owner }));
  }
  Object.assign(result, listed);
  return xmlAnswer(ctx, { ListBucketResult: result });
}

/** An account as S3's documents name an owner. */
export async function ownerOf(ctx: Context, accessKeyId: string): Promise<{ ID: string; DisplayName: string }> {
  const account = await ctx.store.getAccount(accessKeyId);
  return { ID: accessKeyId, DisplayName: account?.displayName ?? accessKeyId };
}

/** A listing's Contents and CommonPrefixes, in the order S3 writes them. */
export function listingEntries(entries: ListEntry[], encode: (text: string) => string) {
  return {
    Contents: entries.flatMap((e) => e.kind === 'object' ? [{
      Key: encode(e.object.key),
      LastModified: isoDate(e.object.lastModified),
      ETag: quoteEtag(e.object.etag),
      Size: e.object.size,
      StorageClass: 'STANDARD',
    }] : []),
    CommonPrefixes: entries.flatMap((e) => (e.kind === 'prefix' ? [{ Prefix: encode(e.prefix) }] : [])),
  };
}

export async function listBuckets(ctx: Context): Promise<Response> {
  const caller = requireCaller(ctx);
  const all = await ctx.store.listBuckets(caller.accessKeyId);
  const { buckets, paging } = ctx.dialect.name === 's3' ? bucketPage(ctx, all) : { buckets: all, paging: {} };
  return xmlAnswer(ctx, {
    ListAllMyBucketsResult: {
      Owner: { ID: caller.accessKeyId, DisplayName: caller.displayName },
      Buckets: { Bucket: buckets.map((b) => ({ Name: b.name, CreationDate: isoDate(b.created) })) },
      ...paging,
    },
  });
}

export async function putBucketVersioning(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const doc = parseXml(await readXmlBody(ctx, limits.smallXmlBodyBytes, false), 'VersioningConfiguration');
  const status = childText(doc, 'Status')?.trim();
  if (status !== 'Enabled' && status !== 'Suspended') return fail('MalformedXML', 'Status must be Enabled or Suspended.');
  if ((await ctx.store.putBucketVersioning(bucket, status)) === 'noSuchBucket') fail('NoSuchBucket');
  return new Response(null, { status: 200 });
}

export async function getBucketVersioning(ctx: Context): Promise<Response> {
  const bucket = inBucket(await ctx.store.readBucket(await ownedBucket(ctx)));
  // Never configured: no Status, as a bucket that never had versioning.
  return xmlAnswer(ctx, { VersioningConfiguration: bucket.versioning ? { Status: bucket.versioning } : '' });
}

export async function listObjectVersions(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const { prefix, marker, maxKeys } = listingPage(ctx, ctx.dialect.name === 's3' ? 'key-marker' : 'marker');
  const { encode, field } = listingEncoder(ctx);
  const versionIdMarker = ctx.query.get('version-id-marker') ?? '';
  // A version id, or S3's `null`; and only beside a key marker (as S3: the two name one place).
  if (versionIdMarker !== '' && !VERSION_ID.test(versionIdMarker) && versionIdMarker !== 'null') fail('InvalidArgument', 'Invalid version id specified');
  if (versionIdMarker !== '' && marker === '') fail('InvalidArgument', 'A version-id marker cannot be specified without a key marker.');
  const { versions, truncated: more } = inBucket(await ctx.store.listObjectVersions(bucket, { prefix, marker, versionIdMarker, maxKeys }));
  const truncated = pageTruncated(ctx, more, versions.length);
  const id = (v: { object: { versionId?: number } }) => (v.object.versionId === undefined ? 'null' : String(v.object.versionId));
  // S3 names the key marker KeyMarker; SVC and NOS, Marker.
  const markerName = ctx.dialect.name === 's3' ? 'KeyMarker' : 'Marker';
  const result: Record<string, unknown> = {
    Name: ctx.bucket, Prefix: encode(prefix), [markerName]: encode(marker), VersionIdMarker: versionIdMarker, MaxKeys: maxKeys, ...field, IsTruncated: truncated,
  };
  const last = versions.at(-1);
  if (truncated) {
    result[`Next${markerName}`] = encode(last?.object.key ?? marker);
    result.NextVersionIdMarker = last ? id(last) : versionIdMarker;
  }
  const owner = ctx.dialect.name === 's3' ? { Owner: await ownerOf(ctx, bucket.owner) } : {};
  result.Version = versions.map((v) => ({
    Key: encode(v.object.key),
    VersionId: id(v),
    IsLatest: v.isLatest,
    LastModified: isoDate(v.object.lastModified),
    ETag: quoteEtag(v.object.etag),
    Size: v.object.size,
    ...owner,
  }));
  return xmlAnswer(ctx, { ListVersionsResult: result });
}
