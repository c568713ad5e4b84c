// The object rules, as steps: what a write makes current, what it replaces (into the history when
// versioning is Enabled, else deleted with its bytes), deletes of the current object or of one
// version, Delete Multiple, restore from an archive, move and metadata replacement. Each runs
// inside a bucket write (store.ts), which has checked the bucket is still the one the request was
// authorised for.
import { all, get, getRead, range, type Read } from '../engine/types.ts';
import { BUCKETS, OBJECTS, OUTBOX, VERSIONS } from '../schema.ts';
import { NotFetchedError, StoreLimitError } from '../errors.ts';
import type { BucketRecord, ConditionRefusal, DeleteOutcome, ObjectHeaders, ObjectRecord, QuotaRefusal, WriteCondition } from '../types.ts';
import { dropBodies, idsOf } from './bodies.ts';
import { charge, type WriteStep } from './usage.ts';

/** What the object steps need besides the write: whether bodies may have pieces to delete. */
export interface ObjectStep extends WriteStep {
  pieces: boolean;
  /**
   * This step applies the remote's state to a replicated bucket (sw/replica/): its changes are
   * not the bucket's own, and do not enter the outbox.
   */
  fromRemote?: boolean;
}

/**
 * Records that `key`'s current object changed, in the step that changed it, when its bucket is
 * replicated (rules/replica.ts): no write is stored and never pushed, or pushed and not stored.
 * One entry a key, the latest: what is pushed is the key's state then, so changes coalesce.
 */
export function noteChange(s: ObjectStep, bucket: BucketRecord, key: string): void {
  if (!bucket.replica || s.fromRemote) return;
  s.w.put(OUTBOX, { bucket: bucket.name, key, change: crypto.randomUUID(), at: Date.now() });
}

/**
 * The highest version id a bucket hands out: 15 digits, the most a request may name
 * (sw/core/limits.ts). Reached only through an archive that set the bucket's counter near it.
 */
export const MAX_VERSION_ID = 1e15 - 1;

/** Whether `versionId` (from request text) can name a version at all: no key is anything else. */
export const canBeVersion = (versionId: number | undefined): boolean =>
  versionId === undefined || (Number.isSafeInteger(versionId) && versionId >= 0);

/**
 * Makes `next` the current object at its key. What it replaces goes into the history when the
 * bucket's versioning is Enabled (getting a versionId if it had none), else its bytes are deleted.
 * `added` is the number of bytes this write brings into the bucket; the owner is charged that
 * less whatever is freed, and nothing is written when the quota refuses, or `condition` does.
 */
export function* makeCurrent(
  s: ObjectStep,
  bucket: BucketRecord,
  next: Omit<ObjectRecord, 'versionId'>,
  added: number,
  freed = 0,
  condition?: WriteCondition,
  /** The key's current object, when the step has just read it. */
  known?: { old: ObjectRecord | undefined },
): Generator<Read, ObjectRecord | QuotaRefusal | ConditionRefusal, unknown> {
  const old = known ? known.old : yield* get(OBJECTS, [next.bucket, next.key]);
  const refused = condition?.(old);
  if (refused) return refused;
  const keepHistory = bucket.versioning === 'Enabled';
  // An object only listed from a replica's remote (cache mode) has no bytes here: no version to keep.
  const keepOld = keepHistory && !old?.notFetched;
  const delta = added - freed - (old && !keepOld ? old.size : 0);
  if (!(yield* charge(s, bucket, delta))) return 'quotaExceeded';
  let counter = bucket.nextVersionId;
  if (old && keepOld) s.w.put(VERSIONS, { ...old, versionId: old.versionId ?? counter++ });
  else yield* dropBodies(s.w, idsOf(old), s.pieces);
  const made: ObjectRecord = keepHistory ? { ...next, versionId: counter++ } : { ...next };
  if (counter - 1 > MAX_VERSION_ID) {
    throw new StoreLimitError(`Bucket ${bucket.name} has handed out every version id a request can name (up to ${MAX_VERSION_ID}): suspend its versioning to write on, or copy its objects to a new bucket.`);
  }
  s.w.put(OBJECTS, made);
  if (counter !== bucket.nextVersionId) s.w.put(BUCKETS, { ...bucket, nextVersionId: counter });
  noteChange(s, bucket, next.key);
  return made;
}

/**
 * Deletes the current object (its history stays) or one version. Deleting the current object by its
 * versionId makes the newest historical version current again.
 */
export function* deleteOne(s: ObjectStep, bucket: BucketRecord, key: string, versionId?: number): Generator<Read, DeleteOutcome, unknown> {
  if (!canBeVersion(versionId)) return 'noSuchVersion';
  const current = yield* get(OBJECTS, [bucket.name, key]);
  if (versionId === undefined || current?.versionId === versionId) {
    if (!current) return 'deleted';
    yield* charge(s, bucket, -current.size);
    s.w.delete(OBJECTS, [bucket.name, key]);
    yield* dropBodies(s.w, idsOf(current), s.pieces);
    noteChange(s, bucket, key);
    if (versionId !== undefined) {
      // Deleting the current version by id: the previous version becomes current again.
      const [previous] = yield* range(VERSIONS, { prefix: [bucket.name, key] }, { reverse: true, limit: 1 });
      if (previous) {
        s.w.put(OBJECTS, previous);
        s.w.delete(VERSIONS, [bucket.name, key, previous.versionId ?? 0]);
      }
    }
    return 'deleted';
  }
  const version = yield* get(VERSIONS, [bucket.name, key, versionId]);
  if (!version) return 'noSuchVersion';
  yield* charge(s, bucket, -version.size);
  s.w.delete(VERSIONS, [bucket.name, key, versionId]);
  yield* dropBodies(s.w, idsOf(version), s.pieces);
  return 'deleted';
}

/** Delete Multiple: each entry in turn, later entries seeing earlier deletions; missing keys count as deleted. */
export function* deleteMany(s: ObjectStep, bucket: BucketRecord, entries: { key: string; versionId?: number }[]): Generator<Read, DeleteOutcome[], unknown> {
  const keys = entries.map((e) => e.key);
  if (entries.some((e) => e.versionId !== undefined) || new Set(keys).size !== keys.length) {
    const outcomes: DeleteOutcome[] = [];
    for (const e of entries) outcomes.push(yield* deleteOne(s, bucket, e.key, e.versionId));
    return outcomes;
  }
  // The common case, distinct keys and no versions: every read at once rather than one after the
  // other. Each read is a round trip to the browser's IndexedDB backend, so the records come from
  // one read of the keys' span when that span holds few others (a "folder" being deleted), and
  // when it holds no others they go in one range delete: 1,000 keys are then a few requests and
  // their bodies' instead of 3,000.
  const sorted = [...keys].sort(); // code-unit order, as the engines compare strings
  const span = { prefix: [bucket.name], start: [bucket.name, sorted[0]!], end: [bucket.name, sorted[sorted.length - 1]!] };
  const limit = 2 * keys.length;
  const inSpan = yield* range(OBJECTS, span, { limit });
  const wanted = new Set(keys);
  const found = inSpan.length < limit
    ? inSpan.filter((o) => wanted.has(o.key))
    : (yield* all(...keys.map((key) => getRead(OBJECTS, [bucket.name, key])))).filter((o) => o !== undefined);
  yield* charge(s, bucket, -found.reduce((n, o) => n + o.size, 0));
  if (inSpan.length < limit && found.length === inSpan.length) s.w.deleteRange(OBJECTS, span);
  else for (const o of found) s.w.delete(OBJECTS, [bucket.name, o.key]);
  yield* dropBodies(s.w, found.flatMap(idsOf), s.pieces);
  for (const o of found) noteChange(s, bucket, o.key);
  return entries.map((): DeleteOutcome => 'deleted');
}

/**
 * Puts back one stored version exactly as recorded, its body already stored (rules/imports.ts): as
 * the current object or into the history; a clash is 'exists' unless `replace`, when the clashing
 * record is deleted. The bucket is read here, not given: an import restores many versions into it
 * in one step, each moving its version counter on.
 */
export function* restore(
  s: ObjectStep,
  bucketName: string,
  object: Omit<ObjectRecord, 'bucket' | 'chunks'>,
  body: { id: string; size: number },
  how: { current: boolean; replace: boolean },
): Generator<Read, 'ok' | 'exists' | QuotaRefusal, unknown> {
  const v = object.versionId;
  if (!how.current && v === undefined) throw new Error('a version in the history needs a versionId');
  const [bucket, atKey, sameId] = yield* all(
    getRead(BUCKETS, [bucketName]),
    getRead(OBJECTS, [bucketName, object.key]),
    v === undefined ? undefined : getRead(VERSIONS, [bucketName, object.key, v]),
  );
  if (!bucket) throw new Error(`a restore into ${bucketName}, which does not exist`);
  // The current object clashes when it is replaced, or when it carries the restored versionId.
  const current = atKey && (how.current || (v !== undefined && atKey.versionId === v)) ? atKey : undefined;
  const clashes = [current, sameId].filter((o) => o !== undefined);
  if (clashes.length > 0 && !how.replace) return 'exists';
  if (!(yield* charge(s, bucket, body.size - clashes.reduce((n, o) => n + o.size, 0)))) return 'quotaExceeded';
  yield* dropBodies(s.w, clashes.flatMap(idsOf), s.pieces);
  if (current) s.w.delete(OBJECTS, [bucket.name, object.key]);
  if (sameId && v !== undefined) s.w.delete(VERSIONS, [bucket.name, object.key, v]);
  const record: ObjectRecord = { ...object, bucket: bucket.name, chunks: [{ id: body.id, size: body.size }] };
  s.w.put(how.current ? OBJECTS : VERSIONS, record);
  if (v !== undefined && v >= bucket.nextVersionId) s.w.put(BUCKETS, { ...bucket, nextVersionId: v + 1 });
  if (how.current || current) noteChange(s, bucket, object.key);
  return 'ok';
}

/** Re-keys an object inside its bucket without touching its bytes; replaces the destination. `meta`: user metadata it gains. */
export function* move(s: ObjectStep, bucket: BucketRecord, from: string, to: string, lastModified: number, meta: [string, string][] = []): Generator<Read, ObjectRecord | 'noSuchKey', unknown> {
  const source = yield* get(OBJECTS, [bucket.name, from]);
  if (!source) return 'noSuchKey';
  // Its new key must be pushed with its bytes: fetched first.
  if (source.notFetched) throw new NotFetchedError(bucket.name, from);
  s.w.delete(OBJECTS, [bucket.name, from]);
  noteChange(s, bucket, from);
  // The bytes change key, not owner: nothing is added; the source's history stays at its key.
  const moved: Omit<ObjectRecord, 'versionId'> & { versionId?: number } = { ...source, key: to, lastModified, meta: [...source.meta, ...meta] };
  delete moved.versionId; // the destination is a new write: it gets its own versionId
  const made = yield* makeCurrent(s, bucket, moved, 0);
  if (typeof made !== 'object') throw new Error('a move never grows usage, and has no condition');
  return made;
}

/** Replaces the response metadata; bytes and ETag stay. */
export function* replaceMeta(s: ObjectStep, bucket: BucketRecord, key: string, headers: ObjectHeaders, lastModified: number): Generator<Read, 'ok' | 'noSuchKey', unknown> {
  const object = yield* get(OBJECTS, [bucket.name, key]);
  if (!object) return 'noSuchKey';
  if (object.notFetched) throw new NotFetchedError(bucket.name, key);
  s.w.put(OBJECTS, { ...object, ...headers, lastModified });
  noteChange(s, bucket, key);
  return 'ok';
}

/** The current object, or with `versionId` that version (current or historical). */
export function* readVersion(bucket: string, key: string, versionId?: number): Generator<Read, ObjectRecord | undefined, unknown> {
  if (!canBeVersion(versionId)) return undefined;
  const object = yield* get(OBJECTS, [bucket, key]);
  if (versionId === undefined || object?.versionId === versionId) return object;
  return yield* get(VERSIONS, [bucket, key, versionId]);
}
