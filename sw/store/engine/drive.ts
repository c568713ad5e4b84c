// Running a step: the one loop every engine uses, synchronous (memory, LMDB) or resumed from
// request callbacks (IndexedDB).
import type { Read, Step, Writes } from './types.ts';

const READS = new Set(['get', 'range', 'count', 'all']);

/** The read a step yielded, or a TypeError saying what it yielded instead (a Promise, say). */
export function asRead(value: unknown): Read {
  if (typeof value === 'object' && value !== null && READS.has((value as { op?: unknown }).op as string)) return value as Read;
  throw new TypeError(`A store step may yield only reads (get, range, count, all), not ${value instanceof Promise ? 'a Promise' : String(value)}.`);
}

/** Answers `read` with `answer` for each get and range in it. */
export function answerWith(read: Read, answer: (r: Exclude<Read, { op: 'all' }>) => unknown): unknown {
  return read.op === 'all' ? read.reads.map((r) => answerWith(r, answer)) : answer(read);
}

/** Runs `step` to its end, answering each read at once. */
export function runSync<R>(step: Step<R>, writes: Writes, answer: (r: Exclude<Read, { op: 'all' }>) => unknown): R {
  const g = step(writes);
  let next = g.next();
  while (!next.done) next = g.next(answerWith(asRead(next.value), answer));
  return next.value;
}

/** The Writes of a read-only step. */
export const NO_WRITES: Writes = {
  put: () => {
    throw new TypeError('A read step cannot write.');
  },
  delete: () => {
    throw new TypeError('A read step cannot write.');
  },
  deleteRange: () => {
    throw new TypeError('A read step cannot write.');
  },
};
