// The small engine interface the store's rules are written over (issue 22): ordered tables of
// records, reads and writes grouped into atomic steps. An engine is IndexedDB, LMDB or memory; the
// rules (sw/store/rules/) are written once against this.
//
// A step is a generator function: it yields the reads it needs and gets their answers back, and
// issues writes without waiting for them. It cannot `await` (a syntax error in a `function*`), so
// nothing but its own reads can come between its reads and writes: an IndexedDB transaction, which
// commits by itself once no request is pending, stays open for exactly the step, and an LMDB
// write transaction, which is synchronous, runs the step without anything else slipping in.

/**
 * A record's key: a tuple of strings and non-negative safe integers, compared part by part (strings
 * by UTF-16 code units, as IndexedDB compares them; numbers numerically); a tuple sorts before every
 * longer tuple it begins. A table's keys all have the same parts, of the same types.
 */
export type Key = readonly (string | number)[];

/**
 * A table: its name, and how a record's key is found in the record (IndexedDB's in-line keys). A
 * table without `key` holds bare bytes under keys given with each put (out-of-line keys): an
 * engine stores those values as they are, with no encoding around them.
 */
export interface Table<V> {
  readonly name: string;
  /** How many parts its keys have. */
  readonly parts: number;
  /** The key of `value`; absent for a table of bare bytes. */
  key?(value: V): Key;
}

/** The key of a put: the record's own, or the one given for a table of bare bytes. */
export function keyOfPut<V>(table: Table<V>, value: V, key?: Key): Key {
  const k = key ?? table.key?.(value);
  if (!k) throw new TypeError(`A put into ${table.name} needs a key: its records do not hold one.`);
  return k;
}

/**
 * The keys that begin with `prefix`, in order, from `start` (or the first) to `end` (or the
 * last). `start` and `end` are whole keys, with the prefix; `startOpen`/`endOpen` leave the bound
 * itself out.
 */
export interface Range {
  prefix: Key;
  start?: Key;
  startOpen?: boolean;
  end?: Key;
  endOpen?: boolean;
}

/** A read a step yields; the engine answers it with the value named on each. */
export type Read =
  /** The record with this key, or undefined. */
  | { op: 'get'; table: Table<unknown>; key: Key }
  /** The records in the range, in key order (descending with `reverse`), at most `limit`. */
  | { op: 'range'; table: Table<unknown>; range: Range; limit?: number; reverse?: boolean }
  /** How many records the range holds. */
  | { op: 'count'; table: Table<unknown>; range: Range }
  /** Several reads sent together; answered with their answers, in order. */
  | { op: 'all'; reads: Read[] };

/** The writes of a step: issued at once, applied in order, committed with the step or not at all. */
export interface Writes {
  /** Stores `value`, replacing the record with its key; `key` only for a table of bare bytes. */
  put<V>(table: Table<V>, value: V, key?: Key): void;
  delete(table: Table<unknown>, key: Key): void;
  deleteRange(table: Table<unknown>, range: Range): void;
}

/**
 * One atomic step. Makes a fresh generator each call: an engine may run a step again (alone, after a
 * batch it was part of failed), so a step must not change anything outside itself.
 */
export type Step<R> = (writes: Writes) => Generator<Read, R, unknown>;

export interface Engine {
  /**
   * Whether a record may hold a Blob, kept as a handle onto stored bytes (IndexedDB, where the
   * browser keeps Blobs). False where Blobs are refused or would be copied into the record: the
   * store then keeps large bodies as bounded pieces of bytes.
   */
  readonly keepsBlobs: boolean;
  /** Runs `step` over a snapshot of `tables`; its writes throw. */
  read<R>(tables: Table<unknown>[], step: Step<R>): Promise<R>;
  /**
   * Runs `step` over `tables` and commits its writes, all or none. Steps given close together may
   * share one commit (group commit); each still sees the writes of those before it, and one that
   * throws leaves nothing of its own (the others are committed without it).
   */
  write<R>(tables: Table<unknown>[], step: Step<R>): Promise<R>;
  close(): void;
}

// ---- reading inside a step: `const b = yield* get(BUCKETS, [name])` is typed ----

export function* get<V>(table: Table<V>, key: Key): Generator<Read, V | undefined, unknown> {
  return (yield { op: 'get', table: table as Table<unknown>, key }) as V | undefined;
}

export function* range<V>(table: Table<V>, r: Range, o: { limit?: number; reverse?: boolean } = {}): Generator<Read, V[], unknown> {
  return (yield { op: 'range', table: table as Table<unknown>, range: r, ...o }) as V[];
}

export function* count(table: Table<unknown>, r: Range): Generator<Read, number, unknown> {
  return (yield { op: 'count', table, range: r }) as number;
}

/**
 * Reads sent together: `const [a, b] = yield* all(getRead(A, k), rangeRead(B, r))`. An entry left
 * undefined (a read only sometimes needed) is answered undefined.
 */
export function* all<T extends unknown[]>(...reads: { [K in keyof T]: Typed<T[K]> | undefined }): Generator<Read, T, unknown> {
  const sent = reads.filter((r): r is Typed<unknown> => r !== undefined);
  const answers = (yield { op: 'all', reads: sent.map((r) => r.read) }) as unknown[];
  let at = 0;
  return reads.map((r) => (r === undefined ? undefined : answers[at++])) as T;
}

/** A read with the type of its answer, for all(). */
export interface Typed<T> {
  read: Read;
  /** Never set: carries T. */
  readonly answer?: T;
}

export const getRead = <V>(table: Table<V>, key: Key): Typed<V | undefined> => ({ read: { op: 'get', table: table as Table<unknown>, key } });
export const rangeRead = <V>(table: Table<V>, r: Range, o: { limit?: number; reverse?: boolean } = {}): Typed<V[]> =>
  ({ read: { op: 'range', table: table as Table<unknown>, range: r, ...o } });
