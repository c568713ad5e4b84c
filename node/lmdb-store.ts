// The Store on disk, for the Node server's --data DIR: one LMDB environment (lmdb-js) in DIR, with
// the same records and the same semantics as sw/store/idb.ts, which stays the reference.
//
// Durability and atomicity. Every write method is one callback of db.childTransaction(): lmdb-js
// runs queued callbacks one after another inside a write transaction on its writer thread, each in
// a child transaction of its own, so a callback that throws leaves nothing behind while the others
// of the batch still commit. The callbacks are synchronous: a body is read into memory before its
// transaction is queued, and nothing but LMDB calls runs inside. The environment is opened with
// `overlappingSync: false`, so lmdb-js resolves a write only after LMDB's commit has synced the
// data and the meta page (fdatasync): what a method acknowledged is on disk. (lmdb-js's default on
// Linux, overlappingSync, resolves at commit and flushes afterwards; a power cut could then lose
// acknowledged writes.) LMDB's copy-on-write pages and meta-page switch mean a process killed at
// any instant leaves the last committed state: never part of an object, never a body without its
// record.
//
// Keys. IndexedDB orders [bucket, key, …] arrays by UTF-16 code units; lmdb-js's default key
// encoding orders strings by UTF-8 bytes, which puts astral characters (surrogate pairs,
// U+D800–U+DFFF) after U+E000–U+FFFF where IndexedDB puts them before. Keys here are raw bytes
// (keyEncoding 'binary') made by tupleKey() (lmdb-keys.ts), whose byte order is exactly IndexedDB's order, so the
// listings page the same way in both stores.
//
// Usage. An account's usedBytes is always exact here: every write charges the owner inside its own
// transaction. (idb.ts needs its `usage-exact` marker for a full browser origin, which refuses any
// transaction that puts a record, even a delete's new usage figure. LMDB commits a step whole,
// delete and charge together, or refuses it whole, so the figure never drifts from the records.)
import { accessSync, closeSync, constants as fsConstants, fsyncSync, mkdirSync, openSync, readFileSync, statfsSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { open, type Database, type RootDatabase, type Transaction } from 'lmdb';
import { StoreQuotaError } from '../sw/store/errors.ts';
import type {
  Account, Acl, Stored, BucketRecord, BucketRef, CompleteRefusal, DeleteOutcome, ListObjectsOptions, ListObjectsResult,
  ListMultipartUploadsOptions, ListObjectVersionsOptions, ObjectHeaders, ObjectRecord, PartRecord, QuotaRefusal, Store, Bytes,
  UploadRecord, VersioningStatus, WriteResult, WriteTarget,
} from '../sw/store/types.ts';
import { ROOT_ACCOUNT_RECORD } from '../sw/store/types.ts';
import { ObjectsPage, VersionsPage } from '../sw/store/listing.ts';
import { completedFrom } from '../sw/store/parts.ts';
import { blobOf } from '../sw/store/pieces.ts';
import { MAX_KEY_BYTES, after, stringOf, tupleKey } from './lmdb-keys.ts';


/** The layout below; a directory written by a later layout is refused rather than misread. */
const SCHEMA = 1;

/** Names one server's claim on a directory (see claimDirectory). */
const LOCK_FILE = 'swbucket.lock';

const newId = (): string => crypto.randomUUID();

/**
 * A listing bound made from request text: cut to the longest key LMDB takes. The cut bound sorts
 * at or before the full one, so a listing starts no later than it should; the listings skip
 * whatever lies before their marker themselves.
 */
const bound = (k: Buffer): Buffer => (k.length > MAX_KEY_BYTES ? k.subarray(0, MAX_KEY_BYTES) : k);

// ---- the directory ----------------------------------------------------------------------------

/** Where a store cannot open: the directory is not usable, or another server holds it. */
export class DataDirError extends Error {
  override readonly name = 'DataDirError';
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Directories this process holds, so that a second open here is refused like one elsewhere. */
const held = new Set<string>();

/**
 * Claims the directory for this process. LMDB itself lets several processes share an environment,
 * but one server per directory keeps the rules simple (no second writer behind a server's back),
 * so the first server writes its pid to LOCK_FILE. A lock whose process is gone (killed with
 * SIGKILL, say) is taken over; so is one naming this very pid when this process does not hold the
 * directory (a restarted container can give the next server the same pid).
 */
function claimDirectory(dir: string): () => void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, fsConstants.R_OK | fsConstants.W_OK);
  } catch (e) {
    throw new DataDirError(`cannot keep data in ${dir}: ${(e as Error).message}`, { cause: e });
  }
  const lock = join(dir, LOCK_FILE);
  if (held.has(dir)) throw new DataDirError(`${dir} is already in use by this process`);
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(lock, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' || attempt > 0) throw new DataDirError(`cannot lock ${dir}: ${(e as Error).message}`, { cause: e });
    }
    const pid = Number.parseInt(readFileSync(lock, 'utf8'), 10);
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
      throw new DataDirError(`${dir} is in use by another swbucket server (pid ${pid}); if none is running, remove ${lock}`);
    }
    unlinkSync(lock);
  }
  held.add(dir);
  return () => {
    held.delete(dir);
    try {
      unlinkSync(lock);
    } catch {
      // already gone: nothing to release
    }
  };
}

// ---- errors -----------------------------------------------------------------------------------

const MDB_MAP_FULL = -30792;
const ENOSPC = 28;
/** LMDB reports a short write, which is how a full disk shows up, as EIO. */
const EIO = 5;

/**
 * What lmdb-js rejects a failed commit with: an Error whose `commitError` promise holds the cause
 * (and which lmdb-js also prints). That promise must be handled, or Node stops on an unhandled
 * rejection.
 */
async function causeOf(e: unknown): Promise<unknown> {
  const pending = (e as { commitError?: Promise<unknown> } | null)?.commitError;
  if (!pending || typeof pending.then !== 'function') return e;
  try {
    await pending;
    return e;
  } catch (cause) {
    return cause;
  }
}

/**
 * A write refused for lack of room becomes StoreQuotaError, as a full browser origin does in
 * idb.ts. lmdb-js grows LMDB's map by itself, so MDB_MAP_FULL is rare; a full disk fails the
 * commit with ENOSPC or, from a short write, EIO, which counts as "full" only when the disk has
 * less room left than the write needed.
 */
export function isDiskFull(cause: unknown, dir: string, bytes: number): boolean {
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === MDB_MAP_FULL || code === ENOSPC || code === 'ENOSPC') return true;
  if (code !== EIO && code !== 'EIO') return false;
  try {
    const fs = statfsSync(dir);
    return fs.bavail * fs.bsize < bytes + 8 * 1024 * 1024;
  } catch {
    return false;
  }
}

// ---- the store --------------------------------------------------------------------------------

export interface LmdbStoreOptions {
  /** The directory of the environment: created when missing, held by one store at a time. */
  path: string;
}

export type LmdbStore = Store & {
  /** Waits for writes in flight, closes the environment and releases the directory. */
  close(): Promise<void>;
  readonly path: string;
};

/** Everything a store holds, as plain records (for tests and checks; idb.ts has the same records). */
export interface StoreContents {
  accounts: Account[];
  buckets: BucketRecord[];
  objects: ObjectRecord[];
  versions: ObjectRecord[];
  uploads: UploadRecord[];
  parts: PartRecord[];
  bodies: { id: string; size: number }[];
}

const contentsOf = new WeakMap<object, () => StoreContents>();

/** The records of an LMDB store, read in one snapshot. Not part of Store: for tests and checks. */
export function inspectLmdbStore(store: object): StoreContents {
  const read = contentsOf.get(store);
  if (!read) throw new Error('not an LMDB store');
  return read();
}

type Get = { transaction?: Transaction };

export async function openLmdbStore(options: LmdbStoreOptions): Promise<LmdbStore> {
  const dir = resolve(options.path);
  const release = claimDirectory(dir);
  let env: RootDatabase;
  try {
    env = open({
      path: dir,
      maxDbs: 16,
      // Resolve writes only once synced: see the top of this file.
      overlappingSync: false,
      // lmdb-js's event-turn batching leaves a promise of its own unhandled when a commit fails,
      // which would stop the server on a full disk. Writes still share commits when queued together.
      eventTurnBatching: false,
    });
  } catch (e) {
    release();
    throw new DataDirError(`cannot open the data in ${dir}: ${(e as Error).message}`, { cause: e });
  }
  const table = <V>(name: string, encoding: 'msgpack' | 'binary' = 'msgpack'): Database<V, Buffer> =>
    env.openDB<V, Buffer>(name, { keyEncoding: 'binary', encoding });
  const meta = env.openDB<number, string>('meta', {});
  const accounts = table<Account>('accounts');
  const buckets = table<BucketRecord>('buckets');
  const objects = table<ObjectRecord>('objects'); // [bucket, key]
  const versions = table<ObjectRecord>('versions'); // [bucket, key, versionId]
  const bodies = table<Buffer>('bodies', 'binary'); // [id]
  const uploads = table<UploadRecord>('uploads'); // [uploadId]
  /** In-progress uploads by [bucket, key, uploadId] (the value is the uploadId), for their listing. */
  const uploadKeys = table<string>('upload-keys');
  const parts = table<PartRecord>('parts'); // [uploadId, partNumber]

  let closed = false;
  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    try {
      await env.close();
    } finally {
      release();
    }
  }

  try {
    const schema = meta.get('schema');
    if (schema !== undefined && schema !== SCHEMA) {
      throw new DataDirError(`${dir} holds data of a later swbucket (layout ${schema}; this one reads ${SCHEMA})`);
    }
    if (schema === undefined) {
      await env.childTransaction(() => {
        if (meta.get('schema') !== undefined) return;
        meta.put('schema', SCHEMA);
        if (accounts.get(tupleKey([ROOT_ACCOUNT_RECORD.accessKeyId])) === undefined) {
          accounts.put(tupleKey([ROOT_ACCOUNT_RECORD.accessKeyId]), ROOT_ACCOUNT_RECORD);
        }
      });
      // LMDB syncs its files, not the directory: make the new files' names durable too.
      const fd = openSync(dir, 'r');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
  } catch (e) {
    await close();
    throw e;
  }

  /** A lookup by a key that may come from request text: one too long for LMDB cannot exist. */
  function get<V>(db: Database<V, Buffer>, k: Buffer, o: Get = {}): V | undefined {
    return k.length > MAX_KEY_BYTES ? undefined : db.get(k, o);
  }

  /** Entries from `start` (after it when `exclusive`) up to `end`, lazily. */
  function range<V>(db: Database<V, Buffer>, start: Buffer, end: Buffer, o: Get & { exclusive?: boolean; reverse?: boolean; limit?: number } = {}) {
    return db.getRange({
      start: bound(start),
      end: bound(end),
      exclusiveStart: o.exclusive === true && start.length <= MAX_KEY_BYTES,
      ...(o.reverse ? { reverse: true } : {}),
      ...(o.limit !== undefined ? { limit: o.limit } : {}),
      ...(o.transaction ? { transaction: o.transaction } : {}),
    });
  }
  /** Every entry whose key begins with the parts. */
  const within = <V>(db: Database<V, Buffer>, prefix: readonly (string | number)[], o: Get & { limit?: number } = {}) => {
    const start = tupleKey(prefix);
    return range(db, start, after(start), o);
  };

  /**
   * One write step: `body` runs synchronously in its own child transaction of the next commit, and
   * the promise resolves once that commit is on disk. `bytes` is what it brings, for telling a
   * full disk from another failure.
   */
  async function write<T>(bytes: number, body: () => T): Promise<T> {
    if (closed) throw new Error('the store is closed');
    try {
      return await env.childTransaction(body);
    } catch (e) {
      const cause = await causeOf(e);
      if (isDiskFull(cause, dir, bytes)) throw new StoreQuotaError(cause, "The server's disk is full: it cannot store more data.");
      throw e;
    }
  }

  /** A consistent snapshot for a read of several records (metadata and bytes, a listing). */
  function read<T>(body: (o: Get) => T): T {
    const transaction = env.useReadTransaction();
    try {
      return body({ transaction });
    } finally {
      transaction.done();
    }
  }

  /** The bucket under `ref`'s name when it still is the very bucket `ref` names (BucketRef). */
  function sameBucket(ref: BucketRef, o: Get = {}): BucketRecord | undefined {
    const bucket = get(buckets, tupleKey([ref.name]), o);
    return bucket && bucket.id === ref.id ? bucket : undefined;
  }

  function bucketWrite<T>(ref: BucketRef, bytes: number, body: (bucket: BucketRecord) => T): Promise<T | 'noSuchBucket'> {
    return write(bytes, () => {
      const bucket = sameBucket(ref);
      return bucket ? body(bucket) : 'noSuchBucket';
    });
  }

  async function bucketRead<T>(ref: BucketRef, body: (bucket: BucketRecord, o: Get) => T): Promise<T | 'noSuchBucket'> {
    return read((o) => {
      const bucket = sameBucket(ref, o);
      return bucket ? body(bucket, o) : 'noSuchBucket';
    });
  }

  // ---- steps inside one write transaction ----

  function deleteBodies(object: { chunks: { id: string }[] } | undefined): void {
    for (const chunk of object?.chunks ?? []) bodies.remove(tupleKey([chunk.id]));
  }

  /**
   * Adds `delta` bytes to the bucket owner's usage. Refuses (before anything is written) a growth
   * past the quota; shrinking is always allowed.
   */
  function charge(bucket: BucketRecord, delta: number): boolean {
    if (delta === 0) return true;
    const k = tupleKey([bucket.owner]);
    const account = accounts.get(k);
    if (!account) return true;
    const used = account.usedBytes + delta;
    if (delta > 0 && account.quotaBytes !== undefined && used > account.quotaBytes) return false;
    accounts.put(k, { ...account, usedBytes: Math.max(0, used) });
    return true;
  }

  /** As idb.ts makeCurrent(): what `next` replaces goes into the history or is deleted. */
  function makeCurrent(bucket: BucketRecord, next: Omit<ObjectRecord, 'versionId'>, added: number, freed = 0): ObjectRecord | QuotaRefusal {
    const k = tupleKey([next.bucket, next.key]);
    const old = objects.get(k);
    const keepHistory = bucket.versioning === 'Enabled';
    const delta = added - freed - (old && !keepHistory ? old.size : 0);
    if (!charge(bucket, delta)) return 'quotaExceeded';
    let counter = bucket.nextVersionId;
    if (old && keepHistory) {
      const versionId = old.versionId ?? counter++;
      versions.put(tupleKey([old.bucket, old.key, versionId]), { ...old, versionId });
    } else deleteBodies(old);
    const made: ObjectRecord = keepHistory ? { ...next, versionId: counter++ } : { ...next };
    objects.put(k, made);
    if (counter !== bucket.nextVersionId) buckets.put(tupleKey([bucket.name]), { ...bucket, nextVersionId: counter });
    return made;
  }

  /** As idb.ts deleteOne(): the current object (its history stays) or one version. */
  function deleteOne(bucket: BucketRecord, key: string, versionId?: number): DeleteOutcome {
    const k = tupleKey([bucket.name, key]);
    const current = get(objects, k);
    if (versionId === undefined || current?.versionId === versionId) {
      if (!current) return 'deleted';
      charge(bucket, -current.size);
      objects.remove(k);
      deleteBodies(current);
      if (versionId !== undefined) {
        // Deleting the current version by id: the previous version becomes current again.
        for (const previous of range(versions, after(k), k, { reverse: true, limit: 1 })) {
          objects.put(k, previous.value);
          versions.remove(previous.key);
        }
      }
      return 'deleted';
    }
    const vk = tupleKey([bucket.name, key, versionId]);
    const version = get(versions, vk);
    if (!version) return 'noSuchVersion';
    charge(bucket, -version.size);
    versions.remove(vk);
    deleteBodies(version);
    return 'deleted';
  }

  function uploadIn(bucket: BucketRecord, uploadId: string, o: Get = {}): UploadRecord | undefined {
    const upload = get(uploads, tupleKey([uploadId]), o);
    return upload && upload.bucket === bucket.name && upload.bucketId === bucket.id ? upload : undefined;
  }

  function endUpload(upload: UploadRecord): void {
    for (const { key } of within(parts, [upload.uploadId])) parts.remove(key);
    uploads.remove(tupleKey([upload.uploadId]));
    uploadKeys.remove(tupleKey([upload.bucket, upload.key, upload.uploadId]));
  }

  function readVersion(bucket: string, key: string, versionId: number | undefined, o: Get): ObjectRecord | undefined {
    const object = get(objects, tupleKey([bucket, key]), o);
    if (versionId === undefined || object?.versionId === versionId) return object;
    return get(versions, tupleKey([bucket, key, versionId]), o);
  }

  const bytesOf = async (body: Stored): Promise<Buffer> =>
    body instanceof Uint8Array ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : Buffer.from(await (await blobOf(body)).arrayBuffer());

  const store: LmdbStore = {
    path: dir,
    // getObject's Blobs are copies in memory: an export reads one object at a time.
    blobsAreHandles: false,
    close,

    async getAccount(accessKeyId: string) {
      return get(accounts, tupleKey([accessKeyId]));
    },

    async listAccounts() {
      return [...accounts.getRange({}).map(({ value }) => value)];
    },

    putAccount(account: Omit<Account, 'usedBytes' | 'root'>) {
      return write(0, () => {
        const k = tupleKey([account.accessKeyId]);
        const old = accounts.get(k);
        const next: Account = { ...account, usedBytes: old?.usedBytes ?? 0 };
        if (old?.root) next.root = true;
        accounts.put(k, next);
        return old ? 'updated' as const : 'created' as const;
      });
    },

    deleteAccount(accessKeyId: string) {
      return write(0, () => {
        const k = tupleKey([accessKeyId]);
        const account = get(accounts, k);
        if (!account) return 'noSuchAccount' as const;
        if (account.root) return 'root' as const;
        for (const { value } of buckets.getRange({})) if (value.owner === accessKeyId) return 'ownsBuckets' as const;
        accounts.remove(k);
        return 'ok' as const;
      });
    },

    async getBucket(name: string) {
      return get(buckets, tupleKey([name]));
    },

    async readBucket(ref: BucketRef) {
      return bucketRead(ref, (bucket) => bucket);
    },

    async listBuckets(owner: string) {
      return [...buckets.getRange({}).map(({ value }) => value).filter((b) => b.owner === owner)];
    },

    async listAllBuckets() {
      return [...buckets.getRange({}).map(({ value }) => value)];
    },

    createBucket(bucket: Omit<BucketRecord, 'id'>) {
      return write(0, () => {
        // Checked in the same step as deleteAccount's "owns no bucket": never a bucket without an owner.
        if (get(accounts, tupleKey([bucket.owner])) === undefined) return 'noSuchOwner' as const;
        const k = tupleKey([bucket.name]);
        if (get(buckets, k) !== undefined) return 'exists' as const;
        buckets.put(k, { ...bucket, id: newId() });
        return 'ok' as const;
      });
    },

    deleteBucket(ref: BucketRef) {
      return write(0, () => {
        if (!sameBucket(ref)) return 'noSuchBucket' as const;
        for (const db of [objects, versions, uploadKeys] as Database<unknown, Buffer>[]) {
          for (const _ of within(db, [ref.name], { limit: 1 })) return 'notEmpty' as const;
        }
        buckets.remove(tupleKey([ref.name]));
        return 'ok' as const;
      });
    },

    putBucketAcl(ref: BucketRef, acl: Acl) {
      return bucketWrite(ref, 0, (bucket): WriteResult => {
        buckets.put(tupleKey([bucket.name]), { ...bucket, acl });
        return 'ok';
      });
    },

    putBucketVersioning(ref: BucketRef, versioning: VersioningStatus) {
      return bucketWrite(ref, 0, (bucket): WriteResult => {
        buckets.put(tupleKey([bucket.name]), { ...bucket, versioning });
        return 'ok';
      });
    },

    headObject(ref: BucketRef, key: string, versionId?: number) {
      return bucketRead(ref, (bucket, o) => readVersion(bucket.name, key, versionId, o));
    },

    getObject(ref: BucketRef, key: string, versionId?: number) {
      return bucketRead(ref, (bucket, o) => {
        const object = readVersion(bucket.name, key, versionId, o);
        if (!object) return undefined;
        const chunks = object.chunks.map((c) => {
          const bytes = bodies.get(tupleKey([c.id]), o);
          if (!bytes) throw new Error(`body ${c.id} of ${bucket.name}/${key} is missing`);
          return bytes as Uint8Array<ArrayBuffer>; // a copy lmdb-js made: not shared memory
        });
        return { object, body: chunks.length === 1 ? chunks[0]! : new Blob(chunks) };
      });
    },

    async roomFor(ref: BucketRef, target: WriteTarget) {
      return read((o) => {
        const bucket = sameBucket(ref, o);
        if (!bucket) return Infinity;
        const owner = get(accounts, tupleKey([bucket.owner]), o);
        if (owner?.quotaBytes === undefined) return Infinity;
        let freed = 0;
        if ('key' in target) {
          const old = get(objects, tupleKey([ref.name, target.key]), o);
          if (old && bucket.versioning !== 'Enabled') freed = old.size;
        } else {
          freed = get(parts, tupleKey([target.uploadId, target.partNumber]), o)?.size ?? 0;
        }
        // As charge() decides: a write that adds nothing net always fits.
        return freed + Math.max(0, owner.quotaBytes - owner.usedBytes);
      });
    },

    async putObject(ref: BucketRef, object: Omit<ObjectRecord, 'bucket' | 'chunks' | 'versionId'>, body: Stored) {
      const bytes = await bytesOf(body);
      return bucketWrite(ref, bytes.length, (bucket) => {
        const id = newId();
        const made = makeCurrent(bucket, { ...object, bucket: bucket.name, chunks: [{ id, size: bytes.length }] }, bytes.length);
        if (made !== 'quotaExceeded') bodies.put(tupleKey([id]), bytes);
        return made;
      });
    },

    async restoreObject(
      ref: BucketRef,
      object: Omit<ObjectRecord, 'bucket' | 'chunks'>,
      body: Blob,
      how: { current: boolean; replace: boolean },
    ) {
      const bytes = await bytesOf(body);
      return bucketWrite(ref, bytes.length, (bucket) => {
        const v = object.versionId;
        if (!how.current && v === undefined) throw new Error('a version in the history needs a versionId');
        const k = tupleKey([bucket.name, object.key]);
        const atKey = objects.get(k);
        const sameId = v === undefined ? undefined : versions.get(tupleKey([bucket.name, object.key, v]));
        // The current object clashes when it is replaced, or when it carries the restored versionId.
        const current = atKey && (how.current || (v !== undefined && atKey.versionId === v)) ? atKey : undefined;
        const clashes = [current, sameId].filter((o) => o !== undefined);
        if (clashes.length > 0 && !how.replace) return 'exists' as const;
        if (!charge(bucket, bytes.length - clashes.reduce((n, o) => n + o.size, 0))) return 'quotaExceeded' as const;
        for (const old of clashes) deleteBodies(old);
        if (current) objects.remove(k);
        if (sameId && v !== undefined) versions.remove(tupleKey([bucket.name, object.key, v]));
        const id = newId();
        const record: ObjectRecord = { ...object, bucket: bucket.name, chunks: [{ id, size: bytes.length }] };
        if (how.current) objects.put(k, record);
        else versions.put(tupleKey([bucket.name, object.key, v!]), record);
        bodies.put(tupleKey([id]), bytes);
        if (v !== undefined && v >= bucket.nextVersionId) buckets.put(tupleKey([bucket.name]), { ...bucket, nextVersionId: v + 1 });
        return 'ok' as const;
      });
    },

    deleteObject(ref: BucketRef, key: string) {
      return bucketWrite(ref, 0, (bucket) => {
        if (get(objects, tupleKey([bucket.name, key])) === undefined) return 'noSuchKey' as const;
        deleteOne(bucket, key);
        return 'ok' as const;
      });
    },

    deleteObjects(ref: BucketRef, entries: { key: string; versionId?: number }[]) {
      return bucketWrite(ref, 0, (bucket) => entries.map((e) => deleteOne(bucket, e.key, e.versionId)));
    },

    moveObject(ref: BucketRef, from: string, to: string, lastModified: number) {
      return bucketWrite(ref, 0, (bucket) => {
        const k = tupleKey([bucket.name, from]);
        const source = get(objects, k);
        if (!source) return 'noSuchKey' as const;
        objects.remove(k);
        // The bytes change key, not owner: nothing is added; the source's history stays at its key.
        const moved: Omit<ObjectRecord, 'versionId'> & { versionId?: number } = { ...source, key: to, lastModified };
        delete moved.versionId; // the destination is a new write: it gets its own versionId
        const made = makeCurrent(bucket, moved, 0);
        if (made === 'quotaExceeded') throw new Error('a move never grows usage');
        return made;
      });
    },

    putObjectMeta(ref: BucketRef, key: string, headers: ObjectHeaders, lastModified: number) {
      return bucketWrite(ref, 0, (bucket) => {
        const k = tupleKey([bucket.name, key]);
        const object = get(objects, k);
        if (!object) return 'noSuchKey' as const;
        objects.put(k, { ...object, ...headers, lastModified });
        return 'ok' as const;
      });
    },

    listObjects(ref: BucketRef, o: ListObjectsOptions) {
      return bucketRead(ref, (bucket, r): ListObjectsResult => {
        const page = new ObjectsPage(o);
        let from = tupleKey([bucket.name, page.from]);
        let exclusive = page.exclusive;
        const end = after(tupleKey([bucket.name]));
        listing: for (;;) {
          let skipTo: Buffer | undefined;
          for (const { value: object } of range(objects, from, end, { ...r, exclusive })) {
            const step = page.add(object);
            if (step === 'done') break listing;
            if (!step) continue;
            // Skip the rest of the group with a new cursor past it, when such a key fits.
            const past = after(tupleKey([bucket.name, step.skipGroup], true));
            if (past.length <= MAX_KEY_BYTES) {
              skipTo = past;
              break;
            }
          }
          if (!skipTo) break;
          from = skipTo;
          exclusive = false;
        }
        return page.result();
      });
    },

    listObjectVersions(ref: BucketRef, o: ListObjectVersionsOptions) {
      return bucketRead(ref, (bucket, r) => {
        const page = new VersionsPage(o);
        const { start, skipStart } = page;
        const end = after(tupleKey([bucket.name]));
        const startKey = tupleKey([bucket.name, start]);
        const objectIt = range(objects, startKey, end, { ...r, exclusive: skipStart })[Symbol.iterator]();
        const historyIt = range(versions, skipStart ? after(startKey) : startKey, end, r)[Symbol.iterator]();
        let current = objectIt.next();
        let history = historyIt.next();
        try {
          for (;;) {
            // Past the start only (a cut-short bound may begin earlier).
            while (!current.done && (current.value.value.key < start || (skipStart && current.value.value.key === start))) current = objectIt.next();
            while (!history.done && (history.value.value.key < start || (skipStart && history.value.value.key === start))) history = historyIt.next();
            const candidates = [current.done ? undefined : current.value.value.key, history.done ? undefined : history.value.value.key]
              .filter((k): k is string => k !== undefined);
            if (candidates.length === 0) break;
            const key = candidates.reduce((a, b) => (b < a ? b : a));
            if (page.past(key)) break;
            let latest: ObjectRecord | undefined;
            if (!current.done && current.value.value.key === key) {
              latest = current.value.value;
              current = objectIt.next();
            }
            const older: ObjectRecord[] = [];
            while (!history.done && history.value.value.key === key) {
              older.push(history.value.value);
              history = historyIt.next();
            }
            if (page.addKey(key, latest, older)) break;
          }
        } finally {
          objectIt.return?.();
          historyIt.return?.();
        }
        return page.result();
      });
    },

    createMultipartUpload(ref: BucketRef, upload: Omit<UploadRecord, 'bucket' | 'bucketId'>) {
      return bucketWrite(ref, 0, (bucket): WriteResult => {
        const k = tupleKey([upload.uploadId]);
        if (uploads.get(k) !== undefined) throw new Error(`upload ${upload.uploadId} exists`);
        uploads.put(k, { ...upload, bucket: bucket.name, bucketId: bucket.id });
        uploadKeys.put(tupleKey([bucket.name, upload.key, upload.uploadId]), upload.uploadId);
        return 'ok';
      });
    },

    async getUpload(uploadId: string) {
      return get(uploads, tupleKey([uploadId]));
    },

    async uploadPart(ref: BucketRef, part: Omit<PartRecord, 'bodyId'>, body: Bytes) {
      const bytes = await bytesOf(body);
      return bucketWrite(ref, bytes.length, (bucket) => {
        // Checked inside the step: a part racing Abort or Complete lands before it or not at all.
        if (!uploadIn(bucket, part.uploadId)) return 'noSuchUpload' as const;
        const k = tupleKey([part.uploadId, part.partNumber]);
        const old = parts.get(k);
        if (!charge(bucket, bytes.length - (old?.size ?? 0))) return 'quotaExceeded' as const;
        const bodyId = newId();
        bodies.put(tupleKey([bodyId]), bytes);
        parts.put(k, { ...part, bodyId });
        if (old) bodies.remove(tupleKey([old.bodyId]));
        return 'ok' as const;
      });
    },

    async completeMultipartUpload(
      ref: BucketRef,
      uploadId: string,
      list: { partNumber: number; etag: string }[],
      object: Omit<ObjectRecord, 'bucket' | 'chunks' | 'size' | 'versionId'>,
      minPartBytes: number,
    ): Promise<ObjectRecord | CompleteRefusal> {
      const done = await bucketWrite(ref, 0, (bucket): ObjectRecord | CompleteRefusal => {
        // While the upload exists its bucket cannot be deleted (deleteBucket refuses), so the
        // upload's parts all belong to this very bucket.
        const upload = uploadIn(bucket, uploadId);
        if (!upload) return { refused: 'noSuchUpload' };
        const chosen = completedFrom(list, [...within(parts, [uploadId])].map(({ value }) => value), minPartBytes);
        if ('refused' in chosen) return chosen;
        // The parts' bodies become the object's chunks: no byte is copied.
        const made = makeCurrent(bucket, { ...object, bucket: bucket.name, size: chosen.size, chunks: chosen.chunks }, 0, chosen.freed);
        if (made === 'quotaExceeded') throw new Error('completing never grows usage');
        for (const part of chosen.dropped) bodies.remove(tupleKey([part.bodyId]));
        endUpload(upload);
        return made;
      });
      return done === 'noSuchBucket' ? { refused: 'noSuchBucket' } : done;
    },

    abortMultipartUpload(ref: BucketRef, uploadId: string) {
      return bucketWrite(ref, 0, (bucket) => {
        const upload = uploadIn(bucket, uploadId);
        if (!upload) return 'noSuchUpload' as const;
        const all = [...within(parts, [uploadId])].map(({ value }) => value);
        charge(bucket, -all.reduce((n, p) => n + p.size, 0));
        for (const part of all) bodies.remove(tupleKey([part.bodyId]));
        endUpload(upload);
        return 'ok' as const;
      });
    },

    listParts(ref: BucketRef, uploadId: string, marker: number, max: number) {
      return bucketRead(ref, (bucket, r) => {
        if (!uploadIn(bucket, uploadId, r)) return 'noSuchUpload' as const;
        const start = tupleKey([uploadId, marker]);
        const found = [...range(parts, start, after(tupleKey([uploadId])), { ...r, exclusive: true, limit: max + 1 })]
          .map(({ value }) => value);
        return { parts: found.slice(0, max), truncated: found.length > max };
      });
    },

    listMultipartUploads(ref: BucketRef, o: ListMultipartUploadsOptions) {
      return bucketRead(ref, (bucket, r) => {
        // Start after (key-marker, upload-id-marker), or after every upload of key-marker when no
        // upload-id-marker is given; never before the prefix.
        const fromMarker = o.keyMarker !== '' && o.keyMarker >= o.prefix;
        const start = !fromMarker ? tupleKey([bucket.name, o.prefix])
          : o.uploadIdMarker ? tupleKey([bucket.name, o.keyMarker, o.uploadIdMarker])
            : after(tupleKey([bucket.name, o.keyMarker]));
        const found: UploadRecord[] = [];
        let truncated = false;
        for (const { value: uploadId } of range(uploadKeys, start, after(tupleKey([bucket.name])), { ...r, exclusive: fromMarker })) {
          const upload = get(uploads, tupleKey([uploadId]), r);
          if (!upload) continue;
          // Only when the marker was too long to seek to: skip up to it.
          if (fromMarker && (upload.key < o.keyMarker || (upload.key === o.keyMarker && (!o.uploadIdMarker || upload.uploadId <= o.uploadIdMarker)))) continue;
          if (!upload.key.startsWith(o.prefix)) break;
          if (found.length === o.maxUploads) {
            truncated = true;
            break;
          }
          found.push(upload);
        }
        return { uploads: found, truncated };
      });
    },
  };

  contentsOf.set(store, () => read((o) => {
    const all = <V>(db: Database<V, Buffer>) => [...db.getRange(o).map(({ value }) => value)];
    return {
      accounts: all(accounts),
      buckets: all(buckets),
      objects: all(objects),
      versions: all(versions),
      uploads: all(uploads),
      parts: all(parts),
      bodies: [...bodies.getRange(o).map(({ key, value }) => ({ id: stringOf(key), size: value.length }))],
    };
  }));
  return store;
}
