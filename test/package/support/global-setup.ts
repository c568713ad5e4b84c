// Once per package run: `npm pack` the project exactly as it would be published (prepack builds
// dist/), into a temporary folder the tests install from.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { findChromium } from '../../browser/support/chromium.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The packed swbucket-*.tgz. */
    tarball: string;
  }
}

export default function setup(project: TestProject) {
  findChromium(); // fail first, with the install hint, when there is no browser
  const dir = mkdtempSync(join(tmpdir(), 'swbucket-pack-'));
  const out = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const name = out.trim().split('\n').at(-1)!;
  project.provide('tarball', join(dir, name));
}
