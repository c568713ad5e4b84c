/**
 * The service for a service worker an app owns. See fetch-handler.ts.
 *
 * @module swbucket/sw
 */
export { createFetchHandler } from './fetch-handler.ts';
export type { FetchHandler, FetchHandlerOptions, FetchEventLike, WorkerHello } from './fetch-handler.ts';
