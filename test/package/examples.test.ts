// examples/* as their users run them: each copied to a temporary folder, its swbucket dependency
// pointed at the packed tarball, installed, then `vite build` + `vite preview` and `vite dev`.
// examples/vanilla in each browser engine the browser tests drive (Chromium, Firefox ESR, WebKitGTK:
// test/browser/support/engines.ts; WebKit with its storage on disk is the 'webkit-disk' project's);
// examples/pwa (a Workbox worker of the app's own) in Chromium.
import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium } from '../browser/support/chromium.ts';
import { ENGINE_NAMES, launchEngine, type EngineName, type EnginePage } from '../browser/support/engines.ts';
import { npmInstall, run, serveApp, tempDir, type Served } from './support/app.ts';

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

// ---- examples/vanilla, in every engine ------------------------------------------------------------

/** Waits until the notes page's status line matches `want` (or says what went wrong), and returns it. */
async function noteStatus(page: EnginePage, want: RegExp): Promise<string> {
  await page.waitForFunction((source: string) => {
    const text = document.getElementById('status')?.textContent ?? '';
    return new RegExp(source).test(text) || text.startsWith('Something went wrong');
  }, want.source, { timeout: 30_000 });
  return page.evaluate(() => document.getElementById('status')!.textContent!);
}

/** The notes listed on the page: each link's text and href. */
function notesListed(page: EnginePage): Promise<{ text: string; href: string }[]> {
  return page.evaluate(() => [...document.querySelectorAll<HTMLAnchorElement>('#notes a')].map((a) => ({ text: a.textContent ?? '', href: a.href })));
}

/** What a user does with examples/vanilla, in one engine: every step checked engine-neutrally. */
async function useNotes(engineName: EngineName, url: string) {
  const engine = await launchEngine(engineName);
  try {
    const page = await engine.newPage();
    await page.goto(url + '/');
    // The empty store was seeded from public/welcome.tar.
    expect(await noteStatus(page, /1 note\(s\)/)).toMatch(/1 note\(s\)/);
    expect((await notesListed(page)).map((n) => n.text)).toEqual(['welcome.txt']);

    // Save a note: the form filled and sent as a user would, through its button.
    await page.evaluate(() => {
      const form = document.getElementById('new-note') as HTMLFormElement;
      (form.elements.namedItem('title') as HTMLInputElement).value = 'groceries.txt';
      (form.elements.namedItem('text') as HTMLTextAreaElement).value = 'eggs, milk';
      form.querySelector('button')!.click();
    });
    expect(await noteStatus(page, /2 note\(s\)/)).toMatch(/2 note\(s\)/);

    // The next start finds data (in WebKit's ephemeral storage too, within its session): no second
    // seed, the user's note stays.
    await page.reload();
    expect(await noteStatus(page, /2 note\(s\)/)).toMatch(/2 note\(s\)/);
    const notes = await notesListed(page);
    expect(notes.map((n) => n.text).sort()).toEqual(['groceries.txt', 'welcome.txt']);
    const link = notes.find((n) => n.text === 'groceries.txt')!;
    expect(new URL(link.href).pathname).toBe('/svc/notes/groceries.txt');

    // What the link holds, fetched by the page (answered by the worker, as a frame's own request is).
    expect(await page.evaluate(async (href: string) => {
      const r = await fetch(href);
      return { status: r.status, type: r.headers.get('content-type'), text: await r.text() };
    }, link.href)).toEqual({ status: 200, type: 'text/plain; charset=utf-8', text: 'eggs, milk' });

    // The note opened by its link: the tab gets the worker's frame page (a document of the origin,
    // still controlled), whose one frame is the note at the same URL (its document is sandboxed, an
    // opaque origin the page cannot look into; the driver can).
    await page.evaluate((text: string) => {
      const a = [...document.querySelectorAll<HTMLAnchorElement>('#notes a')].find((n) => n.textContent === text)!;
      setTimeout(() => a.click(), 20);
    }, 'groceries.txt');
    await page.waitForFunction((href: string) => location.href === href && document.readyState === 'complete', link.href, { timeout: 20_000 });
    expect(await page.evaluate(() => ({
      title: document.title,
      frames: [...document.querySelectorAll('iframe')].map((f) => f.src),
      scripts: document.scripts.length,
      controlled: Boolean(navigator.serviceWorker?.controller),
    }))).toEqual({ title: 'groceries.txt', frames: [link.href], scripts: 0, controlled: true });
    // What the frame shows, read by the driver.
    expect(await page.frames()).toEqual([{ url: link.href, text: 'eggs, milk' }]);

    // The console beside the app lists the bucket.
    const consolePage = await engine.newPage();
    await consolePage.goto(url + '/swbucket/');
    await consolePage.waitForFunction(() => /Running|Not running/.test(document.querySelector('[data-testid=service-status]')?.textContent ?? ''), undefined, { timeout: 30_000 });
    await consolePage.waitForFunction(() => [...document.querySelectorAll('a')].some((a) => a.textContent?.trim() === 'notes'), undefined, { timeout: 10_000 })
      .catch(() => undefined);
    return await consolePage.evaluate(() => ({
      running: (document.querySelector('[data-testid=service-status]')?.textContent ?? '').includes('Running'),
      listed: [...document.querySelectorAll('a')].some((a) => a.textContent?.trim() === 'notes'),
      controller: navigator.serviceWorker.controller ? new URL(navigator.serviceWorker.controller.scriptURL).pathname : null,
    }));
  } finally {
    await engine.close();
  }
}

describe('examples/vanilla: notes in a plain Vite app with the swbucket/vite plugin', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await installExample('vanilla');
    await run(dir, 'npx', ['vite', 'build', '--logLevel', 'warn']);
  }, 180_000);

  for (const mode of ['preview', 'dev'] as const) {
    describe(`vite ${mode}`, () => {
      let served: Served;
      beforeAll(async () => {
        served = await serveApp(dir, mode);
      });
      afterAll(async () => {
        await served?.close();
      });

      for (const engineName of ENGINE_NAMES.filter((e) => e !== 'webkit-disk')) {
        it(`${engineName}: seeds, saves a note, keeps it over a reload, opens it by its link; the console lists the bucket`, async () => {
          expect(await useNotes(engineName, served.url)).toEqual({ running: true, listed: true, controller: '/sw.js' });
        });
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
