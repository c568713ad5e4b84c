// Browser runner for the conformance table: the same cases as test/unit/conformance.test.ts, sent
// with fetch from a page controlled by the built worker, in the project's engine (Chromium, Firefox
// or WebKitGTK: support/engines.ts). Cases that need Content-Length or Date control are Node-only (a
// page cannot set those headers).
import { describe, it, beforeAll, afterAll, inject } from 'vitest';
import { launchEngine, type Engine, type EnginePage } from './support/engines.ts';
import { openServicePage, resetService, sendSteps } from './support/page.ts';
import { checkStep } from '../cases/check.ts';
import type { Case } from '../cases/types.ts';

const modules = import.meta.glob<{ cases: Case[] }>('../cases/*.cases.ts', { eager: true });

let engine: Engine;
let page: EnginePage;

beforeAll(async () => {
  engine = await launchEngine(inject('engine') ?? 'chromium');
  ({ page } = await openServicePage(engine, inject('baseURL')));
});
afterAll(async () => {
  await engine?.close();
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
