// The stores the Node tests run against, opened fresh per test: 'idb' is sw/store/idb.ts over a new
// fake-indexeddb factory (in memory), 'lmdb' is node/lmdb-store.ts in a new temporary directory,
// closed and removed when the test ends. contents() reads what either holds as the same plain
// records, and integrity() checks the invariants both keep (sw/store/idb.ts, top of file).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { IDBFactory } from 'fake-indexeddb';
import type { IDBPDatabase } from 'idb';
import { openIdbStore } from '../../sw/store/idb.ts';
import { inspectLmdbStore, openLmdbStore, type LmdbStore, type StoreContents } from '../../node/lmdb-store.ts';
import type { Account, Store } from '../../sw/store/types.ts';

export type StoreKind = 'idb' | 'idb-pieces' | 'lmdb';
/**
 * 'idb-pieces' is the IndexedDB store keeping bodies as pieces, as it does where IndexedDB refuses
 * Blobs (WebKit's ephemeral storage), with sizes so small that the tests' bodies are cut into many
 * pieces and those over 3,000 bytes stream a batch of pieces at a time.
 */
export const STORE_KINDS: readonly StoreKind[] = ['idb', 'idb-pieces', 'lmdb'];
export const TEST_PIECE_SIZES = { inlineMaxBytes: 64, pieceBytes: 1000, snapshotBytes: 3000 };

/** LMDB stores opened outside a test (in a hook): closed and removed when the process ends. */
const leftOpen = new Set<{ store: LmdbStore; dir: string }>();
process.once('exit', () => {
  for (const { dir } of leftOpen) rmSync(dir, { recursive: true, force: true });
});

/** A new temporary directory, removed when the current test ends (or with the process). */
export function tempDir(prefix = 'swbucket-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  } catch {
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return dir;
}

export async function openTestStore(kind: StoreKind): Promise<{ store: Store; factory?: IDBFactory }> {
  if (kind === 'idb' || kind === 'idb-pieces') {
    const factory = new IDBFactory();
    const pieces = kind === 'idb-pieces' ? { bodies: 'pieces' as const, sizes: TEST_PIECE_SIZES } : {};
    return { store: await openIdbStore({ indexedDB: factory, name: 'swbucket-test', ...pieces }), factory };
  }
  const dir = mkdtempSync(join(tmpdir(), 'swbucket-lmdb-'));
  const store = await openLmdbStore({ path: dir });
  const entry = { store, dir };
  const dispose = async () => {
    leftOpen.delete(entry);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    onTestFinished(dispose);
  } catch {
    leftOpen.add(entry); // opened in a hook: no test to end with
  }
  return { store };
}

/** Everything the store holds, as the same records whichever store it is. */
export async function contents(store: Store): Promise<StoreContents & { exactUsage: Set<string> }> {
  const withDb = store as unknown as { db?: () => Promise<IDBPDatabase> };
  if (!withDb.db) {
    const c = inspectLmdbStore(store);
    return { ...c, exactUsage: new Set(c.accounts.map((a) => a.accessKeyId)) };
  }
  const db = await withDb.db();
  const all = <T>(name: string) => db.getAll(name) as Promise<T[]>;
  const bodies = await all<{ id: string; blob?: Blob; bytes?: Uint8Array; pieces?: number; size?: number }>('bodies');
  // A body kept as pieces counts the bytes of the pieces it has, so a missing or extra piece shows
  // as a wrong size; a piece of no body shows as an unreferenced body of its own.
  const pieceKeys = (await db.getAllKeys('pieces')) as [string, number][];
  const pieceSizes = (await db.getAll('pieces')) as Uint8Array[];
  const held = new Map<string, number>();
  const heads = new Map(bodies.filter((b) => b.pieces !== undefined).map((b) => [b.id, b.pieces!]));
  const strayPieces: string[] = [];
  pieceKeys.forEach(([id, i], n) => {
    if (!heads.has(id) || i >= heads.get(id)!) strayPieces.push(`${id}#piece${i}`);
    else held.set(id, (held.get(id) ?? 0) + pieceSizes[n]!.byteLength);
  });
  return {
    accounts: await all('accounts'),
    buckets: await all('buckets'),
    objects: await all('objects'),
    versions: await all('versions'),
    uploads: await all('uploads'),
    parts: await all('parts'),
    bodies: [
      ...bodies.map((b) => ({ id: b.id, size: b.pieces !== undefined ? held.get(b.id) ?? 0 : b.blob?.size ?? b.bytes!.byteLength })),
      ...strayPieces.map((id) => ({ id, size: 0 })),
    ],
    exactUsage: new Set((await db.getAllKeys('usage-exact')).map(String)),
  };
}

export interface Integrity {
  /** Bodies no object, version or part references. */
  unreferenced: string[];
  /** References to bodies that do not exist. */
  dangling: string[];
  /** Bodies referenced more than once. */
  shared: string[];
  /** Chunks whose size is not their body's. */
  wrongSize: string[];
  /** Parts of no upload in progress, uploads of no bucket. */
  strays: string[];
  /** Accounts whose usedBytes (when the store says it is exact) is not what their buckets hold. */
  usage: { accessKeyId: string; stored: number; held: number }[];
}

/** The store invariants: every body belongs to exactly one record, usage figures are exact. */
export function integrity(c: StoreContents & { exactUsage?: Set<string> }): Integrity {
  const bodySize = new Map(c.bodies.map((b) => [b.id, b.size]));
  const refs: { id: string; size: number; what: string }[] = [];
  for (const o of [...c.objects, ...c.versions]) {
    for (const ch of o.chunks) refs.push({ id: ch.id, size: ch.size, what: `${o.bucket}/${o.key}@${o.versionId ?? 'null'}` });
  }
  for (const p of c.parts) refs.push({ id: p.bodyId, size: p.size, what: `part ${p.uploadId}/${p.partNumber}` });
  const seen = new Map<string, number>();
  for (const r of refs) seen.set(r.id, (seen.get(r.id) ?? 0) + 1);

  const buckets = new Map(c.buckets.map((b) => [b.name, b]));
  const uploads = new Map(c.uploads.map((u) => [u.uploadId, u]));
  const held = new Map<string, number>();
  const add = (bucket: string, size: number) => {
    const owner = buckets.get(bucket)?.owner;
    if (owner !== undefined) held.set(owner, (held.get(owner) ?? 0) + size);
  };
  for (const o of [...c.objects, ...c.versions]) add(o.bucket, o.size);
  for (const p of c.parts) add(uploads.get(p.uploadId)?.bucket ?? '', p.size);

  return {
    unreferenced: c.bodies.filter((b) => !seen.has(b.id)).map((b) => b.id),
    dangling: refs.filter((r) => !bodySize.has(r.id)).map((r) => `${r.what}: ${r.id}`),
    shared: [...seen].filter(([, n]) => n > 1).map(([id]) => id),
    wrongSize: refs.filter((r) => bodySize.has(r.id) && bodySize.get(r.id) !== r.size).map((r) => `${r.what}: ${r.id}`),
    strays: [
      ...c.parts.filter((p) => !uploads.has(p.uploadId)).map((p) => `part ${p.uploadId}/${p.partNumber}`),
      ...c.uploads.filter((u) => buckets.get(u.bucket)?.id !== u.bucketId).map((u) => `upload ${u.uploadId}`),
      ...[...c.objects, ...c.versions].filter((o) => !buckets.has(o.bucket)).map((o) => `object ${o.bucket}/${o.key}`),
    ],
    usage: c.accounts
      .filter((a: Account) => !c.exactUsage || c.exactUsage.has(a.accessKeyId))
      .map((a) => ({ accessKeyId: a.accessKeyId, stored: a.usedBytes, held: held.get(a.accessKeyId) ?? 0 }))
      .filter((u) => u.stored !== u.held),
  };
}

/** integrity() with nothing wrong, for expect().toEqual(). */
export const SOUND: Integrity = { unreferenced: [], dangling: [], shared: [], wrongSize: [], strays: [], usage: [] };
