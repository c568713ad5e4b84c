// examples/* as their users run them: each copied to a temporary folder, its swbucket dependency
// pointed at the packed tarball, installed, then `vite build` + `vite preview` and `vite dev`, in
// Chromium.
import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium } from '../browser/support/chromium.ts';
import { npmInstall, run, serveApp, tempDir } from './support/app.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** The example in a temporary folder, depending on the tarball, installed. */
async function installExample(name: string): Promise<string> {
  const dir = tempDir(`swbucket-example-${name}-`);
  cpSync(join('examples', name), dir, { recursive: true, filter: (src) => !/node_modules|[\\/]dist$/.test(src) });
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  expect(manifest.dependencies.swbucket, 'the example depends on swbucket by name').toBeDefined();
  manifest.dependencies.swbucket = inject('tarball');
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  await npmInstall(dir, []);
  return dir;
}

async function consoleOf(page: Page, url: string, bucket: string) {
  const c = await page.context().newPage();
  await c.goto(url);
  await c.waitForFunction(() => /Running|Not running/.test(document.querySelector('[data-testid=service-status]')?.textContent ?? ''), null, { timeout: 30_000 });
  const listed = await c.getByRole('link', { name: bucket }).first().waitFor({ timeout: 10_000 }).then(() => true, () => false);
  return {
    running: (await c.locator('[data-testid=service-status]').textContent())!.includes('Running'),
    listed,
    controller: await c.evaluate(() => new URL(navigator.serviceWorker.controller!.scriptURL).pathname),
  };
}

const status = (page: Page) => page.locator('#status').textContent();

describe('examples/vanilla: notes in a plain Vite app with the swbucket/vite plugin', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await installExample('vanilla');
    await run(dir, 'npx', ['vite', 'build', '--logLevel', 'warn']);
  }, 180_000);

  for (const mode of ['preview', 'dev'] as const) {
    it(`vite ${mode}: saves a note, lists it, opens it by a plain link; the console sees it`, async () => {
      const served = await serveApp(dir, mode);
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(served.url + '/');
        // The empty store was seeded from public/welcome.tar.
        await expect.poll(() => status(page), { timeout: 30_000 }).toMatch(/1 note\(s\)/);
        await expect(page.getByRole('link', { name: 'welcome.txt' }).count()).resolves.toBe(1);
        await page.getByLabel('Title').fill('groceries.txt');
        await page.getByLabel('Text').fill('eggs, milk');
        await page.getByRole('button', { name: 'Save' }).click();
        await expect.poll(() => status(page), { timeout: 15_000 }).toMatch(/2 note\(s\)/);
        // The next start finds data: no second seed, the user's note stays.
        await page.reload();
        await expect.poll(() => status(page), { timeout: 30_000 }).toMatch(/2 note\(s\)/);
        await page.getByRole('link', { name: 'groceries.txt' }).click();
        await page.waitForURL('**/svc/notes/groceries.txt?*');
        // The tab gets the worker's frame page, the note shown in its one frame.
        expect(await page.frameLocator('iframe').locator('body').textContent()).toBe('eggs, milk');
        expect(await consoleOf(page, `${served.url}/swbucket/`, 'notes')).toEqual({ running: true, listed: true, controller: '/sw.js' });
      } finally {
        await context.close();
        await served.close();
      }
    });
  }
});

describe("examples/pwa: swbucket inside the app's own Workbox worker", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await installExample('pwa');
    await run(dir, 'npx', ['vite', 'build', '--logLevel', 'warn']);
  }, 180_000);

  for (const mode of ['preview', 'dev'] as const) {
    it(`vite ${mode}: the app's worker keeps its own route and precache, and answers swbucket too`, async () => {
      const served = await serveApp(dir, mode);
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(served.url + '/');
        await expect.poll(() => status(page), { timeout: 30_000 }).toMatch(/0 photo\(s\)/);
        // The app's own route, answered by its worker (the server has no /api/ping).
        expect(await page.locator('#ping').textContent()).toContain('{"pong":true,"from":"app-sw"}');
        const worker = await page.evaluate(() => new URL(navigator.serviceWorker.controller!.scriptURL).pathname);
        expect(worker).toBe(mode === 'dev' ? '/dev-sw.js' : '/app-sw.js');
        await page.setInputFiles('#picker', {
          name: 'dot.png', mimeType: 'image/png',
          buffer: Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'),
        });
        await expect.poll(() => status(page), { timeout: 15_000 }).toMatch(/1 photo\(s\)/);
        // A plain <img> through the mount, answered by swbucket inside the app's worker.
        await expect.poll(() => page.evaluate(() => (document.querySelector('#photos img') as HTMLImageElement | null)?.naturalWidth ?? 0)).toBe(1);
        expect(await consoleOf(page, `${served.url}/swbucket/`, 'photos')).toEqual({ running: true, listed: true, controller: worker });
        if (mode === 'preview') {
          // Workbox still precached the app shell.
          const cached = await page.evaluate(async () => (await Promise.all((await caches.keys()).map(async (k) => (await (await caches.open(k)).keys()).length))).reduce((a, b) => a + b, 0));
          expect(cached).toBeGreaterThan(0);
        }
      } finally {
        await context.close();
        await served.close();
      }
    });
  }
});
