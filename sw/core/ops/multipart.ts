// Multipart upload (docs/protocol.md, "Multipart uploads"): Initiate, Upload Part,
// Complete, Abort, List Parts, List Multipart Uploads.
import { SvcError, fail } from '../errors.ts';
import { limits } from '../limits.ts';
import { checkObjectAcl, ownedBucket } from '../access.ts';
import { declaredLength, readBody, readXmlBody } from '../body.ts';
import { isoDate, quoteEtag, unquoteEtag } from '../http.ts';
import { children, childText, parseXml } from '../xml.ts';
import {
  checkKeyLength, checkMetadataSize, held, inBucket, objectHeadersFrom, objectLocation, partNumberParam, writeConditionOf, written, writtenHeaders,
} from './objects.ts';
import { intParam, ownerOf } from './buckets.ts';
import { md5OfBlob, md5OfText } from '../../../protocol/md5.ts';
import type { BucketRecord, ObjectRecord, UploadRecord } from '../../store/types.ts';
import { own, pageTruncated, xmlAnswer, type Context } from '../context.ts';

let lastIdTime = 0;

/**
 * Unique, URL-safe, never only digits, and sorting in order of initiation: a letter, the time
 * (strictly increasing within this context) in fixed-width base 36, then randomness.
 */
export function newUploadId(now: number): string {
  lastIdTime = Math.max(now, lastIdTime + 1);
  const random = Array.from(crypto.getRandomValues(new Uint8Array(10)), (b) => (b % 36).toString(36)).join('');
  return 'u' + lastIdTime.toString(36).padStart(9, '0') + random;
}

/**
 * The upload named by ?uploadId, when it is in progress and belongs to this bucket (the one the
 * request was authorised for: name and identity) and key.
 */
async function uploadOf(ctx: Context, bucket: BucketRecord): Promise<UploadRecord> {
  const uploadId = ctx.query.get('uploadId') ?? '';
  const upload = uploadId === '' ? undefined : await ctx.store.getUpload(uploadId);
  if (!upload) {
    // Gone with the bucket this request was checked against: that is the answer (docs/browser.md, "Bucket identity").
    if ((await ctx.store.getBucket(bucket.name))?.id !== bucket.id) fail('NoSuchBucket');
    return fail('NoSuchUpload');
  }
  if (upload.bucket !== bucket.name || upload.bucketId !== bucket.id || upload.key !== ctx.key) {
    // Another owner's upload is none the caller may know of (answering otherwise would tell that
    // it is in progress somewhere); S3 answers NoSuchUpload for any upload not of this key.
    const home = await ctx.store.getBucket(upload.bucket);
    if (ctx.dialect.name === 's3' || home?.id !== upload.bucketId || home.owner !== bucket.owner) return fail('NoSuchUpload');
    fail('InvalidArgument', 'The upload ID does not belong to this bucket and key.');
  }
  return upload;
}

export async function createMultipartUpload(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  checkObjectAcl(ctx, bucket, ctx.req.headers.get('x-amz-acl'));
  checkKeyLength(ctx.key, 'KeyTooLong');
  declaredLength(ctx, true);
  const headers = objectHeadersFrom(ctx);
  const upload = {
    uploadId: newUploadId(ctx.now()),
    key: ctx.key,
    initiated: ctx.now(),
    ...headers,
  };
  if ((await ctx.store.createMultipartUpload(bucket, upload)) === 'noSuchBucket') fail('NoSuchBucket');
  return xmlAnswer(ctx, { InitiateMultipartUploadResult: { Bucket: ctx.bucket, Key: ctx.key, UploadId: upload.uploadId } });
}

/** The upload and part number an Upload Part (or S3's UploadPartCopy) writes. */
export async function uploadPartTarget(ctx: Context, bucket: BucketRecord): Promise<{ upload: UploadRecord; partNumber: number }> {
  const partNumber = partNumberParam(ctx);
  return { upload: await uploadOf(ctx, bucket), partNumber };
}

export async function uploadPart(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const { upload, partNumber } = await uploadPartTarget(ctx, bucket);
  const room = await ctx.store.roomFor(bucket, { uploadId: upload.uploadId, partNumber });
  const body = await readBody(ctx, { max: limits.partBytes, tooLarge: 'EntityTooLarge', requireLength: true, room });
  const stored = await ctx.store.uploadPart(
    bucket,
    { uploadId: upload.uploadId, partNumber, etag: body.md5, size: body.size, lastModified: ctx.now() },
    body.body,
  );
  if (stored === 'noSuchUpload') fail('NoSuchUpload');
  written(stored);
  const headers: Record<string, string> = { etag: quoteEtag(body.md5) };
  if (body.checksum) headers[body.checksum.header] = body.checksum.value;
  return new Response(null, { status: 200, headers });
}

/** The part list of a Complete body, in the check order of docs/protocol.md, "Multipart rules", up to InvalidPartOrder. */
function partList(xml: string): { partNumber: number; etag: string }[] {
  // A Part is at most 10 tags (Part, PartNumber, ETag, one checksum: each opened and closed, and room to spare).
  const doc = parseXml(xml, 'CompleteMultipartUpload', limits.partNumberMax * 10 + 16);
  const parts = children(doc, 'Part').map((p) => {
    const number = childText(p, 'PartNumber')?.trim() ?? '';
    const etag = childText(p, 'ETag');
    if (!/^\d{1,5}$/.test(number) || etag === undefined) fail('MalformedXML', 'Every Part needs a PartNumber and an ETag.');
    return { partNumber: Number(number), etag: unquoteEtag(etag!).toLowerCase() };
  });
  if (parts.length === 0) fail('MalformedXML', 'At least one Part is required.');
  for (let i = 1; i < parts.length; i++) {
    if (parts[i]!.partNumber <= parts[i - 1]!.partNumber) {
      fail('InvalidPartOrder', 'The parts must be listed in strictly ascending order of part number.');
    }
  }
  return parts;
}

/**
 * A completed upload's ETag. SVC's: the MD5 of the parts' hex ETags each followed by `-`, then
 * `-1`. S3's: the MD5 of the parts' binary MD5s one after another, then `-{number of parts}`.
 */
export async function multipartEtag(ctx: Context, etags: string[]): Promise<string> {
  if (ctx.dialect.multipartEtag === 'svc') return (await md5OfText(etags.map((e) => e + '-').join(''))) + '-1';
  const bytes = new Uint8Array(etags.length * 16);
  etags.forEach((e, i) => {
    for (let j = 0; j < 16; j++) bytes[i * 16 + j] = parseInt(e.slice(2 * j, 2 * j + 2), 16);
  });
  return `${await md5OfBlob(new Blob([bytes]))}-${etags.length}`;
}

/**
 * The object a Complete of this upload already made, while it is still the key's current object:
 * S3 answers a Complete retried after it succeeded (a lost answer) as it did the first time.
 */
async function completedBefore(ctx: Context, bucket: BucketRecord): Promise<ObjectRecord | undefined> {
  if (ctx.dialect.name !== 's3') return undefined;
  const current = inBucket(await ctx.store.headObject(bucket, ctx.key));
  return current?.uploadId !== undefined && current.uploadId === ctx.query.get('uploadId') ? current : undefined;
}

function completed(ctx: Context, made: ObjectRecord): Response {
  return xmlAnswer(ctx, {
    CompleteMultipartUploadResult: { Location: objectLocation(ctx, ctx.key), Bucket: ctx.bucket, Key: ctx.key, ETag: quoteEtag(made.etag) },
  }, 200, made.versionId === undefined ? {} : { [own(ctx, 'version-id')]: writtenHeaders(ctx, made)[own(ctx, 'version-id')]! });
}

export async function completeMultipartUpload(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  let upload: UploadRecord;
  try {
    upload = await uploadOf(ctx, bucket);
  } catch (e) {
    const again = e instanceof SvcError && e.code === 'NoSuchUpload' ? await completedBefore(ctx, bucket) : undefined;
    if (again) return completed(ctx, again);
    throw e;
  }
  const objectMd5 = ctx.dialect.name === 's3' ? undefined : ctx.req.headers.get(own(ctx, 'object-md5'))?.trim();
  if (objectMd5 !== undefined && !/^[0-9a-fA-F]{32}$/.test(objectMd5)) {
    fail('InvalidDigest', `${own(ctx, 'Object-md5')} must be 32 hex characters.`);
  }
  const condition = await writeConditionOf(ctx, bucket);
  const parts = partList(await readXmlBody(ctx, limits.completeBodyBytes));
  // Complete's own metadata wins over Initiate's, name by name.
  const meta = new Map(upload.meta);
  for (const [name, value] of objectHeadersFrom(ctx).meta) meta.set(name, value);
  checkMetadataSize([...meta]);
  // A part's ETag that is not an MD5 names no part (InvalidPart, from the store's check).
  const etag = await multipartEtag(ctx, parts.map((p) => (/^[0-9a-f]{32}$/.test(p.etag) ? p.etag : '0'.repeat(32))));
  const made = await ctx.store.completeMultipartUpload(bucket, upload.uploadId, parts, {
    key: ctx.key,
    etag,
    lastModified: ctx.now(),
    contentType: upload.contentType,
    headers: upload.headers,
    meta: [...meta],
    ...(objectMd5 ? { objectMd5: objectMd5.toLowerCase() } : {}),
  }, ctx.dialect.partMinBytes, condition);
  if ('refused' in made) {
    switch (made.refused) {
      case 'noSuchBucket':
        return fail('NoSuchBucket');
      case 'noSuchUpload':
        return completed(ctx, (await completedBefore(ctx, bucket)) ?? fail('NoSuchUpload'));
      case 'invalidPart':
        return fail('InvalidPart', `Part ${made.partNumber} was not uploaded, or its ETag does not match.`);
      case 'entityTooSmall':
        return fail('EntityTooSmall', `Part ${made.partNumber} is under ${ctx.dialect.partMinBytes} bytes and is not the last part.`);
      default:
        return held<Response>(made.refused);
    }
  }
  return completed(ctx, made);
}

export async function abortMultipartUpload(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const upload = await uploadOf(ctx, bucket);
  if (written(await ctx.store.abortMultipartUpload(bucket, upload.uploadId)) === 'noSuchUpload') fail('NoSuchUpload');
  return new Response(null, { status: 204 });
}

export async function listParts(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const maxParts = intParam(ctx, 'max-parts', limits.maxPartsMax, limits.maxPartsMax);
  const marker = intParam(ctx, 'part-number-marker', 0, limits.partNumberMax);
  const upload = await uploadOf(ctx, bucket);
  const listed = inBucket(await ctx.store.listParts(bucket, upload.uploadId, marker, maxParts));
  if (listed === 'noSuchUpload') return fail('NoSuchUpload');
  const { parts } = listed;
  const truncated = pageTruncated(ctx, listed.truncated, parts.length);
  return xmlAnswer(ctx, {
    ListPartsResult: {
      Bucket: ctx.bucket,
      Key: ctx.key,
      UploadId: upload.uploadId,
      Owner: await ownerOf(ctx, bucket.owner),
      StorageClass: 'STANDARD',
      PartNumberMarker: marker,
      NextPartNumberMarker: parts.at(-1)?.partNumber ?? marker,
      MaxParts: maxParts,
      IsTruncated: truncated,
      Part: parts.map((p) => ({
        PartNumber: p.partNumber, LastModified: isoDate(p.lastModified), ETag: quoteEtag(p.etag), Size: p.size,
      })),
    },
  });
}

export async function listMultipartUploads(ctx: Context): Promise<Response> {
  const bucket = await ownedBucket(ctx);
  const maxUploads = intParam(ctx, 'max-uploads', limits.maxUploadsMax, limits.maxUploadsMax);
  const prefix = ctx.query.get('prefix') ?? '';
  const keyMarker = ctx.query.get('key-marker') ?? '';
  const uploadIdMarker = ctx.query.get('upload-id-marker') ?? '';
  const { uploads, truncated } = inBucket(await ctx.store.listMultipartUploads(bucket, { prefix, keyMarker, uploadIdMarker, maxUploads }));
  const who = await ownerOf(ctx, bucket.owner);
  const last = uploads.at(-1);
  return xmlAnswer(ctx, {
    ListMultipartUploadsResult: {
      Bucket: ctx.bucket,
      KeyMarker: keyMarker,
      UploadIdMarker: uploadIdMarker,
      NextKeyMarker: last?.key ?? '',
      NextUploadIdMarker: last?.uploadId ?? '',
      MaxUploads: maxUploads,
      IsTruncated: pageTruncated(ctx, truncated, uploads.length),
      Prefix: prefix,
      Upload: uploads.map((u) => ({
        Key: u.key, UploadId: u.uploadId, Owner: who, StorageClass: 'STANDARD', Initiated: isoDate(u.initiated),
      })),
    },
  });
}

