// Bucket operations (docs/protocol.md, "Buckets") and the service host's bucket list.
import { fail } from '../errors.ts';
import { limits } from '../limits.ts';
import { ownedBucket, requireCaller } from '../access.ts';
import { isoDate, quoteEtag } from '../http.ts';
import { childText, parseXml, xmlResponse } from '../xml.ts';
import { readXmlBody } from '../body.ts';
import { inBucket } from './objects.ts';
import type { Acl } from '../../store/types.ts';
import type { Context } from '../context.ts';

function aclFrom(ctx: Context, fallback?: Acl): Acl {
  const value = ctx.req.headers.get('x-svc-acl')?.trim() ?? fallback;
  if (value !== 'private' && value !== 'public-read') {
    return fail('InvalidArgument', 'x-svc-acl must be private or public-read.');
  }
  return value;
}

export async function createBucket(ctx: Context): Promise<Response> {
  const caller = requireCaller(ctx);
  const acl = aclFrom(ctx, 'private');
  const created = await ctx.store.createBucket({
    name: ctx.bucket, owner: caller.accessKeyId, acl, created: ctx.now(), nextVersionId: 1,
  });
  if (created === 'exists') fail('BucketAlreadyExists', `The bucket "${ctx.bucket}" already exists.`);
  if (created === 'noSuchOwner') fail('AccessDenied', `The account "${caller.accessKeyId}" no longer exists.`);
  return new Response(null, { status: 200, headers: { location: `/${ctx.bucket}` } });
}

export async function deleteBucket(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const result = await ctx.store.deleteBucket(bucket);
  if (result === 'noSuchBucket') fail('NoSuchBucket');
  if (result === 'notEmpty') fail('BucketNotEmpty', `The bucket "${ctx.bucket}" still holds objects or uploads.`);
  return new Response(null, { status: 200 });
}

export async function headBucket(ctx: Context): Promise<Response> {
  await ownedBucket(ctx);
  return new Response(null, { status: 200 });
}

export async function getBucketAcl(ctx: Context): Promise<Response> {
  const bucket = inBucket(await ctx.store.readBucket(await ownedBucket(ctx)));
  return new Response(null, { status: 200, headers: { 'x-svc-acl': bucket.acl } });
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
function listingPage(ctx: Context) {
  return {
    prefix: ctx.query.get('prefix') ?? '',
    marker: ctx.query.get('marker') ?? '',
    maxKeys: intParam(ctx, 'max-keys', limits.maxKeysDefault, limits.maxKeysMax),
  };
}

export async function listObjects(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const { prefix, marker, maxKeys } = listingPage(ctx);
  const delimiter = ctx.query.get('delimiter') ?? '';
  const { entries, truncated } = inBucket(await ctx.store.listObjects(bucket, { prefix, marker, delimiter, maxKeys }));
  const last = entries.at(-1);
  const result: Record<string, unknown> = { Name: ctx.bucket, Prefix: prefix, Marker: marker, MaxKeys: maxKeys };
  if (delimiter) result.Delimiter = delimiter;
  result.IsTruncated = truncated;
  if (truncated) result.NextMarker = last === undefined ? marker : last.kind === 'prefix' ? last.prefix : last.object.key;
  result.Contents = entries.flatMap((e) => e.kind === 'object' ? [{
    Key: e.object.key,
    LastModified: isoDate(e.object.lastModified),
    ETag: quoteEtag(e.object.etag),
    Size: e.object.size,
    StorageClass: 'STANDARD',
  }] : []);
  result.CommonPrefixes = entries.flatMap((e) => (e.kind === 'prefix' ? [{ Prefix: e.prefix }] : []));
  return xmlResponse({ ListBucketResult: result });
}

export async function listBuckets(ctx: Context): Promise<Response> {
  const caller = requireCaller(ctx);
  const buckets = await ctx.store.listBuckets(caller.accessKeyId);
  return xmlResponse({
    ListAllMyBucketsResult: {
      Owner: { ID: caller.accessKeyId, DisplayName: caller.displayName },
      Buckets: { Bucket: buckets.map((b) => ({ Name: b.name, CreationDate: isoDate(b.created) })) },
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
  return xmlResponse({ VersioningConfiguration: bucket.versioning ? { Status: bucket.versioning } : '' });
}

export async function listObjectVersions(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const { prefix, marker, maxKeys } = listingPage(ctx);
  const versionIdMarker = ctx.query.get('version-id-marker') ?? '';
  const { versions, truncated } = inBucket(await ctx.store.listObjectVersions(bucket, { prefix, marker, versionIdMarker, maxKeys }));
  const id = (v: { object: { versionId?: number } }) => (v.object.versionId === undefined ? 'null' : String(v.object.versionId));
  const result: Record<string, unknown> = {
    Name: ctx.bucket, Prefix: prefix, Marker: marker, VersionIdMarker: versionIdMarker, MaxKeys: maxKeys, IsTruncated: truncated,
  };
  const last = versions.at(-1);
  if (truncated) {
    result.NextMarker = last?.object.key ?? marker;
    result.NextVersionIdMarker = last ? id(last) : versionIdMarker;
  }
  result.Version = versions.map((v) => ({
    Key: v.object.key,
    VersionId: id(v),
    IsLatest: v.isLatest,
    LastModified: isoDate(v.object.lastModified),
    ETag: quoteEtag(v.object.etag),
    Size: v.object.size,
  }));
  return xmlResponse({ ListVersionsResult: result });
}
