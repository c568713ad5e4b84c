// A model check of replicas (issue 33): a seeded random run of thousands of steps — writes and
// deletes on two devices (each a store under the handler, bound to one remote bucket) and by
// another app straight on the remote, syncs of either device at random moments (a device that does
// not sync is offline) — then every side syncs until nothing changes. Afterwards:
// - the three sides hold the same keys with the same bytes (they converged);
// - no write was lost: every value ever written is still somewhere (at its key, or kept as a
//   conflict copy), or was seen by whoever replaced or deleted it (it is the parent of a later
//   write or delete). A write replaced by one that never saw it, with no conflict kept, fails this.
// A third run puts the fault proxy between the devices and the remote, failing requests at random
// in the middle of rounds: connections reset before the remote sees them, answers lost after it
// acted, 503 SlowDown, a 500 after a PUT landed. A round that fails must fail as a retryable
// RemoteError and leave nothing that a later round cannot settle.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../sw/core/handler.ts';
import { createReplicas } from '../../sw/replica/replicas.ts';
import { startServer, type RunningServer } from '../../node/server.ts';
import { RemoteError } from '../../sw/replica/remote.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { openTestStore, SOUND, contents, integrity, type StoreKind } from '../support/stores.ts';
import { encodeS3Key, s3, signedHeaders } from '../support/s3-sign.ts';

const te = new TextEncoder();
const KEYS = ['a', 'b', 'c', 'dir/d', 'dir/e', 'f'];

let remote: RunningServer;
beforeAll(async () => {
  remote = await startServer({ port: 0, log: () => {}, dialect: 's3' });
});
afterAll(() => remote?.close());

/** mulberry32: a small seeded generator, so a failing run can be run again exactly. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The remote, as another app sees it: signed requests to the server. */
async function remoteCall(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  const url = `${remote.url}${path}`;
  const bytes = body === undefined ? undefined : te.encode(body);
  const res = await fetch(url, { method, headers: await signedHeaders(method, url, bytes), ...(bytes ? { body: bytes } : {}) });
  return { status: res.status, text: await res.text() };
}

async function device(kind: StoreKind, bucket: string, name: string, endpoint = remote.url) {
  const { store } = await openTestStore(kind);
  const handle = createHandler({ store });
  const replicas = createReplicas({ store, device: name });
  await replicas.add({ bucket: 'mdl', remote: { endpoint, region: 'us-east-1', bucket, forcePathStyle: true, credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } } });
  const call = async (method: string, key: string, body?: string) => {
    const res = await handle(await s3(method, `http://mdl.s3.localhost/${encodeS3Key(key)}`, body === undefined ? undefined : te.encode(body)));
    return { status: res.status, text: await res.text() };
  };
  return { name, store, replicas, call, handle };
}

type Device = Awaited<ReturnType<typeof device>>;

/** Every key and its bytes: a device's through its handler, the remote's through the server. */
async function stateOf(list: () => Promise<string>, read: (key: string) => Promise<{ status: number; text: string }>): Promise<Map<string, string>> {
  const keys = [...(await list()).matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"'));
  const out = new Map<string, string>();
  for (const k of keys) {
    const r = await read(k);
    if (r.status === 200) out.set(k, r.text);
  }
  return out;
}

/** Faults at random (their own seeded generator, so the steps stay those of the seed): each request has a small chance of one. */
function injectFaults(proxy: FaultProxy, seed: number): void {
  const chance = rng(seed ^ 0x5eed);
  proxy.fault({ match: () => chance() < 0.03, fault: { kind: 'reset' }, times: Infinity });
  proxy.fault({ match: () => chance() < 0.03, fault: { kind: 'drop-answer' }, times: Infinity });
  proxy.fault({ match: () => chance() < 0.02, fault: { kind: 'error', status: 503 }, times: Infinity });
  proxy.fault({ match: (r) => r.method === 'PUT' && chance() < 0.03, fault: { kind: 'error', status: 500, reachRemote: true }, times: Infinity });
}

/** A round that may fail: only as the remote's failures do, retryable. */
async function trySync(d: Device): Promise<void> {
  try {
    await d.replicas.syncNow({ allowDeletes: true });
  } catch (e) {
    if (!(e instanceof RemoteError && e.retryable)) throw e;
  }
}

const VERSIONING = te.encode('<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>');

/** `versioned`: the remote bucket and the first device's bucket keep versions (the second's does not). */
async function run(seed: number, steps: number, kinds: [StoreKind, StoreKind], o: { faulty?: boolean; versioned?: boolean } = {}) {
  const faulty = o.faulty ?? false;
  const random = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const bucket = `model-${seed}`;
  expect((await remoteCall('PUT', `/${bucket}`)).status).toBe(200);
  if (o.versioned) expect((await remoteCall('PUT', `/${bucket}?versioning`, new TextDecoder().decode(VERSIONING))).status).toBe(200);
  const proxy = faulty ? await startFaultProxy({ target: remote.url }) : undefined;
  try {
    return await steps_(proxy);
  } finally {
    await proxy?.close();
  }

  async function steps_(proxy: FaultProxy | undefined) {
  const devices: Device[] = [await device(kinds[0], bucket, 'one', proxy?.url), await device(kinds[1], bucket, 'two', proxy?.url)];
  if (proxy) injectFaults(proxy, seed);
  if (o.versioned) {
    const res = await devices[0]!.handle(await s3('PUT', 'http://mdl.s3.localhost/?versioning', VERSIONING));
    expect(res.status).toBe(200);
  }
  /** value → the value its writer saw at the key (null: nothing); deletes as `delete:<n>`. */
  const parent = new Map<string, string | null>();
  let counter = 0;
  const seenBy = new Set<string>();

  for (let step = 0; step < steps; step++) {
    const r = random();
    const key = pick(KEYS);
    if (r < 0.3) {
      const d = pick(devices);
      const before = await d.call('GET', key);
      const value = `v${++counter} ${d.name}`;
      parent.set(value, before.status === 200 ? before.text : null);
      expect((await d.call('PUT', key, value)).status).toBe(200);
    } else if (r < 0.4) {
      const d = pick(devices);
      const before = await d.call('GET', key);
      if (before.status === 200) {
        seenBy.add(before.text);
        await d.call('DELETE', key);
      }
    } else if (r < 0.5) {
      const before = await remoteCall('GET', `/${bucket}/${key}`);
      const value = `v${++counter} remote`;
      parent.set(value, before.status === 200 ? before.text : null);
      expect((await remoteCall('PUT', `/${bucket}/${key}`, value)).status).toBe(200);
    } else if (r < 0.55) {
      const before = await remoteCall('GET', `/${bucket}/${key}`);
      if (before.status === 200) {
        seenBy.add(before.text);
        await remoteCall('DELETE', `/${bucket}/${key}`);
      }
    } else {
      await trySync(pick(devices));
    }
  }
  const faulted = proxy?.requests().filter((r) => r.fault !== undefined).length ?? 0;
  proxy?.clear();
  // Everyone online: sync until a full pass changes nothing.
  for (let pass = 0; pass < 6; pass++) {
    let changed = 0;
    for (const d of devices) {
      const [round] = await d.replicas.syncNow({ allowDeletes: true });
      changed += round!.pushed.length + round!.pulled.length + round!.deletedLocal.length + round!.deletedRemote.length + round!.deferred.length;
    }
    if (changed === 0) break;
  }

  const remoteState = await stateOf(async () => (await remoteCall('GET', `/${bucket}?list-type=2`)).text, (k) => remoteCall('GET', `/${bucket}/${encodeS3Key(k)}`));
  for (const d of devices) {
    const local = await stateOf(async () => (await d.call('GET', '')).text, (k) => d.call('GET', k));
    expect([...local.entries()].sort(), `${d.name} converged with the remote (seed ${seed})`).toEqual([...remoteState.entries()].sort());
    expect(integrity(await contents(d.store))).toEqual(SOUND);
    expect((await d.replicas.status())[0]!.pending, `${d.name}'s outbox is empty`).toBe(0);
  }
  const present = new Set(remoteState.values());
  const parents = new Set([...parent.values()].filter((p): p is string => p !== null));
  const lost = [...parent.keys()].filter((v) => !present.has(v) && !parents.has(v) && !seenBy.has(v));
  expect(lost, `values lost (seed ${seed}, ${counter} written)`).toEqual([]);
  return { written: counter, keys: remoteState.size, faulted };
  }
}

describe('replicas under a seeded random run', () => {
  it('two devices (IndexedDB, LMDB) and another app, 1,000 steps: they converge and no write is lost', { timeout: 180_000 }, async () => {
    const a = await run(20261129, 1000, ['idb', 'lmdb']);
    expect(a.written).toBeGreaterThan(300);
  });

  it('another seed, the other stores (IndexedDB in pieces, IndexedDB), 1,000 steps, on a versioned remote: one device keeps versions (it pulls them), the other does not', { timeout: 180_000 }, async () => {
    await run(7, 1000, ['idb-pieces', 'idb'], { versioned: true });
  });

  it('requests failing at random mid-round (reset, answer lost, 503, a 500 after the write), 800 steps: they still converge and no write is lost', { timeout: 180_000 }, async () => {
    // Seed 404 left a probe object on the remote once (its delete failed): the probe now tries again and rounds sweep them.
    const r = await run(404, 800, ['memory', 'idb'], { faulty: true });
    expect(r.faulted, 'faults injected').toBeGreaterThan(20);
  });
});
