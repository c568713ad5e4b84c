// Replicas in Node (sw/replica/): a local bucket (the handler over a store of each kind) bound to a
// bucket of `swbucket serve` in S3's dialect, a separate process. Local writes through the handler
// as an app makes them; the remote read and written with the AWS SDK, as another device or app
// would. Each test syncs on demand (syncNow) and looks at both sides.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutBucketCorsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createHandler } from '../../sw/core/handler.ts';
import { createReplicas, type ReplicaConfig, type Replicas } from '../../sw/replica/replicas.ts';
import { SyncStopped } from '../../sw/replica/sync.ts';
import { openTestStore, STORE_KINDS, SOUND, contents, integrity, tempDir, type StoreKind } from '../support/stores.ts';
import { encodeS3Key, s3, signedHeaders } from '../support/s3-sign.ts';
import { serve, type Served } from '../support/serve.ts';
import type { Store } from '../../sw/store/types.ts';

const te = new TextEncoder();
const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');
const ROOT = { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' };

let remote: Served;
let sdk: S3Client;
let n = 0;

beforeAll(async () => {
  remote = await serve(['--dialect', 's3']);
  sdk = new S3Client({ endpoint: remote.url, region: 'us-east-1', forcePathStyle: true, credentials: ROOT });
}, 60_000);
afterAll(async () => {
  sdk?.destroy();
  await remote?.stop();
});

/** A device: a store of `kind`, its handler, and its replicas, bound to remote bucket `bucket`. */
async function device(kind: StoreKind, bucket: string, o: Partial<ReplicaConfig> = {}) {
  const { store } = await openTestStore(kind);
  const handle = createHandler({ store });
  const replicas: Replicas = createReplicas({ store });
  await replicas.add({ bucket: 'photos', remote: { endpoint: remote.url, region: 'us-east-1', bucket, forcePathStyle: true, credentials: ROOT }, ...o });
  const call = async (method: string, key: string, body?: string, headers: Record<string, string> = {}) => {
    const res = await handle(await s3(method, `http://photos.s3.localhost/${encodeS3Key(key)}`, body === undefined ? undefined : te.encode(body), { headers }));
    return { status: res.status, text: await res.text(), headers: res.headers };
  };
  const put = async (key: string, body: string) => expect((await call('PUT', key, body)).status).toBe(200);
  const read = async (key: string) => {
    const r = await call('GET', key);
    return r.status === 200 ? r.text : null;
  };
  const keys = async () => {
    const r = await handle(await s3('GET', 'http://photos.s3.localhost/?list-type=2'));
    return [...(await r.text()).matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!);
  };
  return { store, handle, replicas, call, put, read, keys };
}

async function remoteBucket(): Promise<string> {
  const Bucket = `remote-${process.pid}-${++n}`;
  await sdk.send(new CreateBucketCommand({ Bucket }));
  return Bucket;
}
const remoteKeys = async (Bucket: string) => ((await sdk.send(new ListObjectsV2Command({ Bucket }))).Contents ?? []).map((c) => c.Key!);
const remoteRead = async (Bucket: string, Key: string) => {
  try {
    return await (await sdk.send(new GetObjectCommand({ Bucket, Key }))).Body!.transformToString();
  } catch {
    return null;
  }
};
const sound = async (store: Store) => expect(integrity(await contents(store))).toEqual(SOUND);

describe.each(STORE_KINDS)('a replica of a bucket of swbucket serve (%s)', (kind) => {
  it('pushes what is written locally, with its metadata, and pulls what another writes remotely', async () => {
    const Bucket = await remoteBucket();
    const d = await device(kind, Bucket);
    await d.put('a.txt', 'written offline');
    expect((await d.call('PUT', 'b.txt', 'with metadata', { 'content-type': 'text/plain', 'x-amz-meta-album': 'summer' })).status).toBe(200);
    expect((await d.replicas.status())[0]).toMatchObject({ bucket: 'photos', pending: 2, pendingBytes: 'written offline'.length + 'with metadata'.length });
    const states: string[] = [];
    const off = d.replicas.on((e) => {
      if (e.type === 'status' && states.at(-1) !== e.status.state) states.push(e.status.state);
    });
    const [round] = await d.replicas.syncNow();
    expect(round!.pushed.sort()).toEqual(['a.txt', 'b.txt']);
    expect(states).toEqual(['syncing', 'pushing', 'idle']);
    expect(await remoteRead(Bucket, 'a.txt')).toBe('written offline');
    const head = await sdk.send(new HeadObjectCommand({ Bucket, Key: 'b.txt' }));
    expect([head.ContentType, head.Metadata]).toEqual(['text/plain', { album: 'summer' }]);
    expect((await d.replicas.status())[0]).toMatchObject({ pending: 0, conflicts: 0, state: 'idle' });
    // Another device writes remotely.
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'c.txt', Body: 'from elsewhere', ContentType: 'text/markdown' }));
    states.length = 0;
    const [second] = await d.replicas.syncNow();
    off();
    expect(states).toEqual(['syncing', 'pulling', 'idle']);
    expect(second!.pulled).toEqual(['c.txt']);
    expect(await d.read('c.txt')).toBe('from elsewhere');
    expect((await d.call('HEAD', 'c.txt')).headers.get('content-type')).toBe('text/markdown');
    // A round with nothing new changes nothing.
    const [third] = await d.replicas.syncNow();
    expect([third!.pushed, third!.pulled, third!.conflicts]).toEqual([[], [], []]);
    await sound(d.store);
  });

  it('propagates a delete only for a key both sides had at the last sync; a first sync of two full sides merges and deletes nothing', async () => {
    const Bucket = await remoteBucket();
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'remote-only.txt', Body: 'r' }));
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'same.txt', Body: 'same bytes' }));
    const d = await device(kind, Bucket);
    await d.put('local-only.txt', 'l');
    await d.put('same.txt', 'same bytes');
    const [first] = await d.replicas.syncNow();
    expect(first!.conflicts).toEqual([]);
    expect((await d.keys()).sort()).toEqual(['local-only.txt', 'remote-only.txt', 'same.txt']);
    expect((await remoteKeys(Bucket)).sort()).toEqual(['local-only.txt', 'remote-only.txt', 'same.txt']);
    // Deleted locally: deleted remotely. Deleted remotely: deleted locally.
    expect((await d.call('DELETE', 'local-only.txt')).status).toBe(204);
    await sdk.send(new DeleteObjectCommand({ Bucket, Key: 'remote-only.txt' }));
    const [second] = await d.replicas.syncNow();
    expect([second!.deletedRemote, second!.deletedLocal]).toEqual([['local-only.txt'], ['remote-only.txt']]);
    expect(await d.keys()).toEqual(['same.txt']);
    expect(await remoteKeys(Bucket)).toEqual(['same.txt']);
    await sound(d.store);
  });

  it('keeps both versions of a key changed on both sides, and reports the conflict', async () => {
    const Bucket = await remoteBucket();
    const d = await device(kind, Bucket, { });
    await d.put('notes/todo.txt', 'v1');
    await d.replicas.syncNow();
    await d.put('notes/todo.txt', 'local edit');
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'notes/todo.txt', Body: 'remote edit' }));
    const events: string[] = [];
    const off = d.replicas.on((e) => {
      if (e.type === 'conflict') events.push(e.conflict.key);
    });
    const [round] = await d.replicas.syncNow();
    off();
    expect(round!.conflicts).toHaveLength(1);
    const c = round!.conflicts[0]!;
    expect(c).toMatchObject({ key: 'notes/todo.txt', local: 'changed', remote: 'changed', winner: 'remote', localEtag: md5('local edit'), remoteEtag: md5('remote edit') });
    expect(c.keptAt).toMatch(/^notes\/todo \(conflict \d{4}-\d\d-\d\d \d{6} [0-9a-f]{8}\)\.txt$/);
    expect(events).toEqual(['notes/todo.txt']);
    expect(await d.read('notes/todo.txt')).toBe('remote edit');
    expect(await d.read(c.keptAt!)).toBe('local edit');
    // The kept local version is pushed as its own key; both sides end the same.
    await d.replicas.syncNow();
    expect(await remoteRead(Bucket, c.keptAt!)).toBe('local edit');
    expect((await remoteKeys(Bucket)).sort()).toEqual((await d.keys()).sort());
    expect((await d.replicas.status())[0]).toMatchObject({ conflicts: 1, pending: 0 });
    expect((await d.replicas.conflicts('photos')).map((x) => x.key)).toEqual(['notes/todo.txt']);
    await d.replicas.dismissConflict('photos', c.id);
    expect((await d.replicas.status())[0]!.conflicts).toBe(0);
    await sound(d.store);
  });

  it('stops before deleting more than half of what was synced, and deletes when told to', async () => {
    const Bucket = await remoteBucket();
    const d = await device(kind, Bucket);
    for (let i = 0; i < 12; i++) await d.put(`k${i}`, `v${i}`);
    await d.replicas.syncNow();
    for (let i = 0; i < 12; i++) await sdk.send(new DeleteObjectCommand({ Bucket, Key: `k${i}` }));
    const stopped = await d.replicas.syncNow().then(() => null, (e: unknown) => e);
    expect(stopped).toBeInstanceOf(SyncStopped);
    expect((stopped as Error).message).toMatch(/would delete 12 of the 12 objects/);
    expect(await d.keys()).toHaveLength(12);
    expect((await d.replicas.status())[0]).toMatchObject({ state: 'stopped', error: expect.stringMatching(/allowDeletes/) });
    const [round] = await d.replicas.syncNow({ allowDeletes: true });
    expect(round!.deletedLocal).toHaveLength(12);
    expect(await d.keys()).toEqual([]);
  });
});

describe('modes and policies', () => {
  it('a burst of writes is announced once per state, not once per write', async () => {
    const Bucket = await remoteBucket();
    const d = await device('memory', Bucket);
    const states: string[] = [];
    const off = d.replicas.on((e) => void (e.type === 'status' && states.push(e.status.state)));
    for (let i = 0; i < 100; i++) d.replicas.nudge('photos');
    await d.replicas.syncNow();
    off();
    expect(states.length, states.join(' ')).toBeLessThanOrEqual(4);
    expect(states.at(-1)).toBe('idle');
  });

  it('paused, a round is refused saying so and writes wait; resumed, they go (a refused round is not kept as the running one)', async () => {
    const Bucket = await remoteBucket();
    const d = await device('memory', Bucket);
    await d.replicas.pause('photos');
    await d.put('p.txt', 'written while paused');
    await expect(d.replicas.syncNow()).rejects.toThrow(/paused: resume\(\) it first/);
    expect((await d.replicas.status())[0]).toMatchObject({ state: 'paused', pending: 1, pendingBytes: 20 });
    await d.replicas.resume('photos');
    const [round] = await d.replicas.syncNow();
    expect(round!.pushed).toEqual(['p.txt']);
    expect(await remoteRead(Bucket, 'p.txt')).toBe('written while paused');
  });

  it('push only: local changes go out, remote ones never come in; both changed, the local takes the key and the remote\'s is kept beside it, remotely', async () => {
    const Bucket = await remoteBucket();
    const d = await device('idb', Bucket, { mode: 'push' });
    await d.put('k.txt', 'v1');
    await d.replicas.syncNow();
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'other.txt', Body: 'remote only' }));
    await d.put('k.txt', 'local v2');
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'k.txt', Body: 'remote v2' }));
    const [round] = await d.replicas.syncNow();
    expect(round!.pulled).toEqual([]);
    expect(await d.read('other.txt')).toBeNull();
    expect(round!.conflicts).toEqual([expect.objectContaining({ key: 'k.txt', winner: 'local', keptAt: expect.stringMatching(/^k \(conflict .+\)\.txt$/) })]);
    expect(await remoteRead(Bucket, 'k.txt')).toBe('local v2');
    expect(await remoteRead(Bucket, round!.conflicts[0]!.keptAt!)).toBe('remote v2');
    expect(await d.read('k.txt')).toBe('local v2');
  });

  it('pull only: remote changes come in, local ones stay local (pending); both changed, the remote takes the key and the local is kept beside it', async () => {
    const Bucket = await remoteBucket();
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'k.txt', Body: 'v1' }));
    const d = await device('idb', Bucket, { mode: 'pull' });
    await d.replicas.syncNow();
    expect(await d.read('k.txt')).toBe('v1');
    await d.put('mine.txt', 'local only');
    await d.put('k.txt', 'local v2');
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'k.txt', Body: 'remote v2' }));
    const [round] = await d.replicas.syncNow();
    expect(round!.pushed).toEqual([]);
    expect(await remoteRead(Bucket, 'mine.txt')).toBeNull();
    expect(await d.read('k.txt')).toBe('remote v2');
    expect(await d.read(round!.conflicts[0]!.keptAt!)).toBe('local v2');
    expect((await d.replicas.status())[0]!.pending).toBe(2);
  });

  it('remote-wins, local-wins, and a function of both decide a conflict as they say', async () => {
    for (const [policy, expected] of [['remote-wins', 'remote edit'], ['local-wins', 'local edit']] as const) {
      const Bucket = await remoteBucket();
      const d = await device('idb', Bucket, { policy });
      await d.put('k.txt', 'v1');
      await d.replicas.syncNow();
      await d.put('k.txt', 'local edit');
      await sdk.send(new PutObjectCommand({ Bucket, Key: 'k.txt', Body: 'remote edit' }));
      const [round] = await d.replicas.syncNow();
      expect(round!.conflicts, policy).toEqual([expect.objectContaining({ key: 'k.txt', winner: policy === 'remote-wins' ? 'remote' : 'local' })]);
      expect(round!.conflicts[0]!.keptAt).toBeUndefined();
      expect([await d.read('k.txt'), await remoteRead(Bucket, 'k.txt')], policy).toEqual([expected, expected]);
      expect(await d.keys()).toEqual(['k.txt']);
    }
    const Bucket = await remoteBucket();
    const seen: unknown[] = [];
    const d = await device('idb', Bucket, {
      policy: (c) => {
        seen.push([c.key, c.local, c.remote, c.localObject?.size, c.remoteEntry?.size]);
        return c.key.endsWith('.log') ? 'local' : 'both';
      },
    });
    await d.put('a.log', 'v1');
    await d.put('b.txt', 'v1');
    await d.replicas.syncNow();
    await d.put('a.log', 'local line');
    await d.put('b.txt', 'local text');
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'a.log', Body: 'remote line!' }));
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'b.txt', Body: 'remote text!' }));
    await d.replicas.syncNow();
    expect(seen).toEqual([['a.log', 'changed', 'changed', 10, 12], ['b.txt', 'changed', 'changed', 10, 12]]);
    expect(await remoteRead(Bucket, 'a.log')).toBe('local line');
    expect(await d.read('b.txt')).toBe('remote text!');
    expect((await d.keys()).length).toBe(3);
  });

  it('a policy function that answers undefined leaves the conflict for later (both sides as they were); a wrong answer stops the replica, saying what to answer', async () => {
    const Bucket = await remoteBucket();
    let answer: unknown;
    const d = await device('idb', Bucket, { policy: () => answer as 'both' });
    await d.put('k.txt', 'v1');
    await d.replicas.syncNow();
    await d.put('k.txt', 'local edit');
    await sdk.send(new PutObjectCommand({ Bucket, Key: 'k.txt', Body: 'remote edit' }));
    const [later] = await d.replicas.syncNow();
    expect(later).toMatchObject({ undecided: ['k.txt'], conflicts: [], deferred: [], pushed: [], pulled: [] });
    expect([await d.read('k.txt'), await remoteRead(Bucket, 'k.txt')]).toEqual(['local edit', 'remote edit']);
    expect((await d.replicas.status())[0]).toMatchObject({ pending: 1, conflicts: 0 });
    answer = 'sideways';
    await expect(d.replicas.syncNow()).rejects.toThrow(/policy function answered "sideways" for k\.txt: it must answer 'both', 'remote', 'local', or undefined/);
    expect((await d.replicas.status())[0]).toMatchObject({ state: 'stopped', pending: 1 });
    expect([await d.read('k.txt'), await remoteRead(Bucket, 'k.txt')]).toEqual(['local edit', 'remote edit']);
    answer = 'local';
    await d.replicas.resume();
    const [decided] = await d.replicas.syncNow();
    expect(decided!.conflicts).toEqual([expect.objectContaining({ key: 'k.txt', winner: 'local' })]);
    expect([await d.read('k.txt'), await remoteRead(Bucket, 'k.txt')]).toEqual(['local edit', 'local edit']);
  });
});

describe('large bodies', () => {
  it('pushes a body over multipartBytes by multipart upload, byte for byte, and pulls it back on another device', async () => {
    const Bucket = await remoteBucket();
    const d = await device('lmdb', Bucket, { multipartBytes: 6 * 1024 * 1024 });
    const big = new Uint8Array(11 * 1024 * 1024 + 123).map((_, i) => (i * 7 + (i >> 13)) % 251);
    const res = await d.handle(await s3('PUT', 'http://photos.s3.localhost/video.bin', big));
    expect(res.status).toBe(200);
    await d.replicas.syncNow();
    const head = await sdk.send(new HeadObjectCommand({ Bucket, Key: 'video.bin' }));
    expect([head.ContentLength, head.ETag]).toEqual([big.length, expect.stringMatching(/^"[0-9a-f]{32}-2"$/)]); // parts of 6 MiB
    const back = await (await sdk.send(new GetObjectCommand({ Bucket, Key: 'video.bin' }))).Body!.transformToByteArray();
    expect(md5(back)).toBe(md5(big));
    const other = await device('idb-pieces', Bucket);
    const [round] = await other.replicas.syncNow();
    expect(round!.pulled).toEqual(['video.bin']);
    const local = await other.handle(await s3('GET', 'http://photos.s3.localhost/video.bin'));
    expect(md5(new Uint8Array(await local.arrayBuffer()))).toBe(md5(big));
    // Nothing left behind on the remote: no upload in progress.
    const uploads = await fetch(`${remote.url}/${Bucket}?uploads`, { headers: await signedHeaders('GET', `${remote.url}/${Bucket}?uploads`, undefined) });
    expect(await uploads.text()).not.toContain('<Upload>');
    await sound(other.store);
  });
});

describe('reserved and unsyncable keys', () => {
  it('a round deletes probe objects this device left on the remote over ten minutes ago, never another device\'s', async () => {
    const Bucket = await remoteBucket();
    const { store } = await openTestStore('memory');
    const later = Date.now() + 11 * 60_000;
    const replicas = createReplicas({ store, device: 'dev1', now: () => later });
    await replicas.add({ bucket: 'photos', remote: { endpoint: remote.url, region: 'us-east-1', bucket: Bucket, forcePathStyle: true, credentials: ROOT } });
    for (const Key of ['.swbucket/probe-dev1-left', '.swbucket/probe-dev2-theirs', '.swbucket/other']) await sdk.send(new PutObjectCommand({ Bucket, Key, Body: 'x' }));
    await replicas.syncNow();
    expect(await remoteKeys(Bucket)).toEqual(['.swbucket/other', '.swbucket/probe-dev2-theirs']);
    expect(await replicas.pending('photos')).toEqual([]);
  });

  it('a key with a ".." segment (a form can store one) is left out of every round and named in its result', async () => {
    const Bucket = await remoteBucket();
    const d = await device('idb', Bucket);
    const ref = (await d.store.getBucket('photos'))!;
    await d.store.putObject(ref, { key: 'a/../b.txt', size: 1, etag: md5('x'), lastModified: Date.now(), contentType: 'text/plain', headers: {}, meta: [] }, te.encode('x'));
    await d.put('b.txt', 'the real b');
    const [round] = await d.replicas.syncNow();
    expect([round!.pushed, round!.skipped]).toEqual([['b.txt'], ['a/../b.txt']]);
    expect(await remoteRead(Bucket, 'b.txt')).toBe('the real b');
  });
});

describe('check()', () => {
  it('says what the remote lacks: its CORS rules for a page\'s origin, wrong credentials, no answer; nothing when all is there', async () => {
    const Bucket = await remoteBucket();
    const d = await device('idb', Bucket);
    expect(await d.replicas.check('photos', 'https://app.example')).toMatchObject({ ok: true, problems: [], guarantees: { ifNoneMatch: true, ifMatch: 'quoted' } });
    await sdk.send(new PutBucketCorsCommand({ Bucket, CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['https://app.example'], AllowedMethods: ['GET', 'PUT'], AllowedHeaders: ['authorization', 'x-amz-*'] }] } }));
    const lacking = await d.replicas.check('photos', 'https://app.example');
    expect(lacking.ok).toBe(false);
    expect(lacking.problems.join('\n')).toMatch(/does not allow the methods POST, DELETE, HEAD/);
    expect(lacking.problems.join('\n')).toMatch(/does not allow the request headers content-type, content-md5, if-match, if-none-match/);
    expect(lacking.problems.join('\n')).toMatch(/does not expose ETag, x-amz-version-id/);
    expect((await d.replicas.check('photos', 'https://other.example')).problems).toEqual(['The remote bucket\'s CORS configuration allows no rule for https://other.example: add one with AllowedOrigin https://other.example.']);
    // Node has no origin: the rules are no concern there.
    expect((await d.replicas.check('photos')).ok).toBe(true);
    const wrong = await device('idb', Bucket, { remote: { endpoint: remote.url, region: 'us-east-1', bucket: Bucket, forcePathStyle: true, credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'not-the-secret' } } });
    expect((await wrong.replicas.check('photos')).problems).toEqual([expect.stringMatching(/403 SignatureDoesNotMatch.*Check the replica's credentials/)]);
    const gone = await device('idb', Bucket, { remote: { endpoint: 'http://127.0.0.1:9', region: 'us-east-1', bucket: Bucket, forcePathStyle: true, credentials: ROOT } });
    expect((await gone.replicas.check('photos', 'https://app.example')).problems).toEqual([expect.stringMatching(/^No answer from .* its CORS configuration must also allow https:\/\/app.example/)]);
  });
});

describe('two devices on one remote bucket', () => {
  it('a photo stored on one appears on the other; the same key edited on both ends with both versions on both, one conflict on each', async () => {
    const Bucket = await remoteBucket();
    const laptop = await device('idb', Bucket, {});
    const phone = await device('lmdb', Bucket, {});
    await laptop.put('cat.jpg', 'a cat');
    await laptop.replicas.syncNow();
    await phone.replicas.syncNow();
    expect(await phone.read('cat.jpg')).toBe('a cat');
    // Both offline, both edit.
    await laptop.put('cat.jpg', 'cat, cropped on the laptop');
    await phone.put('cat.jpg', 'cat, filtered on the phone');
    const [l] = await laptop.replicas.syncNow();
    expect(l!.pushed).toEqual(['cat.jpg']);
    const [p] = await phone.replicas.syncNow();
    expect(p!.conflicts).toHaveLength(1);
    await laptop.replicas.syncNow();
    await phone.replicas.syncNow();
    const kept = p!.conflicts[0]!.keptAt!;
    for (const d of [laptop, phone]) {
      expect(await d.read('cat.jpg')).toBe('cat, cropped on the laptop');
      expect(await d.read(kept)).toBe('cat, filtered on the phone');
      const conflicts = await d.replicas.conflicts('photos');
      expect(conflicts.map((c) => [c.key, c.keptAt])).toEqual([['cat.jpg', kept]]);
    }
    expect((await laptop.replicas.conflicts('photos'))[0]!.foundElsewhere).toBe(true);
    expect((await remoteKeys(Bucket)).sort()).toEqual(['cat.jpg', kept].sort());
    const head = await sdk.send(new HeadObjectCommand({ Bucket, Key: kept }));
    expect(head.Metadata).toEqual({ 'swbucket-conflict-of': 'cat.jpg' });
  });
});

describe('swbucket serve --replicas', () => {
  it('keeps a bucket in sync on its own: a write to the local server lands on the remote soon after, and one on the remote comes back', async () => {
    const Bucket = await remoteBucket();
    const dir = tempDir();
    const file = join(dir, 'replicas.json');
    writeFileSync(file, JSON.stringify([{ bucket: 'photos', remote: { endpoint: remote.url, region: 'us-east-1', bucket: Bucket, forcePathStyle: true, credentials: ROOT }, intervalMs: 200 }]));
    const local = await serve(['--dialect', 's3', '--replicas', file, '--data', join(dir, 'data')]);
    try {
      const near = new S3Client({ endpoint: local.url, region: 'us-east-1', forcePathStyle: true, credentials: ROOT });
      await near.send(new PutObjectCommand({ Bucket: 'photos', Key: 'sunset.jpg', Body: 'pixels' }));
      await expect.poll(() => remoteRead(Bucket, 'sunset.jpg'), { timeout: 20_000 }).toBe('pixels');
      await sdk.send(new PutObjectCommand({ Bucket, Key: 'from-remote.txt', Body: 'hello' }));
      await expect.poll(async () => {
        try {
          return await (await near.send(new GetObjectCommand({ Bucket: 'photos', Key: 'from-remote.txt' }))).Body!.transformToString();
        } catch {
          return null;
        }
      }, { timeout: 20_000 }).toBe('hello');
      near.destroy();
    } finally {
      await local.stop();
    }
  }, 60_000);
});
