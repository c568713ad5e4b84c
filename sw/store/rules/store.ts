// The Store (types.ts) over any engine (engine/types.ts): the storage rules written once. Each
// write method is one atomic write step; each read of a bucket's contents one read step. The rules
// themselves live beside this file by group (usage, bodies, objects, multipart, walks); this file
// holds what ties them to the engine: the caches, the bucket check every step begins with, the
// retry of a freeing write, and the bodies read before a write (a step cannot await).
//
// A write commits only into the bucket its request was authorised for: it is given that bucket's
// identity (BucketRef) and re-reads the bucket by name in its own step, refusing when the name now
// belongs to another bucket (docs/browser.md, "Bucket identity"). A read of a bucket's contents
// does the same in its one read step, so it never sees another bucket's data.
import { StoreQuotaError } from '../errors.ts';
import { all, get, getRead, range, rangeRead, type Engine, type Read, type Step, type Table, type Writes } from '../engine/types.ts';
import { asRead } from '../engine/drive.ts';
import {
  ACCOUNTS, BODIES, BUCKETS, CONFLICTS, HELD_BODIES, OBJECTS, OUTBOX, PARTS, PIECES, REPLICAS, REPLICA_TABLES, SYNCED, UPLOADS, UPLOAD_KEYS, USAGE_EXACT,
  USAGE_TABLES, VERSIONS, WRITE_TABLES, type BodyRecord,
} from '../schema.ts';
import type {
  Account, Acl, BucketRecord, BucketRef, Bytes, CompleteRefusal, ListMultipartUploadsOptions, ListObjectsOptions,
  ListObjectVersionsOptions, ObjectHeaders, ObjectRecord, PartRecord, ReplicaLedger, Store, Stored, UploadRecord, VersioningStatus, WriteResult, WriteTarget, CorsRule,
} from '../types.ts';
import { ROOT_ACCOUNT_RECORD } from '../types.ts';
import { BODY_SIZES, bodyId, prepareBody, putBody, readBody, type BodySizes } from './bodies.ts';
import { Caches } from './caches.ts';
import { canBeVersion, deleteMany, deleteOne, makeCurrent, move, readVersion, replaceMeta, type ObjectStep } from './objects.ts';
import { commit } from './imports.ts';
import { dropSome, hold, nextHolder } from './holds.ts';
import { abort, complete, listParts, listUploads, putPart, start } from './multipart.ts';
import { usageOf } from './usage.ts';
import { listObjects, listVersions } from './walks.ts';
import { bind, evicted, keepBoth, localWins, pendingOf, pulledMany, pushed, view } from './replica.ts';

export interface StoreOptions {
  sizes?: Partial<BodySizes>;
  /** Whether the engine's data may hold bodies kept as pieces (so deleting a body deletes its pieces). */
  mayHavePieces?: boolean;
}

/**
 * What each read spans besides the bucket: no more, since a read transaction waits for every write
 * whose tables overlap its own.
 */
const VERSION_TABLES = [OBJECTS, VERSIONS] as Table<unknown>[];
const OBJECT_TABLES = [OBJECTS, VERSIONS, BODIES, PIECES] as Table<unknown>[];
const UPLOAD_TABLES = [UPLOADS, UPLOAD_KEYS, PARTS] as Table<unknown>[];
/** A sync's writes: a bucket write's tables and the replicas' own. */
const SYNC_WRITE_TABLES = [...WRITE_TABLES, ...REPLICA_TABLES];

/**
 * What a new store holds: the root account (docs/protocol.md, "Accounts"), its usage exact. For an
 * engine that starts empty (memory); IndexedDB and LMDB set up their schema themselves.
 */
export const NEW_STORE: Step<void> = function* (w) {
  if (yield* get(ACCOUNTS, [ROOT_ACCOUNT_RECORD.accessKeyId])) return;
  w.put(ACCOUNTS, ROOT_ACCOUNT_RECORD);
  w.put(USAGE_EXACT, { accessKeyId: ROOT_ACCOUNT_RECORD.accessKeyId });
};

/** The store's engine, for tests and checks that read its tables (contents.ts). */
export const engineOf = new WeakMap<Store, Engine>();

export function openStore(engine: Engine, options: StoreOptions = {}): Store & { readonly caches: Caches } {
  const sizes: BodySizes = { ...BODY_SIZES, ...options.sizes };
  // Deleting a body also deletes its pieces only where some may exist: a request more per body.
  let pieces = options.mayHavePieces === true || !engine.keepsBlobs;
  const caches = new Caches();

  /**
   * A write step within one bucket: the bucket record is read first (with the owner's usage
   * figures, when the cache names the owner), and the rules run only when it is still the bucket
   * the request was authorised for.
   */
  const inBucket = <T>(ref: BucketRef, forgetting: boolean, body: (s: ObjectStep, bucket: BucketRecord) => Generator<Read, T, unknown>): Step<T | 'noSuchBucket'> =>
    function* (w: Writes) {
      // The owner of a bucket never changes, so the cached record names it, when it is this bucket.
      const known = caches.buckets.get(ref.name);
      const owner = known?.id === ref.id ? known.owner : undefined;
      const [bucket, account, marker] = yield* all(
        getRead(BUCKETS, [ref.name]),
        owner === undefined ? undefined : getRead(ACCOUNTS, [owner]),
        owner === undefined ? undefined : getRead(USAGE_EXACT, [owner]),
      );
      if (!bucket || bucket.id !== ref.id) {
        caches.drop(); // another runtime on the same data replaced it: the cached records may be stale
        return 'noSuchBucket';
      }
      const ahead = owner === undefined ? undefined : { owner, account, exact: marker !== undefined };
      return yield* body({ w, forgetting, pieces, ...(ahead ? { ahead } : {}) }, bucket);
    };

  const bucketWrite = <T>(ref: BucketRef, body: (s: ObjectStep, bucket: BucketRecord) => Generator<Read, T, unknown>, forgetting = false) =>
    engine.write(WRITE_TABLES, inBucket(ref, forgetting, body));

  /**
   * A write that only frees bytes. When the engine finds no room for it (a full origin refuses
   * any transaction that puts a record, here the owner's usage figure), it runs once more from the
   * start, re-checking everything, dropping the owner's `usage-exact` marker instead.
   */
  async function freeing<T>(ref: BucketRef, body: (s: ObjectStep, bucket: BucketRecord) => Generator<Read, T, unknown>) {
    try {
      return await bucketWrite(ref, body);
    } catch (e) {
      if (!(e instanceof StoreQuotaError)) throw e;
      return bucketWrite(ref, body, true);
    }
  }

  /** A write that changes what access checks read: the cached records go before and after it. */
  async function accessWrite<T>(tables: Table<unknown>[], step: Step<T>): Promise<T> {
    caches.drop();
    try {
      return await engine.write(tables, step);
    } finally {
      caches.drop();
    }
  }

  /**
   * A read within one bucket, in one read step. The bucket's record is read together with the
   * body's first reads rather than before them (a GET of 1 KiB is then one round trip, not
   * two, when the body guessed from its key's last read is still the one); what they found in a
   * bucket that turns out to be another one is dropped.
   */
  const bucketRead = <T>(ref: BucketRef, tables: Table<unknown>[], body: () => Generator<Read, T, unknown>) =>
    engine.read([BUCKETS, ...tables], function* () {
      const g = body();
      let next = g.next();
      const [bucket, answer] = next.done
        ? [yield* get(BUCKETS, [ref.name]), undefined]
        : ((yield { op: 'all', reads: [getRead(BUCKETS, [ref.name]).read, asRead(next.value)] }) as [BucketRecord | undefined, unknown]);
      if (!next.done) next = g.next(answer);
      while (!next.done) next = g.next(yield asRead(next.value));
      if (bucket && bucket.id === ref.id) return next.value;
      caches.drop();
      return 'noSuchBucket' as const;
    });

  const withBody = async (body: Stored) => {
    const prepared = await prepareBody(body, engine, sizes);
    if (prepared.pieces.length > 0) pieces = true;
    return prepared;
  };

  /** A pulled object's record: its body's one chunk, or none when it is only listed (`notFetched`). */
  const incomingRecord = (object: Omit<ObjectRecord, 'bucket' | 'chunks' | 'versionId'>, bucket: string, key: string, id: string, prepared: { size: number } | undefined) => (prepared
    ? { ...object, key, bucket, chunks: [{ id, size: prepared.size }] }
    : { ...object, key, bucket, chunks: [], notFetched: true as const });

  /** Remote objects made current (or keys deleted) outside the outbox, several keys to a step: store.replica.pulled and pulledMany. */
  const pullMany: ReplicaLedger['pulledMany'] = async (ref, pulls) => {
    const prepared = await Promise.all(pulls.map((p) => (p.incoming?.body ? withBody(p.incoming.body) : undefined)));
    return engine.write(SYNC_WRITE_TABLES, inBucket(ref, false, function* (s, bucket) {
      const ids = prepared.map((b, i) => (b ? bodyId(bucket.id, pulls[i]!.key) : ''));
      return yield* pulledMany(s, bucket, pulls.map((p, i) => ({
        key: p.key, seen: p.seen, sync: p.sync, incoming: p.incoming ? incomingRecord(p.incoming.object, bucket.name, p.key, ids[i]!, prepared[i]) : null,
      })), (i) => prepared[i] && putBody(s.w, ids[i]!, prepared[i]));
    }));
  };

  const store: Store & { readonly caches: Caches } = {
    caches,
    // Blobs an engine keeps are handles onto stored bytes; any other body read whole is a copy.
    blobsAreHandles: engine.keepsBlobs,
    close: () => engine.close(),

    getAccount: (accessKeyId) => caches.account(accessKeyId, () => engine.read([ACCOUNTS], () => get(ACCOUNTS, [accessKeyId]))),

    listAccounts: () => engine.read(USAGE_TABLES, function* () {
      const [accounts, markers] = yield* all(rangeRead(ACCOUNTS, { prefix: [] }), rangeRead(USAGE_EXACT, { prefix: [] }));
      const exact = new Set(markers.map((m) => m.accessKeyId));
      // Read only: a figure without its marker is shown summed afresh, and stored by the next charge.
      const out: Account[] = [];
      for (const a of accounts) out.push({ ...a, usedBytes: yield* usageOf(a, exact.has(a.accessKeyId)) });
      return out;
    }),

    putAccount: (account) => accessWrite([ACCOUNTS, USAGE_EXACT] as Table<unknown>[], function* (w) {
      const old = yield* get(ACCOUNTS, [account.accessKeyId]);
      const next: Account = { ...account, usedBytes: old?.usedBytes ?? 0 };
      if (old?.root) next.root = true;
      w.put(ACCOUNTS, next);
      if (!old) w.put(USAGE_EXACT, { accessKeyId: account.accessKeyId });
      return old ? 'updated' as const : 'created' as const;
    }),

    deleteAccount: (accessKeyId) => accessWrite([ACCOUNTS, BUCKETS, USAGE_EXACT] as Table<unknown>[], function* (w) {
      const [account, buckets] = yield* all(getRead(ACCOUNTS, [accessKeyId]), rangeRead(BUCKETS, { prefix: [] }));
      if (!account) return 'noSuchAccount' as const;
      if (account.root) return 'root' as const;
      if (buckets.some((b) => b.owner === accessKeyId)) return 'ownsBuckets' as const;
      w.delete(ACCOUNTS, [accessKeyId]);
      w.delete(USAGE_EXACT, [accessKeyId]);
      return 'ok' as const;
    }),

    getBucket: (name) => caches.bucket(name, () => engine.read([BUCKETS], () => get(BUCKETS, [name]))),

    readBucket: (ref) => engine.read([BUCKETS], function* () {
      const bucket = yield* get(BUCKETS, [ref.name]);
      if (bucket && bucket.id === ref.id) return bucket;
      caches.drop();
      return 'noSuchBucket' as const;
    }),

    listBuckets: async (owner) => (await engine.read([BUCKETS], () => range(BUCKETS, { prefix: [] }))).filter((b) => b.owner === owner),
    listAllBuckets: () => engine.read([BUCKETS], () => range(BUCKETS, { prefix: [] })),

    createBucket: (bucket) => accessWrite([BUCKETS, ACCOUNTS] as Table<unknown>[], function* (w) {
      // Checked in the same step as deleteAccount's "owns no bucket": never a bucket without an owner.
      const [owner, existing] = yield* all(getRead(ACCOUNTS, [bucket.owner]), getRead(BUCKETS, [bucket.name]));
      if (!owner) return 'noSuchOwner' as const;
      if (existing) return 'exists' as const;
      w.put(BUCKETS, { ...bucket, id: crypto.randomUUID() });
      return 'ok' as const;
    }),

    deleteBucket: (ref, o = {}) => accessWrite(WRITE_TABLES, inBucket(ref, false, function* (s, bucket) {
      // Its outbox may hold deletions not yet pushed: the replica goes first (replica.bind).
      if (bucket.replica) return 'replicated' as const;
      const within = { prefix: [ref.name] };
      const [objects, versions, uploads] = yield* all(
        rangeRead(OBJECTS, within, { limit: 1 }),
        rangeRead(VERSIONS, within, { limit: 1 }),
        rangeRead(UPLOAD_KEYS, within, o.abortUploads ? {} : { limit: 1 }),
      );
      if (objects.length + versions.length > 0 || (uploads.length > 0 && !o.abortUploads)) return 'notEmpty' as const;
      for (const u of uploads) yield* abort(s, bucket, u.uploadId);
      s.w.delete(BUCKETS, [ref.name]);
      return 'ok' as const;
    })),

    putBucketAcl: (ref, acl: Acl) => accessWrite(WRITE_TABLES, inBucket(ref, false, function* (s, bucket): Generator<Read, WriteResult, unknown> {
      s.w.put(BUCKETS, { ...bucket, acl });
      return 'ok';
    })),

    putBucketVersioning: (ref, versioning: VersioningStatus) => accessWrite(WRITE_TABLES, inBucket(ref, false, function* (s, bucket): Generator<Read, WriteResult, unknown> {
      s.w.put(BUCKETS, { ...bucket, versioning });
      return 'ok';
    })),

    putBucketCors: (ref, rules: CorsRule[] | undefined) => accessWrite(WRITE_TABLES, inBucket(ref, false, function* (s, bucket): Generator<Read, WriteResult, unknown> {
      const { cors: _old, ...rest } = bucket;
      s.w.put(BUCKETS, rules === undefined ? rest : { ...rest, cors: rules });
      return 'ok';
    })),

    headObject: (ref, key, versionId) => bucketRead(ref, VERSION_TABLES, () => readVersion(ref.name, key, versionId)),

    getObject: (ref, key, versionId) => bucketRead(ref, OBJECT_TABLES, function* () {
      // The body this key had when last seen is read together with the record: one round trip
      // instead of two when it is still the one, and only wasted reading when it is not.
      const hint = versionId === undefined ? caches.hintOf(ref, key) : undefined;
      const [current, guess] = yield* all(getRead(OBJECTS, [ref.name, key]), hint === undefined ? undefined : getRead(BODIES, [hint]));
      const object = versionId === undefined || current?.versionId === versionId ? current
        : canBeVersion(versionId) ? yield* get(VERSIONS, [ref.name, key, versionId]) : undefined;
      if (!object) return undefined;
      if (versionId === undefined && object.chunks.length === 1) caches.hint(ref, key, object.chunks[0]!.id);
      const known = new Map<string, BodyRecord>(guess ? [[guess.id, guess]] : []);
      return { object, body: yield* readBody(object, known, engine, sizes) };
    }),

    async roomFor(ref: BucketRef, target: WriteTarget) {
      // Unlimited owners (most) need no read: quotaBytes is access data, fresh in the cache.
      const bucket = await store.getBucket(ref.name);
      if (!bucket || bucket.id !== ref.id) return Infinity;
      if ((await store.getAccount(bucket.owner))?.quotaBytes === undefined) return Infinity;
      // usedBytes, versioning and what the write would replace change with every write: read them fresh.
      return engine.read(USAGE_TABLES, function* () {
        const [fresh, owner, marker, old, part] = yield* all(
          getRead(BUCKETS, [ref.name]),
          getRead(ACCOUNTS, [bucket.owner]),
          getRead(USAGE_EXACT, [bucket.owner]),
          'key' in target ? getRead(OBJECTS, [ref.name, target.key]) : undefined,
          'key' in target ? undefined : getRead(PARTS, [target.uploadId, target.partNumber]),
        );
        if (!fresh || fresh.id !== ref.id || owner?.quotaBytes === undefined) return Infinity;
        const used = yield* usageOf(owner, marker !== undefined);
        const freed = old && fresh.versioning !== 'Enabled' ? old.size : part?.size ?? 0;
        // As charge() decides: a write that adds nothing net always fits.
        return freed + Math.max(0, owner.quotaBytes - used);
      });
    },

    async putObject(ref, object, body, condition) {
      const prepared = await withBody(body);
      return bucketWrite(ref, function* (s, bucket) {
        const id = bodyId(bucket.id, object.key);
        const made = yield* makeCurrent(s, bucket, { ...object, bucket: bucket.name, chunks: [{ id, size: prepared.size }] }, prepared.size, 0, condition);
        if (typeof made === 'object') {
          putBody(s.w, id, prepared);
          caches.hint(ref, object.key, id); // a hint only: harmless if this never commits
        }
        return made;
      });
    },

    async stageImportBodies(importId, bodies) {
      const prepared = await Promise.all(bodies.map((b) => withBody(b.body)));
      const ids = bodies.map((b) => bodyId(b.bucketId, b.key));
      const staged = prepared.map((p, i) => ({ id: ids[i]!, size: p.size }));
      await engine.write([BODIES, PIECES, HELD_BODIES] as Table<unknown>[], function* (w) {
        prepared.forEach((p, i) => putBody(w, ids[i]!, p));
        hold(w, importId, staged);
      });
      return staged;
    },

    // An access write: the caches go before and after it (buckets and accounts it made, objects it replaced).
    commitImport: (plan) => accessWrite(WRITE_TABLES, (w) => commit({ w, forgetting: false, pieces }, plan)),

    async dropHeld(holder) {
      while (!(await engine.write([BODIES, PIECES, HELD_BODIES] as Table<unknown>[], dropSome(holder, pieces))));
    },

    async listHolders() {
      const holders: string[] = [];
      for (let h = await engine.read([HELD_BODIES], nextHolder()); h !== undefined; h = await engine.read([HELD_BODIES], nextHolder(h))) holders.push(h);
      return holders;
    },

    deleteObject: (ref, key) => freeing(ref, function* (s, bucket) {
      if (!(yield* get(OBJECTS, [bucket.name, key]))) return 'noSuchKey' as const;
      yield* deleteOne(s, bucket, key);
      return 'ok' as const;
    }),

    deleteObjects: (ref, entries) => freeing(ref, (s, bucket) => deleteMany(s, bucket, entries)),
    moveObject: (ref, from, to, lastModified) => bucketWrite(ref, (s, bucket) => move(s, bucket, from, to, lastModified)),
    putObjectMeta: (ref, key, headers: ObjectHeaders, lastModified) => bucketWrite(ref, (s, bucket) => replaceMeta(s, bucket, key, headers, lastModified)),
    listObjects: (ref, o: ListObjectsOptions) => bucketRead(ref, [OBJECTS], () => listObjects(ref.name, o)),
    listObjectVersions: (ref, o: ListObjectVersionsOptions) => bucketRead(ref, VERSION_TABLES, () => listVersions(ref.name, o)),

    createMultipartUpload: (ref, upload: Omit<UploadRecord, 'bucket' | 'bucketId'>) => bucketWrite(ref, (s, bucket) => start(s, bucket, upload)),

    getUpload: (uploadId) => caches.upload(uploadId, () => engine.read([UPLOADS], () => get(UPLOADS, [uploadId]))),

    async uploadPart(ref, part: Omit<PartRecord, 'bodyId'>, body: Bytes) {
      const prepared = await withBody(body);
      return bucketWrite(ref, (s, bucket) => putPart(s, bucket, part, prepared));
    },

    async completeMultipartUpload(ref, uploadId, list, object: Omit<ObjectRecord, 'bucket' | 'chunks' | 'size' | 'versionId' | 'parts' | 'uploadId'>, minPartBytes, condition): Promise<ObjectRecord | CompleteRefusal> {
      caches.forgetUpload(uploadId);
      try {
        const done = await bucketWrite(ref, (s, bucket) => complete(s, bucket, uploadId, list, object, minPartBytes, condition));
        return done === 'noSuchBucket' ? { refused: 'noSuchBucket' } : done;
      } finally {
        caches.forgetUpload(uploadId);
      }
    },

    async abortMultipartUpload(ref, uploadId) {
      caches.forgetUpload(uploadId);
      try {
        return await freeing(ref, (s, bucket) => abort(s, bucket, uploadId));
      } finally {
        caches.forgetUpload(uploadId);
      }
    },

    listParts: (ref, uploadId, marker, max) => bucketRead(ref, UPLOAD_TABLES, () => listParts(ref, uploadId, marker, max)),
    listMultipartUploads: (ref, o: ListMultipartUploadsOptions) => bucketRead(ref, UPLOAD_TABLES, () => listUploads(ref.name, o)),

    replica: {
      bind: (ref, record) => accessWrite(SYNC_WRITE_TABLES, inBucket(ref, false, (s, bucket) => bind(s, bucket, record))),
      putRecord: (ref, record) => engine.write(SYNC_WRITE_TABLES, inBucket(ref, false, function* (s, bucket) {
        if (!bucket.replica) return 'notBound' as const;
        s.w.put(REPLICAS, { ...record, bucket: bucket.name });
        return 'ok' as const;
      })),
      records: () => engine.read([REPLICAS], () => range(REPLICAS, { prefix: [] })),
      view: (ref) => bucketRead(ref, [OBJECTS, SYNCED, OUTBOX], () => view(ref.name)),
      objects: (ref, keys) => bucketRead(ref, OBJECT_TABLES, function* () {
        const objects = yield* all(...keys.map((k) => getRead(OBJECTS, [ref.name, k])));
        const found = objects.filter((o): o is ObjectRecord => o !== undefined && !o.notFetched);
        // Every body's records in one request round; readBody then only assembles (or reads pieces).
        const ids = found.flatMap((o) => o.chunks.map((c) => c.id));
        const bodies = yield* all(...ids.map((id) => getRead(BODIES, [id])));
        const known = new Map<string, BodyRecord>();
        bodies.forEach((b, i) => b && known.set(ids[i]!, b));
        const out = new Map<string, { object: ObjectRecord; body: Stored }>();
        for (const object of found) out.set(object.key, { object, body: yield* readBody(object, known, engine, sizes) });
        return out;
      }),
      pending: (ref) => bucketRead(ref, [OBJECTS, OUTBOX], () => pendingOf(ref.name)),
      pushed: (ref, key, change, sync) => engine.write(SYNC_WRITE_TABLES, inBucket(ref, false, (s, bucket) => pushed(s, bucket, key, change, sync))),
      async pulled(ref, key, seen, incoming, sync) {
        const made = await pullMany(ref, [{ key, seen, incoming, sync }]);
        return made === 'noSuchBucket' ? made : made[0]!;
      },
      pulledMany: (ref, pulls) => pullMany(ref, pulls),
      evict: (ref, keys) => engine.write(SYNC_WRITE_TABLES, inBucket(ref, false, (s, bucket) => evicted(s, bucket, keys))),
      async keepBoth(ref, key, seen, incoming, sync, conflict) {
        const prepared = incoming?.body ? await withBody(incoming.body) : undefined;
        return engine.write(SYNC_WRITE_TABLES, inBucket(ref, false, function* (s, bucket) {
          const id = prepared ? bodyId(bucket.id, key) : '';
          const done = yield* keepBoth(s, bucket, key, seen, incoming ? incomingRecord(incoming.object, bucket.name, key, id, prepared) : null, sync, { ...conflict, bucket: bucket.name });
          if (done === 'ok' && prepared) putBody(s.w, id, prepared);
          return done;
        }));
      },
      localWins: (ref, key, sync, conflict) => engine.write(SYNC_WRITE_TABLES, inBucket(ref, false, (s, bucket) => localWins(s, bucket, key, sync, { ...conflict, bucket: bucket.name }))),
      recordConflict: (ref, conflict) => engine.write(SYNC_WRITE_TABLES, inBucket(ref, false, function* (s, bucket) {
        s.w.put(CONFLICTS, { ...conflict, bucket: bucket.name });
        return 'ok' as const;
      })),
      conflicts: (ref) => bucketRead(ref, [CONFLICTS], () => range(CONFLICTS, { prefix: [ref.name] })),
      dismissConflict: (ref, id) => engine.write(SYNC_WRITE_TABLES, inBucket(ref, false, function* (s, bucket) {
        s.w.delete(CONFLICTS, [bucket.name, id]);
        return 'ok' as const;
      })),
    },
  };
  engineOf.set(store, engine);
  return store;
}
