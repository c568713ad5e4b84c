// The store's tables as the engine interface names them (sw/store/engine/types.ts): the same
// stores and keys as the IndexedDB database (sw/store/idb.ts, UPGRADES) and the --data directory
// (node/lmdb-store.ts), so data written by earlier versions opens unchanged.
import type { Table } from './engine/types.ts';
import type { Account, BucketRecord, ConflictRecord, ObjectRecord, OutboxEntry, PartRecord, SyncRecord, UploadRecord } from './types.ts';

export const ACCOUNTS: Table<Account> = { name: 'accounts', parts: 1, key: (a) => [a.accessKeyId] };
/**
 * One record per account whose stored usedBytes is exact; a missing one means "recompute" (see
 * rules/usage.ts: a full browser origin refuses even a delete's new usage figure).
 */
export const USAGE_EXACT: Table<{ accessKeyId: string }> = { name: 'usage-exact', parts: 1, key: (m) => [m.accessKeyId] };
export const BUCKETS: Table<BucketRecord> = { name: 'buckets', parts: 1, key: (b) => [b.name] };
/** Current objects, by [bucket, key]. */
export const OBJECTS: Table<ObjectRecord> = { name: 'objects', parts: 2, key: (o) => [o.bucket, o.key] };
/** Earlier versions, by [bucket, key, versionId]. */
export const VERSIONS: Table<ObjectRecord> = { name: 'versions', parts: 3, key: (o) => [o.bucket, o.key, o.versionId ?? 0] };
/** Uploads in progress, by uploadId. */
export const UPLOADS: Table<UploadRecord> = { name: 'uploads', parts: 1, key: (u) => [u.uploadId] };
/** The same uploads by [bucket, key, uploadId], for their listing and a bucket's emptiness. */
export const UPLOAD_KEYS: Table<UploadRecord> = { name: 'upload-keys', parts: 3, key: (u) => [u.bucket, u.key, u.uploadId] };
/** Uploaded parts, by [uploadId, partNumber]. */
export const PARTS: Table<PartRecord> = { name: 'parts', parts: 2, key: (p) => [p.uploadId, p.partNumber] };

/**
 * A body's record, by its id: its Blob (where the engine keeps Blobs), its bytes when small, or
 * the count and size of the pieces it is kept as.
 */
export type BodyRecord =
  | { id: string; blob: Blob; bytes?: undefined; pieces?: undefined }
  | { id: string; bytes: Uint8Array; blob?: undefined; pieces?: undefined }
  | { id: string; pieces: number; pieceBytes: number; size: number; blob?: undefined; bytes?: undefined };
export const BODIES: Table<BodyRecord> = { name: 'bodies', parts: 1, key: (b) => [b.id] };
/** The pieces of the bodies kept as pieces: bare bytes by [body id, index]. */
export const PIECES: Table<Uint8Array> = { name: 'pieces', parts: 2 };

/**
 * Bodies held apart from every object, by [holder, bodyId]: those an import has stored and not yet
 * committed (the holder is the import: rules/imports.ts), and those a write dropped while this
 * runtime was still streaming them to a reader (the holder is the runtime: rules/holds.ts). No read,
 * listing or usage figure sees them; their holder's end, or a sweep once the holder has stopped,
 * deletes them.
 */
export const HELD_BODIES: Table<{ holder: string; bodyId: string; size: number }> =
  { name: 'held-bodies', parts: 2, key: (s) => [s.holder, s.bodyId] };

/** A replicated bucket's keys changed and not yet pushed, by [bucket, key]: the latest change of each (rules/outbox.ts). */
export const OUTBOX: Table<OutboxEntry> = { name: 'outbox', parts: 2, key: (e) => [e.bucket, e.key] };
/** What each key of a replicated bucket was on both sides at its last sync, by [bucket, key]. */
export const SYNCED: Table<SyncRecord> = { name: 'synced', parts: 2, key: (r) => [r.bucket, r.key] };
/** The conflicts a sync found, by [bucket, id]. */
export const CONFLICTS: Table<ConflictRecord> = { name: 'conflicts', parts: 2, key: (c) => [c.bucket, c.id] };
/** Replicas' own records (sw/replica/ says what they hold), by [bucket]. */
export const REPLICAS: Table<{ bucket: string } & Record<string, unknown>> = { name: 'replicas', parts: 1, key: (r) => [r.bucket] };

/** Every table a bucket write may touch (dropping a body that is being read holds it instead). */
export const WRITE_TABLES = [ACCOUNTS, USAGE_EXACT, BUCKETS, OBJECTS, VERSIONS, UPLOADS, UPLOAD_KEYS, PARTS, BODIES, PIECES, HELD_BODIES, OUTBOX] as Table<unknown>[];
/** The tables a sync's own steps touch besides a bucket write's. */
export const REPLICA_TABLES = [SYNCED, CONFLICTS, REPLICAS] as Table<unknown>[];
/** The tables an account's usage is summed from (rules/usage.ts). */
export const USAGE_TABLES = [ACCOUNTS, USAGE_EXACT, BUCKETS, OBJECTS, VERSIONS, UPLOAD_KEYS, PARTS] as Table<unknown>[];
