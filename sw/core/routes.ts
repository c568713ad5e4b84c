// The dispatch table: (method, target, sub-resource[, header]) → operation. "Where is PUT Object?"
// is answered here in one step.
import { fail } from './errors.ts';
import * as accounts from './ops/accounts.ts';
import * as archive from './ops/archive.ts';
import * as buckets from './ops/buckets.ts';
import * as multipart from './ops/multipart.ts';
import * as objects from './ops/objects.ts';
import type { Target } from '../../protocol/address.ts';
import type { Operation } from './context.ts';

/** Query names that select an operation, in the order they are looked for. */
const SELECTORS = ['export', 'import', 'uploadId', 'uploads', 'delete', 'acl', 'versioning', 'versions', 'meta', 'accounts', 'account'] as const;

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
  /** The row applies only when this request header is present. */
  header?: string;
  name: string;
  op: Operation;
}

// Rows with a `header` come before the row without, for the same method, target and sub.
export const routes: Route[] = [
  { method: 'GET', target: 'service', sub: null, name: 'ListBuckets', op: buckets.listBuckets },
  { method: 'GET', target: 'service', sub: 'accounts', name: 'ListAccounts', op: accounts.listAccounts },
  { method: 'PUT', target: 'service', sub: 'account', name: 'PutAccount', op: accounts.putAccount },
  { method: 'DELETE', target: 'service', sub: 'account', name: 'DeleteAccount', op: accounts.deleteAccount },
  { method: 'GET', target: 'service', sub: 'export', name: 'ExportArchive', op: archive.exportArchive },
  { method: 'POST', target: 'service', sub: 'import', name: 'ImportArchive', op: archive.importArchive },

  { method: 'PUT', target: 'bucket', sub: null, name: 'CreateBucket', op: buckets.createBucket },
  { method: 'DELETE', target: 'bucket', sub: null, name: 'DeleteBucket', op: buckets.deleteBucket },
  { method: 'HEAD', target: 'bucket', sub: null, name: 'HeadBucket', op: buckets.headBucket },
  { method: 'GET', target: 'bucket', sub: null, name: 'ListObjects', op: buckets.listObjects },
  { method: 'GET', target: 'bucket', sub: 'acl', name: 'GetBucketAcl', op: buckets.getBucketAcl },
  { method: 'PUT', target: 'bucket', sub: 'acl', name: 'PutBucketAcl', op: buckets.putBucketAcl },
  { method: 'POST', target: 'bucket', sub: 'delete', name: 'DeleteObjects', op: objects.deleteObjects },
  { method: 'GET', target: 'bucket', sub: 'uploads', name: 'ListMultipartUploads', op: multipart.listMultipartUploads },
  { method: 'GET', target: 'bucket', sub: 'versioning', name: 'GetBucketVersioning', op: buckets.getBucketVersioning },
  { method: 'PUT', target: 'bucket', sub: 'versioning', name: 'PutBucketVersioning', op: buckets.putBucketVersioning },
  { method: 'GET', target: 'bucket', sub: 'versions', name: 'ListObjectVersions', op: buckets.listObjectVersions },

  { method: 'GET', target: 'object', sub: null, name: 'GetObject', op: objects.getObject },
  { method: 'HEAD', target: 'object', sub: null, name: 'HeadObject', op: objects.headObject },
  { method: 'PUT', target: 'object', sub: null, header: 'x-svc-copy-source', name: 'CopyObject', op: objects.copyObject },
  { method: 'PUT', target: 'object', sub: null, header: 'x-svc-move-source', name: 'MoveObject', op: objects.moveObject },
  { method: 'PUT', target: 'object', sub: null, name: 'PutObject', op: objects.putObject },
  { method: 'DELETE', target: 'object', sub: null, name: 'DeleteObject', op: objects.deleteObject },
  { method: 'PUT', target: 'object', sub: 'meta', name: 'PutObjectMeta', op: objects.putObjectMeta },
  { method: 'POST', target: 'object', sub: 'uploads', name: 'CreateMultipartUpload', op: multipart.createMultipartUpload },
  { method: 'PUT', target: 'object', sub: 'uploadId', name: 'UploadPart', op: multipart.uploadPart },
  { method: 'POST', target: 'object', sub: 'uploadId', name: 'CompleteMultipartUpload', op: multipart.completeMultipartUpload },
  { method: 'DELETE', target: 'object', sub: 'uploadId', name: 'AbortMultipartUpload', op: multipart.abortMultipartUpload },
  { method: 'GET', target: 'object', sub: 'uploadId', name: 'ListParts', op: multipart.listParts },
];

/** The route for a request; 405 MethodNotAllowed when the table has none. */
export function findRoute(method: string, target: Target, query: URLSearchParams, headers: Headers): Route {
  if (FOREIGN.some((name) => query.has(name))) {
    return fail('MethodNotAllowed', 'This sub-resource is not supported by this service.');
  }
  const sub: Sub = SELECTORS.find((name) => query.has(name)) ?? null;
  const route = routes.find((r) =>
    r.method === method && r.target === target.kind && r.sub === sub && (r.header === undefined || headers.has(r.header)));
  return route ?? fail('MethodNotAllowed', `${method} is not allowed on this resource.`);
}
