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

type WasmHasher = Awaited<ReturnType<typeof createMD5>>;

/**
 * hash-wasm hashers whose digest has been taken, for the next body: making one instantiates a
 * WebAssembly module, which cost as much as the rest of a 1 KiB PUT's hashing (issue 13). A hasher
 * that never reaches its digest (a body that broke off) is simply not reused.
 */
const idle: WasmHasher[] = [];
const IDLE_MAX = 16;

export async function createMd5(engine?: Md5Engine): Promise<Md5> {
  if (engine !== 'spark-md5' && !wasmRefused) {
    try {
      const h = idle.pop() ?? (await createMD5());
      h.init();
      let done = false;
      return {
        update: (data) => {
          if (done) throw new Error('MD5 updated after its digest');
          h.update(data);
        },
        digest: () => {
          if (done) throw new Error('MD5 digest taken twice');
          done = true;
          const hex = h.digest('hex');
          if (idle.length < IDLE_MAX) idle.push(h);
          return hex;
        },
      };
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
