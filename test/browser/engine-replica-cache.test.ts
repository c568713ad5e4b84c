// A replica in the read-through `cache` mode in this engine: the built worker lists what a bucket
// of `swbucket serve` (S3's dialect, a separate process) holds without fetching its bytes, fetches
// an object on the first read and keeps it. The remote is stopped to stand for offline: what was
// read is still there, what was not is a 503 that says why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { useServicePage } from './support/fixture.ts';
import type { SwGlobal } from './support/engine-data-helpers.ts';
import { serve, type Served } from '../support/serve.ts';
import { tempDir } from '../support/stores.ts';
import { startFaultProxy } from '../support/fault-proxy.ts';

const service = useServicePage();
const ROOT = { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' };

let remote: Served;
let remoteData: string;
let sdk: S3Client;

beforeAll(async () => {
  remoteData = tempDir('swbucket-cache-remote-');
  remote = await serve(['--dialect', 's3', '--data', remoteData]);
  sdk = new S3Client({ endpoint: remote.url, region: 'us-east-1', forcePathStyle: true, credentials: ROOT });
}, 60_000);
afterAll(async () => {
  sdk?.destroy();
  await remote?.stop();
});

/** What the page reads of `key`: status and text, or the error's code and message. */
function read(key: string, bucket = 'cached') {
  return service.page.evaluate(async (x: { key: string; bucket: string }) => {
    const { client } = (window as unknown as { swbucket: SwGlobal }).swbucket;
    try {
      const { response } = await client.getObject(x.bucket, x.key);
      return { status: response.status, text: await response.text(), type: response.headers.get('content-type') };
    } catch (e) {
      const err = e as { status?: number; code?: string; message?: string };
      return { status: err.status, code: err.code, message: err.message };
    }
  }, { key, bucket });
}

/** Binds the page's `bucket` to the remote `Bucket` in the cache mode, with `more` of the config, and runs its first round. */
function bindCache(bucket: string, Bucket: string, more: Record<string, unknown> = {}) {
  return service.page.evaluate(async (x: { url: string; bucket: string; Bucket: string; more: Record<string, unknown> }) => {
    const sw = (window as unknown as { swbucket: SwGlobal }).swbucket;
    await sw.replicas.add({ bucket: x.bucket, mode: 'cache', remote: { endpoint: x.url, region: 'us-east-1', bucket: x.Bucket, forcePathStyle: true, credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } }, ...x.more });
    await sw.replicas.syncNow({ bucket: x.bucket });
  }, { url: remote.url, bucket, Bucket, more });
}

describe(`a replica in the cache mode in ${service.name}`, () => {
  it('lists the remote without its bytes, fetches an object on its first read and keeps it; offline, one not read is a 503 saying why', { timeout: 90_000 }, async () => {
    const Bucket = `cache-${service.name.replace(/[^a-z]/g, '')}-${process.pid}`;
    await sdk.send(new CreateBucketCommand({ Bucket }));
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'read.txt', Body: 'read me', ContentType: 'text/plain' }));
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'unread.txt', Body: 'never read' }));
    const listed = await service.page.evaluate(async (x: { url: string; bucket: string }) => {
      const sw = (window as unknown as { swbucket: SwGlobal }).swbucket;
      await sw.replicas.add({ bucket: 'cached', mode: 'cache', remote: { endpoint: x.url, region: 'us-east-1', bucket: x.bucket, forcePathStyle: true, credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } } });
      await sw.replicas.syncNow();
      return (await sw.client.listObjects('cached')).objects.map((o) => [o.key, o.size]);
    }, { url: remote.url, bucket: Bucket });
    expect(listed).toEqual([['read.txt', 7], ['unread.txt', 10]]);
    expect(await read('read.txt')).toEqual({ status: 200, text: 'read me', type: 'text/plain' });
    await remote.stop();
    try {
      expect(await read('read.txt')).toMatchObject({ status: 200, text: 'read me' });
      const offline = await read('unread.txt');
      expect(offline).toMatchObject({ status: 503, code: 'ServiceUnavailable' });
      expect(offline.message).toMatch(/unread\.txt is listed from the remote and not kept here yet, and fetching it failed/);
    } finally {
      remote = await serve(['--dialect', 's3', '--data', remoteData], remote.port);
    }
    expect(await read('unread.txt')).toMatchObject({ status: 200, text: 'never read' });
  });

  it('answers a range of a large object not fetched yet from the remote at once, fetching the whole meanwhile; then reads it here, offline too', { timeout: 90_000 }, async () => {
    const Bucket = `ranged-${service.name.replace(/[^a-z]/g, '')}-${process.pid}`;
    await sdk.send(new CreateBucketCommand({ Bucket }));
    const body = new Uint8Array(2 * 1024 * 1024 + 7).map((_, i) => (i * 31) % 251);
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'film.bin', Body: body, ContentType: 'video/mp4' }));
    const proxy = await startFaultProxy({ target: remote.url });
    try {
      await service.page.evaluate(async (x: { url: string; Bucket: string }) => {
        const sw = (window as unknown as { swbucket: SwGlobal }).swbucket;
        await sw.replicas.add({ bucket: 'ranged', mode: 'cache', remote: { endpoint: x.url, region: 'us-east-1', bucket: x.Bucket, forcePathStyle: true, credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } } });
        await sw.replicas.syncNow({ bucket: 'ranged' });
      }, { url: proxy.url, Bucket });
      // The whole object's GET held at the proxy, never answered: the range's answer must not wait for it.
      const whole = (r: { method: string; key: string; headers: Record<string, string> }) => r.method === 'GET' && r.key === 'film.bin' && r.headers.range === undefined;
      const held = proxy.fault({ match: whole, fault: { kind: 'hang' } });
      const readRange = (start: number, end: number) => service.page.evaluate(async (x: { start: number; end: number }) => {
        const { response } = await (window as unknown as { swbucket: SwGlobal }).swbucket.client.getObject('ranged', 'film.bin', { range: { start: x.start, end: x.end } });
        return { status: response.status, type: response.headers.get('content-type'), bytes: [...new Uint8Array(await response.arrayBuffer())] };
      }, { start, end });
      const expected = (start: number, end: number) => [...body.subarray(start, end + 1)];
      expect(await readRange(1_500_000, 1_500_099)).toEqual({ status: 206, type: 'video/mp4', bytes: expected(1_500_000, 1_500_099) });
      expect(proxy.requests({ method: 'GET', key: 'film.bin' }).filter(whole).filter((r) => r.outcome !== 'pending'), 'the whole had not come yet').toEqual([]);
      await expect.poll(() => held.hits(), { timeout: 20_000, message: 'the whole asked for' }).toBe(1);
      // The held GET cut (that fetch fails); a whole read fetches it, and it is read here with the remote gone.
      await proxy.down();
      await proxy.up();
      // (A read that meets the cut fetch before it failed tries again on its own.)
      expect(await service.page.evaluate(async () => (await (await (window as unknown as { swbucket: SwGlobal }).swbucket.client.getObject('ranged', 'film.bin')).response.arrayBuffer()).byteLength)).toBe(body.length);
      await proxy.down();
      expect(await readRange(10, 19)).toEqual({ status: 206, type: 'video/mp4', bytes: expected(10, 19) });
    } finally {
      await proxy.close();
    }
  });

  it('a round gives way to the page\'s requests: while one is being answered, another replica\'s round waits (a second a step at most), then completes', { timeout: 90_000 }, async () => {
    const tag = `${service.name.replace(/[^a-z]/g, '')}-${process.pid}`;
    const [Slow, Other] = [`slow-${tag}`, `other-${tag}`];
    for (const Bucket of [Slow, Other]) await sdk.send(new CreateBucketCommand({ Bucket }));
    await sdk.send(new PutObjectCommand({ Bucket: Slow, Key: 'held.txt', Body: 'held' }));
    // A proxy each: the slow one's can be cut without touching the other's round.
    const [slowProxy, otherProxy] = await Promise.all([startFaultProxy({ target: remote.url }), startFaultProxy({ target: remote.url })]);
    try {
      await service.page.evaluate(async (x: { slowUrl: string; otherUrl: string; Slow: string; Other: string }) => {
        const sw = (window as unknown as { swbucket: SwGlobal }).swbucket;
        const remote = (endpoint: string, bucket: string) => ({ endpoint, region: 'us-east-1', bucket, forcePathStyle: true, credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } });
        await sw.replicas.add({ bucket: 'slow', mode: 'cache', remote: remote(x.slowUrl, x.Slow) });
        await sw.replicas.add({ bucket: 'other', remote: remote(x.otherUrl, x.Other) });
        for (const bucket of ['slow', 'other']) await sw.replicas.syncNow({ bucket });
        // Paused, its write sets off no round before the one watched.
        await sw.replicas.pause('other');
        await sw.client.putObject('other', 'note.txt', new Blob(['pushed once the read is answered']));
      }, { slowUrl: slowProxy.url, otherUrl: otherProxy.url, Slow, Other });
      // A read whose fetch the remote does not answer: the page's request stays in the worker.
      const held = slowProxy.fault({ match: { method: 'GET', key: 'held.txt' }, fault: { kind: 'hang' } });
      void service.page.evaluate(() => {
        (window as unknown as { heldRead: Promise<unknown> }).heldRead = (window as unknown as { swbucket: SwGlobal }).swbucket.client.getObject('slow', 'held.txt').catch((e: unknown) => e);
      });
      await expect.poll(() => held.hits(), { timeout: 20_000, message: 'the read\'s fetch arrived' }).toBe(1);
      otherProxy.forget();
      const t0 = Date.now();
      const synced = service.page.evaluate(async () => {
        const { replicas } = (window as unknown as { swbucket: SwGlobal }).swbucket;
        await replicas.resume('other');
        return (await replicas.syncNow({ bucket: 'other' }))[0]!.pushed;
      });
      await expect.poll(() => otherProxy.requests().length, { timeout: 20_000, message: 'the round asked the remote' }).toBeGreaterThan(0);
      // It waited its second (less a timer's granularity) before listing; one that did not wait lists within a few ms.
      expect(otherProxy.requests()[0]!.startedAt - t0, 'when the round first asked the remote, ms after resume()').toBeGreaterThanOrEqual(990);
      await slowProxy.down(); // the read answered (a failure): the round goes on at once
      expect(await synced).toEqual(['note.txt']);
    } finally {
      await Promise.all([slowProxy.close(), otherProxy.close()]);
    }
  });

  it('keeps at most cacheBytes fetched: the object read longest ago is let go, listed still, fetched again when read', { timeout: 90_000 }, async () => {
    const SIZE = 20_000; // over the size kept in a record: each body is a Blob, or pieces where the engine keeps no Blobs
    const Bucket = `budget-${service.name.replace(/[^a-z]/g, '')}-${process.pid}`;
    await sdk.send(new CreateBucketCommand({ Bucket }));
    for (const key of ['one', 'two', 'three']) await sdk.send(new PutObjectCommand({ Bucket, Key: `${key}.txt`, Body: key.padEnd(SIZE, '.') }));
    await bindCache('budget', Bucket, { cacheBytes: 2.5 * SIZE });
    for (const key of ['one', 'two', 'one', 'three']) expect(await read(`${key}.txt`, 'budget'), key).toMatchObject({ status: 200, text: key.padEnd(SIZE, '.') });
    // A round waits for the cache's trim under way (the one three's fetch began), and trims too.
    await service.page.evaluate(async () => void (await (window as unknown as { swbucket: SwGlobal }).swbucket.replicas.syncNow({ bucket: 'budget' })));
    expect(await service.page.evaluate(() => (window as unknown as { swbucket: SwGlobal }).swbucket.replicas.remoteOnly('budget')), 'what is on the remote only').toEqual(['two.txt']);
    await remote.stop();
    try {
      expect(await read('two.txt', 'budget'), 'read longest ago: let go').toMatchObject({ status: 503, code: 'ServiceUnavailable' });
      // Its headers were kept: a HEAD answers without the remote.
      expect(await service.page.evaluate(async () => (await (window as unknown as { swbucket: SwGlobal }).swbucket.client.headObject('budget', 'two.txt')).size)).toBe(SIZE);
      for (const key of ['one', 'three']) expect(await read(`${key}.txt`, 'budget'), key).toMatchObject({ status: 200, text: key.padEnd(SIZE, '.') });
    } finally {
      remote = await serve(['--dialect', 's3', '--data', remoteData], remote.port);
    }
    expect(await read('two.txt', 'budget')).toMatchObject({ status: 200, text: 'two'.padEnd(SIZE, '.') });
  });
});
