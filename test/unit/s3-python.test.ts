// The S3 dialect through Python clients no one here wrote: Debian's boto3 (python3-boto3, 1.26) and
// AWS CLI (awscli, 2.9), run as /usr/bin/python3 and /usr/bin/aws (not whatever else is on PATH)
// against `startServer()` over real HTTP. Each client keeps its own defaults (SigV4, Expect:
// 100-continue, its multipart thresholds, encoding-type=url on listings) except path-style
// addressing. boto3's work is batched into a script run once per phase, which prints JSON that the
// tests below read; the CLI runs once per command. Neither reads the user's ~/.aws: each child gets
// a clean environment with its own HOME and config file.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../../node/server.ts';

const PYTHON = '/usr/bin/python3';
const AWS = '/usr/bin/aws';
const INSTALL = 'apt-get install -y python3-boto3 awscli';
const ACCESS_KEY = 'svcadmin';
const SECRET = 'svcadmin-secret';
const MiB = 1024 * 1024;

/**
 * boto3's side. argv[1] is a JSON object: endpoint, bucket, phase ('write' or 'read') and what the
 * phase needs. Each step's result, or the error it met, goes under its name in the JSON printed at
 * the end, so that one failing call fails only the test that reads it.
 */
const BOTO_SCRIPT = String.raw`
import sys, json, hashlib, traceback
import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError

args = json.loads(sys.argv[1])
MiB = 1024 * 1024
config = Config(s3={'addressing_style': 'path'}, signature_version='s3v4', retries={'max_attempts': 1})
transfer = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB)

def client(secret=args['secret']):
    return boto3.client('s3', endpoint_url=args['endpoint'], region_name='us-east-1',
                        aws_access_key_id=args['accessKey'], aws_secret_access_key=secret, config=config)

s3 = client()
bucket = args['bucket']
out = {}

def step(name, fn):
    try:
        out[name] = {'ok': fn()}
    except ClientError as e:
        out[name] = {'error': 'ClientError ' + str(e.response.get('Error', {}).get('Code')) + ' (HTTP ' +
                     str(e.response.get('ResponseMetadata', {}).get('HTTPStatusCode')) + '): ' + str(e)}
    except Exception:
        out[name] = {'error': traceback.format_exc()}

def md5(b):
    return hashlib.md5(b).hexdigest()

def status(r):
    return r['ResponseMetadata']['HTTPStatusCode']

def failure(fn):
    try:
        fn()
    except ClientError as e:
        return {'code': e.response.get('Error', {}).get('Code'), 'status': e.response.get('ResponseMetadata', {}).get('HTTPStatusCode')}
    return {'code': None, 'status': None}

if args['phase'] == 'write':
    def create():
        r = s3.create_bucket(Bucket=bucket)
        return {'status': status(r), 'buckets': [b['Name'] for b in s3.list_buckets()['Buckets']]}
    step('create', create)

    def put_bytes():
        r = s3.put_object(Bucket=bucket, Key='hello.txt', Body=args['hello'].encode(), ContentType='text/plain',
                          Metadata={'colour': 'green'})
        return {'status': status(r), 'etag': r['ETag']}
    step('putBytes', put_bytes)

    def upload():
        s3.upload_file(args['bigFile'], bucket, 'big/upload.bin', Config=transfer)
        h = s3.head_object(Bucket=bucket, Key='big/upload.bin')
        body = s3.get_object(Bucket=bucket, Key='big/upload.bin')['Body'].read()
        return {'etag': h['ETag'], 'length': h['ContentLength'], 'md5': md5(body)}
    step('uploadFile', upload)

    def ranged():
        r = s3.get_object(Bucket=bucket, Key='hello.txt', Range='bytes=2-5')
        return {'status': status(r), 'body': r['Body'].read().decode(), 'contentRange': r.get('ContentRange'),
                'length': r['ContentLength']}
    step('range', ranged)

    def big_range():
        r = s3.get_object(Bucket=bucket, Key='big/upload.bin', Range=args['bigRange'])
        return {'status': status(r), 'md5': md5(r['Body'].read()), 'contentRange': r.get('ContentRange')}
    step('bigRange', big_range)

    def head():
        r = s3.head_object(Bucket=bucket, Key='hello.txt')
        return {'status': status(r), 'length': r['ContentLength'], 'etag': r['ETag'], 'contentType': r.get('ContentType'),
                'metadata': r.get('Metadata'), 'lastModified': r['LastModified'].isoformat()}
    step('head', head)

    def listing():
        for key in args['listKeys']:
            s3.put_object(Bucket=bucket, Key='list/' + key, Body=key.encode())
        pages = []
        for page in s3.get_paginator('list_objects_v2').paginate(Bucket=bucket, Prefix='list/', PaginationConfig={'PageSize': 2}):
            pages.append({'keys': [c['Key'] for c in page.get('Contents', [])], 'keyCount': page.get('KeyCount'),
                          'truncated': page.get('IsTruncated'), 'encodingType': page.get('EncodingType')})
        folders = s3.list_objects_v2(Bucket=bucket, Prefix='list/', Delimiter='/')
        return {'pages': pages,
                'prefixes': [p['Prefix'] for p in folders.get('CommonPrefixes', [])],
                'contents': [c['Key'] for c in folders.get('Contents', [])]}
    step('list', listing)

    def copy():
        r = s3.copy_object(Bucket=bucket, Key='copy/hello.txt', CopySource={'Bucket': bucket, 'Key': 'hello.txt'})
        odd = s3.copy_object(Bucket=bucket, Key='copy/odd', CopySource={'Bucket': bucket, 'Key': 'list/' + args['oddKey']})
        g = s3.get_object(Bucket=bucket, Key='copy/hello.txt')
        o = s3.get_object(Bucket=bucket, Key='copy/odd')
        return {'etag': r['CopyObjectResult']['ETag'], 'body': g['Body'].read().decode(), 'contentType': g.get('ContentType'),
                'metadata': g.get('Metadata'), 'oddEtag': odd['CopyObjectResult']['ETag'], 'oddBody': o['Body'].read().decode()}
    step('copy', copy)

    def delete_many():
        keys = ['del/a', 'del/' + args['oddKey']]
        for k in keys:
            s3.put_object(Bucket=bucket, Key=k, Body=b'x')
        r = s3.delete_objects(Bucket=bucket, Delete={'Objects': [{'Key': k} for k in keys + ['del/never-was']]})
        left = s3.list_objects_v2(Bucket=bucket, Prefix='del/')
        return {'deleted': sorted(d['Key'] for d in r.get('Deleted', [])), 'errors': r.get('Errors', []), 'left': left['KeyCount']}
    step('deleteObjects', delete_many)

    def delete_one():
        s3.put_object(Bucket=bucket, Key='del/one', Body=b'x')
        r = s3.delete_object(Bucket=bucket, Key='del/one')
        again = s3.delete_object(Bucket=bucket, Key='del/one')
        return {'status': status(r), 'again': status(again),
                'head': failure(lambda: s3.head_object(Bucket=bucket, Key='del/one'))}
    step('deleteObject', delete_one)

    def presign():
        url = lambda method, key: s3.generate_presigned_url(method, Params={'Bucket': bucket, 'Key': key}, ExpiresIn=300)
        return {'getHello': url('get_object', 'hello.txt'), 'put': url('put_object', 'presigned.txt'),
                'getPut': url('get_object', 'presigned.txt')}
    step('presign', presign)

    def errors():
        return {'noSuchKey': failure(lambda: s3.get_object(Bucket=bucket, Key='no/such/key')),
                'headMissing': failure(lambda: s3.head_object(Bucket=bucket, Key='no/such/key')),
                'noSuchBucket': failure(lambda: s3.list_objects_v2(Bucket=bucket + '-missing')),
                'wrongSecret': failure(lambda: client('not-the-secret').list_objects_v2(Bucket=bucket))}
    step('errors', errors)

else:
    def read_objects():
        got = {}
        for key in args['keys']:
            o = s3.get_object(Bucket=bucket, Key=key)
            got[key] = {'md5': md5(o['Body'].read()), 'etag': o['ETag'], 'length': o['ContentLength']}
        return got
    step('read', read_objects)

    def download():
        s3.download_file(bucket, args['downloadKey'], args['downloadTo'], Config=transfer)
        with open(args['downloadTo'], 'rb') as f:
            return {'md5': md5(f.read())}
    step('download', download)

print(json.dumps(out))
`;

interface RunResult { code: number; stdout: string; stderr: string }

let server: RunningServer;
let dir: string;
let env: NodeJS.ProcessEnv;
let scriptPath: string;
/** Why the clients cannot run, when they cannot. */
let unavailable: string | undefined;

/** Runs a program without a shell; never rejects on a non-zero exit (the result says). */
function run(file: string, args: string[], timeout = 25_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env, cwd: dir, timeout, maxBuffer: 64 * MiB, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') reject(new Error(`${file} ${args.join(' ')}: ${error.message}\n${stderr}`));
      else resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

/** `aws --endpoint-url <server> …args`, which must succeed: its stdout. */
async function aws(...args: string[]): Promise<string> {
  const r = await awsResult(...args);
  if (r.code !== 0) throw new Error(`aws ${args.join(' ')} exited ${r.code}\n${r.stderr}${r.stdout}`);
  return r.stdout;
}
const awsResult = (...args: string[]) => run(AWS, ['--endpoint-url', server.url, ...args]);
async function awsJson<T>(...args: string[]): Promise<T> {
  const out = await aws(...args, '--output', 'json');
  return (out.trim() ? JSON.parse(out) : {}) as T;
}

type Step = { ok: unknown } | { error: string };
type BotoOutput = Record<string, Step | undefined>;

async function boto(args: Record<string, unknown>): Promise<BotoOutput> {
  const r = await run(PYTHON, [scriptPath, JSON.stringify({ endpoint: server.url, accessKey: ACCESS_KEY, secret: SECRET, ...args })]);
  if (r.code !== 0) throw new Error(`the boto3 script exited ${r.code}\n${r.stderr}`);
  return JSON.parse(r.stdout) as BotoOutput;
}

/** One step's result, or a failure naming the step and what boto3 raised. */
function ok<T>(output: BotoOutput, name: string): T {
  const s = output[name];
  if (!s) throw new Error(`boto3 step ${name} did not run`);
  if ('error' in s) throw new Error(`boto3 step ${name} failed: ${s.error}`);
  return s.ok as T;
}

/** The first call runs `make`; later ones share its promise (each test awaits what it needs). */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= make());
}

const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');
/** S3's ETag for `data` uploaded in parts of `partSize`. */
function multipartEtag(data: Uint8Array, partSize: number): string {
  const digests: Buffer[] = [];
  for (let at = 0; at < data.byteLength; at += partSize) digests.push(createHash('md5').update(data.subarray(at, at + partSize)).digest());
  return `"${md5(Buffer.concat(digests))}-${digests.length}"`;
}

const botoBucket = `py-boto3-${process.pid}`;
const cliBucket = `py-awscli-${process.pid}`;
const hello = '0123456789 hello from boto3';
/** Keys for the listing (under list/): spaces, '+', '?', '&', '=', XML's specials, non-ASCII. */
const oddKey = 'a&b <c> "d" + e?f=g ü';
const listKeys = ['a/1', 'a/2', 'b', 'c d', 'z+plus', 'é/x', oddKey];
/** 11 MiB and a bit: boto3's upload_file in three 5 MiB parts. */
const big = randomBytes(11 * MiB + 12_345);
/** 9 MiB and a bit: the CLI's cp in two parts (its threshold and part size are 8 MiB). */
const nine = randomBytes(9 * MiB + 777);
const small = 'a small file from the AWS CLI\n';
const folder: Record<string, string> = { 'one.txt': 'one\n', 'sub/two.txt': 'two\n', 'sub/deeper/three é.txt': 'three\n', 'with space+plus.txt': 'spaced\n' };

const botoWrite = once(() => boto({
  phase: 'write', bucket: botoBucket, hello, bigFile: join(dir, 'big.bin'), bigRange: `bytes=${5 * MiB - 100}-${5 * MiB + 99}`, listKeys, oddKey,
}));

/** The CLI's bucket with small.txt, nine.bin and the folder (under synced/) in it: what each command printed. */
const cliUploads = once(async () => {
  const made = await aws('s3', 'mb', `s3://${cliBucket}`);
  const [cpSmall, cpNine, sync] = await Promise.all([
    aws('s3', 'cp', '--no-progress', 'small.txt', `s3://${cliBucket}/small.txt`),
    aws('s3', 'cp', '--no-progress', 'nine.bin', `s3://${cliBucket}/nine.bin`),
    aws('s3', 'sync', '--no-progress', 'folder', `s3://${cliBucket}/synced/`),
  ]);
  return { made, cpSmall, cpNine, sync };
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'swbucket-s3-python-'));
  await writeFile(join(dir, 'aws-config'), '[default]\ns3 =\n    addressing_style = path\n');
  env = {
    PATH: '/usr/bin:/bin',
    HOME: dir,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    PYTHONDONTWRITEBYTECODE: '1',
    AWS_ACCESS_KEY_ID: ACCESS_KEY,
    AWS_SECRET_ACCESS_KEY: SECRET,
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_CONFIG_FILE: join(dir, 'aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_PAGER: '',
    BOTO_DISABLE_CRT: 'true',
  };
  const missing: string[] = [];
  if (!existsSync(PYTHON) || (await run(PYTHON, ['-c', 'import boto3'])).code !== 0) missing.push('python3-boto3');
  if (!existsSync(AWS)) missing.push('awscli');
  if (missing.length) {
    unavailable = `these tests drive Debian's boto3 and AWS CLI (${PYTHON}, ${AWS}); missing: ${missing.join(', ')}. Install them with: ${INSTALL}`;
    return;
  }
  scriptPath = join(dir, 'boto-steps.py');
  await writeFile(scriptPath, BOTO_SCRIPT);
  await writeFile(join(dir, 'big.bin'), big);
  await writeFile(join(dir, 'nine.bin'), nine);
  await writeFile(join(dir, 'small.txt'), small);
  for (const [name, body] of Object.entries(folder)) {
    const path = join(dir, 'folder', name);
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, body);
  }
  server = await startServer({ port: 0, log: () => {} });
  // Both start now, to overlap; the tests await them (and see their failures).
  botoWrite().catch(() => {});
  cliUploads().catch(() => {});
});

// Without the clients every test fails, saying what to install (none is skipped).
beforeEach(() => {
  if (unavailable) throw new Error(unavailable);
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('boto3 (python3-boto3) against swbucket serve', () => {
  it('creates a bucket, puts bytes with metadata, and reads them back with head_object and a ranged get_object', async () => {
    const out = await botoWrite();
    const created = ok<{ status: number; buckets: string[] }>(out, 'create');
    expect(created.status).toBe(200);
    expect(created.buckets).toContain(botoBucket);
    const put = ok<{ status: number; etag: string }>(out, 'putBytes');
    expect(put).toEqual({ status: 200, etag: `"${md5(hello)}"` });
    const head = ok<{ status: number; length: number; etag: string; contentType: string; metadata: unknown; lastModified: string }>(out, 'head');
    expect([head.status, head.length, head.etag, head.contentType, head.metadata])
      .toEqual([200, hello.length, put.etag, 'text/plain', { colour: 'green' }]);
    expect(Math.abs(Date.parse(head.lastModified) - Date.now())).toBeLessThan(120_000);
    expect(ok(out, 'range')).toEqual({ status: 206, body: '2345', contentRange: `bytes 2-5/${hello.length}`, length: 4 });
  });

  it('upload_file goes multipart in 5 MiB parts; the bytes, the ETag and a range across a part boundary come back', async () => {
    const out = await botoWrite();
    const up = ok<{ etag: string; length: number; md5: string }>(out, 'uploadFile');
    expect(up).toEqual({ etag: multipartEtag(big, 5 * MiB), length: big.byteLength, md5: md5(big) });
    expect(up.etag).toMatch(/-3"$/);
    const from = 5 * MiB - 100;
    expect(ok(out, 'bigRange')).toEqual({ status: 206, md5: md5(big.subarray(from, from + 200)), contentRange: `bytes ${from}-${from + 199}/${big.byteLength}` });
  });

  it('pages list_objects_v2 (encoding-type=url, decoded by boto3) in key order, and folds folders with a delimiter', async () => {
    const listed = ok<{ pages: { keys: string[]; keyCount: number; truncated: boolean; encodingType: string }[]; prefixes: string[]; contents: string[] }>(await botoWrite(), 'list');
    // S3 orders keys by their UTF-8 bytes: ' ' < '+' < letters < 'é'.
    const sorted = listKeys.map((k) => `list/${k}`).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(listed.pages.map((p) => p.keys)).toEqual([sorted.slice(0, 2), sorted.slice(2, 4), sorted.slice(4, 6), sorted.slice(6)]);
    expect(listed.pages.map((p) => [p.keyCount, p.truncated, p.encodingType])).toEqual([[2, true, 'url'], [2, true, 'url'], [2, true, 'url'], [1, false, 'url']]);
    expect(listed.prefixes).toEqual(['list/a/', 'list/é/']);
    expect(listed.contents).toEqual(sorted.filter((k) => !k.startsWith('list/a/') && !k.startsWith('list/é/')));
  });

  it('copy_object keeps the source\'s body and metadata, also from an odd key; delete_objects and delete_object delete', async () => {
    const out = await botoWrite();
    expect(ok(out, 'copy')).toEqual({
      etag: `"${md5(hello)}"`, body: hello, contentType: 'text/plain', metadata: { colour: 'green' }, oddEtag: `"${md5(oddKey)}"`, oddBody: oddKey,
    });
    // S3 reports every key asked for as deleted, whether or not it held anything.
    expect(ok(out, 'deleteObjects')).toEqual({ deleted: ['del/a', `del/${oddKey}`, 'del/never-was'].sort(), errors: [], left: 0 });
    expect(ok(out, 'deleteObject')).toEqual({ status: 204, again: 204, head: { code: '404', status: 404 } });
  });

  it('generate_presigned_url: Node fetches a presigned GET, PUTs through a presigned PUT, and an altered URL is refused', async () => {
    const urls = ok<{ getHello: string; put: string; getPut: string }>(await botoWrite(), 'presign');
    const got = await fetch(urls.getHello);
    expect([got.status, await got.text()]).toEqual([200, hello]);
    const put = await fetch(urls.put, { method: 'PUT', body: 'through a boto3 presigned PUT' });
    expect(put.status).toBe(200);
    const back = await fetch(urls.getPut);
    expect([back.status, await back.text()]).toEqual([200, 'through a boto3 presigned PUT']);
    const altered = await fetch(urls.getHello.replace('/hello.txt?', '/copy/hello.txt?'));
    expect(altered.status).toBe(403);
    expect(await altered.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
  });

  it('names S3\'s errors: NoSuchKey, a 404 HEAD, NoSuchBucket, and SignatureDoesNotMatch for a wrong secret', async () => {
    expect(ok(await botoWrite(), 'errors')).toEqual({
      noSuchKey: { code: 'NoSuchKey', status: 404 },
      headMissing: { code: '404', status: 404 },
      noSuchBucket: { code: 'NoSuchBucket', status: 404 },
      wrongSecret: { code: 'SignatureDoesNotMatch', status: 403 },
    });
  });
});

describe('the AWS CLI (awscli) against swbucket serve', () => {
  const names = Object.keys(folder).sort();
  /** The folder's keys under synced/, in S3's order (UTF-8 bytes). */
  const synced = names.map((n) => `synced/${n}`).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

  it('s3 mb, s3 cp of a small file and a 9 MiB one (multipart), s3 sync of a folder, s3 ls', async () => {
    const { made, cpSmall, cpNine, sync } = await cliUploads();
    expect(made.trim()).toBe(`make_bucket: ${cliBucket}`);
    // The CLI names local files relative to its working directory (the temporary one).
    expect(cpSmall.trim()).toBe(`upload: ./small.txt to s3://${cliBucket}/small.txt`);
    expect(cpNine.trim()).toBe(`upload: ./nine.bin to s3://${cliBucket}/nine.bin`);
    expect(sync.trim().split('\n').sort()).toEqual(names.map((n) => `upload: folder/${n} to s3://${cliBucket}/synced/${n}`).sort());
    const [buckets, listing] = await Promise.all([aws('s3', 'ls'), aws('s3', 'ls', `s3://${cliBucket}`)]);
    expect(buckets.trim().split('\n').map((l) => l.split(' ').at(-1))).toEqual(expect.arrayContaining([cliBucket, botoBucket]));
    // "PRE <folder>/" for a common prefix, "<date> <time> <size> <key>" for an object.
    const rows = listing.trim().split('\n').map((l) => l.trim().split(/\s+/));
    expect(rows.map((r) => (r[0] === 'PRE' ? r : r.slice(2)))).toEqual([['PRE', 'synced/'], [String(nine.byteLength), 'nine.bin'], [String(small.length), 'small.txt']]);
  });

  it('s3api head-object and list-objects-v2 show what cp and sync stored, with S3\'s multipart ETag', async () => {
    await cliUploads();
    const [head, list] = await Promise.all([
      awsJson<{ ContentLength: number; ETag: string; ContentType: string }>('s3api', 'head-object', '--bucket', cliBucket, '--key', 'nine.bin'),
      awsJson<{ Contents?: { Key: string; Size: number; ETag: string }[] }>('s3api', 'list-objects-v2', '--bucket', cliBucket),
    ]);
    expect([head.ContentLength, head.ETag]).toEqual([nine.byteLength, multipartEtag(nine, 8 * MiB)]);
    expect(head.ETag).toMatch(/-2"$/);
    expect(list.Contents?.map((c) => [c.Key, c.Size, c.ETag])).toEqual([
      ['nine.bin', nine.byteLength, multipartEtag(nine, 8 * MiB)],
      ['small.txt', small.length, `"${md5(small)}"`],
      ...synced.map((k) => [k, Buffer.byteLength(folder[k.slice('synced/'.length)]!), `"${md5(folder[k.slice('synced/'.length)]!)}"`]),
    ]);
  });

  it('a second s3 sync uploads nothing, a sync down brings the folder back, s3 rm --recursive removes it', async () => {
    await cliUploads();
    const target = `s3://${cliBucket}/synced/`;
    const [again, down] = await Promise.all([
      aws('s3', 'sync', '--no-progress', 'folder', target),
      aws('s3', 'sync', '--no-progress', target, 'down'),
    ]);
    // Same sizes, and S3's LastModified is newer than the files': nothing to do.
    expect(again).toBe('');
    expect(down.trim().split('\n').sort()).toEqual(names.map((n) => `download: ${target}${n} to down/${n}`).sort());
    for (const n of names) expect(await readFile(join(dir, 'down', n), 'utf8'), n).toBe(folder[n]);

    const removed = await aws('s3', 'rm', '--recursive', target);
    expect(removed.trim().split('\n').sort()).toEqual(names.map((n) => `delete: ${target}${n}`).sort());
    // What was beside the folder stays.
    const left = await aws('s3', 'ls', '--recursive', `s3://${cliBucket}`);
    expect(left.trim().split('\n').map((l) => l.trim().split(/\s+/).at(-1))).toEqual(['nine.bin', 'small.txt']);
  });
});

describe('boto3 and the AWS CLI share one store', () => {
  it('the CLI reads what boto3 wrote: the multipart upload byte for byte, an object\'s metadata', async () => {
    ok(await botoWrite(), 'uploadFile');
    const [cp, head] = await Promise.all([
      aws('s3', 'cp', '--no-progress', `s3://${botoBucket}/big/upload.bin`, 'from-boto3.bin'),
      awsJson<{ ContentType: string; Metadata: unknown; ETag: string }>('s3api', 'head-object', '--bucket', botoBucket, '--key', 'hello.txt'),
    ]);
    expect(cp.trim()).toBe(`download: s3://${botoBucket}/big/upload.bin to ./from-boto3.bin`);
    expect(md5(await readFile(join(dir, 'from-boto3.bin')))).toBe(md5(big));
    expect([head.ContentType, head.Metadata, head.ETag]).toEqual(['text/plain', { colour: 'green' }, `"${md5(hello)}"`]);
  });

  it('boto3 reads what the CLI wrote: get_object of each, and download_file of the multipart one in ranges', async () => {
    await cliUploads();
    const out = await boto({
      phase: 'read', bucket: cliBucket, keys: ['small.txt', 'nine.bin'], downloadKey: 'nine.bin', downloadTo: join(dir, 'from-cli.bin'),
    });
    expect(ok(out, 'read')).toEqual({
      'small.txt': { md5: md5(small), etag: `"${md5(small)}"`, length: small.length },
      'nine.bin': { md5: md5(nine), etag: multipartEtag(nine, 8 * MiB), length: nine.byteLength },
    });
    expect(ok(out, 'download')).toEqual({ md5: md5(nine) });
  });
});
