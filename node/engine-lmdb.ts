// The engine over LMDB (lmdb-js), for the Node server's --data DIR: a table is a named database
// with binary keys in IndexedDB's order (lmdb-keys.ts). A write step is one callback of
// childTransaction(): lmdb-js runs the queued callbacks one after another in one write
// transaction, each in a child transaction of its own, so steps given together share a commit and
// one that throws leaves nothing while the others commit. A step runs synchronously (the engine
// answers each read at once), so nothing else runs inside it. A read step runs in one read
// transaction: one snapshot.
import type { Database, RootDatabase, Transaction } from 'lmdb';
import { checkKey, compareKeys, inRange } from '../sw/store/engine/keys.ts';
import { NO_WRITES, runSync } from '../sw/store/engine/drive.ts';
import type { Engine, Range, Read, Step, Table, Writes } from '../sw/store/engine/types.ts';
import { MAX_KEY_BYTES, after, tupleKey } from './lmdb-keys.ts';

type Db = Database<unknown, Buffer>;

export function lmdbEngine(env: RootDatabase): Engine {
  const dbs = new Map<string, Db>();
  const dbOf = (t: Table<unknown>): Db => {
    let db = dbs.get(t.name);
    if (!db) dbs.set(t.name, (db = env.openDB<unknown, Buffer>(t.name, { keyEncoding: 'binary' })));
    return db;
  };

  /** The records of `r`, in order, at most `limit`: a byte range around it, cut exactly by inRange. */
  function* within(t: Table<unknown>, r: Range, o: { reverse?: boolean; limit?: number; transaction?: Transaction }): Generator<{ key: Buffer; value: unknown }> {
    const low = tupleKey(r.start ?? r.prefix);
    const high = r.end ? after(tupleKey(r.end)) : after(tupleKey(r.prefix));
    // A bound made from request text may be longer than any key LMDB takes, and than any stored key.
    if (low.length > MAX_KEY_BYTES) return;
    const entries = dbOf(t).getRange({
      ...(o.reverse ? { start: high, end: low } : { start: low, end: high }),
      ...(o.reverse ? { reverse: true } : {}),
      ...(o.transaction ? { transaction: o.transaction } : {}),
    });
    let n = 0;
    for (const { key, value } of entries) {
      const k = t.key(value);
      if (!inRange(k, r)) {
        // Past the range's far end: nothing after it can be in it.
        if (o.reverse ? r.start && compareKeys(k, r.start) < 0 : r.end && compareKeys(k, r.end) > 0) return;
        continue;
      }
      if (o.limit !== undefined && n++ >= o.limit) return;
      yield { key, value };
    }
  }

  const answerIn = (transaction?: Transaction) => (read: Exclude<Read, { op: 'all' }>): unknown => {
    if (read.op === 'get') {
      const k = tupleKey(read.key);
      return k.length > MAX_KEY_BYTES ? undefined : dbOf(read.table).get(k, transaction ? { transaction } : {});
    }
    return [...within(read.table, read.range, { ...read, ...(transaction ? { transaction } : {}) })].map((e) => e.value);
  };

  const writes: Writes = {
    put(table, value) {
      void dbOf(table as Table<unknown>).put(tupleKey(checkKey(table.key(value))), value);
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
    async read<R>(_tables: Table<unknown>[], step: Step<R>): Promise<R> {
      if (closed) throw new Error('The LMDB engine is closed.');
      const transaction = env.useReadTransaction();
      try {
        return runSync(step, NO_WRITES, answerIn(transaction));
      } finally {
        transaction.done();
      }
    },
    async write<R>(_tables: Table<unknown>[], step: Step<R>): Promise<R> {
      if (closed) throw new Error('The LMDB engine is closed.');
      return env.childTransaction(() => runSync(step, writes, answerIn())) as Promise<R>;
    },
    close() {
      closed = true;
    },
  };
}
