// A dedicated worker running the service worker's own MD5 code (protocol/md5.ts, bundled as is):
// the engine measured where it runs, in a browser worker, not in Node.
import { createMd5, md5Engine } from '../../protocol/md5.ts';
import { fill } from './fill.ts';

let data: Uint8Array | null = null;

self.onmessage = async (event: MessageEvent<{ size: number; seed: number; chunk: number }>) => {
  const { size, seed, chunk } = event.data;
  try {
    if (!data || data.length !== size) data = fill(size, seed);
    const engine = await md5Engine();
    const h = await createMd5(); // created before the clock starts, as readBody does per request
    const t0 = performance.now();
    for (let at = 0; at < data.length; at += chunk) h.update(data.subarray(at, at + chunk));
    const digest = h.digest();
    const ms = performance.now() - t0;
    postMessage({ ms, digest, engine });
  } catch (e) {
    postMessage({ error: String(e) });
  }
};
