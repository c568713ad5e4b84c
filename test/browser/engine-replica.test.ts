// A replica in this engine (issue 33): the built worker keeps a bucket in sync with a bucket of
// `swbucket serve` in S3's dialect, a separate process, through service.replicas in the page.
// Writes made through swbucket/client in the page; the remote read and written with the AWS SDK in
// Node, as another device or app would. The remote is stopped and started again to stand for
// offline; the page is reloaded with changes pending; a second profile of the engine is a second
// device of the same user. Through the fault proxy: a tab closed while the push it asked for is under
// way (a multipart upload, a part held), and the whole browser quit with changes pending and started
// again on the same profile (not in 'webkit', whose storage lives in memory).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, GetObjectCommand, ListMultipartUploadsCommand, ListObjectVersionsCommand, ListObjectsV2Command, PutBucketCorsCommand, PutBucketVersioningCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { launchEngine, type Engine, type EnginePage } from './support/engines.ts';
import { openServicePage } from './support/page.ts';
import { useServicePage } from './support/fixture.ts';
import { md5hex, MiB, pattern, run, waitStarted, type SwGlobal } from './support/engine-data-helpers.ts';
import { serve, type Served } from '../support/serve.ts';
import { startFaultProxy, type Recorded } from '../support/fault-proxy.ts';
import { tempDir } from '../support/stores.ts';

const service = useServicePage();
const ROOT = { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' };

let remote: Served;
let remoteData: string;
let sdk: S3Client;
let n = 0;

beforeAll(async () => {
  remoteData = tempDir('swbucket-replica-remote-');
  remote = await serve(['--dialect', 's3', '--data', remoteData]);
  sdk = new S3Client({ endpoint: remote.url, region: 'us-east-1', forcePathStyle: true, credentials: ROOT });
}, 60_000);
afterAll(async () => {
  sdk?.destroy();
  await remote?.stop();
});

async function remoteBucket(): Promise<string> {
  const Bucket = `replica-${service.name.replace(/[^a-z]/g, '')}-${process.pid}-${++n}`;
  await sdk.send(new CreateBucketCommand({ Bucket }));
  return Bucket;
}
const remoteRead = async (Bucket: string, Key: string) => {
  try {
    return await (await sdk.send(new GetObjectCommand({ Bucket, Key }))).Body!.transformToString();
  } catch {
    return null;
  }
};
const remoteKeys = async (Bucket: string) => ((await sdk.send(new ListObjectsV2Command({ Bucket }))).Contents ?? []).map((c) => c.Key!).sort();

interface InPage {
  bucket: string;
  remoteUrl: string;
  remoteBucket: string;
}

/** Binds the page's local bucket `bucket` to the remote bucket (service.replicas.add). */
function bind(page: EnginePage, a: InPage): Promise<void> {
  return page.evaluate(async (x: InPage) => {
    const sw = (window as unknown as { swbucket: SwGlobal }).swbucket;
    await sw.replicas.add({
      bucket: x.bucket, remote: { endpoint: x.remoteUrl, region: 'us-east-1', bucket: x.remoteBucket, forcePathStyle: true, credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } },
    });
  }, a);
}

/** Runs syncNow in the page: the keys it pushed and pulled, or the error it rejected with. */
function syncNow(page: EnginePage): Promise<{ pushed: string[]; pulled: string[]; conflicts: { key: string; keptAt?: string }[] } | { error: string }> {
  return page.evaluate(async () => {
    const sw = (window as unknown as { swbucket: SwGlobal }).swbucket;
    try {
      const rounds = await sw.replicas.syncNow();
      return {
        pushed: rounds.flatMap((r) => r.pushed).sort(), pulled: rounds.flatMap((r) => r.pulled).sort(),
        conflicts: rounds.flatMap((r) => r.conflicts).map((c) => ({ key: c.key, ...(c.keptAt ? { keptAt: c.keptAt } : {}) })),
      };
    } catch (e) {
      return { error: `${(e as Error).name}: ${(e as Error).message}` };
    }
  });
}

/** A round of `bucket`'s replica alone: its error's message, or null. */
function syncOne(page: EnginePage, bucket: string): Promise<string | null> {
  return page.evaluate(async (b: string) => {
    try {
      await (window as unknown as { swbucket: SwGlobal }).swbucket.replicas.syncNow({ bucket: b });
      return null;
    } catch (e) {
      return String(e);
    }
  }, bucket);
}

function put(page: EnginePage, bucket: string, key: string, body: string): Promise<void> {
  return page.evaluate(async (a: { bucket: string; key: string; body: string }) => {
    await (window as unknown as { swbucket: SwGlobal }).swbucket.client.putObject(a.bucket, a.key, a.body);
  }, { bucket, key, body });
}

function read(page: EnginePage, bucket: string, key: string): Promise<string | null> {
  return page.evaluate(async (a: { bucket: string; key: string }) => {
    const { client } = (window as unknown as { swbucket: SwGlobal }).swbucket;
    try {
      return await (await client.getObject(a.bucket, a.key)).response.text();
    } catch {
      return null;
    }
  }, { bucket, key });
}

/** pause or resume `bucket`'s replica in the page. */
function control(page: EnginePage, op: 'pause' | 'resume', bucket: string): Promise<void> {
  return page.evaluate(async (a: { op: 'pause' | 'resume'; bucket: string }) => {
    await (window as unknown as { swbucket: SwGlobal }).swbucket.replicas[a.op](a.bucket);
  }, { op, bucket });
}

/** The conflicts the page's replica of `bucket` reports: key and where the other version is kept. */
function conflictsIn(page: EnginePage, bucket: string): Promise<{ key: string; keptAt?: string }[]> {
  return page.evaluate(async (b: string) => {
    const found = await (window as unknown as { swbucket: SwGlobal }).swbucket.replicas.conflicts(b);
    return found.map((c) => ({ key: c.key, ...(c.keptAt ? { keptAt: c.keptAt } : {}) }));
  }, bucket);
}

function status(page: EnginePage, bucket: string) {
  return page.evaluate(async (b: string) => {
    const all = await (window as unknown as { swbucket: SwGlobal }).swbucket.replicas.status();
    return all.find((s) => s.bucket === b) ?? null;
  }, bucket);
}

/** Binds as bind() does, with more of ReplicaConfig (multipartBytes and the like). */
function bindWith(page: EnginePage, a: InPage, more: Record<string, unknown>): Promise<void> {
  return run(page, async (t, x) => {
    await t.sw.replicas.add({
      bucket: x.bucket, remote: { endpoint: x.remoteUrl, region: 'us-east-1', bucket: x.remoteBucket, forcePathStyle: true, credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } },
      ...x.more,
    });
  }, { ...a, more });
}

/** syncNow of one replica (the others this page bound may have remotes gone by now): what it pushed, or the error it rejected with. */
function syncBucket(page: EnginePage, bucket: string): Promise<{ pushed: string[] } | { error: string }> {
  return run(page, async (t, b) => {
    try {
      return { pushed: (await t.sw.replicas.syncNow({ bucket: b })).flatMap((r) => r.pushed).sort() };
    } catch (e) {
      return { error: `${(e as Error).name}: ${(e as Error).message}` };
    }
  }, bucket);
}

/** Unbinds the page's replica of `bucket` (its remote is about to go), if the page is still there. */
const unbind = (page: EnginePage, bucket: string) => run(page, async (t, b) => t.sw.replicas.remove(b), bucket).catch(() => {});

/** Waits until the replica's first round completed (it probes the remote's conditional writes). */
async function firstRound(page: EnginePage, bucket: string): Promise<void> {
  await expect.poll(() => status(page, bucket), { timeout: 20_000, message: `the first round of ${bucket}` })
    .toMatchObject({ state: 'idle', lastSync: expect.any(Number) });
}

const partNumber = (r: Recorded) => Number(new URLSearchParams(r.query).get('partNumber'));
/** The part uploads the proxy forwarded to the remote, as `partNumber:status` (status undefined while in flight). */
const partsSent = (proxy: { requests(m: object): Recorded[] }) =>
  proxy.requests({ method: 'PUT', query: 'partNumber' }).filter((r) => r.reachedRemote).map((r) => `${partNumber(r)}:${r.status}`);

/** The remote holds exactly `bytes` at `Key`, and no multipart upload is left in `Bucket`. */
async function expectWholeOnRemote(Bucket: string, Key: string, bytes: Uint8Array): Promise<void> {
  const got = await sdk.send(new GetObjectCommand({ Bucket, Key }));
  const body = await got.Body!.transformToByteArray();
  expect({ size: body.length, md5: md5hex(body) }, `${Key} on the remote`).toEqual({ size: bytes.length, md5: md5hex(bytes) });
  expect((await sdk.send(new ListMultipartUploadsCommand({ Bucket }))).Uploads ?? [], 'multipart uploads left on the remote').toEqual([]);
}

describe(`a replica in ${service.name}, through the worker`, () => {
  it('pushes what the page wrote offline, pulls what another wrote remotely, and keeps both versions of a key changed on both sides', async () => {
    const Bucket = await remoteBucket();
    const bucket = `photos-${n}`;
    await bind(service.page, { bucket, remoteUrl: remote.url, remoteBucket: Bucket });
    // The worker also syncs by itself (soon after a write): each step checks what the sides hold,
    // never which round moved it.
    await put(service.page, bucket, 'a.txt', 'from the page');
    expect(await syncNow(service.page)).not.toHaveProperty('error');
    expect(await remoteRead(Bucket, 'a.txt')).toBe('from the page');
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'b.txt', Body: 'from elsewhere' }));
    expect(await syncNow(service.page)).not.toHaveProperty('error');
    expect(await read(service.page, bucket, 'b.txt')).toBe('from elsewhere');
    // Both sides change a.txt (paused meanwhile, so that no round runs between the two edits).
    await control(service.page, 'pause', bucket);
    await put(service.page, bucket, 'a.txt', 'page edit');
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'a.txt', Body: 'remote edit' }));
    await control(service.page, 'resume', bucket);
    expect(await syncNow(service.page)).not.toHaveProperty('error');
    const found = await conflictsIn(service.page, bucket);
    expect(found).toEqual([{ key: 'a.txt', keptAt: expect.stringMatching(/^a \(conflict .+\)\.txt$/) }]);
    const keptAt = found[0]!.keptAt!;
    expect(await read(service.page, bucket, 'a.txt')).toBe('remote edit');
    expect(await read(service.page, bucket, keptAt)).toBe('page edit');
    await expect.poll(() => remoteRead(Bucket, keptAt), { timeout: 20_000 }).toBe('page edit');
    // (A round the worker's own timer starts may be running: the state settles to idle.)
    await expect.poll(() => status(service.page, bucket), { timeout: 20_000 }).toMatchObject({ state: 'idle', pending: 0, conflicts: 1 });
  });

  it('a versioned remote: a bucket that keeps versions pulls each version another device made, in order, and not its own back', async () => {
    const Bucket = await remoteBucket();
    await sdk.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    const write = (body: string) => sdk.send(new PutObjectCommand({ Bucket, Key: 'notes.txt', Body: body }));
    for (const v of ['v1', 'v2', 'v3']) await write(v);
    const bucket = `notes-${n}`;
    await run(service.page, async (t, b) => {
      await t.sw.client.createBucket(b);
      await t.sw.client.putBucketVersioning(b, 'Enabled');
    }, bucket);
    await bind(service.page, { bucket, remoteUrl: remote.url, remoteBucket: Bucket });
    /** The page's versions of notes.txt, oldest first, read through swbucket/client. */
    const history = () => run(service.page, async (t, b) => {
      const { versions } = await t.sw.client.listVersions(b, { prefix: 'notes.txt' });
      const bodies: string[] = [];
      for (const v of versions.reverse()) bodies.push(await (await t.sw.client.getObject(b, 'notes.txt', { versionId: Number(v.versionId) })).response.text());
      return bodies;
    }, bucket);
    const remoteHistory = async () => {
      const ids = ((await sdk.send(new ListObjectVersionsCommand({ Bucket, Prefix: 'notes.txt' }))).Versions ?? []).map((v) => v.VersionId!).reverse();
      const bodies: string[] = [];
      for (const VersionId of ids) bodies.push(await (await sdk.send(new GetObjectCommand({ Bucket, Key: 'notes.txt', VersionId }))).Body!.transformToString());
      return bodies;
    };
    expect(await syncNow(service.page)).not.toHaveProperty('error');
    expect(await history()).toEqual(['v1', 'v2', 'v3']);
    await write('v4');
    await write('v5');
    expect(await syncNow(service.page)).not.toHaveProperty('error');
    expect(await history()).toEqual(['v1', 'v2', 'v3', 'v4', 'v5']);
    await put(service.page, bucket, 'notes.txt', 'v6, in the page');
    expect(await syncNow(service.page)).not.toHaveProperty('error');
    expect(await syncNow(service.page)).not.toHaveProperty('error');
    expect(await remoteHistory()).toEqual(['v1', 'v2', 'v3', 'v4', 'v5', 'v6, in the page']);
    expect(await history()).toEqual(['v1', 'v2', 'v3', 'v4', 'v5', 'v6, in the page']);
  });

  it('with the remote down: writes are kept and pending, syncNow says it is offline; after a reload and the remote back, they land once', { timeout: 90_000 }, async () => {
    const Bucket = await remoteBucket();
    const bucket = `notes-${n}`;
    await bind(service.page, { bucket, remoteUrl: remote.url, remoteBucket: Bucket });
    await syncNow(service.page);
    await remote.stop();
    try {
      await put(service.page, bucket, 'offline-1.txt', 'one');
      await put(service.page, bucket, 'offline-2.txt', 'two');
      const failed = await syncNow(service.page);
      expect(failed).toMatchObject({ error: expect.stringMatching(/ReplicaError: .*no answer/) });
      expect(await status(service.page, bucket)).toMatchObject({ pending: 2, state: 'offline' });
      await service.page.reload();
      await waitStarted(service.page);
      expect(await status(service.page, bucket)).toMatchObject({ pending: 2 });
    } finally {
      remote = await serve(['--dialect', 's3', '--data', remoteData], remote.port);
    }
    expect(await syncNow(service.page)).not.toHaveProperty('error');
    expect(await remoteKeys(Bucket)).toEqual(['offline-1.txt', 'offline-2.txt']);
    await expect.poll(() => status(service.page, bucket), { timeout: 20_000 }).toMatchObject({ pending: 0, state: 'idle' });
  });

  it('a policy function in the page decides each conflict, a slow one too; with no page holding it, the conflict waits, both sides as they were, until one binds it again', { timeout: 60_000 }, async () => {
    const Bucket = await remoteBucket();
    const bucket = `decided-${n}`;
    const bindDeciding = () => run(service.page, async (t, x) => {
      const w = window as unknown as { asked: string[] };
      w.asked = [];
      await t.sw.replicas.add({
        bucket: x.bucket, remote: { endpoint: x.remoteUrl, region: 'us-east-1', bucket: x.remoteBucket, forcePathStyle: true, credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } },
        policy: (c) => {
          w.asked.push(`${c.key} ${c.local}/${c.remote} ${c.localObject?.size}/${c.remoteEntry?.size}`);
          return c.key.endsWith('.log') ? 'local' : 'remote';
        },
      });
    }, { bucket, remoteUrl: remote.url, remoteBucket: Bucket });
    const asked = () => service.page.evaluate(() => (window as unknown as { asked?: string[] }).asked?.slice().sort() ?? null);
    await bindDeciding();
    await put(service.page, bucket, 'a.log', 'v1');
    await put(service.page, bucket, 'b.txt', 'v1');
    expect(await syncOne(service.page, bucket)).toBeNull();
    await expect.poll(() => remoteKeys(Bucket), { timeout: 20_000 }).toEqual(['a.log', 'b.txt']);
    // Changed on both sides: each key asked of the page's function, and done as it said.
    await control(service.page, 'pause', bucket);
    await put(service.page, bucket, 'a.log', 'local line');
    await put(service.page, bucket, 'b.txt', 'local text');
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'a.log', Body: 'remote line!' }));
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'b.txt', Body: 'remote text!' }));
    await control(service.page, 'resume', bucket);
    expect(await syncOne(service.page, bucket)).toBeNull();
    expect(await asked()).toEqual(['a.log changed/changed 10/12', 'b.txt changed/changed 10/12']);
    expect([await remoteRead(Bucket, 'a.log'), await read(service.page, bucket, 'a.log')]).toEqual(['local line', 'local line']);
    expect([await remoteRead(Bucket, 'b.txt'), await read(service.page, bucket, 'b.txt')]).toEqual(['remote text!', 'remote text!']);
    // A reload: no page holds the function. The conflict is left as it is, reported as undecided.
    await control(service.page, 'pause', bucket);
    await put(service.page, bucket, 'b.txt', 'local again');
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'b.txt', Body: 'remote again' }));
    await service.page.reload();
    await waitStarted(service.page);
    await control(service.page, 'resume', bucket);
    const undecided = await run(service.page, async (t, b) => (await t.sw.replicas.syncNow({ bucket: b })).flatMap((r) => r.undecided ?? []), bucket);
    expect(undecided).toEqual(['b.txt']);
    expect([await remoteRead(Bucket, 'b.txt'), await read(service.page, bucket, 'b.txt')]).toEqual(['remote again', 'local again']);
    // Pending, and no conflict more than the two decided before.
    expect(await status(service.page, bucket)).toMatchObject({ pending: 1, conflicts: 2 });
    // Bound again with its function, the next round decides it.
    await bindDeciding();
    await expect.poll(async () => (await syncOne(service.page, bucket), await read(service.page, bucket, 'b.txt')), { timeout: 30_000 }).toBe('remote again');
    expect(await asked()).toEqual(['b.txt changed/changed 11/12']);
    // A function that takes its time (past the 5 s in which a page must take the question up) still decides.
    await control(service.page, 'pause', bucket);
    await run(service.page, async (t, x) => {
      await t.sw.replicas.add({
        bucket: x.bucket, remote: { endpoint: x.remoteUrl, region: 'us-east-1', bucket: x.remoteBucket, forcePathStyle: true, credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } },
        policy: async () => (await new Promise((r) => setTimeout(r, 5_500)), 'local' as const),
      });
    }, { bucket, remoteUrl: remote.url, remoteBucket: Bucket });
    await put(service.page, bucket, 'b.txt', 'local, slowly');
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'b.txt', Body: 'remote, meanwhile' }));
    await control(service.page, 'resume', bucket);
    await expect.poll(async () => (await syncOne(service.page, bucket), await remoteRead(Bucket, 'b.txt')), { timeout: 30_000 }).toBe('local, slowly');
    await unbind(service.page, bucket);
  });

  it('check() says what the remote bucket\'s CORS lacks for this page, and a remote that hides the ETag stops the sync saying so', async () => {
    const Bucket = await remoteBucket();
    const bucket = `guarded-${n}`;
    // Rules for this page's origin, without the headers a sync needs (swbucket serve enforces them, as S3 does).
    await sdk.send(new PutBucketCorsCommand({ Bucket, CORSConfiguration: { CORSRules: [{ AllowedOrigins: [service.baseURL], AllowedMethods: ['GET', 'PUT', 'POST', 'DELETE', 'HEAD'], AllowedHeaders: ['*'] }] } }));
    await bind(service.page, { bucket, remoteUrl: remote.url, remoteBucket: Bucket });
    const found = await service.page.evaluate(async (b: string) => (window as unknown as { swbucket: SwGlobal }).swbucket.replicas.check(b), bucket);
    expect(found.ok).toBe(false);
    expect(found.problems.join('\n')).toMatch(/shows no ETag|does not expose ETag/);
    await put(service.page, bucket, 'x.txt', 'x');
    expect(await syncNow(service.page)).toMatchObject({ error: expect.stringMatching(/ExposeHeader ETag/) });
    await expect.poll(() => status(service.page, bucket), { timeout: 20_000 }).toMatchObject({ state: 'stopped', error: expect.stringMatching(/ExposeHeader ETag/) });
    // Once the remote exposes what a sync reads, it goes.
    await sdk.send(new PutBucketCorsCommand({ Bucket, CORSConfiguration: { CORSRules: [{ AllowedOrigins: [service.baseURL], AllowedMethods: ['GET', 'PUT', 'POST', 'DELETE', 'HEAD'], AllowedHeaders: ['*'], ExposeHeaders: ['ETag', 'x-amz-version-id'] }] } }));
    expect(await service.page.evaluate(async (b: string) => (window as unknown as { swbucket: SwGlobal }).swbucket.replicas.check(b), bucket)).toMatchObject({ ok: true });
    expect(await syncNow(service.page)).not.toHaveProperty('error');
    expect(await remoteRead(Bucket, 'x.txt')).toBe('x');
  });

  it('credentials from getCredentials(): every request to the remote carries their session token, and ones about to expire are asked for again', async () => {
    const proxy = await startFaultProxy({ target: remote.url });
    try {
      const Bucket = await remoteBucket();
      const bucket = `temporary-${n}`;
      await service.page.evaluate(async (x: InPage) => {
        const w = window as unknown as { swbucket: SwGlobal; asked: number };
        w.asked = 0;
        await w.swbucket.replicas.add({
          bucket: x.bucket, remote: { endpoint: x.remoteUrl, region: 'us-east-1', bucket: x.remoteBucket, forcePathStyle: true },
          // Each lasts 30 s: within the minute before expiry, so each round asks for new ones.
          getCredentials: async () => ({ accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret', sessionToken: `token-${++w.asked}`, expiration: Date.now() + 30_000 }),
        });
      }, { bucket, remoteUrl: proxy.url, remoteBucket: Bucket });
      await put(service.page, bucket, 'a.txt', 'a');
      expect(await syncNow(service.page)).not.toHaveProperty('error');
      await put(service.page, bucket, 'b.txt', 'b');
      expect(await syncNow(service.page)).not.toHaveProperty('error');
      expect(await remoteKeys(Bucket)).toEqual(['a.txt', 'b.txt']);
      const sent = proxy.requests().filter((r) => r.method !== 'OPTIONS');
      expect(sent.length).toBeGreaterThan(3);
      // In a header, or (a GET or HEAD, signed in its URL) in the query, signed there.
      const tokenOf = (r: Recorded) => r.headers['x-amz-security-token'] ?? new URLSearchParams(r.query).get('X-Amz-Security-Token');
      for (const r of sent) expect(tokenOf(r), `${r.method} ${r.path}`).toMatch(/^token-\d+$/);
      expect(sent.some((r) => new URLSearchParams(r.query).has('X-Amz-Security-Token')), 'a token in a presigned GET').toBe(true);
      expect(new Set(sent.map(tokenOf)).size, 'tokens used').toBeGreaterThan(1);
    } finally {
      await proxy.close();
    }
  });

  it('a pull asks for no CORS preflight: its listings, GETs and HEADs are signed in their URL, the writes in headers', async () => {
    const proxy = await startFaultProxy({ target: remote.url });
    const bucket = `preflights-${n}`;
    try {
      const Bucket = await remoteBucket();
      for (const key of ['a.txt', 'b c.txt', 'd/e.txt']) await sdk.send(new PutObjectCommand({ Bucket, Key: key, Body: key }));
      await bind(service.page, { bucket, remoteUrl: proxy.url, remoteBucket: Bucket });
      await put(service.page, bucket, 'local.txt', 'local');
      await expect.poll(async () => (await syncOne(service.page, bucket), await read(service.page, bucket, 'b c.txt')), { timeout: 30_000 }).toBe('b c.txt');
      await expect.poll(() => remoteRead(Bucket, 'local.txt'), { timeout: 30_000 }).toBe('local');
      const all = proxy.requests();
      const gets = all.filter((r) => r.method === 'GET' && r.key !== '');
      expect(gets.map((r) => r.key).sort()).toEqual(expect.arrayContaining(['a.txt', 'b c.txt', 'd/e.txt']));
      for (const r of all.filter((x) => x.method === 'GET' || x.method === 'HEAD')) {
        expect(new URLSearchParams(r.query).get('X-Amz-Signature'), `${r.method} ${r.path}`).toMatch(/^[0-9a-f]{64}$/);
        expect(r.headers.authorization, `${r.method} ${r.path}`).toBeUndefined();
      }
      const preflights = all.filter((r) => r.method === 'OPTIONS');
      expect(preflights.map((r) => r.headers['access-control-request-method']).filter((m) => m === 'GET' || m === 'HEAD')).toEqual([]);
      // The write still went, header-signed, after its own preflight (a PUT always has one).
      expect(preflights.some((r) => r.headers['access-control-request-method'] === 'PUT' && r.key === 'local.txt')).toBe(true);
    } finally {
      await unbind(service.page, bucket);
      await proxy.close();
    }
  });

  it('bytes changed on the way are found: a PUT with a flipped bit is refused by the remote (Content-MD5) and sent again, a GET\'s is fetched again; both arrive whole', async () => {
    const proxy = await startFaultProxy({ target: remote.url });
    const bucket = `digest-${n}`;
    try {
      const Bucket = await remoteBucket();
      const inward = 'from the remote; '.repeat(200);
      const out = 'from this page; '.repeat(200);
      await sdk.send(new PutObjectCommand({ Bucket, Key: 'in.txt', Body: inward }));
      proxy.fault({ match: { method: 'GET', key: 'in.txt' }, fault: { kind: 'flip-bit', in: 'response', at: 1000 } });
      proxy.fault({ match: { method: 'PUT', key: 'out.txt' }, fault: { kind: 'flip-bit', in: 'request', at: 2000 } });
      await bind(service.page, { bucket, remoteUrl: proxy.url, remoteBucket: Bucket });
      await firstRound(service.page, bucket);
      await put(service.page, bucket, 'out.txt', out);
      await expect.poll(async () => (await syncOne(service.page, bucket), await remoteRead(Bucket, 'out.txt')), { timeout: 30_000 }).toBe(out);
      expect(await read(service.page, bucket, 'in.txt')).toBe(inward);
      expect(proxy.requests({ method: 'GET', key: 'in.txt' }).map((r) => [r.fault, r.status])).toEqual([['flip-bit', 200], [undefined, 200]]);
      expect(proxy.requests({ method: 'PUT', key: 'out.txt' }).map((r) => [r.fault, r.status])).toEqual([['flip-bit', 400], [undefined, 200]]);
      expect(await status(service.page, bucket)).toMatchObject({ pending: 0, conflicts: 0 });
    } finally {
      await unbind(service.page, bucket);
      await proxy.close();
    }
  });

  it('two profiles are two devices: a photo stored in one appears in the other', { timeout: 90_000 }, async () => {
    const Bucket = await remoteBucket();
    const bucket = `shared-${n}`;
    const other = await launchEngine(service.name);
    try {
      const { page: phone } = await openServicePage(other, service.baseURL);
      await bind(service.page, { bucket, remoteUrl: remote.url, remoteBucket: Bucket });
      await bind(phone, { bucket, remoteUrl: remote.url, remoteBucket: Bucket });
      await put(service.page, bucket, 'holiday.jpg', 'a photo');
      // Rounds of this bucket alone (the page has replicas of earlier tests, some with their remote
      // gone), until the photo is on the remote, then on the phone: a syncNow() may join a round
      // that began before the write, so the test waits for what the devices hold.
      await expect.poll(async () => (await syncOne(service.page, bucket), await remoteRead(Bucket, 'holiday.jpg')), { timeout: 30_000 }).toBe('a photo');
      await expect.poll(async () => (await syncOne(phone, bucket), await read(phone, bucket, 'holiday.jpg')), { timeout: 30_000 }).toBe('a photo');
    } finally {
      await other.close();
    }
  });

  it('a tab closed mid-push: syncNow from another tab ends the multipart push; the object whole on the remote, no part sent twice, no upload left', { timeout: 90_000 }, async () => {
    const proxy = await startFaultProxy({ target: remote.url });
    let tab: EnginePage | undefined;
    let bound: string | undefined;
    let release = () => {};
    try {
      const Bucket = await remoteBucket();
      const bucket = (bound = `closed-${n}`);
      tab = (await openServicePage(service.engine, service.baseURL)).page;
      await bindWith(tab, { bucket, remoteUrl: proxy.url, remoteBucket: Bucket }, { multipartBytes: 5 * MiB });
      await firstRound(tab, bucket);
      // 12 MiB in three parts (5, 5 and 2 MiB); part 2 is held at the proxy until the tab has closed, so the push is under way when it does.
      const big = { bucket, key: 'video.bin', seed: 1201, size: 12 * MiB + 3 };
      const held = proxy.fault({ match: { method: 'PUT', query: /(^|&)partNumber=2(&|$)/ }, holdUntil: new Promise<void>((r) => (release = r)) });
      await run(tab, async (t, a) => {
        await t.sw.client.putObject(a.bucket, a.key, t.blob(a.seed, a.size));
        // The tab asks for the round and goes before it ends.
        void t.sw.replicas.syncNow({ bucket: a.bucket }).catch(() => {});
      }, big);
      await expect.poll(() => partsSent(proxy), { timeout: 30_000 }).toContain('1:200');
      await expect.poll(() => held.hits(), { timeout: 30_000 }).toBe(1);
      expect(proxy.requests({ method: 'POST', query: 'uploadId' }), 'no Complete yet: the push is under way').toEqual([]);
      await tab.close();
      tab = undefined;
      release();

      expect(await syncBucket(service.page, bucket), 'syncNow from the tab still open').not.toHaveProperty('error');
      await expect.poll(() => status(service.page, bucket), { timeout: 30_000 }).toMatchObject({ state: 'idle', pending: 0 });
      await expectWholeOnRemote(Bucket, big.key, pattern(big.seed, big.size));
      expect(partsSent(proxy).sort(), 'each part sent to the remote once').toEqual(['1:200', '2:200', '3:200']);
      expect(proxy.requests({ method: 'POST', query: 'uploads' }), 'one multipart upload made').toHaveLength(1);
      expect(await remoteKeys(Bucket)).toEqual([big.key]);
    } finally {
      release();
      await tab?.close();
      if (bound) await unbind(service.page, bound);
      await proxy.close();
    }
  });

  // Not in 'webkit': MiniBrowser's automation session keeps its storage in memory, so there is no
  // browser to start again on the same storage (webkit-disk is WebKit with its storage on disk).
  if (service.name !== 'webkit') {
    it('the browser quit with changes pending and started again on its profile: once the remote is back, each change lands once', { timeout: 120_000 }, async () => {
      const proxy = await startFaultProxy({ target: remote.url });
      const profileDir = tempDir(`swbucket-replica-profile-${service.name}-`);
      let browser: Engine | undefined;
      try {
        const Bucket = await remoteBucket();
        const bucket = `restarted-${n}`;
        browser = await launchEngine(service.name, { profileDir });
        let { page } = await openServicePage(browser, service.baseURL);
        await bind(page, { bucket, remoteUrl: proxy.url, remoteBucket: Bucket });
        await firstRound(page, bucket);
        await put(page, bucket, 'edited.txt', 'as synced');
        await put(page, bucket, 'deleted.txt', 'to be deleted');
        await expect.poll(async () => {
          await syncBucket(page, bucket);
          return remoteKeys(Bucket);
        }, { timeout: 20_000 }).toEqual(['deleted.txt', 'edited.txt']);

        // The remote cannot be reached; changes wait in the outbox, and the browser quits.
        await proxy.down();
        await put(page, bucket, 'edited.txt', 'edited offline');
        await put(page, bucket, 'new-1.txt', 'one');
        await put(page, bucket, 'new-2.txt', 'two');
        await page.evaluate(async (a: { bucket: string }) => {
          await (window as unknown as { swbucket: SwGlobal }).swbucket.client.deleteObject(a.bucket, 'deleted.txt');
        }, { bucket });
        const pendingKeys = ['deleted.txt', 'edited.txt', 'new-1.txt', 'new-2.txt'];
        await expect.poll(() => status(page, bucket), { timeout: 20_000 }).toMatchObject({ pending: 4 });
        await browser.close();
        browser = undefined;
        const before = proxy.requests().length;

        // Started again on the same profile: the changes are still pending, then pushed once the remote is back.
        browser = await launchEngine(service.name, { profileDir });
        ({ page } = await openServicePage(browser, service.baseURL));
        expect(await status(page, bucket), 'after the restart').toMatchObject({ pending: 4 });
        expect((await page.evaluate(async (b: string) => (window as unknown as { swbucket: SwGlobal }).swbucket.replicas.pending(b), bucket)).sort()).toEqual(pendingKeys);
        expect(await read(page, bucket, 'edited.txt')).toBe('edited offline');
        await proxy.up();
        await expect.poll(async () => {
          await syncBucket(page, bucket);
          return status(page, bucket);
        }, { timeout: 30_000 }).toMatchObject({ pending: 0, state: 'idle' });

        expect(await remoteKeys(Bucket)).toEqual(['edited.txt', 'new-1.txt', 'new-2.txt']);
        expect([await remoteRead(Bucket, 'edited.txt'), await remoteRead(Bucket, 'new-1.txt'), await remoteRead(Bucket, 'new-2.txt')]).toEqual(['edited offline', 'one', 'two']);
        // Each change went to the remote once, after the restart.
        const writes = proxy.requests().slice(before).filter((r) => (r.method === 'PUT' || r.method === 'DELETE') && !r.key.startsWith('.swbucket/') && r.reachedRemote);
        expect(writes.map((r) => `${r.method} ${r.key} ${r.status}`).sort()).toEqual(['DELETE deleted.txt 204', 'PUT edited.txt 200', 'PUT new-1.txt 200', 'PUT new-2.txt 200']);
      } finally {
        await browser?.close();
        await proxy.close();
      }
    });
  }
});
