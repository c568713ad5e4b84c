// deleteAllData(): every byte one swbucket instance keeps in this origin, gone — its database
// (buckets, objects, uploads, accounts) and its request log. The worker closes its connections when
// asked (versionchange, docs/browser.md) and reopens on its next request, which finds no database
// and creates an empty one with the root account: the service stays usable.
import { instanceNames } from '../../protocol/instance.ts';

/** Options of {@link deleteAllData}. */
export interface DeleteAllDataOptions {
  /**
   * How long to wait for a connection that does not close (the browser reports the deletion as
   * blocked) before giving up with a DeleteDataError. Default 10 s.
   */
  timeoutMs?: number;
}

/** What {@link deleteAllData} rejects with when a database could not be deleted (another tab held it open too long). */
export class DeleteDataError extends Error {
  constructor(readonly database: string, message: string) {
    super(message);
    this.name = 'DeleteDataError';
  }
}

/** Deletes one database; a deletion the browser reports as blocked is waited for, up to `timeoutMs`. */
function deleteDatabase(database: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const request = indexedDB.deleteDatabase(database);
    request.onsuccess = () => {
      clearTimeout(timer);
      resolve();
    };
    request.onerror = () => {
      clearTimeout(timer);
      reject(new DeleteDataError(database, `swbucket: the database "${database}" could not be deleted: ${request.error?.message ?? 'unknown error'}.`));
    };
    // Blocked: a connection that does not close on versionchange (another tab running an older
    // swbucket, or code of the app's own holding the database open). The deletion goes ahead as
    // soon as it closes; until then every new request to the database waits behind it.
    request.onblocked = () => {
      timer ??= setTimeout(() => reject(new DeleteDataError(database, `swbucket: the database "${database}" was not deleted within ${timeoutMs} ms: `
        + 'another connection to it stays open (another tab of this site with an older swbucket, or code that opened the database itself). '
        + 'Close the other tabs of this site; the deletion completes as soon as that connection closes.')), timeoutMs);
    };
  });
}

/**
 * Deletes the instance's two databases, `{name}` and `{name}-log`, and resolves once both are gone.
 * The next request through the worker starts from an empty store with the default root account.
 * Accepts the RunningService from startService(), or any `{ name }`.
 */
export async function deleteAllData(service: { name: string }, options: DeleteAllDataOptions = {}): Promise<void> {
  const names = instanceNames(service.name);
  const timeoutMs = options.timeoutMs ?? 10_000;
  await Promise.all([deleteDatabase(names.database, timeoutMs), deleteDatabase(names.logDatabase, timeoutMs)]);
}
