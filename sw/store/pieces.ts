// Bodies as bounded byte pieces, for an IndexedDB that keeps no Blobs (WebKit with ephemeral
// storage, as in Safari's private windows, refuses them: "Error preparing Blob/File data to be
// stored in object store"). A body over the inline size is cut into pieces of `pieceBytes` each,
// stored as separate records, and read back lazily: a range reads only the pieces it covers, and a
// whole GET streams a few pieces per read transaction, so the worker holds a batch at a time.
import type { Bytes, Pieces, Stored } from './types.ts';

/** A stored object's bytes in order: bytes in hand, or a body kept as pieces. */
export type Segment =
  | { size: number; bytes: Bytes }
  | { size: number; id: string; pieceBytes: number };

/** Reads pieces `first`…`last` of body `id`, in order; fewer than asked when some are gone. */
export type PieceReader = (id: string, first: number, last: number) => Promise<Uint8Array[]>;

/** How much one read transaction of a streaming GET takes. */
const BATCH_BYTES = 4 * 1024 * 1024;

export const isPieces = (body: Stored): body is Pieces => !(body instanceof Blob) && !(body instanceof Uint8Array);

/** The bytes, from `[start, end)` of a Blob or bytes in hand. */
async function bytesIn(b: Bytes, start: number, end: number): Promise<Uint8Array> {
  return b instanceof Blob ? new Uint8Array(await b.slice(start, end).arrayBuffer()) : b.subarray(start, end);
}

/**
 * What keeps a body's pieces while it is read (rules/bodies.ts): ended when a stream of it ends,
 * fails or is cancelled, or when none was started soon enough.
 */
export interface ReadLease {
  streaming(): void;
  end(): void;
}

/** An object's bytes, some kept as pieces, read when streamed. */
export class PieceBody implements Pieces {
  private readonly offsets: number[];

  constructor(
    private readonly segments: Segment[],
    private readonly read: PieceReader,
    private readonly start = 0,
    private readonly end = segments.reduce((n, s) => n + s.size, 0),
    private readonly lease?: ReadLease,
  ) {
    let at = 0;
    this.offsets = segments.map((s) => {
      const o = at;
      at += s.size;
      return o;
    });
  }

  get size(): number {
    return this.end - this.start;
  }

  /** Bytes `start`…`end - 1` of this body (non-negative offsets, clamped as Blob.slice clamps them). */
  slice(start = 0, end = this.size): PieceBody {
    const s = Math.min(Math.max(0, start), this.size);
    const e = Math.min(Math.max(s, end), this.size);
    return new PieceBody(this.segments, this.read, this.start + s, this.start + e, this.lease);
  }

  stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    let pos = this.start;
    this.lease?.streaming();
    const ended = () => this.lease?.end();
    return new ReadableStream<Uint8Array<ArrayBuffer>>({
      pull: async (controller) => {
        try {
          await this.pull(controller, pos, (next) => (pos = next));
        } catch (e) {
          ended();
          throw e;
        }
        if (pos >= this.end) ended();
      },
      cancel: ended,
    }, { highWaterMark: 0 });
  }

  /** Enqueues the next batch from `pos`, or closes the stream at the end. */
  private async pull(controller: ReadableStreamDefaultController<Uint8Array<ArrayBuffer>>, pos: number, moved: (pos: number) => void): Promise<void> {
    if (pos >= this.end) return controller.close();
    const i = this.offsets.findIndex((o, n) => pos >= o && pos < o + this.segments[n]!.size);
    const seg = this.segments[i]!;
    const base = this.offsets[i]!;
    const until = Math.min(this.end, base + seg.size, pos + BATCH_BYTES);
    if ('bytes' in seg) {
      controller.enqueue((await bytesIn(seg.bytes, pos - base, until - base)) as Uint8Array<ArrayBuffer>);
      return moved(until);
    }
    const first = Math.floor((pos - base) / seg.pieceBytes);
    const last = Math.floor((until - base - 1) / seg.pieceBytes);
    const pieces = await this.read(seg.id, first, last);
    for (let n = first; n <= last; n++) {
      const piece = pieces[n - first];
      const from = n * seg.pieceBytes;
      const expected = Math.min(seg.pieceBytes, seg.size - from);
      // A piece missing or cut short: deleted by a runtime that did not know of this read (another tab's).
      if (!piece || piece.byteLength !== expected) {
        throw new Error('The object was deleted or replaced while it was being read.');
      }
      const a = Math.max(pos - base, from) - from;
      const b = Math.min(until - base, from + expected) - from;
      controller.enqueue(piece.subarray(a, b) as Uint8Array<ArrayBuffer>);
    }
    moved(until);
  }
}

/**
 * Cuts a body into pieces of `pieceBytes` (each its own ArrayBuffer: a view into a larger one
 * would store the whole buffer), reading a Blob or a stored body a window at a time.
 */
export async function cutIntoPieces(body: Stored, pieceBytes: number): Promise<Uint8Array<ArrayBuffer>[]> {
  const pieces: Uint8Array<ArrayBuffer>[] = [];
  let piece = new Uint8Array(Math.min(pieceBytes, body instanceof Uint8Array ? body.byteLength : body.size));
  let at = 0;
  let left = body instanceof Uint8Array ? body.byteLength : body.size;
  const add = (chunk: Uint8Array) => {
    let from = 0;
    while (from < chunk.byteLength) {
      const n = Math.min(chunk.byteLength - from, piece.byteLength - at);
      piece.set(chunk.subarray(from, from + n), at);
      at += n;
      from += n;
      left -= n;
      if (at === piece.byteLength) {
        pieces.push(piece);
        piece = new Uint8Array(Math.min(pieceBytes, left));
        at = 0;
      }
    }
  };
  if (body instanceof Uint8Array) add(body);
  else if (body instanceof Blob) {
    for (let s = 0; s < body.size; s += BATCH_BYTES) add(new Uint8Array(await body.slice(s, s + BATCH_BYTES).arrayBuffer()));
  } else {
    const reader = body.stream().getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      add(value);
    }
  }
  if (left !== 0 || at !== 0) throw new Error('the body ended before its size');
  return pieces;
}

/** Stored bytes as one Blob (a body kept as pieces is read whole into memory). */
export async function blobOf(body: Stored): Promise<Blob> {
  if (body instanceof Blob) return body;
  if (body instanceof Uint8Array) return new Blob([body]);
  return new Response(body.stream()).blob();
}

/** What a Response may carry for stored bytes. */
export const responseBody = (body: Stored): BodyInit => (isPieces(body) ? body.stream() : body);
