// startService() from the page's side: the errors it promises when it cannot start.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { readFile } from 'node:fs/promises';
import { CHROMIUM_FLAGS, findChromium, launchChromium } from './support/chromium.ts';
import { startStaticServer, type StaticServer } from './support/static-server.ts';

let browser: Browser;
let site: StaticServer;

beforeAll(async () => {
  browser = await launchChromium();
  site = await startStaticServer();
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

const statusText = (page: import('playwright-core').Page) =>
  page.locator('[data-testid=service-status]').textContent();

/** The site's page opened, once its status says whether the service started: that status. */
async function statusOnceStarted(page: import('playwright-core').Page) {
  await page.goto(site.url + '/');
  await page.waitForFunction(() => /Not running|Running/.test(document.querySelector('[data-testid=service-status]')?.textContent ?? ''), null, { timeout: 30_000 });
  return statusText(page);
}

describe('startService', () => {
  it('names a worker of another build that an update cannot replace, and recovers once the right one is served', async () => {
    const real = await readFile('dist-site/sw.js', 'utf8');
    const buildId = (JSON.parse(await readFile('package.json', 'utf8')) as { version: string }).version;
    expect(real, 'the package version is in dist-site/sw.js').toContain(`"${buildId}"`);
    site.bodies.set('/sw.js', real.split(`"${buildId}"`).join('"0.0.0-older"'));
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const text = await statusOnceStarted(page);
      expect(text).toContain('Not running');
      expect(text).toContain('0.0.0-older');
      expect(text).toContain(buildId);
      expect(text).toContain('npx swbucket init');

      site.bodies.delete('/sw.js'); // the right build is served again
      await page.reload();
      await page.waitForFunction(() => Boolean((window as { swbucket?: unknown }).swbucket), null, { timeout: 30_000 });
      expect(await page.evaluate(() => (window as unknown as { swbucket: { version: string } }).swbucket.version)).toBe(buildId);
      expect(await statusText(page)).toContain('Running');
      const server = await page.evaluate(async () => (await fetch('http://photos.svc.localhost/')).headers.get('server'));
      expect(server).toBe('swbucket');
    } finally {
      site.bodies.delete('/sw.js');
      await context.close();
    }
  });

  it('says where it looked for sw.js, why registering failed and what to do, when no sw.js is swbucket\'s', async () => {
    // What a single-page app's server answers for a file it does not have: its page.
    site.bodies.set('/sw.js', '<!doctype html><title>app</title>');
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const text = await statusOnceStarted(page);
      expect(text).toMatch(/swbucket's service worker was not found: not at \/sw\.js.*\(registering \/sw\.js: .+\)\. `npx swbucket init <publicDir>`/);
    } finally {
      site.bodies.delete('/sw.js');
      await context.close();
    }
  });

  it('says that service workers need a secure origin when the page is not one', async () => {
    // Chromium resolves this name to the local server, but it is not a secure origin.
    const port = new URL(site.url).port;
    const insecure = await chromium.launch({
      executablePath: findChromium(),
      args: [...CHROMIUM_FLAGS, '--host-resolver-rules=MAP swbucket-insecure.test 127.0.0.1'],
      headless: true,
    });
    try {
      const page = await insecure.newPage();
      await page.goto(`http://swbucket-insecure.test:${port}/`);
      expect(await page.evaluate(() => window.isSecureContext)).toBe(false);
      await page.waitForFunction(() => /Not running/.test(document.querySelector('[data-testid=service-status]')?.textContent ?? ''), null, { timeout: 15_000 });
      const text = await statusText(page);
      expect(text).toContain('secure origin');
      expect(text).toContain('http://swbucket-insecure.test:' + port);
    } finally {
      await insecure.close();
    }
  });
});
