// Fault injection at the engine layer (as MinIO's "naughty disk" does under its object layer): an
// engine that fails chosen write steps at their commit, or refuses chosen records as they are put,
// so the store's rules are tested against a full disk, a failed write or a refused body by the same
// suite, over any engine, without faults hand-made per store.
import { StoreQuotaError } from '../errors.ts';
import type { Engine, Step, Table, Writes } from './types.ts';

export interface FaultPlan {
  /**
   * The error the `n`th write step (from 1) fails with, after it ran and before it commits — it
   * leaves nothing, as a commit the disk refused — or undefined to let it commit.
   */
  failWrite?(n: number): unknown;
  /**
   * The error a put of `value` into `table` fails with, or undefined to let it through: the step
   * fails there and leaves nothing, as IndexedDB fails a transaction whose put it refuses (WebKit's
   * ephemeral storage refusing a Blob, say).
   */
  refusePut?(table: Table<unknown>, value: unknown): unknown;
}

/** A full disk, as an engine reports it: what failWrite returns to make a write find no room. */
export const diskFull = (): StoreQuotaError => new StoreQuotaError(new Error('injected: the disk is full'), 'The disk is full.');

/** `inner`, failing what `plan` names; `writes` counts the write steps given so far. */
export function faultyEngine(inner: Engine, plan: FaultPlan): Engine & { readonly writes: number } {
  let writes = 0;
  const guarded = (w: Writes): Writes => ({
    ...w,
    put(table, value, key) {
      const refusal = plan.refusePut?.(table as Table<unknown>, value);
      if (refusal !== undefined) throw refusal;
      w.put(table, value, key);
    },
  });
  return {
    keepsBlobs: inner.keepsBlobs,
    read: (tables, step) => inner.read(tables, step),
    write<R>(tables: Parameters<Engine['write']>[0], step: Step<R>): Promise<R> {
      const fault = plan.failWrite?.(++writes);
      return inner.write(tables, function* (w) {
        const result = yield* step(guarded(w));
        if (fault !== undefined) throw fault;
        return result;
      });
    },
    close: () => inner.close(),
    get writes() {
      return writes;
    },
  };
}
