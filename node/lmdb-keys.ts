// LMDB keys in IndexedDB's order: a tuple of strings and non-negative integers written as bytes
// whose order is IndexedDB's order for those tuples (strings by UTF-16 code units), so listings
// page the same way over every engine. lmdb-js's own key encoding orders strings by UTF-8 bytes,
// which puts astral characters after U+E000–U+FFFF where IndexedDB puts them before.

/**
 * lmdb-js's limit with its default page size. Stored keys stay far below it (a key of at most 1000
 * UTF-8 bytes is at most 1500 bytes here); only a lookup or a listing bound made from request text
 * can be longer, and such a key cannot exist.
 */
export const MAX_KEY_BYTES = 1978;

/**
 * Writes one string so that byte order is UTF-16 code-unit order: each code unit in one, two or
 * three bytes, longer forms for higher units, none starting with 0x00; then 0x00, which therefore
 * sorts a string before every longer string it begins (["a", …] before ["ab", …]).
 */
function putString(out: Buffer, at: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u < 0x7f) out[at++] = u + 1;
    else if (u < 0x407f) {
      const v = u - 0x7f;
      out[at++] = 0x80 | (v >> 8);
      out[at++] = v & 0xff;
    } else {
      out[at++] = 0xc0;
      out[at++] = u >> 8;
      out[at++] = u & 0xff;
    }
  }
  return at;
}

/** A non-negative integer in 8 bytes, big-endian: numeric order. */
function putNumber(out: Buffer, at: number, n: number): number {
  const v = Number.isFinite(n) ? Math.min(Math.max(0, Math.floor(n)), Number.MAX_SAFE_INTEGER) : 0;
  out.writeUInt32BE(Math.floor(v / 2 ** 32), at);
  out.writeUInt32BE(v >>> 0, at + 4);
  return at + 8;
}

/**
 * The key of a record, or with fewer parts the start of every key that begins with them (a string
 * part always ends in 0x00, so a shorter tuple sorts before the longer ones it begins, as in
 * IndexedDB). `open` leaves the last string unterminated: the start of every key whose part there
 * begins with that string.
 */
export function tupleKey(parts: readonly (string | number)[], open = false): Buffer {
  let size = 0;
  for (const p of parts) size += typeof p === 'number' ? 8 : p.length * 3 + 1;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  parts.forEach((p, i) => {
    if (typeof p === 'number') at = putNumber(out, at, p);
    else {
      at = putString(out, at, p);
      if (!(open && i === parts.length - 1)) out[at++] = 0;
    }
  });
  return out.subarray(0, at);
}

/** The string a one-part key holds (putString() backwards). */
export function stringOf(k: Uint8Array): string {
  let s = '';
  for (let at = 0; at < k.length && k[at] !== 0;) {
    const b = k[at]!;
    if (b < 0x80) {
      s += String.fromCharCode(b - 1);
      at += 1;
    } else if (b < 0xc0) {
      s += String.fromCharCode((((b & 0x3f) << 8) | k[at + 1]!) + 0x7f);
      at += 2;
    } else {
      s += String.fromCharCode((k[at + 1]! << 8) | k[at + 2]!);
      at += 3;
    }
  }
  return s;
}

/** Just past every key that begins with `start`: no encoded part begins with 0xff. */
export const after = (start: Buffer): Buffer => Buffer.concat([start, Buffer.from([0xff])]);
