// Figure 11's in-page half, bundled by esbuild with the AWS SDK v3 and aws4fetch (as an app's
// bundler would bundle them, test/browser/engine-s3.test.ts) and injected into the built site's
// page only when figure 11 runs, as `window.__benchS3`. Every request goes through the page's
// swbucket worker: SVC's to the page's typed client (window.swbucket.client, signed as root), S3's
// to `http://{bucket}.s3.localhost/{key}`, which the same worker answers from the same store.
// Each step times itself with performance.now() inside the page; steps throw on any unexpected
// status or size.
//
// Sides:
//   svc      — the page's typed client (swbucket/client), checksum off (no Content-MD5), as in figure 2
//   a4f      — a fetch signed in the page with aws4fetch (SigV4, UNSIGNED-PAYLOAD, Content-Length
//              not signed): the S3 edge with next to no client of its own
//   a4fLen   — the same, but signing Content-Length as the AWS SDK does (aws4fetch's allHeaders),
//              which a browser then withholds from the worker (PUT only)
//   a4fSums  — the same as a4f, but with the body's SHA-256 as x-amz-content-sha256 and its CRC32 as
//              x-amz-checksum-crc32 (computed before the clock starts), which the worker checks as
//              the body streams (sw/core/payload.ts): the SDK's default checksums, Blob body (PUT only)
//   sdk      — the AWS SDK's S3Client as an app uploading Blobs sets it up
//              (requestChecksumCalculation: 'WHEN_REQUIRED', aws-sdk-js-v3 #6834): Blob bodies,
//              UNSIGNED-PAYLOAD; GET read with Body.transformToByteArray()
//   sdkBytes — the SDK's defaults with a Uint8Array body: it computes a CRC32 (x-amz-checksum-crc32)
//              and the body's SHA-256 (x-amz-content-sha256), and the worker checks both (PUT only)
//   svcReq   — SVC's typed client whose fetch sends a Request made of its arguments, the way aws4fetch
//              sends its signed Request: the page's hand-off of the body, apart from the dialect (PUT only)
import { S3Client, PutObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { AwsClient } from 'aws4fetch';
import { createClient } from '../../src/client/index.ts';
import { fill } from './fill.ts';

export type S3Side = 'svc' | 'a4f' | 'a4fLen' | 'a4fSums' | 'sdk' | 'sdkBytes' | 'svcReq';

interface SwClient {
  putObject(b: string, k: string, body: Blob, o?: { checksum?: boolean }): Promise<{ etag: string }>;
  getObject(b: string, k: string): Promise<{ response: Response; status: number }>;
  deleteObjects(b: string, keys: string[], o?: { quiet?: boolean }): Promise<{ deleted: unknown[]; errors: unknown[] }>;
}

/** The root account the site's client signs as; the S3 clients sign with the same key and secret. */
const credentials = { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' };
const S3_ENDPOINT = 'http://s3.localhost';

const client = (): SwClient => (window as unknown as { swbucket: { client: SwClient } }).swbucket.client;
const s3Url = (bucket: string, key: string) => `http://${bucket}.s3.localhost/${key}`;

function fail(message: string): never {
  throw new Error(message);
}

async function ok(r: Response, what: string): Promise<Response> {
  if (!r.ok) fail(`${what}: ${r.status} ${(await r.text()).slice(0, 300)}`);
  return r;
}

const sdk = new S3Client({ endpoint: S3_ENDPOINT, region: 'us-east-1', credentials, requestChecksumCalculation: 'WHEN_REQUIRED' });
const sdkDefaults = new S3Client({ endpoint: S3_ENDPOINT, region: 'us-east-1', credentials });
const a4f = new AwsClient({ ...credentials, service: 's3', region: 'us-east-1', retries: 0 });
const svcReq = createClient({ endpoint: 'http://svc.localhost', ...credentials, fetch: (input, init) => fetch(new Request(input, init)) });

/** Bodies made before any clock starts: the same bytes as a Blob and as a Uint8Array, and their digests. */
const bodies = new Map<string, { blob: Blob; bytes: Uint8Array; sha256: string; crc32: string }>();

const hex = (b: ArrayBuffer) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, '0')).join('');

/** CRC-32 (IEEE), base64 of its 4 bytes as x-amz-checksum-crc32 carries it. */
function crc32(data: Uint8Array): string {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = table[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  c = (c ^ 0xffffffff) >>> 0;
  return btoa(String.fromCharCode(c >>> 24, (c >>> 16) & 0xff, (c >>> 8) & 0xff, c & 0xff));
}
const body = (id: string) => bodies.get(id) ?? fail(`no body ${id}`);

async function putOnce(side: S3Side, bucket: string, key: string, id: string): Promise<void> {
  const { blob, bytes, sha256, crc32: crc } = body(id);
  switch (side) {
    case 'svc':
      await client().putObject(bucket, key, blob, { checksum: false });
      return;
    case 'a4f':
      await (await ok(await a4f.fetch(s3Url(bucket, key), { method: 'PUT', body: blob }), 'a4f PUT')).arrayBuffer();
      return;
    case 'a4fLen':
      await (await ok(await a4f.fetch(s3Url(bucket, key), {
        method: 'PUT', body: blob, headers: { 'content-length': String(blob.size) }, aws: { allHeaders: true },
      }), 'a4fLen PUT')).arrayBuffer();
      return;
    case 'a4fSums':
      await (await ok(await a4f.fetch(s3Url(bucket, key), {
        method: 'PUT', body: blob, headers: { 'x-amz-content-sha256': sha256, 'x-amz-checksum-crc32': crc },
      }), 'a4fSums PUT')).arrayBuffer();
      return;
    case 'sdk':
      await sdk.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: blob }));
      return;
    case 'sdkBytes':
      await sdkDefaults.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
      return;
    case 'svcReq':
      await svcReq.putObject(bucket, key, blob, { checksum: false });
      return;
  }
}

/** One GET with every byte in the page; its size. */
async function getOnce(side: S3Side, bucket: string, key: string): Promise<number> {
  switch (side) {
    case 'svc':
      return (await (await client().getObject(bucket, key)).response.blob()).size;
    case 'a4f':
      return (await (await ok(await a4f.fetch(s3Url(bucket, key)), 'a4f GET')).blob()).size;
    case 'sdk': {
      const out = await sdk.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return (await out.Body!.transformToByteArray()).byteLength;
    }
    default:
      return fail(`GET on ${side}`);
  }
}

/**
 * ms per call of `run`, timed over `n` calls one after another after a few not timed: a page's
 * performance.now() is coarsened to 0.1 ms, too coarse for one call of a few tenths of a ms.
 */
async function perCall(run: () => Promise<unknown>, n: number): Promise<number> {
  for (let i = 0; i < 3; i++) await run();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await run();
  return (performance.now() - t0) / n;
}

/** Runs `n` steps with at most `concurrency` in flight. */
async function pool(n: number, concurrency: number, step: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, concurrency) }, async () => {
    while (next < n) await step(next++);
  }));
}

/**
 * The AWS SDK with no service behind it: its request handler answers at once, so what is timed
 * is the SDK's own work for a call (middleware, endpoint rules, signing, checksums, parsing).
 */
function stubbed(defaults: boolean, getBody?: () => ReadableStream<Uint8Array>): S3Client {
  const headers = { etag: '"00000000000000000000000000000000"', 'content-length': '0', 'x-amz-request-id': 'STUB' };
  return new S3Client({
    endpoint: S3_ENDPOINT, region: 'us-east-1', credentials,
    ...(defaults ? {} : { requestChecksumCalculation: 'WHEN_REQUIRED' as const }),
    requestHandler: {
      handle: async () => ({ response: { statusCode: 200, headers, body: getBody ? getBody() : new Uint8Array(0) } }),
    } as unknown as S3Client['config']['requestHandler'],
  });
}

const benchS3 = {
  async makeBody(id: string, size: number, seed: number): Promise<number> {
    const bytes = fill(size, seed);
    bodies.set(id, { blob: new Blob([bytes]), bytes, sha256: hex(await crypto.subtle.digest('SHA-256', bytes)), crc32: crc32(bytes) });
    return size;
  },
  dropBody(id: string) {
    bodies.delete(id);
  },

  /** `n` PUTs of the body to keys prefix0..prefix{n-1}, `concurrency` at a time; total ms. */
  async put(side: S3Side, bucket: string, prefix: string, id: string, n: number, concurrency = 1): Promise<number> {
    const t0 = performance.now();
    await pool(n, concurrency, (i) => putOnce(side, bucket, `${prefix}${i}`, id));
    return performance.now() - t0;
  },

  /** `n` GETs of prefix0..prefix{n-1}, each checked for `size` bytes, `concurrency` at a time; total ms. */
  async get(side: S3Side, bucket: string, prefix: string, size: number, n: number, concurrency = 1): Promise<number> {
    const t0 = performance.now();
    await pool(n, concurrency, async (i) => {
      const got = await getOnce(side, bucket, `${prefix}${i}`);
      if (got !== size) fail(`${side} GET ${prefix}${i}: ${got} bytes, expected ${size}`);
    });
    return performance.now() - t0;
  },

  /**
   * The SDK's own time per call, no service behind it (stubbed()): a PutObject of the body as a
   * Blob (checksums when required) and as bytes (defaults: CRC32 and SHA-256), and a GetObject
   * whose answer is a stream of the body's bytes from memory read with transformToByteArray(); ms
   * per call, over `n` calls.
   */
  async sdkAlone(bucket: string, id: string, n: number): Promise<{ putBlob: number; putBytes: number; get: number }> {
    const { blob, bytes } = body(id);
    const blobs = stubbed(false);
    const defaults = stubbed(true);
    const getter = stubbed(false, () => new Response(blob).body!);
    const time = (run: () => Promise<unknown>) => perCall(run, n);
    return {
      putBlob: await time(() => blobs.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: blob }))),
      putBytes: await time(() => defaults.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: bytes }))),
      get: await time(async () => {
        const out = await getter.send(new GetObjectCommand({ Bucket: bucket, Key: 'k' }));
        if ((await out.Body!.transformToByteArray()).byteLength !== blob.size) fail('stubbed GET: short');
      }),
    };
  },

  /**
   * Signing alone in the page, ms per request (over `n` of each): aws4fetch's SigV4 (a SHA-256 of
   * the canonical request and an HMAC, each an asynchronous WebCrypto call) against the SVC
   * client's (one HMAC); and one crypto.subtle.digest of a canonical-request-sized string, the
   * step SigV4's check adds in the worker (protocol/sigv4.ts stringToSignV4) to SVC's one verify.
   */
  async signAlone(bucket: string, n: number): Promise<{ a4f: number; svc: number; digest: number }> {
    const svc = client() as unknown as { explainSignature(m: string, b: string, k: string): Promise<unknown> };
    const text = new TextEncoder().encode('GET\n/k\n\nhost:bench.s3.localhost\nx-amz-content-sha256:UNSIGNED-PAYLOAD\n'.repeat(4));
    const time = (run: () => Promise<unknown>) => perCall(run, n);
    return {
      a4f: await time(() => a4f.sign(s3Url(bucket, 'k'))),
      svc: await time(() => svc.explainSignature('GET', bucket, 'k')),
      digest: await time(() => crypto.subtle.digest('SHA-256', text)),
    };
  },

  /**
   * What each client sends for a PUT (its headers as the page's fetch() was given them), to check
   * the sides differ as described: which payload hash, checksum and signed headers.
   */
  async sentHeaders(bucket: string, id: string): Promise<Record<string, Record<string, string>>> {
    const seen: Record<string, Record<string, string>> = {};
    const real = window.fetch;
    let current = '';
    window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
      const req = input instanceof Request ? input : new Request(input, init);
      const h: Record<string, string> = {};
      for (const [k, v] of new Headers(init?.headers ?? req.headers)) if (k !== 'authorization') h[k] = v;
      const auth = req.headers.get('authorization') ?? new Headers(init?.headers).get('authorization') ?? '';
      h['signed-headers'] = /SignedHeaders=([^,]+)/.exec(auth)?.[1] ?? auth.split(' ')[0] ?? '';
      seen[current] = h;
      return real(input, init);
    };
    try {
      for (const side of ['svc', 'a4f', 'a4fLen', 'a4fSums', 'sdk', 'sdkBytes'] as const) {
        current = side;
        await putOnce(side, bucket, `s3e-headers-${side}`, id);
      }
    } finally {
      window.fetch = real;
    }
    await client().deleteObjects(bucket, Object.keys(seen).map((s) => `s3e-headers-${s}`), { quiet: true });
    return seen;
  },

  /** Deletes keys (clean-up, not timed). */
  async removeKeys(bucket: string, keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const r = await client().deleteObjects(bucket, keys.slice(i, i + 1000), { quiet: true });
      if (r.errors.length) fail(`remove: ${r.errors.length} errors`);
    }
  },
};

(window as unknown as { __benchS3: typeof benchS3 }).__benchS3 = benchS3;
