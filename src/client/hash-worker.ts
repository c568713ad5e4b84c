// The hashing worker: MD5 of Blobs off the page's main thread, through comlink. Bundled into one
// self-contained script at build time (scripts/bundles.ts) and started from a Blob URL.
import { expose } from 'comlink';
import { md5OfBlob } from '../../protocol/md5.ts';

expose({ md5: md5OfBlob });
// Tells the page this script loaded and runs (HASH_WORKER_READY in hashing.ts); until then the
// page sends it no work.
postMessage('swbucket:hash-worker-ready');
