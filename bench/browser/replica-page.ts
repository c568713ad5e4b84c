// Figure 13's in-page half, bundled by esbuild with the AWS SDK v3 and injected only when figure 13
// runs, as `window.__benchReplica`, into two pages: the built site's page (its worker's replicas,
// `window.swbucket.replicas`, and its typed client, `window.swbucket.client`), and the page no
// worker controls, from which the AWS SDK talks to the remote directly (a controlled page's
// requests to another origin would each pass through the worker's fetch event first; the
// replica's own requests, made by the worker, pass through none). Each step times itself with
// performance.now() inside the page and throws on anything unexpected (a size, a count, a status).
import { S3Client, PutObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import type { PageReplicaConfig, ReplicaEvent, ReplicaStatus, RoundResult, ServiceReplicas } from '../../src/browser/replicas.ts';
import { fill } from './fill.ts';
import { MiB } from '../lib/stats.ts';

interface SwClient {
  putObject(b: string, k: string, body: Blob, o?: { checksum?: boolean }): Promise<{ etag: string }>;
  createBucket(b: string): Promise<void>;
  headBucket(b: string): Promise<boolean>;
  deleteBucket(b: string): Promise<void>;
  listObjects(b: string, o?: { prefix?: string; marker?: string; maxKeys?: number }): Promise<{ objects: { key: string }[]; isTruncated: boolean; nextMarker?: string }>;
  deleteObjects(b: string, keys: string[], o?: { quiet?: boolean }): Promise<{ deleted: unknown[]; errors: unknown[] }>;
}

interface Sw {
  client: SwClient;
  replicas: ServiceReplicas;
}

/** The root account of `swbucket serve`: the remote's credentials, the SDK's and the replica's. */
const credentials = { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' };

const sw = (): Sw => (window as unknown as { swbucket: Sw }).swbucket;
const blobs = new Map<string, Blob>();

function fail(message: string): never {
  throw new Error(message);
}
const blob = (id: string): Blob => blobs.get(id) ?? fail(`no blob ${id}`);

/** Runs `n` steps with at most `concurrency` in flight (Infinity: all at once, as Promise.all would). */
async function pool(n: number, concurrency: number, step: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, concurrency) }, async () => {
    while (next < n) await step(next++);
  }));
}

let db: IDBDatabase | undefined;
/** The page's own database for `sdkGetStore`: one object store of bodies by key. */
const pulledDb = async (): Promise<IDBDatabase> => db ??= await new Promise<IDBDatabase>((resolve, reject) => {
  const r = indexedDB.open('r13-sdk-pulled', 1);
  r.onupgradeneeded = () => r.result.createObjectStore('o');
  r.onsuccess = () => resolve(r.result);
  r.onerror = () => reject(r.error);
});
/** Runs `requests` in `t`; resolves when `t` completes. */
const done = (t: IDBTransaction, requests: (t: IDBTransaction) => void): Promise<void> => new Promise((resolve, reject) => {
  t.oncomplete = () => resolve();
  t.onerror = () => reject(t.error);
  t.onabort = () => reject(t.error ?? new Error('aborted'));
  requests(t);
});

let sdk: S3Client | undefined;
/**
 * The AWS SDK's S3Client as an app uploading Blobs from a browser sets it up (figure 11):
 * checksums only when an operation requires them (aws-sdk-js-v3 #6834: a Blob body otherwise cannot
 * be sent), so PutObject sends UNSIGNED-PAYLOAD as the replica does; path style, as the replica's
 * remote is configured (forcePathStyle).
 */
const s3 = (): S3Client => sdk ?? fail('setRemote first');

/** One GetObject, its body read as a Blob or as bytes and checked for `size` bytes. */
async function sdkRead(bucket: string, key: string, size: number, as: 'blob' | 'bytes'): Promise<Blob | Uint8Array> {
  const out = await s3().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const res = new Response(out.Body as ReadableStream<Uint8Array>);
  const body = as === 'blob' ? await res.blob() : new Uint8Array(await res.arrayBuffer());
  const got = body instanceof Blob ? body.size : body.byteLength;
  if (got !== size) fail(`SDK GET ${key}: ${got} bytes, expected ${size}`);
  return body;
}

/** Every status event the worker announced, with the page's time when it arrived. */
const events: { at: number; e: ReplicaEvent }[] = [];
let listening = false;
const listen = () => {
  if (listening) return;
  listening = true;
  sw().replicas.on((e) => {
    if (events.length > 200_000) events.splice(0, 100_000);
    events.push({ at: performance.now(), e });
  });
};

/** A round started without waiting for it, awaited later (the live side of the acknowledgement rows). */
let kicked: { started: number; done: Promise<{ ended: number; result?: RoundResult[]; error?: string }> } | undefined;

const benchReplica = {
  setRemote(endpoint: string) {
    sdk = new S3Client({
      endpoint, region: 'us-east-1', forcePathStyle: true, credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
    });
  },

  makeBlob(id: string, size: number, seed: number): number {
    blobs.set(id, new Blob([fill(size, seed)]));
    return size;
  },
  dropBlob(id: string) {
    blobs.delete(id);
  },

  // ---- the AWS SDK, straight to the remote (the page no worker controls)

  /** `n` PutObjects of the blob to `{prefix}{i}`, `concurrency` at a time (Infinity: all at once); ms. */
  async sdkPut(bucket: string, prefix: string, id: string, n: number, concurrency: number | null): Promise<number> {
    const body = blob(id);
    const t0 = performance.now();
    await pool(n, concurrency ?? Infinity, async (i) => {
      await s3().send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}${i}`, Body: body }));
    });
    return performance.now() - t0;
  },

  /** `n` GetObjects of `{prefix}{i}`, each body read into a Blob and checked for `size` bytes; ms. */
  async sdkGet(bucket: string, prefix: string, size: number, n: number, concurrency: number | null): Promise<number> {
    const got: (Blob | Uint8Array)[] = [];
    const t0 = performance.now();
    await pool(n, concurrency ?? Infinity, async (i) => {
      got.push(await sdkRead(bucket, `${prefix}${i}`, size, 'blob'));
    });
    const ms = performance.now() - t0;
    got.length = 0;
    return ms;
  },

  /**
   * The SDK's GetObjects as `sdkGet`, each body then kept in IndexedDB as an app pulling by hand
   * would at its best: bodies up to 1 MiB as bytes and larger ones as Blobs (as swbucket keeps
   * them), committed strictly (as swbucket commits), whatever arrived while the last commit ran
   * going together in the next transaction (a transaction per object would queue each behind the
   * others' commits). Timed until the last commit; the database is emptied before (not timed).
   */
  async sdkGetStore(bucket: string, prefix: string, size: number, n: number, concurrency: number | null): Promise<number> {
    const db = await pulledDb();
    await done(db.transaction('o', 'readwrite', { durability: 'strict' }), (t) => t.objectStore('o').clear());
    const waiting: [string, Uint8Array | Blob][] = [];
    let writing: Promise<void> | undefined;
    const commit = async (): Promise<void> => {
      while (waiting.length > 0) {
        const these = waiting.splice(0);
        await done(db.transaction('o', 'readwrite', { durability: 'strict' }), (t) => {
          for (const [k, v] of these) t.objectStore('o').put(v, k);
        });
      }
      writing = undefined;
    };
    const t0 = performance.now();
    await pool(n, concurrency ?? Infinity, async (i) => {
      waiting.push([`${prefix}${i}`, await sdkRead(bucket, `${prefix}${i}`, size, size <= MiB ? 'bytes' : 'blob')]);
      writing ??= commit();
    });
    while (writing) await writing;
    const ms = performance.now() - t0;
    const count = await new Promise<number>((resolve, reject) => {
      const r = db.transaction('o').objectStore('o').count();
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    if (count !== n) fail(`SDK GET into IndexedDB: ${count} stored, expected ${n}`);
    return ms;
  },

  // ---- swbucket's worker (the built site's page)

  /** Local PUTs through the page's typed client (checksum off, as in figure 2); ms. */
  async localPut(bucket: string, prefix: string, id: string, n: number, concurrency: number): Promise<number> {
    const body = blob(id);
    const t0 = performance.now();
    await pool(n, concurrency, async (i) => {
      await sw().client.putObject(bucket, `${prefix}${i}`, body, { checksum: false });
    });
    return performance.now() - t0;
  },

  async ensureBucket(bucket: string): Promise<void> {
    if (!(await sw().client.headBucket(bucket))) await sw().client.createBucket(bucket);
  },

  /** Deletes every object of a local bucket, and the bucket unless `keep` (clean-up, not timed). */
  async dropBucket(bucket: string, keep = false): Promise<void> {
    const c = sw().client;
    if (!(await c.headBucket(bucket))) return;
    for (;;) {
      const page = await c.listObjects(bucket, { maxKeys: 1000 });
      if (page.objects.length === 0) break;
      const r = await c.deleteObjects(bucket, page.objects.map((o) => o.key), { quiet: true });
      if (r.errors.length) fail(`delete in ${bucket}: ${r.errors.length} errors`);
    }
    if (!keep) await c.deleteBucket(bucket);
  },

  /** service.replicas.add(); the remote with the root credentials of `swbucket serve`, path style. */
  async add(o: { bucket: string; endpoint: string; remoteBucket: string } & Partial<PageReplicaConfig>): Promise<void> {
    listen();
    const { endpoint, remoteBucket, ...rest } = o;
    await sw().replicas.add({ ...rest, remote: { endpoint, region: 'us-east-1', bucket: remoteBucket, forcePathStyle: true, credentials } });
  },

  async remove(bucket: string): Promise<void> {
    await sw().replicas.remove(bucket);
  },
  async pause(bucket: string): Promise<void> {
    await sw().replicas.pause(bucket);
  },
  async status(bucket: string): Promise<ReplicaStatus | null> {
    return (await sw().replicas.status()).find((s) => s.bucket === bucket) ?? null;
  },
  /** One service.replicas.status() (every replica's: the worker reads each one's bucket view), ms. */
  async statusMs(bucket: string): Promise<number> {
    const t0 = performance.now();
    const all = await sw().replicas.status();
    const ms = performance.now() - t0;
    if (!all.some((s) => s.bucket === bucket)) fail(`no replica of ${bucket}`);
    return ms;
  },

  /** syncNow({ bucket }); what it pushed and pulled, and its ms. */
  async syncNow(bucket: string): Promise<{ ms: number; pushed: number; pulled: number; deferred: number }> {
    const t0 = performance.now();
    const rounds = await sw().replicas.syncNow({ bucket });
    const ms = performance.now() - t0;
    return {
      ms, pushed: rounds.reduce((n, r) => n + r.pushed.length, 0), pulled: rounds.reduce((n, r) => n + r.pulled.length, 0),
      deferred: rounds.reduce((n, r) => n + r.deferred.length, 0),
    };
  },

  /**
   * The timed round: the replica switched to two-way (add() again with the same remote, so the
   * remote's guarantees found by the first round's probe are kept and not probed again; add()
   * starts a round at once) and syncNow() until that round completed. Also: when the first and
   * last key were pushed or pulled (progress events, as they reached the page), ms after the start.
   */
  async timedRound(o: { bucket: string; endpoint: string; remoteBucket: string } & Partial<PageReplicaConfig>): Promise<{
    ms: number; addMs: number; pushed: number; pulled: number; deferred: number; firstKey: number; lastKey: number; progress: number;
  }> {
    listen();
    const from = events.length;
    const t0 = performance.now();
    await benchReplica.add({ ...o, mode: 'two-way' });
    const addMs = performance.now() - t0;
    const rounds = await sw().replicas.syncNow({ bucket: o.bucket });
    const ms = performance.now() - t0;
    const progress = events.slice(from).filter((x) => x.e.type === 'progress' && x.e.bucket === o.bucket);
    return {
      ms, addMs, pushed: rounds.reduce((n, r) => n + r.pushed.length, 0), pulled: rounds.reduce((n, r) => n + r.pulled.length, 0),
      deferred: rounds.reduce((n, r) => n + r.deferred.length, 0),
      firstKey: progress.length ? progress[0]!.at - t0 : NaN, lastKey: progress.length ? progress.at(-1)!.at - t0 : NaN, progress: progress.length,
    };
  },

  /**
   * Waits until the worker has announced nothing about `bucket` for `quietMs` (at most `maxMs`):
   * after writes to a replicated bucket, the status announcements each write sets off, and any
   * round they set off. Since event `since.count`: how many status announcements came, and how
   * long after `since.at` the last one, the last event of any kind, and the first and last key
   * pushed or pulled (progress events) came.
   */
  async quiet(bucket: string, quietMs: number, maxMs: number, since?: { count: number; at: number }): Promise<{
    announced: number; lastAfterMs: number; lastEventAfterMs: number; firstProgressAfterMs: number; lastProgressAfterMs: number; waitedMs: number;
  }> {
    listen();
    const t0 = performance.now();
    const mine = (x: { e: ReplicaEvent }) => (x.e.type === 'status' ? x.e.status.bucket : x.e.type === 'conflict' ? x.e.conflict.bucket : x.e.bucket) === bucket;
    const lastAt = () => {
      for (let i = events.length - 1; i >= 0; i--) if (mine(events[i]!)) return events[i]!.at;
      return -Infinity;
    };
    while (performance.now() - Math.max(lastAt(), t0) < quietMs && performance.now() - t0 < maxMs) await new Promise((r) => setTimeout(r, 50));
    const after = since ? events.slice(since.count).filter(mine) : [];
    const statuses = after.filter((x) => x.e.type === 'status');
    const progress = after.filter((x) => x.e.type === 'progress');
    const rel = (x: { at: number } | undefined) => (x && since ? x.at - since.at : NaN);
    return {
      announced: statuses.length, lastAfterMs: rel(statuses.at(-1)), lastEventAfterMs: rel(after.at(-1)),
      firstProgressAfterMs: rel(progress[0]), lastProgressAfterMs: rel(progress.at(-1)), waitedMs: performance.now() - t0,
    };
  },
  /** Where the event log stands, for quiet()'s `since`. */
  mark(): { count: number; at: number } {
    listen();
    return { count: events.length, at: performance.now() };
  },

  // ---- a local PUT's acknowledgement

  /** `n` PUTs one after another (each acknowledged before the next); when they started (page time) and ms. */
  async ackBatch(bucket: string, prefix: string, id: string, n: number): Promise<{ start: number; ms: number }> {
    const body = blob(id);
    const c = sw().client;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await c.putObject(bucket, `${prefix}${i}`, body, { checksum: false });
    return { start: t0, ms: performance.now() - t0 };
  },

  /** Starts syncNow({ bucket }) and returns at once (when it started, page time); kickedDone() awaits it. */
  kick(bucket: string): number {
    const started = performance.now();
    kicked = {
      started,
      done: sw().replicas.syncNow({ bucket }).then(
        (result) => ({ ended: performance.now(), result }),
        (e: unknown) => ({ ended: performance.now(), error: (e as Error).message }),
      ),
    };
    return started;
  },
  /** The kicked round: when it ended (ms after it started) and what it pushed. */
  async kickedDone(): Promise<{ endedAfterMs: number; pushed: number; error?: string }> {
    const k = kicked ?? fail('nothing kicked');
    kicked = undefined;
    const d = await k.done;
    return { endedAfterMs: d.ended - k.started, pushed: d.result?.reduce((n, r) => n + r.pushed.length, 0) ?? 0, ...(d.error ? { error: d.error } : {}) };
  },
  now(): number {
    return performance.now();
  },
};

export type BenchReplica = typeof benchReplica;
(window as unknown as { __benchReplica: BenchReplica }).__benchReplica = benchReplica;
