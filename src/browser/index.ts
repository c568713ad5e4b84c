// swbucket/browser: start the service from a page.
export { startService, ServiceStartError, PAGE_VERSION } from './start.ts';
export type { StartOptions, RunningService, StartFailure } from './start.ts';
