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
import { spawn } from 'node:child_process';
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

/** Directories this process holds, so that a second open here is refused like one elsewhere. */
const held = new Set<string>();

/**
 * An OS lock on `file`: flock(2), taken through util-linux's flock(1) in a child process that lives
 * as long as the lock is held (Node has no file-lock call). The kernel lets go of it when the
 * holder goes — the child's stdin is this process's pipe, so it ends with this process, SIGKILL
 * included — whatever the file holds, and whichever pid namespace (container) the other process
 * runs in, as long as both see the same file. 'held': another process holds it; 'unavailable':
 * this system has no flock(1) (macOS, Windows).
 */
function flockOf(file: string): Promise<{ release(): Promise<void> } | 'held' | 'unavailable'> {
  return new Promise((resolve, reject) => {
    // Detached: a Ctrl+C to the server's process group must not end the lock before the server has closed.
    const child = spawn('flock', ['--nonblock', '--exclusive', file, 'sh', '-c', 'echo locked && exec cat >/dev/null'], {
      stdio: ['pipe', 'pipe', 'pipe'], detached: true,
    });
    let out = '';
    let err = '';
    let locked = false;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.once('error', (e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? resolve('unavailable') : reject(e)));
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (locked || !out.includes('locked')) return;
      locked = true;
      // The lock is held by the child alone: neither it nor its pipes keep this process running.
      child.unref();
      for (const pipe of [child.stdin, child.stdout, child.stderr]) (pipe as unknown as { unref?: () => void }).unref?.();
      resolve({
        async release() {
          child.stdin.end();
          await exited;
        },
      });
    });
    child.once('exit', (code) => {
      if (locked) return;
      // flock(1) exits 1 when the lock is held elsewhere (--nonblock).
      if (code === 1 && err === '') resolve('held');
      else reject(new Error(`flock(1) failed (exit ${code}): ${err.trim()}`));
    });
  });
}

/** How long a directory whose lock is held is asked again before it is refused: 1 s. */
const LOCK_TRIES = 10;
const LOCK_RETRY_MS = 100;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Where flock(1) is missing: the lock is LOCK_FILE itself, created exclusively with this pid in it;
 * one naming a process that is gone is taken over. Weaker (another pid namespace, or a file
 * overwritten, defeats it): the README says so.
 */
function pidLock(dir: string, lock: string): () => Promise<void> {
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
  return async () => {
    try {
      unlinkSync(lock);
    } catch {
      // already gone: nothing to release
    }
  };
}

/**
 * Claims the directory for this process. LMDB itself lets several processes share an environment,
 * but one server per directory keeps the rules simple (no second writer behind a server's back).
 * The claim is an OS lock on LOCK_FILE (flockOf), so a server killed with SIGKILL leaves nothing to
 * take over; the file stays (deleting a locked file would let a third process lock a new one) and
 * holds the pid of its last holder, for people only.
 */
async function claimDirectory(dir: string): Promise<() => Promise<void>> {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, fsConstants.R_OK | fsConstants.W_OK);
  } catch (e) {
    throw new DataDirError(`cannot keep data in ${dir}: ${(e as Error).message}`, { cause: e });
  }
  const lock = join(dir, LOCK_FILE);
  if (held.has(dir)) throw new DataDirError(`${dir} is already in use by this process`);
  held.add(dir);
  try {
    let flock: Awaited<ReturnType<typeof flockOf>>;
    try {
      // A server killed a moment ago still holds the lock until its flock(1) sees the pipe from it
      // close and exits (milliseconds; longer on a loaded machine): asked again for a while first.
      for (let tries = 1; ; tries++) {
        flock = await flockOf(lock);
        if (flock !== 'held' || tries === LOCK_TRIES) break;
        await new Promise((r) => setTimeout(r, LOCK_RETRY_MS));
      }
    } catch (e) {
      throw new DataDirError(`cannot lock ${dir}: ${(e as Error).message}`, { cause: e });
    }
    if (flock === 'held') {
      const pid = /^\d+$/.exec(readFileSync(lock, 'utf8').trim())?.[0];
      throw new DataDirError(`${dir} is in use by another swbucket server${pid ? ` (pid ${pid}, as its lock file says)` : ''}: stop it first, or choose another directory`);
    }
    const release = flock === 'unavailable' ? pidLock(dir, lock) : flock.release;
    if (flock !== 'unavailable') writeFileSync(lock, `${process.pid}\n`);
    return async () => {
      held.delete(dir);
      await release();
    };
  } catch (e) {
    held.delete(dir);
    throw e;
  }
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
  const release = await claimDirectory(dir);
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
    await release();
    throw new DataDirError(`cannot open the data in ${dir}: ${(e as Error).message}`, { cause: e });
  }

  let closed = false;
  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    try {
      await env.close();
    } finally {
      await release();
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
