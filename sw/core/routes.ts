// The dispatch table: (method, target, sub-resource[, header]) → operation. "Where is PUT Object?"
// is answered here in one step.
import { fail } from './errors.ts';
import * as accounts from './ops/accounts.ts';
import * as archive from './ops/archive.ts';
import * as buckets from './ops/buckets.ts';
import * as multipart from './ops/multipart.ts';
import * as objects from './ops/objects.ts';
import * as s3 from './ops/s3.ts';
import type { Target } from '../../protocol/address.ts';
import type { Operation } from './context.ts';
import type { Dialect, DialectName } from './dialect.ts';

/** Query names that select an operation, in the order they are looked for. */
const SELECTORS = [
  'export', 'import', 'uploadId', 'uploads', 'delete', 'acl', 'versioning', 'versions', 'meta', 'accounts', 'account',
  'location', 'list-type', 'cors', 'attributes',
] as const;

/** Sub-resources clients know from other object stores. Asking for them is never a plain GET/PUT. */
const FOREIGN = [
  'torrent', 'tagging', 'lifecycle', 'cors', 'policy', 'policyStatus', 'website', 'logging', 'notification',
  'replication', 'encryption', 'retention', 'legal-hold', 'object-lock', 'restore', 'select', 'attributes',
  'requestPayment', 'analytics', 'inventory', 'metrics', 'accelerate', 'ownershipControls', 'publicAccessBlock',
  'intelligent-tiering', 'location', 'list-type',
];

type Sub = (typeof SELECTORS)[number] | null;

export interface Route {
  method: string;
  target: Target['kind'];
  sub: Sub;
  /** The row applies only when this request header is present; `{own}` is the dialect's prefix (`x-svc-`, `x-amz-`). */
  header?: string;
  /** The row is only these dialects'; absent: every dialect's. */
  only?: DialectName[];
  name: string;
  op: Operation;
}

/** The SVC and NOS dialects (the same protocol under two names). */
const NATIVE: DialectName[] = ['svc', 'nos'];

// Rows with a `header` come before the row without, for the same method, target and sub.
export const routes: Route[] = [
  { method: 'GET', target: 'service', sub: null, name: 'ListBuckets', op: buckets.listBuckets },
  { method: 'GET', target: 'service', sub: 'accounts', only: NATIVE, name: 'ListAccounts', op: accounts.listAccounts },
  { method: 'PUT', target: 'service', sub: 'account', only: NATIVE, name: 'PutAccount', op: accounts.putAccount },
  { method: 'DELETE', target: 'service', sub: 'account', only: NATIVE, name: 'DeleteAccount', op: accounts.deleteAccount },
  { method: 'GET', target: 'service', sub: 'export', only: NATIVE, name: 'ExportArchive', op: archive.exportArchive },
  { method: 'POST', target: 'service', sub: 'import', only: NATIVE, name: 'ImportArchive', op: archive.importArchive },

  { method: 'PUT', target: 'bucket', sub: null, name: 'CreateBucket', op: buckets.createBucket },
  { method: 'DELETE', target: 'bucket', sub: null, name: 'DeleteBucket', op: buckets.deleteBucket },
  { method: 'HEAD', target: 'bucket', sub: null, name: 'HeadBucket', op: buckets.headBucket },
  { method: 'GET', target: 'bucket', sub: null, name: 'ListObjects', op: buckets.listObjects },
  { method: 'GET', target: 'bucket', sub: 'list-type', only: ['s3'], name: 'ListObjectsV2', op: s3.listObjectsV2 },
  // A form upload carries its own S3 signature (a policy), whichever host it was posted to (dialect.ts).
  { method: 'POST', target: 'bucket', sub: null, only: ['s3'], name: 'PostObject', op: s3.postObject },
  { method: 'GET', target: 'bucket', sub: 'cors', only: ['s3'], name: 'GetBucketCors', op: s3.getBucketCors },
  { method: 'PUT', target: 'bucket', sub: 'cors', only: ['s3'], name: 'PutBucketCors', op: s3.putBucketCors },
  { method: 'DELETE', target: 'bucket', sub: 'cors', only: ['s3'], name: 'DeleteBucketCors', op: s3.deleteBucketCors },
  { method: 'GET', target: 'bucket', sub: 'location', only: ['s3'], name: 'GetBucketLocation', op: s3.getBucketLocation },
  { method: 'GET', target: 'bucket', sub: 'acl', only: NATIVE, name: 'GetBucketAcl', op: buckets.getBucketAcl },
  { method: 'GET', target: 'bucket', sub: 'acl', only: ['s3'], name: 'GetBucketAcl', op: s3.getBucketAcl },
  { method: 'PUT', target: 'bucket', sub: 'acl', name: 'PutBucketAcl', op: buckets.putBucketAcl },
  { method: 'POST', target: 'bucket', sub: 'delete', name: 'DeleteObjects', op: objects.deleteObjects },
  { method: 'GET', target: 'bucket', sub: 'uploads', name: 'ListMultipartUploads', op: multipart.listMultipartUploads },
  { method: 'GET', target: 'bucket', sub: 'versioning', name: 'GetBucketVersioning', op: buckets.getBucketVersioning },
  { method: 'PUT', target: 'bucket', sub: 'versioning', name: 'PutBucketVersioning', op: buckets.putBucketVersioning },
  { method: 'GET', target: 'bucket', sub: 'versions', name: 'ListObjectVersions', op: buckets.listObjectVersions },

  { method: 'GET', target: 'object', sub: null, name: 'GetObject', op: objects.getObject },
  { method: 'GET', target: 'object', sub: 'acl', only: ['s3'], name: 'GetObjectAcl', op: s3.getObjectAcl },
  { method: 'PUT', target: 'object', sub: 'acl', only: ['s3'], name: 'PutObjectAcl', op: s3.putObjectAcl },
  { method: 'GET', target: 'object', sub: 'attributes', only: ['s3'], name: 'GetObjectAttributes', op: s3.getObjectAttributes },
  { method: 'HEAD', target: 'object', sub: null, name: 'HeadObject', op: objects.headObject },
  { method: 'PUT', target: 'object', sub: null, header: '{own}copy-source', name: 'CopyObject', op: objects.copyObject },
  { method: 'PUT', target: 'object', sub: null, header: '{own}move-source', only: NATIVE, name: 'MoveObject', op: objects.moveObject },
  { method: 'PUT', target: 'object', sub: null, name: 'PutObject', op: objects.putObject },
  { method: 'DELETE', target: 'object', sub: null, name: 'DeleteObject', op: objects.deleteObject },
  { method: 'PUT', target: 'object', sub: 'meta', only: NATIVE, name: 'PutObjectMeta', op: objects.putObjectMeta },
  { method: 'POST', target: 'object', sub: 'uploads', name: 'CreateMultipartUpload', op: multipart.createMultipartUpload },
  { method: 'PUT', target: 'object', sub: 'uploadId', header: '{own}copy-source', only: ['s3'], name: 'UploadPartCopy', op: s3.uploadPartCopy },
  { method: 'PUT', target: 'object', sub: 'uploadId', name: 'UploadPart', op: multipart.uploadPart },
  { method: 'POST', target: 'object', sub: 'uploadId', name: 'CompleteMultipartUpload', op: multipart.completeMultipartUpload },
  { method: 'DELETE', target: 'object', sub: 'uploadId', name: 'AbortMultipartUpload', op: multipart.abortMultipartUpload },
  { method: 'GET', target: 'object', sub: 'uploadId', name: 'ListParts', op: multipart.listParts },
];

/**
 * The route for a request in its dialect; none: 405 MethodNotAllowed, or in S3 for a
 * sub-resource S3 has and this service does not, 501 NotImplemented (docs/protocol.md lists them).
 */
export function findRoute(method: string, target: Target, query: URLSearchParams, headers: Headers, dialect: Dialect): Route {
  const ours = (r: Route) => r.only === undefined || r.only.includes(dialect.name);
  const sub: Sub = SELECTORS.find((name) => query.has(name) && routes.some((r) => r.sub === name && ours(r))) ?? null;
  const foreign = FOREIGN.find((name) => query.has(name) && name !== sub);
  if (foreign !== undefined) {
    return fail(dialect.unsupported, `The sub-resource "${foreign}" is not supported by this service.`);
  }
  const route = routes.find((r) => r.method === method && r.target === target.kind && r.sub === sub && ours(r)
    && (r.header === undefined || headers.has(r.header.replace('{own}', dialect.prefix))));
  return route ?? fail('MethodNotAllowed', `${method} is not allowed on this resource.`);
}
