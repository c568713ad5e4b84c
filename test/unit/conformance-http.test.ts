// The conformance table (test/cases/*.cases.ts) over HTTP: each case against a fresh Node server
// (node/server.ts) on a real socket, in memory and with `--data` (the one store logic over LMDB, in
// a new directory), each step sent with the Host header its URL names. test/unit/conformance.test.ts
// calls the handler directly over every store; this is what a client of `swbucket serve` meets.
//
// Left to that runner: cases with a request a socket does not carry as the table writes it — a
// Content-Length that is not the body's, or none (Node's HTTP client frames the body itself:
// test/unit/server.test.ts sends those by hand) — and cases that use the page mount
// (`/svc/{bucket}/{key}` on the page's origin), which only the service worker answers.
import { describe, it, expect } from 'vitest';
import { startServer } from '../../node/server.ts';
import { buildRequest, stepOptions } from '../support/service.ts';
import { rawRequest } from '../support/http.ts';
import { tempDir } from '../support/stores.ts';
import { checkStep } from '../cases/check.ts';
import type { Case } from '../cases/types.ts';

const modules = import.meta.glob<{ cases: Case[] }>('../cases/*.cases.ts', { eager: true });

const MOUNT = /^http:\/\/localhost:\d+\/svc\//;
const overSocket = (c: Case) => c.steps.every((s) => s.contentLength === undefined && !MOUNT.test(s.url));
const all = Object.values(modules).flatMap((m) => m.cases);

it('runs all but a few cases of the table over HTTP', () => {
  const left = all.filter((c) => !overSocket(c));
  expect(left.length).toBeGreaterThan(0);
  expect(left.length).toBeLessThan(all.length / 20);
});

for (const kind of ['in memory', '--data'] as const) {
  describe(`the HTTP server ${kind}`, () => {
    for (const [file, mod] of Object.entries(modules)) {
      describe(file.replace('../cases/', ''), () => {
        for (const c of mod.cases.filter(overSocket)) {
          it(c.name, async () => {
            const server = await startServer({ port: 0, log: () => {}, ...(kind === '--data' ? { dataDir: tempDir() } : {}) });
            try {
              for (const [i, step] of c.steps.entries()) {
                const request = await buildRequest(step.method, step.url, stepOptions(step));
                const url = new URL(request.url);
                const headers: Record<string, string> = { host: url.host };
                for (const [k, v] of request.headers) headers[k] = v;
                const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
                const r = await rawRequest(server.port, { method: step.method, path: url.pathname + url.search, headers, ...(body ? { body } : {}) });
                const got = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
                checkStep(step, { status: r.status, headers: got, text: step.method === 'HEAD' ? '' : r.text }, `step ${i + 1}: ${step.method} ${step.url}`);
              }
            } finally {
              await server.close();
            }
          });
        }
      });
    }
  });
}
