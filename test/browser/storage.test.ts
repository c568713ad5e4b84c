// Data that lasts, in real Chromium: startService() asks for persistent storage (unless
// `persist: false`) and says what the browser answered; deleteAllData() deletes the instance's two
// databases, waits (bounded) for a connection that will not close, and leaves the service usable;
// the console's Settings shows the storage state and usage, and deletes everything after a
// confirmation that names what goes. The lab page bundles src/index.ts as in start-options.test.ts.
import { describe, it, expect, beforeAll, afterAll, afterEach, inject } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { StaticServer } from './support/static-server.ts';
import { startLab } from './support/lab.ts';
import type * as Swbucket from '../../src/index.ts';
import { expectNotice, formatBytes, freshService, nav, openConsole, storedLog, withClient } from './console-helpers.ts';

type StorageLab = Pick<typeof Swbucket, 'createClient' | 'startService' | 'deleteAllData' | 'DeleteDataError'>;

declare global {
  interface Window {
    storageLab: StorageLab;
    __persistCalls: number;
  }
}


/** Runs at document start: counts calls of navigator.storage.persist(). */
function countPersistCalls(): void {
  window.__persistCalls = 0;
  const real = StorageManager.prototype.persist;
  StorageManager.prototype.persist = function persist(this: StorageManager) {
    window.__persistCalls++;
    return real.call(this);
  };
}

let browser: Browser;
let site: StaticServer;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  ({ browser, site } = await startLab('storageLab', ['createClient', 'startService', 'deleteAllData', 'DeleteDataError']));
});
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

async function labPage(): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  await context.addInitScript(countPersistCalls);
  const page = await context.newPage();
  await page.goto(site.url + '/lab.html');
  await page.waitForFunction(() => Boolean(window.storageLab), null, { timeout: 10_000 });
  return page;
}

describe('persistent storage', () => {
  it('startService() asks for it once and reports what the browser says', async () => {
    const page = await labPage();
    const out = await page.evaluate(async () => {
      const service = await window.storageLab.startService();
      return { reported: service.storage.persisted, now: await navigator.storage.persisted(), calls: window.__persistCalls };
    });
    expect(out.calls, 'persist() was called once').toBe(1);
    expect(typeof out.reported, 'Chromium gives an answer').toBe('boolean');
    expect(out.reported, 'storage.persisted is what navigator.storage.persisted() says').toBe(out.now);
  });

  it('persist: false never calls persist(), and still reports the state', async () => {
    const page = await labPage();
    const out = await page.evaluate(async () => {
      const service = await window.storageLab.startService({ persist: false });
      return { reported: service.storage.persisted, now: await navigator.storage.persisted(), calls: window.__persistCalls };
    });
    expect(out.calls, 'persist() was not called').toBe(0);
    expect(out.reported).toBe(out.now);
  });
});

describe('deleteAllData', () => {
  it('deletes the database and the request log; the service then starts again empty, with root', async () => {
    const page = await labPage();
    const before = await page.evaluate(async () => {
      const service = await window.storageLab.startService();
      const client = window.storageLab.createClient({ accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
      await client.createBucket('old');
      await client.createBucket('older');
      for (let i = 0; i < 3; i++) await client.putObject('old', `k${i}`, `v${i}`);
      await client.putAccount('alice', { secretAccessKey: 'alice-secret' });
      return { buckets: (await client.listBuckets()).buckets.length, name: service.name };
    });
    expect(before).toEqual({ buckets: 2, name: 'swbucket' });
    // The log is written off the response path: wait until it holds the requests above.
    await expect.poll(async () => (await storedLog(page)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(6);

    const after = await page.evaluate(async () => {
      const service = await window.storageLab.startService();
      await window.storageLab.deleteAllData(service);
      /** Each database still there, with the number of records in each of its stores. */
      const left: Record<string, number> = {};
      for (const { name } of await indexedDB.databases()) {
        if (!name) continue;
        const db = await new Promise<IDBDatabase>((resolve, reject) => {
          const r = indexedDB.open(name);
          r.onsuccess = () => resolve(r.result);
          r.onerror = () => reject(r.error);
        });
        let records = 0;
        for (const store of db.objectStoreNames) {
          records += await new Promise<number>((resolve) => {
            const c = db.transaction(store).objectStore(store).count();
            c.onsuccess = () => resolve(c.result);
          });
        }
        db.close();
        left[name] = records;
      }
      const client = window.storageLab.createClient({ accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
      const listed = (await client.listBuckets()).buckets.map((b) => b.name);
      const alice = window.storageLab.createClient({ accessKeyId: 'alice', secretAccessKey: 'alice-secret' });
      const aliceGone = await alice.listBuckets().then(() => 'still there', (e: { code?: string }) => e.code ?? String(e));
      await client.createBucket('fresh');
      await client.putObject('fresh', 'again.txt', 'after the wipe');
      const got = await (await client.getObject('fresh', 'again.txt')).response.text();
      const oldObject = await client.getObject('old', 'k0').then(() => 'still there', (e: { code?: string }) => e.code ?? String(e));
      return { left, listed, aliceGone, got, oldObject };
    });
    // Deleted, or (were a request to slip in) recreated empty: no record of the old data in either.
    expect(after.left.swbucket ?? 0, 'the database holds nothing').toBe(0);
    expect(after.left['swbucket-log'] ?? 0, 'the request log holds nothing').toBe(0);
    expect(after.listed, 'listBuckets through the worker is empty').toEqual([]);
    expect(after.aliceGone, 'accounts went with the database').toBe('AccessDenied');
    expect(after.got, 'PUT + GET through the worker works again').toBe('after the wipe');
    expect(after.oldObject).toBe('NoSuchBucket');
  });

  it('waits for a connection that will not close, then gives up with a DeleteDataError; the deletion completes once it closes', async () => {
    const page = await labPage();
    const out = await page.evaluate(async () => {
      const service = await window.storageLab.startService();
      const client = window.storageLab.createClient({ accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
      await client.createBucket('held');
      // A connection of the page's own that ignores versionchange.
      const holder = await new Promise<IDBDatabase>((resolve, reject) => {
        const r = indexedDB.open('swbucket');
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      const started = performance.now();
      const error = await window.storageLab.deleteAllData(service, { timeoutMs: 700 }).then(() => null, (e: Error & { database?: string }) => ({
        name: e.name, database: e.database, message: e.message, isDeleteDataError: e instanceof window.storageLab.DeleteDataError,
      }));
      const waitedMs = performance.now() - started;
      holder.close();
      // The queued deletion goes ahead now: the next request finds an empty store.
      let listed: string[] = ['not yet'];
      for (let i = 0; i < 50 && listed.length > 0; i++) {
        listed = (await client.listBuckets()).buckets.map((b) => b.name);
        if (listed.length > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return { error, waitedMs, listed };
    });
    expect(out.error).toMatchObject({ name: 'DeleteDataError', database: 'swbucket', isDeleteDataError: true });
    expect(out.error!.message).toMatch(/"swbucket" was not deleted within 700 ms: another connection to it stays open/);
    expect(out.waitedMs, 'it waited for the connection before giving up').toBeGreaterThanOrEqual(650);
    expect(out.waitedMs).toBeLessThan(5000);
    expect(out.listed).toEqual([]);
  });
});

describe('the console', () => {
  let page: Page;
  beforeAll(async () => {
    ({ page } = await openConsole(browser, inject('baseURL')));
    await freshService(page);
  });
  afterAll(async () => {
    await page?.context().close();
  });

  it('shows the storage state and usage, and deletes everything after naming what goes', async () => {
    await withClient(page, async (c) => {
      await c.createBucket('photos');
      await c.createBucket('notes');
      await c.putObject('notes', 'a.txt', 'a');
    }, null);
    await expect.poll(async () => (await storedLog(page)).length).toBeGreaterThanOrEqual(3);

    await nav(page, 'Settings');
    const state = await page.evaluate(async () => ({ persisted: await navigator.storage.persisted(), quota: (await navigator.storage.estimate()).quota ?? 0 }));
    await expect.poll(() => page.getByTestId('settings-persistence').textContent()).toContain(state.persisted ? 'persistent' : 'best-effort');
    expect(await page.getByTestId('settings-storage-warning').count(), 'the warning shows exactly when best-effort').toBe(state.persisted ? 0 : 1);
    if (!state.persisted) expect(await page.getByTestId('settings-storage-warning').textContent()).toMatch(/install this site as an app.*bookmark it.*allow its\s+notifications/s);
    expect(await page.getByTestId('settings-usage').textContent()).toMatch(new RegExp(`^\\s*\\d+(\\.\\d)? (B|KiB|MiB|GiB) of ${formatBytes(state.quota).replace('.', '\\.')} allowed`));
    // Chromium's estimate breaks usage down (usageDetails.indexedDB).
    expect(await page.getByTestId('settings-idb-usage').textContent()).toMatch(/^\s*\d+(\.\d)? (B|KiB|MiB) in IndexedDB/);

    const logged = (await storedLog(page)).length;
    const dialogs: string[] = [];
    page.on('dialog', (d) => dialogs.push(d.message()));
    await page.getByTestId('settings-delete-all').click();
    await expectNotice(page, 'Deleted all data of "swbucket" (databases swbucket and swbucket-log)');
    expect(dialogs).toHaveLength(1);
    expect(dialogs[0]).toContain('Delete all data of the swbucket instance "swbucket"?');
    expect(dialogs[0]).toContain('The database "swbucket" (2 buckets, with every object, upload and account)');
    // The count is taken when the button is pressed: the log may have grown by the requests since.
    const entries = Number(/"swbucket-log" \((\d+) request-log entries\)/.exec(dialogs[0]!)?.[1]);
    expect(entries).toBeGreaterThanOrEqual(logged);

    await nav(page, 'Buckets');
    await expect.poll(() => page.getByTestId('buckets-empty').count()).toBe(1);
    expect(await page.getByTestId('bucket-row').count()).toBe(0);
    expect((await withClient(page, (c) => c.listBuckets(), null)).buckets).toEqual([]);
  });
});
