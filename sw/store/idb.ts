// The store in a browser: the storage rules (rules/store.ts) over IndexedDB (engine/idb.ts). This
// file holds what only IndexedDB has: the database's schema as upgrade steps, and the choice of
// body form — Blobs, or bounded pieces where this IndexedDB refuses Blobs (docs/browser.md, "Blob
// bodies" and "Transactions").
import { wrap, type IDBPDatabase } from 'idb';
import { isQuotaError, StoreUnavailableError } from './errors.ts';
import { idbEngine } from './engine/idb.ts';
import { count } from './engine/types.ts';
import { PIECES } from './schema.ts';
import { openStore } from './rules/store.ts';
import type { BodySizes } from './rules/bodies.ts';
import type { Account, BucketRecord, Store, UploadRecord } from './types.ts';
import { ROOT_ACCOUNT_RECORD } from './types.ts';

/** How this store keeps a body over the inline size: as a Blob, or as pieces where IndexedDB refuses Blobs. */
export type BodyForm = 'blobs' | 'pieces';

const newId = (): string => crypto.randomUUID();

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
 * Step 6: uploads by [bucket, key, uploadId] as a store of their own, kept by the rules beside
 * `uploads`, instead of an index on it (every engine has tables; not every one has indexes).
 */
function uploadsByKey(db: IDBDatabase, tx: IDBTransaction): void {
  const byKey = db.createObjectStore('upload-keys', { keyPath: ['bucket', 'key', 'uploadId'] });
  const uploads = tx.objectStore('uploads');
  if (uploads.indexNames.contains('byBucketKey')) uploads.deleteIndex('byBucketKey');
  const cursor = uploads.openCursor();
  cursor.onsuccess = () => {
    const c = cursor.result;
    if (!c) return;
    byKey.put(c.value as UploadRecord);
    c.continue();
  };
}

/**
 * The schema, as upgrade steps in order: a database at version n has run the first n. A new
 * schema appends a step; the database version is the number of steps. Only IndexedDB requests run
 * in a step, chained by their callbacks.
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
  uploadsByKey,
  // Step 7: bodies held apart from every object: an import's before its commit, a replaced body still being read (schema.ts).
  (db) => {
    db.createObjectStore('held-bodies', { keyPath: ['holder', 'bodyId'] });
  },
  // Step 8: replicas (sw/replica/): the outbox, each key's state at its last sync, conflicts, the replicas' own records.
  (db) => {
    db.createObjectStore('outbox', { keyPath: ['bucket', 'key'] });
    db.createObjectStore('synced', { keyPath: ['bucket', 'key'] });
    db.createObjectStore('conflicts', { keyPath: ['bucket', 'id'] });
    db.createObjectStore('replicas', { keyPath: 'bucket' });
  },
];

/** How long an open may wait (behind a deletion or an upgrade another connection holds up) before the request that needed it is refused. */
const OPEN_WAIT_MS = 15_000;

function openDatabase(factory: IDBFactory, name: string, waitMs = OPEN_WAIT_MS): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = factory.open(name, UPGRADES.length);
    // An open waits while a deletion or an upgrade of the database waits for another connection
    // to close (another tab of an older swbucket, or code that opened the database itself): the
    // request that needed it is refused, saying so, instead of waiting for ever; the next one
    // tries again. An open that succeeds after that is closed at once (nobody holds it).
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      const within = waitMs >= 1000 ? `${Math.round(waitMs / 1000)} s` : `${waitMs} ms`;
      reject(new StoreUnavailableError(`The database "${name}" could not be opened within ${within}: a deletion or an upgrade of it is waiting `
        + 'for another connection to close (another tab of this site, or code that opened the database itself). Close the site\'s other tabs, then try again.'));
    }, waitMs);
    (timer as { unref?: () => void }).unref?.();
    request.onupgradeneeded = (event) => {
      for (const step of UPGRADES.slice(event.oldVersion)) step(request.result, request.transaction!);
    };
    request.onsuccess = () => {
      clearTimeout(timer);
      if (late) request.result.close();
      else resolve(request.result);
    };
    request.onerror = () => {
      clearTimeout(timer);
      reject(request.error);
    };
    // Another connection (an older worker, another tab) has not closed yet: the open waits for it.
    request.onblocked = () => {};
  });
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
  /** How long opening the database may wait behind another connection before a request is refused (ms); default 15,000. */
  openWaitMs?: number;
  sizes?: Partial<BodySizes>;
}

export async function openIdbStore(options: IdbStoreOptions = {}): Promise<Store & { db(): Promise<IDBPDatabase>; readonly bodyForm: BodyForm }> {
  const factory = options.indexedDB ?? globalThis.indexedDB;
  const name = options.name ?? 'swbucket';
  // Opened now to choose the body form, and again on the next use after a close (engine/idb.ts).
  const open = () => openDatabase(factory, name, options.openWaitMs);
  let first: Promise<IDBDatabase> | undefined = open();
  const opened = await first;
  const bodyForm: BodyForm = options.bodies === 'blobs' || options.bodies === 'pieces'
    ? options.bodies
    : (await refusesBlobs(opened)) ? 'pieces' : 'blobs';
  let onClose = () => {};
  const engine = idbEngine(() => {
    const d = first ?? open();
    first = undefined;
    return d;
  }, { keepsBlobs: bodyForm === 'blobs', onClose: () => onClose() });
  // Bodies kept as pieces before (by this store, or one that shares the database) are deleted with their pieces.
  const mayHavePieces = bodyForm === 'pieces' || (await engine.read([PIECES], () => count(PIECES, { prefix: [] }))) > 0;
  const store = openStore(engine, { mayHavePieces, ...(options.sizes ? { sizes: options.sizes } : {}) });
  onClose = () => store.caches.drop();
  return Object.assign(store, {
    /** The database itself, for tests and checks. */
    db: async () => wrap(await engine.db()) as IDBPDatabase,
    bodyForm,
  });
}
