// The three dialects the service speaks (docs/protocol.md, "Dialects"): one set of operations over
// one store, and per dialect the edge — its header prefix, its signature scheme, and where its
// semantics differ from the others, the rule it follows, written here as data for the operations
// to read. SVC is the seed's own dialect; NOS is the same protocol with NetEase's own names; S3 is
// Amazon's, what the AWS SDKs, boto3, the AWS CLI and every S3 tool speak.
import type { DialectName, Endpoints } from '../../protocol/instance.ts';

export type { DialectName, Endpoints };
export { DEFAULT_ENDPOINTS } from '../../protocol/instance.ts';

export const DIALECT_NAMES: readonly DialectName[] = ['svc', 'nos', 's3'];

export interface Dialect {
  readonly name: DialectName;
  /** Prefix of the dialect's own headers: `x-svc-acl`, `x-nos-acl`, `x-amz-acl`. */
  readonly prefix: string;
  /** S3's namespace on every XML document the dialect writes; absent: none. */
  readonly xmlns?: string;
  /** DELETE of a key that holds nothing: SVC and NOS answer 404 NoSuchKey, S3 204 as for any delete. */
  readonly deleteMissing: 'NoSuchKey' | 'noContent';
  /** Listings' page size when the request names none. */
  readonly maxKeysDefault: number;
  /** The least size of a part that is not the last. */
  readonly partMinBytes: number;
  /** A completed upload's ETag: SVC's (MD5 of the hex ETags joined) or S3's (MD5 of the binary MD5s, then `-{parts}`). */
  readonly multipartEtag: 'svc' | 's3';
  /** An object read names its last path segment in `Content-Disposition: inline` unless it has its own (SVC, NOS). */
  readonly inlineName: boolean;
  /** If-Match, If-None-Match and If-Unmodified-Since are honoured beside If-Modified-Since, and If-Match and If-None-Match on writes (S3). */
  readonly allConditionals: boolean;
  /** A sub-resource this service does not have: 405 (SVC, NOS) or S3's 501 NotImplemented. */
  readonly unsupported: 'MethodNotAllowed' | 'NotImplemented';
  /**
   * Whether a page of versions, uploads or parts that lists none (a maximum of 0) says it is
   * truncated when more exist (SVC, NOS); S3 says not, as for objects: a client following it would
   * ask for the same empty page forever.
   */
  readonly emptyPageTruncated: boolean;
}

const KiB = 1024;

const svcLike = {
  deleteMissing: 'NoSuchKey',
  maxKeysDefault: 100,
  partMinBytes: 16 * KiB,
  multipartEtag: 'svc',
  inlineName: true,
  allConditionals: false,
  unsupported: 'MethodNotAllowed',
  emptyPageTruncated: true,
} as const;

export const DIALECTS: Record<DialectName, Dialect> = {
  svc: { name: 'svc', prefix: 'x-svc-', ...svcLike },
  nos: { name: 'nos', prefix: 'x-nos-', ...svcLike },
  s3: {
    name: 's3',
    prefix: 'x-amz-',
    xmlns: 'http://s3.amazonaws.com/doc/2006-03-01/',
    deleteMissing: 'noContent',
    maxKeysDefault: 1000,
    partMinBytes: 5 * KiB * KiB,
    multipartEtag: 's3',
    inlineName: false,
    allConditionals: true,
    unsupported: 'NotImplemented',
    emptyPageTruncated: false,
  },
};

/**
 * The dialect a request's signature is written in, whatever host it was sent to: an
 * Authorization header's scheme, or a presigned URL's parameters; a form POST carries S3's
 * signature in its body (POST Object). Undefined for an anonymous request.
 */
export function signatureDialect(headers: Headers, query: URLSearchParams, method = 'GET'): DialectName | undefined {
  if (method === 'POST' && /^multipart\/form-data\s*;/i.test(headers.get('content-type') ?? '') && !headers.has('authorization')) return 's3';
  const scheme = /^\s*(\S+)/.exec(headers.get('authorization') ?? '')?.[1];
  if (scheme === 'AWS4-HMAC-SHA256') return 's3';
  if (scheme === 'NOS') return 'nos';
  if (scheme === 'SVC') return 'svc';
  if (query.has('X-Amz-Algorithm') || query.has('X-Amz-Signature')) return 's3';
  if (query.has('NOSAccessKeyId')) return 'nos';
  if (query.has('SVCAccessKeyId')) return 'svc';
  return undefined;
}
