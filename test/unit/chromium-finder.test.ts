// The browser tests' Chromium finder (test/browser/support/chromium.ts): a CHROMIUM_PATH that names
// no executable file stops the run with a message naming it and what to do, never a quiet fall back
// to another browser; a good one is used as it is; with none at all, the message says what to install.
import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findChromium } from '../browser/support/chromium.ts';

let dir: string;
/** Executable files standing in for browsers (the finder only checks, never runs them). */
let good: string;
let other: string;
/** A file without execute permission. */
let plain: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'swbucket-chromium-'));
  good = join(dir, 'my-chromium');
  other = join(dir, 'other-chromium');
  plain = join(dir, 'not-executable');
  for (const f of [good, other, plain]) await writeFile(f, '#!/bin/sh\nexit 0\n');
  await chmod(good, 0o755);
  await chmod(other, 0o755);
  await chmod(plain, 0o644);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const saved = process.env.CHROMIUM_PATH;
afterEach(() => {
  if (saved === undefined) delete process.env.CHROMIUM_PATH;
  else process.env.CHROMIUM_PATH = saved;
});

/** The error findChromium throws (a failure of the test when it returns a browser instead). */
function failure(find: () => string): Error {
  let found: string;
  try {
    found = find();
  } catch (e) {
    return e as Error;
  }
  throw new Error(`expected an error, but findChromium returned ${found}`);
}

describe('a CHROMIUM_PATH that names no executable file', () => {
  it('stops at once, naming the path and what to do, even when another browser is there', () => {
    const missing = join(dir, 'no-such-chromium');
    process.env.CHROMIUM_PATH = missing;
    // `other` would do, and so might /usr/bin/chromium: neither may stand in for the one asked for.
    const e = failure(() => findChromium({ candidates: [other] }));
    expect(e.message).toContain(`CHROMIUM_PATH is set to "${missing}"`);
    expect(e.message).toContain('nothing is there');
    expect(e.message).toMatch(/Fix CHROMIUM_PATH, or unset it/);
    expect(e.message).toContain('apt-get install -y chromium');
    expect(e.message).toContain('npx playwright install chromium');
  });

  it('also when it is a directory, or a file that cannot be run', () => {
    expect(failure(() => findChromium({ env: { CHROMIUM_PATH: dir }, candidates: [other] })).message)
      .toContain(`CHROMIUM_PATH is set to "${dir}", but it is not a file`);
    if (process.platform !== 'win32') { // Windows has no execute permission bit
      expect(failure(() => findChromium({ env: { CHROMIUM_PATH: plain }, candidates: [other] })).message)
        .toContain(`CHROMIUM_PATH is set to "${plain}", but it is not executable`);
    }
  });
});

describe('a good CHROMIUM_PATH', () => {
  it('is returned as it is, ahead of every other browser', () => {
    process.env.CHROMIUM_PATH = good;
    expect(findChromium({ candidates: [other] })).toBe(good);
    expect(findChromium()).toBe(good);
    expect(findChromium({ env: { CHROMIUM_PATH: good }, candidates: [other] })).toBe(good);
  });
});

describe('without CHROMIUM_PATH', () => {
  it('takes the first candidate that can be run (an empty CHROMIUM_PATH counts as unset)', () => {
    const candidates = [join(dir, 'missing'), dir, plain, other, good];
    expect(findChromium({ env: {}, candidates })).toBe(other);
    expect(findChromium({ env: { CHROMIUM_PATH: '' }, candidates })).toBe(other);
  });

  it('says what to install when there is no browser at all', () => {
    const e = failure(() => findChromium({ env: {}, candidates: [join(dir, 'missing'), plain] }));
    expect(e.message).toContain('The browser tests need Chromium and none was found');
    expect(e.message).toContain('Debian/Ubuntu: sudo apt-get install -y chromium');
    expect(e.message).toContain('npx playwright install chromium');
    expect(e.message).toContain('point CHROMIUM_PATH at a Chromium or Chrome binary');
  });
});
