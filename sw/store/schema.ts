// The store's tables as the engine interface names them (sw/store/engine/types.ts): the same
// stores and keys as today's IndexedDB database (sw/store/idb.ts, UPGRADES) and --data directory
// (node/lmdb-store.ts), so that data written today opens unchanged once the rules move onto the
// engines (issue 22). Bodies kept as pieces (out-of-line keys, bare bytes) get a table of their
// own when the body rules move.
import type { Table } from './engine/types.ts';
import type { Account, BucketRecord, ObjectRecord, PartRecord, UploadRecord } from './types.ts';

export const ACCOUNTS: Table<Account> = { name: 'accounts', parts: 1, key: (a) => [a.accessKeyId] };
export const BUCKETS: Table<BucketRecord> = { name: 'buckets', parts: 1, key: (b) => [b.name] };
/** Current objects, by [bucket, key]. */
export const OBJECTS: Table<ObjectRecord> = { name: 'objects', parts: 2, key: (o) => [o.bucket, o.key] };
/** Earlier versions, by [bucket, key, versionId]. */
export const VERSIONS: Table<ObjectRecord> = { name: 'versions', parts: 3, key: (o) => [o.bucket, o.key, o.versionId ?? 0] };
export const UPLOADS: Table<UploadRecord> = { name: 'uploads', parts: 1, key: (u) => [u.uploadId] };
/** Uploaded parts, by [uploadId, partNumber]. */
export const PARTS: Table<PartRecord> = { name: 'parts', parts: 2, key: (p) => [p.uploadId, p.partNumber] };
/** A body's record (its Blob, or its bytes when small), by its id. */
export const BODIES: Table<{ id: string }> = { name: 'bodies', parts: 1, key: (b) => [b.id] };
