// Finds a Chromium for the browser tests: CHROMIUM_PATH, a system Chromium/Chrome, or Playwright's
// own download; says exactly what to install when there is none.
import { chromium, type Browser } from 'playwright-core';
import { existsSync } from 'node:fs';

export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function findChromium(): string {
  const candidates = [
    process.env.CHROMIUM_PATH,
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
    '/usr/bin/google-chrome-stable',
    '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  ];
  try {
    candidates.push(chromium.executablePath()); // Playwright's own browser, when it was installed
  } catch {
    // playwright-core knows no download here
  }
  const found = candidates.find((c): c is string => !!c && existsSync(c));
  if (found) return found;
  throw new Error(
    'The browser tests need Chromium and none was found. Install one:\n'
    + '  Debian/Ubuntu: sudo apt-get install -y chromium\n'
    + '  elsewhere:     npx playwright install chromium\n'
    + 'or point CHROMIUM_PATH at a Chromium or Chrome binary.',
  );
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: findChromium(), args: CHROMIUM_FLAGS, headless: true });
}
