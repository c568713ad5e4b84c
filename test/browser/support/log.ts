// The worker's request log as stored, read from a page with plain IndexedDB.
import type { Page } from 'playwright-core';
import { LOG_DELAY_MS, type LoggedEntry } from '../../../sw/log/ring.ts';

/**
 * Every stored entry, oldest first, once the worker has written what it holds: it writes a batch
 * LOG_DELAY_MS after the batch's first entry, so the log counts as written when two reads that far
 * apart (three times over) agree. [] when the worker has not created the log yet.
 */
export async function storedLog(page: Page): Promise<LoggedEntry[]> {
  let last = await readNow(page);
  const until = Date.now() + 10_000;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 3 * LOG_DELAY_MS));
    const now = await readNow(page);
    if ((now.length === last.length && now.at(-1)?.seq === last.at(-1)?.seq) || Date.now() > until) return now;
    last = now;
  }
}

function readNow(page: Page): Promise<LoggedEntry[]> {
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
