// The setups browser test files share, each launched before the file's tests and closed after them:
// - useServicePage(): its project's engine, with one page of the built site that the service started
//   on (the cross-engine files). A file calls it at its top and reads `.page` (or `.engine`) in its
//   tests and hooks.
// - useChromiumPage(): Chromium through Playwright, for the Chromium-only files that use Playwright's
//   own API, with the one page the file opens in it (useChromiumServicePage(): the built site's, the
//   service's data deleted; console-helpers.ts useConsolePage(): the console's).
import { beforeAll, afterAll, inject } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './chromium.ts';
import { launchEngine, type Engine, type EngineName, type EnginePage } from './engines.ts';
import { openServicePage, resetService } from './page.ts';

export interface ServicePage {
  /** The project's engine ('chromium' in the 'browser' project). */
  readonly name: EngineName;
  /** The built site's origin (global-setup.ts). */
  readonly baseURL: string;
  readonly engine: Engine;
  /** A page of the built site, controlled by its worker, the service started. */
  readonly page: EnginePage;
}

function ready<T>(value: T | undefined, fixture: string, what: string): T {
  if (value === undefined) throw new Error(`${fixture}: no ${what} yet (read it in a test or hook, after beforeAll)`);
  return value;
}

export function useServicePage(options: { open?: boolean } = {}): ServicePage {
  const name = inject('engine') ?? 'chromium';
  const baseURL = inject('baseURL');
  let engine: Engine | undefined;
  let page: EnginePage | undefined;
  beforeAll(async () => {
    engine = await launchEngine(name);
    if (options.open !== false) ({ page } = await openServicePage(engine, baseURL));
  });
  afterAll(async () => {
    await engine?.close();
  });
  return {
    name,
    baseURL,
    get engine() {
      return ready(engine, 'useServicePage()', 'engine');
    },
    get page() {
      return ready(page, 'useServicePage()', 'page');
    },
  };
}

export interface ChromiumPage {
  /** The built site's origin (global-setup.ts). */
  readonly baseURL: string;
  readonly browser: Browser;
  /** What `open` made. */
  readonly page: Page;
}

/** Chromium, and the page `open` makes in it before the file's tests. */
export function useChromiumPage(open: (browser: Browser, baseURL: string) => Promise<Page>): ChromiumPage {
  const baseURL = inject('baseURL');
  let browser: Browser | undefined;
  let page: Page | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
    page = await open(browser, baseURL);
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    baseURL,
    get browser() {
      return ready(browser, 'useChromiumPage()', 'browser');
    },
    get page() {
      return ready(page, 'useChromiumPage()', 'page');
    },
  };
}

/** Chromium with a page of the built site, the service started on it and its data deleted. */
export function useChromiumServicePage(): ChromiumPage {
  return useChromiumPage(async (browser, baseURL) => {
    const { page } = await openServicePage(browser, baseURL);
    await resetService(page);
    return page;
  });
}
