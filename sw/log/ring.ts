// The request log: a bounded ring buffer in its own IndexedDB database (newest `capacity` entries),
// written with relaxed durability off the response path, and broadcast live on a BroadcastChannel.
import { wrap, type DBSchema, type IDBPDatabase } from 'idb';
import { instanceNames } from '../../protocol/instance.ts';
import type { LogEntry } from '../core/handler.ts';
import { redactEntry } from '../core/redact.ts';

/** The default instance's log; another instance passes its own names (protocol/instance.ts). */
export const LOG_DB = instanceNames().logDatabase;
export const LOG_CHANNEL = instanceNames().logChannel;
export const LOG_CAPACITY = 10_000;
/**
 * How long an entry waits for others to share its transaction. Measured (bench figure 2): writing
 * each entry at once, a 1 MiB GET took 1.9× the storage floor's time; 40 ms later, 1.3×.
 */
export const LOG_DELAY_MS = 40;

/** A stored entry: the handler's entry plus its position in the log. */
export interface LoggedEntry extends LogEntry {
  seq: number;
}

interface LogSchema extends DBSchema {
  entries: { key: number; value: LogEntry & { seq?: number } };
}

/** Opens the log; the connection closes itself when another wants to upgrade or delete it. */
export function openLogDatabase(
  factory: IDBFactory = globalThis.indexedDB, onClose?: () => void, database = LOG_DB,
): Promise<IDBPDatabase<LogSchema>> {
  const request = factory.open(database, 1);
  request.onupgradeneeded = () => {
    request.result.createObjectStore('entries', { keyPath: 'seq', autoIncrement: true });
  };
  return (wrap(request) as unknown as Promise<IDBPDatabase<LogSchema>>).then((db) => {
    db.addEventListener('versionchange', () => {
      db.close();
      onClose?.();
    });
    db.addEventListener('close', () => onClose?.());
    return db;
  });
}

export interface RequestLog {
  write(entry: LogEntry): Promise<void>;
}

export interface RequestLogOptions {
  indexedDB?: IDBFactory;
  capacity?: number;
  /** Default LOG_DB. */
  database?: string;
  /** Default LOG_CHANNEL. */
  channel?: string;
  /** Default LOG_DELAY_MS. */
  delayMs?: number;
}

export function createRequestLog(options: RequestLogOptions = {}): RequestLog {
  const capacity = options.capacity ?? LOG_CAPACITY;
  let db: Promise<IDBPDatabase<LogSchema>> | null = null;
  const channel = typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel(options.channel ?? LOG_CHANNEL);
  let pending: LogEntry[] = [];
  let draining: Promise<void> | null = null;

  async function writeBatch(batch: LogEntry[]): Promise<void> {
    // Reopened after a close: a viewer may clear the log by deleting its database.
    const forget = () => {
      db = null;
    };
    db ??= openLogDatabase(options.indexedDB, forget, options.database).catch((e) => {
      forget();
      throw e;
    });
    const tx = (await db).transaction('entries', 'readwrite', { durability: 'relaxed' });
    const seqs = await Promise.all(batch.map((entry) => tx.store.add(entry)));
    const last = seqs.at(-1) ?? 0;
    // Keys increase by one per entry: everything at or below last - capacity has fallen off.
    if (last > capacity) await tx.store.delete(IDBKeyRange.upperBound(last - capacity));
    await tx.done;
    batch.forEach((entry, i) => channel?.postMessage({ ...entry, seq: seqs[i]! } satisfies LoggedEntry));
  }

  async function drain(): Promise<void> {
    try {
      while (pending.length > 0) await writeBatch(pending.splice(0));
    } finally {
      draining = null;
    }
  }

  const delayMs = options.delayMs ?? LOG_DELAY_MS;
  return {
    // Written a moment after the first entry of a batch, in one transaction with every entry that
    // came meanwhile: the request's own reads go first (a GET's body is a stored Blob, read from
    // IndexedDB as the page consumes it, and a log transaction at that moment delays it), and a
    // run of requests costs one log transaction, not one each. A request never waits for its entry.
    // Never a signature, whoever wrote the entry (the handler's are redacted already).
    write(entry) {
      pending.push(redactEntry(entry));
      draining ??= new Promise((resolve) => setTimeout(resolve, delayMs)).then(drain);
      return draining;
    },
  };
}

/** How many entries the log holds; 0 when it does not exist yet (and it is not created then). */
export async function countLog(factory: IDBFactory = globalThis.indexedDB, database = LOG_DB): Promise<number> {
  if (typeof factory.databases === 'function' && !(await factory.databases()).some((d) => d.name === database)) return 0;
  const db = await openLogDatabase(factory, undefined, database);
  try {
    return await db.count('entries');
  } finally {
    db.close();
  }
}

/** The newest entries first, at most `limit` (for the console and the tests). */
export async function readLog(limit = 100, factory?: IDBFactory, database = LOG_DB): Promise<LoggedEntry[]> {
  const db = await openLogDatabase(factory, undefined, database);
  try {
    const out: LoggedEntry[] = [];
    let cursor = await db.transaction('entries').store.openCursor(null, 'prev');
    while (cursor && out.length < limit) {
      out.push(cursor.value as LoggedEntry);
      cursor = await cursor.continue();
    }
    return out;
  } finally {
    db.close();
  }
}
