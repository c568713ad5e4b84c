// The worker's request log as stored, read from a page with plain IndexedDB: from Node (storedLog, in
// a Playwright page or any engine's EnginePage), or inside the page by a test's own tools
// (readLogInPage, sent there as source text).
import { LOG_DELAY_MS, type LoggedEntry } from '../../../sw/log/ring.ts';
import { enginePage, type AnyPage } from './page.ts';

/**
 * Every stored entry, oldest first, once the worker has written what it holds: it writes a batch
 * LOG_DELAY_MS after the batch's first entry, so the log counts as written when two reads that far
 * apart (three times over) agree. [] when the worker has not created the log yet.
 */
export async function storedLog(page: AnyPage): Promise<LoggedEntry[]> {
  let last = await readNow(page);
  const until = Date.now() + 10_000;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 3 * LOG_DELAY_MS));
    const now = await readNow(page);
    if ((now.length === last.length && now.at(-1)?.seq === last.at(-1)?.seq) || Date.now() > until) return now;
    last = now;
  }
}

function readNow(page: AnyPage): Promise<LoggedEntry[]> {
  return enginePage(page).evaluate(readLogInPage);
}

/**
 * Every entry stored at this moment (the worker writes each a moment after answering, so it may lag);
 * [] when the worker has not created the log yet. Runs in the page and reaches it as source text
 * (READ_LOG_IN_PAGE for a test's tools), so it refers to nothing outside itself.
 */
export async function readLogInPage(): Promise<LoggedEntry[]> {
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
}

export const READ_LOG_IN_PAGE = readLogInPage.toString();
