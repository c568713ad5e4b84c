// MD5 for Content-MD5 and part checks, in a dedicated worker created on first use and reused,
// so hashing a large file never blocks the page. Where no Worker exists, hash in place.
import { wrap, type Remote } from 'comlink';
import { md5OfBlob } from '../../sw/hash/md5.ts';

let remote: Remote<{ md5(blob: Blob): Promise<string> }> | null = null;

export function md5Hex(blob: Blob): Promise<string> {
  if (typeof Worker === 'undefined') return md5OfBlob(blob);
  remote ??= wrap(new Worker(new URL('./hash-worker.ts', import.meta.url), { type: 'module' }));
  return remote.md5(blob);
}

export function hexToBase64(hex: string): string {
  let bin = '';
  for (let i = 0; i < hex.length; i += 2) bin += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
  return btoa(bin);
}
