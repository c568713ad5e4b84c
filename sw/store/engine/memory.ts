// The engine in memory: each table a sorted array. Steps run synchronously, one at a time; a step
// that throws is undone from its log. Records are copied in and out (structuredClone), as a real
// engine would store them. For tests, and as the reference the shared suite checks the other
// engines against; `keepsBlobs` chooses which body form the store uses over it.
import { checkKey, compareKeys, inRange } from './keys.ts';
import { NO_WRITES, runSync } from './drive.ts';
import { keyOfPut, type Engine, type Key, type Range, type Read, type Step, type Table, type Writes } from './types.ts';

interface Rows {
  keys: Key[];
  values: unknown[];
}

/** Index of the first key ≥ `key` (or > with `after`). */
function seek(rows: Rows, key: Key, after = false): number {
  let lo = 0;
  let hi = rows.keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const c = compareKeys(rows.keys[mid]!, key);
    if (c < 0 || (after && c === 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function memoryEngine(options: { keepsBlobs?: boolean } = {}): Engine {
  const tables = new Map<string, Rows>();
  let closed = false;
  const rowsOf = (t: Table<unknown>): Rows => {
    let rows = tables.get(t.name);
    if (!rows) tables.set(t.name, (rows = { keys: [], values: [] }));
    return rows;
  };

  function indexesIn(rows: Rows, r: Range): [number, number] {
    const from = seek(rows, r.start ?? r.prefix, r.startOpen === true && r.start !== undefined);
    let to = from;
    while (to < rows.keys.length && (r.end === undefined || compareKeys(rows.keys[to]!, r.end) <= 0) && inRange(rows.keys[to]!, { prefix: r.prefix })) to++;
    // (An open end leaves out only the end key itself.)
    if (r.end && r.endOpen && to > from && compareKeys(rows.keys[to - 1]!, r.end) === 0) to--;
    return [from, to];
  }

  const answer = (read: Exclude<Read, { op: 'all' }>): unknown => {
    const rows = rowsOf(read.table);
    if (read.op === 'get') {
      const at = seek(rows, checkKey(read.key));
      return at < rows.keys.length && compareKeys(rows.keys[at]!, read.key) === 0 ? structuredClone(rows.values[at]) : undefined;
    }
    const [from, to] = indexesIn(rows, read.range);
    if (read.op === 'count') return to - from;
    const picked = rows.values.slice(from, to);
    if (read.reverse) picked.reverse();
    return structuredClone(read.limit === undefined ? picked : picked.slice(0, read.limit));
  };

  function run<R>(step: Step<R>, writable: boolean): R {
    if (closed) throw new Error('The memory engine is closed.');
    const undo: (() => void)[] = [];
    const remove = (rows: Rows, at: number, count: number) => {
      const keys = rows.keys.splice(at, count);
      const values = rows.values.splice(at, count);
      undo.push(() => {
        rows.keys.splice(at, 0, ...keys);
        rows.values.splice(at, 0, ...values);
      });
    };
    const writes: Writes = {
      put(table, value, given) {
        const rows = rowsOf(table as Table<unknown>);
        const key = checkKey(keyOfPut(table, value, given));
        const at = seek(rows, key);
        if (at < rows.keys.length && compareKeys(rows.keys[at]!, key) === 0) remove(rows, at, 1);
        rows.keys.splice(at, 0, key);
        rows.values.splice(at, 0, structuredClone(value));
        undo.push(() => {
          rows.keys.splice(at, 1);
          rows.values.splice(at, 1);
        });
      },
      delete(table, key) {
        const rows = rowsOf(table);
        const at = seek(rows, checkKey(key));
        if (at < rows.keys.length && compareKeys(rows.keys[at]!, key) === 0) remove(rows, at, 1);
      },
      deleteRange(table, r) {
        const rows = rowsOf(table);
        const [from, to] = indexesIn(rows, r);
        if (to > from) remove(rows, from, to - from);
      },
    };
    try {
      return runSync(step, writable ? writes : NO_WRITES, answer);
    } catch (e) {
      for (const u of undo.reverse()) u();
      throw e;
    }
  }

  return {
    keepsBlobs: options.keepsBlobs ?? false,
    read: async (_tables, step) => run(step, false),
    write: async (_tables, step) => run(step, true),
    close() {
      closed = true;
    },
  };
}
