// Browser runner for the conformance table: the same cases as test/unit/conformance.test.ts, sent
// with fetch from a page controlled by the built worker, in the project's engine (Chromium, Firefox
// or WebKitGTK: support/engines.ts). Cases that need Content-Length or Date control are Node-only (a
// page cannot set those headers).
import { describe, it } from 'vitest';
import { useServicePage } from './support/fixture.ts';
import { resetService, sendSteps } from './support/page.ts';
import { checkStep } from '../cases/check.ts';
import type { Case } from '../cases/types.ts';

const modules = import.meta.glob<{ cases: Case[] }>('../cases/*.cases.ts', { eager: true });

const service = useServicePage();

for (const [file, mod] of Object.entries(modules)) {
  describe(file.replace('../cases/', ''), () => {
    for (const c of mod.cases.filter((c) => !c.nodeOnly)) {
      it(c.name, async () => {
        await resetService(service.page);
        const results = await sendSteps(service.page, c.steps);
        c.steps.forEach((step, i) => checkStep(step, results[i]!, `step ${i + 1}: ${step.method} ${step.url}`));
      });
    }
  });
}
