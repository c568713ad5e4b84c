// aws-chunked request bodies (issue 24): what S3 clients send with `Content-Encoding: aws-chunked`
// when they stream a body whose hash they cannot compute first. The body is framed in chunks,
//   {size in hex}[;chunk-signature={64 hex}]\r\n{size bytes}\r\n … 0[;chunk-signature=…]\r\n
// then optional trailing headers (`x-amz-checksum-crc32:{base64}\r\n`) and an empty line. With
// `x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD` each chunk is signed, its signature
// chained from the previous one (the first from the request's own, the "seed"); with
// `STREAMING-UNSIGNED-PAYLOAD-TRAILER` nothing is signed and a trailer carries the checksum.
// Written from AWS's description of chunked uploads; checked against its published example.
import { sha256Hex, signV4, type Credential } from './sigv4.ts';

/** Why a body was refused, named as S3 names it. */
export class ChunkedBodyError extends Error {
  constructor(readonly code: 'IncompleteBody' | 'SignatureDoesNotMatch' | 'InvalidRequest', message: string) {
    super(message);
  }
}

/** What verifies signed chunks: the request's signing scope and its own signature. */
export interface ChunkSigning {
  secret: string;
  credential: Credential;
  amzDate: string;
  seedSignature: string;
  /**
   * `STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER`: the trailing headers are signed too, in
   * `x-amz-trailer-signature`, chained from the last chunk's signature.
   */
  signedTrailer?: boolean;
}

/** The largest chunk accepted: a signed chunk is held whole until its signature is checked. */
export const MAX_CHUNK_BYTES = 16 * 1024 * 1024;
const MAX_LINE_BYTES = 4096;
const MAX_TRAILER_BYTES = 16 * 1024;
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** The string a chunk's signature signs. */
async function chunkStringToSign(s: ChunkSigning, previous: string, data: Uint8Array): Promise<string> {
  const scope = `${s.credential.date}/${s.credential.region}/${s.credential.service}/aws4_request`;
  return `AWS4-HMAC-SHA256-PAYLOAD\n${s.amzDate}\n${scope}\n${previous}\n${EMPTY_SHA256}\n${await sha256Hex(data)}`;
}

/** A chunk's signature, hex. */
export async function chunkSignature(s: ChunkSigning, previous: string, data: Uint8Array): Promise<string> {
  return signV4(s.secret, s.credential, await chunkStringToSign(s, previous, data));
}

/**
 * The trailer's signature, hex: over `name:value\n` for each trailing header (names lower-case,
 * sorted; the signature itself left out), chained from the final chunk's signature.
 */
export async function trailerSignature(s: ChunkSigning, previous: string, trailers: Headers): Promise<string> {
  let canonical = '';
  for (const [name, value] of trailers) if (name !== 'x-amz-trailer-signature') canonical += `${name}:${value}\n`;
  const scope = `${s.credential.date}/${s.credential.region}/${s.credential.service}/aws4_request`;
  return signV4(s.secret, s.credential, `AWS4-HMAC-SHA256-TRAILER\n${s.amzDate}\n${scope}\n${previous}\n${await sha256Hex(canonical)}`);
}

const CRLF = [13, 10];

/**
 * Decodes an aws-chunked body: the stream of its bytes, and its trailing headers once it has
 * ended. With `signing`, every chunk's signature is checked before its bytes go on (a chunk is
 * held whole for that; at most MAX_CHUNK_BYTES); without, bytes go on as they come and a chunk
 * signature, if any, is not read. A body that breaks the framing, ends early or fails a signature
 * errors the stream with a ChunkedBodyError.
 */
export function decodeAwsChunked(
  body: ReadableStream<Uint8Array>,
  signing?: ChunkSigning,
  /**
   * The most bytes the body may decode to, and the error for a chunk whose size would pass it:
   * thrown from its header, before a byte of it is read (a signed chunk is held whole).
   */
  limit?: { bytes: number; error: () => Error },
): { stream: ReadableStream<Uint8Array>; trailers: Promise<Headers> } {
  let settleTrailers!: (h: Headers) => void;
  let failTrailers!: (e: unknown) => void;
  const trailers = new Promise<Headers>((resolve, reject) => {
    settleTrailers = resolve;
    failTrailers = reject;
  });
  trailers.catch(() => {});
  const reader = body.getReader();
  let buffer: Uint8Array = new Uint8Array(0);
  let ended = false;

  /** More bytes into the buffer; false at the end of the body. */
  async function more(): Promise<boolean> {
    if (ended) return false;
    const { done, value } = await reader.read();
    if (done) {
      ended = true;
      return false;
    }
    if (buffer.byteLength === 0) buffer = value;
    else {
      const next = new Uint8Array(buffer.byteLength + value.byteLength);
      next.set(buffer);
      next.set(value, buffer.byteLength);
      buffer = next;
    }
    return true;
  }

  /** The next line, without its CRLF. */
  async function line(max: number): Promise<string> {
    for (;;) {
      for (let i = 0; i + 1 < buffer.byteLength; i++) {
        if (buffer[i] === CRLF[0] && buffer[i + 1] === CRLF[1]) {
          const text = new TextDecoder('utf-8', { fatal: false }).decode(buffer.subarray(0, i));
          buffer = buffer.subarray(i + 2);
          return text;
        }
      }
      if (buffer.byteLength > max) throw new ChunkedBodyError('InvalidRequest', 'An aws-chunked line is too long.');
      if (!(await more())) throw new ChunkedBodyError('IncompleteBody', 'The aws-chunked body ends in the middle of a line.');
    }
  }

  /** Exactly `n` bytes, copied once into their own array (never by growing the buffer). */
  async function take(n: number): Promise<Uint8Array> {
    const out = new Uint8Array(n);
    let at = Math.min(n, buffer.byteLength);
    out.set(buffer.subarray(0, at));
    buffer = buffer.subarray(at);
    while (at < n) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        throw new ChunkedBodyError('IncompleteBody', 'The aws-chunked body ends in the middle of a chunk.');
      }
      const k = Math.min(n - at, value.byteLength);
      out.set(value.subarray(0, k), at);
      at += k;
      buffer = value.subarray(k);
    }
    return out;
  }

  let previous = signing?.seedSignature ?? '';
  let left = 0; // unsigned: bytes of the current chunk not yet passed on
  let total = 0; // bytes the chunk headers so far have announced
  let done = false;

  async function header(): Promise<{ size: number; signature?: string }> {
    const text = await line(MAX_LINE_BYTES);
    const m = /^([0-9a-fA-F]{1,8})(?:;chunk-signature=([0-9a-f]{64}))?$/.exec(text);
    if (!m) throw new ChunkedBodyError('InvalidRequest', `"${text.slice(0, 80)}" is not an aws-chunked chunk header.`);
    const size = parseInt(m[1]!, 16);
    if (size > MAX_CHUNK_BYTES) throw new ChunkedBodyError('InvalidRequest', `An aws-chunked chunk may hold at most ${MAX_CHUNK_BYTES} bytes.`);
    return { size, ...(m[2] ? { signature: m[2] } : {}) };
  }

  async function verify(signature: string | undefined, data: Uint8Array): Promise<void> {
    if (!signing) return;
    if (signature === undefined) throw new ChunkedBodyError('SignatureDoesNotMatch', 'A chunk of a signed aws-chunked body has no signature.');
    const expected = await chunkSignature(signing, previous, data);
    if (expected !== signature) throw new ChunkedBodyError('SignatureDoesNotMatch', 'A chunk signature does not match the chunk: it was changed, reordered or signed with another key.');
    previous = signature;
  }

  async function endOfChunk(): Promise<void> {
    const crlf = await take(2);
    if (crlf[0] !== CRLF[0] || crlf[1] !== CRLF[1]) throw new ChunkedBodyError('InvalidRequest', 'An aws-chunked chunk is longer than its size says.');
  }

  async function readTrailers(): Promise<Headers> {
    const h = new Headers();
    let bytes = 0;
    for (;;) {
      if (buffer.byteLength === 0 && !(await more())) return h; // a body may end right after the last chunk
      const text = await line(MAX_TRAILER_BYTES);
      if (text === '') return h;
      bytes += text.length;
      const at = text.indexOf(':');
      if (at <= 0 || bytes > MAX_TRAILER_BYTES) throw new ChunkedBodyError('InvalidRequest', 'The aws-chunked trailers cannot be read.');
      try {
        h.append(text.slice(0, at).trim(), text.slice(at + 1).trim());
      } catch {
        throw new ChunkedBodyError('InvalidRequest', 'The aws-chunked trailers cannot be read.');
      }
    }
  }

  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        for (;;) {
          if (done) return controller.close();
          if (left > 0) {
            if (buffer.byteLength === 0 && !(await more())) throw new ChunkedBodyError('IncompleteBody', 'The aws-chunked body ends in the middle of a chunk.');
            const n = Math.min(left, buffer.byteLength);
            const out = buffer.slice(0, n);
            buffer = buffer.subarray(n);
            left -= n;
            if (left === 0) await endOfChunk();
            return controller.enqueue(out);
          }
          const { size, signature } = await header();
          total += size;
          if (limit && total > limit.bytes) throw limit.error();
          if (size === 0) {
            await verify(signature, new Uint8Array(0));
            const t = await readTrailers();
            if (buffer.byteLength > 0 || (await more())) throw new ChunkedBodyError('InvalidRequest', 'The aws-chunked body goes on after its end.');
            if (signing?.signedTrailer) {
              const given = t.get('x-amz-trailer-signature');
              if (given === null) throw new ChunkedBodyError('SignatureDoesNotMatch', 'The signed aws-chunked body has no x-amz-trailer-signature.');
              if (given !== (await trailerSignature(signing, previous, t))) {
                throw new ChunkedBodyError('SignatureDoesNotMatch', 'The trailer signature does not match the trailing headers: they were changed, or signed with another key.');
              }
            }
            done = true;
            settleTrailers(t);
            continue;
          }
          if (signing) {
            const data = await take(size);
            await verify(signature, data);
            await endOfChunk();
            return controller.enqueue(data);
          }
          left = size;
        }
      } catch (e) {
        failTrailers(e);
        await reader.cancel().catch(() => {});
        throw e;
      }
    },
    async cancel(reason) {
      failTrailers(reason);
      await reader.cancel(reason).catch(() => {});
    },
  }, { highWaterMark: 0 });
  return { stream, trailers };
}
