// Fault injection at the engine layer (as MinIO's "naughty disk" does under its object layer): an
// engine that fails chosen write steps at their commit, so the store's rules are tested against a
// full disk or a failed write by the same suite, over any engine, without faults hand-made per store.
import type { Engine, Step } from './types.ts';

export interface FaultPlan {
  /**
   * The error the `n`th write step (from 1) fails with, after it ran and before it commits — it
   * leaves nothing, as a commit the disk refused — or undefined to let it commit.
   */
  failWrite(n: number): unknown;
}

/** `inner`, failing the write steps `plan` names; `writes` counts the write steps given so far. */
export function faultyEngine(inner: Engine, plan: FaultPlan): Engine & { readonly writes: number } {
  let writes = 0;
  return {
    read: (tables, step) => inner.read(tables, step),
    write<R>(tables: Parameters<Engine['write']>[0], step: Step<R>): Promise<R> {
      const fault = plan.failWrite(++writes);
      if (fault === undefined) return inner.write(tables, step);
      return inner.write(tables, function* (w) {
        yield* step(w);
        throw fault;
      });
    },
    close: () => inner.close(),
    get writes() {
      return writes;
    },
  };
}
