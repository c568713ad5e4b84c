// Reading request bodies within their limits. The body is hashed while it streams in, never held
// twice, and reading stops as soon as a limit is passed: the size limit, and for data the room the
// bucket owner's quota leaves (a declared Content-Length over it is refused before any byte is read).
// What has been read is moved into Blobs as it comes (Gathered), so the worker holds about 8 MiB of
// a body of any size (holding the chunks until the end, its heap grew by the body's size). The
// body is written only once it has been read whole and its MD5 checked: writing it ahead in chunks
// while it streams in was built, measured and taken out (docs/browser.md, "Large PUT bodies").
import { SvcError, asSvcError, type ErrorCode } from './errors.ts';
import { payloadCheck, type ChecksumValue } from './payload.ts';
import { createMd5 } from '../../protocol/md5.ts';
import type { Bytes } from '../store/types.ts';
import type { Context } from './context.ts';

/**
 * What has been read is moved into a Blob every this many bytes: in a browser a Blob's bytes live
 * outside the worker's heap, so the heap holds about this much of a body however large it is
 * (and the garbage of the chunks read since the last collection: about +45 MiB at the peak over a
 * 100 MiB PUT, bench figure 7). Folding every 1 MiB peaked at +33 MiB, but the 1 GiB of PUTs in
 * test/browser/archive.test.ts then failed most times within Chromium's first seconds (a body "could
 * not be read to its end"): many small Blobs weigh more on the browser's Blob memory than a few.
 */
const FOLD_BYTES = 8 * 1024 * 1024;
/** A body up to this size is handed on as bytes, not as a Blob (see Bytes in sw/store/types.ts). */
const BYTES_MAX = 64 * 1024;

/**
 * A body as it is read: copied into one reused buffer, which becomes a Blob each time it fills
 * (`folded`). The chunks a read hands over are garbage at once, so the heap holds one buffer's
 * worth of a body however large it is, and garbage until the next collection.
 */
class Gathered {
  private folded: Blob[] = [];
  private buf = new Uint8Array(0);
  private at = 0;

  add(chunk: Uint8Array): void {
    let from = 0;
    while (from < chunk.byteLength) {
      if (this.at === this.buf.byteLength) this.grow();
      const n = Math.min(chunk.byteLength - from, this.buf.byteLength - this.at);
      this.buf.set(chunk.subarray(from, from + n), this.at);
      this.at += n;
      from += n;
    }
  }

  /** A small body stays in a small buffer; one that fills FOLD_BYTES is moved into a Blob. */
  private grow(): void {
    if (this.buf.byteLength < FOLD_BYTES) {
      const next = new Uint8Array(Math.min(FOLD_BYTES, Math.max(64 * 1024, this.buf.byteLength * 4)));
      next.set(this.buf.subarray(0, this.at));
      this.buf = next;
      return;
    }
    this.folded.push(new Blob([this.buf])); // a copy: the buffer is free again
    this.at = 0;
  }

  /** Everything gathered, as one body (bytes when small: see Bytes). */
  body(): Bytes {
    const last = this.buf.subarray(0, this.at);
    return this.folded.length > 0 || this.at > BYTES_MAX ? new Blob([...this.folded, last]) : last.slice();
  }
}

export interface BodyLimits {
  max: number;
  /** The error for a body over `max`: EntityTooLarge for data, MalformedXML for XML documents. */
  tooLarge: ErrorCode;
  /** Content-Length is required (MissingContentLength) where the runtime delivers it. */
  requireLength: boolean;
  /**
   * Bytes the bucket owner's quota leaves for this body (Store.roomFor): a declared Content-Length
   * over it is 403 QuotaExceeded before the body is read; without one (the browser), reading stops
   * with QuotaExceeded as soon as the bytes read pass it. Absent: no quota applies.
   */
  room?: number;
}

const overQuota = (): never => {
  throw new SvcError('QuotaExceeded', "The write would pass the bucket owner's storage quota.");
};

export interface ReadBody {
  body: Bytes;
  size: number;
  /** Lower-case hex MD5 of the bytes. */
  md5: string;
  /** S3: the flexible checksum the request asked for, checked (payload.ts). */
  checksum?: ChecksumValue;
}

const HEX32 = /^[0-9a-fA-F]{32}$/;
const BASE64_16 = /^[A-Za-z0-9+/]{22}==$/;

/** Content-MD5 as lower-case hex: base64 of the 16 digest bytes or 32 hex chars (docs/protocol.md, "ETags and Content-MD5"). */
export function parseContentMd5(value: string | null): string | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (HEX32.test(v)) return v.toLowerCase();
  if (BASE64_16.test(v)) {
    const bin = atob(v);
    let hex = '';
    for (let i = 0; i < bin.length; i++) hex += bin.charCodeAt(i).toString(16).padStart(2, '0');
    return hex;
  }
  throw new SvcError('InvalidDigest', 'Content-MD5 must be the base64 of 16 bytes or 32 hex characters.');
}

/**
 * The declared Content-Length, or undefined where the runtime withholds it. `value`: the length
 * the body's own bytes are declared with when that is another header (S3's aws-chunked bodies).
 */
export function declaredLength(ctx: Context, required: boolean, value = ctx.req.headers.get('content-length')): number | undefined {
  if (value === null) {
    if (required && ctx.contentLength === 'header') throw new SvcError('MissingContentLength');
    return undefined;
  }
  if (!/^\d{1,16}$/.test(value.trim())) throw new SvcError('InvalidArgument', 'Content-Length must be a non-negative integer.');
  return Number(value);
}

/**
 * The request's body as a stream, and its size when the engine made us learn it first.
 *
 * Firefox (ESR 153, in pages and workers) has no `Request.prototype.body`: there `body` is
 * undefined while blob() holds every byte. An absent property is a missing feature, never "no
 * body": taking it for one acknowledged every upload and stored nothing. Such a body is read with
 * blob() (Firefox keeps a large one in a file, not in the worker's heap: docs/browser.md, "Request
 * bodies"), so its size is known before a byte of it is hashed.
 */
export async function requestBody(req: Request): Promise<{ stream: ReadableStream<Uint8Array> | null; size?: number; blob?: Blob }> {
  if ('body' in req) return { stream: req.body };
  let blob: Blob;
  try {
    blob = await (req as Request).blob();
  } catch {
    throw new SvcError('IncompleteBody', 'The request body could not be read to its end.');
  }
  return { stream: blob.size === 0 ? null : (blob.stream() as ReadableStream<Uint8Array>), size: blob.size, blob };
}

/** The request's body as the handler may already have read it (ctx.bodyRead), else from the request. */
export async function bodySource(ctx: Context): Promise<{ stream: ReadableStream<Uint8Array> | null; size?: number; blob?: Blob }> {
  const read = ctx.bodyRead;
  if (!read) return requestBody(ctx.req);
  return { stream: read.size === 0 ? null : (read.stream() as ReadableStream<Uint8Array>), size: read.size, blob: read };
}

export async function readBody(ctx: Context, l: BodyLimits): Promise<ReadBody> {
  const expectedMd5 = parseContentMd5(ctx.req.headers.get('content-md5'));
  const check = await payloadCheck(ctx.payload, ctx.req.headers);
  const declared = check
    ? declaredLength(ctx, l.requireLength, check.declaredLength(ctx.req.headers))
    : declaredLength(ctx, l.requireLength);
  if (declared !== undefined && declared > l.max) throw new SvcError(l.tooLarge, `The body may not exceed ${l.max} bytes.`);
  const room = l.room ?? Infinity;
  if (declared !== undefined && declared > room) overQuota();
  const raw = await bodySource(ctx);
  // A framed body's own bytes are known only once decoded: its size and Blob are the framing's.
  const framed = check !== undefined && !check.plain;
  const known = framed ? undefined : raw.size;
  // A framed body is refused at the chunk that would pass its length, before that chunk is read.
  const cap = declared !== undefined
    ? { bytes: declared, error: () => new SvcError('IncompleteBody', `The body is longer than its declared ${declared} bytes.`) }
    : { bytes: l.max, error: () => new SvcError(l.tooLarge, `The body may not exceed ${l.max} bytes.`) };
  const stream = raw.stream && check ? check.stream(raw.stream, cap) : raw.stream;
  if (known !== undefined && known > l.max) throw new SvcError(l.tooLarge, `The body may not exceed ${l.max} bytes.`);
  if (known !== undefined && known > room) overQuota();

  const read = await readStream(ctx, stream, { ...l, room, ...(declared !== undefined ? { declared } : {}), ...(check ? { check } : {}), ...(!framed && raw.blob ? { held: raw.blob } : {}) });
  if (declared !== undefined && read.size !== declared) {
    throw new SvcError('IncompleteBody', `Content-Length is ${declared} but the body has ${read.size} bytes.`);
  }
  if (expectedMd5 !== undefined && expectedMd5 !== read.md5) {
    throw new SvcError('BadDigest', 'The Content-MD5 you specified did not match what was received.');
  }
  const checksum = await check?.finish();
  return { body: await read.body(), size: read.size, md5: read.md5, ...(checksum ? { checksum } : {}) };
}

/**
 * A body's bytes read, hashed and gathered, stopping as soon as one passes a limit: `max`, the
 * quota's `room`, a `declared` length. `held`: the same bytes already held as a Blob, kept as it is.
 */
export async function readStream(ctx: Context, stream: ReadableStream<Uint8Array> | null, l: Pick<BodyLimits, 'max' | 'tooLarge'> & {
  room: number; declared?: number; check?: { update(bytes: Uint8Array): void }; held?: Blob;
}): Promise<{ size: number; md5: string; body(): Promise<Bytes> }> {
  const md5 = await createMd5();
  const gathered = new Gathered();
  let size = 0;
  // Not a BYOB reader into one reused buffer, though that kept the heap at +2.6 MiB over a 100 MiB
  // PUT: with no garbage, nothing prompts a collection, so the Blobs of earlier PUTs (whose bytes
  // V8 does not count) stay alive in the browser, and in Chromium's first seconds, before it pages
  // Blobs to disk, storing the next ones failed ("Failed to write blobs (InvalidBlob)", the 1 GiB
  // of PUTs in test/browser/archive.test.ts, every time). The chunks a default reader hands over are
  // that garbage.
  const reader = stream?.getReader();
  if (reader) {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > l.max) throw new SvcError(l.tooLarge, `The body may not exceed ${l.max} bytes.`);
        if (l.declared !== undefined && size > l.declared) {
          throw new SvcError('IncompleteBody', 'The body is longer than Content-Length.');
        }
        if (size > l.room) overQuota();
        md5.update(value);
        l.check?.update(value);
        // A body read whole with blob() is kept as that Blob: copying it again only costs memory.
        if (!l.held) gathered.add(value);
      }
    } catch (e) {
      reader.cancel().catch(() => {});
      // Ours, or the framing's (aws-chunked: a bad chunk signature, a cut body).
      throw asSvcError(e) ?? new SvcError('IncompleteBody', 'The request body could not be read to its end.');
    } finally {
      ctx.bytesIn = size;
    }
  }
  const held = l.held;
  return {
    size,
    md5: md5.digest(),
    body: async () => (!held ? gathered.body() : size > BYTES_MAX ? held : new Uint8Array(await held.arrayBuffer())),
  };
}

/** An XML request body as text: size-capped before parsing, and valid UTF-8. */
export async function readXmlBody(ctx: Context, max: number, requireLength = true): Promise<string> {
  const { body } = await readBody(ctx, { max, tooLarge: 'MalformedXML', requireLength });
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body instanceof Blob ? await body.arrayBuffer() : body);
  } catch {
    throw new SvcError('MalformedXML', 'The XML body is not valid UTF-8.');
  }
}
