// The S3 dialect through a client no one here wrote: the AWS SDK for JavaScript v3, unmodified and
// with its defaults (flexible checksums on), against `startServer()` over real HTTP. Every call is
// the SDK's; what it sends (SigV4, aws-chunked bodies, x-amz-checksum-crc32) is its own choice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CopyObjectCommand, CreateBucketCommand,
  CreateMultipartUploadCommand, DeleteBucketCommand, DeleteObjectCommand, DeleteObjectsCommand, GetBucketAclCommand,
  GetBucketLocationCommand, GetBucketVersioningCommand, GetObjectAttributesCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand,
  ListBucketsCommand, ListMultipartUploadsCommand, ListObjectVersionsCommand, ListObjectsCommand, ListObjectsV2Command,
  ListPartsCommand, PutBucketAclCommand, PutBucketCorsCommand, GetBucketCorsCommand, DeleteBucketCorsCommand, PutBucketVersioningCommand, PutObjectCommand, S3Client, S3ServiceException,
  UploadPartCommand, UploadPartCopyCommand, paginateListObjectsV2,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { AwsClient } from 'aws4fetch';
import { startServer, type RunningServer } from '../../node/server.ts';
import { createClient } from '../../src/client/index.ts';
import { rejection } from '../support/rejection.ts';

let server: RunningServer;
let s3: S3Client;

const credentials = { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' };

function client(o: Partial<ConstructorParameters<typeof S3Client>[0]> = {}): S3Client {
  return new S3Client({ endpoint: server.url, region: 'us-east-1', forcePathStyle: true, credentials, ...o });
}

beforeAll(async () => {
  server = await startServer({ port: 0, log: () => {} });
  s3 = client();
});
afterAll(async () => {
  s3?.destroy();
  await server?.close();
});

let n = 0;
const bucketName = () => `sdk-${process.pid}-${++n}`;

async function newBucket(): Promise<string> {
  const Bucket = bucketName();
  await s3.send(new CreateBucketCommand({ Bucket }));
  return Bucket;
}

/** The error the SDK throws, for its name and HTTP status. */
const sdkError = (p: Promise<unknown>): Promise<S3ServiceException> => rejection(p, S3ServiceException);

/** The headers of the last request the SDK sent while `run` ran, as it sent them (signed, framed). */
async function withSentHeaders(run: () => Promise<unknown>): Promise<Record<string, string>> {
  let headers: Record<string, string> = {};
  const name = `capture-${Math.random()}`;
  s3.middlewareStack.add((next) => async (args) => {
    headers = { ...(args.request as { headers: Record<string, string> }).headers };
    return next(args);
  }, { step: 'deserialize', name });
  try {
    await run();
  } finally {
    s3.middlewareStack.remove(name);
  }
  return headers;
}

const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');
const bytes = (n: number, seed = 1) => new Uint8Array(n).map((_, i) => (i * 31 + seed) % 251);

describe('the AWS SDK v3 against swbucket serve', () => {
  it('creates, heads, lists and deletes buckets; a second create is BucketAlreadyOwnedByYou', async () => {
    const Bucket = await newBucket();
    await s3.send(new HeadBucketCommand({ Bucket }));
    const listed = await s3.send(new ListBucketsCommand({}));
    expect(listed.Buckets?.map((b) => b.Name)).toContain(Bucket);
    expect(listed.Owner?.ID).toBe('svcadmin');
    const again = await sdkError(s3.send(new CreateBucketCommand({ Bucket })));
    expect([again.name, again.$metadata.httpStatusCode]).toEqual(['BucketAlreadyOwnedByYou', 409]);
    const location = await s3.send(new GetBucketLocationCommand({ Bucket }));
    expect(location.LocationConstraint ?? '').toBe('');
    await s3.send(new DeleteBucketCommand({ Bucket }));
    const gone = await sdkError(s3.send(new HeadBucketCommand({ Bucket })));
    expect([gone.name, gone.$metadata.httpStatusCode]).toEqual(['NotFound', 404]);
    const missing = await sdkError(s3.send(new DeleteBucketCommand({ Bucket })));
    expect(missing.name).toBe('NoSuchBucket');
  });

  it('puts a string, bytes and a stream (aws-chunked with a trailing CRC32), and reads them back with their metadata', async () => {
    const Bucket = await newBucket();
    const put = await s3.send(new PutObjectCommand({
      Bucket, Key: 'dir/hello.txt', Body: 'hello, s3', ContentType: 'text/plain', Metadata: { colour: 'blue' }, CacheControl: 'max-age=60',
    }));
    expect(put.ETag).toBe(`"${md5('hello, s3')}"`);
    expect(put.ChecksumCRC32).toBeTruthy();
    const got = await s3.send(new GetObjectCommand({ Bucket, Key: 'dir/hello.txt' }));
    expect(await got.Body!.transformToString()).toBe('hello, s3');
    expect([got.ContentType, got.Metadata, got.CacheControl, got.ETag]).toEqual(['text/plain', { colour: 'blue' }, 'max-age=60', put.ETag]);
    // S3 gives no Content-Disposition of its own.
    expect(got.ContentDisposition).toBeUndefined();

    const data = bytes(200_000);
    await s3.send(new PutObjectCommand({ Bucket, Key: 'bytes', Body: data }));
    const stream = Readable.from([data.subarray(0, 70_000), data.subarray(70_000)]);
    const sent = await withSentHeaders(() => s3.send(new PutObjectCommand({ Bucket, Key: 'stream', Body: stream, ContentLength: data.byteLength })));
    // What the SDK chose for a stream: framed, its checksum in the trailer.
    expect([sent['content-encoding'], sent['x-amz-content-sha256'], sent['x-amz-trailer']])
      .toEqual(['aws-chunked', 'STREAMING-UNSIGNED-PAYLOAD-TRAILER', 'x-amz-checksum-crc32']);
    for (const Key of ['bytes', 'stream']) {
      const o = await s3.send(new GetObjectCommand({ Bucket, Key }));
      expect(Buffer.from(await o.Body!.transformToByteArray()).equals(Buffer.from(data)), Key).toBe(true);
    }
    const head = await s3.send(new HeadObjectCommand({ Bucket, Key: 'stream' }));
    expect([head.ContentLength, head.ETag]).toEqual([data.byteLength, `"${md5(data)}"`]);
    const missing = await sdkError(s3.send(new HeadObjectCommand({ Bucket, Key: 'nothing' })));
    expect([missing.name, missing.$metadata.httpStatusCode]).toEqual(['NotFound', 404]);
    const noKey = await sdkError(s3.send(new GetObjectCommand({ Bucket, Key: 'nothing' })));
    expect(noKey.name).toBe('NoSuchKey');
  });

  it('reads ranges and honours If-Match, If-None-Match, If-Modified-Since and If-Unmodified-Since', async () => {
    const Bucket = await newBucket();
    const { ETag } = await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: '0123456789' }));
    const part = await s3.send(new GetObjectCommand({ Bucket, Key: 'k', Range: 'bytes=2-5' }));
    expect([await part.Body!.transformToString(), part.ContentRange]).toEqual(['2345', 'bytes 2-5/10']);
    const wrong = await sdkError(s3.send(new GetObjectCommand({ Bucket, Key: 'k', IfMatch: '"nope"' })));
    expect(wrong.$metadata.httpStatusCode).toBe(412);
    expect(wrong.name).toBe('PreconditionFailed');
    const same = await sdkError(s3.send(new GetObjectCommand({ Bucket, Key: 'k', IfNoneMatch: ETag })));
    expect(same.$metadata.httpStatusCode).toBe(304);
    const ok = await s3.send(new GetObjectCommand({ Bucket, Key: 'k', IfMatch: ETag, IfUnmodifiedSince: new Date(Date.now() + 60_000) }));
    expect(await ok.Body!.transformToString()).toBe('0123456789');
    const stale = await sdkError(s3.send(new GetObjectCommand({ Bucket, Key: 'k', IfUnmodifiedSince: new Date(Date.now() - 3_600_000) })));
    expect(stale.$metadata.httpStatusCode).toBe(412);
    const { LastModified } = await s3.send(new HeadObjectCommand({ Bucket, Key: 'k' }));
    const unchanged = await sdkError(s3.send(new HeadObjectCommand({ Bucket, Key: 'k', IfModifiedSince: LastModified })));
    expect(unchanged.$metadata.httpStatusCode).toBe(304);
    const overrides = await s3.send(new GetObjectCommand({ Bucket, Key: 'k', ResponseContentType: 'text/x-mine', ResponseContentDisposition: 'attachment; filename="k.txt"' }));
    expect([overrides.ContentType, overrides.ContentDisposition]).toEqual(['text/x-mine', 'attachment; filename="k.txt"']);
  });

  it('writes conditionally: IfNoneMatch \'*\' and IfMatch on PutObject, CopyObject and CompleteMultipartUpload', async () => {
    const Bucket = await newBucket();
    const { ETag } = await s3.send(new PutObjectCommand({ Bucket, Key: 'lock', Body: 'mine', IfNoneMatch: '*' }));
    const taken = await sdkError(s3.send(new PutObjectCommand({ Bucket, Key: 'lock', Body: 'theirs', IfNoneMatch: '*' })));
    expect([taken.name, taken.$metadata.httpStatusCode]).toEqual(['PreconditionFailed', 412]);
    const stale = await sdkError(s3.send(new PutObjectCommand({ Bucket, Key: 'lock', Body: 'theirs', IfMatch: `"${md5('other')}"` })));
    expect([stale.name, stale.$metadata.httpStatusCode]).toEqual(['PreconditionFailed', 412]);
    const missing = await sdkError(s3.send(new PutObjectCommand({ Bucket, Key: 'none', Body: 'x', IfMatch: ETag })));
    expect([missing.name, missing.$metadata.httpStatusCode]).toEqual(['NoSuchKey', 404]);
    expect(await (await s3.send(new GetObjectCommand({ Bucket, Key: 'lock' }))).Body!.transformToString()).toBe('mine');
    // Compare and swap: the write that names the current ETag wins.
    const swapped = await s3.send(new PutObjectCommand({ Bucket, Key: 'lock', Body: 'next', IfMatch: ETag }));
    expect(swapped.ETag).toBe(`"${md5('next')}"`);

    const copied = await sdkError(s3.send(new CopyObjectCommand({ Bucket, Key: 'lock', CopySource: `${Bucket}/lock`, MetadataDirective: 'REPLACE', IfNoneMatch: '*' })));
    expect(copied.name).toBe('PreconditionFailed');
    await s3.send(new CopyObjectCommand({ Bucket, Key: 'copy', CopySource: `${Bucket}/lock`, IfNoneMatch: '*' }));

    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'lock' }));
    const part = await s3.send(new UploadPartCommand({ Bucket, Key: 'lock', UploadId, PartNumber: 1, Body: 'whole' }));
    const MultipartUpload = { Parts: [{ PartNumber: 1, ETag: part.ETag }] };
    const refused = await sdkError(s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: 'lock', UploadId, MultipartUpload, IfNoneMatch: '*' })));
    expect([refused.name, refused.$metadata.httpStatusCode]).toEqual(['PreconditionFailed', 412]);
    await s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: 'lock', UploadId, MultipartUpload, IfMatch: swapped.ETag }));
    expect(await (await s3.send(new GetObjectCommand({ Bucket, Key: 'lock' }))).Body!.transformToString()).toBe('whole');
  });

  it('deletes: 204 whether or not the key held anything; DeleteObjects reports each key', async () => {
    const Bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket, Key: 'a', Body: 'a' }));
    await s3.send(new PutObjectCommand({ Bucket, Key: 'b', Body: 'b' }));
    const one = await s3.send(new DeleteObjectCommand({ Bucket, Key: 'a' }));
    expect(one.$metadata.httpStatusCode).toBe(204);
    const none = await s3.send(new DeleteObjectCommand({ Bucket, Key: 'never-was' }));
    expect(none.$metadata.httpStatusCode).toBe(204);
    const many = await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: [{ Key: 'b' }, { Key: 'c' }] } }));
    expect(many.Deleted?.map((d) => d.Key).sort()).toEqual(['b', 'c']);
    expect(many.Errors ?? []).toEqual([]);
    const quiet = await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: [{ Key: 'x' }], Quiet: true } }));
    expect(quiet.Deleted ?? []).toEqual([]);
    expect((await s3.send(new ListObjectsV2Command({ Bucket }))).KeyCount).toBe(0);
  });

  it('lists with ListObjectsV2 (pages, delimiter, start-after, url encoding) and ListObjects', async () => {
    const Bucket = await newBucket();
    const keys = ['a/1', 'a/2', 'b', 'c d', 'é/x', 'z'];
    for (const Key of keys) await s3.send(new PutObjectCommand({ Bucket, Key, Body: Key }));
    const pages: string[][] = [];
    for await (const page of paginateListObjectsV2({ client: s3, pageSize: 2 }, { Bucket })) pages.push((page.Contents ?? []).map((c) => c.Key!));
    expect(pages).toEqual([['a/1', 'a/2'], ['b', 'c d'], ['z', 'é/x']]);
    const folders = await s3.send(new ListObjectsV2Command({ Bucket, Delimiter: '/' }));
    expect(folders.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['a/', 'é/']);
    expect(folders.Contents?.map((c) => c.Key)).toEqual(['b', 'c d', 'z']);
    expect(folders.KeyCount).toBe(5);
    const after = await s3.send(new ListObjectsV2Command({ Bucket, StartAfter: 'b', FetchOwner: true }));
    expect(after.Contents?.map((c) => c.Key)).toEqual(['c d', 'z', 'é/x']);
    expect(after.Contents?.[0]?.Owner?.ID).toBe('svcadmin');
    // An empty continuation token starts at the beginning, and is echoed as sent.
    const empty = await s3.send(new ListObjectsV2Command({ Bucket, ContinuationToken: '', MaxKeys: 1 }));
    expect([empty.ContinuationToken, empty.Contents?.map((c) => c.Key)]).toEqual(['', ['a/1']]);
    const encoded = await s3.send(new ListObjectsV2Command({ Bucket, EncodingType: 'url', Prefix: 'c' }));
    expect(encoded.Contents?.map((c) => c.Key)).toEqual(['c%20d']);
    const v1 = await s3.send(new ListObjectsCommand({ Bucket, Prefix: 'a/', MaxKeys: 1 }));
    expect([v1.Contents?.map((c) => c.Key), v1.IsTruncated]).toEqual([['a/1'], true]);
  });

  it('copies with the source metadata or, with REPLACE, the request\'s; refuses a copy onto itself without REPLACE', async () => {
    const Bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket, Key: 'src', Body: 'copy me', ContentType: 'text/plain', Metadata: { a: '1' } }));
    const copied = await s3.send(new CopyObjectCommand({ Bucket, Key: 'dst', CopySource: `${Bucket}/src` }));
    expect(copied.CopyObjectResult?.ETag).toBe(`"${md5('copy me')}"`);
    const dst = await s3.send(new HeadObjectCommand({ Bucket, Key: 'dst' }));
    expect([dst.ContentType, dst.Metadata]).toEqual(['text/plain', { a: '1' }]);
    await s3.send(new CopyObjectCommand({ Bucket, Key: 'src', CopySource: `${Bucket}/src`, MetadataDirective: 'REPLACE', ContentType: 'text/csv', Metadata: { b: '2' } }));
    const src = await s3.send(new HeadObjectCommand({ Bucket, Key: 'src' }));
    expect([src.ContentType, src.Metadata]).toEqual(['text/csv', { b: '2' }]);
    const self = await sdkError(s3.send(new CopyObjectCommand({ Bucket, Key: 'src', CopySource: `${Bucket}/src` })));
    expect([self.name, self.$metadata.httpStatusCode]).toEqual(['InvalidRequest', 400]);
    const failed = await sdkError(s3.send(new CopyObjectCommand({ Bucket, Key: 'x', CopySource: `${Bucket}/src`, CopySourceIfMatch: '"nope"' })));
    expect(failed.$metadata.httpStatusCode).toBe(412);
    const spaced = await s3.send(new PutObjectCommand({ Bucket, Key: 'a b/ü?#', Body: 'odd' }));
    await s3.send(new CopyObjectCommand({ Bucket, Key: 'odd-copy', CopySource: encodeURIComponent(`${Bucket}/a b/ü?#`) }));
    expect((await s3.send(new HeadObjectCommand({ Bucket, Key: 'odd-copy' }))).ETag).toBe(spaced.ETag);
  });

  it('runs a multipart upload with S3\'s ETag, 5 MiB parts, UploadPartCopy, ListParts and ListMultipartUploads', async () => {
    const Bucket = await newBucket();
    const MiB = 1024 * 1024;
    const p1 = bytes(5 * MiB, 3);
    const p2 = bytes(1000, 5);
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'big', ContentType: 'application/x-big' }));
    const r1 = await s3.send(new UploadPartCommand({ Bucket, Key: 'big', UploadId, PartNumber: 1, Body: p1 }));
    await s3.send(new PutObjectCommand({ Bucket, Key: 'tail-source', Body: p2 }));
    const r2 = await s3.send(new UploadPartCopyCommand({ Bucket, Key: 'big', UploadId, PartNumber: 2, CopySource: `${Bucket}/tail-source` }));
    expect(r2.CopyPartResult?.ETag).toBe(`"${md5(p2)}"`);
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket }));
    expect(uploads.Uploads?.map((u) => u.UploadId)).toEqual([UploadId]);
    const parts = await s3.send(new ListPartsCommand({ Bucket, Key: 'big', UploadId }));
    expect(parts.Parts?.map((p) => [p.PartNumber, p.Size])).toEqual([[1, 5 * MiB], [2, 1000]]);
    const done = await s3.send(new CompleteMultipartUploadCommand({
      Bucket, Key: 'big', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: r1.ETag }, { PartNumber: 2, ETag: r2.CopyPartResult!.ETag }] },
    }));
    const expected = md5(Buffer.concat([Buffer.from(md5(p1), 'hex'), Buffer.from(md5(p2), 'hex')])) + '-2';
    expect(done.ETag).toBe(`"${expected}"`);
    const big = await s3.send(new GetObjectCommand({ Bucket, Key: 'big' }));
    expect(big.ContentType).toBe('application/x-big');
    expect(md5(await big.Body!.transformToByteArray())).toBe(md5(Buffer.concat([p1, p2])));

    // A part under 5 MiB that is not the last: EntityTooSmall.
    const small = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'small' }));
    const s1 = await s3.send(new UploadPartCommand({ Bucket, Key: 'small', UploadId: small.UploadId, PartNumber: 1, Body: p2 }));
    const s2 = await s3.send(new UploadPartCommand({ Bucket, Key: 'small', UploadId: small.UploadId, PartNumber: 2, Body: p2 }));
    const tooSmall = await sdkError(s3.send(new CompleteMultipartUploadCommand({
      Bucket, Key: 'small', UploadId: small.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: s1.ETag }, { PartNumber: 2, ETag: s2.ETag }] },
    })));
    expect(tooSmall.name).toBe('EntityTooSmall');
    await s3.send(new AbortMultipartUploadCommand({ Bucket, Key: 'small', UploadId: small.UploadId }));
    const aborted = await sdkError(s3.send(new ListPartsCommand({ Bucket, Key: 'small', UploadId: small.UploadId })));
    expect(aborted.name).toBe('NoSuchUpload');
  });

  it('reads one part of a multipart object as its upload numbered it (PartNumber on GetObject and HeadObject, GetObjectAttributes), and answers a Complete retried after it succeeded', async () => {
    const Bucket = await newBucket();
    const MiB = 1024 * 1024;
    const p1 = bytes(5 * MiB, 7);
    const p3 = bytes(1000, 9);
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'parts' }));
    const r1 = await s3.send(new UploadPartCommand({ Bucket, Key: 'parts', UploadId, PartNumber: 1, Body: p1 }));
    const r3 = await s3.send(new UploadPartCommand({ Bucket, Key: 'parts', UploadId, PartNumber: 3, Body: p3 }));
    const complete = new CompleteMultipartUploadCommand({
      Bucket, Key: 'parts', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: r1.ETag }, { PartNumber: 3, ETag: r3.ETag }] },
    });
    const done = await s3.send(complete);
    // The answer was lost, the client sends it again: the same answer, nothing written twice.
    const again = await s3.send(complete);
    expect(again.ETag).toBe(done.ETag);
    expect((await s3.send(new ListObjectsV2Command({ Bucket }))).KeyCount).toBe(1);

    const third = await s3.send(new GetObjectCommand({ Bucket, Key: 'parts', PartNumber: 3 }));
    expect(third.$metadata.httpStatusCode).toBe(206);
    expect([third.PartsCount, third.ContentLength, third.ContentRange, third.ETag]).toEqual([2, 1000, `bytes ${5 * MiB}-${5 * MiB + 999}/${5 * MiB + 1000}`, done.ETag]);
    expect(md5(await third.Body!.transformToByteArray())).toBe(md5(p3));
    const first = await s3.send(new HeadObjectCommand({ Bucket, Key: 'parts', PartNumber: 1 }));
    expect([first.PartsCount, first.ContentLength, first.ETag]).toEqual([2, 5 * MiB, done.ETag]);
    expect((await sdkError(s3.send(new GetObjectCommand({ Bucket, Key: 'parts', PartNumber: 2 })))).name).toBe('InvalidPart');
    expect((await sdkError(s3.send(new GetObjectCommand({ Bucket, Key: 'parts', PartNumber: 1, Range: 'bytes=0-9' })))).name).toBe('InvalidRequest');
    expect((await sdkError(s3.send(new GetObjectCommand({ Bucket, Key: 'parts', PartNumber: 10001 })))).name).toBe('InvalidArgument');

    const attributes = await s3.send(new GetObjectAttributesCommand({ Bucket, Key: 'parts', ObjectAttributes: ['ObjectParts', 'ObjectSize'], MaxParts: 1 }));
    expect(attributes.ObjectSize).toBe(5 * MiB + 1000);
    const page = attributes.ObjectParts!;
    expect([page.TotalPartsCount, page.IsTruncated, page.NextPartNumberMarker, page.Parts?.map((p) => [p.PartNumber, p.Size])]).toEqual([2, true, '1', [[1, 5 * MiB]]]); // the SDK's model has the markers as strings
    const rest = await s3.send(new GetObjectAttributesCommand({ Bucket, Key: 'parts', ObjectAttributes: ['ObjectParts'], PartNumberMarker: '1' }));
    expect([rest.ObjectParts?.IsTruncated, rest.ObjectParts?.Parts?.map((p) => p.PartNumber)]).toEqual([false, [3]]);

    // An archive keeps the parts apart.
    const svc = createClient({ endpoint: server.url, ...credentials });
    const archive = new Uint8Array(await new Response((await svc.exportArchive({ buckets: [Bucket] })).body).arrayBuffer());
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'parts' }));
    await s3.send(new DeleteBucketCommand({ Bucket }));
    await svc.importArchive(archive);
    const restored = await s3.send(new GetObjectCommand({ Bucket, Key: 'parts', PartNumber: 3 }));
    expect([restored.PartsCount, md5(await restored.Body!.transformToByteArray())]).toEqual([2, md5(p3)]);

    // Any other object is its own part 1; a copy of a multipart object is such an object.
    await s3.send(new CopyObjectCommand({ Bucket, Key: 'copy', CopySource: `${Bucket}/parts` }));
    const whole = await s3.send(new GetObjectCommand({ Bucket, Key: 'copy', PartNumber: 1 }));
    expect([whole.ContentLength, whole.PartsCount]).toEqual([5 * MiB + 1000, undefined]);
    await whole.Body!.transformToByteArray();
    expect((await sdkError(s3.send(new HeadObjectCommand({ Bucket, Key: 'copy', PartNumber: 2 })))).$metadata.httpStatusCode).toBe(400);
    expect((await s3.send(new GetObjectAttributesCommand({ Bucket, Key: 'copy', ObjectAttributes: ['ObjectParts', 'ETag'] }))).ObjectParts).toBeUndefined();

    // A retried Complete names the upload that made the key's current object, not any other.
    const other = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'copy' }));
    await s3.send(new AbortMultipartUploadCommand({ Bucket, Key: 'copy', UploadId: other.UploadId }));
    expect((await sdkError(s3.send(new CompleteMultipartUploadCommand({
      Bucket, Key: 'copy', UploadId: other.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: r1.ETag }] },
    })))).name).toBe('NoSuchUpload');
    await s3.send(new PutObjectCommand({ Bucket, Key: 'parts', Body: 'replaced' }));
    expect((await sdkError(s3.send(complete))).name).toBe('NoSuchUpload');
  });

  it('pages ListBuckets: MaxBuckets, ContinuationToken and Prefix', async () => {
    const prefix = `page-${process.pid}-`;
    for (const name of ['a', 'b', 'c']) await s3.send(new CreateBucketCommand({ Bucket: prefix + name }));
    const first = await s3.send(new ListBucketsCommand({ Prefix: prefix, MaxBuckets: 2 }));
    expect([first.Buckets?.map((b) => b.Name), first.Prefix]).toEqual([[prefix + 'a', prefix + 'b'], prefix]);
    expect(first.ContinuationToken).toBeTruthy();
    const second = await s3.send(new ListBucketsCommand({ Prefix: prefix, MaxBuckets: 2, ContinuationToken: first.ContinuationToken }));
    expect([second.Buckets?.map((b) => b.Name), second.ContinuationToken]).toEqual([[prefix + 'c'], undefined]);
    expect((await s3.send(new ListBucketsCommand({ Prefix: prefix }))).Buckets).toHaveLength(3);
    expect((await sdkError(s3.send(new ListBucketsCommand({ MaxBuckets: 0 })))).name).toBe('InvalidArgument');
    expect((await sdkError(s3.send(new ListBucketsCommand({ ContinuationToken: 'not-ours' })))).name).toBe('InvalidArgument');
  });

  it('Expect: 100-continue: the 100 comes once the request is authorised and its body is wanted, never for a refused one', async () => {
    const Bucket = await newBucket();
    const { SignatureV4 } = await import('@smithy/signature-v4');
    const { Sha256 } = await import('@aws-crypto/sha256-js');
    const { connect } = await import('node:net');
    const put = async (key: string, secret: string, last = '') => {
      const url = new URL(`${server.url}/${Bucket}/${key}`);
      const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: { ...credentials, secretAccessKey: secret }, sha256: Sha256, applyChecksum: false });
      const signed = await signer.sign({
        method: 'PUT', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {},
        headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'content-length': '5', expect: '100-continue' },
      });
      const head = `PUT ${url.pathname} HTTP/1.1\r\n` + Object.entries(signed.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('') + last + '\r\n';
      // As a client that waits for the 100 before it sends a byte of its body.
      return new Promise<string>((resolve, reject) => {
        const socket = connect(Number(url.port), url.hostname);
        let got = '';
        socket.on('data', (d) => {
          got += d.toString('latin1');
          if (got === 'HTTP/1.1 100 Continue\r\n\r\n') socket.write('hello');
        });
        socket.on('end', () => resolve(got + '[closed]'));
        socket.on('error', reject);
        socket.setTimeout(3000, () => resolve(got + '[timeout]'));
        socket.write(head);
      });
    };
    const refused = await put('no', 'wrong-secret');
    expect(refused).toMatch(/^HTTP\/1\.1 403 /);
    expect(refused).toMatch(/\r\nconnection: close\r\n/i);
    expect(refused).toMatch(/\[closed\]$/);
    // (Connection: close, so that the server ends the exchange when it has answered.)
    const accepted = await put('yes', credentials.secretAccessKey, 'connection: close\r\n');
    expect(accepted).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
    expect(await (await s3.send(new GetObjectCommand({ Bucket, Key: 'yes' }))).Body!.transformToString()).toBe('hello');
    expect((await sdkError(s3.send(new HeadObjectCommand({ Bucket, Key: 'no' })))).name).toBe('NotFound');
  });

  it('uploads with lib-storage\'s Upload (multipart, progress events)', async () => {
    const Bucket = await newBucket();
    const data = bytes(12 * 1024 * 1024, 7);
    const progress: number[] = [];
    const upload = new Upload({ client: s3, params: { Bucket, Key: 'lib', Body: data }, partSize: 5 * 1024 * 1024, queueSize: 2 });
    upload.on('httpUploadProgress', (p) => progress.push(p.loaded ?? 0));
    const result = await upload.done();
    expect(result.ETag).toMatch(/-3"$/);
    expect(progress.at(-1)).toBe(data.byteLength);
    const o = await s3.send(new GetObjectCommand({ Bucket, Key: 'lib' }));
    expect(md5(await o.Body!.transformToByteArray())).toBe(md5(data));
  });

  it('versioning: Enabled, version ids on writes, ListObjectVersions, reading and deleting a version', async () => {
    const Bucket = await newBucket();
    await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket }))).Status).toBe('Enabled');
    const v1 = await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: 'one' }));
    const v2 = await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: 'two' }));
    expect(v1.VersionId).toBeTruthy();
    expect(v2.VersionId).not.toBe(v1.VersionId);
    const versions = await s3.send(new ListObjectVersionsCommand({ Bucket }));
    expect(versions.Versions?.map((v) => [v.VersionId, v.IsLatest])).toEqual([[v2.VersionId, true], [v1.VersionId, false]]);
    const old = await s3.send(new GetObjectCommand({ Bucket, Key: 'k', VersionId: v1.VersionId }));
    expect([await old.Body!.transformToString(), old.VersionId]).toEqual(['one', v1.VersionId]);
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'k', VersionId: v1.VersionId }));
    const left = await s3.send(new ListObjectVersionsCommand({ Bucket }));
    expect(left.Versions?.map((v) => v.VersionId)).toEqual([v2.VersionId]);
  });

  it('public-read through x-amz-acl: GetBucketAcl shows AllUsers READ, and an unsigned GET reads', async () => {
    const Bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket, Key: 'pub', Body: 'for all' }));
    const before = await fetch(`${server.url}/${Bucket}/pub`);
    expect(before.status).toBe(403);
    await s3.send(new PutBucketAclCommand({ Bucket, ACL: 'public-read' }));
    const acl = await s3.send(new GetBucketAclCommand({ Bucket }));
    expect(acl.Grants?.map((g) => [g.Grantee?.Type, g.Permission])).toEqual([['CanonicalUser', 'FULL_CONTROL'], ['Group', 'READ']]);
    const after = await fetch(`${server.url}/${Bucket}/pub`);
    expect([after.status, await after.text()]).toEqual([200, 'for all']);
  });

  it('presigned GET and PUT URLs work, and an expired or altered one is refused', async () => {
    const Bucket = await newBucket();
    const putUrl = await getSignedUrl(s3, new PutObjectCommand({ Bucket, Key: 'signed.txt' }), { expiresIn: 60 });
    const put = await fetch(putUrl, { method: 'PUT', body: 'through a presigned PUT' });
    expect(put.status).toBe(200);
    const getUrl = await getSignedUrl(s3, new GetObjectCommand({ Bucket, Key: 'signed.txt' }), { expiresIn: 60 });
    const got = await fetch(getUrl);
    expect([got.status, await got.text()]).toEqual([200, 'through a presigned PUT']);
    const other = await fetch(getUrl.replace('signed.txt', 'other.txt'));
    expect(other.status).toBe(403);
    expect(await other.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    const expired = await getSignedUrl(s3, new GetObjectCommand({ Bucket, Key: 'signed.txt' }), { expiresIn: 1, signingDate: new Date(Date.now() - 10_000) });
    const late = await fetch(expired);
    expect([late.status, (await late.text()).includes('Request has expired')]).toEqual([403, true]);
  });

  it('takes a form upload signed by createPresignedPost, and refuses one its policy does not allow', async () => {
    const Bucket = await newBucket();
    const { url, fields } = await createPresignedPost(s3, {
      Bucket, Key: 'uploads/${filename}', Expires: 60,
      Conditions: [['content-length-range', 1, 1000], ['starts-with', '$Content-Type', 'text/'], ['starts-with', '$key', 'uploads/']],
      Fields: { 'Content-Type': 'text/plain', success_action_status: '201' },
    });
    const post = (extra: Record<string, string>, body: string, over: Record<string, string> = {}) => {
      const form = new FormData();
      for (const [k, v] of Object.entries({ ...fields, ...over, ...extra })) form.append(k, v);
      form.append('file', new File([body], 'note.txt', { type: 'text/plain' }));
      return fetch(url, { method: 'POST', body: form });
    };
    const ok = await post({}, 'posted from a form');
    expect(ok.status).toBe(201);
    const doc = await ok.text();
    expect(doc).toContain('<Key>uploads/note.txt</Key>');
    expect(doc.replace(/&quot;/g, '"')).toContain(`<ETag>"${md5('posted from a form')}"</ETag>`);
    const o = await s3.send(new GetObjectCommand({ Bucket, Key: 'uploads/note.txt' }));
    expect([await o.Body!.transformToString(), o.ContentType]).toEqual(['posted from a form', 'text/plain']);

    const extra = await post({ 'x-amz-meta-sneaky': 'yes' }, 'x');
    expect([extra.status, await extra.text()]).toEqual([403, expect.stringContaining('Extra input fields: x-amz-meta-sneaky')]);
    const big = await post({}, 'x'.repeat(1001));
    expect(big.status).toBe(400);
    const wrongType = await post({}, 'x', { 'Content-Type': 'image/png' });
    expect([wrongType.status, await wrongType.text()]).toEqual([403, expect.stringContaining('Policy Condition failed: content-type')]);
    const tampered = await post({}, 'x', { Policy: btoa(JSON.stringify({ expiration: '2099-01-01T00:00:00Z', conditions: [['starts-with', '$key', '']] })) });
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain('SignatureDoesNotMatch');
    const listed = await s3.send(new ListObjectsV2Command({ Bucket }));
    expect(listed.Contents?.map((c) => c.Key)).toEqual(['uploads/note.txt']);
  });

  it('names S3\'s errors: a wrong secret, an unknown key, a body that does not match its checksum', async () => {
    const Bucket = await newBucket();
    const wrong = client({ credentials: { ...credentials, secretAccessKey: 'not-it' } });
    const bad = await sdkError(wrong.send(new ListObjectsV2Command({ Bucket })));
    expect([bad.name, bad.$metadata.httpStatusCode]).toEqual(['SignatureDoesNotMatch', 403]);
    const unknown = client({ credentials: { accessKeyId: 'nobody', secretAccessKey: 'x' } });
    const who = await sdkError(unknown.send(new ListBucketsCommand({})));
    expect([who.name, who.$metadata.httpStatusCode]).toEqual(['InvalidAccessKeyId', 403]);
    const crc = await sdkError(s3.send(new PutObjectCommand({ Bucket, Key: 'c', Body: 'abc', ChecksumCRC32: 'AAAAAA==' })));
    expect([crc.name, crc.$metadata.httpStatusCode]).toEqual(['BadDigest', 400]);
    const nothing = await sdkError(s3.send(new HeadObjectCommand({ Bucket, Key: 'c' })));
    expect(nothing.$metadata.httpStatusCode).toBe(404);
    wrong.destroy();
    unknown.destroy();
  });

  it('answers aws4fetch (fetch signed with SigV4, UNSIGNED-PAYLOAD; a presigned query)', async () => {
    const Bucket = await newBucket();
    const aws = new AwsClient({ ...credentials, service: 's3', region: 'us-east-1' });
    const put = await aws.fetch(`${server.url}/${Bucket}/a4f.txt`, { method: 'PUT', body: 'signed by aws4fetch', headers: { 'content-type': 'text/plain' } });
    expect([put.status, put.headers.get('etag')]).toEqual([200, `"${md5('signed by aws4fetch')}"`]);
    const get = await aws.fetch(`${server.url}/${Bucket}/a4f.txt`);
    expect([get.status, await get.text(), get.headers.get('content-type')]).toEqual([200, 'signed by aws4fetch', 'text/plain']);
    const signed = await aws.sign(`${server.url}/${Bucket}/a4f.txt`, { aws: { signQuery: true } });
    const viaQuery = await fetch(signed.url);
    expect([viaQuery.status, await viaQuery.text()]).toEqual([200, 'signed by aws4fetch']);
    const list = await aws.fetch(`${server.url}/${Bucket}?list-type=2`);
    expect(await list.text()).toContain('<Key>a4f.txt</Key>');
    // A client that guessed another service from the host is told what to sign for.
    const wrong = new AwsClient({ ...credentials, service: 'execute-api', region: 'us-east-1' });
    const refused = await wrong.fetch(`${server.url}/${Bucket}/a4f.txt`);
    expect([refused.status, (await refused.text()).replace(/&quot;/g, '"')]).toEqual([400, expect.stringContaining('sign for "s3"')]);
  });

  it('keeps a bucket\'s CORS configuration and enforces it on preflights and answers, as S3 does', async () => {
    const Bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: 'cors' }));
    const preflight = (origin: string, method: string, headers = 'authorization, x-amz-date') => fetch(`${server.url}/${Bucket}/k`, {
      method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
    });
    // No configuration: every origin.
    const open = await preflight('http://anywhere.test', 'DELETE');
    expect([open.status, open.headers.get('access-control-allow-origin')]).toEqual([200, '*']);
    const none = await sdkError(s3.send(new GetBucketCorsCommand({ Bucket })));
    expect([none.name, none.$metadata.httpStatusCode]).toEqual(['NoSuchCORSConfiguration', 404]);

    await s3.send(new PutBucketCorsCommand({ Bucket, CORSConfiguration: { CORSRules: [
      { ID: 'app', AllowedOrigins: ['https://app.example', 'http://*.dev.example'], AllowedMethods: ['GET', 'PUT'], AllowedHeaders: ['authorization', 'x-amz-*'], ExposeHeaders: ['ETag'], MaxAgeSeconds: 600 },
    ] } }));
    const read = await s3.send(new GetBucketCorsCommand({ Bucket }));
    expect(read.CORSRules).toEqual([{ ID: 'app', AllowedOrigins: ['https://app.example', 'http://*.dev.example'], AllowedMethods: ['GET', 'PUT'], AllowedHeaders: ['authorization', 'x-amz-*'], ExposeHeaders: ['ETag'], MaxAgeSeconds: 600 }]);

    const allowed = await preflight('http://a.dev.example', 'PUT');
    expect([allowed.status, allowed.headers.get('access-control-allow-origin'), allowed.headers.get('access-control-allow-methods'),
      allowed.headers.get('access-control-allow-headers'), allowed.headers.get('access-control-max-age')])
      .toEqual([200, 'http://a.dev.example', 'GET, PUT', 'authorization, x-amz-date', '600']);
    for (const [origin, method, headers] of [['https://evil.example', 'GET', 'authorization'], ['https://app.example', 'DELETE', 'authorization'], ['https://app.example', 'GET', 'x-other']] as const) {
      const refused = await preflight(origin, method, headers);
      expect([refused.status, await refused.text()], `${origin} ${method} ${headers}`).toEqual([403, expect.stringContaining('<Code>AccessForbidden</Code>')]);
    }
    // An answer carries CORS headers only for an origin a rule allows.
    const signedGet = async (origin: string) => {
      const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket, Key: 'k' }), { expiresIn: 60 });
      return fetch(url, { headers: { origin } });
    };
    const ok = await signedGet('https://app.example');
    expect([ok.status, ok.headers.get('access-control-allow-origin'), ok.headers.get('access-control-expose-headers')]).toEqual([200, 'https://app.example', 'ETag']);
    const blocked = await signedGet('https://evil.example');
    expect([blocked.status, blocked.headers.get('access-control-allow-origin')]).toEqual([200, null]);

    await s3.send(new DeleteBucketCorsCommand({ Bucket }));
    expect((await preflight('https://evil.example', 'DELETE')).headers.get('access-control-allow-origin')).toBe('*');
    const bad = await sdkError(s3.send(new PutBucketCorsCommand({ Bucket, CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['*'], AllowedMethods: ['PATCH'] }] } })));
    expect([bad.name, bad.$metadata.httpStatusCode]).toEqual(['InvalidRequest', 400]);
  });

  it('keeps a write\'s flexible checksum and gives it back when asked (ChecksumMode: ENABLED); an archive keeps it and the CORS rules', async () => {
    const Bucket = await newBucket();
    const body = 'checksummed body';
    const put = await s3.send(new PutObjectCommand({ Bucket, Key: 'sha', Body: body, ChecksumAlgorithm: 'SHA256' }));
    const sha256 = createHash('sha256').update(body).digest('base64');
    expect(put.ChecksumSHA256).toBe(sha256);
    const got = await s3.send(new GetObjectCommand({ Bucket, Key: 'sha', ChecksumMode: 'ENABLED' }));
    expect([await got.Body!.transformToString(), got.ChecksumSHA256]).toEqual([body, sha256]);
    const head = await s3.send(new HeadObjectCommand({ Bucket, Key: 'sha', ChecksumMode: 'ENABLED' }));
    expect(head.ChecksumSHA256).toBe(sha256);
    await s3.send(new CopyObjectCommand({ Bucket, Key: 'sha-copy', CopySource: `${Bucket}/sha` }));
    expect((await s3.send(new HeadObjectCommand({ Bucket, Key: 'sha-copy', ChecksumMode: 'ENABLED' }))).ChecksumSHA256).toBe(sha256);
    // Not asked: not given.
    expect((await s3.send(new HeadObjectCommand({ Bucket, Key: 'sha' }))).ChecksumSHA256).toBeUndefined();

    await s3.send(new PutBucketCorsCommand({ Bucket, CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['https://app.example'], AllowedMethods: ['GET'] }] } }));
    const svc = createClient({ endpoint: server.url, ...credentials });
    const archive = await svc.exportArchive({ buckets: [Bucket] });
    const bytes = new Uint8Array(await new Response(archive.body).arrayBuffer());
    await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: [{ Key: 'sha' }, { Key: 'sha-copy' }] } }));
    await s3.send(new DeleteBucketCommand({ Bucket }));
    await svc.importArchive(bytes);
    expect((await s3.send(new HeadObjectCommand({ Bucket, Key: 'sha', ChecksumMode: 'ENABLED' }))).ChecksumSHA256).toBe(sha256);
    expect((await s3.send(new GetBucketCorsCommand({ Bucket }))).CORSRules?.[0]?.AllowedOrigins).toEqual(['https://app.example']);
  });

  it('the null version: what was written unversioned is read, listed, copied and deleted as VersionId null', async () => {
    const Bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: 'before versioning' }));
    const nowNull = await s3.send(new GetObjectCommand({ Bucket, Key: 'k', VersionId: 'null' }));
    expect(await nowNull.Body!.transformToString()).toBe('before versioning');
    await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: 'after' }));
    const listed = await s3.send(new ListObjectVersionsCommand({ Bucket }));
    expect(listed.Versions?.map((v) => v.Owner?.ID)).toEqual(['svcadmin', 'svcadmin']);
    // Deleting every version as listed, as cleanup tools do, empties the bucket; a version that is not there was deleted all the same.
    const gone = await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: [
      ...listed.Versions!.map((v) => ({ Key: v.Key!, VersionId: v.VersionId! })), { Key: 'k', VersionId: '999' }, { Key: 'never', VersionId: 'null' },
    ] } }));
    expect([gone.Deleted?.length, gone.Errors ?? []]).toEqual([4, []]);
    expect((await s3.send(new ListObjectVersionsCommand({ Bucket }))).Versions ?? []).toEqual([]);
    // Now the current object has an id: VersionId null names nothing.
    await s3.send(new PutObjectCommand({ Bucket, Key: 'v', Body: 'versioned' }));
    const none = await sdkError(s3.send(new GetObjectCommand({ Bucket, Key: 'v', VersionId: 'null' })));
    expect(none.name).toBe('NoSuchVersion');
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'v', VersionId: 'null' }));
    expect(await (await s3.send(new GetObjectCommand({ Bucket, Key: 'v' }))).Body!.transformToString()).toBe('versioned');
  });

  it('DeleteBucket takes uploads in progress with it; ListObjects (v1) names each owner, and a page of none is not truncated', async () => {
    const Bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket, Key: 'a', Body: 'a' }));
    const v1 = await s3.send(new ListObjectsCommand({ Bucket }));
    expect(v1.Contents?.[0]?.Owner?.ID).toBe('svcadmin');
    const zero = await s3.send(new ListObjectsCommand({ Bucket, MaxKeys: 0 }));
    expect([zero.IsTruncated, zero.Contents ?? []]).toEqual([false, []]);
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'a' }));
    await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'left' }));
    const deleted = await s3.send(new DeleteBucketCommand({ Bucket }));
    expect(deleted.$metadata.httpStatusCode).toBe(204);
    expect((await sdkError(s3.send(new HeadBucketCommand({ Bucket })))).$metadata.httpStatusCode).toBe(404);
  });

  it('reads what raw HTTP clients send: UTF-8 in a signed header (as boto3 sends it), an Expect it does not know, form fields sent as file parts', async () => {
    const Bucket = await newBucket();
    const { SignatureV4 } = await import('@smithy/signature-v4');
    const { Sha256 } = await import('@aws-crypto/sha256-js');
    const { request } = await import('node:http');
    const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials, sha256: Sha256, uriEscapePath: false, applyChecksum: false });
    const put = async (key: string, headers: Record<string, string>) => {
      const url = new URL(`${server.url}/${Bucket}/${key}`);
      const signed = await signer.sign({
        method: 'PUT', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {},
        headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'content-length': '2', ...headers }, body: 'hi',
      });
      // On the wire a header is the UTF-8 bytes of its value (Node writes a string one byte a character).
      const wire = Object.fromEntries(Object.entries(signed.headers as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('latin1')]));
      return new Promise<number>((resolve, reject) => {
        const req = request(url, { method: 'PUT', headers: wire }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        // A Buffer: a string would be written with the head in one write, the head then as UTF-8 too.
        req.end(Buffer.from('hi'));
      });
    };
    expect(await put('unicode', { 'x-amz-meta-name': 'café ☕' })).toBe(200);
    const head = await s3.send(new HeadObjectCommand({ Bucket, Key: 'unicode' }));
    expect(Buffer.from(head.Metadata!.name!, 'latin1').toString('utf8')).toBe('café ☕');
    // Node itself would answer 417 to an Expect it does not know; S3 ignores it.
    expect(await put('expect', { expect: 'something-else' })).toBe(200);

    const { url: postUrl, fields } = await createPresignedPost(s3, { Bucket, Key: 'form.txt', Expires: 60 });
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, new Blob([v]), k); // each field a part with a file name
    form.append('file', new File(['from parts'], 'x.txt'));
    expect((await fetch(postUrl, { method: 'POST', body: form })).status).toBe(204);
    expect(await (await s3.send(new GetObjectCommand({ Bucket, Key: 'form.txt' }))).Body!.transformToString()).toBe('from parts');
  });

  it('shares one store with the SVC dialect: an object put through the SDK reads through swbucket/client, and back', async () => {
    const Bucket = await newBucket();
    await s3.send(new PutObjectCommand({ Bucket, Key: 'from-s3', Body: 'via the SDK', Metadata: { who: 'sdk' } }));
    const svc = createClient({ endpoint: server.url, ...credentials });
    const read = await svc.getObject(Bucket, 'from-s3');
    expect([await read.response.text(), read.metadata]).toEqual(['via the SDK', { who: 'sdk' }]);
    await svc.putObject(Bucket, 'from-svc', 'via swbucket/client');
    const back = await s3.send(new GetObjectCommand({ Bucket, Key: 'from-svc' }));
    expect(await back.Body!.transformToString()).toBe('via swbucket/client');
  });
});
