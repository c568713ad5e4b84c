// Chromium through playwright-core, as the rest of the browser tests drive it.
import { chromium, type Page } from 'playwright-core';
import { CHROMIUM_FLAGS, findChromium } from '../chromium.ts';
import { evaluateWithin, type Engine, type EnginePage, type WaitOptions } from '../engines.ts';

export async function checkChromium(): Promise<void> {
  findChromium();
}

/**
 * A Playwright page as an EnginePage (the Chromium engine's pages, and any Playwright page a test
 * has); evaluate() rejects after `evaluateTimeout` ms when given.
 */
export function playwrightEnginePage(page: Page, evaluateTimeout?: number): EnginePage {
  return {
    engine: 'chromium',
    async goto(url: string) {
      await page.goto(url);
    },
    async url() {
      return page.url();
    },
    evaluate<A, R>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<R> {
      // Playwright's types unwrap handles in the argument; ours are JSON values only.
      return evaluateWithin(page.evaluate(fn as (arg: unknown) => R | Promise<R>, arg as unknown), evaluateTimeout);
    },
    async waitForFunction<A>(fn: (arg: A) => unknown, arg?: A, options: WaitOptions = {}) {
      await page.waitForFunction(fn as (arg: unknown) => unknown, arg as unknown, { timeout: options.timeout ?? 20_000 });
    },
    async reload() {
      await page.reload();
    },
    frames() {
      return Promise.all(page.mainFrame().childFrames().map(async (frame) => ({
        url: frame.url(),
        text: await frame.evaluate(() => document.documentElement?.textContent ?? ''),
      })));
    },
    async close() {
      await page.close();
    },
  };
}

export async function launchChromiumEngine({ evaluateTimeout, profileDir }: { evaluateTimeout?: number; profileDir?: string } = {}): Promise<Engine> {
  if (profileDir !== undefined) {
    // A persistent context: its storage is the user data folder, kept after close.
    const context = await chromium.launchPersistentContext(profileDir, { executablePath: findChromium(), args: CHROMIUM_FLAGS, headless: true });
    // It opens with one blank page: the first page is that one.
    let blank: Page | undefined = context.pages()[0];
    return {
      name: 'chromium',
      version: `Chromium ${context.browser()?.version() ?? ''} (profile ${profileDir})`,
      async newPage() {
        const page = blank ?? await context.newPage();
        blank = undefined;
        return playwrightEnginePage(page, evaluateTimeout);
      },
      async close() {
        await context.close();
      },
    };
  }
  const browser = await chromium.launch({ executablePath: findChromium(), args: CHROMIUM_FLAGS, headless: true });
  try {
    const context = await browser.newContext();
    return {
      name: 'chromium',
      version: `Chromium ${browser.version()}`,
      async newPage() {
        return playwrightEnginePage(await context.newPage(), evaluateTimeout);
      },
      async close() {
        await browser.close();
      },
    };
  } catch (e) {
    await browser.close();
    throw e;
  }
}
