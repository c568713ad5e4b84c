// swbucket as a new user adopts it: the packed tarball installed into a fresh Vite app, then
// `npx swbucket init public`, `vite build`, `vite preview`, and the app in Chromium — at the site
// root and under a sub-path — plus what the tarball holds and what an app that imports only the
// client ships.
import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { launchChromium } from '../browser/support/chromium.ts';
import { startStaticServer } from '../browser/support/static-server.ts';
import { TYPESCRIPT_VERSION, VITE_VERSION, npmInstall, run, serveApp, tempDir, writeFiles, type Served } from './support/app.ts';

const APP = {
  'package.json': JSON.stringify({ name: 'fresh-app', private: true, type: 'module' }),
  'index.html': '<!doctype html><html><head><meta charset="utf-8"><title>fresh app</title></head>'
    + '<body><pre id="out">…</pre><script type="module" src="/main.js"></script></body></html>',
  // What the README tells a new user to write.
  'main.js': `
import { startService } from 'swbucket/browser';
import { createClient } from 'swbucket/client';

const out = document.getElementById('out');
try {
  const service = await startService();
  const s3 = createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
  await s3.createBucket('fresh-app', { acl: 'public-read' });
  const put = await s3.putObject('fresh-app', 'notes/hello.txt', 'hello from a fresh app', { contentType: 'text/plain' });
  const got = await s3.getObject('fresh-app', 'notes/hello.txt');
  const link = await s3.presign('fresh-app', 'notes/hello.txt', { expiresIn: 600 });
  const linked = await fetch(link);
  out.textContent = JSON.stringify({
    ok: true, service: { mount: service.mount, scope: service.registration.scope, script: service.scriptUrl },
    etag: put.etag, text: await got.response.text(), link: { status: linked.status, text: await linked.text() },
  });
} catch (e) {
  out.textContent = JSON.stringify({ ok: false, error: String(e) });
}
`,
  // An app that imports only the client, for what it ships.
  'client-only.html': '<!doctype html><html><body><script type="module" src="/client-only.js"></script></body></html>',
  'client-only.js': `
import { createClient } from 'swbucket/client';
const s3 = createClient({ endpoint: 'http://svc.localhost' });
window.put = (b, k, body) => s3.putObject(b, k, body);
`,
  'vite.client-only.config.js': `export default { build: { outDir: 'dist-client', rollupOptions: { input: 'client-only.html' } } };\n`,
  // TypeScript in the app sees the package's declarations: strict, its libraries checked too.
  'types-check.ts': `
import { createClient, SvcClientError, type Client, type ObjectSummary } from 'swbucket/client';
import { startService, ServiceStartError, type RunningService } from 'swbucket/browser';
import { createFetchHandler, type FetchHandler } from 'swbucket/sw';
import * as root from 'swbucket';

const client: Client = createClient({ endpoint: 'http://svc.localhost', pathStyle: false });
export async function use(): Promise<ObjectSummary[]> {
  const service: RunningService = await startService({ name: 'x' });
  const link: string = service.mountUrl(await client.presign('b', 'k'));
  const handler: FetchHandler = createFetchHandler({ endpoint: 'svc.localhost' });
  const claimed: boolean = handler.claims(link);
  try { await client.getObject('b', 'k'); } catch (e) { if (e instanceof SvcClientError) console.log(e.code, claimed); }
  if (root.startService !== startService || !(new ServiceStartError('timeout', 'x') instanceof Error)) throw new Error();
  // @ts-expect-error: a bucket name is a string
  await client.putObject(1, 'k', 'v');
  return (await client.listObjects('b')).objects;
}
`,
  'tsconfig.json': JSON.stringify({ compilerOptions: {
    strict: true, noEmit: true, module: 'ESNext', moduleResolution: 'Bundler', target: 'ES2022', lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    types: [], skipLibCheck: false,
  }, files: ['types-check.ts'] }),
  'tsconfig.node16.json': JSON.stringify({ extends: './tsconfig.json', compilerOptions: { module: 'Node16', moduleResolution: 'Node16' } }),
};

let browser: Browser;
let dir: string;
let initOutput: string;

beforeAll(async () => {
  dir = tempDir('swbucket-fresh-app-');
  writeFiles(dir, APP);
  await npmInstall(dir, [inject('tarball'), `vite@${VITE_VERSION}`, `typescript@${TYPESCRIPT_VERSION}`]);
  initOutput = await run(dir, 'npx', ['swbucket', 'init', 'public']);
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
});

async function openApp(url: string): Promise<{ page: Page; result: Record<string, unknown> }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForFunction(() => document.getElementById('out')?.textContent !== '…', null, { timeout: 30_000 });
  return { page, result: JSON.parse((await page.locator('#out').textContent())!) as Record<string, unknown> };
}

async function consoleShows(page: Page, url: string, bucket: string): Promise<{ status: string; listed: boolean; controller: string | null }> {
  const consolePage = await page.context().newPage();
  await consolePage.goto(url);
  await consolePage.waitForFunction(() => /Running|Not running/.test(document.querySelector('[data-testid=service-status]')?.textContent ?? ''), null, { timeout: 30_000 });
  const listed = await consolePage.getByRole('link', { name: bucket }).first().waitFor({ timeout: 10_000 }).then(() => true, () => false);
  return {
    status: (await consolePage.locator('[data-testid=service-status]').textContent())!.replace(/\s+/g, ' ').trim(),
    listed,
    controller: await consolePage.evaluate(() => navigator.serviceWorker.controller && new URL(navigator.serviceWorker.controller.scriptURL).pathname),
  };
}

describe('a fresh Vite app, from the packed tarball', () => {
  it('the tarball holds the built package, its MIT licence and nothing of the tests; a browser app installs no server stack', () => {
    const files = execList(inject('tarball'));
    expect(files.filter((f) => /(^|\/)test\/|\.test\.|\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
    for (const f of ['package/dist/sw.js', 'package/dist/lib/client.js', 'package/dist/lib/cli.js', 'package/dist/console/index.html', 'package/dist/types/src/client/index.d.ts', 'package/LICENSE']) {
      expect(files).toContain(f);
    }
    // The licence, in the installed package as npm and licence checkers read it.
    const installed = join(dir, 'node_modules', 'swbucket');
    expect(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).license).toBe('MIT');
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} the swbucket authors\n/);
    for (const serverOnly of ['@hono/node-server', 'fake-indexeddb', 'tsx']) {
      expect(existsSync(join(dir, 'node_modules', serverOnly)), serverOnly).toBe(false);
    }
  });

  it('ships JavaScript with declarations that type-check in a strict app (bundler and Node16 resolution)', async () => {
    for (const config of ['tsconfig.json', 'tsconfig.node16.json']) {
      await expect(run(dir, 'node', ['node_modules/typescript/bin/tsc', '-p', config]), config).resolves.toBe('');
    }
  });

  it('`swbucket init public` copies the worker and the console and says what to add', () => {
    expect(initOutput).toContain('public/sw.js');
    // The address that opens the console under a dev server too (there /swbucket/ may be the app's page).
    expect(initOutput).toContain('The console opens at /swbucket/index.html');
    expect(initOutput).toContain('public/swbucket');
    expect(initOutput).toContain("import { startService } from 'swbucket/browser';");
    expect(readFileSync(join(dir, 'public/sw.js'), 'utf8')).toMatch(/^\/\* swbucket \d+\.\d+\.\d+/);
    expect(existsSync(join(dir, 'public/swbucket/index.html'))).toBe(true);
  });

  for (const base of ['/', '/demo/']) {
    describe(`built with base ${base}`, () => {
      let served: Served;
      beforeAll(async () => {
        const outDir = base === '/' ? 'dist' : 'dist-demo';
        await run(dir, 'node', ['node_modules/vite/bin/vite.js', 'build', '--base', base, '--outDir', outDir, '--logLevel', 'warn']);
        served = await serveApp(dir, 'preview', ['--base', base, '--outDir', outDir]);
      }, 120_000);
      afterAll(async () => {
        await served?.close();
      });

      it('stores and reads an object through swbucket/client; a presigned link loads; the mount serves it', async () => {
        const { page, result } = await openApp(served.url + base);
        expect(result).toMatchObject({
          ok: true,
          service: { mount: `${base}svc/`, scope: served.url + base, script: `${served.url}${base}sw.js` },
          text: 'hello from a fresh app',
          link: { status: 200, text: 'hello from a fresh app' },
        });
        // A navigation (a link a user clicks) reaches the worker through the mount under the base.
        const mountPage = await page.context().newPage();
        const res = await mountPage.goto(`${served.url}${base}svc/fresh-app/notes/hello.txt`);
        expect(res?.headers()['server']).toBe('swbucket');
        // The tab gets the worker's frame page, the object shown in its one frame.
        expect(await mountPage.frameLocator('iframe').locator('body').textContent()).toBe('hello from a fresh app');
      });

      it('a deep link opened cold starts: sw.js is found at the base, and controls the base', async () => {
        // A new context: no worker registered yet, the page's own folder has no sw.js.
        const { result } = await openApp(`${served.url}${base}gallery/view/`);
        expect(result).toMatchObject({
          ok: true,
          service: { mount: `${base}svc/`, scope: served.url + base, script: `${served.url}${base}sw.js` },
          text: 'hello from a fresh app',
        });
      });

      it(`${base}swbucket/ shows the app's bucket, using the app's worker`, async () => {
        const { page } = await openApp(served.url + base);
        expect(await consoleShows(page, `${served.url}${base}swbucket/`, 'fresh-app')).toEqual({
          status: expect.stringContaining('Running'),
          listed: true,
          controller: `${base}sw.js`,
        });
      });
    });
  }

  it('swbucket/bundle: a plain page, no bundler and no import map, starts the service and stores a picked File', async () => {
    const installed = join(dir, 'node_modules', 'swbucket');
    const bundle = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).exports['./bundle'].default as string;
    const plain = join(dir, 'plain');
    mkdirSync(plain, { recursive: true });
    copyFileSync(join(installed, bundle), join(plain, 'swbucket.js'));
    copyFileSync(join(installed, 'dist', 'sw.js'), join(plain, 'sw.js'));
    writeFileSync(join(plain, 'index.html'), `<!doctype html><meta charset="utf-8"><pre id="out">…</pre>
<script type="module">
  import { startService, createClient } from './swbucket.js';
  const out = document.getElementById('out');
  try {
    await startService();
    const s3 = createClient({ accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
    await s3.ensureBucket('plain-page');
    const file = new File(['hello from a plain page'], 'hello.txt', { type: 'text/plain' });
    await s3.putObject('plain-page', file.name, file);
    const got = await s3.getObject('plain-page', 'hello.txt');
    out.textContent = JSON.stringify({ ok: true, text: await got.response.text(), type: got.contentType });
  } catch (e) {
    out.textContent = JSON.stringify({ ok: false, error: String(e) });
  }
</script>`);
    const server = await startStaticServer(plain);
    try {
      const { result } = await openApp(server.url + '/');
      expect(result).toEqual({ ok: true, text: 'hello from a plain page', type: 'text/plain' });
    } finally {
      await server.close();
    }
  });

  it('an app that imports only swbucket/client ships no service code, and a small first load', async () => {
    await run(dir, 'node', ['node_modules/vite/bin/vite.js', 'build', '--config', 'vite.client-only.config.js', '--logLevel', 'warn']);
    const assets = join(dir, 'dist-client', 'assets');
    const chunks = readdirSync(assets).filter((f) => f.endsWith('.js')).map((f) => ({ f, text: readFileSync(join(assets, f), 'utf8') }));
    const all = chunks.map((c) => c.text).join('\n');
    // Markers of the service: the IndexedDB schema, the handler's error text, the XML builder.
    for (const marker of ['createObjectStore', 'We encountered an internal error', 'XMLBuilder', 'MalformedXML']) {
      expect(all.includes(marker), marker).toBe(false);
    }
    const html = readFileSync(join(dir, 'dist-client', 'client-only.html'), 'utf8');
    const entry = chunks.find((c) => html.includes(c.f))!;
    const lazy = chunks.filter((c) => c !== entry);
    const kb = (n: number) => Math.round(n / 102.4) / 10;
    const sizes = {
      entryKb: kb(statSync(join(assets, entry.f)).size),
      entryGzipKb: kb(gzipSync(entry.text).length),
      lazyKb: kb(lazy.reduce((n, c) => n + c.text.length, 0)),
    };
    console.log(`client-only app: first load ${sizes.entryKb} KB (${sizes.entryGzipKb} KB gzip); loaded on demand (the XML parser, the hashing worker, MD5) ${sizes.lazyKb} KB`);
    expect(sizes.entryKb).toBeLessThan(30);
    // The XML parser, the hashing worker and the in-place MD5 load only when first needed.
    expect(lazy.length).toBeGreaterThanOrEqual(2);
  });
});

function execList(tarball: string): string[] {
  return execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n');
}
