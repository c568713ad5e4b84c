// Error states the console shows when its own reads fail, made to fail from the page's side only
// (the worker is untouched): the request log's database refusing to open, and the account list
// request failing for root. Each view must say so, and recover when the failure is gone.
import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './support/chromium.ts';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** A console page whose window has `faults` installed before any of its scripts run. */
async function pageWithFaults(hash: string, faults: () => void): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  await context.addInitScript(faults);
  const page = await context.newPage();
  await page.goto(`${inject('baseURL')}/${hash}`);
  await page.waitForFunction(() => Boolean((window as { swbucket?: unknown }).swbucket), null, { timeout: 20_000 });
  return { context, page };
}

describe('console error states', () => {
  it('the request log says it cannot read the log, and reads it again once it can', async () => {
    const { context, page } = await pageWithFaults('#/log', () => {
      const w = window as unknown as { __refuseLog: boolean };
      w.__refuseLog = true;
      const open = IDBFactory.prototype.open;
      IDBFactory.prototype.open = function (this: IDBFactory, name: string, version?: number) {
        if (name === 'swbucket-log' && w.__refuseLog) throw new DOMException('refused by the test', 'UnknownError');
        return version === undefined ? open.call(this, name) : open.call(this, name, version);
      };
    });
    try {
      const error = page.locator('[data-testid=log-error]');
      await error.waitFor({ timeout: 15_000 });
      expect(await error.textContent()).toContain('refused by the test');
      // Live entries still stream in over the channel; the stored ones could not be read.
      const before = Number(await page.locator('[data-testid=log-table]').getAttribute('data-count') ?? 0);

      // The fault lifted, the view read again when it is opened again.
      await page.evaluate(() => {
        (window as unknown as { __refuseLog: boolean }).__refuseLog = false;
        location.hash = '#/settings';
      });
      await page.locator('[data-testid=settings-version]').waitFor();
      // A request made while the log view is closed reaches the view only through the stored log.
      await page.evaluate(() => (window as unknown as { swbucket: { client: { listBuckets(): Promise<unknown> } } }).swbucket.client.listBuckets());
      await page.evaluate(() => {
        location.hash = '#/log';
      });
      await page.locator('[data-testid=log-table]').waitFor({ timeout: 15_000 });
      expect(await page.locator('[data-testid=log-error]').count()).toBe(0);
      // The stored log now holds that request, which the failed read could not have shown.
      await expect.poll(async () => Number(await page.locator('[data-testid=log-table]').getAttribute('data-count')), { timeout: 10_000 })
        .toBeGreaterThan(before);
    } finally {
      await context.close();
    }
  });

  it('accounts (root) says the list failed, and lists again on refresh', async () => {
    const { context, page } = await pageWithFaults('#/accounts', () => {
      const w = window as unknown as { __failAccounts: boolean };
      w.__failAccounts = true;
      const real = window.fetch.bind(window);
      window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
        const url = input instanceof Request ? input.url : String(input);
        if (w.__failAccounts && url.includes('accounts')) return Promise.reject(new TypeError('network down (test)'));
        return real(input, init);
      };
    });
    try {
      const error = page.locator('[data-testid=accounts-error]');
      await error.waitFor({ timeout: 15_000 });
      expect(await error.textContent()).toContain('network down (test)');
      expect(await page.locator('[data-testid=accounts-table]').count()).toBe(0);

      await page.evaluate(() => {
        (window as unknown as { __failAccounts: boolean }).__failAccounts = false;
      });
      await page.locator('[data-testid=accounts-refresh]').click();
      await page.locator('[data-testid=accounts-table]').waitFor({ timeout: 15_000 });
      expect(await page.locator('[data-testid=accounts-error]').count()).toBe(0);
      expect(await page.locator('[data-testid=account-row][data-id=svcadmin]').count()).toBe(1);
    } finally {
      await context.close();
    }
  });
});
