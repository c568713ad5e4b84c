// The Store: everything the handler keeps, behind operation-sized methods. Each write method is
// one atomic step (one IndexedDB transaction in idb.ts): it checks what it depends on inside that
// step, so a racing request can never leave half an object, or an object in a deleted bucket or
// in another bucket created since under the same name (BucketRef). A read of a bucket's contents is
// likewise given the bucket it was authorised for, and answers 'noSuchBucket' rather than read
// another bucket of that name.
// Refusals are results; a write the browser has no room for throws StoreQuotaError (errors.ts).

import { ROOT_CREDENTIALS } from '../../protocol/instance.ts';

export type Acl = 'private' | 'public-read';

export type Conflict = 'skip' | 'overwrite' | 'fail';

/** What an import's commit makes: the archive's accounts, buckets and stored versions, each with its staged body. */
export interface ImportPlan {
  importId: string;
  conflict: Conflict;
  /** Owns a bucket whose owner this service does not have. */
  importer: string;
  accounts: Omit<Account, 'usedBytes' | 'root'>[];
  buckets: Omit<BucketRecord, 'id'>[];
  objects: { object: Omit<ObjectRecord, 'chunks'>; current: boolean; body: { id: string; size: number } }[];
}

export interface ImportTally {
  accountsCreated: number;
  accountsUpdated: number;
  accountsSkipped: number;
  bucketsCreated: number;
  bucketsExisting: number;
  objectsRestored: number;
  objectsSkipped: number;
  bytesRestored: number;
}

export interface Account {
  accessKeyId: string;
  secret: string;
  displayName: string;
  /** Bytes this account may store; undefined = unlimited. */
  quotaBytes?: number;
  /** Bytes its buckets hold: current objects, historical versions, uploaded parts. */
  usedBytes: number;
  root?: boolean;
}

/** The account a new store starts with (docs/protocol.md, "Accounts"), in every store. */
export const ROOT_ACCOUNT_RECORD: Account = {
  accessKeyId: ROOT_CREDENTIALS.accessKeyId,
  secret: ROOT_CREDENTIALS.secretAccessKey,
  displayName: ROOT_CREDENTIALS.accessKeyId,
  usedBytes: 0,
  root: true,
};

export type VersioningStatus = 'Enabled' | 'Suspended';

/**
 * One rule of a bucket's CORS configuration, as S3 has them (docs/protocol.md, "Dialects"): which
 * origins may send which methods with which headers, and what they may read of the answer.
 */
export interface CorsRule {
  id?: string;
  /** GET, PUT, POST, DELETE, HEAD. */
  allowedMethods: string[];
  /** Origins, each with at most one `*`. */
  allowedOrigins: string[];
  /** Request headers a preflight may ask for, each with at most one `*`; lower-case. */
  allowedHeaders: string[];
  exposeHeaders: string[];
  maxAgeSeconds?: number;
}

/** An S3 flexible checksum of an object's bytes, as its write was given or computed it. */
export interface ObjectChecksum {
  algorithm: 'CRC32' | 'CRC32C' | 'SHA1' | 'SHA256';
  /** Base64 of the digest. */
  value: string;
}

export interface BucketRecord {
  name: string;
  /**
   * The bucket's identity, given by the store at creation: a bucket deleted and re-created under
   * the same name is another bucket, with another id (docs/browser.md, "Bucket identity").
   */
  id: string;
  /** accessKeyId of the account that created it. */
  owner: string;
  acl: Acl;
  created: number;
  /** Absent until versioning is first configured. */
  versioning?: VersioningStatus;
  /** The versionId the next versioned write gets: increasing per bucket. */
  nextVersionId: number;
  /** The CORS configuration set through S3; absent: none (every origin is answered). */
  cors?: CorsRule[];
  /**
   * Bound to a remote bucket (sw/replica/): every change to its current objects is recorded in the
   * outbox in the write's own step. The binding itself is the `replicas` table's.
   */
  replica?: true;
}

/** The response headers an object keeps besides Content-Type (docs/protocol.md, "Copy, move and metadata replacement"). */
export const STANDARD_HEADERS = [
  'content-encoding',
  'cache-control',
  'expires',
  'content-disposition',
  'content-language',
] as const;
export type StandardHeader = (typeof STANDARD_HEADERS)[number];

/** Response metadata of an object: replaced as a whole by PUT Object Meta. */
export interface ObjectHeaders {
  contentType: string;
  headers: Partial<Record<StandardHeader, string>>;
  /** User metadata as [lower-cased name, value] pairs: a name like `__proto__` stays plain data. */
  meta: [string, string][];
}

/** A piece of an object's bytes: one record of the `bodies` store. */
export interface Chunk {
  id: string;
  size: number;
}

export interface ObjectRecord extends ObjectHeaders {
  bucket: string;
  key: string;
  size: number;
  /** Unquoted lower-case hex; `…-1` for a multipart object. */
  etag: string;
  /** Milliseconds since the epoch. */
  lastModified: number;
  /** The bytes, in order: one chunk for a PUT, one per part for a completed multipart upload. */
  chunks: Chunk[];
  /** x-svc-Object-md5 given at Complete. */
  objectMd5?: string;
  /** S3's flexible checksum of a single-request object's bytes, when its write had one. */
  checksum?: ObjectChecksum;
  /** Set when written while versioning was Enabled, or when moved into the history. */
  versionId?: number;
  /** A completed multipart upload's parts, in the object's order: what S3's GET ?partNumber= reads. */
  parts?: ObjectPart[];
  /** The multipart upload that made it: Complete of that upload, retried, is answered again (S3). */
  uploadId?: string;
  /**
   * Listed from a replica's remote in the read-through `cache` mode, its bytes not fetched yet: no
   * chunks; size, ETag and date are the remote's. Reading its body throws NotFetchedError.
   */
  notFetched?: true;
  /** A fetched object whose bytes the cache mode let go (cacheBytes): its headers are its own, so a HEAD answers without fetching. */
  headersKept?: true;
}

export interface ObjectPart {
  partNumber: number;
  size: number;
}

export interface ListObjectVersionsOptions {
  prefix: string;
  marker: string;
  /** With `marker`: continue after this version of that key. */
  versionIdMarker: string;
  maxKeys: number;
}

export interface VersionEntry {
  object: ObjectRecord;
  isLatest: boolean;
}

export interface ListObjectsOptions {
  prefix: string;
  marker: string;
  delimiter: string;
  maxKeys: number;
}

export type ListEntry = { kind: 'object'; object: ObjectRecord } | { kind: 'prefix'; prefix: string };

export interface ListObjectsResult {
  entries: ListEntry[];
  truncated: boolean;
}

/**
 * A bucket as a request found it when it was authorised: its name and identity. A write given one
 * commits only while that very bucket still holds the name; otherwise it changes nothing and
 * answers 'noSuchBucket', even when another bucket has been created under the name since.
 */
export type BucketRef = Pick<BucketRecord, 'name' | 'id'>;

/** The answer of a read given a BucketRef when the name now belongs to no bucket, or another one. */
export type NoSuchBucket = 'noSuchBucket';

/** Where a write's bytes go, for the quota estimate before its body is read (Store.roomFor). */
export type WriteTarget = { key: string } | { uploadId: string; partNumber: number };

export type WriteResult = 'ok' | 'noSuchBucket';

/** A write the bucket owner's quota does not allow: refused before anything changed. */
export type QuotaRefusal = 'quotaExceeded';

/**
 * A conditional write's test of the object now current at its key (S3's If-Match and
 * If-None-Match on PUT, Copy and Complete). It runs inside the write's own step, so no other
 * write comes between the test and the commit; what it answers refuses the write, which then
 * changes nothing.
 */
export type WriteCondition = (current: ObjectRecord | undefined) => ConditionRefusal | undefined;
/** Why a conditional write was refused: the object fails the condition, or If-Match found none. */
export type ConditionRefusal = 'preconditionFailed' | 'noSuchKey';

/**
 * A body in hand: a Blob, or the bytes themselves when they are already in memory (a small body:
 * in a browser, wrapping 1 KiB in a Blob only to read it back or answer with it costs more than
 * the rest of the request).
 */
export type Bytes = Blob | Uint8Array<ArrayBuffer>;

export const asBlob = (body: Bytes): Blob => (body instanceof Blob ? body : new Blob([body]));

/**
 * Stored bytes read only when streamed, where a store keeps bodies as pieces rather than Blobs
 * (sw/store/pieces.ts). Sliced like a Blob; nothing is read until stream() is pulled.
 */
export interface Pieces {
  readonly size: number;
  slice(start?: number, end?: number): Pieces;
  stream(): ReadableStream<Uint8Array<ArrayBuffer>>;
}

/** An object's bytes as a read hands them over: in hand, or kept as pieces and read on demand. */
export type Stored = Bytes | Pieces;

/** What one entry of a Delete Multiple did. */
export type DeleteOutcome = 'deleted' | 'noSuchVersion';

export interface Store {
  /**
   * True when getObject's Blob refers to the stored bytes without copying them (a browser's
   * IndexedDB Blob is a handle onto a file), so an export may hold many at once; false or absent
   * when each is a copy in memory, so an export reads one at a time.
   */
  readonly blobsAreHandles?: boolean;

  /** For access checks. Its usedBytes may lag behind writes; listAccounts() reads it fresh. */
  getAccount(accessKeyId: string): Promise<Account | undefined>;
  listAccounts(): Promise<Account[]>;
  /** Creates or updates; usedBytes and the root flag are kept by the store. */
  putAccount(account: Omit<Account, 'usedBytes' | 'root'>): Promise<'created' | 'updated'>;
  deleteAccount(accessKeyId: string): Promise<'ok' | 'noSuchAccount' | 'root' | 'ownsBuckets'>;

  /** For access checks. Its nextVersionId may lag behind writes, which read it in their own step. */
  getBucket(name: string): Promise<BucketRecord | undefined>;
  listBuckets(owner: string): Promise<BucketRecord[]>;
  /** Every bucket, whoever owns it, by name (for an export). */
  listAllBuckets(): Promise<BucketRecord[]>;
  /** The bucket record read fresh, when it still is the bucket `bucket` names. */
  readBucket(bucket: BucketRef): Promise<BucketRecord | NoSuchBucket>;
  /**
   * Gives the bucket a new identity (`id`) and stores it. Fails when the owner account is gone
   * (removed while this request was on its way).
   */
  createBucket(bucket: Omit<BucketRecord, 'id'>): Promise<'ok' | 'exists' | 'noSuchOwner'>;
  /**
   * Deletes only a bucket with no object, no version and no upload; with `abortUploads`, one with
   * no object and no version, and its uploads in progress with it (S3's rule), in the same step:
   * a bucket that is not deleted keeps its uploads. A replicated bucket is not deleted until its
   * replica is removed.
   */
  deleteBucket(bucket: BucketRef, o?: { abortUploads?: boolean }): Promise<'ok' | 'noSuchBucket' | 'notEmpty' | 'replicated'>;
  putBucketAcl(bucket: BucketRef, acl: Acl): Promise<WriteResult>;
  putBucketVersioning(bucket: BucketRef, status: VersioningStatus): Promise<WriteResult>;
  /** Sets the bucket's CORS configuration; undefined removes it. */
  putBucketCors(bucket: BucketRef, rules: CorsRule[] | undefined): Promise<WriteResult>;

  /** Metadata only; the current object, or with `versionId` that version (current or historical). */
  headObject(bucket: BucketRef, key: string, versionId?: number): Promise<ObjectRecord | undefined | NoSuchBucket>;
  /** Metadata and bytes read in one snapshot: a racing write is seen whole or not at all. */
  getObject(bucket: BucketRef, key: string, versionId?: number): Promise<{ object: ObjectRecord; body: Stored } | undefined | NoSuchBucket>;
  /**
   * Bytes a write to `target` may bring without passing the bucket owner's quota, as things stand:
   * what the quota leaves, plus what the write would free (the object it replaces when versioning
   * is not Enabled, the part with the same number). Infinity when the owner has no quota, or when
   * the bucket is not `bucket` any more (the write itself then answers). Read outside any write,
   * so a refusal can come before the body is read; the write checks the quota again in its step.
   */
  roomFor(bucket: BucketRef, target: WriteTarget): Promise<number>;
  /**
   * Stores `body` as the object's bytes and makes it current. What it replaces goes into the
   * history when versioning is Enabled, else is deleted. The owner's quota is checked first, and
   * before it `condition`, when given.
   */
  putObject(
    bucket: BucketRef,
    object: Omit<ObjectRecord, 'bucket' | 'chunks' | 'versionId'>,
    body: Stored,
    condition?: WriteCondition,
  ): Promise<ObjectRecord | 'noSuchBucket' | QuotaRefusal | ConditionRefusal>;
  /**
   * An import (rules/imports.ts): stores these bodies as import `importId`'s own, seen by no read,
   * listing or usage figure until commitImport hands them to objects. `bucketId` and `key` only
   * place the body's id beside its object's. Answers each body's id and size, in order.
   */
  stageImportBodies(importId: string, bodies: { bucketId: string; key: string; body: Blob }[]): Promise<{ id: string; size: number }[]>;
  /**
   * Makes the import's accounts, buckets and stored versions, with the bodies it staged, in one
   * step: each version exactly as recorded (ETag, dates, headers, versionId), as the current object
   * or into the history; a clash (the current object, or a version with the same versionId) is
   * kept with `skip`, deleted with `overwrite`, refuses everything with `fail`. Owners are charged
   * as for a PUT. Throws ImportRefused (rules/imports.ts) having written nothing.
   */
  commitImport(plan: ImportPlan): Promise<ImportTally>;
  /** Deletes the bodies `holder` holds apart (an import's not committed; a runtime's kept for its readers). */
  dropHeld(holder: string): Promise<void>;
  /** Who holds bodies apart: running, or stopped before its end (sw/store/holders.ts). */
  listHolders(): Promise<string[]>;
  /** Removes the current object; its history stays. */
  deleteObject(bucket: BucketRef, key: string): Promise<'ok' | 'noSuchKey' | 'noSuchBucket'>;
  /** Deletes each entry in one step: the current object, or the given version. Missing keys count as deleted. */
  deleteObjects(bucket: BucketRef, entries: { key: string; versionId?: number }[]): Promise<DeleteOutcome[] | 'noSuchBucket'>;
  /** Re-keys an object inside its bucket without touching its bytes; replaces the destination. */
  moveObject(bucket: BucketRef, from: string, to: string, lastModified: number): Promise<ObjectRecord | 'noSuchKey' | 'noSuchBucket'>;
  /** Replaces the response metadata; bytes and ETag stay. */
  putObjectMeta(bucket: BucketRef, key: string, headers: ObjectHeaders, lastModified: number): Promise<'ok' | 'noSuchKey' | 'noSuchBucket'>;
  listObjects(bucket: BucketRef, options: ListObjectsOptions): Promise<ListObjectsResult | NoSuchBucket>;
  /** Every version, by key, newest first within a key. */
  listObjectVersions(bucket: BucketRef, options: ListObjectVersionsOptions): Promise<{ versions: VersionEntry[]; truncated: boolean } | NoSuchBucket>;

  /** Starts an upload that belongs to `bucket` (name and identity); fails when the bucket is gone. */
  createMultipartUpload(bucket: BucketRef, upload: Omit<UploadRecord, 'bucket' | 'bucketId'>): Promise<WriteResult>;
  getUpload(uploadId: string): Promise<UploadRecord | undefined>;
  /**
   * Stores a part (replacing one with the same number) only while `bucket` is still that bucket
   * and the upload is in progress in it.
   */
  uploadPart(bucket: BucketRef, part: Omit<PartRecord, 'bodyId'>, body: Bytes): Promise<'ok' | 'noSuchBucket' | 'noSuchUpload' | QuotaRefusal>;
  /**
   * In one step: checks the listed parts (exist, ETags match, all but the last at least
   * `minPartBytes`), makes the object from their bodies without copying bytes, deletes the
   * unlisted parts and ends the upload. A refusal changes nothing.
   */
  completeMultipartUpload(
    bucket: BucketRef,
    uploadId: string,
    parts: { partNumber: number; etag: string }[],
    object: Omit<ObjectRecord, 'bucket' | 'chunks' | 'size' | 'versionId' | 'parts' | 'uploadId'>,
    minPartBytes: number,
    condition?: WriteCondition,
  ): Promise<ObjectRecord | CompleteRefusal>;
  /** Ends the upload and deletes its parts. */
  abortMultipartUpload(bucket: BucketRef, uploadId: string): Promise<'ok' | 'noSuchBucket' | 'noSuchUpload'>;
  /** Parts with a number above `marker`, ascending, at most `max`, of an upload in progress in `bucket`. */
  listParts(bucket: BucketRef, uploadId: string, marker: number, max: number): Promise<{ parts: PartRecord[]; truncated: boolean } | 'noSuchUpload' | NoSuchBucket>;
  /** In-progress uploads ordered by key, then uploadId. */
  listMultipartUploads(bucket: BucketRef, options: ListMultipartUploadsOptions): Promise<{ uploads: UploadRecord[]; truncated: boolean } | NoSuchBucket>;

  /** What a replica's sync reads and writes (sw/replica/; the steps are rules/replica.ts). */
  readonly replica: ReplicaLedger;

  close(): void;
}

/** A replica's own record, kept in the store by bucket: what sw/replica/ puts there. */
export type ReplicaRecord = { bucket: string } & Record<string, unknown>;

/** The replicated bucket's outcome of a sync's write: done, or refused because the key changed locally since it was read. */
export type SyncWrite<T = 'ok'> = T | 'changed' | 'noSuchBucket' | QuotaRefusal;

/** A key's local state as a sync read it (rules/replica.ts). */
export interface SeenState {
  etag: string | null;
  change: string | null;
}

/** The store's side of replicas: their records, a bucket's state for a sync, and each outcome of one, in one step each. */
export interface ReplicaLedger {
  /** Binds `bucket` to a replica (its record), or with undefined unbinds it, its outbox, sync state and conflicts going with it. */
  bind(bucket: BucketRef, record: ReplicaRecord | undefined): Promise<WriteResult>;
  /** Replaces a bound replica's record (its state); refused when the bucket is not bound. */
  putRecord(bucket: BucketRef, record: ReplicaRecord): Promise<WriteResult | 'notBound'>;
  records(): Promise<ReplicaRecord[]>;
  /** The bucket's current objects, sync records and outbox, by key, in one snapshot. */
  view(bucket: BucketRef): Promise<{ objects: Map<string, ObjectRecord>; synced: Map<string, SyncRecord>; outbox: Map<string, OutboxEntry> } | NoSuchBucket>;
  /** Several keys' current objects with their bodies, in one read step (a push reads a batch of small ones at once); a key with none is absent. */
  objects(bucket: BucketRef, keys: string[]): Promise<Map<string, { object: ObjectRecord; body: Stored }> | NoSuchBucket>;
  /** How many keys wait in the outbox and their objects' bytes, without reading the rest of the bucket. */
  pending(bucket: BucketRef): Promise<{ keys: number; bytes: number } | NoSuchBucket>;
  /** A push landed: the key's sync state (null: gone on both sides); its outbox entry goes while it is the change pushed. */
  pushed(bucket: BucketRef, key: string, change: string | null, sync: Omit<SyncRecord, 'bucket' | 'key'> | null): Promise<SyncWrite>;
  /**
   * The remote's object (with its body; a null body with `notFetched`: listed only, for the cache
   * mode) made current at the key outside the outbox, or null: the key's object deleted.
   */
  pulled(
    bucket: BucketRef, key: string, seen: SeenState,
    incoming: { object: Omit<ObjectRecord, 'bucket' | 'chunks' | 'versionId'>; body: Stored | null } | null,
    sync: Omit<SyncRecord, 'bucket' | 'key'> | null,
  ): Promise<SyncWrite<ObjectRecord | 'deleted'>>;
  /** Several keys' pulls (as `pulled`) in one write step; each key's outcome, in order. 'noSuchBucket' for all when the bucket is gone. */
  pulledMany(
    bucket: BucketRef,
    pulls: { key: string; seen: SeenState; incoming: { object: Omit<ObjectRecord, 'bucket' | 'chunks' | 'versionId'>; body: Stored | null } | null; sync: Omit<SyncRecord, 'bucket' | 'key'> | null }[],
  ): Promise<(ObjectRecord | 'deleted' | 'changed' | QuotaRefusal)[] | NoSuchBucket>;
  /** Fetched copies let go (the cache mode): each key still at `etag` with no change waiting becomes listed-only again; the keys let go. */
  evict(bucket: BucketRef, keys: { key: string; etag: string }[]): Promise<string[] | NoSuchBucket>;
  /** Both changed: the local version moves to `conflict.keptAt` (pushed as its own key), the remote's takes the key, the conflict is recorded. */
  keepBoth(
    bucket: BucketRef, key: string, seen: SeenState,
    incoming: { object: Omit<ObjectRecord, 'bucket' | 'chunks' | 'versionId'>; body: Stored | null } | null,
    sync: Omit<SyncRecord, 'bucket' | 'key'> | null,
    conflict: ConflictRecord,
  ): Promise<SyncWrite>;
  /** The local version won a conflict: the key's sync state becomes `sync` (the remote's, to be pushed over) and the conflict is recorded. */
  localWins(bucket: BucketRef, key: string, sync: Omit<SyncRecord, 'bucket' | 'key'> | null, conflict: ConflictRecord): Promise<SyncWrite>;
  /** Records a conflict another device found (its copy came with a pull). */
  recordConflict(bucket: BucketRef, conflict: ConflictRecord): Promise<WriteResult>;
  conflicts(bucket: BucketRef): Promise<ConflictRecord[] | NoSuchBucket>;
  /** Forgets a conflict (the app resolved it); both versions stay where they are. */
  dismissConflict(bucket: BucketRef, id: string): Promise<WriteResult>;
}

/** An in-progress multipart upload. */
export interface UploadRecord extends ObjectHeaders {
  uploadId: string;
  bucket: string;
  /** The id of the bucket it was started in: it never continues into a later bucket of that name. */
  bucketId: string;
  key: string;
  /** Milliseconds since the epoch. */
  initiated: number;
}

/** An uploaded part; its bytes are the body record `bodyId`. */
export interface PartRecord {
  uploadId: string;
  partNumber: number;
  /** Unquoted lower-case hex MD5 of the part. */
  etag: string;
  size: number;
  lastModified: number;
  bodyId: string;
}

export interface ListMultipartUploadsOptions {
  prefix: string;
  keyMarker: string;
  uploadIdMarker: string;
  maxUploads: number;
}

/** Why a Complete was refused, checked inside its one transaction. */
export type CompleteRefusal =
  | { refused: 'noSuchBucket' }
  | { refused: 'noSuchUpload' }
  | { refused: 'invalidPart'; partNumber: number }
  | { refused: 'entityTooSmall'; partNumber: number }
  | { refused: ConditionRefusal };

/** A key of a replicated bucket changed locally and not yet pushed: the latest change only (rules/outbox.ts). */
export interface OutboxEntry {
  bucket: string;
  key: string;
  /** Names this change: a push may take the entry out only while it is still the one it pushed. */
  change: string;
  /** Milliseconds since the epoch. */
  at: number;
}

/**
 * What one key of a replicated bucket was on both sides at its last sync: the remote's ETag (and
 * version id, where the remote keeps versions) and the local object's ETag. A key without one was
 * never synced: new on whichever side holds it.
 */
export interface SyncRecord {
  bucket: string;
  key: string;
  /** The remote object's ETag, unquoted, as the remote lists it. */
  remoteEtag: string;
  remoteVersionId?: string;
  /** The local object's ETag then. */
  localEtag: string;
  size: number;
  /** Milliseconds since the epoch. */
  syncedAt: number;
}

/** A conflict a sync found and kept: both versions are reachable, at `key` and at `keptAt`. */
export interface ConflictRecord {
  bucket: string;
  /** Names the conflict; sorts by time. */
  id: string;
  key: string;
  /** Where the version that lost the key is kept (the local one under keep-both); absent when none needed keeping. */
  keptAt?: string;
  /** What happened on each side since the last sync. */
  local: 'changed' | 'deleted' | 'new';
  remote: 'changed' | 'deleted' | 'new';
  localEtag?: string;
  remoteEtag?: string;
  /** Which version holds the key now, as the device that found the conflict saw it. */
  winner: 'remote' | 'local';
  at: number;
  /** Another device found it: this one learned of it by pulling the kept copy. */
  foundElsewhere?: true;
}
