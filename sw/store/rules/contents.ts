// Everything a store holds, as plain records read in one snapshot through its engine, whichever
// engine it is: for tests and checks (the store invariants, test/support/stores.ts integrity()).
// Not part of Store.
import { all, count, range, rangeRead, type Table } from '../engine/types.ts';
import { ACCOUNTS, BODIES, BUCKETS, HELD_BODIES, OBJECTS, PARTS, PIECES, UPLOADS, UPLOAD_KEYS, USAGE_EXACT, VERSIONS, WRITE_TABLES } from '../schema.ts';
import type { Account, BucketRecord, ObjectRecord, PartRecord, Store, UploadRecord } from '../types.ts';
import { engineOf } from './store.ts';

export interface StoreContents {
  accounts: Account[];
  buckets: BucketRecord[];
  objects: ObjectRecord[];
  versions: ObjectRecord[];
  uploads: UploadRecord[];
  /** The uploads as the listing's table holds them: the same records as `uploads`, or a stray. */
  uploadKeys: UploadRecord[];
  parts: PartRecord[];
  /**
   * Every body with the bytes it holds: a body kept as pieces counts the pieces it has, so a
   * missing or extra piece shows as a wrong size; pieces of no body show as one body of their own
   * that nothing references.
   */
  bodies: { id: string; size: number }[];
  /** Bodies held apart from every object: an import's not committed, a replaced body still being read (schema.ts). */
  heldBodies: { holder: string; bodyId: string; size: number }[];
  /** Accounts whose usage figure is marked exact. */
  exactUsage: Set<string>;
}

export async function storeContents(store: Store): Promise<StoreContents> {
  const engine = engineOf.get(store);
  if (!engine) throw new Error('not a store over an engine');
  const everything = <V>(t: Table<V>) => rangeRead(t, { prefix: [] });
  const [accounts, markers, buckets, objects, versions, uploads, uploadKeys, parts, bodies, heldBodies] = await engine.read(WRITE_TABLES, () => all(
    everything(ACCOUNTS), everything(USAGE_EXACT), everything(BUCKETS), everything(OBJECTS), everything(VERSIONS),
    everything(UPLOADS), everything(UPLOAD_KEYS), everything(PARTS), everything(BODIES), everything(HELD_BODIES),
  ));
  // Piece by piece, a body per read: a store's pieces may be more than memory holds at once.
  const sizes = new Map<string, number>();
  let counted = 0;
  for (const b of bodies) {
    if (b.pieces === undefined) {
      sizes.set(b.id, b.blob?.size ?? b.bytes?.byteLength ?? 0);
      continue;
    }
    const pieces = await engine.read([PIECES], () => range(PIECES, { prefix: [b.id] }));
    counted += pieces.length;
    sizes.set(b.id, pieces.reduce((n, p) => n + p.byteLength, 0));
  }
  const stray = (await engine.read([PIECES], () => count(PIECES, { prefix: [] }))) - counted;
  return {
    accounts, buckets, objects, versions, uploads, uploadKeys, parts, heldBodies,
    bodies: [...[...sizes].map(([id, size]) => ({ id, size })), ...(stray > 0 ? [{ id: `${stray} pieces of no body`, size: 0 }] : [])],
    exactUsage: new Set(markers.map((m) => m.accessKeyId)),
  };
}
