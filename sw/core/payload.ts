// What S3 says of a request's body beyond its bytes, checked as the body streams through
// readBody() (body.ts): its framing (aws-chunked, chunk signatures), the SHA-256 the signature
// covers (`x-amz-content-sha256`), and a flexible checksum (`x-amz-checksum-*`, in a header or in
// the aws-chunked trailer). SVC and NOS requests have none of these: their body is only Content-MD5's.
import { SvcError } from './errors.ts';
import { decodeAwsChunked, type ChunkSigning } from '../../protocol/aws-chunked.ts';
import {
  CHECKSUM_ALGORITHMS, checksumAlgorithmOf, checksumHeader, createChecksum, createSha256, type ChecksumAlgorithm,
} from '../../protocol/checksums.ts';

export const STREAMING_UNSIGNED = 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';
export const STREAMING_SIGNED = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD';
export const STREAMING_SIGNED_TRAILER = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER';

/** How the body of an S3 request is to be read and checked; made by auth-s3.ts once the signature holds. */
export interface Payload {
  /** Hex SHA-256 the body must have (the signed `x-amz-content-sha256`); absent for UNSIGNED-PAYLOAD and streaming forms. */
  sha256?: string;
  /** The body is aws-chunked: decoded here, its chunks' signatures checked when `signing` is given. */
  chunked?: { signing?: ChunkSigning };
}

/** A body's flexible checksum, as S3 returns it: the header and its base64 value. */
export interface ChecksumValue {
  algorithm: ChecksumAlgorithm;
  header: string;
  value: string;
}

export interface PayloadCheck {
  /** The stream of the body's own bytes (decoded from aws-chunked), refused with `limit.error` past `limit.bytes`. */
  stream(raw: ReadableStream<Uint8Array>, limit: { bytes: number; error: () => Error }): ReadableStream<Uint8Array>;
  /** Whether the raw body is the body itself (not framed): a Blob of it may be kept as is. */
  readonly plain: boolean;
  /** The body's declared length: `x-amz-decoded-content-length` for a framed body. */
  declaredLength(headers: Headers): string | null;
  update(bytes: Uint8Array): void;
  /** Checks the digests against what the request said; the checksum to answer with, if any. */
  finish(): Promise<ChecksumValue | undefined>;
}

/**
 * The checksum a request asks for: the algorithm its `x-amz-checksum-{algorithm}` header or
 * `x-amz-trailer` names, and the value when it came in a header.
 */
function checksumRequest(headers: Headers): { algorithm: ChecksumAlgorithm; value?: string; inTrailer: boolean } | undefined {
  const trailer = headers.get('x-amz-trailer')?.trim().toLowerCase();
  const given = CHECKSUM_ALGORITHMS.filter((a) => headers.has(checksumHeader(a)));
  // One checksum a body: in a header or in the trailer, never both (nor two headers).
  if (given.length + (trailer ? 1 : 0) > 1) {
    throw new SvcError('InvalidRequest', 'Expecting a single x-amz-checksum- header. Multiple checksum types are not allowed.');
  }
  if (trailer) {
    const algorithm = CHECKSUM_ALGORITHMS.find((a) => checksumHeader(a) === trailer);
    if (!algorithm) throw new SvcError('InvalidRequest', `The trailer ${trailer} is not a checksum this service knows (${CHECKSUM_ALGORITHMS.join(', ')}).`);
    return { algorithm, inTrailer: true };
  }
  if (given.length === 1) return { algorithm: given[0]!, value: headers.get(checksumHeader(given[0]!))!.trim(), inTrailer: false };
  // Named but not sent: S3 computes it and answers with it.
  const named = checksumAlgorithmOf(headers.get('x-amz-sdk-checksum-algorithm') ?? headers.get('x-amz-checksum-algorithm'));
  return named ? { algorithm: named, inTrailer: false } : undefined;
}

/** The checks of an S3 request's body; undefined for a dialect without them. */
export async function payloadCheck(payload: Payload | undefined, headers: Headers): Promise<PayloadCheck | undefined> {
  if (!payload) return undefined;
  const asked = checksumRequest(headers);
  const checksum = asked ? await createChecksum(asked.algorithm) : undefined;
  const sha256 = payload.sha256 !== undefined ? await createSha256() : undefined;
  let trailers: Promise<Headers> | undefined;
  return {
    plain: !payload.chunked,
    stream(raw, limit) {
      if (!payload.chunked) return raw;
      const decoded = decodeAwsChunked(raw, payload.chunked.signing, limit);
      trailers = decoded.trailers;
      return decoded.stream;
    },
    declaredLength(h) {
      if (!payload.chunked) return h.get('content-length');
      // Not a length: as good as none (S3's 411 MissingContentLength).
      const decoded = h.get('x-amz-decoded-content-length');
      return decoded !== null && /^\d{1,16}$/.test(decoded.trim()) ? decoded : null;
    },
    update(bytes) {
      sha256?.update(bytes);
      checksum?.update(bytes);
    },
    async finish() {
      if (sha256 && (await sha256.digest()) !== payload.sha256) {
        throw new SvcError('XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed.");
      }
      if (!asked || !checksum) return undefined;
      const computed = await checksum.digest();
      const header = checksumHeader(asked.algorithm);
      let expected = asked.value;
      if (asked.inTrailer) {
        expected = (await (trailers ?? Promise.resolve(new Headers()))).get(header)?.trim();
        if (expected === undefined) throw new SvcError('MalformedTrailerError', `The body names the trailer ${header} but does not carry it.`);
      }
      if (expected !== undefined && expected !== computed) {
        throw new SvcError('BadDigest', `The ${asked.algorithm} you specified did not match the calculated checksum.`);
      }
      return { algorithm: asked.algorithm, header, value: computed };
    },
  };
}
