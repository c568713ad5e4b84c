// Figure 13: replicas (sw/replica/, docs/replicas.md). A bucket of the built site's worker bound to
// a bucket of `swbucket serve --dialect s3` (in memory, a process of its own started for the
// figure), driven from the site's page through service.replicas, against the AWS SDK v3 moving
// the same objects between a page and the same remote directly (bundled into the page no worker
// controls: bench/browser/replica-page.ts). Every side of a measurement in the same rounds, the
// order rotated, a warm-up round thrown away, medians.
//
//   push   1,000 × 1 KiB, and 10 × 16 MiB, in the local bucket beforehand (not timed), then one
//          round timed until it pushed them all; against the SDK's PutObjects of the same Blobs,
//          all at once (Chromium runs 6 at a time to one host) and 4 at a time (the replica's earlier
//          pool). 16 MiB is at multipartBytes' default (16 MiB): a plain PUT each; a side with
//          multipartBytes 8 MiB pushes them by multipart, in the same rounds.
//   burst  1,000 × 1 KiB PUTs, 8 in flight, into a bucket bound to a live replica against an
//          unbound bucket (one sample each): what the writes cost, the status announcements each
//          sets off, and how long after the last write everything was pushed.
//   pull   the same objects put on the remote beforehand (not timed), then one round of a fresh
//          replicated bucket timed until it pulled them all; against the SDK's GetObjects of them
//          into Blobs.
//   ack    a local PUT's acknowledgement (1 KiB, 40 one after another; 1 MiB, 8): into a bucket
//          bound to a replica that is paused, empty or holding 1,000 objects, and to one that is
//          live (a round pushing as many other writes runs while they are timed), against buckets
//          with no replica holding as much.
import type { Page } from 'playwright-core';
import {
  CreateBucketCommand, DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command, PutObjectCommand, S3Client,
} from '@aws-sdk/client-s3';
import { bundle, call, type Env } from '../lib/env.ts';
import { attachToServiceWorker } from '../lib/cdp.ts';
import { KiB, MiB, median, pairs, rounds, sizeName, spread } from '../lib/stats.ts';
import { row, type Row, type Target } from '../lib/report.ts';
import type { Ctx } from '../lib/context.ts';
import type { BenchReplica } from '../browser/replica-page.ts';
import { fill } from '../browser/fill.ts';
import { serve, type Served } from '../../test/support/serve.ts';
import { LANES } from '../../sw/replica/sync.ts';

const ROOT = { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' };
/** Every replica here syncs on its own only once an hour: no round but the ones the figure asks for (and those writes set off). */
const INTERVAL_MS = 3_600_000;
/** The replica's lanes: how many pushes or pulls a round runs at a time. */
export const REPLICA_LANES = LANES;
/** The SDK's side with fewer requests in flight (the replica's earlier pool). */
const SDK_LIMITED = 4;

export type TSide = 'replica' | 'replicaMp' | 'sdk' | 'sdk4' | 'sdkStore';
export const T_LABEL: Record<TSide, string> = {
  replica: 'replica',
  replicaMp: 'replica, multipartBytes 8 MiB',
  sdk: 'AWS SDK, all at once',
  sdk4: 'AWS SDK, 4 at a time',
  sdkStore: 'AWS SDK into IndexedDB',
};

/** The transfers: which way, how many objects of what size, the sides timed in its rounds. */
const TRANSFERS = [
  { id: 'push-1k', dir: 'push', n: 1000, size: KiB, sides: ['replica', 'sdk', 'sdk4'], budgetMs: 60_000 },
  { id: 'push-16m', dir: 'push', n: 10, size: 16 * MiB, sides: ['replica', 'replicaMp', 'sdk', 'sdk4'], budgetMs: 45_000 },
  { id: 'pull-1k', dir: 'pull', n: 1000, size: KiB, sides: ['replica', 'sdkStore', 'sdk', 'sdk4'], budgetMs: 60_000 },
  { id: 'pull-16m', dir: 'pull', n: 10, size: 16 * MiB, sides: ['replica', 'sdkStore', 'sdk', 'sdk4'], budgetMs: 30_000 },
] as const satisfies readonly { id: string; dir: 'push' | 'pull'; n: number; size: number; sides: readonly TSide[]; budgetMs: number }[];
export type TransferId = (typeof TRANSFERS)[number]['id'];
type Transfer = (typeof TRANSFERS)[number];
/** Local writes before a push (not timed): in flight at once, by size. */
const WRITE_CONCURRENCY = (size: number) => (size >= MiB ? 2 : 8);
const MP_BYTES = 8 * MiB;

export type ASide = 'plain0' | 'paused0' | 'plain' | 'paused' | 'live';
const A_SIDES: readonly ASide[] = ['plain0', 'paused0', 'plain', 'paused', 'live'];
/** Objects the plain, paused and live buckets hold besides the ones timed (an app's bucket is not empty); plain0 and paused0 hold none. */
export const ACK_FILL = 1000;
const ACKS = [
  { size: KiB, n: 40 },
  { size: MiB, n: 8 },
] as const;

export interface TransferSample {
  ms: number;
  /** A replica side: ms of add() (switching it to two-way), and when its first and last key moved (progress events as they reached the page, ms after the start). */
  addMs?: number;
  firstKey?: number;
  lastKey?: number;
}

export interface ReplicaResult {
  rows: Row[];
  remoteUrl: string;
  /** Per transfer and side: the kept samples, ms for the whole set. */
  transfers: Record<TransferId, Partial<Record<TSide, TransferSample[]>>>;
  /** The burst: 1,000 × 1 KiB PUTs, 8 in flight, into a bucket bound to a live replica and into an unbound one. */
  burst?: {
    boundMs: number; unboundMs: number;
    /** Status announcements the bound bucket's writes set off, and when the last one, and the last event of any kind, came after the last write (ms). */
    announced: number; lastStatusAfterMs: number; lastEventAfterMs: number;
    /** Keys still pending once it was quiet (0: all pushed). */
    pending: number;
    /** Per-key events: when the first and the last key was pushed, ms after the last write. */
    firstPushAfterMs: number; lastPushAfterMs: number;
  };
  /** Per size and side: ms per acknowledged PUT (kept samples). */
  acks: Record<number, Record<ASide, number[]>>;
  /** The live side: share of the timed PUTs during which the round started just before was still running. */
  liveOverlap: Record<number, number[]>;
  /** Status announcements per PUT, per size and replicated side. */
  ackAnnounced: Record<number, Partial<Record<ASide, number[]>>>;
  /**
   * service.replicas.status() from the page, median ms: with only the empty bucket's replica bound
   * (`empty`), and what the ACK_FILL-object bucket's added to it (`full`): what one announcement reads.
   */
  statusMs?: { empty: number; full: number };
  /**
   * Per transfer: its replica round in the warm-up round (not kept) traced inside the worker: the
   * requests to the remote and the IndexedDB transactions its lanes waited on.
   */
  traces: Partial<Record<TransferId, RoundTrace>>;
  /** One raw strict IndexedDB put of 1 KiB from the page no worker controls, median ms: the commit each pushed or pulled key waits for. */
  strictPutMs?: number;
}

const callR = <T>(page: Page, name: keyof BenchReplica, ...args: unknown[]): Promise<T> => page.evaluate(
  ([n, a]) => (window as unknown as { __benchReplica: Record<string, (...x: unknown[]) => unknown> }).__benchReplica[n as string]!(...(a as unknown[])),
  [name, args] as const,
) as Promise<T>;

/** The remote's admin in this process (not timed): buckets made and emptied, objects put for a pull. */
function admin(url: string) {
  const s3 = new S3Client({
    endpoint: url, region: 'us-east-1', forcePathStyle: true, credentials: ROOT,
    requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const keys = async (Bucket: string): Promise<string[]> => {
    const out: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket, ...(token ? { ContinuationToken: token } : {}) }));
      out.push(...(page.Contents ?? []).map((c) => c.Key!));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  };
  return {
    s3,
    keys,
    async create(Bucket: string) {
      await s3.send(new CreateBucketCommand({ Bucket }));
    },
    async drop(Bucket: string) {
      const all = await keys(Bucket).catch(() => null);
      if (all === null) return;
      for (let i = 0; i < all.length; i += 1000) {
        await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: all.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true } }));
      }
      await s3.send(new DeleteBucketCommand({ Bucket }));
    },
    async putMany(Bucket: string, prefix: string, body: Buffer, n: number, concurrency: number) {
      let next = 0;
      await Promise.all(Array.from({ length: Math.min(n, concurrency) }, async () => {
        while (next < n) {
          const i = next++;
          await s3.send(new PutObjectCommand({ Bucket, Key: `${prefix}${i}`, Body: body }));
        }
      }));
    },
  };
}

interface Timed { ms: number; addMs: number; pushed: number; pulled: number; deferred: number; firstKey: number; lastKey: number }

/** One kind of call traced inside the worker: how many, their summed ms, the median one. */
export interface Traced { n: number; sumMs: number; medianMs: number }
/** A replica round traced inside the worker: its wall ms, and by kind (`fetch PUT`, `write` transactions, `read` ones). */
export interface RoundTrace { wallMs: number; kinds: Record<string, Traced> }

// Runs inside the service worker: wraps fetch (until the answer's headers) and IndexedDB
// transactions (from creation to complete: the wait for the stores they cover counts), records
// each call, and can put the originals back.
const TRACE_ON = `(() => {
  if (self.__r13) { self.__r13.rec.length = 0; return 'reset'; }
  const rec = [];
  const fetch0 = self.fetch;
  const tx0 = IDBDatabase.prototype.transaction;
  self.fetch = function (input, init) {
    const t0 = performance.now();
    const m = (init && init.method) || (input && input.method) || 'GET';
    const p = fetch0.call(this, input, init);
    p.then(() => rec.push(['fetch ' + m, performance.now() - t0]), () => {});
    return p;
  };
  IDBDatabase.prototype.transaction = function (stores, mode, opts) {
    const t0 = performance.now();
    const t = tx0.call(this, stores, mode, opts);
    t.addEventListener('complete', () => rec.push([mode === 'readwrite' ? 'write' : 'read', performance.now() - t0]));
    return t;
  };
  self.__r13 = { rec, off() { self.fetch = fetch0; IDBDatabase.prototype.transaction = tx0; delete self.__r13; } };
  return 'on';
})()`;
const TRACE_OFF = `(() => { const r = self.__r13 ? self.__r13.rec.slice() : []; if (self.__r13) self.__r13.off(); return r; })()`;

/** Runs `run` with the worker's fetch and IndexedDB transactions traced, then puts them back. */
async function traced<T>(env: Env, run: () => Promise<T>): Promise<{ value: T; trace: RoundTrace }> {
  const w = await attachToServiceWorker(env);
  try {
    await w.send('Runtime.evaluate', { expression: TRACE_ON });
    const t0 = Date.now();
    let value: T;
    let rec: [string, number][];
    try {
      value = await run();
    } finally {
      rec = (await w.send<{ result: { value: [string, number][] } }>('Runtime.evaluate', { expression: TRACE_OFF, returnByValue: true })).result.value;
    }
    const wallMs = Date.now() - t0;
    const kinds: Record<string, Traced> = {};
    const by = new Map<string, number[]>();
    for (const [k, ms] of rec) by.set(k, [...(by.get(k) ?? []), ms]);
    for (const [k, all] of by) kinds[k] = { n: all.length, sumMs: all.reduce((x, y) => x + y, 0), medianMs: median(all) };
    return { value, trace: { wallMs, kinds } };
  } finally {
    await w.close();
  }
}

export async function replicaFigure({ env, log }: Ctx): Promise<ReplicaResult> {
  const page = env.pages.sw;
  const raw = env.pages.raw;
  const t0 = Date.now();
  let remote: Served | undefined;
  const replicated = new Set<string>();
  const localBuckets = new Set<string>();
  const remoteBuckets = new Set<string>();
  let a: ReturnType<typeof admin> | undefined;
  const result: ReplicaResult = { rows: [], remoteUrl: '', transfers: {} as ReplicaResult['transfers'], acks: {}, liveOverlap: {}, ackAnnounced: {}, traces: {} };
  const f0 = (x: number) => x.toFixed(0);
  const f2 = (x: number) => x.toFixed(2);
  try {
    remote = await serve(['--dialect', 's3']);
    result.remoteUrl = remote.url;
    const endpoint = remote.url;
    a = admin(endpoint);
    const script = await bundle('replica-page.ts');
    await page.addScriptTag({ content: script });
    await raw.addScriptTag({ content: script });
    await callR(raw, 'setRemote', endpoint);
    log(`  swbucket serve --dialect s3 (in memory) at ${endpoint}; the AWS SDK bundled into the site's page and the page no worker controls in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    for (const p of [page, raw]) {
      await callR(p, 'makeBlob', 'k1', KiB, 0x1001);
      await callR(p, 'makeBlob', 'm1', MiB, 0x1002);
      await callR(p, 'makeBlob', 'm16', 16 * MiB, 0x1016);
    }
    const blobOf = (size: number) => (size === KiB ? 'k1' : size === MiB ? 'm1' : 'm16');

    /** A local bucket bound to a remote one, its first round run (it probes the remote's conditional writes): a later round probes nothing. */
    const bind = async (bucket: string, remoteBucket: string, o: { mode?: 'two-way' | 'push' | 'pull'; multipartBytes?: number } = {}) => {
      await callR(page, 'add', { bucket, endpoint, remoteBucket, intervalMs: INTERVAL_MS, ...o });
      replicated.add(bucket);
      return callR<{ pushed: number; pulled: number; deferred: number }>(page, 'syncNow', bucket);
    };
    const unbindAndDrop = async (bucket: string) => {
      if (replicated.has(bucket)) {
        await callR(page, 'remove', bucket);
        replicated.delete(bucket);
      }
      await callR(page, 'dropBucket', bucket);
      localBuckets.delete(bucket);
    };
    const newRemote = async (name: string) => {
      await a!.create(name);
      remoteBuckets.add(name);
    };
    const dropRemote = async (name: string) => {
      await a!.drop(name);
      remoteBuckets.delete(name);
    };

    // ---- The pull sets, put on the remote once (not timed).
    const pullBucket = (t: Transfer) => `r13-${t.id}`;
    for (const t of TRANSFERS) {
      if (t.dir !== 'pull') continue;
      await newRemote(pullBucket(t));
      await a.putMany(pullBucket(t), 'o/', Buffer.from(fill(t.size, t.size === KiB ? 0x2001 : 0x2016)), t.n, 8);
    }

    // ---- Transfers: push and pull, the replica against the SDK.
    let serial = 0;
    const unboundWrites: number[] = [];
    const runTransfer = async (t: Transfer) => {
      const sides = t.sides as readonly TSide[];
      const samples = Object.fromEntries(sides.map((s) => [s, [] as TransferSample[]])) as Partial<Record<TSide, TransferSample[]>>;
      result.transfers[t.id] = samples;
      const started = Date.now();
      /** The replica's timed round; in the warm-up round (not kept), traced inside the worker. */
      const timedRound = async (side: TSide, keep: boolean, config: Record<string, unknown>): Promise<Timed> => {
        if (keep || side !== 'replica') return callR<Timed>(page, 'timedRound', config);
        const { value, trace } = await traced(env, () => callR<Timed>(page, 'timedRound', config));
        result.traces[t.id] = trace;
        return value;
      };
      const kept = await rounds(sides, 5, async (side, keep) => {
        const n = ++serial;
        if (side === 'replica' || side === 'replicaMp') {
          const bucket = `r13-${t.id}-${n}`;
          const remoteBucket = t.dir === 'push' ? bucket : pullBucket(t);
          const mp = side === 'replicaMp' ? { multipartBytes: MP_BYTES } : {};
          let timed: Timed;
          if (t.dir === 'push') {
            // The objects written first, then the bucket bound: binding puts what a bucket holds in
            // its outbox, as each write into a bound bucket does (the burst below measures what
            // those writes cost). Bound in 'pull' mode, whose first round pushes nothing.
            await callR(page, 'ensureBucket', bucket);
            localBuckets.add(bucket);
            const w = await callR<number>(page, 'localPut', bucket, 'o/', blobOf(t.size), t.n, WRITE_CONCURRENCY(t.size));
            if (keep && t.size === KiB) unboundWrites.push(w);
            await newRemote(remoteBucket);
            await bind(bucket, remoteBucket, { mode: 'pull', ...mp });
            // Timed: add() again in two-way (the same remote: its guarantees are kept, no probe; add() starts a round) and syncNow() until it completed.
            timed = await timedRound(side, keep, { bucket, endpoint, remoteBucket, intervalMs: INTERVAL_MS, ...mp });
          } else {
            localBuckets.add(bucket);
            // A fresh bucket, bound in 'push' mode (its first round probes and pulls nothing), then the timed round in two-way pulls all.
            await bind(bucket, remoteBucket, { mode: 'push' });
            timed = await timedRound(side, keep, { bucket, endpoint, remoteBucket, intervalMs: INTERVAL_MS });
          }
          const moved = t.dir === 'push' ? timed.pushed : timed.pulled;
          if (moved !== t.n || timed.deferred !== 0) throw new Error(`${t.id}, ${side}: the round ${t.dir}ed ${moved} of ${t.n} (deferred ${timed.deferred})`);
          if (keep) samples[side]!.push({ ms: timed.ms, addMs: timed.addMs, firstKey: timed.firstKey, lastKey: timed.lastKey });
          await unbindAndDrop(bucket);
          if (t.dir === 'push') await dropRemote(remoteBucket);
        } else {
          const concurrency = side === 'sdk4' ? SDK_LIMITED : null;
          let ms: number;
          if (t.dir === 'push') {
            const remoteBucket = `r13-${t.id}-${side}-${n}`;
            await newRemote(remoteBucket);
            ms = await callR<number>(raw, 'sdkPut', remoteBucket, 'o/', blobOf(t.size), t.n, concurrency);
            if ((await a!.keys(remoteBucket)).length !== t.n) throw new Error(`${t.id}, ${side}: the remote holds a wrong count`);
            await dropRemote(remoteBucket);
          } else {
            ms = await callR<number>(raw, side === 'sdkStore' ? 'sdkGetStore' : 'sdkGet', pullBucket(t), 'o/', t.size, t.n, concurrency);
          }
          if (keep) samples[side]!.push({ ms });
        }
      }, { budgetMs: t.budgetMs, minReps: 3 });
      const m = (side: TSide) => median(samples[side]!.map((s) => s.ms));
      const rep = samples.replica!;
      log(`  ${t.dir} ${t.n} × ${sizeName(t.size)}, ms for the set (${kept} rounds in ${f0((Date.now() - started) / 1000)} s): `
        + sides.map((s) => `${T_LABEL[s]} ${f0(m(s))}`).join(' | ')
        + `; the replica's add() ${f0(median(rep.map((s) => s.addMs!)))} ms, its first key ${t.dir}ed at ${f0(median(rep.map((s) => s.firstKey!)))} ms, the last at ${f0(median(rep.map((s) => s.lastKey!)))} ms`);
      const tr = result.traces[t.id];
      if (tr) {
        log(`    its warm-up round traced in the worker (${f0(tr.wallMs)} ms): ` + Object.entries(tr.kinds).sort((x, y) => y[1].sumMs - x[1].sumMs)
          .map(([k, v]) => `${k} ×${v.n} ${f0(v.sumMs)} ms (median ${f2(v.medianMs)})`).join(', '));
      }
    };

    for (const t of TRANSFERS) {
      if (t.dir !== 'push') continue;
      await runTransfer(t);
      if (t.id !== 'push-1k') continue;

      // ---- The burst: 1,000 writes into a bound bucket (a live replica, two-way) and into an unbound one, one sample each.
      const bound = `r13-burst-bound`;
      const unbound = `r13-burst-unbound`;
      await callR(page, 'ensureBucket', bound);
      await callR(page, 'ensureBucket', unbound);
      localBuckets.add(bound).add(unbound);
      await newRemote(bound);
      await bind(bound, bound);
      const unboundMs = await callR<number>(page, 'localPut', unbound, 'o/', 'k1', 1000, 8);
      const before = await callR<{ count: number; at: number }>(page, 'mark');
      const boundMs = await callR<number>(page, 'localPut', bound, 'o/', 'k1', 1000, 8);
      const after = await callR<{ count: number; at: number }>(page, 'mark');
      const q = await callR<{ announced: number; lastAfterMs: number; lastEventAfterMs: number; firstProgressAfterMs: number; lastProgressAfterMs: number }>(
        page, 'quiet', bound, 1500, 180_000, { count: before.count, at: after.at });
      const st = await callR<{ pending: number } | null>(page, 'status', bound);
      result.burst = {
        boundMs, unboundMs, announced: q.announced, lastStatusAfterMs: q.lastAfterMs, lastEventAfterMs: q.lastEventAfterMs,
        pending: st?.pending ?? NaN, firstPushAfterMs: q.firstProgressAfterMs, lastPushAfterMs: q.lastProgressAfterMs,
      };
      log(`  1,000 × 1 KiB PUTs, 8 in flight: into a bucket bound to a live replica ${f0(boundMs)} ms, into an unbound one ${f0(unboundMs)} ms; `
        + `${q.announced} status announcements, the last ${f0(q.lastAfterMs)} ms after the last write; keys pushed from ${f0(q.firstProgressAfterMs)} to ${f0(q.lastProgressAfterMs)} ms after it; ${st?.pending} pending once quiet`);
      await unbindAndDrop(bound);
      await unbindAndDrop(unbound);
      await dropRemote(bound);
    }
    for (const t of TRANSFERS) if (t.dir === 'pull') await runTransfer(t);

    // ---- A local PUT's acknowledgement: no replica, a paused one (empty bucket and 1,000 objects), a live one.
    const ackBucket = (side: ASide) => `r13-ack-${side}`;
    const statusMs: Partial<Record<ASide, number>> = {};
    for (const side of A_SIDES) {
      const bucket = ackBucket(side);
      await callR(page, 'ensureBucket', bucket);
      localBuckets.add(bucket);
      if (!side.endsWith('0')) await callR(page, 'localPut', bucket, 'fill/', 'k1', ACK_FILL, 8);
      if (side.startsWith('plain')) continue;
      await newRemote(bucket);
      // Bound with what it holds: its first round pushes it all (a second one if add()'s own round ran first and syncNow joined it).
      const first = await bind(bucket, bucket);
      const fillN = side.endsWith('0') ? 0 : ACK_FILL;
      if (first.pushed < fillN) {
        const again = await callR<{ pushed: number }>(page, 'syncNow', bucket);
        if (first.pushed + again.pushed < fillN) throw new Error(`ack ${side}: pushed ${first.pushed + again.pushed} of ${fillN}`);
      }
      if (side.startsWith('paused')) await callR(page, 'pause', bucket);
      await callR(page, 'quiet', bucket, 400, 60_000);
      // What a status announcement reads (the replica records, the bucket, its outbox and the
      // objects it names, its conflicts), timed from the page: status() answers for every
      // replica, so with paused0 alone bound, then with paused beside it.
      if (side === 'paused0' || side === 'paused') {
        const ms: number[] = [];
        for (let i = 0; i < 7; i++) ms.push(await callR<number>(page, 'statusMs', bucket));
        statusMs[side] = median(ms.slice(2));
      }
    }
    result.statusMs = { empty: statusMs.paused0!, full: statusMs.paused! - statusMs.paused0! };
    log(`  service.replicas.status() from the page: ${f2(statusMs.paused0!)} ms with the empty bucket's replica alone, ${f2(statusMs.paused!)} ms with the ${ACK_FILL.toLocaleString('en')}-object bucket's beside it`);

    for (const { size, n } of ACKS) {
      const per = Object.fromEntries(A_SIDES.map((s) => [s, [] as number[]])) as Record<ASide, number[]>;
      result.acks[size] = per;
      const overlap: number[] = (result.liveOverlap[size] = []);
      const announced: Partial<Record<ASide, number[]>> = (result.ackAnnounced[size] = { paused0: [], paused: [], live: [] });
      const id = blobOf(size);
      const started = Date.now();
      const kept = await rounds(A_SIDES, 5, async (side, keep) => {
        const bucket = ackBucket(side);
        let kickedAt = NaN;
        if (side === 'live') {
          // As many other writes of the size, made now (not timed) and pushed by a round started
          // just before the timed PUTs: a sync in progress while they are acknowledged.
          await callR(page, 'localPut', bucket, `bg-${size}/`, id, n, 1);
          kickedAt = await callR<number>(page, 'kick', bucket);
        }
        const before = await callR<{ count: number; at: number }>(page, 'mark');
        const { start, ms } = await callR<{ start: number; ms: number }>(page, 'ackBatch', bucket, `ack-${size}/`, id, n);
        if (side === 'live') {
          const k = await callR<{ endedAfterMs: number; pushed: number; error?: string }>(page, 'kickedDone');
          if (k.error) throw new Error(`ack live: the round failed: ${k.error}`);
          if (k.pushed < n) throw new Error(`ack live: the round started before the timed PUTs pushed ${k.pushed} of ${n}`);
          if (keep) overlap.push(Math.max(0, Math.min(1, (kickedAt + k.endedAfterMs - start) / ms)));
          // What the timed PUTs left pending is pushed now, so that no round runs during another side's turn.
          for (let i = 0; i < 5; i++) {
            const s = await callR<{ deferred: number }>(page, 'syncNow', bucket);
            const st = await callR<{ pending: number } | null>(page, 'status', bucket);
            if (s.deferred === 0 && (st?.pending ?? 0) === 0) break;
          }
        }
        // The announcements the writes set off are let finish before the next side's turn.
        const q = await callR<{ announced: number }>(page, 'quiet', bucket, 300, 30_000, before);
        if (keep) {
          per[side].push(ms / n);
          if (announced[side]) announced[side]!.push(q.announced / n);
        }
      }, { budgetMs: 45_000 });
      log(`  PUT ${sizeName(size)} acknowledged, ms per PUT (${n} one after another; ${kept} rounds in ${f0((Date.now() - started) / 1000)} s): `
        + A_SIDES.map((s) => `${s} ${f2(median(per[s]))}`).join(' | ')
        + `; live: the round ran through ${f0(100 * median(overlap))}% of the timed PUTs; status announcements per PUT: `
        + (['paused0', 'paused', 'live'] as const).map((s) => `${s} ${f2(median(announced[s]!))}`).join(', '));
    }

    // A strict IndexedDB commit on this disk (the page no worker controls, raw IndexedDB): what each pushed or pulled key's own write waits for.
    await call(raw, 'makeBlob', 'r13-k1', KiB, 0x1001);
    const strict: number[] = [];
    for (let i = 0; i < 9; i++) strict.push(await call<number>(raw, 'idbPutDurability', `r13-strict-${i}`, 'r13-k1', 'strict'));
    await call(raw, 'dropBlob', 'r13-k1');
    result.strictPutMs = median(strict.slice(2));
    log(`  a raw strict IndexedDB put of 1 KiB from the page: ${f2(result.strictPutMs)} ms (median of 7)`);

    result.rows = rowsOf(result);
    return result;
  } finally {
    for (const b of replicated) await callR(page, 'remove', b).catch(() => {});
    for (const b of localBuckets) await callR(page, 'dropBucket', b).catch(() => {});
    for (const p of [page, raw]) {
      for (const id of ['k1', 'm1', 'm16']) await callR(p, 'dropBlob', id).catch(() => {});
    }
    a?.s3.destroy();
    await remote?.stop();
  }
}

const TRANSFER_TARGET: Target = { op: '<=', value: 1.3 };
const ACK_TARGET: Target = { op: '<=', value: 1.1 };

function rowsOf(r: ReplicaResult): Row[] {
  const rows: Row[] = [];
  const f0 = (x: number) => x.toFixed(0);
  for (const t of TRANSFERS) {
    const s = r.transfers[t.id];
    const ms = (side: TSide) => s[side]!.map((x) => x.ms);
    const sdk = median(ms('sdk'));
    const sdk4 = median(ms('sdk4'));
    // A pull's baseline stores what it GETs, as the replica does (the same transfer: objects
    // from the remote kept in this browser); the SDK's GETs into memory only are reported beside.
    const stores = t.dir === 'pull';
    const base = stores ? median(ms('sdkStore')) : sdk;
    for (const side of ['replica', 'replicaMp'] as const) {
      if (!s[side]) continue;
      const rep = median(ms(side));
      const mp = side === 'replicaMp';
      const what = t.dir === 'push'
        ? `${t.n.toLocaleString('en')} × ${sizeName(t.size)} in the local bucket before (not timed); timed: add() switching its replica to two-way, then syncNow() until all were pushed`
        : `${t.n.toLocaleString('en')} × ${sizeName(t.size)} put on the remote before (not timed); timed: add() switching a fresh bucket's replica to two-way, then syncNow() until all were pulled`;
      const how = t.dir === 'pull' ? 'each a GET read into a Blob, its MD5 computed, stored in its own write'
        : mp ? `each by multipart upload (multipartBytes ${sizeName(MP_BYTES)}: 2 parts of 8 MiB, one after another, each journaled)`
          : t.size >= MiB ? 'each a plain PUT (16 MiB is not over multipartBytes\' default, 16 MiB)' : 'each a plain PUT';
      const rate = t.size >= MiB
        ? `${(t.n * t.size / MiB / (rep / 1000)).toFixed(0)} vs ${(t.n * t.size / MiB / (base / 1000)).toFixed(0)} MiB/s`
        : `${(t.n / (rep / 1000)).toFixed(0)} vs ${(t.n / (base / 1000)).toFixed(0)} objects/s`;
      const baseline = stores
        ? `baseline: the SDK's GetObjects of the same objects from the page no worker controls, all at once (Chromium runs 6 at a time to one host), each body kept in the page's own IndexedDB as it arrives (up to 1 MiB as bytes, larger as a Blob; strict commits, what arrived during one commit going together in the next); into memory only (Blobs, nothing stored) ${f0(sdk)} ms (ratio ${(rep / sdk).toFixed(2)}), 4 at a time ${f0(sdk4)} ms`
        : `baseline: the SDK's PutObjects of the same Blobs from the page no worker controls, all at once (Chromium runs 6 at a time to one host); 4 at a time ${f0(sdk4)} ms (ratio ${(rep / sdk4).toFixed(2)})`;
      const notes = [
        what, `the replica ${how}, ${REPLICA_LANES} at a time`, baseline, rate,
        `ms replica ${spread(ms(side), 0)}, SDK ${spread(ms(stores ? 'sdkStore' : 'sdk'), 0)}`,
        `the replica's first key ${t.dir}ed at ${f0(median(s[side]!.map((x) => x.firstKey!)))} ms, the last at ${f0(median(s[side]!.map((x) => x.lastKey!)))} ms`,
      ].join('; ');
      const name = `replica ${t.dir} ${t.n.toLocaleString('en')} × ${sizeName(t.size)}${mp ? ` (multipartBytes ${sizeName(MP_BYTES)})` : ''} vs AWS SDK${stores ? ' into IndexedDB' : ''}`;
      rows.push(row(13, name, rep, base, 'ms', mp ? null : TRANSFER_TARGET, notes, pairs(ms(side), ms(stores ? 'sdkStore' : 'sdk'))));
      if (stores) {
        rows.push(row(13, `replica ${t.dir} ${t.n.toLocaleString('en')} × ${sizeName(t.size)} vs AWS SDK into memory`, rep, sdk, 'ms', null,
          `the same rounds; the SDK's GetObjects each read into a Blob with \`new Response(Body).blob()\` (as an app commonly does), nothing stored (a reload would lose them); ms SDK ${spread(ms('sdk'), 0)}`,
          pairs(ms(side), ms('sdk'))));
      }
    }
    if (t.id === 'push-1k' && r.burst) {
      const b = r.burst;
      rows.push(row(13, '1,000 × 1 KiB PUTs, 8 in flight, into a bucket with a live replica vs none', b.boundMs, b.unboundMs, 'ms', null,
        `one sample each, the bound bucket empty before; the writes set off ${b.announced} status announcements (at most one per 200 ms), the last ${f0(b.lastStatusAfterMs)} ms after the last write; `
        + `the replica's round pushed its first key ${f0(b.firstPushAfterMs)} ms and its last ${f0(b.lastPushAfterMs)} ms after the last write; ${b.pending} pending once quiet`));
    }
  }
  for (const { size, n } of ACKS) {
    const per = r.acks[size]!;
    const pairsOf: [ASide, ASide][] = [['paused0', 'plain0'], ['paused', 'plain'], ['live', 'plain']];
    for (const [side, base] of pairsOf) {
      const holds = side === 'paused0' ? 'both buckets empty besides the timed keys' : `both buckets hold ${ACK_FILL.toLocaleString('en')} other objects`;
      const extra = side === 'live'
        ? `a round pushing ${n} other ${sizeName(size)} writes made just before (not timed) ran through ${f0(100 * median(r.liveOverlap[size]!))}% of the timed PUTs (median)`
        : 'the replica paused (pause()): writes go to its outbox, nothing is pushed';
      const label = side === 'paused0' ? 'paused, empty bucket' : side;
      rows.push(row(13, `PUT ${sizeName(size)} ack, replicated (${label}) vs no replica`, median(per[side]), median(per[base]), 'ms', ACK_TARGET,
        `${n} PUTs one after another per sample through the page's typed client, ms per PUT; ${holds}; ${extra}; `
        + `status announcements per PUT ${median(r.ackAnnounced[size]![side]!).toFixed(2)}; ms replicated ${spread(per[side], 2)}, no replica ${spread(per[base], 2)}`,
        pairs(per[side], per[base])));
    }
  }
  return rows;
}
