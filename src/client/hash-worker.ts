// The hashing worker: MD5 of Blobs off the page's main thread, through comlink.
import { expose } from 'comlink';
import { md5OfBlob } from '../../sw/hash/md5.ts';

expose({ md5: (blob: Blob) => md5OfBlob(blob) });
