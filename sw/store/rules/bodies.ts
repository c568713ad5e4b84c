// Bodies: an object's bytes, kept apart from its small metadata record so that listing and moving
// never touch bytes. One body record per chunk (one for a PUT, one per part for a completed
// multipart upload), in one of three forms:
// - the bytes themselves, when small (up to inlineMaxBytes): Chromium keeps every stored Blob in a
//   file of its own, and for 1 KiB creating, opening and deleting that file costs more than the
//   rest of the request;
// - a Blob, where the engine keeps Blobs as handles onto stored bytes (IndexedDB): read lazily,
//   sliced for ranges;
// - pieces of pieceBytes each, elsewhere (LMDB, an IndexedDB that refuses Blobs): a range reads only
//   the pieces it covers, and a whole GET streams a batch of pieces per read (pieces.ts).
// Every body belongs to exactly one current object, historical version, uploaded part or holder
// (schema.ts, HELD_BODIES: an import before its commit; this runtime while it streams a body a
// write dropped); whoever drops the reference deletes the body. Completing a multipart upload hands the parts' bodies to
// the new object: no byte is copied.
import { all, count, getRead, range, rangeRead, type Engine, type Read, type Table, type Writes } from '../engine/types.ts';
import { runtimeHolder } from '../holders.ts';
import { hold, release } from './holds.ts';
import { BODIES, HELD_BODIES, PIECES, type BodyRecord } from '../schema.ts';
import { PieceBody, blobOf, cutIntoPieces, type ReadLease, type Segment } from '../pieces.ts';
import type { Bytes, ObjectRecord, Stored } from '../types.ts';
import { NotFetchedError } from '../errors.ts';
import { joinBytes } from '../../../protocol/bytes.ts';

export interface BodySizes {
  /** Bodies up to this size are kept as bytes in their record. */
  inlineMaxBytes: number;
  /** The size of a piece, where bodies are kept as pieces. */
  pieceBytes: number;
  /**
   * A body kept as pieces that is at most this large is read whole inside the GET's own step, so it
   * is seen as one snapshot with its record; a larger one streams, a batch of pieces per read, and a
   * write that drops it meanwhile holds it until the stream ends (dropBodies), so the read is whole.
   */
  snapshotBytes: number;
}

export const BODY_SIZES: BodySizes = { inlineMaxBytes: 16 * 1024, pieceBytes: 256 * 1024, snapshotBytes: 1024 * 1024 };

export const sizeOf = (body: Stored): number => (body instanceof Uint8Array ? body.byteLength : body.size);

/** A body's records, made before its write step (reading a Blob takes awaiting, which a step cannot). */
export interface PreparedBody {
  size: number;
  record(id: string): BodyRecord;
  pieces: Uint8Array[];
}

export async function prepareBody(body: Stored, engine: Engine, sizes: BodySizes): Promise<PreparedBody> {
  const size = sizeOf(body);
  if (size <= sizes.inlineMaxBytes) {
    const bytes = body instanceof Uint8Array ? body : new Uint8Array(await (await blobOf(body)).arrayBuffer());
    return { size, record: (id) => ({ id, bytes }), pieces: [] };
  }
  if (engine.keepsBlobs) {
    const blob = await blobOf(body);
    return { size, record: (id) => ({ id, blob }), pieces: [] };
  }
  const pieceBytes = sizes.pieceBytes;
  const pieces = await cutIntoPieces(body, pieceBytes);
  return { size, record: (id) => ({ id, pieces: pieces.length, pieceBytes, size }), pieces };
}

export function putBody(w: Writes, id: string, body: PreparedBody): void {
  w.put(BODIES, body.record(id));
  body.pieces.forEach((piece, i) => w.put(PIECES, piece, [id, i]));
}

/** How much of an object key a body id carries (see bodyId). */
const BODY_ID_KEY_CHARS = 64;

/**
 * A new body's id: its bucket's identity, the start of its object's key, then a random part. Ids
 * so sort with their keys, and the bodies of a run of neighbouring keys (a folder being deleted)
 * are a run of ids that one range delete can take (dropBodies checks the run holds nothing else:
 * a body keeps its id when its object moves). Only the first 64 characters of the key go in, so a
 * multipart object's list of part ids stays small for long keys. \u0000 sorts before every
 * character a key is likely to hold, so a key's ids come before those of keys it prefixes.
 */
export const bodyId = (bucketId: string, key: string): string =>
  `${bucketId}\u0000${key.slice(0, BODY_ID_KEY_CHARS)}\u0000${crypto.randomUUID()}`;

/**
 * Deletes these bodies: in one range delete when the run of ids from the least to the greatest
 * holds exactly them (bodyId() makes neighbouring keys' bodies such a run), else one by one. The
 * run is counted first because a body keeps its id when its object moves, so a run can hold a
 * body of another object. `pieces`: whether bodies may have pieces to delete with them.
 */
export function* dropBodies(w: Writes, dropped: string[], pieces: boolean): Generator<Read, void, unknown> {
  // A body this runtime is still streaming to a reader is held instead, until the reader is done:
  // a GET that began before a write replaced its object reads it whole (see readBody).
  const ids = dropped.filter((id) => !reading.has(id));
  if (ids.length < dropped.length) {
    const kept = dropped.filter((id) => reading.has(id));
    const records = yield* all(...kept.map((id) => getRead(BODIES, [id])));
    const held = kept.flatMap((id, i) => {
      const r = records[i];
      return r ? [{ id, size: r.pieces !== undefined ? r.size : r.blob?.size ?? r.bytes?.byteLength ?? 0 }] : [];
    });
    hold(w, runtimeHolder(), held);
    for (const b of held) reading.get(b.id)!.held = true;
  }
  if (ids.length > 2) {
    const sorted = [...ids].sort(); // code-unit order, as the engines compare strings
    const first = sorted[0]!;
    const last = sorted[sorted.length - 1]!;
    const run = { prefix: [], start: [first], end: [last] };
    if ((yield* count(BODIES, run)) === new Set(sorted).size) {
      w.deleteRange(BODIES, run);
      if (pieces) w.deleteRange(PIECES, { prefix: [], start: [first, 0], end: [last, Number.MAX_SAFE_INTEGER] });
      return;
    }
  }
  for (const id of ids) {
    w.delete(BODIES, [id]);
    if (pieces) w.deleteRange(PIECES, { prefix: [id] });
  }
}

export const idsOf = (object: { chunks: { id: string }[] } | undefined): string[] => object?.chunks.map((c) => c.id) ?? [];

/**
 * Bodies this runtime is streaming to readers, by id, with how many reads and whether a write has
 * dropped the body meanwhile (it then holds it: dropBodies). The last read to end releases it.
 */
const reading = new Map<string, { reads: number; held: boolean }>();

/** How long a body read for streaming is kept for a stream that has not started (a conditional GET answering 304 never streams it). */
const UNSTREAMED_MS = 60_000;

/**
 * Keeps `ids` for a read that will stream them: begun inside the read step that found them, so no
 * write after that step deletes their pieces before the read ends (a stream ends, fails or is
 * cancelled; or none started in time).
 */
function leaseFor(ids: string[], engine: Engine): ReadLease {
  for (const id of ids) {
    const r = reading.get(id) ?? { reads: 0, held: false };
    r.reads++;
    reading.set(id, r);
  }
  let done = false;
  const timer = setTimeout(() => end(), UNSTREAMED_MS);
  (timer as { unref?: () => void }).unref?.(); // never what keeps a Node process running
  function end() {
    if (done) return;
    done = true;
    clearTimeout(timer);
    const free: string[] = [];
    for (const id of ids) {
      const r = reading.get(id)!;
      if (--r.reads > 0) continue;
      reading.delete(id);
      if (r.held) free.push(id);
    }
    // What is not freed now (a failed write) is swept with this runtime's other holds when it stops.
    if (free.length > 0) void engine.write([BODIES, PIECES, HELD_BODIES] as Table<unknown>[], release(runtimeHolder(), free, true)).catch(() => {});
  }
  return { streaming: () => clearTimeout(timer), end };
}

/** Pieces `first`…`last` of body `id`, read by a step of their own (a GET streaming a large body). */
export const pieceReader = (engine: Engine) => (id: string, first: number, last: number): Promise<Uint8Array[]> =>
  engine.read([PIECES], () => range(PIECES, { prefix: [id], start: [id, first], end: [id, last] }));

/**
 * An object's bytes, read inside the read step that found its record. `known`: body records the
 * step read already (a guess sent with the object's own read). Bodies kept as pieces are read in
 * this step when the object is small enough to be one snapshot, else streamed later.
 */
export function* readBody(
  object: ObjectRecord,
  known: Map<string, BodyRecord>,
  engine: Engine,
  sizes: BodySizes,
): Generator<Read, Stored, unknown> {
  if (object.notFetched) throw new NotFetchedError(object.bucket, object.key);
  const wanted = object.chunks.filter((c) => !known.has(c.id));
  const fetched = yield* all(...wanted.map((c) => getRead(BODIES, [c.id])));
  fetched.forEach((r, i) => r && known.set(wanted[i]!.id, r));
  const records = object.chunks.map((c) => {
    const r = known.get(c.id);
    if (!r) throw new Error(`body ${c.id} of ${object.bucket}/${object.key} is missing`);
    return r;
  });
  let parts: Bytes[];
  if (records.some((r) => r.pieces !== undefined)) {
    const segments = records.map((r, i): Segment => (r.pieces === undefined
      ? { size: object.chunks[i]!.size, bytes: (r.blob ?? r.bytes) as Bytes }
      : { size: r.size, id: r.id, pieceBytes: r.pieceBytes }));
    if (object.size > sizes.snapshotBytes) {
      const ids = segments.flatMap((s) => ('id' in s ? [s.id] : []));
      return new PieceBody(segments, pieceReader(engine), 0, object.size, leaseFor(ids, engine));
    }
    // Small enough to read in this step, as one snapshot with the record.
    const read = yield* all(...segments.map((s) => ('id' in s ? rangeRead(PIECES, { prefix: [s.id] }) : undefined)));
    parts = segments.map((s, i) => ('bytes' in s ? s.bytes : joinBytes(read[i]!)));
  } else {
    parts = records.map((r) => (r.blob ?? r.bytes) as Bytes);
  }
  // One chunk is served as is; several are composed without copying bytes.
  return parts.length === 1 ? parts[0]! : new Blob(parts);
}
