// Who may act on a bucket (docs/protocol.md, "Who may do what"): only its owner, except GET/HEAD of objects in a
// public-read bucket, which anyone may do.
import { SvcError, fail } from './errors.ts';
import type { Context } from './context.ts';
import type { BucketRecord } from '../store/types.ts';

async function existing(ctx: Context, name: string): Promise<BucketRecord> {
  const bucket = await ctx.store.getBucket(name);
  if (!bucket) throw new SvcError('NoSuchBucket', `The bucket "${name}" does not exist.`);
  return bucket;
}

export function requireCaller(ctx: Context) {
  if (!ctx.caller) throw new SvcError('AccessDenied', 'Anonymous requests are not allowed here: sign the request (swbucket/client signs when created with { accessKeyId, secretAccessKey }); only GET and HEAD of objects in a public-read bucket may be anonymous.');
  return ctx.caller;
}

/**
 * The request's bucket, when the caller owns it. Its record carries the bucket's identity: the
 * request's writes pass it to the store, which commits them only into this very bucket.
 */
export async function ownedBucket(ctx: Context): Promise<BucketRecord> {
  const bucket = await existing(ctx, ctx.bucket);
  if (requireCaller(ctx).accessKeyId !== bucket.owner) {
    throw new SvcError('AccessDenied', `Only the owner of "${ctx.bucket}" may do this.`);
  }
  return bucket;
}

/** The bucket, when the caller may read its objects. */
export async function readableBucket(ctx: Context, name = ctx.bucket): Promise<BucketRecord> {
  const bucket = await existing(ctx, name);
  if (bucket.acl === 'public-read') return bucket;
  if (ctx.caller?.accessKeyId !== bucket.owner) {
    throw new SvcError('AccessDenied', ctx.caller ? `Only the owner of "${name}" may read it.` : `The bucket "${name}" is not public.`);
  }
  return bucket;
}

/**
 * Objects take their bucket's ACL: an `x-amz-acl` on a write is accepted when it is that ACL, and
 * refused (501) when it is another, rather than ignored (a private object in a public bucket would
 * be public all the same).
 */
export function checkObjectAcl(ctx: Context, bucket: BucketRecord, value: string | null | undefined): void {
  if (ctx.dialect.name !== 's3' || value === null || value === undefined || value.trim() === bucket.acl) return;
  fail('NotImplemented', `Objects here take their bucket's ACL (${bucket.acl}); "${value.trim()}" for one object is not supported: set the bucket's ACL instead.`);
}
