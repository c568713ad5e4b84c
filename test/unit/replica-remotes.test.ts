// The remotes a replica syncs with, and the faults its tests inject: Ceph's RADOS Gateway
// (test/support/rgw.ts, one cluster for the file) and `swbucket serve` in a process of its own,
// each behind test/support/fault-proxy.ts, driven with the AWS SDK. Each fault once: a PUT cut
// mid-body leaves the object absent or whole; 500 InternalError and 503 SlowDown are retried by
// the SDK; a remote down then up; latency; a GET cut mid-body; an answer lost after the write
// happened; a request never answered.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, S3ServiceException, type S3ClientConfig } from '@aws-sdk/client-s3';
import { REMOTES, type Remote } from '../support/remotes.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

/** A network failure as the SDK reports one: no HTTP status, an error code of the socket's. */
function expectNetworkFailure(e: unknown, codes = /ECONNRESET|ECONNREFUSED|EPIPE|socket hang up|aborted/i): void {
  expect(e).toBeInstanceOf(Error);
  expect((e as S3ServiceException).$metadata?.httpStatusCode, String(e)).toBeUndefined();
  const err = e as Error & { code?: string };
  expect(`${err.name} ${err.code ?? ''} ${err.message}`).toMatch(codes);
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to fail, and it succeeded');
}

describe.each(REMOTES)('through the fault proxy to %s', (_name, start, startMs) => {
  let remote: Remote;
  let proxy: FaultProxy;
  /** The SDK as a replica would use it (3 attempts), and one that does not retry, to see each failure. */
  let s3: S3Client;
  let once: S3Client;
  const bucket = `replica-${process.pid}`;
  const clients: S3Client[] = [];
  const client = (o: S3ClientConfig = {}) => {
    const c = new S3Client({ endpoint: proxy.url, region: 'us-east-1', forcePathStyle: true, credentials: remote.credentials, ...o });
    clients.push(c);
    return c;
  };
  const put = (c: S3Client, key: string, body: Uint8Array) => c.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  const get = async (c: S3Client, key: string) => Buffer.from(await (await c.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToByteArray());
  /** The object's bytes straight from the remote (not through the proxy), or null when it is absent. */
  const stored = async (key: string): Promise<Buffer | null> => {
    const direct = new S3Client({ endpoint: remote.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: remote.credentials });
    try {
      return Buffer.from(await (await direct.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToByteArray());
    } catch (e) {
      if (e instanceof S3ServiceException && e.name === 'NoSuchKey') return null;
      throw e;
    } finally {
      direct.destroy();
    }
  };

  beforeAll(async () => {
    remote = await start();
    proxy = await startFaultProxy({ target: remote.endpoint });
    s3 = client();
    once = client({ maxAttempts: 1 });
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  }, startMs);

  afterAll(async () => {
    for (const c of clients) c.destroy();
    await proxy?.close();
    await remote?.stop();
  }, 30_000);

  it('creates a bucket, and puts and gets an object byte for byte, each request forwarded once', async () => {
    const body = randomBytes(3 * MiB + 17);
    proxy.forget();
    await put(s3, 'whole', body);
    expect((await get(s3, 'whole')).equals(body)).toBe(true);
    const puts = proxy.requests({ method: 'PUT', key: 'whole' });
    expect(puts, remote.log()).toHaveLength(1);
    expect(puts[0]).toMatchObject({ status: 200, outcome: 'answered', reachedRemote: true, bytesToRemote: body.length, fault: undefined });
    const gets = proxy.requests({ method: 'GET', key: 'whole' });
    expect(gets).toMatchObject([{ status: 200, outcome: 'answered', bytesOut: body.length }]);
    const list = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(list.Contents?.map((o) => o.Key)).toContain('whole');
  });

  it('a PUT cut after 256 KiB of its body reached the remote: a network failure, and the object absent; retried, whole', async () => {
    const body = randomBytes(2 * MiB);
    const rule = proxy.fault({ match: { method: 'PUT', key: 'cut' }, fault: { kind: 'cut-request', afterBytes: 256 * KiB } });
    expectNetworkFailure(await failure(put(once, 'cut', body)));
    expect(rule.hits()).toBe(1);
    expect(proxy.requests({ method: 'PUT', key: 'cut' })).toMatchObject([{ outcome: 'cut', reachedRemote: true, bytesToRemote: 256 * KiB, status: undefined }]);
    expect(await stored('cut'), 'a cut upload left something stored').toBeNull();

    // The SDK that retries: its first attempt cut, its second whole.
    proxy.forget();
    proxy.fault({ match: { method: 'PUT', key: 'cut' }, fault: { kind: 'cut-request', afterBytes: 256 * KiB } });
    await put(s3, 'cut', body);
    expect(proxy.requests({ method: 'PUT', key: 'cut' }).map((r) => [r.outcome, r.status])).toEqual([['cut', undefined], ['answered', 200]]);
    const now = await stored('cut');
    expect(now?.length).toBe(body.length);
    expect(now!.equals(body)).toBe(true);
  });

  it('500 InternalError and 503 SlowDown in S3\'s XML: the SDK retries them and succeeds; without retries it reads the code', async () => {
    const body = randomBytes(10 * KiB);
    await put(s3, 'flaky', body);

    proxy.forget();
    proxy.fault({ match: { method: 'GET', key: 'flaky' }, fault: { kind: 'error', status: 500 } });
    expect((await get(s3, 'flaky')).equals(body)).toBe(true);
    expect(proxy.requests({ key: 'flaky' }).map((r) => [r.method, r.status, r.reachedRemote])).toEqual([['GET', 500, false], ['GET', 200, true]]);

    proxy.forget();
    proxy.fault({ match: { method: 'PUT', key: 'flaky' }, fault: { kind: 'error', status: 503 }, times: 2 });
    await put(s3, 'flaky', body);
    const puts = proxy.requests({ method: 'PUT', key: 'flaky' });
    expect(puts.map((r) => r.status)).toEqual([503, 503, 200]);
    // The body was read from the client each time, and reached the remote once.
    expect(puts.map((r) => r.bytesIn)).toEqual([body.length, body.length, body.length]);
    expect(puts.filter((r) => r.reachedRemote)).toHaveLength(1);

    proxy.fault({ match: { method: 'HEAD', key: 'flaky' }, fault: { kind: 'error', status: 503 } });
    const slow = await failure(once.send(new HeadObjectCommand({ Bucket: bucket, Key: 'flaky' })));
    expect((slow as S3ServiceException).$metadata.httpStatusCode).toBe(503);
    proxy.fault({ match: { method: 'GET', key: 'flaky' }, fault: { kind: 'error', status: 500 } });
    const internal = await failure(get(once, 'flaky'));
    expect(internal).toBeInstanceOf(S3ServiceException);
    expect((internal as S3ServiceException).name).toBe('InternalError');
    expect((internal as S3ServiceException).$metadata.httpStatusCode).toBe(500);
    expect((internal as S3ServiceException).$response?.headers['retry-after']).toBeUndefined();
  });

  it('the remote down (refused, then reset) and up again', async () => {
    // Clients of their own: a pooled connection the proxy just reset could fail in other ways first.
    const fresh = () => client({ maxAttempts: 1 });
    const list = (c: S3Client) => c.send(new ListObjectsV2Command({ Bucket: bucket }));
    try {
      await proxy.down();
      expectNetworkFailure(await failure(list(fresh())), /ECONNREFUSED/);
      await proxy.up();
      expect((await list(fresh())).$metadata.httpStatusCode).toBe(200);

      const before = proxy.connections();
      await proxy.down('reset');
      expectNetworkFailure(await failure(list(fresh())), /ECONNRESET|socket hang up/);
      expect(proxy.connections().reset).toBe(before.reset + 1);
    } finally {
      await proxy.up();
    }
    expect((await list(fresh())).$metadata.httpStatusCode).toBe(200);
    // A client whose pooled connection was reset by the proxy going down carries on (SDK retries).
    expect((await list(s3)).$metadata.httpStatusCode).toBe(200);
  });

  it('latency: a request held 400 ms, the next not', async () => {
    await put(s3, 'slow', Buffer.from('slow'));
    proxy.forget();
    proxy.fault({ match: { method: 'HEAD', key: 'slow' }, delayMs: 400 });
    const t = performance.now();
    await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'slow' }));
    expect(performance.now() - t).toBeGreaterThanOrEqual(395);
    await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'slow' }));
    const [held, next] = proxy.requests({ key: 'slow' });
    expect([held?.fault, held?.status, next?.fault, next?.status]).toEqual(['delay', 200, undefined, 200]);
    expect(held!.endedAt! - held!.startedAt).toBeGreaterThanOrEqual(400);
  });

  it('a GET cut after 64 KiB of its answer: the body fails to read as a network failure', async () => {
    const body = randomBytes(1 * MiB);
    await put(s3, 'read-cut', body);
    proxy.forget();
    proxy.fault({ match: { method: 'GET', key: 'read-cut' }, fault: { kind: 'cut-response', afterBytes: 64 * KiB } });
    expectNetworkFailure(await failure(get(once, 'read-cut')));
    expect(proxy.requests({ key: 'read-cut' })).toMatchObject([{ status: 200, outcome: 'cut', bytesOut: 64 * KiB }]);
    expect((await get(once, 'read-cut')).equals(body)).toBe(true);
  });

  it('an answer lost after the remote stored the object: the client sees a network failure, the object is there', async () => {
    const body = randomBytes(100 * KiB);
    proxy.fault({ match: { method: 'PUT', key: 'lost-answer' }, fault: { kind: 'drop-answer' } });
    expectNetworkFailure(await failure(put(once, 'lost-answer', body)));
    expect((await stored('lost-answer'))?.equals(body)).toBe(true);
  });

  it('a request never answered: the client gives up at its own timeout', async () => {
    // The SDK only warns at requestTimeout unless told to throw.
    const impatient = client({ maxAttempts: 1, requestHandler: { requestTimeout: 500, throwOnRequestTimeout: true } });
    proxy.forget();
    proxy.fault({ match: { method: 'HEAD', key: 'never' }, fault: { kind: 'hang' } });
    const e = await failure(impatient.send(new HeadObjectCommand({ Bucket: bucket, Key: 'never' })));
    expect(String(e)).toMatch(/timeout|timed out/i);
    await expect.poll(() => proxy.requests({ key: 'never' }).map((r) => r.outcome)).toEqual(['hung']);
  });
});
