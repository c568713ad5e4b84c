// The stores the Node tests run against, opened fresh per test: the one store logic
// (sw/store/rules/) over each engine — 'idb' is sw/store/idb.ts over a new fake-indexeddb factory
// (in memory), 'lmdb' node/lmdb-store.ts in a new temporary directory, closed and removed when the
// test ends. contents() reads what any holds as the same plain records, and integrity() checks the
// invariants the rules keep (sw/store/rules/bodies.ts and usage.ts, top of file).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { IDBFactory } from 'fake-indexeddb';
import { openIdbStore } from '../../sw/store/idb.ts';
import { openLmdbStore, type LmdbStore } from '../../node/lmdb-store.ts';
import { storeContents, type StoreContents } from '../../sw/store/rules/contents.ts';
import { NEW_STORE, engineOf, openStore } from '../../sw/store/rules/store.ts';
import { memoryEngine } from '../../sw/store/engine/memory.ts';
import type { Engine } from '../../sw/store/engine/types.ts';
import type { Account, Store, UploadRecord } from '../../sw/store/types.ts';

export type StoreKind = 'idb' | 'idb-pieces' | 'lmdb' | 'memory';
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

/** The engine under a test store of `kind`, to wrap (fault injection) and open the rules over again. */
export async function openTestEngine(kind: StoreKind): Promise<{ engine: Engine; sizes?: typeof TEST_PIECE_SIZES }> {
  const { store } = await openTestStore(kind);
  return { engine: engineOf.get(store)!, ...(kind === 'idb-pieces' ? { sizes: TEST_PIECE_SIZES } : {}) };
}

export async function openTestStore(kind: StoreKind): Promise<{ store: Store; factory?: IDBFactory }> {
  if (kind === 'memory') {
    const engine = memoryEngine({ keepsBlobs: true });
    await engine.write([], NEW_STORE);
    return { store: openStore(engine) };
  }
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
export const contents = (store: Store): Promise<StoreContents> => storeContents(store);

export interface Integrity {
  /** Bodies no object, version or part references. */
  unreferenced: string[];
  /** References to bodies that do not exist. */
  dangling: string[];
  /** Bodies referenced more than once. */
  shared: string[];
  /** Chunks whose size is not their body's. */
  wrongSize: string[];
  /** Parts of no upload in progress, uploads of no bucket, an upload and its listing's record that differ. */
  strays: string[];
  /** Accounts whose usedBytes (when the store says it is exact) is not what their buckets hold. */
  usage: { accessKeyId: string; stored: number; held: number }[];
}

/** The store invariants: every body belongs to exactly one record (or to one import not committed), usage figures are exact. */
export function integrity(c: Omit<StoreContents, 'uploadKeys' | 'exactUsage' | 'heldBodies'> & Partial<Pick<StoreContents, 'uploadKeys' | 'exactUsage' | 'heldBodies'>>): Integrity {
  const bodySize = new Map(c.bodies.map((b) => [b.id, b.size]));
  const refs: { id: string; size: number; what: string }[] = [];
  for (const o of [...c.objects, ...c.versions]) {
    for (const ch of o.chunks) refs.push({ id: ch.id, size: ch.size, what: `${o.bucket}/${o.key}@${o.versionId ?? 'null'}` });
  }
  for (const p of c.parts) refs.push({ id: p.bodyId, size: p.size, what: `part ${p.uploadId}/${p.partNumber}` });
  for (const s of c.heldBodies ?? []) refs.push({ id: s.bodyId, size: s.size, what: `held by ${s.holder}` });
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
    wrongSize: [
      ...refs.filter((r) => bodySize.has(r.id) && bodySize.get(r.id) !== r.size).map((r) => `${r.what}: ${r.id}`),
      // An object's chunks make its size, unless it is only listed from a replica's remote (no chunks yet).
      ...[...c.objects, ...c.versions]
        .filter((o) => (o.notFetched ? o.chunks.length > 0 : o.chunks.reduce((n, ch) => n + ch.size, 0) !== o.size))
        .map((o) => `${o.bucket}/${o.key}@${o.versionId ?? 'null'}: chunks of ${o.chunks.reduce((n, ch) => n + ch.size, 0)} bytes, size ${o.size}`),
    ],
    strays: [
      ...c.parts.filter((p) => !uploads.has(p.uploadId)).map((p) => `part ${p.uploadId}/${p.partNumber}`),
      ...c.uploads.filter((u) => buckets.get(u.bucket)?.id !== u.bucketId).map((u) => `upload ${u.uploadId}`),
      ...[...c.objects, ...c.versions].filter((o) => !buckets.has(o.bucket)).map((o) => `object ${o.bucket}/${o.key}`),
      ...(c.uploadKeys ? strayUploadKeys(c.uploads, c.uploadKeys) : []),
    ],
    usage: c.accounts
      .filter((a: Account) => !c.exactUsage || c.exactUsage.has(a.accessKeyId))
      .map((a) => ({ accessKeyId: a.accessKeyId, stored: a.usedBytes, held: held.get(a.accessKeyId) ?? 0 }))
      .filter((u) => u.stored !== u.held),
  };
}

/** Uploads whose record in the listing's table (by bucket and key) is missing, differs or outlived them. */
function strayUploadKeys(uploads: UploadRecord[], byKey: UploadRecord[]): string[] {
  const listed = new Map(byKey.map((u) => [u.uploadId, JSON.stringify(u)]));
  return [
    ...uploads.filter((u) => listed.get(u.uploadId) !== JSON.stringify(u)).map((u) => `upload ${u.uploadId} as listed`),
    ...byKey.filter((u) => !uploads.some((x) => x.uploadId === u.uploadId)).map((u) => `listed upload ${u.uploadId}`),
  ];
}

/** integrity() with nothing wrong, for expect().toEqual(). */
export const SOUND: Integrity = { unreferenced: [], dangling: [], shared: [], wrongSize: [], strays: [], usage: [] };
