// Node runner for the conformance table (test/cases/*.cases.ts): each case on a fresh service.
import { describe, it, expect } from 'vitest';
import { newService, send, stepOptions, errorCode } from '../support/service.ts';
import type { Case } from '../cases/types.ts';

const modules = import.meta.glob<{ cases: Case[] }>('../cases/*.cases.ts', { eager: true });

for (const [file, mod] of Object.entries(modules)) {
  describe(file.replace('../cases/', ''), () => {
    for (const c of mod.cases) {
      it(c.name, async () => {
        const { handle } = await newService();
        for (const [i, step] of c.steps.entries()) {
          const where = `step ${i + 1}: ${step.method} ${step.url}`;
          const r = await send(handle, step.method, step.url, stepOptions(step));
          const e = step.expect;
          expect(r.status, `${where} status (body: ${r.text.slice(0, 300)})`).toBe(e.status);
          if (e.code !== undefined && step.method !== 'HEAD') expect(errorCode(r.text), `${where} code`).toBe(e.code);
          for (const [name, want] of Object.entries(e.headers ?? {})) {
            const got = r.headers.get(name);
            if (want === null) expect(got, `${where} header ${name}`).toBeNull();
            else if (want instanceof RegExp) expect(got ?? '', `${where} header ${name}`).toMatch(want);
            else expect(got, `${where} header ${name}`).toBe(want);
          }
          if (e.body instanceof RegExp) expect(r.text, `${where} body`).toMatch(e.body);
          else if (e.body !== undefined) expect(r.text, `${where} body`).toBe(e.body);
          for (const s of e.bodyIncludes ?? []) expect(r.text, `${where} body`).toContain(s);
          for (const s of e.bodyExcludes ?? []) expect(r.text, `${where} body`).not.toContain(s);
        }
      });
    }
  });
}
