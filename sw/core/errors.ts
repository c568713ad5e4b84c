// The one place where failures become responses. Operations throw SvcError; the store and the XML
// parser throw their own errors, which asSvcError() names here; handler.ts turns the result (and
// anything unexpected, as InternalError) into the XML error body of docs/protocol.md, "Errors".
import { XmlError, xmlResponse } from './xml.ts';
import { NotFetchedError, StoreLimitError, StoreQuotaError, StoreUnavailableError } from '../store/errors.ts';
import { ChunkedBodyError } from '../../protocol/aws-chunked.ts';

const STATUS = {
  AccessDenied: 403,
  RequestTimeTooSkewed: 403,
  QuotaExceeded: 403,
  SignatureDoesNotMatch: 403,
  InvalidAccessKeyId: 403,
  AccessForbidden: 403,
  NoSuchBucket: 404,
  NoSuchKey: 404,
  NoSuchUpload: 404,
  NoSuchVersion: 404,
  NoSuchAccount: 404,
  NoSuchCORSConfiguration: 404,
  InvalidArgument: 400,
  InvalidBucketName: 400,
  InvalidDigest: 400,
  BadDigest: 400,
  IncompleteBody: 400,
  EntityTooLarge: 400,
  EntityTooSmall: 400,
  KeyTooLong: 400,
  MalformedXML: 400,
  InvalidPart: 400,
  InvalidPartOrder: 400,
  MalformedArchive: 400,
  InvalidRequest: 400,
  BadRequest: 400,
  MalformedPOSTRequest: 400,
  MaxPostPreDataLengthExceeded: 400,
  RequestTimeout: 400,
  MalformedTrailerError: 400,
  InvalidPolicyDocument: 400,
  AuthorizationHeaderMalformed: 400,
  AuthorizationQueryParametersError: 400,
  XAmzContentSHA256Mismatch: 400,
  PreconditionFailed: 412,
  BucketAlreadyOwnedByYou: 409,
  NotImplemented: 501,
  MissingContentLength: 411,
  MethodNotAllowed: 405,
  BucketAlreadyExists: 409,
  BucketNotEmpty: 409,
  InvalidBucketState: 409,
  InvalidObjectState: 403,
  AccountNotEmpty: 409,
  ImportConflict: 409,
  InvalidRange: 416,
  InternalError: 500,
  ServiceUnavailable: 503,
} as const;

export type ErrorCode = keyof typeof STATUS;

const DEFAULT_MESSAGE: Partial<Record<ErrorCode, string>> = {
  NoSuchBucket: 'The specified bucket does not exist.',
  NoSuchKey: 'The specified key does not exist.',
  NoSuchUpload: 'The specified multipart upload does not exist.',
  NoSuchVersion: 'The specified version does not exist.',
  NoSuchCORSConfiguration: 'The CORS configuration does not exist.',
  MalformedXML: 'The XML you provided was not well-formed or did not validate.',
  MissingContentLength: 'You must provide the Content-Length HTTP header.',
  MethodNotAllowed: 'The specified method is not allowed against this resource.',
  InvalidRange: 'The requested range is not satisfiable.',
  InternalError: 'We encountered an internal error. Please try again.',
  QuotaExceeded: 'The storage quota would be exceeded.',
  PreconditionFailed: 'At least one of the pre-conditions you specified did not hold.',
  NotImplemented: 'A header or sub-resource you provided implies functionality that is not implemented.',
};

export class SvcError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    /** Extra response headers, e.g. Content-Range on InvalidRange. */
    readonly headers: Record<string, string> = {},
    /** Extra elements of the error document, after Message (S3's StringToSign, CanonicalRequest, …). */
    readonly fields: Record<string, string> = {},
  ) {
    super(message ?? DEFAULT_MESSAGE[code] ?? code);
    this.status = STATUS[code];
  }
}

export const fail = (code: ErrorCode, message?: string): never => {
  throw new SvcError(code, message);
};

/** What the client is told about a failure: undefined for one nobody expected (an InternalError). */
export function asSvcError(e: unknown): SvcError | undefined {
  if (e instanceof SvcError) return e;
  if (e instanceof XmlError) return new SvcError('MalformedXML', e.detail);
  if (e instanceof StoreQuotaError) return new SvcError('QuotaExceeded', e.message);
  if (e instanceof StoreLimitError) return new SvcError('InvalidArgument', e.message);
  if (e instanceof StoreUnavailableError) return new SvcError('ServiceUnavailable', e.message);
  // S3 answers the same for an archived object not restored: the bytes are elsewhere.
  if (e instanceof NotFetchedError) return new SvcError('InvalidObjectState', `${e.message} GET it first (a GET fetches it), then try again.`);
  if (e instanceof ChunkedBodyError) return new SvcError(e.code, e.message);
  return undefined;
}

export function errorResponse(err: SvcError, resource: string, requestId: string, method: string): Response {
  const headers = new Headers(err.headers);
  // HEAD never carries a body; the status alone answers it.
  if (method === 'HEAD') return new Response(null, { status: err.status, headers });
  return xmlResponse(
    { Error: { Code: err.code, Message: err.message, ...err.fields, Resource: resource, RequestId: requestId } },
    err.status,
    headers,
  );
}
