// Node runner for the conformance table (test/cases/*.cases.ts): each case on a fresh service,
// the handler called directly, once over each store (test/support/stores.ts): fake-indexeddb and
// LMDB. test/browser/conformance.test.ts replays the same table in Chromium's IndexedDB.
import { describe, it } from 'vitest';
import { newService, send, stepOptions } from '../support/service.ts';
import { STORE_KINDS } from '../support/stores.ts';
import { checkStep } from '../cases/check.ts';
import type { Case } from '../cases/types.ts';

const modules = import.meta.glob<{ cases: Case[] }>('../cases/*.cases.ts', { eager: true });

describe.each(STORE_KINDS)('%s store', (kind) => {
  for (const [file, mod] of Object.entries(modules)) {
    describe(file.replace('../cases/', ''), () => {
      for (const c of mod.cases) {
        it(c.name, async () => {
          const { handle } = await newService({ kind });
          for (const [i, step] of c.steps.entries()) {
            const r = await send(handle, step.method, step.url, stepOptions(step));
            checkStep(step, { status: r.status, headers: Object.fromEntries(r.headers), text: r.text }, `step ${i + 1}: ${step.method} ${step.url}`);
          }
        });
      }
    });
  }
});
