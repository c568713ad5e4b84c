// What applications import.
export { createClient, encodeKeyPath, SvcClientError } from './client.ts';
export type {
  Client, ClientOptions, Body, Acl, ObjectHeadersInput, PutObjectOptions, WriteResult, ObjectInfo, GetObjectOptions,
  GetObjectResult, ListObjectsOptions, ObjectSummary, ListObjectsPage, VersionSummary, PartSummary, UploadSummary,
  AccountSummary, DeleteObjectsResult,
} from './client.ts';
export type { UploadOptions, UploadResult } from './upload.ts';
export { startService, ServiceStartError, type StartOptions, type RunningService } from '../service/start.ts';
