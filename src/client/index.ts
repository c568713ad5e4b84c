/**
 * What applications import to talk to the service (here or a real one).
 *
 * @module swbucket/client
 */
export { createClient, encodeKeyPath } from './client.ts';
export { SvcClientError } from './errors.ts';
export type * from './types.ts';
