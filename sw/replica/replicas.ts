// Replicas: buckets bound to remote S3 buckets, each synced by rounds (sync.ts) — at start, soon
// after a local write, on a timer, on demand — with backoff while the remote cannot be reached and a
// stop, saying what to fix, where trying again cannot help. Runtime-neutral: the Node server and
// the service worker run it alike; what differs (a lock between tabs, where temporary credentials
// come from) comes in as options. What a replica is and how it stands is kept in the store
// (the `replicas` table), so a worker that starts with no page open knows its replicas.
import type { BucketRef, ConflictRecord, ObjectHeaders, Store } from '../store/types.ts';
import { ROOT_CREDENTIALS, expiringSoon } from '../../protocol/instance.ts';
import { bucketNameProblem, isValidBucketName } from '../../protocol/address.ts';
import { createRemote, RemoteError, type Credentials, type Remote, type RemoteBucket } from './remote.ts';
import { checkRemote, type CheckResult } from './check.ts';
import { foreground } from './foreground.ts';
import { fetchListed, probe, syncRound, SyncStopped, type ConflictCase, type Guarantees, type Mode, type Policy, type Resolution, type RoundResult, type UploadState } from './sync.ts';
import { SvcError } from '../core/errors.ts';
import type { ReadMissingRange } from '../core/context.ts';

export type { Credentials, Guarantees, Mode, Policy, RemoteBucket };

/** A replica as an app configures it (startService's and startServer's `replicas`). */
export interface ReplicaConfig {
  /** The local bucket (created when missing, owned by the service's root account). */
  bucket: string;
  remote: RemoteBucket & {
    /** Static keys (kept with the replica, so a worker can sync with no page open). */
    credentials?: Credentials;
  };
  /** Temporary credentials from the app's backend, asked again before they expire; never stored. */
  getCredentials?: () => Promise<Credentials>;
  /**
   * 'two-way' (default), 'push' (local to remote only), 'pull' (remote to local only), or 'cache':
   * two-way, but what the remote holds is listed here without its bytes, fetched and kept on the
   * first read.
   */
  mode?: Mode;
  /** What a conflict comes to: 'keep-both' (default), 'remote-wins', 'local-wins', or a function of both. */
  policy?: Policy;
  /** The share of either side's synced keys one sync may delete before it stops and asks; default 0.5. */
  maxDeleteShare?: number;
  /** Push even to a remote that ignores conditional writes (it cannot then protect another device's writes). */
  allowUnconditional?: boolean;
  /** How often to sync while running, in ms; default 60,000. */
  intervalMs?: number;
  /** Bodies over this many bytes are pushed by multipart upload (resumable); default 16 MiB. */
  multipartBytes?: number;
  /**
   * How long a request to the remote may go unanswered before the round fails (and is retried), in
   * ms; default 30,000, and one second more for every 64 KiB of a body sent or received.
   */
  timeoutMs?: number;
  /**
   * The cache mode's budget: the most bytes of fetched objects the bucket keeps. Beyond it, copies
   * of the remote's objects (synced, not changed here) are let go, those read or fetched longest
   * ago first: still listed, fetched again on their next read. Objects changed here and not yet
   * pushed are never let go. Default: no limit.
   */
  cacheBytes?: number;
}

/**
 * idle; syncing (a round lists and compares); pushing or pulling (a round moves bytes); offline
 * (the remote cannot be reached: retrying); paused; stopped (see `error`).
 */
export type ReplicaState = 'idle' | 'syncing' | 'pushing' | 'pulling' | 'offline' | 'paused' | 'stopped';

/** How one replica stands: `status()` answers one per replica. */
export interface ReplicaStatus {
  bucket: string;
  /** Where its remote is (no credentials). */
  remote: { endpoint: string; bucket: string; prefix?: string };
  state: ReplicaState;
  mode: Mode;
  /** Local changes not yet pushed (keys). */
  pending: number;
  /** The bytes those changes would push (a delete counts none). */
  pendingBytes: number;
  /** Conflicts found and not dismissed. */
  conflicts: number;
  /** When the last round completed (ms since the epoch). */
  lastSync?: number;
  /** Why the replica stopped, or why the last round failed: what to fix. */
  error?: string;
  /** What the remote honours of conditional writes (after the first round). */
  guarantees?: Guarantees;
}

/** What the replicas announce: a status change, a round's progress, a conflict found, a round completed. */
export type ReplicaEvent =
  | { type: 'status'; status: ReplicaStatus }
  | { type: 'conflict'; conflict: ConflictRecord }
  | { type: 'progress'; bucket: string; phase: 'pushing' | 'pulling'; key: string; done: number; total: number }
  | { type: 'synced'; bucket: string; result: RoundResult };

/** What a replica keeps in the store beside its configuration. */
interface Kept {
  bucket: string;
  config: Omit<ReplicaConfig, 'getCredentials' | 'policy'> & { policy?: Exclude<Policy, (...a: never[]) => unknown>; policyInPage?: true };
  device: string;
  paused?: boolean;
  lastSync?: number;
  error?: string;
  stopped?: boolean;
  guarantees?: Guarantees;
  uploads?: Record<string, UploadState>;
}

export interface ReplicasOptions {
  store: Store;
  /** Runs `fn` holding the lock named `name`, one holder at a time per origin (Web Locks in a browser). */
  lock?: <T>(name: string, fn: () => Promise<T>) => Promise<T>;
  /** Credentials for a replica whose own are not kept (getCredentials lives in a page): asked of whoever has them. */
  credentialsFor?: (bucket: string) => Promise<Credentials | undefined>;
  /** A conflict's resolution for a replica whose policy function lives in a page: undefined when no page answered (the key waits). */
  decideFor?: (bucket: string, c: ConflictCase) => Promise<Resolution | undefined>;
  now?: () => number;
  /** Names this store's conflict copies; default a short random id kept with each replica. */
  device?: string;
  /**
   * How rounds give way to the app's requests (localRequest()): each step waits until none has been
   * in flight for `quietMs` (default 25), or `maxWaitMs` at most (default 1,000).
   */
  foreground?: { quietMs?: number; maxWaitMs?: number };
}

const MiB = 1024 * 1024;
/** The cache mode lets go down to this share of cacheBytes once over it. */
const LOW_WATER = 0.9;
const RETRY_MIN_MS = 1000;
/** How soon after a write its replica's pending count is announced (one announcement for a burst of writes). */
const NUDGE_MS = 200;
const RETRY_MAX_MS = 5 * 60 * 1000;

/** Two rounds' work as one, the later's deferred and skipped keys standing. */
function joined(a: RoundResult, b: RoundResult): RoundResult {
  return {
    pushed: [...a.pushed, ...b.pushed], pulled: [...a.pulled, ...b.pulled], deletedRemote: [...a.deletedRemote, ...b.deletedRemote],
    deletedLocal: [...a.deletedLocal, ...b.deletedLocal], conflicts: [...a.conflicts, ...b.conflicts], deferred: b.deferred,
    ...(b.skipped ?? a.skipped ? { skipped: b.skipped ?? a.skipped } : {}),
    ...(b.undecided ? { undecided: b.undecided } : {}),
  };
}

export interface Replicas {
  /**
   * Binds a bucket to its remote (or updates the binding), and syncs it soon. `policyInPage`: the
   * policy is a function in a page, asked through `decideFor` (src/browser/replicas.ts).
   */
  add(config: ReplicaConfig & { policyInPage?: boolean }): Promise<void>;
  /** Unbinds a bucket: its objects stay; changes not yet pushed are not pushed. */
  remove(bucket: string): Promise<void>;
  /**
   * A full round (push and pull) of each replica, or of `bucket`'s; resolves with each round's
   * result once they completed, rejects saying why one could not (offline, stopped, refused).
   */
  syncNow(o?: { bucket?: string; allowDeletes?: boolean }): Promise<RoundResult[]>;
  /**
   * A round of each replica not stopped nor paused, or the one running: what a timer, coming online
   * and Background Sync ask for, which need no round newer than themselves. Never rejects.
   */
  soon(): Promise<void>;
  status(): Promise<ReplicaStatus[]>;
  pause(bucket?: string): Promise<void>;
  resume(bucket?: string): Promise<void>;
  conflicts(bucket: string): Promise<ConflictRecord[]>;
  dismissConflict(bucket: string, id: string): Promise<void>;
  /** The keys of `bucket` changed locally and not yet pushed. */
  pending(bucket: string): Promise<string[]>;
  /** The keys of `bucket` listed from its remote whose bytes are not kept here (the `cache` mode): a read of one needs the remote. */
  remoteOnly(bucket: string): Promise<string[]>;
  /**
   * Fetches the bytes of `key`, listed from the remote without them (the `cache` mode), into the
   * bucket. The service calls it when a request needs them; rejects when the remote cannot give them.
   */
  fetchObject(bucket: string, key: string): Promise<void>;
  /**
   * What the replica's remote lacks for a sync to work: reachable with its credentials, conditional
   * writes honoured, ETags shown, and for a page's `origin` the CORS rules a sync needs.
   */
  check(bucket: string, origin?: string): Promise<CheckResult>;
  /**
   * Bytes `start`–`end` of `key`, listed from the remote without them (the `cache` mode), read from
   * the remote while it is still `etag` there; the whole is fetched meanwhile. Undefined when it
   * cannot come that way (another object there now, the remote unreachable): the read then waits
   * for the whole, as any other.
   */
  readRange(bucket: string, key: string, range: { start: number; end: number }, etag: string): Promise<{ headers: ObjectHeaders; body: ReadableStream<Uint8Array> } | undefined>;
  /**
   * A request of the app's own begins (the service's handler calls it for each): until the function
   * returned is called, and a moment after, rounds hold their next step (foreground.ts).
   */
  localRequest(): () => void;
  /** A local write to `bucket`: a round soon. */
  nudge(bucket: string): void;
  /** A read of `key` answered from `bucket` (the service tells each GET): the cache mode keeps what was read last longest. */
  read(bucket: string, key: string): void;
  on(listener: (e: ReplicaEvent) => void): () => void;
  /** Starts the replicas kept in the store (and their timers). */
  start(): Promise<void>;
  stop(): void;
}

export function createReplicas(o: ReplicasOptions): Replicas {
  const { store } = o;
  const now = o.now ?? Date.now;
  const lock = o.lock ?? (<T>(_name: string, fn: () => Promise<T>) => fn());
  const listeners = new Set<(e: ReplicaEvent) => void>();
  const emit = (e: ReplicaEvent) => {
    for (const l of listeners) {
      try {
        l(e);
      } catch {
        // a listener's failure is its own
      }
    }
  };
  /** What only this runtime knows of each replica: its functions, timers, the round running. */
  const live = new Map<string, {
    getCredentials?: () => Promise<Credentials>;
    policy?: Policy;
    cached?: Credentials;
    timer?: ReturnType<typeof setTimeout>;
    /** An announcement of writes to come (nudge). */
    nudged?: ReturnType<typeof setTimeout>;
    running?: Promise<RoundResult>;
    /** The cache mode: when this runtime last read or fetched each key (before that, the time of its sync counts). */
    used?: Map<string, number>;
    /** The cache mode's trim under way (one at a time). */
    trimming?: Promise<void>;
    /**
     * The cache mode's bytes held, as the last trim counted them plus what fetches added since;
     * undefined: to be counted again (a local write, a round, a restart may have changed them).
     */
    held?: number;
    /** Fetches and local writes so far: a count taken while one happened is not kept. */
    changes: number;
    failures: number;
    state: ReplicaState;
  }>();
  let started = false;
  const app = foreground(o.foreground);

  const liveOf = (bucket: string) => {
    let l = live.get(bucket);
    if (!l) live.set(bucket, (l = { changes: 0, failures: 0, state: 'idle' }));
    return l;
  };

  async function refOf(bucket: string): Promise<BucketRef> {
    const b = await store.getBucket(bucket);
    if (!b) throw new SyncStopped('remote', `The local bucket ${bucket} does not exist.`);
    return b;
  }

  const keptAll = async (): Promise<Kept[]> => (await store.replica.records()) as unknown as Kept[];
  const kept = async (bucket: string): Promise<Kept | undefined> => (await keptAll()).find((r) => r.bucket === bucket);

  async function keep(k: Kept): Promise<void> {
    const result = await store.replica.putRecord(await refOf(k.bucket), k as unknown as Kept & Record<string, unknown>);
    if (result !== 'ok') throw new SyncStopped('remote', `The replica of ${k.bucket} was removed.`);
  }

  async function credentials(k: Kept): Promise<Credentials> {
    const l = liveOf(k.bucket);
    if (k.config.remote.credentials) return k.config.remote.credentials;
    if (l.cached && !expiringSoon(l.cached, now())) return l.cached;
    const fresh = l.getCredentials ? await l.getCredentials() : await o.credentialsFor?.(k.bucket);
    if (!fresh) {
      throw new SyncStopped('remote', `The replica of ${k.bucket} has no credentials here: give remote.credentials, or getCredentials() from a page that is open.`);
    }
    l.cached = fresh;
    return fresh;
  }

  async function statusOf(k: Kept, live = liveOf(k.bucket).state): Promise<ReplicaStatus> {
    const ref = await store.getBucket(k.bucket);
    // Announced after every write: what it reads is the outbox and the conflicts, never the whole bucket.
    const pending = ref ? await store.replica.pending(ref) : 'noSuchBucket';
    const conflicts = ref ? await store.replica.conflicts(ref) : 'noSuchBucket';
    const state: ReplicaState = k.paused ? 'paused' : k.stopped ? 'stopped' : live;
    const r = k.config.remote;
    return {
      bucket: k.bucket, state, mode: k.config.mode ?? 'two-way',
      remote: { endpoint: r.endpoint, bucket: r.bucket, ...(r.prefix ? { prefix: r.prefix } : {}) },
      pending: pending === 'noSuchBucket' ? 0 : pending.keys,
      pendingBytes: pending === 'noSuchBucket' ? 0 : pending.bytes,
      conflicts: conflicts === 'noSuchBucket' ? 0 : conflicts.length,
      ...(k.lastSync !== undefined ? { lastSync: k.lastSync } : {}),
      ...(k.error !== undefined ? { error: k.error } : {}),
      ...(k.guarantees ? { guarantees: k.guarantees } : {}),
    };
  }

  /** Each bucket's announcements in the order made, each with the state at the moment it was made. */
  const announced = new Map<string, Promise<void>>();
  /** The state of the announcement queued and not yet begun, by bucket: one with the same state joins it (a burst of writes makes one). */
  const queued = new Map<string, ReplicaState>();
  const announce = (bucket: string): Promise<void> => {
    const state = liveOf(bucket).state;
    if (queued.get(bucket) === state) return announced.get(bucket)!;
    queued.set(bucket, state);
    const next = (announced.get(bucket) ?? Promise.resolve()).then(async () => {
      if (queued.get(bucket) === state) queued.delete(bucket);
      const k = await kept(bucket);
      if (k) emit({ type: 'status', status: await statusOf(k, state) });
    });
    announced.set(bucket, next.catch(() => {}));
    return next;
  };

  function schedule(bucket: string, ms: number): void {
    const l = liveOf(bucket);
    if (!started) return;
    if (l.timer) clearTimeout(l.timer);
    l.timer = setTimeout(() => {
      l.timer = undefined;
      round(bucket, false).catch(() => {});
    }, ms);
    // A timer must not keep a Node process (or a test) alive on its own.
    (l.timer as { unref?: () => void }).unref?.();
  }

  /**
   * What syncNow() promises: a round that began after the call, so that it saw every write made
   * before it. A round running at the call may have read the bucket before them: it is waited for,
   * then a new one runs (calls meeting there share it). The answer is both rounds' work.
   */
  async function freshRound(bucket: string, allowDeletes: boolean): Promise<RoundResult> {
    const running = liveOf(bucket).running;
    const before = running ? await running.catch(() => undefined) : undefined;
    const after = await round(bucket, allowDeletes);
    return before ? joined(before, after) : after;
  }

  /** One round of `bucket`'s replica, or the one already running. */
  function round(bucket: string, allowDeletes: boolean): Promise<RoundResult> {
    const l = liveOf(bucket);
    if (l.running && !allowDeletes) return l.running;
    const run = (async () => {
      const k = await kept(bucket);
      // Refused before it ran: no round is running (a refusal kept as the running round would answer every later one).
      if (!k || k.paused) {
        l.running = undefined;
        throw new SyncStopped('remote', !k ? `${bucket} has no replica.` : `The replica of ${bucket} is paused: resume() it first.`);
      }
      // A retry while offline stays 'offline' until a round gets through.
      if (l.state !== 'offline') {
        l.state = 'syncing';
        await announce(bucket).catch(() => {});
      }
      try {
        const result = await lock(`swbucket-replica:${bucket}`, () => rounds(bucket, allowDeletes));
        const latest = (await kept(bucket)) ?? k;
        // What the round changed counts against the cache's budget: counted again.
        l.held = undefined;
        await trim(latest).catch(() => {});
        l.failures = 0;
        l.state = 'idle';
        await keep({ ...latest, lastSync: now(), error: undefined, stopped: undefined } as Kept);
        emit({ type: 'synced', bucket, result });
        for (const c of result.conflicts) emit({ type: 'conflict', conflict: c });
        // What changed while it ran (a key deferred, a write meanwhile) goes in the next round, soon.
        schedule(bucket, result.deferred.length > 0 ? RETRY_MIN_MS : k.config.intervalMs ?? 60_000);
        return result;
      } catch (e) {
        const retry = e instanceof RemoteError && e.retryable;
        l.failures = retry ? l.failures + 1 : 0;
        l.state = retry && (e as RemoteError).status === 0 ? 'offline' : 'idle';
        const fresh = await kept(bucket);
        const stops = e instanceof SyncStopped || (e instanceof RemoteError && !e.retryable);
        if (fresh) await keep({ ...fresh, error: (e as Error).message, ...(stops ? { stopped: true } : {}) }).catch(() => {});
        if (!stops) {
          // Backoff with jitter: 1 s, 2 s, 4 s … 5 min, each ±50%.
          const base = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** Math.min(l.failures - 1, 20));
          schedule(bucket, base * (0.5 + Math.random()));
        }
        throw e;
      } finally {
        l.running = undefined;
        await announce(bucket).catch(() => {});
      }
    })();
    l.running = run;
    return run;
  }

  /**
   * Rounds until nothing is left over, at most three: a round that kept a conflict's local version
   * has a new key to push, and one that deferred a key (it changed meanwhile) may settle it now.
   */
  async function rounds(bucket: string, allowDeletes: boolean): Promise<RoundResult> {
    let total: RoundResult = { pushed: [], pulled: [], deletedRemote: [], deletedLocal: [], conflicts: [], deferred: [] };
    for (let i = 0; i < 3; i++) {
      const k = await kept(bucket);
      if (!k) throw new SyncStopped('remote', `${bucket} has no replica.`);
      const r = await roundOf(k, allowDeletes);
      total = joined(total, r);
      if (r.deferred.length === 0 && !r.conflicts.some((c) => c.keptAt !== undefined && !c.foundElsewhere)) break;
    }
    return total;
  }

  /**
   * The cache mode's budget kept (cacheBytes): fetched copies let go, those read or fetched longest
   * ago first, until what the bucket holds fetched fits, with room to spare (LOW_WATER), so that
   * the next fetches do not each read the whole bucket again; never `spare` (the key a read is
   * fetching). While the running count says it fits, nothing is read at all.
   */
  function trim(k: Kept, spare?: string): Promise<void> {
    const budget = k.config.cacheBytes;
    if (k.config.mode !== 'cache' || budget === undefined) return Promise.resolve();
    const l = liveOf(k.bucket);
    const run = (l.trimming ?? Promise.resolve()).then(async () => {
      if (l.held !== undefined && l.held <= budget) return;
      const seen = l.changes;
      const ref = await store.getBucket(k.bucket);
      const view = ref ? await store.replica.view(ref) : 'noSuchBucket';
      if (!ref || view === 'noSuchBucket') return;
      let held = 0;
      const copies: { key: string; etag: string; size: number; at: number }[] = [];
      for (const [key, object] of view.objects) {
        if (object.notFetched) continue;
        held += object.size;
        const synced = view.synced.get(key);
        // Only a copy of what the remote holds: a change not pushed yet exists nowhere else.
        if (key === spare || !synced || view.outbox.has(key) || synced.localEtag !== object.etag) continue;
        copies.push({ key, etag: object.etag, size: object.size, at: l.used?.get(key) ?? synced.syncedAt });
      }
      // A fetch or a write while the bucket was read may be missing from this count: counted again next time.
      const remember = (n: number) => void (l.held = l.changes === seen ? n : undefined);
      if (held <= budget) return remember(held);
      copies.sort((a, b) => a.at - b.at);
      const chosen: typeof copies = [];
      let left = held;
      for (const c of copies) {
        if (left <= budget * LOW_WATER) break;
        chosen.push(c);
        left -= c.size;
      }
      const gone = await store.replica.evict(ref, chosen.map(({ key, etag }) => ({ key, etag })));
      if (gone === 'noSuchBucket') return;
      const sizes = new Map(chosen.map((c) => [c.key, c.size]));
      for (const key of gone) {
        l.used?.delete(key);
        held -= sizes.get(key)!;
      }
      remember(held);
    });
    l.trimming = run.catch(() => {});
    return run;
  }

  /** The fetches under way (cache mode), by bucket and key: reads of one object meeting share one. */
  const fetching = new Map<string, Promise<void>>();
  const fetchId = (bucket: string, key: string) => `${bucket}\u0000${key}`;
  function fetchOnce(bucket: string, key: string): Promise<void> {
    const id = fetchId(bucket, key);
    let running = fetching.get(id);
    if (!running) {
      running = (async () => {
        const k = await kept(bucket);
        if (!k) throw new Error(`${bucket} has no replica to fetch ${key} from.`);
        const bytes = await fetchListed(store, await refOf(bucket), remoteOf(k), key, now);
        if (k.config.cacheBytes === undefined) return;
        const l = liveOf(bucket);
        (l.used ??= new Map()).set(key, now());
        l.changes++;
        if (l.held !== undefined) l.held += bytes;
        // In the background: the request that asked for it reads it next, and must find it.
        void trim(k, key).catch(() => {});
      })().finally(() => fetching.delete(id));
      fetching.set(id, running);
    }
    return running;
  }

  const remoteOf = (k: Kept): Remote => createRemote(k.config.remote, () => credentials(k), k.config.timeoutMs !== undefined ? { timeoutMs: k.config.timeoutMs } : {});

  async function roundOf(k: Kept, allowDeletes: boolean): Promise<RoundResult> {
    const ref = await refOf(k.bucket);
    const remote: Remote = remoteOf(k);
    let guarantees = k.guarantees;
    if (!guarantees) {
      guarantees = await probe(remote, k.device);
      k = { ...k, guarantees };
      await keep(k);
    }
    let uploads = { ...(k.uploads ?? {}) };
    const l = liveOf(k.bucket);
    return syncRound({
      store, bucket: ref, remote, mode: k.config.mode ?? 'two-way', device: k.device,
      policy: l.policy ?? (k.config.policyInPage ? (c: ConflictCase) => o.decideFor?.(k.bucket, c) : k.config.policy ?? 'keep-both'),
      guarantees, allowUnconditional: k.config.allowUnconditional ?? false, maxDeleteShare: k.config.maxDeleteShare ?? 0.5, allowDeletes,
      multipartBytes: k.config.multipartBytes ?? 16 * MiB, partBytes: Math.max(5 * MiB, Math.min(k.config.multipartBytes ?? 16 * MiB, 16 * MiB)),
      now, giveWay: app.quiet,
      uploads: {
        get: (key) => uploads[key],
        keys: () => Object.keys(uploads),
        async set(key, state) {
          uploads = { ...uploads };
          if (state) uploads[key] = state;
          else delete uploads[key];
          const latest = (await kept(k.bucket)) ?? k;
          await keep({ ...latest, uploads });
        },
      },
      onProgress: (p) => {
        emit({ type: 'progress', bucket: k.bucket, ...p });
        // The state says which way bytes move: announced when it turns.
        if (l.state !== p.phase) {
          l.state = p.phase;
          void announce(k.bucket).catch(() => {});
        }
      },
    });
  }

  return {
    async add(config) {
      if (!isValidBucketName(config.bucket)) throw new TypeError(`The replica's bucket: ${bucketNameProblem(config.bucket)}`);
      if (config.cacheBytes !== undefined && (config.mode !== 'cache' || !(Number.isFinite(config.cacheBytes) && config.cacheBytes >= 0))) {
        throw new TypeError(`The replica's cacheBytes (${String(config.cacheBytes)}) is a number of bytes, 0 or more, for mode 'cache' only.`);
      }
      if (!(await store.getBucket(config.bucket))) {
        const made = await store.createBucket({ name: config.bucket, owner: ROOT_CREDENTIALS.accessKeyId, acl: 'private', created: now(), nextVersionId: 1 });
        if (made === 'noSuchOwner') throw new Error(`The bucket ${config.bucket} cannot be created: the root account is gone.`);
      }
      const ref = await refOf(config.bucket);
      const l = liveOf(config.bucket);
      if (config.getCredentials) l.getCredentials = config.getCredentials;
      if (config.mode === 'cache' && config.cacheBytes !== undefined) l.used ??= new Map();
      else delete l.used;
      if (typeof config.policy === 'function') l.policy = config.policy;
      const { getCredentials: _fn, policy, policyInPage, ...rest } = config;
      const before = await kept(config.bucket);
      const sameRemote = before && JSON.stringify(before.config.remote) === JSON.stringify(config.remote);
      const record: Kept = {
        bucket: config.bucket,
        config: { ...rest, ...(typeof policy === 'string' ? { policy } : policyInPage ? { policyInPage: true } : {}) },
        device: o.device ?? before?.device ?? crypto.randomUUID().slice(0, 8),
        ...(sameRemote ? { ...(before.lastSync !== undefined ? { lastSync: before.lastSync } : {}), ...(before.guarantees ? { guarantees: before.guarantees } : {}), ...(before.uploads ? { uploads: before.uploads } : {}), ...(before.paused ? { paused: true } : {}) } : {}),
      };
      // Another remote is another replica: what was synced with the old one says nothing of the new.
      if (before && !sameRemote) await store.replica.bind(ref, undefined);
      if ((await store.replica.bind(ref, record as unknown as Kept & Record<string, unknown>)) !== 'ok') throw new Error(`The bucket ${config.bucket} is gone.`);
      await announce(config.bucket);
      schedule(config.bucket, 0);
    },
    async remove(bucket) {
      const l = live.get(bucket);
      clearTimeout(l?.timer);
      clearTimeout(l?.nudged);
      live.delete(bucket);
      const ref = await store.getBucket(bucket);
      if (ref) await store.replica.bind(ref, undefined);
    },
    async syncNow(opts = {}) {
      const all = (await store.replica.records()).map((r) => r.bucket);
      const buckets = opts.bucket === undefined ? all : [opts.bucket];
      if (opts.bucket !== undefined && !all.includes(opts.bucket)) throw new Error(`${opts.bucket} has no replica.`);
      // A stopped replica is asked again: the app has presumably fixed what it said.
      for (const b of buckets) {
        const k = await kept(b);
        if (k?.stopped) await keep({ ...k, stopped: undefined });
      }
      // Every replica's round runs to its end, whichever fails; then the first failure is the answer.
      const settled = await Promise.allSettled(buckets.map((b) => freshRound(b, opts.allowDeletes ?? false)));
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      return settled.map((r) => (r as PromiseFulfilledResult<RoundResult>).value);
    },
    async soon() {
      const ready = (await keptAll()).filter((k) => !k.stopped && !k.paused);
      await Promise.allSettled(ready.map((k) => round(k.bucket, false)));
    },
    async status() {
      return Promise.all((await keptAll()).map((k) => statusOf(k)));
    },
    async pause(bucket) {
      for (const k of await keptAll()) {
        if (bucket !== undefined && k.bucket !== bucket) continue;
        await keep({ ...k, paused: true });
        await announce(k.bucket);
      }
    },
    async resume(bucket) {
      for (const k of await keptAll()) {
        if (bucket !== undefined && k.bucket !== bucket) continue;
        await keep({ ...k, paused: undefined, stopped: undefined });
        await announce(k.bucket);
        schedule(k.bucket, 0);
      }
    },
    async conflicts(bucket) {
      const found = await store.replica.conflicts(await refOf(bucket));
      return found === 'noSuchBucket' ? [] : found;
    },
    async dismissConflict(bucket, id) {
      await store.replica.dismissConflict(await refOf(bucket), id);
      await announce(bucket);
    },
    async fetchObject(bucket, key) {
      const joined = fetching.has(fetchId(bucket, key));
      try {
        await fetchOnce(bucket, key);
      } catch (e) {
        // A fetch begun before this read (in the background) that failed: this read's own try is next.
        if (!joined) throw e;
        await fetchOnce(bucket, key);
      }
    },
    async readRange(bucket, key, range, etag) {
      const k = await kept(bucket);
      if (k?.config.mode !== 'cache') return undefined;
      void fetchOnce(bucket, key).catch(() => {});
      try {
        return await remoteOf(k).getRange(key, range.start, range.end, etag);
      } catch {
        return undefined;
      }
    },
    async pending(bucket) {
      const view = await store.replica.view(await refOf(bucket));
      return view === 'noSuchBucket' ? [] : [...view.outbox.keys()];
    },
    async remoteOnly(bucket) {
      const view = await store.replica.view(await refOf(bucket));
      return view === 'noSuchBucket' ? [] : [...view.objects.values()].filter((o) => o.notFetched).map((o) => o.key);
    },
    async check(bucket, origin) {
      const k = await kept(bucket);
      if (!k) throw new Error(`${bucket} has no replica.`);
      return checkRemote(remoteOf(k), k.device, origin);
    },
    localRequest: () => app.begin(),
    nudge(bucket) {
      const l = live.get(bucket);
      if (!l) return;
      // A write changed what the bucket holds: the cache's count is taken again at its next trim.
      l.changes++;
      l.held = undefined;
      // Its outbox changed: pages see the pending count, a moment later. Announced at once, the
      // reads of each write's announcement held up the next write (a PUT's acknowledgement waited
      // behind them): a burst of writes is announced once per NUDGE_MS.
      l.nudged ??= setTimeout(() => {
        l.nudged = undefined;
        void announce(bucket).catch(() => {});
      }, NUDGE_MS);
      (l.nudged as { unref?: () => void }).unref?.();
      if (!l.running) schedule(bucket, 500);
    },
    read(bucket, key) {
      live.get(bucket)?.used?.set(key, now());
    },
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async start() {
      started = true;
      for (const r of (await store.replica.records()) as unknown as Kept[]) {
        if (r.config.mode === 'cache' && r.config.cacheBytes !== undefined) liveOf(r.bucket).used ??= new Map();
        schedule(r.bucket, 0);
      }
    },
    stop() {
      started = false;
      for (const l of live.values()) {
        clearTimeout(l.timer);
        clearTimeout(l.nudged);
        l.nudged = undefined;
      }
    },
  };
}

/**
 * What a runtime's request log tells its replicas (the worker's and `swbucket serve`'s): a write
 * that landed in a bucket means a sync soon; a read answered, that the cache mode keeps that
 * object longer.
 */
export function tellReplicas(replicas: Replicas, entry: { bucket: string; key: string; method: string; status: number }): void {
  if (!entry.bucket || entry.status >= 300) return;
  if (entry.method !== 'GET' && entry.method !== 'HEAD') replicas.nudge(entry.bucket);
  else if (entry.method === 'GET' && entry.key) replicas.read(entry.bucket, entry.key);
}

/** The handler's `readMissingRange` over `replicas` (a large object's range while the whole is fetched). */
export function readMissingRangeVia(replicas: Replicas): ReadMissingRange {
  return (bucket, key, range, etag) => replicas.readRange(bucket, key, range, etag);
}

/**
 * The handler's `fetchMissing` over `replicas`: a request that needs an object the cache mode only
 * lists waits for its bytes, or is answered 503 saying why they could not be fetched.
 */
export function fetchMissingVia(replicas: Replicas): (bucket: string, key: string) => Promise<void> {
  return async (bucket, key) => {
    try {
      await replicas.fetchObject(bucket, key);
    } catch (e) {
      throw new SvcError('ServiceUnavailable', `${key} is listed from the remote and not kept here yet, and fetching it failed: ${(e as Error).message}`);
    }
  };
}
