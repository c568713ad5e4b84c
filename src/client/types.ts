// The client's public types: what an application sees of createClient().

/** What {@link createClient} needs: where the service is, and whose credentials sign the requests. */
export interface ClientOptions {
  /** Service URL, e.g. `http://svc.localhost` (the default: the worker) or `http://127.0.0.1:9000` (`swbucket serve`). */
  endpoint?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /**
   * Address buckets as `{endpoint}/{bucket}/{key}` rather than `{bucket}.{endpoint}/{key}`. Default:
   * true when the endpoint's host is an IP address or `localhost` (e.g. `swbucket serve` at
   * http://127.0.0.1:9000), false otherwise (the worker's `svc.localhost`).
   */
  pathStyle?: boolean;
  /**
   * The dialect to speak: 'svc' (default), swbucket's own; 'nos', NetEase NOS's (`NOS` signatures,
   * `x-nos-` headers), for NOS itself or swbucket's NOS endpoint. The account and archive calls
   * are swbucket's only.
   */
  dialect?: ClientDialect;
}

/** The dialects swbucket/client speaks: swbucket's own (SVC), or NetEase NOS's (the same protocol under NOS's names). */
export type ClientDialect = 'svc' | 'nos';

/** What can be stored: a Blob or File (kept as it is, with its type), bytes, or text (UTF-8). */
export type Body = Blob | BufferSource | string;
/** Who may read a bucket's objects: its owner only, or anyone. */
export type Acl = 'private' | 'public-read';

/** The headers stored with an object and sent back with it, and its user metadata. */
export interface ObjectHeadersInput {
  contentType?: string;
  contentEncoding?: string;
  cacheControl?: string;
  expires?: string;
  contentDisposition?: string;
  contentLanguage?: string;
  /** User metadata: sent as x-svc-meta-{name} (x-nos-meta-{name} in the NOS dialect). */
  metadata?: Record<string, string>;
}

/** Options of {@link Client.putObject}: the object's headers, checksum and cancelling. */
export interface PutObjectOptions extends ObjectHeadersInput {
  /** Compute and send Content-MD5 (in a worker) so the service verifies the bytes. Default true. */
  checksum?: boolean;
  signal?: AbortSignal;
}

/** What a write answers: the new object's ETag (hex MD5, unquoted), its version id in a versioned bucket, and the request id. */
export interface WriteResult {
  etag: string;
  versionId?: number;
  requestId: string | null;
}

/** An object's stored description, as GET and HEAD answer it. */
export interface ObjectInfo {
  etag: string;
  size: number;
  contentType: string;
  lastModified: Date;
  metadata: Record<string, string>;
  headers: Headers;
  versionId?: number;
  objectMd5?: string;
}

/** Options of {@link Client.getObject}. */
export interface GetObjectOptions {
  /** `bytes=a-b`, `bytes=a-` or `bytes=-n`; or a range object. */
  range?: string | { start: number; end?: number } | { suffix: number };
  ifModifiedSince?: Date;
  versionId?: number;
  /** Download name (Content-Disposition: attachment). */
  download?: string;
  /** Key to answer with (status 404) when the object is missing. */
  ifNotFound?: string;
  signal?: AbortSignal;
}

/** What {@link Client.getObject} answers: the object's description and the response with its bytes. */
export interface GetObjectResult extends ObjectInfo {
  status: number;
  /** The response, body unread: use `.blob()` for large objects (much faster than arrayBuffer). */
  response: Response;
  contentRange: string | null;
  notModified: boolean;
}

/** Options of {@link Client.listObjects}. */
export interface ListObjectsOptions {
  /** Only keys that start with this. */
  prefix?: string;
  /** Groups keys by what comes before this after the prefix (usually `/`): each group is one common prefix, as a folder. */
  delimiter?: string;
  /** Start after this key (a page's `nextMarker`). */
  marker?: string;
  /** At most this many keys and common prefixes, 0–1000. Default 1000 (the service itself answers 100 when a request does not say). */
  maxKeys?: number;
}

/** One key of a listing. */
export interface ObjectSummary {
  key: string;
  lastModified: Date;
  etag: string;
  size: number;
  storageClass: string;
}

/** One page of a listing: `objects` and, with a delimiter, `commonPrefixes`. */
export interface ListObjectsPage {
  objects: ObjectSummary[];
  commonPrefixes: string[];
  isTruncated: boolean;
  nextMarker?: string;
}

/** One version of a key, in a versioned bucket's listing. */
export interface VersionSummary {
  key: string;
  versionId: string;
  isLatest: boolean;
  lastModified: Date;
  etag: string;
  size: number;
}

/** One part an upload has received. */
export interface PartSummary {
  partNumber: number;
  etag: string;
  size: number;
  lastModified: Date;
}

/** One multipart upload in progress. */
export interface UploadSummary {
  key: string;
  uploadId: string;
  initiated: Date;
}

/** An account, as the root sees it: usage and quota in bytes. */
export interface AccountSummary {
  accessKeyId: string;
  displayName: string;
  quotaBytes?: number;
  usedBytes: number;
  root: boolean;
}

/** What {@link Client.deleteObjects} answers, key by key. */
export interface DeleteObjectsResult {
  deleted: { key: string; versionId?: string }[];
  errors: { key: string; code: string; message: string }[];
}

/** Options of {@link Client.upload}. */
export interface UploadOptions extends ObjectHeadersInput {
  /** Bytes per part, and the size above which the upload is multipart. Default 8 MiB. */
  partSize?: number;
  /** Parts in flight at once. Default 4. */
  concurrency?: number;
  signal?: AbortSignal;
  /** Bytes sent so far; only ever grows, and ends at `total`. */
  onProgress?: (progress: { loaded: number; total: number }) => void;
  /**
   * Continue this key's unfinished upload: parts already there with the same size and MD5 are not
   * sent again. Content-Type and the standard headers are the ones given when that upload was
   * started (the service takes them at Initiate); metadata given now is applied at Complete.
   */
  resume?: boolean;
  /** When the signal aborts, also abort the upload on the service. Default true. */
  abortOnCancel?: boolean;
  /** Attempts after the first for a part that failed on the network or with a 5xx. Default 3. */
  retries?: number;
}

/** What {@link Client.upload} answers: the ETag, and how many parts it sent or found already sent. */
export interface UploadResult {
  etag: string;
  versionId?: number;
  /** Set for a multipart upload. */
  uploadId?: string;
  /** Parts sent by this call, and parts found already uploaded (resume). */
  partsSent: number;
  partsSkipped: number;
}

/** One page of {@link Client.listVersions}. */
export interface ListVersionsPage {
  versions: VersionSummary[];
  isTruncated: boolean;
  nextMarker?: string;
  nextVersionIdMarker?: string;
}

/** One page of {@link Client.listParts}. */
export interface ListPartsPage {
  parts: PartSummary[];
  isTruncated: boolean;
  nextPartNumberMarker: number;
}

/** One page of {@link Client.listMultipartUploads}. */
export interface ListUploadsPage {
  uploads: UploadSummary[];
  isTruncated: boolean;
  nextKeyMarker: string;
  nextUploadIdMarker: string;
}

/** What {@link Client.explainSignature} shows: the StringToSign, the Authorization header, the date and the URL. */
export interface SignatureExplanation {
  stringToSign: string;
  authorization: string;
  date: string;
  url: string;
}

/**
 * The object interface, one method per operation (docs/protocol.md has each one's wire format).
 * Every method resolves with the answer, or rejects with a {@link SvcClientError} carrying the
 * service's `code` (`NoSuchKey`, `AccessDenied`, …), `status`, `message` and `requestId` — the id the
 * console's request log shows. Buckets and keys are passed as they are; the client encodes them.
 *
 * @example
 * import { createClient } from 'swbucket/client';
 * const s3 = createClient({ accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
 * await s3.ensureBucket('photos');
 * await s3.putObject('photos', file.name, file); // a File keeps its type
 * const { response } = await s3.getObject('photos', file.name);
 * img.src = URL.createObjectURL(await response.blob());
 */
export interface Client {
  /** The endpoint's origin, e.g. `http://svc.localhost`. */
  readonly endpoint: string;
  /** The Authorization a request would carry, and the StringToSign behind it (for learning); null without credentials. */
  explainSignature(method: string, bucket: string, key: string, query?: Record<string, string>, headers?: Headers): Promise<SignatureExplanation | null>;
  /**
   * A URL anyone can use until it expires (default in 3,600 s): for links, `<img src>` and `<video>`.
   * Needs credentials. Signed in the page, no request is sent.
   *
   * @example
   * img.src = await s3.presign('photos', 'cat.png', { expiresIn: 600 });
   */
  presign(bucket: string, key: string, options?: { expiresIn?: number; method?: 'GET' | 'HEAD'; query?: Record<string, string> }): Promise<string>;

  /** The caller's buckets, by name, and the caller as owner. */
  listBuckets(): Promise<{ owner: { id: string; displayName: string }; buckets: { name: string; creationDate: Date }[] }>;
  /**
   * Creates a bucket owned by the caller; `acl: 'public-read'` lets anyone GET its objects. Names are
   * 3–63 characters of a-z, 0-9 and `-` (`InvalidBucketName`, said before anything is sent). A name
   * that exists, yours or not, is `BucketAlreadyExists` (409): {@link Client.ensureBucket} does not mind
   * your own.
   */
  createBucket(bucket: string, options?: { acl?: Acl }): Promise<void>;
  /**
   * Creates the bucket unless this account already has it, so an app can call it on every start
   * (React's StrictMode runs effects twice; two tabs start together). Resolves to whether it was
   * created; an existing bucket keeps its ACL. A bucket of that name owned by another account is
   * still an error (`BucketAlreadyExists`).
   *
   * @example
   * await s3.ensureBucket('photos');
   */
  ensureBucket(bucket: string, options?: { acl?: Acl }): Promise<{ created: boolean }>;
  /** Deletes an empty bucket (`BucketNotEmpty`, 409, while it holds objects, versions or uploads). */
  deleteBucket(bucket: string): Promise<void>;
  /** True when the bucket exists and is the caller's; false when it does not exist; `AccessDenied` when it is another's. */
  headBucket(bucket: string): Promise<boolean>;
  /** `private` or `public-read`. */
  getBucketAcl(bucket: string): Promise<Acl>;
  /** Makes the bucket's objects readable by anyone (`public-read`), or by the owner only (`private`). */
  putBucketAcl(bucket: string, acl: Acl): Promise<void>;
  /** `Enabled`, `Suspended`, or undefined for a bucket that was never versioned. */
  getBucketVersioning(bucket: string): Promise<'Enabled' | 'Suspended' | undefined>;
  /** Turns versioning on (each write keeps the object it replaces as a version) or suspends it (new writes replace without keeping). */
  putBucketVersioning(bucket: string, status: 'Enabled' | 'Suspended'): Promise<void>;

  /**
   * One page of the bucket's keys in ascending order: `objects` (not `contents`) and, with a
   * delimiter, `commonPrefixes` ("folders"). Up to 1,000 unless `maxKeys` says otherwise; when
   * `isTruncated`, pass `nextMarker` as `marker` for the next page, or use {@link Client.listAllObjects}.
   *
   * @example
   * const { objects, commonPrefixes } = await s3.listObjects('photos', { prefix: '2026/', delimiter: '/' });
   */
  listObjects(bucket: string, options?: ListObjectsOptions): Promise<ListObjectsPage>;
  /** Every page of a listing, following NextMarker. */
  listObjectsPages(bucket: string, options?: ListObjectsOptions): AsyncGenerator<ListObjectsPage>;
  /**
   * Every object (and, with a delimiter, every common prefix as `{ prefix }`), page after page.
   *
   * @example
   * for await (const o of s3.listAllObjects('photos')) if ('key' in o) console.log(o.key, o.size);
   */
  listAllObjects(bucket: string, options?: ListObjectsOptions): AsyncGenerator<ObjectSummary | { prefix: string }>;
  /** One page of every version of every key (current ones have `isLatest`), in a versioned bucket. */
  listVersions(bucket: string, options?: { prefix?: string; marker?: string; versionIdMarker?: string; maxKeys?: number }): Promise<ListVersionsPage>;
  /** Every version, page after page. */
  listAllVersions(bucket: string, options?: { prefix?: string; maxKeys?: number }): AsyncGenerator<VersionSummary>;

  /**
   * Stores `body` at `key` in one request, replacing what was there (up to 100 MiB; above that, or
   * for progress and resuming, use {@link Client.upload}). A Blob or File keeps its own type unless
   * `contentType` is given; a string or bytes are stored as `application/octet-stream` unless it is.
   * The client sends Content-MD5, so the service refuses bytes that changed on the way (`BadDigest`).
   * Resolves to the ETag (the MD5 of the bytes, in hex) and, in a versioned bucket, the version id.
   *
   * @example
   * await s3.putObject('notes', 'todo.json', JSON.stringify(todo), { contentType: 'application/json' });
   */
  putObject(bucket: string, key: string, body: Body, options?: PutObjectOptions): Promise<WriteResult>;
  /**
   * Reads an object: its headers at once, its bytes in `response` (unread: `await response.blob()`,
   * `.text()`, `.json()`, or `response.body` as a stream). `range` reads part of it (status 206);
   * `ifModifiedSince` answers `notModified` (304) without a body; `ifNotFound` names a key to answer
   * with (status 404) when this one is missing. A missing key is `NoSuchKey`.
   *
   * @example
   * const { response, contentType } = await s3.getObject('photos', 'cat.png');
   * const first = await s3.getObject('videos', 'a.mp4', { range: { start: 0, end: 1023 } });
   */
  getObject(bucket: string, key: string, options?: GetObjectOptions): Promise<GetObjectResult>;
  /**
   * An object's size, type, ETag, dates and metadata, without its bytes. A missing key rejects with
   * code `NotFound` (a HEAD answer has no body to say more).
   */
  headObject(bucket: string, key: string, options?: { versionId?: number; ifModifiedSince?: Date }): Promise<ObjectInfo & { notModified: boolean }>;
  /** Deletes the object (in a versioned bucket the current one; its history stays). A missing key is `NoSuchKey`. */
  deleteObject(bucket: string, key: string): Promise<void>;
  /**
   * Deletes up to 1,000 keys (or versions) in one request; each one's outcome is in `deleted` or
   * `errors`, so one failure does not reject the call. `quiet` leaves the successes out.
   */
  deleteObjects(bucket: string, objects: (string | { key: string; versionId?: number })[], options?: { quiet?: boolean }): Promise<DeleteObjectsResult>;
  /** Copies an object (its bytes, headers and metadata) to `bucket`/`key`; reading the source needs permission to read it. */
  copyObject(source: { bucket: string; key: string }, bucket: string, key: string): Promise<WriteResult>;
  /** Renames an object inside one bucket; the bytes are not copied. The source must exist (`NoSuchKey`). */
  moveObject(bucket: string, from: string, to: string): Promise<WriteResult>;
  /** Replaces the object's response headers and metadata; what is not given is cleared. The bytes and ETag stay. */
  putObjectMeta(bucket: string, key: string, meta: ObjectHeadersInput): Promise<void>;

  /**
   * Starts a multipart upload; resolves to its UploadId. The object's Content-Type and headers are
   * given here. Most apps want {@link Client.upload}, which does the whole flow.
   */
  createMultipartUpload(bucket: string, key: string, options?: ObjectHeadersInput): Promise<string>;
  /** Sends part `partNumber` (1–10,000; every part but the last at least 5 MiB); resolves to its ETag, needed to complete. */
  uploadPart(
    bucket: string, key: string, uploadId: string, partNumber: number, body: Body,
    options?: { checksum?: boolean; md5Hex?: string; signal?: AbortSignal },
  ): Promise<{ etag: string }>;
  /** Joins the listed parts, in ascending part order, into the object (its ETag is `{md5 of the parts' MD5s}-{count}`). */
  completeMultipartUpload(
    bucket: string, key: string, uploadId: string, parts: { partNumber: number; etag: string }[],
    options?: { objectMd5?: string; metadata?: Record<string, string> },
  ): Promise<WriteResult & { location: string }>;
  /** Abandons the upload and frees its parts. */
  abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void>;
  /** One page of the parts an upload has received. */
  listParts(bucket: string, key: string, uploadId: string, options?: { maxParts?: number; partNumberMarker?: number }): Promise<ListPartsPage>;
  /** Every part an upload has received, page after page. */
  listAllParts(bucket: string, key: string, uploadId: string): AsyncGenerator<PartSummary>;
  /** One page of the bucket's uploads in progress. */
  listMultipartUploads(
    bucket: string, options?: { prefix?: string; keyMarker?: string; uploadIdMarker?: string; maxUploads?: number },
  ): Promise<ListUploadsPage>;
  /** Every upload in progress, page after page. */
  listAllMultipartUploads(bucket: string, options?: { prefix?: string }): AsyncGenerator<UploadSummary>;
  /**
   * Stores a Blob or File of any size: one PUT below the part size (8 MiB), a multipart upload above
   * it, parts sent concurrently and retried, with progress, cancelling (`signal`) and resuming an
   * interrupted upload of the same key (`resume`). A File keeps its own type unless `contentType` is given.
   *
   * @example
   * await s3.upload('videos', file.name, file, { onProgress: ({ loaded, total }) => (bar.value = loaded / total) });
   */
  upload(bucket: string, key: string, body: Blob, options?: UploadOptions): Promise<UploadResult>;

  // The emulator's administration (root only): not part of the wire format a real service offers.
  /** Creates or changes an account (root only): its secret, name and quota in bytes. */
  putAccount(accessKeyId: string, options: { secretAccessKey?: string; displayName?: string; quotaBytes?: number }): Promise<void>;
  /** Deletes an account that owns nothing (root only; `AccountNotEmpty` while it does). */
  deleteAccount(accessKeyId: string): Promise<void>;
  /** Every account with its usage and quota (root only). */
  listAccounts(): Promise<AccountSummary[]>;
  /** A tar archive of the service's data, streamed (docs/protocol.md, "Archives"). Root only. */
  exportArchive(options?: ExportOptions): Promise<ArchiveDownload>;
  /** Puts an archive's accounts, buckets and objects back. Root only; all or nothing. */
  importArchive(archive: Blob | BufferSource | ReadableStream<Uint8Array>, options?: ImportOptions): Promise<ImportResult>;
}

/** Options of {@link Client.exportArchive}. */
export interface ExportOptions {
  /** Only these buckets (default: every bucket). */
  buckets?: string[];
  /** Every stored version, not only the current objects. */
  versions?: boolean;
  /** The accounts too, with their secrets. */
  accounts?: boolean;
  signal?: AbortSignal;
}

/** An export in progress: its bytes as a stream, and what it holds. */
export interface ArchiveDownload {
  /** The archive's bytes as they are written: read it once (save it, or pass it to importArchive). */
  body: ReadableStream<Uint8Array>;
  /** `swbucket-YYYYMMDD-HHMMSS.tar` */
  fileName: string;
  /** Objects (stored versions) in the archive. */
  objects: number;
  /** Their bytes; the archive adds 512 bytes per file and padding. For a progress bar. */
  objectBytes: number;
}

/** What an import does where data of the same name exists: refuse the whole import, skip the item, or replace it. */
export type ImportConflict = 'fail' | 'skip' | 'overwrite';

/** Options of {@link Client.importArchive}. */
export interface ImportOptions {
  /** What to do where the service already has the object or account: fail (default), skip or overwrite. */
  conflict?: ImportConflict;
  /**
   * Send Content-MD5 (computed in a worker), so the service refuses an archive changed on the way,
   * or a captured request sent again with another archive (`BadDigest`). Default true; a
   * ReadableStream is sent without one (its bytes cannot be hashed before they are sent).
   */
  checksum?: boolean;
  signal?: AbortSignal;
}

/** What an import restored. */
export interface ImportResult {
  accountsCreated: number;
  accountsUpdated: number;
  accountsSkipped: number;
  bucketsCreated: number;
  bucketsExisting: number;
  objectsRestored: number;
  objectsSkipped: number;
  bytesRestored: number;
}
