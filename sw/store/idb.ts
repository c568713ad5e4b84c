// The Store over IndexedDB, through idb. Bytes live as Blobs in `bodies`, one record per chunk,
// apart from the small metadata records, so listing and moving never touch bytes (architecture
// rules 6 and 7). Every write is one readwrite transaction with strict durability, and nothing but
// IndexedDB requests is awaited inside it. Invariant: every body record belongs to exactly one
// object or one uploaded part; whoever drops the reference deletes the body. Completing a
// multipart upload hands the parts' bodies to the new object: no byte is copied.
import { wrap, type DBSchema, type IDBPDatabase, type IDBPTransaction, type StoreNames } from 'idb';
import { SvcError, isQuotaError } from '../core/errors.ts';
import type {
  Account, Acl, BucketRecord, CompleteRefusal, ListEntry, ListObjectsOptions, ListObjectsResult,
  ListUploadsOptions, ObjectHeaders, ObjectRecord, PartRecord, Store, UploadRecord, WriteResult,
} from './types.ts';

interface Schema extends DBSchema {
  accounts: { key: string; value: Account };
  buckets: { key: string; value: BucketRecord };
  objects: { key: [string, string]; value: ObjectRecord };
  bodies: { key: string; value: { id: string; blob: Blob } };
  uploads: { key: string; value: UploadRecord; indexes: { byBucketKey: [string, string, string] } };
  parts: { key: [string, number]; value: PartRecord };
}

type Names = StoreNames<Schema>;
type Tx<N extends Names[]> = IDBPTransaction<Schema, N, 'readwrite'>;
type Db = IDBPDatabase<Schema>;

const VERSION = 1;

export const ROOT_ACCOUNT: Account = {
  accessKeyId: 'svcadmin',
  secret: 'svcadmin-secret',
  displayName: 'svcadmin',
  root: true,
};

/** Keys of one bucket in the [bucket, key] object store: arrays sort after every string. */
const bucketRange = (bucket: string, from?: string, open = false) =>
  IDBKeyRange.bound([bucket, from ?? ''], [bucket, []], open && from !== undefined, true);

const newId = (): string => crypto.randomUUID();

/** All parts of one upload in the [uploadId, partNumber] part store. */
const partRange = (uploadId: string, after = 0) => IDBKeyRange.bound([uploadId, after], [uploadId, Infinity], true);

function openDatabase(factory: IDBFactory, name: string): Promise<Db> {
  const request = factory.open(name, VERSION);
  request.onupgradeneeded = (event) => {
    const db = request.result;
    if (event.oldVersion < 1) {
      db.createObjectStore('accounts', { keyPath: 'accessKeyId' }).add(ROOT_ACCOUNT);
      db.createObjectStore('buckets', { keyPath: 'name' });
      db.createObjectStore('objects', { keyPath: ['bucket', 'key'] });
      db.createObjectStore('bodies', { keyPath: 'id' });
      db.createObjectStore('uploads', { keyPath: 'uploadId' })
        .createIndex('byBucketKey', ['bucket', 'key', 'uploadId']);
      db.createObjectStore('parts', { keyPath: ['uploadId', 'partNumber'] });
    }
  };
  return wrap(request) as unknown as Promise<Db>;
}

export interface IdbStoreOptions {
  /** The IDBFactory to use: the browser's `indexedDB`, or fake-indexeddb's in Node. */
  indexedDB?: IDBFactory;
  name?: string;
}

export async function openIdbStore(options: IdbStoreOptions = {}): Promise<Store & { db(): Promise<Db> }> {
  const factory = options.indexedDB ?? globalThis.indexedDB;
  const name = options.name ?? 'swbucket';
  let current: Promise<Db> | null = null;

  // Opened lazily and again after a close: a newer worker's schema upgrade closes us (rule 8).
  const db = (): Promise<Db> => {
    current ??= openDatabase(factory, name).then((d) => {
      const forget = () => {
        current = null;
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
  await db();

  async function write<N extends Names[], T>(names: N, body: (tx: Tx<N>) => Promise<T>): Promise<T> {
    const tx = (await db()).transaction(names, 'readwrite', { durability: 'strict' });
    tx.done.catch(() => {}); // its failure is reported through body() or the await below
    try {
      const result = await body(tx);
      await tx.done;
      return result;
    } catch (e) {
      try {
        tx.abort();
      } catch {
        // already finished or aborted
      }
      if (isQuotaError(e)) throw new SvcError('QuotaExceeded', 'The browser refused to store more data.');
      throw e;
    }
  }

  async function deleteBodies(bodies: { delete(id: string): Promise<void> }, object: ObjectRecord | undefined) {
    for (const chunk of object?.chunks ?? []) await bodies.delete(chunk.id);
  }

  const store = {
    db,
    close() {
      void current?.then((d) => d.close());
      current = null;
    },

    async getAccount(accessKeyId: string) {
      return (await db()).get('accounts', accessKeyId);
    },

    async getBucket(name: string) {
      return (await db()).get('buckets', name);
    },

    async listBuckets(owner: string) {
      return (await (await db()).getAll('buckets')).filter((b) => b.owner === owner);
    },

    createBucket(bucket: BucketRecord) {
      return write(['buckets'], async (tx) => {
        const buckets = tx.objectStore('buckets');
        if (await buckets.getKey(bucket.name)) return 'exists' as const;
        await buckets.add(bucket);
        return 'ok' as const;
      });
    },

    deleteBucket(name: string) {
      return write(['buckets', 'objects', 'uploads'], async (tx) => {
        if (!(await tx.objectStore('buckets').getKey(name))) return 'noSuchBucket' as const;
        const hasObject = await tx.objectStore('objects').openKeyCursor(bucketRange(name));
        const hasUpload = await tx.objectStore('uploads').index('byBucketKey')
          .openKeyCursor(IDBKeyRange.bound([name], [name, []]));
        if (hasObject || hasUpload) return 'notEmpty' as const;
        await tx.objectStore('buckets').delete(name);
        return 'ok' as const;
      });
    },

    setBucketAcl(name: string, acl: Acl) {
      return write(['buckets'], async (tx): Promise<WriteResult> => {
        const bucket = await tx.objectStore('buckets').get(name);
        if (!bucket) return 'noSuchBucket';
        await tx.objectStore('buckets').put({ ...bucket, acl });
        return 'ok';
      });
    },

    async headObject(bucket: string, key: string) {
      return (await db()).get('objects', [bucket, key]);
    },

    async getObject(bucket: string, key: string) {
      const tx = (await db()).transaction(['objects', 'bodies'], 'readonly');
      const object = await tx.objectStore('objects').get([bucket, key]);
      if (!object) return undefined;
      const blobs = await Promise.all(object.chunks.map((c) => tx.objectStore('bodies').get(c.id)));
      const parts = blobs.map((b, i) => {
        if (!b) throw new Error(`body ${object.chunks[i]?.id} of ${bucket}/${key} is missing`);
        return b.blob;
      });
      // One chunk is served as is; several are composed without copying bytes.
      const body = parts.length === 1 ? parts[0]! : new Blob(parts);
      return { object, body };
    },

    putObject(object: Omit<ObjectRecord, 'chunks'>, body: Blob) {
      return write(['buckets', 'objects', 'bodies'], async (tx): Promise<WriteResult> => {
        if (!(await tx.objectStore('buckets').getKey(object.bucket))) return 'noSuchBucket';
        const objects = tx.objectStore('objects');
        const old = await objects.get([object.bucket, object.key]);
        const id = newId();
        await tx.objectStore('bodies').add({ id, blob: body });
        await objects.put({ ...object, chunks: [{ id, size: body.size }] });
        await deleteBodies(tx.objectStore('bodies'), old);
        return 'ok';
      });
    },

    deleteObject(bucket: string, key: string) {
      return write(['objects', 'bodies'], async (tx) => {
        const old = await tx.objectStore('objects').get([bucket, key]);
        if (!old) return 'noSuchKey' as const;
        await tx.objectStore('objects').delete([bucket, key]);
        await deleteBodies(tx.objectStore('bodies'), old);
        return 'ok' as const;
      });
    },

    deleteObjects(bucket: string, keys: string[]) {
      return write(['buckets', 'objects', 'bodies'], async (tx): Promise<WriteResult> => {
        if (!(await tx.objectStore('buckets').getKey(bucket))) return 'noSuchBucket';
        const objects = tx.objectStore('objects');
        for (const key of keys) {
          const old = await objects.get([bucket, key]);
          if (!old) continue;
          await objects.delete([bucket, key]);
          await deleteBodies(tx.objectStore('bodies'), old);
        }
        return 'ok';
      });
    },

    moveObject(bucket: string, from: string, to: string, lastModified: number) {
      return write(['buckets', 'objects', 'bodies'], async (tx) => {
        if (!(await tx.objectStore('buckets').getKey(bucket))) return 'noSuchBucket' as const;
        const objects = tx.objectStore('objects');
        const source = await objects.get([bucket, from]);
        if (!source) return 'noSuchKey' as const;
        const replaced = from === to ? undefined : await objects.get([bucket, to]);
        const moved = { ...source, key: to, lastModified };
        await objects.delete([bucket, from]);
        await objects.put(moved);
        await deleteBodies(tx.objectStore('bodies'), replaced);
        return moved;
      });
    },

    replaceObjectHeaders(bucket: string, key: string, headers: ObjectHeaders, lastModified: number) {
      return write(['objects'], async (tx) => {
        const objects = tx.objectStore('objects');
        const object = await objects.get([bucket, key]);
        if (!object) return 'noSuchKey' as const;
        await objects.put({ ...object, ...headers, lastModified });
        return 'ok' as const;
      });
    },

    async listObjects(bucket: string, o: ListObjectsOptions): Promise<ListObjectsResult> {
      const tx = (await db()).transaction('objects', 'readonly');
      const entries: ListEntry[] = [];
      let truncated = false;
      // Start after the marker or at the prefix, whichever is later.
      const range = o.marker >= o.prefix ? bucketRange(bucket, o.marker, true) : bucketRange(bucket, o.prefix);
      let lastPrefix: string | undefined;
      let cursor = await tx.store.openCursor(range);
      while (cursor) {
        const key = cursor.value.key;
        if (!key.startsWith(o.prefix)) break; // sorted: past every key with the prefix
        const cut = o.delimiter ? key.indexOf(o.delimiter, o.prefix.length) : -1;
        if (cut >= 0) {
          const common = key.slice(0, cut + o.delimiter.length);
          // A common prefix at or before the marker was listed on an earlier page.
          if (common !== lastPrefix && common > o.marker) {
            if (entries.length === o.maxKeys) {
              truncated = true;
              break;
            }
            entries.push({ kind: 'prefix', prefix: common });
          }
          lastPrefix = common;
          // Skip the rest of the group in one step when possible.
          const next = common + '\uffff';
          cursor = next > key ? await cursor.continue([bucket, next]) : await cursor.continue();
          continue;
        }
        if (entries.length === o.maxKeys) {
          truncated = true;
          break;
        }
        entries.push({ kind: 'object', object: cursor.value });
        cursor = await cursor.continue();
      }
      return { entries, truncated };
    },

    createUpload(upload: UploadRecord) {
      return write(['buckets', 'uploads'], async (tx): Promise<WriteResult> => {
        if (!(await tx.objectStore('buckets').getKey(upload.bucket))) return 'noSuchBucket';
        await tx.objectStore('uploads').add(upload);
        return 'ok';
      });
    },

    async getUpload(uploadId: string) {
      return (await db()).get('uploads', uploadId);
    },

    putPart(part: Omit<PartRecord, 'bodyId'>, body: Blob) {
      return write(['uploads', 'parts', 'bodies'], async (tx) => {
        // Checked inside the step: a part racing Abort or Complete lands before it or not at all.
        if (!(await tx.objectStore('uploads').getKey(part.uploadId))) return 'noSuchUpload' as const;
        const parts = tx.objectStore('parts');
        const old = await parts.get([part.uploadId, part.partNumber]);
        const bodyId = newId();
        await tx.objectStore('bodies').add({ id: bodyId, blob: body });
        await parts.put({ ...part, bodyId });
        if (old) await tx.objectStore('bodies').delete(old.bodyId);
        return 'ok' as const;
      });
    },

    completeUpload(
      uploadId: string,
      list: { partNumber: number; etag: string }[],
      object: Omit<ObjectRecord, 'chunks' | 'size'>,
      minPartBytes: number,
    ) {
      // The bucket cannot vanish meanwhile: deleteBucket refuses while an upload exists.
      return write(['uploads', 'parts', 'objects', 'bodies'], async (tx): Promise<ObjectRecord | CompleteRefusal> => {
        if (!(await tx.objectStore('uploads').getKey(uploadId))) return { refused: 'noSuchUpload' };
        const uploaded = new Map((await tx.objectStore('parts').getAll(partRange(uploadId))).map((p) => [p.partNumber, p]));
        const chosen: PartRecord[] = [];
        for (const want of list) {
          const part = uploaded.get(want.partNumber);
          if (!part || part.etag !== want.etag) return { refused: 'invalidPart', partNumber: want.partNumber };
          chosen.push(part);
        }
        const small = chosen.slice(0, -1).find((p) => p.size < minPartBytes);
        if (small) return { refused: 'entityTooSmall', partNumber: small.partNumber };

        const objects = tx.objectStore('objects');
        const bodies = tx.objectStore('bodies');
        const replaced = await objects.get([object.bucket, object.key]);
        const made: ObjectRecord = {
          ...object,
          size: chosen.reduce((n, p) => n + p.size, 0),
          chunks: chosen.map((p) => ({ id: p.bodyId, size: p.size })),
        };
        await objects.put(made);
        await deleteBodies(bodies, replaced);
        const kept = new Set(chosen.map((p) => p.bodyId));
        for (const part of uploaded.values()) if (!kept.has(part.bodyId)) await bodies.delete(part.bodyId);
        await tx.objectStore('parts').delete(partRange(uploadId));
        await tx.objectStore('uploads').delete(uploadId);
        return made;
      });
    },

    abortUpload(uploadId: string) {
      return write(['uploads', 'parts', 'bodies'], async (tx) => {
        if (!(await tx.objectStore('uploads').getKey(uploadId))) return 'noSuchUpload' as const;
        const parts = await tx.objectStore('parts').getAll(partRange(uploadId));
        for (const part of parts) await tx.objectStore('bodies').delete(part.bodyId);
        await tx.objectStore('parts').delete(partRange(uploadId));
        await tx.objectStore('uploads').delete(uploadId);
        return 'ok' as const;
      });
    },

    async listParts(uploadId: string, marker: number, max: number) {
      const parts = await (await db()).getAll('parts', partRange(uploadId, marker), max + 1);
      return { parts: parts.slice(0, max), truncated: parts.length > max };
    },

    async listUploads(bucket: string, o: ListUploadsOptions) {
      // Start after (key-marker, upload-id-marker), or after every upload of key-marker when no
      // upload-id-marker is given; never before the prefix.
      const after: [string, string, string] | [string, string, string[]] = o.uploadIdMarker
        ? [bucket, o.keyMarker, o.uploadIdMarker]
        : [bucket, o.keyMarker, []];
      const from: [string, string] | [string, string, string] | [string, string, string[]] =
        o.keyMarker !== '' && o.keyMarker >= o.prefix ? after : [bucket, o.prefix];
      const range = IDBKeyRange.bound(from, [bucket, []], from.length === 3, true);
      const tx = (await db()).transaction('uploads', 'readonly');
      const uploads: UploadRecord[] = [];
      let truncated = false;
      let cursor = await tx.store.index('byBucketKey').openCursor(range);
      while (cursor && cursor.value.key.startsWith(o.prefix)) {
        if (uploads.length === o.maxUploads) {
          truncated = true;
          break;
        }
        uploads.push(cursor.value);
        cursor = await cursor.continue();
      }
      return { uploads, truncated };
    },
  };
  return store;
}
