/**
 * Start the service from a page.
 *
 * @module swbucket/browser
 */
export { startService, ServiceStartError, PAGE_VERSION } from './start.ts';
export type { StartOptions, RunningService, StartFailure, StorageState } from './start.ts';
export type { Seed } from './seed.ts';
export { deleteAllData, DeleteDataError } from './data.ts';
export type { DeleteAllDataOptions } from './data.ts';
export { ReplicaError } from './replicas.ts';
export type {
  ServiceReplicas, PageReplicaConfig, ReplicaStatus, ReplicaEvent, Credentials, ConflictRecord, RoundResult, CheckResult, ConflictCase, Policy, Resolution,
} from './replicas.ts';
