// The worker's request log as stored, read from a page with plain IndexedDB.
import type { Page } from 'playwright-core';
import type { LoggedEntry } from '../../../sw/log/ring.ts';

/** Every stored entry, oldest first; [] when the worker has not created the log yet. */
export function storedLog(page: Page): Promise<LoggedEntry[]> {
  return page.evaluate(async () => {
    // Opening a database that does not exist would create it empty, without the worker's
    // 'entries' store, and the worker's log would then fail: look before opening.
    if (!(await indexedDB.databases()).some((d) => d.name === 'swbucket-log')) return [];
    return new Promise<LoggedEntry[]>((resolve, reject) => {
      const open = indexedDB.open('swbucket-log');
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const db = open.result;
        const get = db.transaction('entries').objectStore('entries').getAll();
        get.onsuccess = () => {
          db.close();
          resolve(get.result as LoggedEntry[]);
        };
        get.onerror = () => reject(get.error);
      };
    });
  });
}
