// The Store over IndexedDB, through idb. Bytes live as Blobs in `bodies`, one record per chunk,
// apart from the small metadata records, so listing and moving never touch bytes (docs/browser.md,
// "Blob bodies" and "Transactions"). Every write is one step of a readwrite transaction with strict
// durability (writes that arrive together share one: write()), and nothing but IndexedDB requests
// is awaited inside it.
//
// Invariants the tests count:
// - every body record belongs to exactly one current object, historical version or uploaded part;
//   whoever drops the reference deletes the body. Completing a multipart upload hands the parts'
//   bodies to the new object: no byte is copied.
// - an account's usedBytes is the size of everything its buckets hold while its `usage-exact`
//   marker exists. Each write charges the bucket owner before it writes anything, so a write over
//   the quota changes nothing. A write that only frees bytes and that the browser refuses (a full
//   origin refuses any transaction that puts a record) is retried once deleting the marker instead
//   of putting the figure; whoever reads the figure without its marker recomputes it from the
//   records (exactUsage), and charge() stores it and the marker back.
// - a write commits only into the bucket its request was authorised for: it is given that bucket's
//   identity (BucketRef) and re-reads the bucket by name in its own transaction, refusing when the
//   name now belongs to another bucket (docs/browser.md, "Bucket identity"). A read of a bucket's
//   contents does the same in its one readonly transaction, so it never sees another bucket's data.
import { unwrap, wrap, type DBSchema, type IDBPDatabase, type IDBPTransaction, type StoreNames } from 'idb';
import { StoreQuotaError, isQuotaError } from './errors.ts';
import type {
  Account, Acl, BucketRecord, BucketRef, Bytes, CompleteRefusal, DeleteOutcome, ListObjectsOptions, ListObjectsResult,
  ListMultipartUploadsOptions, ListObjectVersionsOptions, ObjectHeaders, ObjectRecord, PartRecord, QuotaRefusal, Store,
  Stored, UploadRecord, VersioningStatus, WriteResult, WriteTarget,
} from './types.ts';
import { ROOT_ACCOUNT_RECORD } from './types.ts';
import { PieceBody, blobOf, cutIntoPieces, type PieceReader, type Segment } from './pieces.ts';
import { ObjectsPage, VersionsPage } from './listing.ts';
import { completedFrom } from './parts.ts';

interface Schema extends DBSchema {
  accounts: { key: string; value: Account };
  buckets: { key: string; value: BucketRecord };
  objects: { key: [string, string]; value: ObjectRecord };
  versions: { key: [string, string, number]; value: ObjectRecord };
  /** A body's bytes: a Blob, for a small one the bytes themselves, or where Blobs are refused the count of its pieces. */
  bodies: { key: string; value: BodyRecord };
  /** The pieces of the bodies kept as pieces (sw/store/pieces.ts), by [body id, index]. */
  pieces: { key: [string, number]; value: Uint8Array };
  uploads: { key: string; value: UploadRecord; indexes: { byBucketKey: [string, string, string] } };
  parts: { key: [string, number]; value: PartRecord };
  /** One record per account whose stored usedBytes is exact; a missing one means "recompute". */
  'usage-exact': { key: string; value: { accessKeyId: string } };
}

type BodyRecord =
  | { id: string; blob: Blob; bytes?: undefined; pieces?: undefined }
  | { id: string; bytes: Uint8Array; blob?: undefined; pieces?: undefined }
  | { id: string; pieces: number; pieceBytes: number; size: number; blob?: undefined; bytes?: undefined };

/**
 * Bodies up to this size are kept as bytes in their record, not as a Blob: Chromium keeps every
 * stored Blob in a file of its own, and for a 1 KiB object creating, opening and deleting that
 * file costs more than the rest of the request (issue 13). Larger bodies stay Blobs, which are
 * read lazily and sliced for ranges.
 */
const INLINE_MAX_BYTES = 16 * 1024;

/**
 * Where IndexedDB refuses Blobs, a body is kept as pieces of this size: a range reads only the
 * pieces it covers, and a whole GET streams them a few at a time (sw/store/pieces.ts).
 */
const PIECE_BYTES = 256 * 1024;

/**
 * A body kept as pieces that is at most this large is read whole inside the GET's own
 * transaction, so it is seen as one snapshot with its record; a larger one streams, a batch of
 * pieces per read, and fails mid-way (never mixing bytes) when it is deleted while it streams.
 */
const SNAPSHOT_BYTES = 1024 * 1024;

const sizeOf = (body: Stored): number => (body instanceof Uint8Array ? body.byteLength : body.size);

/** How this store keeps a body: as a Blob, or as pieces where IndexedDB refuses Blobs. */
export type BodyForm = 'blobs' | 'pieces';

/** Writes a body's records into a write's transaction, under the id the write gives it. */
type BodyWriter = (tx: Tx, id: string) => void;

/** A body's records, everything read beforehand (outside any transaction). */
async function bodyWriterOf(body: Stored, form: BodyForm, sizes: BodySizes): Promise<BodyWriter> {
  const size = sizeOf(body);
  if (size <= sizes.inlineMaxBytes) {
    const bytes = body instanceof Uint8Array ? body : new Uint8Array(await (await blobOf(body)).arrayBuffer());
    return (tx, id) => issue(tx.objectStore('bodies').add({ id, bytes }));
  }
  if (form === 'blobs') {
    const blob = await blobOf(body);
    return (tx, id) => issue(tx.objectStore('bodies').add({ id, blob }));
  }
  const pieceBytes = sizes.pieceBytes;
  const pieces = await cutIntoPieces(body, pieceBytes);
  return (tx, id) => {
    issue(tx.objectStore('bodies').add({ id, pieces: pieces.length, pieceBytes, size }));
    const store = tx.objectStore('pieces');
    pieces.forEach((piece, i) => issue(store.add(piece, [id, i])));
  };
}

/** A stored body as read: the Blob, or the bytes of a small one, as they are (not one kept as pieces). */
const bytesOf = (record: BodyRecord): Bytes => record.blob ?? (record.bytes as Uint8Array<ArrayBuffer>);

/** A transaction over `names` also spans `pieces` when it spans `bodies`: a body may be kept as pieces. */
const scope = (names: Names[]): Names[] => (names.includes('bodies') && !names.includes('pieces') ? [...names, 'pieces'] : names);

/** A key no body id can be (ids start with a bucket's UUID): the probe below writes it and never commits. */
const PROBE_ID = '\uffffprobe';

/**
 * Whether this IndexedDB refuses Blob values: WebKit with ephemeral storage (Safari's private
 * windows, WebKitGTK's automation sessions) fails every put of one ("Error preparing Blob/File
 * data to be stored in object store"). Asked once as the store opens, with a one-byte Blob in a
 * transaction that is aborted: nothing is written. A refusal for room is not an answer (a full
 * origin refuses every put), so it counts as "Blobs are kept".
 */
async function refusesBlobs(d: IDBDatabase): Promise<boolean> {
  const tx = d.transaction('bodies', 'readwrite', { durability: 'relaxed' });
  try {
    await new Promise<void>((resolve, reject) => {
      const r = tx.objectStore('bodies').put({ id: PROBE_ID, blob: new Blob([new Uint8Array([1])]) });
      r.onsuccess = () => resolve();
      r.onerror = (event) => {
        event.preventDefault();
        reject(r.error);
      };
    });
    return false;
  } catch (e) {
    return !isQuotaError(e);
  } finally {
    try {
      tx.abort();
    } catch {
      // already ended
    }
  }
}

/** Pieces read back as one body's bytes. */
function joined(pieces: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** Every piece of one body, or of a run of bodies from `first` to `last`, in the [id, index] piece store. */
const piecesOf = (first: string, last = first) => IDBKeyRange.bound([first], [last, []]);

interface BodySizes {
  inlineMaxBytes: number;
  pieceBytes: number;
  snapshotBytes: number;
}

type Names = StoreNames<Schema>;
type Db = IDBPDatabase<Schema>;
/** A readwrite transaction over whichever stores the caller named. */
type Tx = IDBPTransaction<Schema, Names[], 'readwrite'>;
/** A readonly transaction over whichever stores the caller named. */
type ReadTx = IDBPTransaction<Schema, Names[], 'readonly'>;


const newId = (): string => crypto.randomUUID();

/** How much of an object key a body id carries (see bodyId). */
const BODY_ID_KEY_CHARS = 64;

/**
 * A new body's id: its bucket's identity, the start of its object's key, then a random part. Ids
 * so sort with their keys, and the bodies of a run of neighbouring keys (a folder being deleted)
 * are a run of ids that one range delete can take (deleteObjects checks the run holds nothing
 * else: a body keeps its id when its object moves). Only the first 64 characters of the key go
 * in, so a multipart object's list of part ids stays small for long keys. \u0000 sorts before
 * every character a key is likely to hold, so a key's ids come before those of keys it prefixes.
 */
const bodyId = (bucket: BucketRecord, key: string): string =>
  `${bucket.id}\u0000${key.slice(0, BODY_ID_KEY_CHARS)}\u0000${newId()}`;

/**
 * Step 2: bucket identities. Every bucket gets an `id`, and every upload in progress the `bucketId`
 * of its bucket (which cannot have been replaced while the upload existed: a bucket with uploads
 * is never deleted). Only IndexedDB requests run here, chained by their callbacks.
 */
function giveBucketsIdentities(tx: IDBTransaction): void {
  const ids = new Map<string, string>();
  const buckets = tx.objectStore('buckets').openCursor();
  buckets.onsuccess = () => {
    const cursor = buckets.result;
    if (cursor) {
      const bucket = cursor.value as BucketRecord;
      const id = bucket.id ?? newId();
      ids.set(bucket.name, id);
      if (bucket.id === undefined) cursor.update({ ...bucket, id });
      cursor.continue();
      return;
    }
    const uploads = tx.objectStore('uploads').openCursor();
    uploads.onsuccess = () => {
      const c = uploads.result;
      if (!c) return;
      const upload = c.value as UploadRecord;
      const bucketId = ids.get(upload.bucket);
      if (upload.bucketId === undefined && bucketId !== undefined) c.update({ ...upload, bucketId });
      c.continue();
    };
  };
}

/**
 * Step 3: the `usage-exact` markers. Every account's figure is exact at this point (every write
 * kept it so), so every account gets its marker.
 */
function markUsageExact(db: IDBDatabase, tx: IDBTransaction): void {
  const markers = db.createObjectStore('usage-exact', { keyPath: 'accessKeyId' });
  const accounts = tx.objectStore('accounts').openCursor();
  accounts.onsuccess = () => {
    const cursor = accounts.result;
    if (!cursor) return;
    markers.put({ accessKeyId: (cursor.value as Account).accessKeyId });
    cursor.continue();
  };
}

/**
 * The schema, as upgrade steps in order: a database at version n has run the first n. A new
 * schema appends a step; the database version is the number of steps.
 */
const UPGRADES: ((db: IDBDatabase, tx: IDBTransaction) => void)[] = [
  (db) => {
    db.createObjectStore('accounts', { keyPath: 'accessKeyId' }).add(ROOT_ACCOUNT_RECORD);
    db.createObjectStore('buckets', { keyPath: 'name' });
    db.createObjectStore('objects', { keyPath: ['bucket', 'key'] });
    db.createObjectStore('versions', { keyPath: ['bucket', 'key', 'versionId'] });
    db.createObjectStore('bodies', { keyPath: 'id' });
    db.createObjectStore('uploads', { keyPath: 'uploadId' }).createIndex('byBucketKey', ['bucket', 'key', 'uploadId']);
    db.createObjectStore('parts', { keyPath: ['uploadId', 'partNumber'] });
  },
  (_db, tx) => giveBucketsIdentities(tx),
  (db, tx) => markUsageExact(db, tx),
  // Step 4 was a store for bodies written ahead of their object, taken out before it was released.
  () => {},
  (db) => {
    if (db.objectStoreNames.contains('staged')) db.deleteObjectStore('staged');
    db.createObjectStore('pieces');
  },
];

/**
 * Keys of one bucket in the [bucket, key] object store, from `from` on (after it when `open`):
 * arrays sort after every string.
 */
const bucketRange = (bucket: string, from: string, open = false) =>
  IDBKeyRange.bound([bucket, from], [bucket, []], open, true);

/** Versions of one key in the [bucket, key, versionId] history. */
const historyRange = (bucket: string, key: string) => IDBKeyRange.bound([bucket, key, -Infinity], [bucket, key, Infinity]);

/** All parts of one upload in the [uploadId, partNumber] part store. */
const partRange = (uploadId: string, after = 0) => IDBKeyRange.bound([uploadId, after], [uploadId, Infinity], true);

function openDatabase(factory: IDBFactory, name: string): Promise<Db> {
  const request = factory.open(name, UPGRADES.length);
  request.onupgradeneeded = (event) => {
    for (const step of UPGRADES.slice(event.oldVersion)) step(request.result, request.transaction!);
  };
  return wrap(request) as unknown as Promise<Db>;
}

export interface IdbStoreOptions {
  /** The IDBFactory to use: the browser's `indexedDB`, or fake-indexeddb's in Node. */
  indexedDB?: IDBFactory;
  name?: string;
  /**
   * How bodies are kept: 'detect' (default) stores Blobs unless this IndexedDB refuses them, then
   * pieces. Tests force 'pieces', with small `sizes` so that small bodies are cut too.
   */
  bodies?: 'detect' | BodyForm;
  sizes?: Partial<BodySizes>;
}

// ---- steps used inside one write transaction ------------------------------------------------

async function deleteBodies(tx: Tx, object: { chunks: { id: string }[] } | undefined): Promise<void> {
  if (object) await deleteBodyIds(tx, object.chunks.map((c) => c.id));
}

/**
 * Deletes these bodies: in one range delete when the run of ids from the least to the greatest
 * holds exactly them (bodyId() makes neighbouring keys' bodies such a run), else one by one. The
 * run is read first because a body keeps its id when its object moves, so a run can hold a body
 * of another object.
 */
async function deleteBodyIds(tx: Tx, ids: string[]): Promise<void> {
  const bodies = tx.objectStore('bodies');
  const withPieces = mayHavePieces.has(unwrap(tx).db);
  if (ids.length > 2) {
    const sorted = [...ids].sort(); // code-unit order, as IndexedDB compares strings
    const first = sorted[0]!;
    const last = sorted[sorted.length - 1]!;
    const run = IDBKeyRange.bound(first, last);
    const held = await bodies.getAllKeys(run, sorted.length + 1);
    if (held.length === sorted.length && held.every((id, i) => id === sorted[i])) {
      if (withPieces) issue(tx.objectStore('pieces').delete(piecesOf(first, last)));
      return issue(bodies.delete(run));
    }
  }
  for (const id of ids) {
    issue(bodies.delete(id));
    if (withPieces) issue(tx.objectStore('pieces').delete(piecesOf(id)));
  }
}

/**
 * The databases where bodies may be kept as pieces (this store writes them, or found some when it
 * opened): only there does deleting a body also delete its pieces, a request more per body.
 */
const mayHavePieces = new WeakSet<IDBDatabase>();

/** The stores exactUsage() reads, besides `usage-exact` and `accounts`. */
const USAGE_STORES: Names[] = ['usage-exact', 'accounts', 'buckets', 'objects', 'versions', 'uploads', 'parts'];

/**
 * An account's usage summed from the records, as the writes charge it: the current objects,
 * historical versions and uploaded parts in the buckets it owns.
 */
async function exactUsage(tx: Tx | ReadTx, owner: string): Promise<number> {
  const t = tx as ReadTx;
  const buckets = (await t.objectStore('buckets').getAll()).filter((b) => b.owner === owner);
  let sum = 0;
  for (const bucket of buckets) {
    const everything = IDBKeyRange.bound([bucket.name], [bucket.name, []]);
    const [objects, versions, uploads] = await Promise.all([
      t.objectStore('objects').getAll(everything),
      t.objectStore('versions').getAll(everything),
      t.objectStore('uploads').index('byBucketKey').getAll(everything),
    ]);
    for (const o of [...objects, ...versions]) sum += o.size;
    const parts = await Promise.all(uploads.map((u) => t.objectStore('parts').getAll(partRange(u.uploadId))));
    for (const p of parts.flat()) sum += p.size;
  }
  return sum;
}

/** Whether the account's stored usage figure is exact (its marker exists). */
const isExact = async (tx: Tx | ReadTx, accessKeyId: string): Promise<boolean> =>
  (await (tx as ReadTx).objectStore('usage-exact').getKey(accessKeyId)) !== undefined;

/** The account's usage: its stored figure when its marker says it is exact, else summed afresh. */
async function usageOf(tx: Tx | ReadTx, account: Account, exactRead?: Promise<boolean>): Promise<{ used: number; exact: boolean }> {
  const exact = await (exactRead ?? isExact(tx, account.accessKeyId));
  return { used: exact ? account.usedBytes : await exactUsage(tx, account.accessKeyId), exact };
}

/**
 * What charge() reads, read as a write begins (readUsageAhead), together with its bucket record,
 * instead of one after the other: each is a round trip to IndexedDB's backend. Set afresh as each
 * write of a group begins, so its reads come after the writes of those before it; taken once.
 */
const usageAhead = new WeakMap<Tx, { owner: string; account: Promise<Account | undefined>; exact: Promise<boolean> }>();

function readUsageAhead(tx: Tx, owner: string | undefined): void {
  if (owner === undefined) {
    usageAhead.delete(tx);
    return;
  }
  const account = tx.objectStore('accounts').get(owner);
  const exact = isExact(tx, owner);
  // Unused when the write stops early; a failed read fails the transaction anyway.
  account.catch(() => {});
  exact.catch(() => {});
  usageAhead.set(tx, { owner, account, exact });
}

/** An IndexedDB failure as the store reports it: a refusal for room is a StoreQuotaError. */
const storeError = (e: unknown): unknown => (isQuotaError(e) ? new StoreQuotaError(e) : e);

/**
 * Issues a write without waiting for it: requests in a transaction run in order, so what comes
 * after sees it, and a failure aborts the transaction, which its caller reports (writeAlone).
 */
const issue = (request: Promise<unknown>): void => void request.catch(() => {});

/**
 * The transactions of a freeing write's retry (see freeingWrite): they drop the owner's
 * `usage-exact` marker instead of putting the usage figure.
 */
const forgetting = new WeakSet<object>();

/**
 * Adds `delta` bytes to the bucket owner's usage. Refuses (before any write) a growth past the
 * quota; shrinking is always allowed. A figure without its marker is recomputed first, and stored
 * with its marker again.
 */
async function charge(tx: Tx, bucket: BucketRecord, delta: number): Promise<boolean> {
  if (delta === 0) return true;
  if (forgetting.has(tx)) {
    if (delta > 0) throw new Error('a freeing write never grows usage');
    await tx.objectStore('usage-exact').delete(bucket.owner);
    return true;
  }
  const accounts = tx.objectStore('accounts');
  let ahead = usageAhead.get(tx);
  usageAhead.delete(tx);
  if (ahead?.owner !== bucket.owner) ahead = undefined;
  const account = await (ahead?.account ?? accounts.get(bucket.owner));
  if (!account) return true;
  const usage = await usageOf(tx, account, ahead?.exact);
  const used = usage.used + delta;
  if (delta > 0 && account.quotaBytes !== undefined && used > account.quotaBytes) return false;
  issue(accounts.put({ ...account, usedBytes: Math.max(0, used) }));
  if (!usage.exact) issue(tx.objectStore('usage-exact').put({ accessKeyId: account.accessKeyId }));
  return true;
}

/**
 * Makes `next` the current object at its key. What it replaces goes into the history when the
 * bucket's versioning is Enabled (getting a versionId if it had none), else its bytes are deleted.
 * `added` is the number of bytes this write brings into the bucket; the owner is charged that
 * less whatever is freed, and nothing is written when the quota refuses.
 */
async function makeCurrent(
  tx: Tx,
  bucket: BucketRecord,
  next: Omit<ObjectRecord, 'versionId'>,
  added: number,
  freed = 0,
): Promise<ObjectRecord | QuotaRefusal> {
  const objects = tx.objectStore('objects');
  const old = await objects.get([next.bucket, next.key]);
  const keepHistory = bucket.versioning === 'Enabled';
  const delta = added - freed - (old && !keepHistory ? old.size : 0);
  if (!(await charge(tx, bucket, delta))) return 'quotaExceeded';
  let counter = bucket.nextVersionId;
  if (old && keepHistory) issue(tx.objectStore('versions').put({ ...old, versionId: old.versionId ?? counter++ }));
  else await deleteBodies(tx, old);
  const made: ObjectRecord = keepHistory ? { ...next, versionId: counter++ } : { ...next };
  issue(objects.put(made));
  if (counter !== bucket.nextVersionId) issue(tx.objectStore('buckets').put({ ...bucket, nextVersionId: counter }));
  return made;
}

/**
 * Deletes the current object (its history stays) or one version. Deleting the current object by its
 * versionId makes the newest historical version current again.
 */
async function deleteOne(tx: Tx, bucket: BucketRecord, key: string, versionId?: number): Promise<DeleteOutcome> {
  const objects = tx.objectStore('objects');
  const versions = tx.objectStore('versions');
  const current = await objects.get([bucket.name, key]);
  if (versionId === undefined || current?.versionId === versionId) {
    if (!current) return 'deleted';
    await charge(tx, bucket, -current.size);
    issue(objects.delete([bucket.name, key]));
    await deleteBodies(tx, current);
    if (versionId !== undefined) {
      // Deleting the current version by id: the previous version becomes current again.
      const previous = await versions.openCursor(historyRange(bucket.name, key), 'prev');
      if (previous) {
        issue(objects.put(previous.value));
        issue(previous.delete());
      }
    }
    return 'deleted';
  }
  const version = await versions.get([bucket.name, key, versionId]);
  if (!version) return 'noSuchVersion';
  await charge(tx, bucket, -version.size);
  issue(versions.delete([bucket.name, key, versionId]));
  await deleteBodies(tx, version);
  return 'deleted';
}

// ---- the store -------------------------------------------------------------------------------

export async function openIdbStore(options: IdbStoreOptions = {}): Promise<Store & { db(): Promise<Db>; readonly bodyForm: BodyForm }> {
  const factory = options.indexedDB ?? globalThis.indexedDB;
  const name = options.name ?? 'swbucket';
  const sizes: BodySizes = { inlineMaxBytes: INLINE_MAX_BYTES, pieceBytes: PIECE_BYTES, snapshotBytes: SNAPSHOT_BYTES, ...options.sizes };
  let current: Promise<Db> | null = null;

  // Accounts and buckets are read on every request (who is calling, who owns the bucket) and
  // what access depends on (secret, owner, ACL, versioning, existence) changes only through the
  // six writes that use accessWrite(). Those drop the records before and after they commit, as
  // does a close of the database; `generation` keeps a read that raced one of them from refilling
  // the cache. Other writes update only counters (usedBytes, nextVersionId), which they read
  // inside their own transaction, never from here.
  const accountCache = new Map<string, Account | undefined>();
  const bucketCache = new Map<string, BucketRecord | undefined>();
  let generation = 0;
  // Uploads in progress, by id, as Upload Part and Complete look them up before reading a body. A
  // record never changes while the upload exists, and the write re-checks it in its transaction
  // (uploadIn), so an entry that outlived its upload (ended by another runtime) answers nothing
  // wrong; this runtime's Complete and Abort drop theirs.
  const uploadCache = new Map<string, UploadRecord>();
  // The body id each recently written or read key had: getObject() reads that body together with
  // the object's record, and uses it only when the record still names it, so a stale entry costs
  // one needless read, never a wrong answer. At most 1,000 keys (keys are up to 1 KiB); cleared when full.
  const bodyHints = new Map<string, string>();
  const hintKey = (ref: BucketRef, key: string) => `${ref.id}\u0000${key}`;
  const hintOf = (ref: BucketRef, key: string) => bodyHints.get(hintKey(ref, key));
  const hintBody = (ref: BucketRef, key: string, id: string) => {
    if (bodyHints.size >= 1000) bodyHints.clear();
    bodyHints.set(hintKey(ref, key), id);
  };
  const dropCaches = () => {
    generation++;
    accountCache.clear();
    bucketCache.clear();
    uploadCache.clear();
  };
  async function cached<T>(cache: Map<string, T>, key: string, read: () => Promise<T>): Promise<T> {
    if (cache.has(key)) return cache.get(key) as T;
    const at = generation;
    const value = await read();
    if (at === generation) cache.set(key, value);
    return value;
  }

  // Opened now, and again on the next use after a close: a newer worker's schema upgrade closes us (docs/browser.md, "Close on versionchange").
  const db = (): Promise<Db> => {
    current ??= openDatabase(factory, name).then(async (d) => {
      // Bodies kept as pieces before (by this engine, or one that shares the database) are deleted with their pieces.
      if ((await d.count('pieces')) > 0) mayHavePieces.add(unwrap(d));
      const forget = () => {
        current = null;
        dropCaches();
      };
      d.addEventListener('versionchange', () => {
        d.close();
        forget();
      });
      d.addEventListener('close', forget);
      return d;
    }, (e) => {
      current = null;
      throw e;
    });
    return current;
  };
  const bodyForm: BodyForm = options.bodies === 'blobs' || options.bodies === 'pieces'
    ? options.bodies
    : (await refusesBlobs(unwrap(await db()))) ? 'pieces' : 'blobs';
  /** A body's records, read beforehand; a database that gets pieces deletes them with their bodies. */
  const bodyWriter = async (body: Stored): Promise<BodyWriter> => {
    const writeBody = await bodyWriterOf(body, bodyForm, sizes);
    return (tx, id) => {
      if (bodyForm === 'pieces') mayHavePieces.add(unwrap(tx).db);
      writeBody(tx, id);
    };
  };
  /** Pieces `first`…`last` of a body, read in a transaction of their own (a GET streaming a large body). */
  const readPieces: PieceReader = async (id, first, last) =>
    (await db()).getAll('pieces', IDBKeyRange.bound([id, first], [id, last]));

  // Group commit. Strict writes that arrive while one is committing wait for it, then run together,
  // one after another, in one transaction: one flush for all of them instead of one each (with four
  // PUTs in flight, IndexedDB would otherwise run four transactions in turn, each waiting for its
  // own flush). A write's refusals (quota, a replaced bucket) are answers, not failures, so they
  // commit with the rest; when the shared transaction fails instead, each write runs again alone,
  // so a failure is only ever its own.
  type Waiting = { names: Names[]; body: (tx: Tx) => Promise<unknown>; settle: (run: () => Promise<unknown>) => void };
  let committing = false;
  let waiting: Waiting[] = [];

  function write<T>(names: Names[], body: (tx: Tx) => Promise<T>, durability: IDBTransactionDurability = 'strict'): Promise<T> {
    if (durability !== 'strict') return writeAlone(names, body, durability);
    return new Promise<T>((resolve, reject) => {
      waiting.push({ names, body, settle: (run) => run().then((v) => resolve(v as T), reject) });
      if (!committing) void commitWaiting();
    });
  }

  async function commitWaiting(): Promise<void> {
    committing = true;
    while (waiting.length > 0) {
      const group = waiting;
      waiting = [];
      if (group.length === 1) {
        const only = group[0]!;
        await new Promise<void>((done) => only.settle(() => writeAlone(only.names, only.body).finally(done)));
        continue;
      }
      const results: unknown[] = [];
      try {
        await writeAlone([...new Set(group.flatMap((w) => w.names))], async (tx) => {
          for (const w of group) results.push(await w.body(tx));
        });
        group.forEach((w, i) => w.settle(async () => results[i]));
      } catch {
        for (const w of group) await new Promise<void>((done) => w.settle(() => writeAlone(w.names, w.body).finally(done)));
      }
    }
    committing = false;
  }

  async function writeAlone<T>(names: Names[], body: (tx: Tx) => Promise<T>, durability: IDBTransactionDurability = 'strict'): Promise<T> {
    const tx = (await db()).transaction(scope(names), 'readwrite', { durability });
    tx.done.catch(() => {}); // `ended` reports its outcome instead
    // The transaction's own error, read once it has ended: idb's `done` rejects while a failed
    // request's error event passes, before the browser has set it. A write issued without
    // waiting (issue()) that the browser refused shows only here.
    const raw = unwrap(tx);
    const ended = new Promise<unknown>((resolve) => {
      raw.addEventListener('complete', () => resolve(null));
      raw.addEventListener('abort', () => resolve(raw.error ?? new DOMException('The transaction was aborted.', 'AbortError')));
    });
    let result: T;
    try {
      result = await body(tx);
    } catch (e) {
      try {
        tx.abort();
      } catch {
        // already finished or aborted
      }
      const error = await ended;
      throw storeError(isQuotaError(error) ? error : e);
    }
    const error = await ended;
    if (error) throw storeError(error);
    return result;
  }

  /**
   * A write that only frees bytes. When the browser refuses it (a full origin refuses any
   * transaction that puts a record, here the owner's usage figure), it runs once more from the
   * start, re-checking everything, with charge() deleting the owner's `usage-exact` marker instead.
   */
  async function freeingWrite<T>(names: Names[], body: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      return await write(names, body);
    } catch (e) {
      if (!(e instanceof StoreQuotaError)) throw e;
      // Alone: every write in a transaction marked `forgetting` would forget.
      return writeAlone(names, (tx) => {
        forgetting.add(tx);
        return body(tx);
      });
    }
  }

  const getAccount = async (accessKeyId: string) =>
    cached(accountCache, accessKeyId, async () => (await db()).get('accounts', accessKeyId));
  const getBucket = async (bucketName: string) =>
    cached(bucketCache, bucketName, async () => (await db()).get('buckets', bucketName));

  /** A write that changes what access checks read: the cached records go before and after it. */
  async function accessWrite<T>(names: Names[], body: (tx: Tx) => Promise<T>): Promise<T> {
    dropCaches();
    try {
      return await write(names, body);
    } finally {
      dropCaches();
    }
  }

  /**
   * The bucket under `ref`'s name, read inside the write's transaction, when it is still the very
   * bucket `ref` names; else undefined. A mismatch means the cached bucket records may be stale
   * (another runtime on the same database), so they go.
   */
  async function sameBucket(tx: Tx | ReadTx, ref: BucketRef): Promise<BucketRecord | undefined> {
    const bucket = await tx.objectStore('buckets').get(ref.name);
    if (bucket && bucket.id === ref.id) return bucket;
    dropCaches();
    return undefined;
  }

  /**
   * A write within one bucket: the bucket record is read inside the same transaction, and the
   * write runs only when it is still the bucket the request was authorised for.
   */
  function bucketWrite<T>(
    ref: BucketRef,
    names: Names[],
    body: (tx: Tx, bucket: BucketRecord) => Promise<T>,
    through: typeof write = write,
  ): Promise<T | 'noSuchBucket'> {
    return through([...new Set([...USAGE_STORES, ...names])], async (tx) => {
      // The owner of a bucket never changes, so the cached record names it, when it is this bucket.
      const known = bucketCache.get(ref.name);
      readUsageAhead(tx, known?.id === ref.id ? known.owner : undefined);
      const bucket = await sameBucket(tx, ref);
      return bucket ? body(tx, bucket) : 'noSuchBucket';
    });
  }

  /**
   * A read within one bucket: one readonly transaction over `names` and the bucket record, whose
   * answer counts only when the record still is the bucket the request was authorised for. The
   * body's reads go out together with the bucket's rather than after it (a GET of 1 KiB is three
   * reads); what they found in a bucket that turns out to be another one is dropped.
   */
  async function bucketRead<T>(ref: BucketRef, names: Names[], body: (tx: ReadTx) => Promise<T>): Promise<T | 'noSuchBucket'> {
    const tx = (await db()).transaction(scope(['buckets', ...names]), 'readonly');
    const [bucket, result] = await Promise.all([sameBucket(tx, ref), body(tx)]);
    return bucket ? result : 'noSuchBucket';
  }

  /** The upload, when it is in progress in the bucket `ref` names (the same name and identity). */
  async function uploadIn(tx: Tx | ReadTx, bucket: BucketRef, uploadId: string): Promise<UploadRecord | undefined> {
    const upload = await tx.objectStore('uploads').get(uploadId);
    return upload && upload.bucket === bucket.name && upload.bucketId === bucket.id ? upload : undefined;
  }

  async function readVersion(tx: ReadTx, bucket: string, key: string, versionId?: number) {
    const object = await tx.objectStore('objects').get([bucket, key]);
    if (versionId === undefined || object?.versionId === versionId) return object;
    return tx.objectStore('versions').get([bucket, key, versionId]);
  }

  const store = {
    db,
    /** Blobs, or pieces where this engine's IndexedDB refuses Blobs. */
    bodyForm,
    // A body kept as pieces is read into memory when it is made a Blob: an export streams those one at a time.
    blobsAreHandles: bodyForm === 'blobs',
    close() {
      void current?.then((d) => d.close());
      current = null;
    },

    getAccount,

    async listAccounts() {
      const tx = (await db()).transaction(USAGE_STORES, 'readonly');
      const accounts = await tx.objectStore('accounts').getAll();
      // Read only: a figure without its marker is shown recomputed, and stored by the next charge().
      return Promise.all(accounts.map(async (a) => ({ ...a, usedBytes: (await usageOf(tx, a)).used })));
    },

    putAccount(account: Omit<Account, 'usedBytes' | 'root'>) {
      return accessWrite(['accounts', 'usage-exact'], async (tx) => {
        const accounts = tx.objectStore('accounts');
        const old = await accounts.get(account.accessKeyId);
        const next: Account = { ...account, usedBytes: old?.usedBytes ?? 0 };
        if (old?.root) next.root = true;
        await accounts.put(next);
        if (!old) await tx.objectStore('usage-exact').put({ accessKeyId: account.accessKeyId });
        return old ? 'updated' as const : 'created' as const;
      });
    },

    deleteAccount(accessKeyId: string) {
      return accessWrite(['accounts', 'buckets', 'usage-exact'], async (tx) => {
        const account = await tx.objectStore('accounts').get(accessKeyId);
        if (!account) return 'noSuchAccount' as const;
        if (account.root) return 'root' as const;
        const buckets = await tx.objectStore('buckets').getAll();
        if (buckets.some((b) => b.owner === accessKeyId)) return 'ownsBuckets' as const;
        await tx.objectStore('accounts').delete(accessKeyId);
        await tx.objectStore('usage-exact').delete(accessKeyId);
        return 'ok' as const;
      });
    },

    getBucket,

    async readBucket(ref: BucketRef) {
      const tx = (await db()).transaction(['buckets'], 'readonly');
      return (await sameBucket(tx, ref)) ?? 'noSuchBucket';
    },

    async listBuckets(owner: string) {
      return (await (await db()).getAll('buckets')).filter((b) => b.owner === owner);
    },

    async listAllBuckets() {
      return (await db()).getAll('buckets');
    },

    createBucket(bucket: Omit<BucketRecord, 'id'>) {
      return accessWrite(['buckets', 'accounts'], async (tx) => {
        // Checked in the same step as deleteAccount's "owns no bucket": never a bucket without an owner.
        if (!(await tx.objectStore('accounts').getKey(bucket.owner))) return 'noSuchOwner' as const;
        const buckets = tx.objectStore('buckets');
        if (await buckets.getKey(bucket.name)) return 'exists' as const;
        await buckets.add({ ...bucket, id: newId() });
        return 'ok' as const;
      });
    },

    deleteBucket(ref: BucketRef) {
      const bucketName = ref.name;
      return accessWrite(['buckets', 'objects', 'versions', 'uploads'], async (tx) => {
        if (!(await sameBucket(tx, ref))) return 'noSuchBucket' as const;
        const everything = IDBKeyRange.bound([bucketName], [bucketName, []]);
        const holds = await Promise.all([
          tx.objectStore('objects').openKeyCursor(everything),
          tx.objectStore('versions').openKeyCursor(everything),
          tx.objectStore('uploads').index('byBucketKey').openKeyCursor(everything),
        ]);
        if (holds.some((cursor) => cursor !== null)) return 'notEmpty' as const;
        await tx.objectStore('buckets').delete(bucketName);
        return 'ok' as const;
      });
    },

    putBucketAcl(ref: BucketRef, acl: Acl) {
      return bucketWrite(ref, [], async (tx, bucket): Promise<WriteResult> => {
        await tx.objectStore('buckets').put({ ...bucket, acl });
        return 'ok';
      }, accessWrite);
    },

    putBucketVersioning(ref: BucketRef, versioning: VersioningStatus) {
      return bucketWrite(ref, [], async (tx, bucket): Promise<WriteResult> => {
        await tx.objectStore('buckets').put({ ...bucket, versioning });
        return 'ok';
      }, accessWrite);
    },

    headObject(ref: BucketRef, key: string, versionId?: number) {
      return bucketRead(ref, ['objects', 'versions'], (tx) => readVersion(tx, ref.name, key, versionId));
    },

    getObject(ref: BucketRef, key: string, versionId?: number) {
      const bucket = ref.name;
      return bucketRead(ref, ['objects', 'versions', 'bodies', 'pieces'], async (tx) => {
        // The body this key had when last seen is read together with the record: one round trip
        // instead of two when it is still the one, and only wasted reading when it is not.
        const hint = versionId === undefined ? hintOf(ref, key) : undefined;
        const guess = hint === undefined ? undefined : tx.objectStore('bodies').get(hint);
        guess?.catch(() => {}); // its failure fails the transaction, and so the read, anyway
        const object = await readVersion(tx, bucket, key, versionId);
        if (!object) return undefined;
        const only = object.chunks.length === 1 ? object.chunks[0]!.id : undefined;
        if (versionId === undefined && only !== undefined) hintBody(ref, key, only);
        const records = await Promise.all(object.chunks.map((c) => (c.id === hint && guess ? guess : tx.objectStore('bodies').get(c.id))));
        const found = records.map((b, i) => {
          if (!b) throw new Error(`body ${object.chunks[i]?.id} of ${bucket}/${key} is missing`);
          return b;
        });
        let parts: Bytes[];
        if (found.some((r) => r.pieces !== undefined)) {
          const segments = found.map((r, i): Segment => (r.pieces === undefined
            ? { size: object.chunks[i]!.size, bytes: bytesOf(r) }
            : { size: r.size, id: r.id, pieceBytes: r.pieceBytes }));
          if (object.size > sizes.snapshotBytes) return { object, body: new PieceBody(segments, readPieces) as Stored };
          // Small enough to read in this transaction, as one snapshot with the record.
          parts = await Promise.all(segments.map(async (seg) => ('bytes' in seg ? seg.bytes : joined(await tx.objectStore('pieces').getAll(piecesOf(seg.id))))));
        } else {
          parts = found.map(bytesOf);
        }
        // One chunk is served as is; several are composed without copying bytes.
        const body: Stored = parts.length === 1 ? parts[0]! : new Blob(parts);
        return { object, body };
      });
    },

    async roomFor(ref: BucketRef, target: WriteTarget) {
      // Unlimited owners (most) need no read: quotaBytes is access data, fresh in the cache.
      const bucket = await getBucket(ref.name);
      if (!bucket || bucket.id !== ref.id) return Infinity;
      const cachedOwner = await getAccount(bucket.owner);
      if (cachedOwner?.quotaBytes === undefined) return Infinity;
      // usedBytes, versioning and what the write would replace change with every write: read them fresh.
      const tx = (await db()).transaction(USAGE_STORES, 'readonly');
      const [fresh, owner] = await Promise.all([tx.objectStore('buckets').get(ref.name), tx.objectStore('accounts').get(bucket.owner)]);
      if (!fresh || fresh.id !== ref.id || owner?.quotaBytes === undefined) return Infinity;
      const { used } = await usageOf(tx, owner);
      let freed = 0;
      if ('key' in target) {
        const old = await tx.objectStore('objects').get([ref.name, target.key]);
        if (old && fresh.versioning !== 'Enabled') freed = old.size;
      } else {
        freed = (await tx.objectStore('parts').get([target.uploadId, target.partNumber]))?.size ?? 0;
      }
      // As charge() decides: a write that adds nothing net always fits.
      return freed + Math.max(0, owner.quotaBytes - used);
    },

    async putObject(ref: BucketRef, object: Omit<ObjectRecord, 'bucket' | 'chunks' | 'versionId'>, body: Stored) {
      const writeBody = await bodyWriter(body);
      const size = sizeOf(body);
      return bucketWrite(ref, ['objects', 'versions', 'bodies'], async (tx, bucket) => {
        const id = bodyId(bucket, object.key);
        const made = await makeCurrent(tx, bucket, { ...object, bucket: bucket.name, chunks: [{ id, size }] }, size);
        if (made !== 'quotaExceeded') {
          writeBody(tx, id);
          hintBody(ref, object.key, id); // a hint only: harmless if this never commits
        }
        return made;
      });
    },

    async restoreObject(
      ref: BucketRef,
      object: Omit<ObjectRecord, 'bucket' | 'chunks'>,
      body: Blob,
      how: { current: boolean; replace: boolean },
    ) {
      const writeBody = await bodyWriter(body);
      return bucketWrite(ref, ['objects', 'versions', 'bodies'], async (tx, bucket) => {
        const objects = tx.objectStore('objects');
        const versions = tx.objectStore('versions');
        const v = object.versionId;
        const [atKey, sameId] = await Promise.all([
          objects.get([bucket.name, object.key]),
          v === undefined ? undefined : versions.get([bucket.name, object.key, v]),
        ]);
        // The current object clashes when it is replaced, or when it carries the restored versionId.
        const current = atKey && (how.current || (v !== undefined && atKey.versionId === v)) ? atKey : undefined;
        const clashes = [current, sameId].filter((o) => o !== undefined);
        if (clashes.length > 0 && !how.replace) return 'exists' as const;
        if (!(await charge(tx, bucket, body.size - clashes.reduce((n, o) => n + o.size, 0)))) return 'quotaExceeded' as const;
        for (const old of clashes) await deleteBodies(tx, old);
        if (current) await objects.delete([bucket.name, object.key]);
        if (sameId && v !== undefined) await versions.delete([bucket.name, object.key, v]);
        const id = bodyId(bucket, object.key);
        const record: ObjectRecord = { ...object, bucket: bucket.name, chunks: [{ id, size: body.size }] };
        await (how.current ? objects : versions).put(record);
        writeBody(tx, id);
        if (v !== undefined && v >= bucket.nextVersionId) await tx.objectStore('buckets').put({ ...bucket, nextVersionId: v + 1 });
        return 'ok' as const;
      });
    },

    deleteObject(ref: BucketRef, key: string) {
      return bucketWrite(ref, ['objects', 'versions', 'bodies'], async (tx, b) => {
        if (!(await tx.objectStore('objects').getKey([b.name, key]))) return 'noSuchKey' as const;
        await deleteOne(tx, b, key);
        return 'ok' as const;
      }, freeingWrite);
    },

    deleteObjects(ref: BucketRef, entries: { key: string; versionId?: number }[]) {
      const bucket = ref.name;
      return bucketWrite(ref, ['objects', 'versions', 'bodies'], async (tx, b) => {
        const keys = entries.map((e) => e.key);
        if (entries.every((e) => e.versionId === undefined) && new Set(keys).size === keys.length) {
          // The common case, distinct keys and no versions: every request at once rather than one
          // awaited after the other. Each request is a round trip to the browser's IndexedDB
          // backend, so the records come from one read of the keys' span when that span holds
          // few others (a "folder" being deleted), and when it holds no others they go in one
          // range delete: 1,000 keys are then about 1,000 requests (their bodies) instead of 3,000.
          const objects = tx.objectStore('objects');
          const sorted = [...keys].sort(); // code-unit order, as IndexedDB compares strings
          const span = IDBKeyRange.bound([bucket, sorted[0]!], [bucket, sorted[sorted.length - 1]!]);
          const limit = 2 * keys.length;
          const inSpan = await objects.getAll(span, limit);
          const wanted = new Set(keys);
          const found = inSpan.length < limit
            ? inSpan.filter((o) => wanted.has(o.key))
            : (await Promise.all(keys.map((key) => objects.get([bucket, key])))).filter((o) => o !== undefined);
          const spanIsFound = inSpan.length < limit && found.length === inSpan.length;
          await charge(tx, b, -found.reduce((n, o) => n + o.size, 0));
          await Promise.all([
            ...(spanIsFound ? [objects.delete(span)] : found.map((o) => objects.delete([bucket, o.key]))),
            deleteBodyIds(tx, found.flatMap((o) => o.chunks.map((c) => c.id))),
          ]);
          return entries.map((): DeleteOutcome => 'deleted');
        }
        const outcomes: DeleteOutcome[] = [];
        // deleteOne reads what it needs, so later entries see earlier deletions.
        for (const e of entries) outcomes.push(await deleteOne(tx, b, e.key, e.versionId));
        return outcomes;
      }, freeingWrite);
    },

    moveObject(ref: BucketRef, from: string, to: string, lastModified: number) {
      const bucket = ref.name;
      return bucketWrite(ref, ['objects', 'versions', 'bodies'], async (tx, b) => {
        const source = await tx.objectStore('objects').get([bucket, from]);
        if (!source) return 'noSuchKey' as const;
        await tx.objectStore('objects').delete([bucket, from]);
        // The bytes change key, not owner: nothing is added; the source's history stays at its key.
        const moved: Omit<ObjectRecord, 'versionId'> & { versionId?: number } = { ...source, key: to, lastModified };
        delete moved.versionId; // the destination is a new write: it gets its own versionId
        const made = await makeCurrent(tx, b, moved, 0);
        if (made === 'quotaExceeded') throw new Error('a move never grows usage');
        return made;
      });
    },

    putObjectMeta(ref: BucketRef, key: string, headers: ObjectHeaders, lastModified: number) {
      return bucketWrite(ref, ['objects'], async (tx) => {
        const objects = tx.objectStore('objects');
        const object = await objects.get([ref.name, key]);
        if (!object) return 'noSuchKey' as const;
        await objects.put({ ...object, ...headers, lastModified });
        return 'ok' as const;
      });
    },

    listObjects(ref: BucketRef, o: ListObjectsOptions) {
      const bucket = ref.name;
      return bucketRead(ref, ['objects'], async (tx): Promise<ListObjectsResult> => {
        const page = new ObjectsPage(o);
        let cursor = await tx.objectStore('objects').openCursor(bucketRange(bucket, page.from, page.exclusive));
        while (cursor) {
          const step = page.add(cursor.value);
          if (step === 'done') break;
          // Skip the rest of a common prefix's group in one step when possible.
          const next = step && step.skipGroup + '\uffff';
          cursor = next && next > cursor.value.key ? await cursor.continue([bucket, next]) : await cursor.continue();
        }
        return page.result();
      });
    },

    listObjectVersions(ref: BucketRef, o: ListObjectVersionsOptions) {
      const bucket = ref.name;
      return bucketRead(ref, ['objects', 'versions'], async (tx) => {
        const page = new VersionsPage(o);
        const { start, skipStart } = page;
        let objects = await tx.objectStore('objects').openCursor(bucketRange(bucket, start, skipStart));
        let history = await tx.objectStore('versions').openCursor(
          IDBKeyRange.bound([bucket, start, skipStart ? Infinity : -Infinity], [bucket, []], skipStart, true));
        for (;;) {
          const candidates = [objects?.value.key, history?.value.key].filter((k): k is string => k !== undefined);
          if (candidates.length === 0) break;
          const key = candidates.reduce((a, b) => (b < a ? b : a));
          if (page.past(key)) break;
          let current: ObjectRecord | undefined;
          if (objects && objects.value.key === key) {
            current = objects.value;
            objects = await objects.continue();
          }
          const older: ObjectRecord[] = [];
          while (history && history.value.key === key) {
            older.push(history.value);
            history = await history.continue();
          }
          if (page.addKey(key, current, older)) break;
        }
        return page.result();
      });
    },

    createMultipartUpload(ref: BucketRef, upload: Omit<UploadRecord, 'bucket' | 'bucketId'>) {
      return bucketWrite(ref, ['uploads'], async (tx, bucket): Promise<WriteResult> => {
        await tx.objectStore('uploads').add({ ...upload, bucket: bucket.name, bucketId: bucket.id });
        return 'ok';
      });
    },

    async getUpload(uploadId: string) {
      const cached = uploadCache.get(uploadId);
      if (cached) return cached;
      const at = generation;
      const upload = await (await db()).get('uploads', uploadId);
      if (upload && at === generation) {
        if (uploadCache.size >= 1000) uploadCache.clear();
        uploadCache.set(uploadId, upload);
      }
      return upload;
    },

    async uploadPart(ref: BucketRef, part: Omit<PartRecord, 'bodyId'>, body: Bytes) {
      const writeBody = await bodyWriter(body);
      const size = sizeOf(body);
      return bucketWrite(ref, ['uploads', 'parts', 'bodies'], async (tx, bucket) => {
        // Checked inside the step: a part racing Abort or Complete lands before it or not at all.
        // The part it replaces is read at the same time (unused when there is no upload).
        const parts = tx.objectStore('parts');
        const [upload, old] = await Promise.all([uploadIn(tx, bucket, part.uploadId), parts.get([part.uploadId, part.partNumber])]);
        if (!upload) return 'noSuchUpload' as const;
        if (!(await charge(tx, bucket, size - (old?.size ?? 0)))) return 'quotaExceeded' as const;
        const id = bodyId(bucket, upload.key);
        writeBody(tx, id);
        issue(parts.put({ ...part, bodyId: id }));
        if (old) await deleteBodyIds(tx, [old.bodyId]);
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
      uploadCache.delete(uploadId);
      const done = await bucketWrite(ref, ['uploads', 'parts', 'objects', 'versions', 'bodies'], async (tx, bucket): Promise<ObjectRecord | CompleteRefusal> => {
        // While the upload exists its bucket cannot be deleted (deleteBucket refuses), so the
        // upload's parts all belong to this very bucket.
        const [upload, stored] = await Promise.all([uploadIn(tx, bucket, uploadId), tx.objectStore('parts').getAll(partRange(uploadId))]);
        if (!upload) return { refused: 'noSuchUpload' };
        const parts = completedFrom(list, stored, minPartBytes);
        if ('refused' in parts) return parts;
        const made = await makeCurrent(tx, bucket, { ...object, bucket: bucket.name, size: parts.size, chunks: parts.chunks }, 0, parts.freed);
        if (made === 'quotaExceeded') throw new Error('completing never grows usage');
        await deleteBodyIds(tx, parts.dropped.map((p) => p.bodyId));
        issue(tx.objectStore('parts').delete(partRange(uploadId)));
        issue(tx.objectStore('uploads').delete(uploadId));
        return made;
      });
      uploadCache.delete(uploadId);
      return done === 'noSuchBucket' ? { refused: 'noSuchBucket' } : done;
    },

    async abortMultipartUpload(ref: BucketRef, uploadId: string) {
      uploadCache.delete(uploadId);
      try {
        return await bucketWrite(ref, ['uploads', 'parts', 'bodies'], async (tx, bucket) => {
          if (!(await uploadIn(tx, bucket, uploadId))) return 'noSuchUpload' as const;
          const parts = await tx.objectStore('parts').getAll(partRange(uploadId));
          await charge(tx, bucket, -parts.reduce((n, p) => n + p.size, 0));
          await deleteBodyIds(tx, parts.map((p) => p.bodyId));
          await tx.objectStore('parts').delete(partRange(uploadId));
          await tx.objectStore('uploads').delete(uploadId);
          return 'ok' as const;
        }, freeingWrite);
      } finally {
        uploadCache.delete(uploadId);
      }
    },

    listParts(ref: BucketRef, uploadId: string, marker: number, max: number) {
      return bucketRead(ref, ['uploads', 'parts'], async (tx) => {
        if (!(await uploadIn(tx, ref, uploadId))) return 'noSuchUpload' as const;
        const parts = await tx.objectStore('parts').getAll(partRange(uploadId, marker), max + 1);
        return { parts: parts.slice(0, max), truncated: parts.length > max };
      });
    },

    listMultipartUploads(ref: BucketRef, o: ListMultipartUploadsOptions) {
      const bucket = ref.name;
      return bucketRead(ref, ['uploads'], async (tx) => {
        // Start after (key-marker, upload-id-marker), or after every upload of key-marker when no
        // upload-id-marker is given; never before the prefix.
        const after: [string, string, string] | [string, string, string[]] = o.uploadIdMarker
          ? [bucket, o.keyMarker, o.uploadIdMarker]
          : [bucket, o.keyMarker, []];
        const from: [string, string] | [string, string, string] | [string, string, string[]] =
          o.keyMarker !== '' && o.keyMarker >= o.prefix ? after : [bucket, o.prefix];
        const range = IDBKeyRange.bound(from, [bucket, []], from.length === 3, true);
        const uploads: UploadRecord[] = [];
        let truncated = false;
        let cursor = await tx.objectStore('uploads').index('byBucketKey').openCursor(range);
        while (cursor && cursor.value.key.startsWith(o.prefix)) {
          if (uploads.length === o.maxUploads) {
            truncated = true;
            break;
          }
          uploads.push(cursor.value);
          cursor = await cursor.continue();
        }
        return { uploads, truncated };
      });
    },
  };
  return store;
}
