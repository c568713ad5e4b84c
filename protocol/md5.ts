// MD5 for ETags and Content-MD5. WebCrypto has no MD5, so: hash-wasm (WebAssembly, fastest that
// runs in a service worker), and spark-md5 (plain JS) where WebAssembly is refused, e.g. by a
// Content-Security-Policy without 'wasm-unsafe-eval'.
import { createMD5 } from 'hash-wasm';
import SparkMD5 from 'spark-md5';

export interface Md5 {
  update(data: Uint8Array): void;
  /** Lower-case hex digest. */
  digest(): string;
}

export type Md5Engine = 'hash-wasm' | 'spark-md5';

let wasmRefused = false;

function sparkMd5(): Md5 {
  const h = new SparkMD5.ArrayBuffer();
  return {
    // spark-md5 takes whole ArrayBuffers; cut out exactly this view's bytes.
    update: (data) =>
      h.append((data.buffer as ArrayBuffer).slice(data.byteOffset, data.byteOffset + data.byteLength)),
    digest: () => h.end(),
  };
}

export async function createMd5(engine?: Md5Engine): Promise<Md5> {
  if (engine !== 'spark-md5' && !wasmRefused) {
    try {
      const h = await createMD5();
      h.init();
      return { update: (data) => void h.update(data), digest: () => h.digest('hex') };
    } catch (e) {
      if (engine === 'hash-wasm') throw e;
      wasmRefused = true; // once refused, it stays refused for this context
    }
  }
  return sparkMd5();
}

/** Which engine createMd5() picks here (for the request log and the benchmarks). */
export async function md5Engine(): Promise<Md5Engine> {
  if (wasmRefused) return 'spark-md5';
  try {
    await createMD5();
    return 'hash-wasm';
  } catch {
    wasmRefused = true;
    return 'spark-md5';
  }
}

const SLICE = 4 * 1024 * 1024;

/** MD5 of a Blob, read in slices so that a large stored object is never whole in memory. */
export async function md5OfBlob(blob: Blob): Promise<string> {
  const h = await createMd5();
  for (let at = 0; at < blob.size; at += SLICE) {
    h.update(new Uint8Array(await blob.slice(at, at + SLICE).arrayBuffer()));
  }
  return h.digest();
}

export function md5OfText(text: string): Promise<string> {
  return md5OfBlob(new Blob([text]));
}
