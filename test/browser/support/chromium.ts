// Finds a Chromium for the browser tests: CHROMIUM_PATH, a system Chromium/Chrome, or Playwright's
// own download; says exactly what to install when there is none, and stops at a CHROMIUM_PATH that
// names no executable file rather than quietly running another browser.
import { chromium, type Browser } from 'playwright-core';
import { notExecutable } from './engines/find.ts';

export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** What to install, for when there is no browser at all or CHROMIUM_PATH is wrong. */
const INSTALL_HINT = 'Install one:\n'
  + '  Debian/Ubuntu: sudo apt-get install -y chromium\n'
  + '  elsewhere:     npx playwright install chromium\n';

/** Where to look when CHROMIUM_PATH is unset: a system Chromium or Chrome, then Playwright's download. */
export function chromiumCandidates(): string[] {
  const candidates = [
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
  return candidates;
}

/**
 * The browser to run: CHROMIUM_PATH as it is when it is set (an error, never another browser, when
 * it names no executable file), else the first of `candidates` that is one.
 */
export function findChromium(
  { env = process.env, candidates = chromiumCandidates() }: { env?: Record<string, string | undefined>; candidates?: string[] } = {},
): string {
  const wanted = env.CHROMIUM_PATH;
  if (wanted) {
    const why = notExecutable(wanted);
    if (why === null) return wanted;
    throw new Error(
      `CHROMIUM_PATH is set to "${wanted}", but ${why}: it must name a Chromium or Chrome binary.\n`
      + 'Fix CHROMIUM_PATH, or unset it to use a system Chromium (/usr/bin/chromium) or Playwright\'s download.\n'
      + `No Chromium yet? ${INSTALL_HINT}`,
    );
  }
  const found = candidates.find((c) => notExecutable(c) === null);
  if (found) return found;
  throw new Error(
    'The browser tests need Chromium and none was found. ' + INSTALL_HINT
    + 'or point CHROMIUM_PATH at a Chromium or Chrome binary.',
  );
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: findChromium(), args: CHROMIUM_FLAGS, headless: true });
}
