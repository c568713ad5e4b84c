// service.replicas: a page's hold on the worker's replicas (sw/replica/, run by the worker so they
// sync whichever pages come and go). Questions go to the worker as JSON at REPLICAS_PATH; what
// the worker announces (status, progress, conflicts) comes on its BroadcastChannel. What cannot
// leave the page stays here: getCredentials() is called here and its answers handed to the worker
// before they expire, and the page asks for a round when it comes online and on a timer while it is
// open (a worker with no page may be stopped by the browser at any time).
import { CREDENTIALS_NEEDED, DECISION_NEEDED, REPLICAS_PATH, instanceNames } from '../../protocol/instance.ts';
import type { ConflictRecord } from '../../sw/store/types.ts';
import type { Credentials, ReplicaConfig, ReplicaEvent, ReplicaStatus } from '../../sw/replica/replicas.ts';
import type { ConflictCase, Policy, Resolution, RoundResult } from '../../sw/replica/sync.ts';
import type { CheckResult } from '../../sw/replica/check.ts';

export type { CheckResult, ConflictCase, ConflictRecord, Credentials, Policy, ReplicaConfig, ReplicaEvent, ReplicaStatus, Resolution, RoundResult };

/**
 * A replica's configuration in a page: as ReplicaConfig. A policy function stays in the page: the
 * worker asks it about each conflict while a page that bound the replica with it is open (it has
 * two minutes to answer); with none open, the key waits, changed on both sides, for a later round.
 */
export type PageReplicaConfig = ReplicaConfig;

/** Why a replica call failed; the message says what to fix. */
export class ReplicaError extends Error {
  override readonly name = 'ReplicaError';
}

/** The replicas of a running service (`service.replicas`). */
export interface ServiceReplicas {
  /** Binds a bucket (created when missing) to a remote bucket, or updates its binding; it syncs soon. */
  add(config: PageReplicaConfig): Promise<void>;
  /** Unbinds a bucket: its objects stay, changes not yet pushed are not pushed. */
  remove(bucket: string): Promise<void>;
  /**
   * A full round (push and pull) of every replica, or of `bucket`'s: resolves once it completed,
   * rejects with a ReplicaError saying why it could not (offline, refused, stopped: what to fix).
   */
  syncNow(o?: { bucket?: string; allowDeletes?: boolean }): Promise<RoundResult[]>;
  /** Each replica's bucket, state, pending changes and conflicts. */
  status(): Promise<ReplicaStatus[]>;
  /** Stops syncing a replica (every one without `bucket`) until resume(); writes go on into its outbox. */
  pause(bucket?: string): Promise<void>;
  /** Syncs a paused or stopped replica again (every one without `bucket`). */
  resume(bucket?: string): Promise<void>;
  /** The conflicts found and not dismissed: both versions are in the bucket, at `key` and `keptAt`. */
  conflicts(bucket: string): Promise<ConflictRecord[]>;
  /** Forgets a conflict the app has dealt with; both versions stay where they are. */
  dismissConflict(bucket: string, id: string): Promise<void>;
  /** The keys of `bucket` changed here and not yet pushed. */
  pending(bucket: string): Promise<string[]>;
  /**
   * The keys of `bucket` listed from its remote whose bytes are not kept here (the `cache` mode:
   * never read yet, or let go under `cacheBytes`): reading one needs the remote.
   */
  remoteOnly(bucket: string): Promise<string[]>;
  /**
   * What `bucket`'s remote lacks for the sync to work from this page: reachable with its
   * credentials, conditional writes honoured, ETags shown, the CORS rules this origin needs.
   */
  check(bucket: string): Promise<CheckResult>;
  /** Status changes, progress and conflicts, as the worker announces them; returns a function that stops listening. */
  on(listener: (event: ReplicaEvent) => void): () => void;
}

/** How long before temporary credentials expire they are asked for again. */
const REFRESH_BEFORE_MS = 2 * 60_000;

export function serviceReplicas(scope: string, name: string): ServiceReplicas & { keepSyncing(everyMs: number): void } {
  const url = new URL(REPLICAS_PATH, scope).href;
  const ask = async <T>(body: Record<string, unknown>): Promise<T> => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), cache: 'no-store' });
    const answer = (await res.json().catch(() => null)) as { error?: string } | null;
    if (!res.ok) throw new ReplicaError(answer?.error ?? `The worker answered ${res.status}.`);
    return answer as T;
  };
  const timers = new Map<string, ReturnType<typeof setTimeout>>();
  let syncing: ReturnType<typeof setInterval> | undefined;
  /**
   * While the page is open: a round when it comes online, and one a minute (or as often as a
   * replica asks), so replicas sync while the app is used even where the browser stops an idle worker.
   */
  const keepSyncing = (everyMs: number) => {
    if (syncing !== undefined) return;
    // A round each, or the one running: unlike syncNow(), a timer needs none newer than itself.
    const nudge = () => void ask({ op: 'soon' }).catch(() => {});
    addEventListener('online', nudge);
    syncing = setInterval(nudge, everyMs);
  };

  /** The app's credential functions, by bucket: the worker asks for them on the channel when it lacks them. */
  const getters = new Map<string, () => Promise<Credentials>>();
  /** The app's policy functions, by bucket: the worker asks them about each conflict on the channel. */
  const deciders = new Map<string, Exclude<Policy, string>>();
  let asked: BroadcastChannel | undefined;
  const answerAsks = () => {
    if (asked) return;
    asked = new BroadcastChannel(instanceNames(name).replicaChannel);
    asked.onmessage = (e: MessageEvent<{ type?: string; bucket?: string; id?: string; conflict?: ConflictCase }>) => {
      const { type, bucket, id, conflict } = e.data ?? {};
      const get = type === CREDENTIALS_NEEDED && bucket !== undefined ? getters.get(bucket) : undefined;
      if (get) void supply(bucket!, get).catch(() => {});
      const decide = type === DECISION_NEEDED && bucket !== undefined && conflict ? deciders.get(bucket) : undefined;
      if (decide) {
        void ask({ op: 'deciding', id }).catch(() => {});
        void (async () => {
          let answer: { resolution?: Resolution } | { error: string };
          try {
            answer = { resolution: (await decide(conflict!)) as Resolution };
          } catch (err) {
            answer = { error: err instanceof Error ? err.message : String(err) };
          }
          await ask({ op: 'decide', bucket, id, ...answer });
        })().catch(() => {});
      }
    };
  };

  /** Hands the worker credentials from the app's function, and again before they expire. */
  async function supply(bucket: string, get: () => Promise<Credentials>): Promise<void> {
    clearTimeout(timers.get(bucket));
    const credentials = await get();
    await ask({ op: 'credentials', bucket, credentials });
    const expires = credentials.expiration === undefined ? undefined : new Date(credentials.expiration).getTime();
    const inMs = expires === undefined ? 15 * 60_000 : Math.max(10_000, expires - Date.now() - REFRESH_BEFORE_MS);
    timers.set(bucket, setTimeout(() => void supply(bucket, get).catch(() => {}), inMs));
  }

  const api: ServiceReplicas & { keepSyncing(everyMs: number): void } = {
    keepSyncing,
    async add(config) {
      const { getCredentials, policy, ...rest } = config;
      if (!getCredentials && !config.remote.credentials) throw new ReplicaError(`The replica of ${config.bucket} needs remote.credentials or getCredentials().`);
      // Credentials first: the worker syncs the replica as soon as it is added.
      if (getCredentials) {
        getters.set(config.bucket, getCredentials);
        answerAsks();
        await supply(config.bucket, getCredentials);
      }
      if (typeof policy === 'function') {
        deciders.set(config.bucket, policy);
        answerAsks();
      } else deciders.delete(config.bucket);
      await ask({ op: 'add', config: { ...rest, ...(typeof policy === 'function' ? { policyInPage: true } : policy ? { policy } : {}) } });
      keepSyncing(config.intervalMs ?? 60_000);
    },
    async remove(bucket) {
      clearTimeout(timers.get(bucket));
      timers.delete(bucket);
      getters.delete(bucket);
      deciders.delete(bucket);
      await ask({ op: 'remove', bucket });
    },
    syncNow: (o = {}) => ask({ op: 'sync', ...o }),
    status: () => ask({ op: 'status' }),
    pause: async (bucket) => void (await ask({ op: 'pause', bucket })),
    resume: async (bucket) => void (await ask({ op: 'resume', bucket })),
    conflicts: (bucket) => ask({ op: 'conflicts', bucket }),
    dismissConflict: async (bucket, id) => void (await ask({ op: 'dismiss', bucket, id })),
    pending: (bucket) => ask({ op: 'pending', bucket }),
    remoteOnly: (bucket) => ask({ op: 'remoteOnly', bucket }),
    check: (bucket) => ask({ op: 'check', bucket, origin: location.origin }),
    on(listener) {
      const channel = new BroadcastChannel(instanceNames(name).replicaChannel);
      channel.onmessage = (e: MessageEvent<ReplicaEvent | { type: typeof CREDENTIALS_NEEDED | typeof DECISION_NEEDED }>) => {
        const t = e.data.type;
        if (t !== CREDENTIALS_NEEDED && t !== DECISION_NEEDED) listener(e.data as ReplicaEvent);
      };
      return () => channel.close();
    },
  };
  return api;
}
