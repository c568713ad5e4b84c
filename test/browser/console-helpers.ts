// Shared by the console click-through tests (console-*.test.ts): open the console in real
// Chromium (useConsolePage: once per file, on a fresh service), reach the typed client the page
// exposes (to seed data and to check what the service holds, never to drive a feature), move
// between views as a user does, and save screenshots.
import { expect, vi } from 'vitest';
import type { Browser, BrowserContext, Page, Locator } from 'playwright-core';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { openServicePage } from './support/page.ts';
import { useChromiumPage, type ChromiumPage } from './support/fixture.ts';
import type { Client, createClient } from '../../src/client/index.ts';
import type { LoggedEntry } from '../../sw/log/ring.ts';

// Polls wait for what the page shows after a round trip through the worker and IndexedDB: give
// them room on a busy machine (they return as soon as the condition holds).
vi.setConfig({ expect: { poll: { timeout: 10_000, interval: 50 } } });

export const KiB = 1024;
export const MiB = 1024 * KiB;

/** What the page puts on window once the worker controls it. */
export interface ConsoleWindow {
  swbucket: { client: Client; createClient: typeof createClient; endpoint: string; mount: string; version: string };
}

export interface Console {
  context: BrowserContext;
  page: Page;
}

/**
 * How the console's confirm() and prompt() dialogs are answered: accepted (a prompt with `answer`)
 * unless a test sets `accept` false for a moment; every message is kept in `seen`.
 */
export const dialogs = { accept: true, seen: [] as string[], /** What a prompt() is answered with. */ answer: '' };

/** The console at 1280×800, confirm() dialogs answered as `dialogs` says, signed in as root, showing the buckets view. */
export async function openConsole(browser: Browser, baseURL: string): Promise<Console> {
  const { context, page } = await openServicePage(browser, baseURL);
  page.setDefaultTimeout(15_000);
  await page.setViewportSize({ width: 1280, height: 800 });
  page.on('dialog', (d) => {
    dialogs.seen.push(d.message());
    void (dialogs.accept ? d.accept(d.type() === 'prompt' ? dialogs.answer : undefined) : d.dismiss());
  });
  await signedInAsRoot(page);
  return { context, page };
}

/**
 * Chromium and the console in it (openConsole), on an empty service (freshService), before the
 * file's tests; closed after them. Read `.page` in tests and hooks.
 */
export function useConsolePage(): ChromiumPage {
  return useChromiumPage(async (browser, baseURL) => {
    const { page } = await openConsole(browser, baseURL);
    await freshService(page);
    return page;
  });
}

/** Runs `fn(client, arg)` in the page with the root client (seeding and checking only). */
export function withClient<A, R>(page: Page, fn: (client: Client, arg: A) => Promise<R>, arg: A): Promise<R> {
  return page.evaluate(
    async ({ source, arg }) => {
      const client = (window as unknown as ConsoleWindow).swbucket.client;
      // eslint-disable-next-line @typescript-eslint/no-implied-eval
      const f = new Function(`return (${source})`)() as (c: Client, a: unknown) => Promise<unknown>;
      return f(client, arg);
    },
    { source: fn.toString(), arg },
  ) as Promise<R>;
}

/** Follows a link of the main navigation, as a user does. */
export async function nav(page: Page, label: 'Buckets' | 'Uploads' | 'Accounts' | 'Request log' | 'Playground' | 'Sync' | 'Settings'): Promise<void> {
  const link = page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: label, exact: true });
  await link.click();
  await page.waitForFunction((label) => [...document.querySelectorAll('nav[aria-label=Views] a')]
    .some((a) => a.textContent === label && a.getAttribute('aria-current') === 'page'), label);
}

/** A hash route typed into the address bar (for routes no link leads to, e.g. a missing bucket). */
export async function visit(page: Page, hash: string): Promise<void> {
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
}

/** Opens a bucket from the buckets view by clicking its name. */
export async function openBucket(page: Page, bucket: string): Promise<void> {
  await nav(page, 'Buckets');
  await page.getByTestId('refresh-buckets').click(); // the list may predate the seeding
  await page.locator(`[data-testid=bucket-row][data-bucket="${bucket}"]`).getByRole('link', { name: bucket, exact: true }).click();
  await page.waitForFunction((b) => document.querySelector('[data-testid=crumb-bucket]')?.textContent === b, bucket);
}

/** Keys of the object rows shown, top to bottom. */
export function shownKeys(page: Page): Promise<string[]> {
  return page.getByTestId('object-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key') ?? ''));
}

/** The text of every notice shown (bottom right). */
export function notices(page: Page): Promise<string[]> {
  return page.getByTestId('notice').allTextContents();
}

/**
 * Waits until some notice contains `text`, then dismisses every notice (as a user would, with its
 * × button), so none covers what the next step clicks.
 */
export async function expectNotice(page: Page, text: string | RegExp): Promise<void> {
  await expect.poll(async () => (await notices(page)).some((n) => (typeof text === 'string' ? n.includes(text) : text.test(n))), {
    message: `a notice matching ${String(text)}`,
    timeout: 10_000,
  }).toBe(true);
  await dismissNotices(page);
}

export async function dismissNotices(page: Page): Promise<void> {
  const buttons = page.getByTestId('notice').getByRole('button', { name: 'Dismiss' });
  for (let n = await buttons.count(); n > 0; n = await buttons.count()) {
    await buttons.first().click({ timeout: 2_000 }).catch(() => {}); // it may go away on its own meanwhile
  }
}

export const row = (page: Page, key: string): Locator => page.locator(`[data-testid=object-row][data-key="${key}"]`);

/** Starts from an empty service and the buckets view, signed in as root. */
export async function freshService(page: Page): Promise<void> {
  await page.evaluate(() => localStorage.removeItem('swbucket:console:credentials'));
  await page.evaluate(() => new Promise<void>((resolve, reject) => {
    const r = indexedDB.deleteDatabase('swbucket');
    r.onsuccess = () => resolve();
    r.onerror = () => reject(r.error);
  }));
  // A reload drops every view's state (upload queues, open details, the signed-in account).
  await page.reload();
  await page.waitForFunction(() => Boolean((window as unknown as { swbucket?: unknown }).swbucket), null, { timeout: 20_000 });
  await signedInAsRoot(page);
}

/** Playwright's wait, not expect.poll: usable in hooks too. */
async function signedInAsRoot(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelector('[data-testid=current-account]')?.textContent === 'svcadmin', null, { timeout: 20_000 });
}

/** No page-level horizontal scroll: everything fits the viewport's width. */
export async function expectNoHorizontalScroll(page: Page, what: string): Promise<void> {
  const { scrollWidth, width } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth }));
  expect(scrollWidth, `${what}: page width ${scrollWidth} px at a ${width} px viewport`).toBeLessThanOrEqual(width);
}

/**
 * test-results/screenshots/{view}-{width}.png; with UPDATE_SCREENSHOTS=1 the 1280 px ones also go
 * to test/browser/screenshots/{view}.png (committed, for the README).
 */
export async function screenshot(page: Page, view: string): Promise<void> {
  // Notices come and go on timers: leave them out of the picture.
  await dismissNotices(page);
  const width = page.viewportSize()?.width ?? 0;
  const png = await page.screenshot({ animations: 'disabled', caret: 'hide' });
  const out = join(process.cwd(), 'test-results', 'screenshots', `${view}-${width}.png`);
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, png);
  if (process.env.UPDATE_SCREENSHOTS === '1' && width === 1280) {
    const committed = join(process.cwd(), 'test', 'browser', 'screenshots', `${view}.png`);
    await mkdir(dirname(committed), { recursive: true });
    await writeFile(committed, png);
  }
}

/** An entry of the request log as the worker stores it ('swbucket-log' database). */
export type StoredLogEntry = LoggedEntry;

export { storedLog } from './support/log.ts';

/** Bytes for the page: base64 (page.evaluate arguments are JSON). */
export const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

/** A mono 16-bit PCM WAV: RIFF header, fmt chunk, data chunk with a sine tone. */
export function makeWav(seconds = 1, rate = 8000, hz = 440): Uint8Array {
  const samples = Math.round(seconds * rate);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * hz * i) / rate) * 12000), i * 2);
  const head = Buffer.alloc(44);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(36 + data.length, 4);
  head.write('WAVE', 8, 'latin1');
  head.write('fmt ', 12, 'latin1');
  head.writeUInt32LE(16, 16); // fmt chunk size
  head.writeUInt16LE(1, 20); // PCM
  head.writeUInt16LE(1, 22); // mono
  head.writeUInt32LE(rate, 24);
  head.writeUInt32LE(rate * 2, 28); // byte rate
  head.writeUInt16LE(2, 32); // block align
  head.writeUInt16LE(16, 34); // bits per sample
  head.write('data', 36, 'latin1');
  head.writeUInt32LE(data.length, 40);
  return new Uint8Array(Buffer.concat([head, data]));
}

/**
 * Records, on every DOM change in the page, what `read()` (a function source evaluated in the
 * page) returns; `stop` hands the samples back. A MutationObserver sees every render, however fast.
 */
export async function startSampling(page: Page, name: string, read: string): Promise<void> {
  await page.evaluate(({ name, read }) => {
    const w = window as unknown as Record<string, unknown>;
    const f = new Function(`return (${read})`)() as () => unknown;
    const samples: unknown[] = [];
    const take = () => {
      const v = f();
      if (v !== undefined) samples.push(v);
    };
    const observer = new MutationObserver(take);
    observer.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    take();
    w[name] = { samples, observer };
  }, { name, read });
}

export async function stopSampling<T>(page: Page, name: string): Promise<T[]> {
  return page.evaluate((name) => {
    const w = window as unknown as Record<string, { samples: unknown[]; observer: MutationObserver }>;
    const s = w[name]!;
    s.observer.disconnect();
    return s.samples as T[];
  }, name) as Promise<T[]>;
}

/** The console's byte format (src/console/state.svelte.ts formatBytes), for expected texts. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = -1;
  do {
    v /= 1024;
    u++;
  } while (v >= 1024 && u < units.length - 1);
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}
