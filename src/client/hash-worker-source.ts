// The hashing worker (hash-worker.ts) as one self-contained script. The package build and this
// repo's Vite config replace this module with the bundled code (scripts/bundles.ts), so the worker
// starts from a Blob URL under any bundler, with no worker file for the app's bundler to resolve.
// As it stands here (plain Node, the unit tests), there is no worker: the client hashes in place.
const source: string = '';
export default source;
