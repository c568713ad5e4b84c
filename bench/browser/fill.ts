/** Deterministic bytes (xorshift32, one word at a time), the same in the page, a worker and Node. */
export function fill(size: number, seed: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  const words = new Uint32Array(out.buffer, 0, size >>> 2);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    words[i] = x;
  }
  for (let i = words.length * 4; i < size; i++) out[i] = i & 255;
  return out;
}
