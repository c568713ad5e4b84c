// Three engines as three devices of one user (docs/replicas.md): Chromium, Firefox and WebKit
// (MiniBrowser, ephemeral storage) launched side by side, each with a page of the built site, each
// binding its own local bucket to ONE remote bucket of `swbucket serve --dialect s3` in a process of
// its own. The remote is stopped and started again on the same port and data folder to stand for
// "offline". The remote is read with the AWS SDK in Node; each device through swbucket/client in
// its page. Runs once, in the 'browser' project (it launches the three engines itself).
//
// 1. A photo stored in Chromium while the remote is down is, once it is back and every device has
//    synced, byte for byte in Firefox and WebKit (and on the remote).
// 2. One key edited in Chromium and in Firefox while the remote is down: after both synced (and
//    synced again) both versions are kept, at the key and beside it, on every device and on the
//    remote, and each of the two editing devices reports exactly one conflict (WebKit too, which
//    learned of it by pulling the kept copy).
// 3. At the end of each, every device lists exactly what the remote lists (keys, sizes, ETags).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { launchEngine, type Engine, type EngineName, type EnginePage } from './support/engines.ts';
import { openServicePage } from './support/page.ts';
import { KiB, md5hex, pattern, run, sha256hex } from './support/engine-data-helpers.ts';
import { serve, type Served } from '../support/serve.ts';
import { tempDir } from '../support/stores.ts';

const baseURL = inject('baseURL');
const ROOT = { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' };
/** Keys under it are each replica's own on the remote (its probe), never synced. */
const RESERVED = '.swbucket/';

interface Device {
  name: EngineName;
  engine: Engine;
  page: EnginePage;
}

const NAMES: EngineName[] = ['chromium', 'firefox', 'webkit'];
let devices: Device[] = [];
let remote: Served;
let remoteData: string;
let sdk: S3Client;

const device = (name: EngineName) => devices.find((d) => d.name === name)!;

beforeAll(async () => {
  remoteData = tempDir('swbucket-devices-remote-');
  const launched = await Promise.allSettled(NAMES.map(async (name) => {
    const engine = await launchEngine(name);
    try {
      return { name, engine, page: (await openServicePage(engine, baseURL)).page };
    } catch (e) {
      await engine.close();
      throw e;
    }
  }));
  devices = launched.flatMap((l) => (l.status === 'fulfilled' ? [l.value] : []));
  const failed = launched.find((l) => l.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  remote = await serve(['--dialect', 's3', '--data', remoteData]);
  sdk = new S3Client({ endpoint: remote.url, region: 'us-east-1', forcePathStyle: true, credentials: ROOT });
}, 120_000);
afterAll(async () => {
  sdk?.destroy();
  await Promise.all(devices.map((d) => d.engine.close()));
  await remote?.stop();
});

/** The remote down while `fn` runs, then started again on its port with its data. */
async function whileRemoteDown(fn: () => Promise<void>): Promise<void> {
  await remote.stop();
  try {
    await fn();
  } finally {
    remote = await serve(['--dialect', 's3', '--data', remoteData], remote.port);
  }
}

let n = 0;
async function remoteBucket(what: string): Promise<string> {
  const Bucket = `devices-${what}-${process.pid}-${++n}`;
  await sdk.send(new CreateBucketCommand({ Bucket }));
  return Bucket;
}

/** Binds the page's local bucket `bucket` to the remote bucket, and waits for its first round. */
async function bind(d: Device, bucket: string, Bucket: string): Promise<void> {
  await run(d.page, async (t, a) => {
    await t.sw.replicas.add({
      bucket: a.bucket,
      remote: { endpoint: a.endpoint, region: 'us-east-1', bucket: a.Bucket, forcePathStyle: true, credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } },
    });
  }, { bucket, Bucket, endpoint: remote.url });
  await expect.poll(() => status(d, bucket), { timeout: 20_000, message: `${d.name}: the first round of ${bucket}` })
    .toMatchObject({ state: 'idle', lastSync: expect.any(Number), pending: 0 });
}

function status(d: Device, bucket: string) {
  return run(d.page, async (t, b) => (await t.sw.replicas.status()).find((s) => s.bucket === b) ?? null, bucket);
}

interface Synced {
  pushed: string[];
  pulled: string[];
  conflicts: number;
}

/**
 * syncNow twice in a row: a syncNow while a round runs (the worker's own, after a write or a retry)
 * answers with that round, which may have listed the remote before this call; the second call's
 * round started after the first ended, so after this call. What both pushed and pulled (not all a
 * device did: its own rounds may have moved some of it first).
 */
async function sync(d: Device): Promise<Synced> {
  const got = await run(d.page, async (t) => {
    const out = { pushed: [] as string[], pulled: [] as string[], conflicts: 0 };
    for (let i = 0; i < 2; i++) {
      try {
        for (const r of await t.sw.replicas.syncNow()) {
          out.pushed.push(...r.pushed);
          out.pulled.push(...r.pulled);
          out.conflicts += r.conflicts.length;
        }
      } catch (e) {
        return { error: `${(e as Error).name}: ${(e as Error).message}` };
      }
    }
    return out;
  });
  if ('error' in got) throw new Error(`${d.name}: syncNow failed: ${got.error}`);
  return got;
}

/** What the page's bucket holds at `key`: its size and SHA-256, its text when short; null when absent. */
function read(d: Device, bucket: string, key: string) {
  return run(d.page, async (t, a) => {
    try {
      const got = await t.read((await t.sw.client.getObject(a.bucket, a.key)).response);
      const text = got.size <= 64 ? new TextDecoder().decode(new Uint8Array(got.bytes!)) : null;
      return { size: got.size, sha256: got.sha256, contentType: got.headers['content-type'], text };
    } catch {
      return null;
    }
  }, { bucket, key });
}

function putText(d: Device, bucket: string, key: string, body: string): Promise<void> {
  return run(d.page, async (t, a) => void (await t.sw.client.putObject(a.bucket, a.key, a.body, { contentType: 'text/plain' })), { bucket, key, body });
}

/** The device's listing: key, size, ETag (unquoted), sorted by key. */
function localListing(d: Device, bucket: string) {
  return run(d.page, async (t, b) => {
    const out: { key: string; size: number; etag: string }[] = [];
    for await (const o of t.sw.client.listAllObjects(b)) if ('key' in o) out.push({ key: o.key, size: o.size, etag: o.etag });
    return out;
  }, bucket);
}

async function remoteListing(Bucket: string) {
  const listed = (await sdk.send(new ListObjectsV2Command({ Bucket }))).Contents ?? [];
  return listed.filter((c) => !c.Key!.startsWith(RESERVED))
    .map((c) => ({ key: c.Key!, size: c.Size!, etag: c.ETag!.replace(/"/g, '') }))
    .sort((a, b) => (a.key < b.key ? -1 : 1));
}

async function remoteBytes(Bucket: string, Key: string): Promise<Uint8Array> {
  return (await sdk.send(new GetObjectCommand({ Bucket, Key }))).Body!.transformToByteArray();
}

/** Every device lists exactly what the remote lists, and has nothing left to push. */
async function expectAllLikeRemote(bucket: string, Bucket: string): Promise<void> {
  const want = await remoteListing(Bucket);
  for (const d of devices) {
    expect(await localListing(d, bucket), `${d.name}'s listing of ${bucket}`).toEqual(want);
    expect(await status(d, bucket), `${d.name}: nothing left to push`).toMatchObject({ pending: 0 });
  }
}

describe('three engines, one user, one remote bucket', () => {
  it('a photo stored in Chromium while offline appears byte for byte in Firefox and WebKit once all have synced', { timeout: 90_000 }, async () => {
    const Bucket = await remoteBucket('photos');
    const bucket = 'photos';
    await Promise.all(devices.map((d) => bind(d, bucket, Bucket)));
    const photo = { key: 'camera/IMG_0001.jpg', seed: 4242, size: 300 * KiB + 17 };
    const bytes = pattern(photo.seed, photo.size);
    const chromium = device('chromium');

    await whileRemoteDown(async () => {
      await run(chromium.page, async (t, p) => void (await t.sw.client.putObject('photos', p.key, t.blob(p.seed, p.size), { contentType: 'image/jpeg' })), photo);
      // Kept here, waiting for the remote: acknowledged, pending, nowhere else.
      expect(await read(chromium, bucket, photo.key)).toMatchObject({ size: photo.size, sha256: sha256hex(bytes) });
      await expect.poll(() => status(chromium, bucket), { timeout: 20_000 }).toMatchObject({ pending: 1, pendingBytes: photo.size });
    });

    // (Which round moves it is not asserted: the worker's own retry, once the remote is back, may come first.)
    await sync(chromium);
    await Promise.all(devices.filter((d) => d !== chromium).map((d) => sync(d)));

    expect(md5hex(await remoteBytes(Bucket, photo.key)), 'the remote holds the photo\'s bytes').toBe(md5hex(bytes));
    for (const d of devices) {
      expect(await read(d, bucket, photo.key), d.name).toEqual({ size: photo.size, sha256: sha256hex(bytes), contentType: 'image/jpeg', text: null });
    }
    await expectAllLikeRemote(bucket, Bucket);
  });

  it('one key edited in Chromium and in Firefox while offline: both versions kept everywhere, one conflict reported on each side', { timeout: 90_000 }, async () => {
    const Bucket = await remoteBucket('notes');
    const bucket = 'notes';
    const key = 'lists/todo.txt';
    await Promise.all(devices.map((d) => bind(d, bucket, Bucket)));
    const [chromium, firefox, webkit] = NAMES.map(device) as [Device, Device, Device];

    // The key as all three devices last synced it.
    await putText(webkit, bucket, key, 'milk');
    await sync(webkit);
    for (const d of [chromium, firefox]) {
      await sync(d);
      expect((await read(d, bucket, key))?.text, d.name).toBe('milk');
    }

    const edits = { chromium: 'milk, eggs (edited in Chromium)', firefox: 'milk, bread (edited in Firefox)' };
    await whileRemoteDown(async () => {
      await putText(chromium, bucket, key, edits.chromium);
      await putText(firefox, bucket, key, edits.firefox);
      for (const d of [chromium, firefox]) await expect.poll(() => status(d, bucket), { timeout: 20_000, message: d.name }).toMatchObject({ pending: 1 });
    });

    // Each editing device syncs, then again (the first to push has the other's kept copy to pull),
    // and WebKit last.
    for (const d of [chromium, firefox, chromium, firefox, webkit]) await sync(d);

    const listed = await remoteListing(Bucket);
    expect(listed.map((l) => l.key), 'the remote: the key and one kept copy beside it').toEqual([
      expect.stringMatching(/^lists\/todo \(conflict \d{4}-\d\d-\d\d \d{6} [^)]+\)\.txt$/), key,
    ]);
    const keptAt = listed[0]!.key;
    const atKey = new TextDecoder().decode(await remoteBytes(Bucket, key));
    const atCopy = new TextDecoder().decode(await remoteBytes(Bucket, keptAt));
    expect([atKey, atCopy].sort(), 'both edits are kept, one at the key, one beside it').toEqual([edits.chromium, edits.firefox].sort());
    for (const d of devices) {
      expect((await read(d, bucket, key))?.text, `${d.name}: ${key}`).toBe(atKey);
      expect((await read(d, bucket, keptAt))?.text, `${d.name}: ${keptAt}`).toBe(atCopy);
    }
    for (const d of devices) {
      const conflicts = await run(d.page, async (t, b) => t.sw.replicas.conflicts(b), bucket);
      expect(conflicts.map((c) => ({ key: c.key, keptAt: c.keptAt })), `${d.name}: the conflicts it reports`).toEqual([{ key, keptAt }]);
    }
    await expectAllLikeRemote(bucket, Bucket);
  });
});
