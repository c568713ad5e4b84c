// The store on disk, for the Node server's --data DIR: the storage rules (sw/store/rules/store.ts)
// over one LMDB environment in DIR (engine-lmdb.ts). This file holds what only a directory has: one
// server's claim on it, the layout version, and the upgrade of a directory an earlier version wrote
// (lmdb-upgrade.ts).
//
// Durability and atomicity. The environment is opened with `overlappingSync: false`, so lmdb-js
// resolves a write only after LMDB's commit has synced the data and the meta page (fdatasync): what
// a method acknowledged is on disk. (lmdb-js's default on Linux, overlappingSync, resolves at commit
// and flushes afterwards; a power cut could then lose acknowledged writes.) LMDB's copy-on-write
// pages and meta-page switch mean a process killed at any instant leaves the last committed state:
// never part of an object, never a body without its record.
import { accessSync, closeSync, constants as fsConstants, fsyncSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { NEW_STORE, openStore } from '../sw/store/rules/store.ts';
import { ACCOUNTS, USAGE_EXACT } from '../sw/store/schema.ts';
import type { Store } from '../sw/store/types.ts';
import { lmdbEngine } from './engine-lmdb.ts';
import { DataDirError, upgradeLayout } from './lmdb-upgrade.ts';

export { isDiskFull } from './engine-lmdb.ts';
export { DataDirError } from './lmdb-upgrade.ts';

/** Names one server's claim on a directory (see claimDirectory). */
const LOCK_FILE = 'swbucket.lock';

// ---- the directory ----------------------------------------------------------------------------

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Directories this process holds, so that a second open here is refused like one elsewhere. */
const held = new Set<string>();

/**
 * Claims the directory for this process. LMDB itself lets several processes share an environment,
 * but one server per directory keeps the rules simple (no second writer behind a server's back),
 * so the first server writes its pid to LOCK_FILE. A lock whose process is gone (killed with
 * SIGKILL, say) is taken over; so is one naming this very pid when this process does not hold the
 * directory (a restarted container can give the next server the same pid).
 */
function claimDirectory(dir: string): () => void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, fsConstants.R_OK | fsConstants.W_OK);
  } catch (e) {
    throw new DataDirError(`cannot keep data in ${dir}: ${(e as Error).message}`, { cause: e });
  }
  const lock = join(dir, LOCK_FILE);
  if (held.has(dir)) throw new DataDirError(`${dir} is already in use by this process`);
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(lock, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' || attempt > 0) throw new DataDirError(`cannot lock ${dir}: ${(e as Error).message}`, { cause: e });
    }
    const pid = Number.parseInt(readFileSync(lock, 'utf8'), 10);
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
      throw new DataDirError(`${dir} is in use by another swbucket server (pid ${pid}); if none is running, remove ${lock}`);
    }
    unlinkSync(lock);
  }
  held.add(dir);
  return () => {
    held.delete(dir);
    try {
      unlinkSync(lock);
    } catch {
      // already gone: nothing to release
    }
  };
}

// ---- the store --------------------------------------------------------------------------------

export interface LmdbStoreOptions {
  /** The directory of the environment: created when missing, held by one store at a time. */
  path: string;
}

export type LmdbStore = Store & {
  /** Waits for writes in flight, closes the environment and releases the directory. */
  close(): Promise<void>;
  readonly path: string;
  /** The layout an earlier swbucket wrote the directory in, when this open upgraded it. */
  readonly upgradedFrom?: number;
};

export async function openLmdbStore(options: LmdbStoreOptions): Promise<LmdbStore> {
  const dir = resolve(options.path);
  const release = claimDirectory(dir);
  let env: RootDatabase;
  try {
    env = open({
      path: dir,
      maxDbs: 16,
      // Resolve writes only once synced: see the top of this file.
      overlappingSync: false,
      // lmdb-js's event-turn batching leaves a promise of its own unhandled when a commit fails,
      // which would stop the server on a full disk. Writes still share commits when queued together.
      eventTurnBatching: false,
    });
  } catch (e) {
    release();
    throw new DataDirError(`cannot open the data in ${dir}: ${(e as Error).message}`, { cause: e });
  }

  let closed = false;
  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    try {
      await env.close();
    } finally {
      release();
    }
  }

  const engine = lmdbEngine(env, { dir });
  let layout: Awaited<ReturnType<typeof upgradeLayout>>;
  try {
    layout = await upgradeLayout(env, dir);
    // The root account, when missing (a new directory, or one whose first open stopped short).
    await engine.write([ACCOUNTS, USAGE_EXACT], NEW_STORE);
    if (layout.created) {
      // LMDB syncs its files, not the directory: make the new files' names durable too.
      const fd = openSync(dir, 'r');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
  } catch (e) {
    await close();
    throw e;
  }

  const store = openStore(engine);
  return Object.assign(store, {
    path: dir,
    ...(layout.upgradedFrom !== undefined ? { upgradedFrom: layout.upgradedFrom } : {}),
    close: async () => {
      engine.close();
      await close();
    },
  });
}
