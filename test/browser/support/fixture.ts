// The one setup every cross-engine browser test file shares: its project's engine, launched before
// the file's tests and closed after them, with one page of the built site that the service started
// on. A file calls useServicePage() at its top and reads `.page` (or `.engine`) in its tests and hooks.
import { beforeAll, afterAll, inject } from 'vitest';
import { launchEngine, type Engine, type EngineName, type EnginePage } from './engines.ts';
import { openServicePage } from './page.ts';

export interface ServicePage {
  /** The project's engine ('chromium' in the 'browser' project). */
  readonly name: EngineName;
  /** The built site's origin (global-setup.ts). */
  readonly baseURL: string;
  readonly engine: Engine;
  /** A page of the built site, controlled by its worker, the service started. */
  readonly page: EnginePage;
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
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`useServicePage(): no ${what} yet (read it in a test or hook, after beforeAll)`);
    return value;
  };
  return {
    name,
    baseURL,
    get engine() {
      return ready(engine, 'engine');
    },
    get page() {
      return ready(page, 'page');
    },
  };
}
