// Reading request bodies within their limits. The body is hashed while it streams in, never held
// twice, and reading stops as soon as a limit is passed: the size limit, and for data the room the
// bucket owner's quota leaves (a declared Content-Length over it is refused before any byte is read).
// Given a stage (Store.stageBody), a large body is written while it streams in: one chunk write
// runs while the next bytes are read and hashed, so a PUT costs about the slower of the two rather
// than their sum, and the worker holds a few MiB of it at a time rather than all of it.
import { SvcError, type ErrorCode } from './errors.ts';
import { createMd5 } from '../../protocol/md5.ts';
import type { BodyStage, StagedBody } from '../store/types.ts';
import type { Context } from './context.ts';

/**
 * Nothing is staged until this much has arrived: a smaller body is written whole with its object,
 * one transaction in all. Then a chunk is written whenever the previous write is done, of what
 * arrived meanwhile, so the chunk size follows the store's speed.
 */
const STAGE_FROM_BYTES = 256 * 1024;
/** While a chunk write runs, at most this much more is read before waiting for it. */
const STAGE_MAX_PENDING_BYTES = 8 * 1024 * 1024;

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
  blob: Blob;
  size: number;
  /** Lower-case hex MD5 of the bytes. */
  md5: string;
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

/** The declared Content-Length, or undefined where the runtime withholds it. */
export function declaredLength(ctx: Context, required: boolean): number | undefined {
  const value = ctx.req.headers.get('content-length');
  if (value === null) {
    if (required && ctx.contentLength === 'header') throw new SvcError('MissingContentLength');
    return undefined;
  }
  if (!/^\d{1,16}$/.test(value.trim())) throw new SvcError('InvalidArgument', 'Content-Length must be a non-negative integer.');
  return Number(value);
}

export async function readBody(ctx: Context, l: BodyLimits): Promise<ReadBody> {
  const { rest, size, md5 } = await read(ctx, l);
  return { blob: rest, size, md5 };
}

/**
 * readBody() for an object's bytes, written ahead into `stage` when there is one and the body is
 * large. The caller discards the stage when the object is not stored (the store's write takes its
 * chunks when it commits), whatever went wrong: what was written ahead must not stay.
 */
export async function readStagedBody(
  ctx: Context,
  l: BodyLimits,
  stage: BodyStage | undefined,
): Promise<{ body: Blob | StagedBody; size: number; md5: string }> {
  const { rest, size, md5, staged } = await read(ctx, l, stage);
  return { body: staged && stage ? { stage, rest } : rest, size, md5 };
}

async function read(ctx: Context, l: BodyLimits, stage?: BodyStage): Promise<{ rest: Blob; size: number; md5: string; staged: boolean }> {
  const expectedMd5 = parseContentMd5(ctx.req.headers.get('content-md5'));
  const declared = declaredLength(ctx, l.requireLength);
  if (declared !== undefined && declared > l.max) throw new SvcError(l.tooLarge, `The body may not exceed ${l.max} bytes.`);
  const room = l.room ?? Infinity;
  if (declared !== undefined && declared > room) overQuota();

  const md5 = await createMd5();
  let chunks: Uint8Array[] = [];
  let pending = 0;
  let size = 0;
  // The chunk write in flight, if any, and the first failure of one (the store's, not the body's).
  let writing: Promise<void> | undefined;
  let staged = false;
  let writeFailed: { error: unknown } | undefined;
  const flush = () => {
    const blob = new Blob(chunks as Uint8Array<ArrayBuffer>[]);
    chunks = [];
    pending = 0;
    staged = true;
    writing = stage!.write(blob).then(() => {
      writing = undefined;
    }, (error: unknown) => {
      writeFailed ??= { error };
      writing = undefined;
    });
  };
  const reader = ctx.req.body?.getReader();
  if (reader) {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > l.max) throw new SvcError(l.tooLarge, `The body may not exceed ${l.max} bytes.`);
        if (declared !== undefined && size > declared) {
          throw new SvcError('IncompleteBody', 'The body is longer than Content-Length.');
        }
        if (size > room) overQuota();
        md5.update(value);
        chunks.push(value);
        pending += value.byteLength;
        if (writeFailed) {
          reader.cancel().catch(() => {});
          break; // the store failed: no point reading on
        }
        if (!stage || size < STAGE_FROM_BYTES) continue;
        if (writing && pending >= STAGE_MAX_PENDING_BYTES) await writing;
        if (!writing && !writeFailed) flush();
      }
    } catch (e) {
      reader.cancel().catch(() => {});
      await writing; // settled before the caller discards the stage, so no chunk lands after
      if (e instanceof SvcError) throw e;
      throw new SvcError('IncompleteBody', 'The request body could not be read to its end.');
    } finally {
      ctx.bytesIn = size;
    }
  }
  await writing;
  if (writeFailed) throw writeFailed.error;
  if (declared !== undefined && size !== declared) {
    throw new SvcError('IncompleteBody', `Content-Length is ${declared} but the body has ${size} bytes.`);
  }
  const digest = md5.digest();
  if (expectedMd5 !== undefined && expectedMd5 !== digest) {
    throw new SvcError('BadDigest', 'The Content-MD5 you specified did not match what was received.');
  }
  return { rest: new Blob(chunks as Uint8Array<ArrayBuffer>[]), size, md5: digest, staged };
}

/** An XML request body as text: size-capped before parsing, and valid UTF-8. */
export async function readXmlBody(ctx: Context, max: number, requireLength = true): Promise<string> {
  const { blob } = await readBody(ctx, { max, tooLarge: 'MalformedXML', requireLength });
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(await blob.arrayBuffer());
  } catch {
    throw new SvcError('MalformedXML', 'The XML body is not valid UTF-8.');
  }
}
