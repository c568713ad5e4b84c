// Who holds bodies apart from every object (schema.ts, HELD_BODIES) and whether it still runs: an
// import, for as long as it runs, and each runtime (a worker, a page using the store itself, a
// server process), for the replaced bodies it is still streaming to readers. What a holder that
// stopped (a killed server, a closed tab, a stopped worker) left is deleted by sweepHeld().
//
// "Still runs" is known in this runtime by `running`, and across the runtimes of a browser origin by
// a Web Lock each holder keeps while it runs: a browser releases the locks of a runtime that ended.
// A runtime without Web Locks is a server process, which owns its data alone.
import type { Store } from './types.ts';

const running = new Set<string>();
const lockName = (holder: string) => `swbucket holder ${holder}`;
const webLocks = (): LockManager | undefined => (globalThis as { navigator?: Navigator }).navigator?.locks;

/** Runs `work` as holder `holder`, known to be running until it settles. */
export async function asRunning<T>(holder: string, work: () => Promise<T>): Promise<T> {
  running.add(holder);
  try {
    const locks = webLocks();
    return await (locks ? locks.request(lockName(holder), work) : work());
  } finally {
    running.delete(holder);
  }
}

let runtime: string | undefined;

/** This runtime's holder, running for as long as the runtime lives. */
export function runtimeHolder(): string {
  if (runtime === undefined) {
    runtime = `runtime-${crypto.randomUUID()}`;
    running.add(runtime);
    void webLocks()?.request(lockName(runtime), () => new Promise<void>(() => {})).catch(() => {});
  }
  return runtime;
}

/** Whether `holder` has stopped: not running here, and (in a browser) its lock is free. */
async function hasStopped(holder: string): Promise<boolean> {
  if (running.has(holder)) return false;
  const locks = webLocks();
  if (!locks) return true;
  return locks.request(lockName(holder), { ifAvailable: true }, (lock) => lock !== null);
}

/** Deletes what holders that stopped held; how many holders that was. */
export async function sweepHeld(store: Store): Promise<number> {
  let swept = 0;
  for (const holder of await store.listHolders()) {
    if (!(await hasStopped(holder))) continue;
    await store.dropHeld(holder);
    swept++;
  }
  return swept;
}
