// Key order for the engines that keep their own (memory), and the checks every engine shares.
import type { Key, Range } from './types.ts';

/** -1, 0 or 1 as `a` sorts before, with or after `b` (IndexedDB's order: numbers before strings). */
export function compareKeys(a: Key, b: Key): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (typeof x !== typeof y) return typeof x === 'number' ? -1 : 1;
    // JavaScript compares strings by UTF-16 code units, as IndexedDB does.
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Whether `key` begins with every part of `prefix`. */
export const hasPrefix = (key: Key, prefix: Key): boolean => prefix.every((p, i) => key[i] === p);

/** Whether `key` lies in `range`. */
export function inRange(key: Key, r: Range): boolean {
  if (!hasPrefix(key, r.prefix)) return false;
  if (r.start) {
    const c = compareKeys(key, r.start);
    if (c < 0 || (c === 0 && r.startOpen)) return false;
  }
  if (r.end) {
    const c = compareKeys(key, r.end);
    if (c > 0 || (c === 0 && r.endOpen)) return false;
  }
  return true;
}

/** Refuses what no engine can store as a key part: the same rule everywhere, so no engine accepts more. */
export function checkKey(key: Key): Key {
  for (const p of key) {
    if (typeof p === 'number' ? !Number.isSafeInteger(p) || p < 0 : typeof p !== 'string') {
      throw new TypeError(`A key part must be a string or a non-negative safe integer, not ${String(p)}.`);
    }
  }
  return key;
}
