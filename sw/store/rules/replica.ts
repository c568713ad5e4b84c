// The steps a replica's sync takes over the store (sw/replica/ decides; these write). What each key
// of a replicated bucket is locally, at its last sync and in the outbox is read in one snapshot;
// each outcome of a push or a pull is written in one step together with the sync state it leaves,
// and refused when the key changed locally since the sync read it (the sync then looks again next
// round): a local write is never overwritten by a pull it raced, nor taken out of the outbox by a
// push of an older state.
import { all, get, getRead, range, rangeRead, type Read } from '../engine/types.ts';
import { BUCKETS, CONFLICTS, OBJECTS, OUTBOX, REPLICAS, SYNCED } from '../schema.ts';
import type { BucketRecord, ConflictRecord, ObjectRecord, OutboxEntry, QuotaRefusal, SyncRecord } from '../types.ts';
import { deleteOne, makeCurrent, move, type ObjectStep } from './objects.ts';
import { dropBodies, idsOf } from './bodies.ts';

/** The user metadata (`x-amz-meta-swbucket-conflict-of`) a conflict copy carries: the key it is a version of. */
export const CONFLICT_META = 'swbucket-conflict-of';

/** A replicated bucket as one sync round reads it, by key. */
export interface ReplicaView {
  objects: Map<string, ObjectRecord>;
  synced: Map<string, SyncRecord>;
  outbox: Map<string, OutboxEntry>;
}

/**
 * A key's local state as a sync read it: its current object's ETag and its outbox entry's change
 * (null: none). Equal states are the same state: a write of the same bytes, a move onto the key or
 * a new metadata is a new outbox change.
 */
export interface Seen {
  etag: string | null;
  change: string | null;
}

export const seenOf = (object: ObjectRecord | undefined, entry: OutboxEntry | undefined): Seen =>
  ({ etag: object?.etag ?? null, change: entry?.change ?? null });

export function* view(bucket: string): Generator<Read, ReplicaView, unknown> {
  const within = { prefix: [bucket] };
  const [objects, synced, outbox] = yield* all(rangeRead(OBJECTS, within), rangeRead(SYNCED, within), rangeRead(OUTBOX, within));
  return {
    objects: new Map(objects.map((o) => [o.key, o])),
    synced: new Map(synced.map((r) => [r.key, r])),
    outbox: new Map(outbox.map((e) => [e.key, e])),
  };
}

/** How many keys wait in the outbox and the bytes of their objects: only the outbox and those objects are read, not the bucket. */
export function* pendingOf(bucket: string): Generator<Read, { keys: number; bytes: number }, unknown> {
  const entries = yield* range(OUTBOX, { prefix: [bucket] });
  const objects = entries.length === 0 ? [] : yield* all(...entries.map((e) => getRead(OBJECTS, [bucket, e.key])));
  return { keys: entries.length, bytes: objects.reduce((n: number, o) => n + ((o as ObjectRecord | undefined)?.size ?? 0), 0) };
}

/** Whether a key whose object and outbox entry are these is as `seen`. */
function isAsSeen(object: ObjectRecord | undefined, entry: OutboxEntry | undefined, seen: Seen): boolean {
  const now = seenOf(object, entry);
  return now.etag === seen.etag && now.change === seen.change;
}

/** Whether `key` is still as `seen`. */
function* still(bucket: string, key: string, seen: Seen): Generator<Read, boolean, unknown> {
  const [object, entry] = yield* all(getRead(OBJECTS, [bucket, key]), getRead(OUTBOX, [bucket, key]));
  return isAsSeen(object, entry, seen);
}

const putSynced = (s: ObjectStep, bucket: string, key: string, sync: Omit<SyncRecord, 'bucket' | 'key'> | null): void => {
  if (sync) s.w.put(SYNCED, { ...sync, bucket, key });
  else s.w.delete(SYNCED, [bucket, key]);
};

/**
 * A push landed on the remote: the key's sync state is now `sync` (null: deleted on both sides),
 * and its outbox entry goes when it is still the change that was pushed (a later one stays, to be
 * pushed in turn).
 */
export function* pushed(s: ObjectStep, bucket: BucketRecord, key: string, change: string | null, sync: Omit<SyncRecord, 'bucket' | 'key'> | null): Generator<Read, 'ok', unknown> {
  const entry = yield* get(OUTBOX, [bucket.name, key]);
  if (entry && entry.change === change) s.w.delete(OUTBOX, [bucket.name, key]);
  putSynced(s, bucket.name, key, sync);
  return 'ok';
}

/** The remote's object to make current, its body prepared by the store. */
export type Incoming = Omit<ObjectRecord, 'versionId'>;

/** One key's pull: the remote's object to make current (null: the key's object deleted), with `sync` the key's new sync state. */
export interface Pull {
  key: string;
  seen: Seen;
  incoming: Incoming | null;
  sync: Omit<SyncRecord, 'bucket' | 'key'> | null;
}
export type PullOutcome = ObjectRecord | 'deleted' | 'changed' | QuotaRefusal;

/**
 * The remote's state applied to several keys in one step, outside the outbox; each pull refused
 * alone ('changed') when its key is not as the sync saw it. What every key holds is read in one
 * request round for all, not a round each (a pull of many small objects waited on those rounds
 * more than on anything else). `made(i)` writes the body of the object pull i made.
 */
export function* pulledMany(s: ObjectStep, bucket: BucketRecord, pulls: Pull[], made: (index: number) => void): Generator<Read, PullOutcome[], unknown> {
  const found = yield* all(...pulls.flatMap((p) => [getRead(OBJECTS, [bucket.name, p.key]), getRead(OUTBOX, [bucket.name, p.key])]));
  const done = new Set<string>();
  const out: PullOutcome[] = [];
  // One step for all: each charge starts from the figure the one before left (usage.ts).
  const remote: ObjectStep = { ...s, fromRemote: true };
  let current = bucket;
  for (const [i, p] of pulls.entries()) {
    // A key twice in one batch is read again: the first pull changed it.
    const [object, entry] = done.has(p.key)
      ? yield* all(getRead(OBJECTS, [bucket.name, p.key]), getRead(OUTBOX, [bucket.name, p.key]))
      : [found[2 * i] as ObjectRecord | undefined, found[2 * i + 1] as OutboxEntry | undefined];
    done.add(p.key);
    const outcome = yield* applyPull(remote, current, p, object, entry);
    // Its body goes in now, before a later pull of the same key could drop it.
    if (typeof outcome === 'object') made(i);
    out.push(outcome);
    // A write in a versioned bucket hands out version ids from the bucket's record.
    if (current.versioning === 'Enabled') current = (yield* get(BUCKETS, [bucket.name])) ?? current;
  }
  return out;
}

/**
 * Fetched copies let go (the cache mode's budget): each key still holding the object of `etag`,
 * with no local change waiting, becomes listed-only again. Its record stays (size, ETag, headers:
 * a HEAD or a listing answers as before; the bucket's usage counts listed objects at their size
 * already), and so does its sync state; its bytes go, and its next read fetches them again.
 */
export function* evicted(s: ObjectStep, bucket: BucketRecord, keys: { key: string; etag: string }[]): Generator<Read, string[], unknown> {
  const found = yield* all(...keys.flatMap(({ key }) => [getRead(OBJECTS, [bucket.name, key]), getRead(OUTBOX, [bucket.name, key])]));
  const gone: string[] = [];
  for (const [i, { key, etag }] of keys.entries()) {
    const object = found[2 * i] as ObjectRecord | undefined;
    if (!object || object.notFetched || object.etag !== etag || found[2 * i + 1] !== undefined) continue;
    yield* dropBodies(s.w, idsOf(object), s.pieces);
    s.w.put(OBJECTS, { ...object, chunks: [], notFetched: true, headersKept: true });
    gone.push(key);
  }
  return gone;
}

/** A pull applied to its key, whose object and outbox entry are `object` and `entry`, by a step of the remote's (`fromRemote`). */
function* applyPull(remote: ObjectStep, bucket: BucketRecord, p: Pull, object: ObjectRecord | undefined, entry: OutboxEntry | undefined): Generator<Read, PullOutcome, unknown> {
  const { key, seen, incoming, sync } = p;
  if (!isAsSeen(object, entry, seen)) return 'changed';
  let made: ObjectRecord | 'deleted' | QuotaRefusal = 'deleted';
  if (incoming) {
    const result = yield* makeCurrent(remote, bucket, incoming, incoming.size, 0, undefined, { old: object });
    if (typeof result !== 'object') return 'quotaExceeded';
    made = result;
  } else if (seen.etag !== null) yield* deleteOne(remote, bucket, key);
  // A deletion that was the outbox's (both sides deleted it) leaves nothing to push.
  if (seen.change !== null) remote.w.delete(OUTBOX, [bucket.name, key]);
  putSynced(remote, bucket.name, key, sync);
  return made;
}

/**
 * Both sides changed `key` since its last sync, and both versions are kept: the local one moves to
 * `keptAt` (a local write: it enters the outbox and is pushed as its own key; no byte is copied),
 * the remote's takes `key`, and the conflict is recorded. Refused ('changed') when the key is not
 * as the sync saw it.
 */
export function* keepBoth(
  s: ObjectStep,
  bucket: BucketRecord,
  key: string,
  seen: Seen,
  incoming: Incoming | null,
  sync: Omit<SyncRecord, 'bucket' | 'key'> | null,
  conflict: ConflictRecord,
): Generator<Read, 'ok' | 'changed' | QuotaRefusal, unknown> {
  if (!(yield* still(bucket.name, key, seen))) return 'changed';
  // The copy says what it is a conflict copy of, so that every device that pulls it can report it.
  if (conflict.keptAt !== undefined && seen.etag !== null) yield* move(s, bucket, key, conflict.keptAt, Date.now(), [[CONFLICT_META, key]]);
  const remote: ObjectStep = { ...s, fromRemote: true };
  if (incoming) {
    const made = yield* makeCurrent(remote, bucket, incoming, incoming.size);
    if (typeof made !== 'object') return 'quotaExceeded';
  }
  // The key is the remote's now: what the outbox held for it (the move's deletion) is not pushed.
  s.w.delete(OUTBOX, [bucket.name, key]);
  putSynced(s, bucket.name, key, sync);
  s.w.put(CONFLICTS, conflict);
  return 'ok';
}

/** A conflict the local version won: kept at its key, to be pushed over the remote's (or again as new). */
export function* localWins(s: ObjectStep, bucket: BucketRecord, key: string, sync: Omit<SyncRecord, 'bucket' | 'key'> | null, conflict: ConflictRecord): Generator<Read, 'ok', unknown> {
  putSynced(s, bucket.name, key, sync);
  s.w.put(CONFLICTS, conflict);
  return 'ok';
}

/** Binds the bucket to a replica (`record`), or unbinds it: its outbox, sync state and conflicts go with the binding. */
export function* bind(s: ObjectStep, bucket: BucketRecord, record: ({ bucket: string } & Record<string, unknown>) | undefined): Generator<Read, 'ok', unknown> {
  const { replica: _was, ...rest } = bucket;
  if (record) {
    s.w.put(REPLICAS, { ...record, bucket: bucket.name });
    if (bucket.replica) return 'ok';
    s.w.put(BUCKETS, { ...rest, replica: true });
    // What the bucket holds already is new to the remote: in the outbox like any later write.
    const objects = yield* range(OBJECTS, { prefix: [bucket.name] });
    const at = Date.now();
    for (const o of objects) s.w.put(OUTBOX, { bucket: bucket.name, key: o.key, change: crypto.randomUUID(), at });
    return 'ok';
  }
  s.w.delete(REPLICAS, [bucket.name]);
  s.w.put(BUCKETS, rest);
  for (const table of [OUTBOX, SYNCED, CONFLICTS]) s.w.deleteRange(table, { prefix: [bucket.name] });
  return 'ok';
}
