// The S3 dialect through two more clients no one here wrote, unmodified, against `startServer()`
// over real HTTP: minio-js (npm `minio`), in this process, once told its region and once not (then
// it asks each bucket's location with GET /{bucket}?location first); and Debian's rclone, run as
// /usr/bin/rclone with a remote given entirely by environment variables (provider Other, path-style)
// in a clean environment of its own. Each keeps its own choices: minio-js's multipart for streams of
// unknown length (its part numbers start at 2), rclone's ListObjects v1, its multipart with the MD5
// kept in metadata, its modification times in x-amz-meta-mtime.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import {
  Client, CopyConditions, CopyDestinationOptions, CopySourceOptions, PostPolicy, S3Error, type BucketItem, type ClientOptions,
} from 'minio';
import { startServer, type RunningServer } from '../../node/server.ts';
import { rejection } from '../support/rejection.ts';

const ACCESS_KEY = 'svcadmin';
const SECRET = 'svcadmin-secret';
const MiB = 1024 * 1024;
const RCLONE = '/usr/bin/rclone';

let server: RunningServer;
let dir: string;

beforeAll(async () => {
  server = await startServer({ port: 0, log: () => {} });
  dir = await mkdtemp(join(tmpdir(), 'swbucket-s3-tools-'));
});
afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');
/** S3's ETag (unquoted, as minio-js gives it) for `data` uploaded in parts of `partSize`. */
function multipartEtag(data: Uint8Array, partSize: number): string {
  const digests: Buffer[] = [];
  for (let at = 0; at < data.byteLength; at += partSize) digests.push(createHash('md5').update(data.subarray(at, at + partSize)).digest());
  return `${md5(Buffer.concat(digests))}-${digests.length}`;
}
/** S3's order of keys: by their UTF-8 bytes. */
const s3Order = (keys: string[]) => [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

async function collect<T>(stream: Readable): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item as T);
  return items;
}

/** The S3Error minio-js throws (its code is S3's error code, or its own name for a bodiless HEAD answer). */
const s3Error = (p: Promise<unknown>): Promise<S3Error> => rejection(p, S3Error);

/**
 * A minio-js client on the server, and the request lines ("GET /bucket?location") it has sent, from
 * its own trace (which shows only requests answered with a status it expected: an error is thrown
 * before it is traced).
 */
function minio(o: Partial<ClientOptions> = {}): { client: Client; requests: () => string[] } {
  const u = new URL(server.url);
  const client = new Client({ endPoint: u.hostname, port: Number(u.port), useSSL: false, accessKey: ACCESS_KEY, secretKey: SECRET, ...o });
  let trace = '';
  client.traceOn(new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      trace += String(chunk);
      done();
    },
  }));
  return { client, requests: () => [...trace.matchAll(/^REQUEST: (.+)$/gm)].map((m) => m[1]!) };
}

let n = 0;

describe.each([
  { label: 'with region us-east-1', region: 'us-east-1' as string | undefined },
  { label: 'without a region (GET ?location first)', region: undefined },
])('minio-js $label against swbucket serve', ({ region }) => {
  const options = region ? { region } : {};
  let mc: Client;
  let requests: () => string[];
  beforeAll(() => {
    ({ client: mc, requests } = minio(options));
  });
  const bucketName = () => `minio-${region ? 'r' : 'n'}-${process.pid}-${++n}`;
  async function newBucket(): Promise<string> {
    const bucket = bucketName();
    await mc.makeBucket(bucket);
    return bucket;
  }

  it('makeBucket and bucketExists; asks a bucket\'s location only when it has no region, once per bucket', async () => {
    const bucket = bucketName();
    const before = requests().length;
    await mc.makeBucket(bucket);
    expect(await mc.bucketExists(bucket)).toBe(true);
    await mc.putObject(bucket, 'x', 'x');
    await mc.statObject(bucket, 'x');
    expect(requests().slice(before)).toEqual(region
      ? [`PUT /${bucket}`, `HEAD /${bucket}`, `PUT /${bucket}/x`, `HEAD /${bucket}/x`]
      : [`PUT /${bucket}`, `GET /${bucket}?location`, `HEAD /${bucket}`, `PUT /${bucket}/x`, `HEAD /${bucket}/x`]);
    // Without a region, the missing bucket's GET ?location is what answers 404 NoSuchBucket.
    expect(await mc.bucketExists(`${bucket}-missing`)).toBe(false);
    const again = await s3Error(mc.makeBucket(bucket));
    expect(again.code).toBe('BucketAlreadyOwnedByYou');
    expect((await mc.listBuckets()).map((b) => b.name)).toContain(bucket);
  });

  it('putObject of a string with metadata and of a Buffer; statObject, getObject and getPartialObject read them back', async () => {
    const bucket = await newBucket();
    const put = await mc.putObject(bucket, 'dir/hello.txt', 'hello, minio', undefined, { 'Content-Type': 'text/plain', colour: 'blue' });
    expect(put.etag).toBe(md5('hello, minio'));
    const data = randomBytes(300_000);
    expect((await mc.putObject(bucket, 'bytes.bin', data)).etag).toBe(md5(data));

    const stat = await mc.statObject(bucket, 'dir/hello.txt');
    expect([stat.size, stat.etag, stat.metaData]).toEqual([12, md5('hello, minio'), { 'content-type': 'text/plain', colour: 'blue' }]);
    expect(Math.abs(stat.lastModified.getTime() - Date.now())).toBeLessThan(120_000);
    expect((await readAll(await mc.getObject(bucket, 'dir/hello.txt'))).toString()).toBe('hello, minio');
    expect((await readAll(await mc.getPartialObject(bucket, 'dir/hello.txt', 7, 5))).toString()).toBe('minio');
    // No length: from the offset to the end.
    expect((await readAll(await mc.getPartialObject(bucket, 'dir/hello.txt', 7))).toString()).toBe('minio');
    expect((await readAll(await mc.getObject(bucket, 'bytes.bin'))).equals(data)).toBe(true);
    expect((await readAll(await mc.getPartialObject(bucket, 'bytes.bin', 100_000, 50_000))).equals(data.subarray(100_000, 150_000))).toBe(true);
  });

  it('putObject of a stream of unknown length goes multipart (parts numbered from 2, as minio-js numbers them); bytes and S3\'s ETag come back', async () => {
    const bucket = await newBucket();
    const data = randomBytes(6 * MiB + 1000);
    const stream = () => Readable.from([data.subarray(0, MiB), data.subarray(MiB, 4 * MiB), data.subarray(4 * MiB)]);
    const before = requests().length;
    // Unknown length: minio-js assumes its largest object, so its part size (over 500 MiB) holds it all.
    const one = await mc.putObject(bucket, 'stream/one', stream());
    const sent = requests().slice(before).map((r) => r.replace(/uploadId=[^&]+/, 'uploadId=…'));
    expect(sent).toEqual([
      ...(region ? [] : [`GET /${bucket}?location`]),
      `GET /${bucket}?uploads&delimiter=&max-uploads=1000&prefix=stream%2Fone`,
      `POST /${bucket}/stream/one?uploads`,
      `PUT /${bucket}/stream/one?partNumber=2&uploadId=…`,
      `POST /${bucket}/stream/one?uploadId=…`,
    ]);
    expect(one.etag).toBe(multipartEtag(data, data.byteLength));
    // Its own part size of 5 MiB: parts 2 and 3. minio-js reads its blocks with `for await`, which
    // joins blocks buffered together into one part, so the stream comes a MiB at a time.
    const paced = Readable.from((async function* () {
      for (let at = 0; at < data.byteLength; at += MiB) {
        await new Promise((resolve) => setImmediate(resolve));
        yield data.subarray(at, at + MiB);
      }
    })());
    const { client: small, requests: smallRequests } = minio({ ...options, partSize: 5 * MiB });
    const two = await small.putObject(bucket, 'stream/two', paced, undefined, { 'Content-Type': 'application/x-test' });
    expect(smallRequests().filter((r) => r.startsWith('PUT ')).map((r) => r.replace(/&uploadId=.+/, '')))
      .toEqual([`PUT /${bucket}/stream/two?partNumber=2`, `PUT /${bucket}/stream/two?partNumber=3`]);
    expect(two.etag).toBe(multipartEtag(data, 5 * MiB));
    expect(two.etag).toMatch(/-2$/);

    for (const [key, etag] of [['stream/one', one.etag], ['stream/two', two.etag]] as const) {
      const stat = await mc.statObject(bucket, key);
      expect([stat.size, stat.etag], key).toEqual([data.byteLength, etag]);
      expect(md5(await readAll(await mc.getObject(bucket, key))), key).toBe(md5(data));
    }
    expect((await mc.statObject(bucket, 'stream/two')).metaData['content-type']).toBe('application/x-test');
    // Across the boundary of the 5 MiB parts.
    const across = await readAll(await mc.getPartialObject(bucket, 'stream/two', 5 * MiB - 100, 200));
    expect(across.equals(data.subarray(5 * MiB - 100, 5 * MiB + 100))).toBe(true);
    // Nothing left in progress.
    expect(await collect(mc.listIncompleteUploads(bucket, '', true))).toEqual([]);
  });

  it('listObjectsV2 (encoding-type=url, decoded by minio-js) streams keys in S3\'s order; folds folders unless recursive; starts after a key', async () => {
    const bucket = await newBucket();
    const keys = ['a/1', 'a/2', 'b', 'c d', 'z+plus', 'é/x', 'a&b <c> "d" ?e=f ü'];
    for (const key of keys) await mc.putObject(bucket, `list/${key}`, key);
    const sorted = s3Order(keys.map((k) => `list/${k}`));

    const all = await collect<BucketItem>(mc.listObjectsV2(bucket, 'list/', true));
    expect(all.map((o) => o.name)).toEqual(sorted);
    expect(all.map((o) => [o.size, o.etag])).toEqual(sorted.map((k) => [Buffer.byteLength(k) - 5, md5(k.slice(5))]));
    const folded = await collect<BucketItem>(mc.listObjectsV2(bucket, 'list/', false));
    expect(folded.filter((o) => o.prefix).map((o) => o.prefix)).toEqual(['list/a/', 'list/é/']);
    expect(folded.filter((o) => o.name).map((o) => o.name)).toEqual(sorted.filter((k) => !/^list\/(a|é)\//.test(k)));
    const after = await collect<BucketItem>(mc.listObjectsV2(bucket, 'list/', true, 'list/b'));
    expect(after.map((o) => o.name)).toEqual(sorted.slice(sorted.indexOf('list/b') + 1));
  });

  it('copyObject with CopyConditions (and with a failing one), and with CopySourceOptions and CopyDestinationOptions replacing metadata', async () => {
    const bucket = await newBucket();
    const odd = 'from/a b+c é.txt';
    const put = await mc.putObject(bucket, odd, 'copy me', undefined, { 'Content-Type': 'text/plain', colour: 'red' });

    const conditions = new CopyConditions();
    conditions.setMatchETag(put.etag);
    const v1 = await mc.copyObject(bucket, 'to/v1.txt', `/${bucket}/${odd}`, conditions);
    expect('etag' in v1 ? v1.etag : v1).toBe(md5('copy me'));
    const v1Stat = await mc.statObject(bucket, 'to/v1.txt');
    expect([v1Stat.etag, v1Stat.metaData]).toEqual([md5('copy me'), { 'content-type': 'text/plain', colour: 'red' }]);
    const failing = new CopyConditions();
    failing.setMatchETag('"0123456789abcdef0123456789abcdef"');
    expect((await s3Error(mc.copyObject(bucket, 'to/never.txt', `/${bucket}/${odd}`, failing))).code).toBe('PreconditionFailed');
    const unmodified = new CopyConditions();
    unmodified.setUnmodified(new Date('2000-01-01T00:00:00Z'));
    expect((await s3Error(mc.copyObject(bucket, 'to/never.txt', `/${bucket}/${odd}`, unmodified))).code).toBe('PreconditionFailed');

    const v2 = await mc.copyObject(
      new CopySourceOptions({ Bucket: bucket, Object: 'to/v1.txt', MatchETag: put.etag }),
      new CopyDestinationOptions({ Bucket: bucket, Object: 'to/v2.txt', MetadataDirective: 'REPLACE', UserMetadata: { colour: 'green' } }),
    );
    // minio-js takes v2's ETag from a response header S3 does not send (it is in the body).
    expect('Bucket' in v2 ? [v2.Bucket, v2.Key] : v2).toEqual([bucket, 'to/v2.txt']);
    const v2Stat = await mc.statObject(bucket, 'to/v2.txt');
    expect([v2Stat.etag, v2Stat.metaData.colour]).toEqual([md5('copy me'), 'green']);
    expect((await readAll(await mc.getObject(bucket, 'to/v2.txt'))).toString()).toBe('copy me');
    expect((await collect<BucketItem>(mc.listObjectsV2(bucket, '', true))).map((o) => o.name)).toEqual([odd, 'to/v1.txt', 'to/v2.txt']);
  });

  it('removeObject and removeObjects (quiet: no entries, also for a key that never was; an empty VersionId names no version)', async () => {
    const bucket = await newBucket();
    for (const key of ['a', 'b', 'c d', 'e/f']) await mc.putObject(bucket, key, key);
    await mc.removeObject(bucket, 'a');
    await mc.removeObject(bucket, 'never-was');
    expect((await s3Error(mc.statObject(bucket, 'a'))).code).toBe('NotFound');
    expect(await mc.removeObjects(bucket, ['b', 'c d', 'never-was'])).toEqual([]);
    // Given as { name } without a versionId, minio-js sends <VersionId/>: S3 reads that as the
    // version "" and answers NoSuchVersion for it, deleting nothing.
    expect(await mc.removeObjects(bucket, [{ name: 'e/f' }]))
      .toEqual([{ Key: 'e/f', Code: 'NoSuchVersion', Message: 'The specified version does not exist.' }]);
    expect((await collect<BucketItem>(mc.listObjectsV2(bucket, '', true))).map((o) => o.name)).toEqual(['e/f']);
    expect(await mc.removeObjects(bucket, ['e/f'])).toEqual([]);
    expect(await collect(mc.listObjectsV2(bucket, '', true))).toEqual([]);
    await mc.removeBucket(bucket);
    expect(await mc.bucketExists(bucket)).toBe(false);
  });

  it('presignedGetObject (with response header overrides) and presignedPutObject, fetched from Node; an expired URL is refused', async () => {
    const bucket = await newBucket();
    await mc.putObject(bucket, 'doc.txt', 'presigned body', undefined, { 'Content-Type': 'text/plain' });
    const get = await fetch(await mc.presignedGetObject(bucket, 'doc.txt', 60));
    expect([get.status, await get.text(), get.headers.get('content-type')]).toEqual([200, 'presigned body', 'text/plain']);
    const overridden = await fetch(await mc.presignedGetObject(bucket, 'doc.txt', 60, {
      'response-content-type': 'application/json', 'response-content-disposition': 'attachment; filename="d.json"',
    }));
    expect([overridden.status, overridden.headers.get('content-type'), overridden.headers.get('content-disposition')])
      .toEqual([200, 'application/json', 'attachment; filename="d.json"']);
    await overridden.arrayBuffer();

    const putUrl = await mc.presignedPutObject(bucket, 'up/put.txt', 60);
    const put = await fetch(putUrl, { method: 'PUT', body: 'through a minio-js presigned PUT' });
    expect([put.status, put.headers.get('etag')]).toEqual([200, `"${md5('through a minio-js presigned PUT')}"`]);
    await put.arrayBuffer();
    expect((await readAll(await mc.getObject(bucket, 'up/put.txt'))).toString()).toBe('through a minio-js presigned PUT');

    // Signed an hour ago for a minute.
    const expired = await fetch(await mc.presignedGetObject(bucket, 'doc.txt', 60, {}, new Date(Date.now() - 3_600_000)));
    expect([expired.status, await expired.text()]).toEqual([403, expect.stringContaining('<Code>AccessDenied</Code>')]);
    const altered = await fetch(putUrl.replace('/up/put.txt?', '/up/other.txt?'), { method: 'PUT', body: 'x' });
    expect([altered.status, await altered.text()]).toEqual([403, expect.stringContaining('<Code>SignatureDoesNotMatch</Code>')]);
  });

  it('presignedPostPolicy: Node POSTs the form with FormData; a body outside the policy\'s length range is refused', async () => {
    const bucket = await newBucket();
    const policy = new PostPolicy();
    policy.setBucket(bucket);
    policy.setKey('forms/posted.txt');
    policy.setExpires(new Date(Date.now() + 60_000));
    policy.setContentType('text/plain');
    policy.setContentLengthRange(1, 1000);
    policy.setUserMetaData({ origin: 'form' });
    const { postURL, formData } = await mc.presignedPostPolicy(policy);
    expect(postURL).toBe(`${server.url}/${bucket}`);
    const post = (body: string) => {
      const form = new FormData();
      for (const [k, v] of Object.entries(formData)) form.append(k, v);
      form.append('file', new File([body], 'posted.txt', { type: 'text/plain' }));
      return fetch(postURL, { method: 'POST', body: form });
    };
    const ok = await post('posted through a minio-js policy');
    // No success_action_status: S3 answers 204.
    expect([ok.status, await ok.text(), ok.headers.get('etag')]).toEqual([204, '', `"${md5('posted through a minio-js policy')}"`]);
    const stat = await mc.statObject(bucket, 'forms/posted.txt');
    expect([stat.size, stat.metaData]).toEqual([32, { 'content-type': 'text/plain', origin: 'form' }]);
    expect((await readAll(await mc.getObject(bucket, 'forms/posted.txt'))).toString()).toBe('posted through a minio-js policy');

    const big = await post('x'.repeat(1001));
    expect([big.status, await big.text()]).toEqual([400, expect.stringContaining('<Code>EntityTooLarge</Code>')]);
  });

  it('maps S3\'s errors to S3Error codes: NoSuchKey, NotFound for a HEAD, NoSuchBucket, SignatureDoesNotMatch for a wrong secret', async () => {
    const bucket = await newBucket();
    await mc.putObject(bucket, 'here', 'here');
    expect((await s3Error(mc.getObject(bucket, 'no/such/key'))).code).toBe('NoSuchKey');
    // A HEAD answer has no body: minio-js names a 404 itself.
    expect((await s3Error(mc.statObject(bucket, 'no/such/key'))).code).toBe('NotFound');
    expect((await s3Error(mc.getObject(`${bucket}-missing`, 'here'))).code).toBe('NoSuchBucket');
    expect((await s3Error(collect(mc.listObjectsV2(`${bucket}-missing`)))).code).toBe('NoSuchBucket');
    const { client: wrong } = minio({ ...options, secretKey: 'not-the-secret' });
    expect((await s3Error(wrong.getObject(bucket, 'here'))).code).toBe('SignatureDoesNotMatch');
    expect((await s3Error(collect(wrong.listObjectsV2(bucket)))).code).toBe('SignatureDoesNotMatch');
    const { client: nobody } = minio({ ...options, accessKey: 'nobody' });
    expect((await s3Error(nobody.listBuckets())).code).toBe('InvalidAccessKeyId');
  });
});

interface RunResult { code: number; stdout: Buffer; stderr: string }

describe('rclone (Debian) against swbucket serve', () => {
  const bucket = `rclone-${process.pid}`;
  const remote = `swb:${bucket}`;
  /** The files copied, under dir/folder, with one fixed modification time. */
  const folder: Record<string, Buffer> = {
    'one.txt': Buffer.from('one\n'),
    'sub/two é.txt': Buffer.from('two\n'),
    'sub/deeper/three+plus.txt': Buffer.from('three\n'),
    // 12 MiB and a bit: with --s3-upload-cutoff 5M --s3-chunk-size 5M, three parts.
    'big.bin': randomBytes(12 * MiB + 12_345),
  };
  const mtime = new Date('2020-01-02T03:04:05Z');
  let env: NodeJS.ProcessEnv;

  function run(args: string[], timeout = 20_000): Promise<RunResult> {
    return new Promise((resolve, reject) => {
      execFile(RCLONE, args, { env, cwd: dir, timeout, maxBuffer: 64 * MiB, encoding: 'buffer' }, (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') reject(new Error(`rclone ${args.join(' ')}: ${error.message}\n${stderr.toString()}`));
        else resolve({ code: error ? Number(error.code) : 0, stdout, stderr: stderr.toString() });
      });
    });
  }
  /** `rclone …args`, which must succeed. */
  async function rclone(...args: string[]): Promise<RunResult> {
    const r = await run(args);
    if (r.code !== 0) throw new Error(`rclone ${args.join(' ')} exited ${r.code}\n${r.stderr}${r.stdout.toString()}`);
    return r;
  }
  const text = async (...args: string[]) => (await rclone(...args)).stdout.toString();
  /** The request lines rclone's --dump headers logged ("PUT /bucket/key?…"). */
  const dumped = (stderr: string) => [...stderr.matchAll(/DEBUG : (GET|PUT|POST|HEAD|DELETE) (\S+) HTTP\/1\.1$/gm)].map((m) => `${m[1]} ${m[2]}`);

  let copied: Promise<RunResult> | undefined;
  /** mkdir, then copy of the folder with headers dumped; later tests read what it stored. */
  const copy = () => (copied ??= (async () => {
    await rclone('mkdir', remote);
    return rclone('copy', '-vv', '--dump', 'headers', '--s3-upload-cutoff', '5M', '--s3-chunk-size', '5M', 'folder', `${remote}/dir`);
  })());

  beforeAll(async () => {
    if (!existsSync(RCLONE)) return;
    await writeFile(join(dir, 'rclone.conf'), '');
    env = {
      PATH: '/usr/bin:/bin',
      HOME: dir,
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      RCLONE_CONFIG: join(dir, 'rclone.conf'),
      RCLONE_CONFIG_SWB_TYPE: 's3',
      RCLONE_CONFIG_SWB_PROVIDER: 'Other',
      RCLONE_CONFIG_SWB_ENDPOINT: server.url,
      RCLONE_CONFIG_SWB_ACCESS_KEY_ID: ACCESS_KEY,
      RCLONE_CONFIG_SWB_SECRET_ACCESS_KEY: SECRET,
      RCLONE_CONFIG_SWB_REGION: 'us-east-1',
      RCLONE_CONFIG_SWB_FORCE_PATH_STYLE: 'true',
    };
    for (const [name, body] of Object.entries(folder)) {
      const path = join(dir, 'folder', name);
      await mkdir(join(path, '..'), { recursive: true });
      await writeFile(path, body);
      await utimes(path, mtime, mtime);
    }
  });

  // Without rclone every test here fails, saying what to install (none is skipped).
  beforeEach(() => {
    if (!existsSync(RCLONE)) throw new Error(`these tests drive Debian's rclone (${RCLONE}), which is missing. Install it with: apt-get install -y rclone`);
  });

  const names = Object.keys(folder);

  it('mkdir makes the bucket; copy PUTs the small files and uploads the 12 MiB one in three 5 MiB parts', async () => {
    const { stderr } = await copy();
    expect((await text('lsd', 'swb:')).trim().split('\n').map((l) => l.trim().split(/\s+/).at(-1))).toContain(bucket);
    const sent = dumped(stderr).map((r) => r.replace(/uploadId=[^&\s]+/, 'uploadId=…'));
    const path = (name: string) => `/${bucket}/dir/${encodeURIComponent(name).replace(/%2F/g, '/')}`;
    expect(sent).toEqual(expect.arrayContaining([
      ...names.filter((k) => k !== 'big.bin').map((k) => `PUT ${path(k)}`),
      `POST /${bucket}/dir/big.bin?uploads=`,
      ...[1, 2, 3].map((p) => `PUT /${bucket}/dir/big.bin?partNumber=${p}&uploadId=…`),
      `POST /${bucket}/dir/big.bin?uploadId=…`,
    ]));
    expect(sent.filter((r) => r.startsWith('PUT /') || r.startsWith('POST /'))).toHaveLength(names.length - 1 + 5);
    expect(stderr).not.toMatch(/ERROR :/);
  });

  it('ls and lsjson list what copy stored: sizes, the files\' modification times, and MD5s (the multipart one\'s from rclone\'s metadata)', async () => {
    await copy();
    const ls = (await text('ls', remote)).trim().split('\n').map((l) => {
      const m = /^\s*(\d+) (.+)$/.exec(l)!;
      return [m[2], Number(m[1])];
    });
    expect(ls.sort()).toEqual(names.map((k) => [`dir/${k}`, folder[k]!.byteLength]).sort());
    type Entry = { Path: string; Size: number; ModTime: string; IsDir: boolean; Hashes?: { md5?: string } };
    const listed = JSON.parse(await text('lsjson', '-R', '--hash', '--hash-type', 'md5', `${remote}/dir`)) as Entry[];
    const files = listed.filter((e) => !e.IsDir).map((e) => [e.Path, e.Size, Date.parse(e.ModTime), e.Hashes?.md5]);
    expect(files.sort()).toEqual(names.map((k) => [k, folder[k]!.byteLength, mtime.getTime(), md5(folder[k]!)]).sort());
    expect(listed.filter((e) => e.IsDir).map((e) => e.Path).sort()).toEqual(['sub', 'sub/deeper']);
  });

  it('check finds no difference (sizes and MD5s), then one in a changed file; a second copy has nothing to transfer', async () => {
    await copy();
    const same = await run(['check', 'folder', `${remote}/dir`]);
    expect([same.code, same.stderr]).toEqual([0, expect.stringContaining('0 differences found')]);
    expect(same.stderr).toContain(`${names.length} matching files`);

    // Same size, other bytes: only the hash tells.
    await mkdir(join(dir, 'changed'), { recursive: true });
    await writeFile(join(dir, 'changed', 'one.txt'), 'One\n');
    const differs = await run(['check', '--one-way', 'changed', `${remote}/dir`]);
    expect([differs.code, differs.stderr]).toEqual([1, expect.stringContaining('1 differences found')]);
    expect(differs.stderr).toMatch(/one\.txt: md5 differ/);

    const again = await rclone('copy', '-v', '--s3-upload-cutoff', '5M', '--s3-chunk-size', '5M', 'folder', `${remote}/dir`);
    expect(again.stderr).toContain('There was nothing to transfer');
  });

  it('cat prints an object, a range of one, and the multipart one byte for byte', async () => {
    await copy();
    expect(await text('cat', `${remote}/dir/sub/two é.txt`)).toBe('two\n');
    expect(await text('cat', '--offset', '1', '--count', '2', `${remote}/dir/sub/deeper/three+plus.txt`)).toBe('hr');
    const big = folder['big.bin']!;
    expect(md5((await rclone('cat', `${remote}/dir/big.bin`)).stdout)).toBe(md5(big));
    const from = 5 * MiB - 100;
    expect((await rclone('cat', '--offset', String(from), '--count', '200', `${remote}/dir/big.bin`)).stdout.equals(big.subarray(from, from + 200))).toBe(true);
  });

  it('minio-js reads what rclone wrote: S3\'s multipart ETag, rclone\'s mtime and md5chksum metadata', async () => {
    await copy();
    const { client } = minio({ region: 'us-east-1' });
    const big = folder['big.bin']!;
    const stat = await client.statObject(bucket, 'dir/big.bin');
    expect([stat.size, stat.etag]).toEqual([big.byteLength, multipartEtag(big, 5 * MiB)]);
    expect(stat.etag).toMatch(/-3$/);
    expect(stat.metaData.md5chksum).toBe(createHash('md5').update(big).digest('base64'));
    expect(Number(stat.metaData.mtime)).toBe(mtime.getTime() / 1000);
    expect((await client.statObject(bucket, 'dir/one.txt')).etag).toBe(md5(folder['one.txt']!));
  });

  it('deletefile removes one object; purge removes the rest and the bucket', async () => {
    await copy();
    await rclone('deletefile', `${remote}/dir/one.txt`);
    const left = (await text('ls', remote)).trim().split('\n').map((l) => l.trim().split(/\s+/).slice(1).join(' '));
    expect(left.sort()).toEqual(names.filter((k) => k !== 'one.txt').map((k) => `dir/${k}`).sort());
    const { client } = minio({ region: 'us-east-1' });
    expect((await s3Error(client.statObject(bucket, 'dir/one.txt'))).code).toBe('NotFound');

    await rclone('purge', remote);
    expect((await text('lsd', 'swb:')).split('\n').map((l) => l.trim().split(/\s+/).at(-1))).not.toContain(bucket);
    expect(await client.bucketExists(bucket)).toBe(false);
  });
});
