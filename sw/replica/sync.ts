// One sync round of a replica: the remote's listing, the local bucket, each key's state at its last
// sync and the outbox, compared key by key (as rclone's bisync compares against its listings of the
// last run): a key changed on one side since its last sync is copied to the other; changed on both
// it is a conflict, decided by the replica's policy and recorded; a key is deleted on one side only
// when the other deleted what both last had (a tombstone), never because a side merely lacks it.
// Every write to the remote is conditional (If-None-Match: * for a key new since the last sync,
// If-Match: its last-synced ETag otherwise), and every local write from the remote is refused in
// the store when the key changed since it was read: what a round could not decide safely it
// leaves to the next one.
import { md5OfBlob } from '../../protocol/md5.ts';
import { blobOf } from '../store/pieces.ts';
import { sizeOf } from '../store/rules/bodies.ts';
import type { BucketRef, Bytes, ConflictRecord, ObjectRecord, OutboxEntry, SeenState, Store, Stored, SyncRecord } from '../store/types.ts';
import { RemoteError, type Condition, type Remote, type RemoteEntry, type RemoteVersion } from './remote.ts';
import { CONFLICT_META } from '../store/rules/replica.ts';

/**
 * Which way changes go. 'two-way'; 'push' (local to remote only); 'pull' (remote to local only); 'cache': two-way, but
 * what the remote holds is listed here without its bytes, fetched by the first request that needs
 * them (a read-through cache).
 */
export type Mode = 'two-way' | 'push' | 'pull' | 'cache';

/** A key changed on both sides since its last sync, as a policy function sees it. */
export interface ConflictCase {
  key: string;
  local: 'changed' | 'deleted' | 'new';
  remote: 'changed' | 'deleted' | 'new';
  localObject?: ObjectRecord;
  remoteEntry?: RemoteEntry;
}

/**
 * What a conflict comes to: 'both' keeps both versions (the remote's at the key, the local one
 * under a conflict name, pushed as its own key); 'remote' or 'local' keeps that side's version at
 * the key (the other side's is replaced; locally, with versioning Enabled, it stays in the history).
 */
export type Resolution = 'both' | 'remote' | 'local';
/**
 * A function's answer may also be undefined: not now (the key waits, changed on both sides, for a
 * later round; a page's function answers so when no page that holds it is open).
 */
export type Policy = 'keep-both' | 'remote-wins' | 'local-wins' | ((c: ConflictCase) => Resolution | undefined | Promise<Resolution | undefined>);

/** What the remote honours of S3's conditional writes, as a probe found it. */
export interface Guarantees {
  /** `If-None-Match: *` refuses a write over an existing key. */
  ifNoneMatch: boolean;
  /** `If-Match: etag` refuses a write over another object: with the ETag quoted (as S3) or unquoted (as Ceph's RGW 16); false: ignored. */
  ifMatch: 'quoted' | 'unquoted' | false;
}

export interface RoundOptions {
  store: Store;
  bucket: BucketRef;
  remote: Remote;
  mode: Mode;
  policy: Policy;
  /** Names conflict copies: `photo (conflict 2026-11-29 0930 laptop).jpg`. */
  device: string;
  guarantees: Guarantees;
  /** Write over the remote even where its conditional writes cannot protect what another device wrote. */
  allowUnconditional: boolean;
  /** The share of either side's synced keys a round may delete before it stops and asks (rclone bisync's --max-delete). */
  maxDeleteShare: number;
  /** Proceed with a round's deletions whatever their share (the app asked). */
  allowDeletes: boolean;
  /** Bodies over this go by multipart upload. */
  multipartBytes: number;
  partBytes: number;
  /** Where a multipart push keeps its state across rounds, reloads and restarts. */
  uploads: UploadJournal;
  now: () => number;
  onProgress?: (p: { phase: 'pushing' | 'pulling'; key: string; done: number; total: number }) => void;
  /** Awaited before each step of the round (its listing, each key, each record written): the app's own requests go first (foreground.ts). */
  giveWay?: () => Promise<void>;
}

/** A multipart push in progress: resumed by a later round, or aborted when its change is gone. */
export interface UploadState {
  uploadId: string;
  /** The outbox change it pushes. */
  change: string | null;
  localEtag: string;
  size: number;
  /** How many parts the body is cut into. */
  total: number;
  parts: { partNumber: number; etag: string }[];
}

/** S3's ETag of a completed multipart upload: the MD5 of the parts' binary MD5s, then `-{count}`. */
async function multipartEtag(parts: { etag: string }[]): Promise<string> {
  const bytes = new Uint8Array(parts.length * 16);
  parts.forEach((p, i) => {
    for (let j = 0; j < 16; j++) bytes[i * 16 + j] = parseInt(p.etag.slice(2 * j, 2 * j + 2), 16);
  });
  return `${await md5OfBlob(new Blob([bytes]))}-${parts.length}`;
}

/**
 * A multipart push whose Complete landed but whose answer never came (a cut, a kill): the remote
 * lists the key with the ETag the journaled parts make. It is recorded as pushed, and its journal
 * entry goes; without this the next round would take the push for another device's write.
 */
async function settleCompleted(o: RoundOptions, listed: Map<string, RemoteEntry>): Promise<void> {
  for (const key of o.uploads.keys()) {
    const state = o.uploads.get(key)!;
    const there = listed.get(key);
    if (!there || state.parts.length !== state.total || there.etag !== (await multipartEtag(state.parts))) continue;
    const sync = { remoteEtag: there.etag, localEtag: state.localEtag, size: state.size, syncedAt: o.now() };
    if ((await o.store.replica.pushed(o.bucket, key, state.change, sync)) === 'ok') await o.uploads.set(key, undefined);
  }
}

export interface UploadJournal {
  get(key: string): UploadState | undefined;
  set(key: string, state: UploadState | undefined): Promise<void>;
  keys(): string[];
}

/** What a sync round did, key by key. */
export interface RoundResult {
  pushed: string[];
  pulled: string[];
  deletedRemote: string[];
  deletedLocal: string[];
  conflicts: ConflictRecord[];
  /** Keys left for the next round: they changed while this one worked, or a condition failed. */
  deferred: string[];
  /** Conflicts the policy function left for later (it answered undefined): each key waits, changed on both sides. */
  undecided?: string[];
  /** Keys no round can sync: a `.` or `..` path segment, which a URL would resolve away. */
  skipped?: string[];
}

/** A key whose path a URL would change (`a/../b` is `b` to fetch): it cannot be named on the remote. */
export const unsyncable = (key: string): boolean => key.split('/').some((s) => s === '.' || s === '..');

/** Why a replica stopped: a decision only the app can make, or a fault only it can fix (what a round moved before is kept). */
export class SyncStopped extends Error {
  override readonly name = 'SyncStopped';
  constructor(readonly reason: 'deletes' | 'unconditional' | 'remote' | 'policy', message: string) {
    super(message);
  }
}

/** The local bucket a round syncs was deleted (or replaced) under it. */
const bucketGone = (bucket: BucketRef): SyncStopped => new SyncStopped('remote', `The bucket ${bucket.name} is gone.`);

/** Keys under this prefix are the replica's own on the remote (its probe), never synced. */
export const RESERVED = '.swbucket/';

type Action =
  | { do: 'push'; key: string; object: ObjectRecord; seen: SeenState; synced?: SyncRecord; remote?: RemoteEntry }
  | { do: 'delete-remote'; key: string; seen: SeenState; synced: SyncRecord; remote: RemoteEntry }
  | { do: 'pull'; key: string; seen: SeenState; remote: RemoteEntry; missed?: RemoteEntry[] }
  | { do: 'delete-local'; key: string; seen: SeenState }
  | { do: 'settle'; key: string; seen: SeenState; sync: Omit<SyncRecord, 'bucket' | 'key'> | null }
  | { do: 'conflict'; key: string; seen: SeenState; c: ConflictCase; synced?: SyncRecord };

const syncOf = (remote: { etag: string; versionId?: string }, local: { etag: string; size: number }, now: number): Omit<SyncRecord, 'bucket' | 'key'> => ({
  remoteEtag: remote.etag, localEtag: local.etag, size: local.size, syncedAt: now, ...(remote.versionId ? { remoteVersionId: remote.versionId } : {}),
});

/** `photos/cat (conflict 2026-11-29 093012 laptop).jpg`: beside the key, never over one that exists. */
export function conflictName(key: string, device: string, at: number, taken: (k: string) => boolean): string {
  const slash = key.lastIndexOf('/');
  const dot = key.lastIndexOf('.');
  const [stem, ext] = dot > slash + 1 ? [key.slice(0, dot), key.slice(dot)] : [key, ''];
  const stamp = new Date(at).toISOString().replace('T', ' ').replace(/:/g, '').slice(0, 17);
  for (let n = 1; ; n++) {
    const name = `${stem} (conflict ${stamp} ${device}${n > 1 ? ` ${n}` : ''})${ext}`;
    if (!taken(name)) return name;
  }
}

/**
 * The versions of a key the remote made since its last sync and before `current`, oldest first
 * (delete markers left out: a local history has none): what a bucket that keeps versions pulls on
 * the way to the current one. For a key not synced, those since its last delete (a key deleted on
 * both sides has no sync record, and its earlier versions were synced then); none when the
 * version last synced is no longer in the remote's history.
 */
function missedVersions(versions: RemoteVersion[], synced: SyncRecord | undefined, current: RemoteEntry): RemoteEntry[] {
  const from = versions.findIndex((v) => !v.deleteMarker && v.versionId !== undefined && v.versionId === current.versionId);
  if (from < 0) return [];
  const older = versions.slice(from + 1);
  const end = older.findIndex((v) => (!synced ? v.deleteMarker
    : !v.deleteMarker && (synced.remoteVersionId ? v.versionId === synced.remoteVersionId : v.etag === synced.remoteEtag)));
  if (end < 0 && synced) return [];
  return older.slice(0, end < 0 ? older.length : end).filter((v) => !v.deleteMarker).reverse();
}

/** What each key needs, from the remote's listing and the bucket's view; `history`: each key's remote versions, newest first, where they are pulled. */
function plan(
  view: { objects: Map<string, ObjectRecord>; synced: Map<string, SyncRecord>; outbox: Map<string, OutboxEntry> }, listed: Map<string, RemoteEntry>, mode: Mode,
  history?: Map<string, RemoteVersion[]>,
): Action[] {
  const keys = new Set([...listed.keys(), ...view.objects.keys(), ...view.synced.keys(), ...view.outbox.keys()]);
  const actions: Action[] = [];
  for (const key of [...keys].sort()) {
    if (key.startsWith(RESERVED) || unsyncable(key)) continue;
    const R = listed.get(key);
    const S = view.synced.get(key);
    const L = view.objects.get(key);
    const O = view.outbox.get(key);
    const seen = { etag: L?.etag ?? null, change: O?.change ?? null };
    if (L?.notFetched && O) {
      // A listed-only object is never a local change (a bucket bound again with one): it is no data.
      actions.push(R && R.etag === L.etag ? { do: 'settle', key, seen, sync: { remoteEtag: R.etag, localEtag: L.etag, size: L.size, syncedAt: 0 } } : { do: 'delete-local', key, seen });
      continue;
    }
    const localChanged = O !== undefined;
    // A new remote version of the same bytes is a change to pull into a history, never a conflict.
    const newVersion = !localChanged && S?.remoteVersionId !== undefined && R?.versionId !== undefined && R.versionId !== S.remoteVersionId;
    const remoteChanged = (S ? !R || R.etag !== S.remoteEtag : R !== undefined) || newVersion;
    if (!localChanged && !remoteChanged) {
      // Gone from both sides, its sync record left: nothing to do but forget it.
      if (S && !L && !R) actions.push({ do: 'settle', key, seen, sync: null });
      continue;
    }
    if (localChanged && !remoteChanged) {
      if (mode === 'pull') continue;
      if (L) actions.push({ do: 'push', key, object: L, seen, ...(S ? { synced: S } : {}), ...(R ? { remote: R } : {}) });
      else if (S && R) actions.push({ do: 'delete-remote', key, seen, synced: S, remote: R });
      else actions.push({ do: 'settle', key, seen, sync: null });
      continue;
    }
    if (!localChanged && remoteChanged) {
      if (mode === 'push') continue;
      const missed = R && history?.has(key) ? missedVersions(history.get(key)!, S, R) : [];
      if (R) actions.push({ do: 'pull', key, seen, remote: R, ...(missed.length > 0 ? { missed } : {}) });
      else actions.push({ do: 'delete-local', key, seen });
      continue;
    }
    // Changed on both sides. The same bytes on both (a first sync of copies) are no conflict.
    if (L && R && L.etag === R.etag) {
      actions.push({ do: 'settle', key, seen, sync: syncOf(R, L, 0) });
      continue;
    }
    if (!L && !R) {
      actions.push({ do: 'delete-local', key, seen });
      continue;
    }
    if (mode === 'push' || mode === 'pull') {
      // One-way: the side that leads wins, and nothing is lost: the other's version is kept beside it.
      const c: ConflictCase = { key, local: !L ? 'deleted' : S ? 'changed' : 'new', remote: !R ? 'deleted' : S ? 'changed' : 'new', ...(L ? { localObject: L } : {}), ...(R ? { remoteEntry: R } : {}) };
      actions.push({ do: 'conflict', key, seen, c, ...(S ? { synced: S } : {}) });
      continue;
    }
    actions.push({
      do: 'conflict', key, seen, ...(S ? { synced: S } : {}),
      c: { key, local: !L ? 'deleted' : S ? 'changed' : 'new', remote: !R ? 'deleted' : S ? 'changed' : 'new', ...(L ? { localObject: L } : {}), ...(R ? { remoteEntry: R } : {}) },
    });
  }
  return actions;
}

async function resolve(policy: Policy, mode: Mode, c: ConflictCase): Promise<Resolution | undefined> {
  if (typeof policy === 'function') {
    const answer: unknown = await policy(c);
    if (answer === undefined || answer === 'both' || answer === 'remote' || answer === 'local') return answer;
    throw new SyncStopped('policy', `The replica's policy function answered ${JSON.stringify(answer) ?? String(answer)} for ${c.key}: it must answer 'both', 'remote', 'local', or undefined (decide later). Fix it, then resume().`);
  }
  if (policy === 'remote-wins') return 'remote';
  if (policy === 'local-wins') return 'local';
  // keep-both; where one side deleted, keeping both is keeping the one that still has a version.
  if (c.local === 'deleted') return mode === 'push' ? 'local' : 'remote';
  if (c.remote === 'deleted') return mode === 'pull' ? 'remote' : 'local';
  return 'both';
}

/**
 * Keys a round moves at a time. A browser opens six connections to one host (HTTP/1.1); more
 * requests in flight than that wait in the browser's network stack, which starts each the moment a
 * connection frees, where a lane would first have to come round in the worker's JavaScript (sign,
 * send), leaving the connection idle meanwhile: measured (figure 13), the AWS SDK's 1,000 small GETs
 * four at a time took 1.5–1.7 times as long as all at once. So small objects go 16 at a time. Large ones (over
 * BATCHED_BYTES) go four at a time: their bodies are committed together when they meet (the
 * committer below), and a lane hashes what it fetched before it takes the next key, so with two
 * the wire waited on the hashing (figure 13, 10 × 16 MiB pulled: 1.13–1.15 s with four, 1.15–1.19
 * with six, 1.27 with two; pushes no slower: 1.03 s against the SDK's 1.18).
 */
export const LANES = 16;
const LARGE_LANES = 4;

/** Admits at most `n` at a time. */
function gate(n: number) {
  let free = n;
  const waiting: (() => void)[] = [];
  return async <T>(job: () => Promise<T>): Promise<T> => {
    if (free > 0) free--;
    else await new Promise<void>((r) => waiting.push(r));
    try {
      return await job();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}

/** Runs `jobs` at most `n` at a time; the first failure is thrown once all have settled. */
async function pool<T>(items: T[], n: number, job: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      try {
        await job(item);
      } catch (e) {
        failure ??= e;
        next = items.length; // no new work once one failed
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  if (failure !== undefined) throw failure;
}

/** What a pull stores of a remote object: its bytes (ETag here: their MD5), its headers, and the remote's entry. */
async function fetchObject(remote: Remote, key: string, now: number, versionId?: string) {
  const got = await remote.get(key, versionId);
  if (!got) return undefined;
  const etag = got.md5;
  return {
    entry: got.entry,
    incoming: { object: { key, size: sizeOf(got.body), etag, lastModified: got.entry.lastModified || now, ...got.headers }, body: got.body as Bytes | null },
  };
}

type Incoming = NonNullable<Awaited<ReturnType<typeof fetchObject>>>['incoming'] | ReturnType<typeof listedOnly>['incoming'];

/** A remote object as the cache mode lists it: size, ETag and date, no bytes and no headers until fetched. */
function listedOnly(entry: RemoteEntry, now: number) {
  return {
    entry,
    incoming: { object: { key: entry.key, size: entry.size, etag: entry.etag, lastModified: entry.lastModified || now, contentType: 'application/octet-stream', headers: {}, meta: [] }, body: null },
  };
}

/**
 * Fetches the bytes of `key`, listed only (cache mode), into the bucket, as a pull: outside the
 * outbox, and only while the key is still that listed object. A key the remote no longer holds
 * goes here too. Answers the bytes it made local (0: none).
 */
export async function fetchListed(store: Store, bucket: BucketRef, remote: Remote, key: string, now: () => number): Promise<number> {
  const object = await store.headObject(bucket, key);
  if (object === 'noSuchBucket' || !object?.notFetched) return 0;
  const seen = { etag: object.etag, change: null };
  const got = await fetchObject(remote, key, now());
  const made = await store.replica.pulled(bucket, key, seen, got?.incoming ?? null, got ? syncOf(got.entry, got.incoming.object, now()) : null);
  return typeof made === 'object' ? made.size : 0;
}

/**
 * Outcomes written to the store without holding the lane that moved the key: the lane takes its
 * next key while the write commits, and the writes that meet share a commit (the engine's group
 * commit: ten 16 MiB Blobs put in one transaction took a quarter of the time of ten put one
 * transaction each, in Chromium). Bounded, so that pulled bodies waiting for their commit never
 * pile up: bytes held in the worker's memory, and Blobs (the browser's) apart, under a larger
 * bound. Safe because a push whose record is lost (a kill before the commit) is recognised by the
 * next round: the remote holds the local bytes (settled as equal), or the multipart journal's
 * (settleCompleted).
 */
function committer(giveWay: () => Promise<void>) {
  const inFlight = new Set<Promise<void>>();
  let bytes = 0;
  let blobBytes = 0;
  let failure: { error: unknown } | undefined;
  const full = (size: number, blobSize: number) => inFlight.size >= WRITES_IN_FLIGHT
    || bytes + size > WRITE_BYTES_IN_FLIGHT || blobBytes + blobSize > WRITE_BLOB_BYTES_IN_FLIGHT;
  return {
    /** `size`: bytes of the write's bodies in memory; `blobSize`: bytes of its Blobs. */
    async add(size: number, write: () => Promise<void>, blobSize = 0): Promise<void> {
      while (inFlight.size > 0 && full(size, blobSize)) await Promise.race(inFlight);
      if (failure) throw failure.error;
      bytes += size;
      blobBytes += blobSize;
      const done: Promise<void> = giveWay().then(write).catch((e: unknown) => void (failure ??= { error: e })).finally(() => {
        inFlight.delete(done);
        bytes -= size;
        blobBytes -= blobSize;
      });
      inFlight.add(done);
    },
    /** Waits for every write; the first that failed is thrown. */
    async drain(): Promise<void> {
      while (inFlight.size > 0) await Promise.all(inFlight);
      if (failure) throw failure.error;
    },
  };
}
const WRITES_IN_FLIGHT = 64;

type PullOutcome = ObjectRecord | 'deleted' | 'changed' | 'quotaExceeded';
type PullWrite = Parameters<Store['replica']['pulledMany']>[1][number];

/**
 * Pulled objects (and local deletes) written several keys to a step (store.replica.pulledMany):
 * what each key holds is then read in one request round for the batch, not one round each, which
 * is what a pull of many small objects waited on. A batch goes when it holds PULL_BATCH keys or
 * PULL_BATCH_BYTES, and at the end of the round (flush).
 */
function pullBatches(store: Store, bucket: BucketRef, writes: ReturnType<typeof committer>) {
  let batch: { pull: PullWrite; then: (made: PullOutcome) => void | Promise<void> }[] = [];
  let bytes = 0;
  let blobBytes = 0;
  const send = async (): Promise<void> => {
    const these = batch;
    const [size, blobSize] = [bytes, blobBytes];
    batch = [];
    bytes = blobBytes = 0;
    if (these.length === 0) return;
    await writes.add(size, async () => {
      const made = await store.replica.pulledMany(bucket, these.map((b) => b.pull));
      if (made === 'noSuchBucket') throw bucketGone(bucket);
      for (const [i, b] of these.entries()) await b.then(made[i]!);
    }, blobSize);
  };
  return {
    async add(pull: PullWrite, then: (made: PullOutcome) => void | Promise<void>): Promise<void> {
      batch.push({ pull, then });
      const body = pull.incoming?.body;
      if (body instanceof Blob) blobBytes += body.size;
      else if (body) bytes += sizeOf(body);
      if (batch.length >= PULL_BATCH || bytes + blobBytes >= PULL_BATCH_BYTES) await send();
    },
    flush: send,
  };
}
const PULL_BATCH = 32;
const PULL_BATCH_BYTES = 4 * 1024 * 1024;
const WRITE_BYTES_IN_FLIGHT = 32 * 1024 * 1024;
/** Pulled Blobs waiting for their commit: the browser keeps them (on disk past its memory's share), not the worker. */
const WRITE_BLOB_BYTES_IN_FLIGHT = 128 * 1024 * 1024;

/**
 * The local objects a round pushes, read in batches of small ones, each batch in one read step (a
 * read each would queue every key behind the commits of the others); the next batch is read while
 * this one is pushed. Larger ones are read one at a time, when their turn comes.
 */
function localReads(store: Store, bucket: BucketRef, keys: string[]) {
  const index = new Map(keys.map((k, i) => [k, i]));
  const batches = new Map<number, Promise<Map<string, { object: ObjectRecord; body: Stored }>>>();
  const batch = (b: number) => {
    let got = batches.get(b);
    if (!got && b * READ_BATCH < keys.length) {
      got = store.replica.objects(bucket, keys.slice(b * READ_BATCH, (b + 1) * READ_BATCH)).then((m) => {
        if (m === 'noSuchBucket') throw bucketGone(bucket);
        return m;
      });
      batches.set(b, got);
    }
    return got;
  };
  return async (key: string): Promise<{ object: ObjectRecord; body: Stored } | undefined> => {
    const i = index.get(key);
    if (i === undefined) {
      const found = await store.getObject(bucket, key);
      if (found === 'noSuchBucket') throw bucketGone(bucket);
      return found;
    }
    const b = Math.floor(i / READ_BATCH);
    const got = await batch(b)!;
    void batch(b + 1)?.catch(() => {});
    batches.delete(b - 1); // read by now: let its bodies go
    return got.get(key);
  };
}
const READ_BATCH = 32;
/** Objects up to this size are read in batches: below it a read transaction costs more than the bytes. */
const BATCHED_BYTES = 256 * 1024;

/**
 * The remote, sending only the conditions it honours: a condition it mishandles is worse than
 * none (Ceph's RGW 16 on a versioned bucket refuses every If-Match, the right one too, so a push
 * with one would be refused forever). Where a condition is dropped, the round goes on only with
 * allowUnconditional, and its HEADs before a delete or a Complete stand in.
 */
function honouring(remote: Remote, g: Guarantees): Remote {
  const honoured = (c: Condition): Condition => ({
    ...(c.ifNoneMatch && g.ifNoneMatch ? { ifNoneMatch: true } : {}),
    ...(c.ifMatch !== undefined && g.ifMatch ? { ifMatch: c.ifMatch, quoteIfMatch: g.ifMatch === 'quoted' } : {}),
  });
  return {
    ...remote,
    put: (key, body, headers, c, md5) => remote.put(key, body, headers, honoured(c), md5),
    remove: (key, c = {}) => remote.remove(key, { ...honoured(c), ...(c.versionId ? { versionId: c.versionId } : {}) }),
    completeUpload: (key, uploadId, parts, c) => remote.completeUpload(key, uploadId, parts, honoured(c)),
  };
}

export async function syncRound(options: RoundOptions): Promise<RoundResult> {
  const o = { ...options, remote: honouring(options.remote, options.guarantees) };
  const { store, bucket, remote } = o;
  const result: RoundResult = { pushed: [], pulled: [], deletedRemote: [], deletedLocal: [], conflicts: [], deferred: [] };
  const giveWay = o.giveWay ?? (() => Promise.resolve());
  await giveWay();
  const local = await store.getBucket(bucket.name);
  if (local?.id !== bucket.id) throw bucketGone(bucket);
  const { listed, history } = await listRemote(remote, local.versioning === 'Enabled' && (o.mode === 'two-way' || o.mode === 'pull'));
  await sweepProbes(o, listed);
  await settleCompleted(o, listed);
  await giveWay();
  const view = await store.replica.view(bucket);
  if (view === 'noSuchBucket') throw bucketGone(bucket);
  const actions = plan(view, listed, o.mode, history);
  const skipped = [...new Set([...view.objects.keys(), ...view.outbox.keys()])].filter(unsyncable);
  if (skipped.length > 0) result.skipped = skipped;

  // Safety rail: a round that would delete a large share of what either side had at the last sync
  // stops before anything changes, and asks.
  const share = (n: number) => view.synced.size > 0 && n > o.maxDeleteShare * view.synced.size && n >= 10;
  const remoteDeletes = actions.filter((a) => a.do === 'delete-remote').length;
  const localDeletes = actions.filter((a) => a.do === 'delete-local' && a.seen.etag !== null).length;
  if (!o.allowDeletes && (share(remoteDeletes) || share(localDeletes))) {
    const [n, side] = share(remoteDeletes) ? [remoteDeletes, 'remote'] : [localDeletes, 'local'];
    throw new SyncStopped('deletes', `This sync would delete ${n} of the ${view.synced.size} objects the ${side} side held at the last sync `
      + `(more than ${Math.round(o.maxDeleteShare * 100)}%). Nothing was changed. If that is what you meant, sync with { allowDeletes: true }.`);
  }
  const unconditional = !o.guarantees.ifNoneMatch || o.guarantees.ifMatch === false;
  if (unconditional && !o.allowUnconditional && actions.some((a) => a.do === 'push' || a.do === 'delete-remote')) {
    throw new SyncStopped('unconditional', `The remote at ${remote.where.endpoint} ignores ${!o.guarantees.ifNoneMatch ? 'If-None-Match' : 'If-Match'} on writes, `
      + 'so a push could overwrite what another device wrote there without knowing it. Nothing was pushed. Use a remote that honours '
      + 'conditional writes (AWS S3, R2, Ceph RGW, MinIO), or allow it with { allowUnconditional: true }.');
  }
  const ifMatch = (etag: string): Condition => ({ ifMatch: etag });
  const taken = (k: string) => view.objects.has(k) || listed.has(k);
  const total = actions.length;
  let done = 0;
  const progress = (phase: 'pushing' | 'pulling', key: string) => o.onProgress?.({ phase, key, done: ++done, total });
  const defer = (key: string): void => void result.deferred.push(key);
  const writes = committer(giveWay);
  const pulls = pullBatches(store, bucket, writes);
  /** A push recorded, and its multipart journal entry (if it went by one) let go only then. */
  const recordPushed = async (key: string, change: string | null, sync: Omit<SyncRecord, 'bucket' | 'key'>) => {
    const written = await store.replica.pushed(bucket, key, change, sync);
    if (written === 'ok' && o.uploads.get(key)) await o.uploads.set(key, undefined);
    return written;
  };
  const readLocal = localReads(store, bucket, actions.flatMap((a) => (a.do === 'push' && a.object.size <= BATCHED_BYTES ? [a.key] : [])));

  /** The remote's object as a local write will store it (in the cache mode, as listed: no bytes). */
  const fetchRemote = async (key: string, listedAs: RemoteEntry) => (o.mode === 'cache' ? listedOnly(listedAs, o.now()) : fetchObject(remote, key, o.now()));

  /** Pushes the key's current local object over what the remote holds (`condition`); the remote's new ETag. */
  const pushObject = async (key: string, seen: SeenState, condition: Condition): Promise<{ etag: string; versionId?: string; object: ObjectRecord } | 'changed' | 'preconditionFailed'> => {
    const found = await readLocal(key);
    if (!found || found.object.etag !== seen.etag) return 'changed';
    const { object } = found;
    const headers = { contentType: object.contentType, headers: object.headers, meta: object.meta };
    // Bytes kept in their record go as they are: a Blob made of them costs more than a small PUT.
    const body = found.body instanceof Uint8Array ? found.body : await blobOf(found.body);
    if (sizeOf(body) <= o.multipartBytes) {
      // A local object written whole has its MD5 for ETag: the remote checks the bytes against it.
      const put = await remote.put(key, body, headers, condition, /^[0-9a-f]{32}$/.test(object.etag) ? object.etag : undefined);
      return put === 'preconditionFailed' ? put : { ...put, object };
    }
    const done = await pushMultipart(o, key, seen, object, headers, body instanceof Blob ? body : new Blob([body]), condition);
    return done === 'preconditionFailed' ? done : { ...done, object };
  };

  const apply = async (a: Action): Promise<void> => {
    switch (a.do) {
      case 'settle': {
        const sync = a.sync ? { ...a.sync, syncedAt: o.now() } : null;
        return writes.add(0, async () => {
          if ((await store.replica.pushed(bucket, a.key, a.seen.change, sync)) !== 'ok') defer(a.key);
        });
      }
      case 'push': {
        const condition: Condition = a.synced ? ifMatch(a.synced.remoteEtag) : { ifNoneMatch: true };
        const pushedTo = await pushObject(a.key, a.seen, condition);
        if (pushedTo === 'changed' || pushedTo === 'preconditionFailed') return defer(a.key);
        const sync = syncOf(pushedTo, pushedTo.object, o.now());
        return writes.add(0, async () => {
          if ((await recordPushed(a.key, a.seen.change, sync)) !== 'ok') return defer(a.key);
          result.pushed.push(a.key);
          progress('pushing', a.key);
        });
      }
      case 'delete-remote': {
        // Where the remote ignores If-Match on DELETE (RGW 16), a HEAD just before stands in for it.
        const now = await remote.head(a.key);
        if (now && now.etag !== a.synced.remoteEtag) return defer(a.key);
        if (now && (await remote.remove(a.key, ifMatch(a.synced.remoteEtag))) === 'preconditionFailed') return defer(a.key);
        return writes.add(0, async () => {
          if ((await store.replica.pushed(bucket, a.key, a.seen.change, null)) !== 'ok') return defer(a.key);
          result.deletedRemote.push(a.key);
          progress('pushing', a.key);
        });
      }
      case 'pull': {
        let { seen } = a;
        // Where the bucket keeps versions, the remote's versions made since the last sync are
        // written in their order first, each recorded as synced: a round cut on the way goes on
        // from there.
        for (const v of a.missed ?? []) {
          const got = await fetchObject(remote, a.key, o.now(), v.versionId);
          if (!got) continue; // deleted from the history meanwhile
          const made = await store.replica.pulled(bucket, a.key, seen, got.incoming, syncOf(got.entry, got.incoming.object, o.now()));
          if (typeof made !== 'object') return defer(a.key);
          seen = { etag: made.etag, change: null };
        }
        const got = a.missed ? await fetchObject(remote, a.key, o.now(), a.remote.versionId) : await fetchRemote(a.key, a.remote);
        if (!got) return defer(a.key);
        const sync = syncOf(got.entry, got.incoming.object, o.now());
        return pulls.add({ key: a.key, seen, incoming: got.incoming, sync }, (made) => pulledIn({ ...a, seen }, made));
      }
      case 'delete-local':
        return pulls.add({ key: a.key, seen: a.seen, incoming: null, sync: null }, (made) => {
          if (made !== 'deleted') return defer(a.key);
          if (a.seen.etag !== null) result.deletedLocal.push(a.key);
          progress('pulling', a.key);
        });
      case 'conflict':
        return conflict(a);
    }
  };

  /** A pulled object stored; a conflict copy another device made is recorded as a conflict here too. */
  const pulledIn = async (a: Extract<Action, { do: 'pull' }>, made: PullOutcome): Promise<void> => {
    if (typeof made !== 'object') return defer(a.key);
    result.pulled.push(a.key);
    const of = made.meta.find(([name]) => name === CONFLICT_META)?.[1];
    if (of !== undefined && !a.seen.etag) {
      const found: ConflictRecord = {
        bucket: bucket.name, id: `${new Date(o.now()).toISOString()} ${of}`, key: of, keptAt: a.key, local: 'changed', remote: 'changed',
        winner: 'remote', at: o.now(), remoteEtag: a.remote.etag, foundElsewhere: true,
      };
      if ((await store.replica.recordConflict(bucket, found)) === 'ok') result.conflicts.push(found);
    }
    progress('pulling', a.key);
  };

  const conflict = async (a: Extract<Action, { do: 'conflict' }>): Promise<void> => {
    const { c } = a;
    const resolution = await resolve(o.policy, o.mode, c);
    if (resolution === undefined) return void (result.undecided ??= []).push(a.key);
    const at = o.now();
    if (resolution === 'both' && o.mode === 'push' && c.localObject && c.remoteEntry) {
      // Push only: the local version takes the key, and the remote's is kept beside it, on the remote.
      const keptAt = conflictName(a.key, o.device, at, taken);
      listed.set(keptAt, c.remoteEntry);
      if ((await remote.copy(keptAt, a.key, c.remoteEntry.etag)) === 'preconditionFailed') return defer(a.key);
      const record: ConflictRecord = {
        bucket: bucket.name, id: `${new Date(at).toISOString()} ${a.key}`, key: a.key, keptAt, local: c.local, remote: c.remote, at, winner: 'local',
        localEtag: c.localObject.etag, remoteEtag: c.remoteEntry.etag,
      };
      const sync = { remoteEtag: c.remoteEntry.etag, localEtag: a.seen.etag ?? '', size: c.remoteEntry.size, syncedAt: at };
      if ((await store.replica.localWins(bucket, a.key, sync, record)) !== 'ok') return defer(a.key);
      result.conflicts.push(record);
      const pushedTo = await pushObject(a.key, a.seen, ifMatch(c.remoteEntry.etag));
      if (pushedTo === 'changed' || pushedTo === 'preconditionFailed') return defer(a.key);
      await recordPushed(a.key, a.seen.change, syncOf(pushedTo, pushedTo.object, o.now()));
      result.pushed.push(a.key);
      return progress('pushing', a.key);
    }
    const record: ConflictRecord = {
      bucket: bucket.name, id: `${new Date(at).toISOString()} ${a.key}`, key: a.key, local: c.local, remote: c.remote, at,
      winner: resolution === 'local' ? 'local' : 'remote',
      ...(c.localObject ? { localEtag: c.localObject.etag } : {}), ...(c.remoteEntry ? { remoteEtag: c.remoteEntry.etag } : {}),
    };
    if (resolution === 'local') {
      // The local version takes the key on both sides: pushed over the remote's (or the remote's deleted).
      const remoteNow = c.remoteEntry;
      const sync = remoteNow ? { remoteEtag: remoteNow.etag, localEtag: a.seen.etag ?? '', size: remoteNow.size, syncedAt: at } : null;
      if ((await store.replica.localWins(bucket, a.key, sync, record)) !== 'ok') return defer(a.key);
      result.conflicts.push(record);
      if (c.localObject) {
        const pushedTo = await pushObject(a.key, a.seen, remoteNow ? ifMatch(remoteNow.etag) : { ifNoneMatch: true });
        if (pushedTo === 'changed' || pushedTo === 'preconditionFailed') return defer(a.key);
        await recordPushed(a.key, a.seen.change, syncOf(pushedTo, pushedTo.object, o.now()));
        result.pushed.push(a.key);
      } else if (remoteNow) {
        if ((await remote.remove(a.key, ifMatch(remoteNow.etag))) === 'preconditionFailed') return defer(a.key);
        await store.replica.pushed(bucket, a.key, a.seen.change, null);
        result.deletedRemote.push(a.key);
      }
      return progress('pushing', a.key);
    }
    // The remote's version takes the key; under 'both' the local one is kept beside it.
    const got = c.remoteEntry ? await fetchRemote(a.key, c.remoteEntry) : undefined;
    if (c.remoteEntry && !got) return defer(a.key);
    const keptAt = resolution === 'both' && c.localObject ? conflictName(a.key, o.device, at, taken) : undefined;
    if (keptAt) view.objects.set(keptAt, c.localObject!); // taken, for any later conflict of this round
    const sync = got ? syncOf(got.entry, got.incoming.object, at) : null;
    const kept = await store.replica.keepBoth(bucket, a.key, a.seen, got?.incoming ?? null, sync, { ...record, ...(keptAt ? { keptAt } : {}) });
    if (kept !== 'ok') return defer(a.key);
    result.conflicts.push({ ...record, ...(keptAt ? { keptAt } : {}) });
    if (got) result.pulled.push(a.key);
    return progress('pulling', a.key);
  };

  const large = gate(LARGE_LANES);
  const sizeOfAction = (a: Action) => Math.max(
    a.do === 'push' ? a.object.size : 0,
    a.do === 'pull' ? a.remote.size : 0,
    a.do === 'conflict' ? Math.max(a.c.localObject?.size ?? 0, a.c.remoteEntry?.size ?? 0) : 0,
  );
  try {
    await pool(actions, LANES, async (a) => {
      await giveWay();
      return sizeOfAction(a) > BATCHED_BYTES ? large(() => apply(a)) : apply(a);
    });
  } catch (e) {
    // What moved is recorded before the round ends.
    await pulls.flush().catch(() => {});
    await writes.drain().catch(() => {});
    throw e;
  }
  await pulls.flush();
  await writes.drain();
  await abandonUploads(o, new Set(actions.filter((a) => a.do === 'push').map((a) => a.key)));
  return result;
}

/**
 * The remote's current objects by key; with `withHistory`, each key's versions too, delete
 * markers among them, newest first. A remote that will not list versions (a
 * 403 or a 501: a policy without s3:ListBucketVersions, a server without versions) is listed
 * without them.
 */
async function listRemote(remote: Remote, withHistory: boolean): Promise<{ listed: Map<string, RemoteEntry>; history?: Map<string, RemoteVersion[]> }> {
  let versions: RemoteVersion[] | undefined;
  if (withHistory) {
    versions = await remote.versions().catch((e: unknown) => {
      if (e instanceof RemoteError && (e.status === 403 || e.status === 501)) return undefined;
      throw e;
    });
  }
  if (!versions) return { listed: new Map((await remote.list()).map((e) => [e.key, e])) };
  const listed = new Map<string, RemoteEntry>();
  const history = new Map<string, RemoteVersion[]>();
  for (const v of versions) {
    if (v.latest && !v.deleteMarker) listed.set(v.key, { key: v.key, etag: v.etag, size: v.size, lastModified: v.lastModified, ...(v.versionId ? { versionId: v.versionId } : {}) });
    const kept = history.get(v.key);
    if (kept) kept.push(v);
    else history.set(v.key, [v]);
  }
  return { listed, history };
}

/** Aborts the remote uploads of pushes no longer wanted (their key changed again, or was deleted). */
async function abandonUploads(o: RoundOptions, pushing: Set<string>): Promise<void> {
  for (const key of o.uploads.keys()) {
    if (pushing.has(key)) continue;
    const state = o.uploads.get(key)!;
    await o.remote.abortUpload(key, state.uploadId).catch((e: unknown) => {
      if (!(e instanceof RemoteError) || e.retryable) throw e;
    });
    await o.uploads.set(key, undefined);
  }
}

/**
 * A large body by multipart upload, resumable: the upload and each part that landed are journaled,
 * so a round after a reload or a kill sends only the parts not yet on the remote (those the remote
 * lists, with the ETags they were sent with), and an upload of another change is aborted first.
 */
async function pushMultipart(
  o: RoundOptions, key: string, seen: SeenState, object: ObjectRecord, headers: { contentType: string; headers: ObjectRecord['headers']; meta: ObjectRecord['meta'] },
  body: Blob, condition: Condition,
): Promise<{ etag: string; versionId?: string } | 'preconditionFailed'> {
  let state = o.uploads.get(key);
  if (state && (state.change !== seen.change || state.localEtag !== object.etag)) {
    await o.remote.abortUpload(key, state.uploadId).catch(() => {});
    state = undefined;
  }
  if (state) {
    const listed = await o.remote.listParts(key, state.uploadId);
    if (!listed) state = undefined;
    else {
      const sent = new Map(listed.map((p) => [p.partNumber, p.etag]));
      state = { ...state, parts: state.parts.filter((p) => sent.get(p.partNumber) === p.etag) };
    }
  }
  const count = Math.ceil(body.size / o.partBytes);
  if (!state) {
    state = { uploadId: await o.remote.createUpload(key, headers), change: seen.change, localEtag: object.etag, size: body.size, total: count, parts: [] };
    await o.uploads.set(key, state);
  }
  for (let n = 1; n <= count; n++) {
    if (state.parts.some((p) => p.partNumber === n)) continue;
    const etag = await o.remote.uploadPart(key, state.uploadId, n, body.slice((n - 1) * o.partBytes, n * o.partBytes));
    state = { ...state, parts: [...state.parts, { partNumber: n, etag }].sort((a, b) => a.partNumber - b.partNumber) };
    await o.uploads.set(key, state);
  }
  // Where the remote ignores conditions on Complete (Ceph's RGW 16), a HEAD just before stands in for them.
  const now = await o.remote.head(key);
  const holds = condition.ifNoneMatch ? now === undefined : condition.ifMatch === undefined || now?.etag === condition.ifMatch;
  if (!holds) {
    await o.remote.abortUpload(key, state.uploadId).catch(() => {});
    await o.uploads.set(key, undefined);
    return 'preconditionFailed';
  }
  const done = await o.remote.completeUpload(key, state.uploadId, state.parts, condition);
  if (done === 'preconditionFailed') {
    await o.uploads.set(key, undefined);
    await o.remote.abortUpload(key, state.uploadId).catch(() => {});
    return done;
  }
  // The journal entry stays until the push is recorded (recordPushed): lost before, the next round
  // still recognises the object the parts made (settleCompleted) instead of finding a conflict.
  // Ceph's RGW 16 answers Complete with an empty ETag; the object's own is read back.
  if (done.etag === '') {
    const head = await o.remote.head(key);
    if (!head) throw new RemoteError(`Completing the upload of ${key}: the object is not there after it.`, 200, 'MissingObject', true);
    return { etag: head.etag, ...(head.versionId ? { versionId: head.versionId } : {}) };
  }
  return done;
}

/**
 * What the remote honours of conditional writes, found by writing a probe object of the replica's
 * own under RESERVED (and deleting it): If-None-Match: * over an existing key, If-Match with a
 * wrong ETag, and If-Match with the right one quoted (S3) or only unquoted (RGW 16).
 */
export async function probe(remote: Remote, device: string): Promise<Guarantees> {
  const key = `${RESERVED}probe-${device}-${crypto.randomUUID()}`;
  const body = new Blob([`swbucket probe from ${device}`]);
  const headers = { contentType: 'text/plain', headers: {}, meta: [] };
  // On a versioned remote each write that lands is a version: all are deleted by id after.
  const made: string[] = [];
  const put = async (condition: Condition) => {
    const done = await remote.put(key, body, headers, condition);
    if (done !== 'preconditionFailed' && done.versionId) made.push(done.versionId);
    return done;
  };
  try {
    const first = await put({ ifNoneMatch: true });
    if (first === 'preconditionFailed') throw new RemoteError(`Probing ${remote.where.bucket}: a new key was refused as existing.`, 412, 'PreconditionFailed', false);
    const again = await put({ ifNoneMatch: true });
    const wrong = await put({ ifMatch: '0'.repeat(32) });
    let ifMatch: Guarantees['ifMatch'] = false;
    if (wrong === 'preconditionFailed') {
      const current = (await remote.head(key))?.etag ?? first.etag;
      if ((await put({ ifMatch: current, quoteIfMatch: true })) !== 'preconditionFailed') ifMatch = 'quoted';
      else if ((await put({ ifMatch: (await remote.head(key))?.etag ?? current, quoteIfMatch: false })) !== 'preconditionFailed') ifMatch = 'unquoted';
    }
    return { ifNoneMatch: again === 'preconditionFailed', ifMatch };
  } finally {
    // The probe is the replica's own litter: tried again at once, and swept by later rounds (sweepProbes).
    for (const versionId of made.length > 0 ? made : [undefined]) {
      for (let i = 0; i < 3; i++) {
        if (await remote.remove(key, versionId ? { versionId } : {}).then(() => true, () => false)) break;
      }
    }
  }
}

/** How old a probe object left on the remote (its delete failed, the round was killed) must be before a round deletes it. */
const PROBE_LEFT_MS = 10 * 60_000;

/** Deletes this device's probe objects that earlier rounds left on the remote (never another device's, nor one in use). */
async function sweepProbes(o: RoundOptions, listed: Map<string, RemoteEntry>): Promise<void> {
  const own = `${RESERVED}probe-${o.device}-`;
  for (const e of listed.values()) {
    if (e.key.startsWith(own) && e.lastModified < o.now() - PROBE_LEFT_MS) await o.remote.remove(e.key);
  }
}
