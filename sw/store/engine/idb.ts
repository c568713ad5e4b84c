// The engine over IndexedDB: a table is an object store (in-line keys where the store has a key
// path, as the stores of today's databases do; out-of-line otherwise). A step runs in one
// transaction and is resumed from its requests' success callbacks, so the transaction stays
// open for exactly the step; a step that throws aborts it, leaving nothing. A refusal for room
// (a full origin) is reported as StoreQuotaError.
import { StoreQuotaError, isQuotaError } from '../errors.ts';
import { checkKey } from './keys.ts';
import { NO_WRITES, asRead } from './drive.ts';
import { keyOfPut, type Engine, type Key, type Range, type Read, type Step, type Table, type Writes } from './types.ts';

/** IndexedDB's key for a tuple: the one part itself for a one-part table, else the array. */
const idbKey = (table: Table<unknown>, key: Key): IDBValidKey => (table.parts === 1 ? key[0]! : [...checkKey(key)]);

/** The IDBKeyRange of a Range (undefined: every key). */
export function idbRange(table: Table<unknown>, r: Range): IDBKeyRange | undefined {
  if (table.parts === 1) {
    if (r.prefix.length === 1) return IDBKeyRange.only(r.prefix[0]!);
    const lower = r.start?.[0];
    const upper = r.end?.[0];
    if (lower === undefined && upper === undefined) return undefined;
    if (lower === undefined) return IDBKeyRange.upperBound(upper!, r.endOpen);
    if (upper === undefined) return IDBKeyRange.lowerBound(lower, r.startOpen);
    return IDBKeyRange.bound(lower, upper, r.startOpen, r.endOpen);
  }
  // An array sorts after every number and string: [...prefix, []] is past every key with the prefix.
  const lower: IDBValidKey | undefined = r.start ? [...r.start] : r.prefix.length ? [...r.prefix] : undefined;
  const upper: IDBValidKey | undefined = r.end ? [...r.end] : r.prefix.length ? [...r.prefix, []] : undefined;
  if (lower === undefined && upper === undefined) return undefined;
  if (lower === undefined) return IDBKeyRange.upperBound(upper!, r.end ? r.endOpen : true);
  if (upper === undefined) return IDBKeyRange.lowerBound(lower, r.start ? r.startOpen : false);
  return IDBKeyRange.bound(lower, upper, r.start ? r.startOpen : false, r.end ? r.endOpen : true);
}

/** Answers `read` in `tx`, then calls `then` with the answer (from a request callback). */
function issue(tx: IDBTransaction, read: Read, then: (answer: unknown) => void): void {
  if (read.op === 'all') {
    const answers: unknown[] = new Array(read.reads.length);
    let left = read.reads.length;
    if (left === 0) return then(answers);
    read.reads.forEach((r, i) => issue(tx, r, (a) => {
      answers[i] = a;
      if (--left === 0) then(answers);
    }));
    return;
  }
  const store = tx.objectStore(read.table.name);
  if (read.op === 'get') {
    const req = store.get(idbKey(read.table, read.key));
    req.onsuccess = () => then(req.result);
    return;
  }
  const range = idbRange(read.table, read.range);
  if (read.op === 'count') {
    const req = store.count(range);
    req.onsuccess = () => then(req.result);
    return;
  }
  if (!read.reverse) {
    const req = store.getAll(range, read.limit);
    req.onsuccess = () => then(req.result);
    return;
  }
  const out: unknown[] = [];
  const req = store.openCursor(range, 'prev');
  req.onsuccess = () => {
    const cursor = req.result;
    if (!cursor || (read.limit !== undefined && out.length >= read.limit)) return then(out);
    out.push(cursor.value);
    cursor.continue();
  };
}

function writesIn(tx: IDBTransaction): Writes {
  return {
    put(table, value, given) {
      const store = tx.objectStore(table.name);
      const key = idbKey(table as Table<unknown>, keyOfPut(table, value, given));
      if (store.keyPath === null) store.put(value, key);
      else store.put(value);
    },
    delete(table, key) {
      tx.objectStore(table.name).delete(idbKey(table, key));
    },
    deleteRange(table, r) {
      const range = idbRange(table, r);
      const store = tx.objectStore(table.name);
      if (range) store.delete(range);
      else store.clear();
    },
  };
}

/**
 * Runs `steps` one after another in `tx`, each to its end before the next starts: resolves with
 * their results when `tx` completes. A throw (or a failed request) aborts `tx`: nothing of any of
 * them is left.
 */
function runIn(tx: IDBTransaction, steps: Step<unknown>[], writable: boolean): Promise<unknown[]> {
  return new Promise<unknown[]>((resolve, reject) => {
    const results: unknown[] = [];
    let failure: { error: unknown } | undefined;
    tx.oncomplete = () => (failure ? reject(failure.error) : resolve(results));
    // A refusal for room shows only as the transaction's own error (a write is issued without
    // waiting for it), and wins over what the step threw because of it.
    tx.onabort = () => {
      const error = isQuotaError(tx.error) ? tx.error : failure?.error ?? tx.error ?? new Error('The IndexedDB transaction was aborted.');
      reject(isQuotaError(error) ? new StoreQuotaError(error) : error);
    };
    const writes = writable ? writesIn(tx) : NO_WRITES;
    let g = steps[0]!(writes);
    const advance = (answer: unknown) => {
      try {
        for (;;) {
          const next = g.next(answer);
          if (!next.done) return issue(tx, asRead(next.value), advance);
          results.push(next.value);
          const step = steps[results.length];
          if (!step) return;
          g = step(writes);
          answer = undefined;
        }
      } catch (e) {
        failure = { error: e };
        try {
          tx.abort();
        } catch {
          // already finished
        }
      }
    };
    advance(undefined);
  });
}

interface Waiting {
  tables: Table<unknown>[];
  step: Step<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface IdbEngineOptions {
  /** Whether Blobs may be stored (false where this IndexedDB refuses them: bodies become pieces). */
  keepsBlobs?: boolean;
  /** Called when the database closes (a newer schema's upgrade, the browser): caches go stale. */
  onClose?: () => void;
}

/**
 * An engine over a database whose object stores are the tables' names: one already open, or one
 * opened on first use and again on the next use after it closed (a newer worker's schema upgrade
 * asks every open connection to close: docs/browser.md, "Close on versionchange").
 *
 * Group commit: write steps that arrive while one is committing wait for it, then run together,
 * one after another, in one transaction — one flush for all of them instead of one each. When the
 * shared transaction fails (a step threw, a request failed), each runs again alone, so a failure
 * is only ever its own step's.
 */
export function idbEngine(database: IDBDatabase | (() => Promise<IDBDatabase>), options: IdbEngineOptions = {}): Engine & { db(): Promise<IDBDatabase> } {
  let current: Promise<IDBDatabase> | null = null;
  const db = (): Promise<IDBDatabase> => {
    current ??= (typeof database === 'function' ? database() : Promise.resolve(database)).then((d) => {
      const forget = () => {
        current = null;
        options.onClose?.();
      };
      d.addEventListener('versionchange', () => {
        d.close();
        forget();
      });
      d.addEventListener('close', forget);
      return d;
    }, (e) => {
      current = null;
      throw e;
    });
    return current;
  };
  const names = (tables: Table<unknown>[]) => [...new Set(tables.map((t) => t.name))];
  const writeTx = async (tables: Table<unknown>[]) => (await db()).transaction(names(tables), 'readwrite', { durability: 'strict' });
  let committing = false;
  let waiting: Waiting[] = [];

  const alone = async (w: Waiting) => {
    try {
      w.resolve((await runIn(await writeTx(w.tables), [w.step], true))[0]);
    } catch (e) {
      w.reject(e);
    }
  };

  async function commitWaiting(): Promise<void> {
    committing = true;
    while (waiting.length > 0) {
      const group = waiting;
      waiting = [];
      if (group.length === 1) {
        await alone(group[0]!);
        continue;
      }
      try {
        const results = await runIn(await writeTx(group.flatMap((w) => w.tables)), group.map((w) => w.step), true);
        group.forEach((w, i) => w.resolve(results[i]));
      } catch {
        for (const w of group) await alone(w);
      }
    }
    committing = false;
  }

  return {
    keepsBlobs: options.keepsBlobs ?? true,
    db,
    read: async (tables, step) => (await runIn((await db()).transaction(names(tables), 'readonly'), [step as Step<unknown>], false))[0] as never,
    write: <R>(tables: Table<unknown>[], step: Step<R>) => new Promise<R>((resolve, reject) => {
      waiting.push({ tables, step, resolve: resolve as (v: unknown) => void, reject });
      if (!committing) void commitWaiting();
    }),
    close() {
      void current?.then((d) => d.close(), () => {});
      current = null;
    },
  };
}
