// Browser runner for the conformance table: the same cases as test/unit/conformance.test.ts, sent
// with fetch from a page controlled by the built worker in real Chromium. Cases that need
// Content-Length or Date control are Node-only (a page cannot set those headers).
import { describe, it, beforeAll, afterAll, inject } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './support/chromium.ts';
import { openServicePage, resetService, sendSteps } from './support/page.ts';
import { checkStep } from '../cases/check.ts';
import type { Case } from '../cases/types.ts';

const modules = import.meta.glob<{ cases: Case[] }>('../cases/*.cases.ts', { eager: true });

let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  ({ page } = await openServicePage(browser, inject('baseURL')));
});
afterAll(async () => {
  await browser?.close();
});

for (const [file, mod] of Object.entries(modules)) {
  describe(file.replace('../cases/', ''), () => {
    for (const c of mod.cases.filter((c) => !c.nodeOnly)) {
      it(c.name, async () => {
        await resetService(page);
        const results = await sendSteps(page, c.steps);
        c.steps.forEach((step, i) => checkStep(step, results[i]!, `step ${i + 1}: ${step.method} ${step.url}`));
      });
    }
  });
}
