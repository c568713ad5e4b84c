// The client's public types: what an application sees of createClient().

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
}

export type Body = Blob | BufferSource | string;
export type Acl = 'private' | 'public-read';

export interface ObjectHeadersInput {
  contentType?: string;
  contentEncoding?: string;
  cacheControl?: string;
  expires?: string;
  contentDisposition?: string;
  contentLanguage?: string;
  /** User metadata: sent as x-svc-meta-{name}. */
  metadata?: Record<string, string>;
}

export interface PutObjectOptions extends ObjectHeadersInput {
  /** Compute and send Content-MD5 (in a worker) so the service verifies the bytes. Default true. */
  checksum?: boolean;
  signal?: AbortSignal;
}

export interface WriteResult {
  etag: string;
  versionId?: number;
  requestId: string | null;
}

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

export interface GetObjectResult extends ObjectInfo {
  status: number;
  /** The response, body unread: use `.blob()` for large objects (much faster than arrayBuffer). */
  response: Response;
  contentRange: string | null;
  notModified: boolean;
}

export interface ListObjectsOptions {
  prefix?: string;
  delimiter?: string;
  marker?: string;
  maxKeys?: number;
}

export interface ObjectSummary {
  key: string;
  lastModified: Date;
  etag: string;
  size: number;
  storageClass: string;
}

export interface ListObjectsPage {
  objects: ObjectSummary[];
  commonPrefixes: string[];
  isTruncated: boolean;
  nextMarker?: string;
}

export interface VersionSummary {
  key: string;
  versionId: string;
  isLatest: boolean;
  lastModified: Date;
  etag: string;
  size: number;
}

export interface PartSummary {
  partNumber: number;
  etag: string;
  size: number;
  lastModified: Date;
}

export interface UploadSummary {
  key: string;
  uploadId: string;
  initiated: Date;
}

export interface AccountSummary {
  accessKeyId: string;
  displayName: string;
  quotaBytes?: number;
  usedBytes: number;
  root: boolean;
}

export interface DeleteObjectsResult {
  deleted: { key: string; versionId?: string }[];
  errors: { key: string; code: string; message: string }[];
}

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

export interface UploadResult {
  etag: string;
  versionId?: number;
  /** Set for a multipart upload. */
  uploadId?: string;
  /** Parts sent by this call, and parts found already uploaded (resume). */
  partsSent: number;
  partsSkipped: number;
}

export interface ListVersionsPage {
  versions: VersionSummary[];
  isTruncated: boolean;
  nextMarker?: string;
  nextVersionIdMarker?: string;
}

export interface ListPartsPage {
  parts: PartSummary[];
  isTruncated: boolean;
  nextPartNumberMarker: number;
}

export interface ListUploadsPage {
  uploads: UploadSummary[];
  isTruncated: boolean;
  nextKeyMarker: string;
  nextUploadIdMarker: string;
}

export interface SignatureExplanation {
  stringToSign: string;
  authorization: string;
  date: string;
  url: string;
}

/** One method per operation; every failure the service answers is thrown as SvcClientError. */
export interface Client {
  /** The endpoint's origin, e.g. `http://svc.localhost`. */
  readonly endpoint: string;
  /** The Authorization a request would carry, and the StringToSign behind it (for learning); null without credentials. */
  explainSignature(method: string, bucket: string, key: string, query?: Record<string, string>, headers?: Headers): Promise<SignatureExplanation | null>;
  /** A URL anyone can use until it expires: for links and `<img src>`. */
  presign(bucket: string, key: string, options?: { expiresIn?: number; method?: 'GET' | 'HEAD'; query?: Record<string, string> }): Promise<string>;

  listBuckets(): Promise<{ owner: { id: string; displayName: string }; buckets: { name: string; creationDate: Date }[] }>;
  createBucket(bucket: string, options?: { acl?: Acl }): Promise<void>;
  deleteBucket(bucket: string): Promise<void>;
  /** True when the bucket exists and is the caller's; false when it does not exist. */
  headBucket(bucket: string): Promise<boolean>;
  getBucketAcl(bucket: string): Promise<Acl>;
  putBucketAcl(bucket: string, acl: Acl): Promise<void>;
  getBucketVersioning(bucket: string): Promise<'Enabled' | 'Suspended' | undefined>;
  putBucketVersioning(bucket: string, status: 'Enabled' | 'Suspended'): Promise<void>;

  listObjects(bucket: string, options?: ListObjectsOptions): Promise<ListObjectsPage>;
  /** Every page of a listing, following NextMarker. */
  listObjectsPages(bucket: string, options?: ListObjectsOptions): AsyncGenerator<ListObjectsPage>;
  /** Every object (and, with a delimiter, every common prefix as `{ prefix }`). */
  listAllObjects(bucket: string, options?: ListObjectsOptions): AsyncGenerator<ObjectSummary | { prefix: string }>;
  listVersions(bucket: string, options?: { prefix?: string; marker?: string; versionIdMarker?: string; maxKeys?: number }): Promise<ListVersionsPage>;
  listAllVersions(bucket: string, options?: { prefix?: string; maxKeys?: number }): AsyncGenerator<VersionSummary>;

  putObject(bucket: string, key: string, body: Body, options?: PutObjectOptions): Promise<WriteResult>;
  getObject(bucket: string, key: string, options?: GetObjectOptions): Promise<GetObjectResult>;
  headObject(bucket: string, key: string, options?: { versionId?: number; ifModifiedSince?: Date }): Promise<ObjectInfo & { notModified: boolean }>;
  deleteObject(bucket: string, key: string): Promise<void>;
  deleteObjects(bucket: string, objects: (string | { key: string; versionId?: number })[], options?: { quiet?: boolean }): Promise<DeleteObjectsResult>;
  copyObject(source: { bucket: string; key: string }, bucket: string, key: string): Promise<WriteResult>;
  /** Inside one bucket; the bytes are not copied. */
  moveObject(bucket: string, from: string, to: string): Promise<WriteResult>;
  /** Replaces the object's response headers and metadata; what is not given is cleared. */
  putObjectMeta(bucket: string, key: string, meta: ObjectHeadersInput): Promise<void>;

  /** Initiates a multipart upload; resolves to its UploadId. */
  createMultipartUpload(bucket: string, key: string, options?: ObjectHeadersInput): Promise<string>;
  uploadPart(
    bucket: string, key: string, uploadId: string, partNumber: number, body: Body,
    options?: { checksum?: boolean; md5Hex?: string; signal?: AbortSignal },
  ): Promise<{ etag: string }>;
  completeMultipartUpload(
    bucket: string, key: string, uploadId: string, parts: { partNumber: number; etag: string }[],
    options?: { objectMd5?: string; metadata?: Record<string, string> },
  ): Promise<WriteResult & { location: string }>;
  abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void>;
  listParts(bucket: string, key: string, uploadId: string, options?: { maxParts?: number; partNumberMarker?: number }): Promise<ListPartsPage>;
  listAllParts(bucket: string, key: string, uploadId: string): AsyncGenerator<PartSummary>;
  listMultipartUploads(
    bucket: string, options?: { prefix?: string; keyMarker?: string; uploadIdMarker?: string; maxUploads?: number },
  ): Promise<ListUploadsPage>;
  listAllMultipartUploads(bucket: string, options?: { prefix?: string }): AsyncGenerator<UploadSummary>;
  /** Single PUT below the part size, multipart above it: concurrent, retried, abortable, resumable. */
  upload(bucket: string, key: string, body: Blob, options?: UploadOptions): Promise<UploadResult>;

  // The emulator's administration (root only): not part of the wire format a real service offers.
  putAccount(accessKeyId: string, options: { secretAccessKey?: string; displayName?: string; quotaBytes?: number }): Promise<void>;
  deleteAccount(accessKeyId: string): Promise<void>;
  listAccounts(): Promise<AccountSummary[]>;
  /** A tar archive of the service's data, streamed (docs/protocol.md, "Archives"). Root only. */
  exportArchive(options?: ExportOptions): Promise<ArchiveDownload>;
  /** Puts an archive's accounts, buckets and objects back. Root only; all or nothing. */
  importArchive(archive: Blob | BufferSource | ReadableStream<Uint8Array>, options?: ImportOptions): Promise<ImportResult>;
}

export interface ExportOptions {
  /** Only these buckets (default: every bucket). */
  buckets?: string[];
  /** Every stored version, not only the current objects. */
  versions?: boolean;
  /** The accounts too, with their secrets. */
  accounts?: boolean;
  signal?: AbortSignal;
}

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

export type ImportConflict = 'fail' | 'skip' | 'overwrite';

export interface ImportOptions {
  /** What to do where the service already has the object or account: fail (default), skip or overwrite. */
  conflict?: ImportConflict;
  signal?: AbortSignal;
}

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
