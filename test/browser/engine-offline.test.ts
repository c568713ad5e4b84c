// The app offline, in the project's engine (sw/shell.ts and startService's keepShell): an app with
// swbucket's worker as its only worker reloads with its server gone after one visit and shows its
// data; an app open when the network goes, before its first upload, still uploads (the client's
// parts that load on first use were kept); online, pages come from the network as ever, and the
// app's API answers are never kept. Each test has an engine of its own (nothing kept yet) and the
// built site on a server of its own, which it stops to be offline: nothing answers on the origin.
import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { launchEngine, type EnginePage } from './support/engines.ts';
import { copyBuiltSite, startStaticServer, type StaticServer } from './support/static-server.ts';
import { waitStarted, type SwGlobal } from './support/engine-data-helpers.ts';

const name = inject('engine') ?? 'chromium';
let siteDir: string;

beforeAll(() => {
  siteDir = copyBuiltSite('swbucket-engine-offline-');
});
afterAll(() => {
  if (siteDir) rmSync(siteDir, { recursive: true, force: true });
});

/** Runs `test` with a new engine and the site served on a new port; both closed after. */
async function withApp(test: (page: EnginePage, server: StaticServer) => Promise<void>): Promise<void> {
  const engine = await launchEngine(name);
  const server = await startStaticServer(siteDir);
  try {
    const page = await engine.newPage();
    await page.goto(server.url + '/');
    await waitStarted(page);
    await test(page, server);
  } finally {
    await engine.close();
    await server.close().catch(() => {});
  }
}

/** The paths the worker keeps for the app (sw/shell.ts: the cache `{name}-shell`). */
function kept(page: EnginePage): Promise<string[]> {
  return page.evaluate(async () => {
    if (!(await caches.has('swbucket-shell'))) return [];
    return (await (await caches.open('swbucket-shell')).keys()).map((r) => new URL(r.url).pathname).sort();
  });
}

/** The page's own files, as the built index.html names them. */
function siteFiles(): string[] {
  const html = readFileSync(join(siteDir, 'index.html'), 'utf8');
  return [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
}

describe(`${name}: offline`, () => {
  it('after one visit, the app reloads with its server gone and shows its stored data', { timeout: 90_000 }, async () => {
    await withApp(async (page, server) => {
      await page.evaluate(async () => {
        const { client } = (window as unknown as { swbucket: SwGlobal }).swbucket;
        await client.ensureBucket('offline-data');
        await client.putObject('offline-data', 'note.txt', 'kept offline');
      });
      const files = siteFiles();
      expect(files.length, 'index.html names its script and style').toBeGreaterThanOrEqual(2);
      await expect.poll(() => kept(page), { timeout: 20_000 }).toEqual(expect.arrayContaining(['/', ...files]));

      await server.close();
      await page.reload();
      await waitStarted(page);
      const text = await page.evaluate(async () => {
        const { client } = (window as unknown as { swbucket: SwGlobal }).swbucket;
        return (await client.getObject('offline-data', 'note.txt')).response.text();
      });
      expect(text).toBe('kept offline');
      // The console lists the bucket: its whole page works.
      await page.waitForFunction(() => document.body.innerText.includes('offline-data'), undefined, { timeout: 20_000 });
    });
  });

  it('an app open when the network goes, before its first upload, still uploads (the client\'s lazy parts were kept)', { timeout: 90_000 }, async () => {
    await withApp(async (page, server) => {
      // keepShell() names the page once the client's parts are loaded: the page kept means they are.
      await expect.poll(() => kept(page), { timeout: 20_000 }).toContain('/');
      await server.close();
      const got = await page.evaluate(async () => {
        const { client } = (window as unknown as { swbucket: SwGlobal }).swbucket;
        const body = new Blob([new Uint8Array(300_000).map((_, i) => i % 251)]);
        await client.ensureBucket('offline-upload');
        const put = await client.putObject('offline-upload', 'first.bin', body); // Content-MD5: the hashing worker's first use
        await client.upload('offline-upload', 'parts.bin', new Blob([new Uint8Array(6 * 1024 * 1024)]), { partSize: 5 * 1024 * 1024 });
        const back = await (await client.getObject('offline-upload', 'first.bin')).response.arrayBuffer();
        return { etag: put.etag, size: back.byteLength, listed: (await client.listObjects('offline-upload')).objects.map((o) => o.key) };
      });
      expect(got).toEqual({ etag: expect.stringMatching(/^[0-9a-f]{32}$/), size: 300_000, listed: ['first.bin', 'parts.bin'] });
    });
  });

  it('online, a page comes from the network (a new version shows at once); API answers are never kept', { timeout: 90_000 }, async () => {
    await withApp(async (page, server) => {
      await expect.poll(() => kept(page), { timeout: 20_000 }).toContain('/');
      server.bodies.set('/api/data.json', '{"v":1}');
      expect(await page.evaluate(async () => (await fetch('/api/data.json')).json())).toEqual({ v: 1 });
      const html = readFileSync(join(siteDir, 'index.html'), 'utf8');
      server.bodies.set('/index.html', html.replace('<title>swbucket</title>', '<title>swbucket, version 2</title>'));
      await page.reload();
      await waitStarted(page);
      expect(await page.evaluate(() => document.title)).toBe('swbucket, version 2');
      expect(await kept(page)).not.toContain('/api/data.json');

      // Offline, the page is the last one fetched, and the API call fails as it would without a worker.
      await server.close();
      await page.reload();
      await waitStarted(page);
      expect(await page.evaluate(() => document.title)).toBe('swbucket, version 2');
      expect(await page.evaluate(() => fetch('/api/data.json').then(() => 'answered', () => 'failed'))).toBe('failed');
    });
  });
});
