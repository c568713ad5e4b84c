// The engine over LMDB (lmdb-js), for the Node server's --data DIR: a table is a named database
// with binary keys in IndexedDB's order (lmdb-keys.ts), its records msgpack (lmdb-js's default), a
// table of bare bytes (no `key`) stored as they are. A write step is one callback of
// childTransaction(): lmdb-js runs the queued callbacks one after another in one write
// transaction, each in a child transaction of its own, so steps given together share a commit and
// one that throws leaves nothing while the others commit. A step runs synchronously (the engine
// answers each read at once), so nothing else runs inside it. A read step runs in one read
// transaction: one snapshot. LMDB copies every value it returns, so the store keeps large bodies
// as bounded pieces here (keepsBlobs: false), and a range reads only the pieces it covers.
//
// Durability: the environment is opened (by node/lmdb-store.ts) with `overlappingSync: false`, so
// a write resolves only once LMDB's commit has synced the data and the meta page.
import { statfsSync } from 'node:fs';
import type { Database, RootDatabase, Transaction } from 'lmdb';
import { StoreQuotaError } from '../sw/store/errors.ts';
import { checkKey } from '../sw/store/engine/keys.ts';
import { NO_WRITES, runSync } from '../sw/store/engine/drive.ts';
import { keyOfPut, type Engine, type Range, type Read, type Step, type Table, type Writes } from '../sw/store/engine/types.ts';
import { MAX_KEY_BYTES, after, tupleKey } from './lmdb-keys.ts';

type Db = Database<unknown, Buffer>;

const MDB_MAP_FULL = -30792;
const ENOSPC = 28;
/** LMDB reports a short write, which is how a full disk shows up, as EIO. */
const EIO = 5;

/**
 * Whether a failed commit failed for lack of room. lmdb-js grows LMDB's map by itself, so
 * MDB_MAP_FULL is rare; a full disk fails the commit with ENOSPC or, from a short write, EIO,
 * which counts as "full" only when the disk has less room left than the write needed.
 */
export function isDiskFull(cause: unknown, dir: string, bytes: number): boolean {
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === MDB_MAP_FULL || code === ENOSPC || code === 'ENOSPC') return true;
  if (code !== EIO && code !== 'EIO') return false;
  try {
    const fs = statfsSync(dir);
    return fs.bavail * fs.bsize < bytes + 8 * 1024 * 1024;
  } catch {
    return false;
  }
}

/**
 * What lmdb-js rejects a failed commit with: an Error whose `commitError` promise holds the cause
 * (and which lmdb-js also prints). That promise must be handled, or Node stops on an unhandled
 * rejection.
 */
async function causeOf(e: unknown): Promise<unknown> {
  const pending = (e as { commitError?: Promise<unknown> } | null)?.commitError;
  if (!pending || typeof pending.then !== 'function') return e;
  try {
    await pending;
    return e;
  } catch (cause) {
    return cause;
  }
}

/** `a` and `b` compared as bytes, -1, 0 or 1. */
const compare = (a: Buffer, b: Buffer): number => Buffer.compare(a, b);

/**
 * A range as byte bounds: from `low` (after it when `lowOpen`) to `high` (exclusive). The key
 * encoding keeps IndexedDB's order and a tuple's bytes begin every longer tuple's that it begins,
 * so byte order decides the range exactly. A bound longer than LMDB takes is cut (the cut sorts
 * before it) and the cut-off part checked on each key instead.
 */
function bytesOf(r: Range): { low: Buffer; lowOpen: boolean; high: Buffer } {
  const prefix = tupleKey(r.prefix);
  let low = prefix;
  let lowOpen = false;
  if (r.start && compare(tupleKey(r.start), prefix) > 0) {
    low = tupleKey(r.start);
    lowOpen = r.startOpen === true;
  }
  let high = after(prefix);
  if (r.end) {
    const end = r.endOpen ? tupleKey(r.end) : after(tupleKey(r.end));
    if (compare(end, high) < 0) high = end;
  }
  return { low, lowOpen, high };
}

export interface LmdbEngineOptions {
  /** The environment's directory, to tell a full disk from another failed commit. */
  dir: string;
}

export function lmdbEngine(env: RootDatabase, options: LmdbEngineOptions): Engine {
  const dbs = new Map<string, Db>();
  const dbOf = (t: Table<unknown>): Db => {
    let db = dbs.get(t.name);
    if (!db) {
      db = env.openDB<unknown, Buffer>(t.name, { keyEncoding: 'binary', ...(t.key ? {} : { encoding: 'binary' as const }) });
      dbs.set(t.name, db);
    }
    return db;
  };

  /**
   * The entries of `r`, in order, at most `limit`. The walk stops by itself at the far bound:
   * LMDB takes no bound longer than MAX_KEY_BYTES (one made from request text can be), and such a
   * bound is then left out of the cursor and checked on each key.
   */
  function* within(t: Table<unknown>, r: Range, o: { reverse?: boolean; limit?: number; transaction?: Transaction }): Generator<{ key: Buffer; value: unknown }> {
    const { low, lowOpen, high } = bytesOf(r);
    if (compare(low, high) >= 0) return;
    // LMDB takes no empty key as a cursor's start either (the range of a whole table begins there).
    const fits = (k: Buffer) => k.length > 0 && k.length <= MAX_KEY_BYTES;
    const entries = dbOf(t).getRange({
      ...(o.reverse ? { reverse: true, ...(fits(high) ? { start: high } : {}) } : (low.length === 0 ? {} : { start: fits(low) ? low : low.subarray(0, MAX_KEY_BYTES) })),
      ...(o.transaction ? { transaction: o.transaction } : {}),
    });
    let n = 0;
    for (const entry of entries) {
      const k = entry.key;
      const c = compare(k, low);
      if (o.reverse ? c < 0 : compare(k, high) >= 0) return; // past the far bound
      if (c < 0 || (c === 0 && lowOpen) || compare(k, high) >= 0) continue; // not yet at the near one
      if (o.limit !== undefined && n++ >= o.limit) return;
      yield entry;
    }
  }

  const answerIn = (transaction?: Transaction) => (read: Exclude<Read, { op: 'all' }>): unknown => {
    const o = transaction ? { transaction } : {};
    if (read.op === 'get') {
      const k = tupleKey(read.key);
      return k.length > MAX_KEY_BYTES ? undefined : dbOf(read.table).get(k, o);
    }
    if (read.op === 'count') {
      let n = 0;
      for (const _ of within(read.table, read.range, o)) n++;
      return n;
    }
    return [...within(read.table, read.range, { ...read, ...o })].map((e) => e.value);
  };

  /** Bytes the running write step puts, to tell a full disk from another failure (isDiskFull). */
  let written = 0;
  const writes: Writes = {
    put(table, value, given) {
      written += value instanceof Uint8Array ? value.byteLength : 256;
      void dbOf(table as Table<unknown>).put(tupleKey(checkKey(keyOfPut(table, value, given))), value);
    },
    delete(table, key) {
      void dbOf(table).remove(tupleKey(checkKey(key)));
    },
    deleteRange(table, r) {
      for (const { key } of [...within(table, r, {})]) void dbOf(table).remove(key);
    },
  };

  let closed = false;
  return {
    keepsBlobs: false,
    async read<R>(tables: Table<unknown>[], step: Step<R>): Promise<R> {
      if (closed) throw new Error('The store is closed.');
      // A table's database opened after a read transaction began is not usable in it: open first.
      for (const t of tables) dbOf(t);
      const transaction = env.useReadTransaction();
      try {
        return runSync(step, NO_WRITES, answerIn(transaction));
      } finally {
        transaction.done();
      }
    },
    async write<R>(tables: Table<unknown>[], step: Step<R>): Promise<R> {
      if (closed) throw new Error('The store is closed.');
      for (const t of tables) dbOf(t);
      let bytes = 0;
      try {
        return await (env.childTransaction(() => {
          written = 0;
          try {
            return runSync(step, writes, answerIn());
          } finally {
            bytes = written;
          }
        }) as Promise<R>);
      } catch (e) {
        const cause = await causeOf(e);
        if (isDiskFull(cause, options.dir, bytes)) throw new StoreQuotaError(cause, "The server's disk is full: it cannot store more data.");
        throw e;
      }
    },
    close() {
      closed = true;
    },
  };
}
