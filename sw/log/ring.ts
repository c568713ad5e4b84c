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

  return {
    // Written at once when the log is idle; entries that arrive while a write is under way go
    // together in the next transaction, so under load the log costs one transaction per batch,
    // not one per request, and a lone request waits for nothing.
    // Never a signature, whoever wrote the entry (the handler's are redacted already).
    write(entry) {
      pending.push(redactEntry(entry));
      draining ??= Promise.resolve().then(drain);
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
