// swbucket: the client and startService() in one import; the subpaths (swbucket/client,
// swbucket/browser, swbucket/sw, swbucket/node, swbucket/vite) hold each part alone.
export * from './client/index.ts';
export * from './browser/index.ts';
