// The assertions of a conformance step, shared by the Node runner and the browser runner.
import { expect } from 'vitest';
import type { Step } from './types.ts';

export interface StepResult {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** The error code of an XML error body, or undefined. */
export function errorCode(text: string): string | undefined {
  return /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
}

export function checkStep(step: Step, r: StepResult, where: string): void {
  const e = step.expect;
  expect(r.status, `${where} status (body: ${r.text.slice(0, 300)})`).toBe(e.status);
  if (e.code !== undefined && step.method !== 'HEAD') expect(errorCode(r.text), `${where} code`).toBe(e.code);
  for (const [name, want] of Object.entries(e.headers ?? {})) {
    const got = r.headers[name.toLowerCase()] ?? null;
    if (want === null) expect(got, `${where} header ${name}`).toBeNull();
    else if (want instanceof RegExp) expect(got ?? '', `${where} header ${name}`).toMatch(want);
    else expect(got, `${where} header ${name}`).toBe(want);
  }
  if (e.body instanceof RegExp) expect(r.text, `${where} body`).toMatch(e.body);
  else if (e.body !== undefined) expect(r.text, `${where} body`).toBe(e.body);
  for (const s of e.bodyIncludes ?? []) expect(r.text, `${where} body`).toContain(s);
  for (const s of e.bodyExcludes ?? []) expect(r.text, `${where} body`).not.toContain(s);
}
