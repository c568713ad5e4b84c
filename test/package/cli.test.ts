// The `swbucket` bin and the swbucket/vite plugin as an adopter meets them: the packed tarball
// installed into one fresh app, then `npx swbucket` (help, init, serve) and the plugin under a
// sub-path in `vite build` + `vite preview` and in `vite dev`, with Chromium where a page must run.
import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import type { Browser } from 'playwright-core';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium } from '../browser/support/chromium.ts';
import { VITE_VERSION, freePort, npmInstall, run, serveApp, shellEnv, tempDir, writeFiles, type Served } from './support/app.ts';

const PKG = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; devDependencies: Record<string, string> };

const APP = {
  'package.json': JSON.stringify({ name: 'cli-app', private: true, type: 'module' }),
  'vite.config.js': "import { swbucket } from 'swbucket/vite';\n\nexport default { plugins: [swbucket()] };\n",
  // Relative, so that it follows the base.
  'index.html': '<!doctype html><html><head><meta charset="utf-8"><title>plugin app</title></head>'
    + '<body><pre id="out">…</pre><script type="module" src="./main.js"></script></body></html>',
  'main.js': `
import { startService } from 'swbucket/browser';

const out = document.getElementById('out');
try {
  const service = await startService();
  out.textContent = JSON.stringify({ ok: true, scope: service.registration.scope, mount: service.mount, script: service.scriptUrl });
} catch (e) {
  out.textContent = JSON.stringify({ ok: false, error: String(e) });
}
// A part of the app loaded only when asked for (a lazy route): its own chunk in the build.
window.later = () => import('./later.js').then((m) => m.greeting);
`,
  'later.js': "export const greeting = 'loaded later';\n",
  // A Node script of the app, importing swbucket/client by its package name.
  'check.mjs': `
import { createClient } from 'swbucket/client';

const s3 = createClient({ endpoint: process.argv[2], accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
await s3.createBucket('from-node');
const put = await s3.putObject('from-node', 'notes/hello.txt', 'hello from node', { contentType: 'text/plain' });
const got = await s3.getObject('from-node', 'notes/hello.txt');
console.log(JSON.stringify({ etag: put.etag, text: await got.response.text(), type: got.response.headers.get('content-type') }));
`,
};

/** An app's own service worker, which swbucket must never overwrite unasked. */
const OWN_WORKER = "// the app's own worker\nself.addEventListener('fetch', () => {});\n";

let dir: string;
/** The worker the installed package ships, which init copies and the plugin serves. */
let shippedWorker: string;

beforeAll(async () => {
  dir = tempDir('swbucket-cli-app-');
  writeFiles(dir, APP);
  await npmInstall(dir, [inject('tarball'), `vite@${VITE_VERSION}`]);
  shippedWorker = readFileSync(join(dir, 'node_modules/swbucket/dist/sw.js'), 'utf8');
}, 180_000);

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npx swbucket …` in the app: its exit code and output, whatever the code. */
function swbucket(...args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile('npx', ['swbucket', ...args], { cwd: dir, env: shellEnv(), timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const read = (path: string) => readFileSync(join(dir, path), 'utf8');

describe('npx swbucket', () => {
  it('--help prints the usage of init and serve; --version the package version; an unknown command fails with the help', async () => {
    const help = await swbucket('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(`swbucket ${PKG.version}`);
    expect(help.stdout).toContain('swbucket init <publicDir>');
    expect(help.stdout).toContain('swbucket serve');

    const version = await swbucket('--version');
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(PKG.version);

    const unknown = await swbucket('frobnicate');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    expect(unknown.stderr).toContain('swbucket init <publicDir>');
    expect(unknown.stdout).toBe('');

    // Each command's own usage, on --help and on an option it does not take.
    const initHelp = await swbucket('init', '--help');
    expect(initHelp.code).toBe(0);
    expect(initHelp.stdout).toContain('swbucket init <publicDir>');
    expect(initHelp.stdout).not.toContain('swbucket serve');
    const bogus = await swbucket('serve', '--bogus');
    expect(bogus.code).not.toBe(0);
    expect(bogus.stderr).toContain("'--bogus'");
    expect(bogus.stderr).toContain('swbucket serve [--port 9000]');
  });
});

describe('npx swbucket init', () => {
  it('copies the worker and the console; run again, it replaces its own copies', async () => {
    const first = await swbucket('init', 'public');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('wrote public/sw.js');
    expect(first.stdout).toContain('wrote public/swbucket/');
    expect(read('public/sw.js')).toBe(shippedWorker);
    expect(read('public/sw.js').startsWith(`/* swbucket ${PKG.version} `)).toBe(true);
    expect(read('public/swbucket/index.html')).toContain('<title>swbucket console</title>');

    // What an earlier copy may have left, and a worker cut short (its banner intact).
    writeFileSync(join(dir, 'public/swbucket/stale.js'), 'old');
    writeFileSync(join(dir, 'public/sw.js'), shippedWorker.slice(0, 120));
    const again = await swbucket('init', 'public');
    expect(again.code, again.stderr).toBe(0);
    expect(existsSync(join(dir, 'public/swbucket/stale.js'))).toBe(false);
    expect(read('public/sw.js')).toBe(shippedWorker);
    expect(read('public/swbucket/index.html')).toContain('<title>swbucket console</title>');
  });

  it("leaves an app's own sw.js alone, saying what to do instead; --no-worker copies only the console; --force replaces it", async () => {
    writeFiles(dir, { 'own/sw.js': OWN_WORKER });
    const refused = await swbucket('init', 'own');
    expect(refused.code).not.toBe(0);
    expect(read('own/sw.js')).toBe(OWN_WORKER);
    expect(existsSync(join(dir, 'own/swbucket')), 'a refused init copies nothing').toBe(false);
    expect(refused.stderr).toContain('own/sw.js exists and is not swbucket');
    expect(refused.stderr).toContain('createFetchHandler() from swbucket/sw');
    // The command it suggests works as written.
    expect(refused.stderr).toContain('`swbucket init own --no-worker`');
    expect(refused.stderr).toContain('--force');

    const consoleOnly = await swbucket('init', 'own', '--no-worker');
    expect(consoleOnly.code, consoleOnly.stderr).toBe(0);
    expect(read('own/sw.js')).toBe(OWN_WORKER);
    expect(read('own/swbucket/index.html')).toContain('<title>swbucket console</title>');
    expect(consoleOnly.stdout).toContain('wrote own/swbucket/');
    expect(consoleOnly.stdout).not.toContain('own/sw.js');

    const forced = await swbucket('init', 'own', '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(read('own/sw.js')).toBe(shippedWorker);
  });

  it('leaves a swbucket/ folder that is not its console alone; --no-console and --force as for the worker', async () => {
    writeFiles(dir, { 'taken/swbucket/index.html': '<p>my own page</p>' });
    const refused = await swbucket('init', 'taken');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("taken/swbucket exists and is not swbucket's console");
    expect(refused.stderr).toContain('--force');
    expect(read('taken/swbucket/index.html')).toBe('<p>my own page</p>');
    expect(readdirSync(join(dir, 'taken/swbucket'))).toEqual(['index.html']);
    expect(existsSync(join(dir, 'taken/sw.js')), 'a refused init writes nothing, the worker neither').toBe(false);

    const workerOnly = await swbucket('init', 'taken', '--no-console');
    expect(workerOnly.code, workerOnly.stderr).toBe(0);
    expect(read('taken/swbucket/index.html')).toBe('<p>my own page</p>');
    expect(read('taken/sw.js')).toBe(shippedWorker);

    const forced = await swbucket('init', 'taken', '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(read('taken/swbucket/index.html')).toContain('<title>swbucket console</title>');
  });

  it('without a folder (or with two) fails with the usage', async () => {
    for (const args of [['init'], ['init', 'a', 'b']]) {
      const r = await swbucket(...args);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr).toContain('swbucket init <publicDir>');
    }
    expect(existsSync(join(dir, 'a'))).toBe(false);
  });
});

describe('swbucket serve', () => {
  let server: ChildProcess | undefined;
  afterAll(() => {
    if (server && server.exitCode === null) server.kill('SIGKILL');
  });

  it('without the optional peers fails at once, naming what to install', async () => {
    const port = await freePort();
    const r = await swbucket('serve', '--port', String(port));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('@hono/node-server');
    expect(r.stderr).toContain('fake-indexeddb');
    expect(r.stderr).toContain('npm install');
  });

  it('with them: serves a Node script of the app through swbucket/client, then stops on SIGTERM with exit 0', async () => {
    await npmInstall(dir, ['@hono/node-server', 'fake-indexeddb'].map((name) => `${name}@${PKG.devDependencies[name]}`));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // The bin itself, as an npm script runs it: `npx` (npm exec) does not pass SIGTERM on to it.
    server = spawn(join(dir, 'node_modules/.bin/swbucket'), ['serve', '--port', String(port)], { cwd: dir, env: shellEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    server.stdout!.on('data', (d) => (output += d));
    server.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => server!.once('exit', (code) => resolve(code)));
    await expect.poll(() => output, { timeout: 15_000 }).toContain('listening on');
    expect(output).toContain(`swbucket ${PKG.version} listening on ${url} `);
    expect(output).toContain(`createClient({ endpoint: '${url}'`);

    // A second server on the same port says why it cannot start.
    const busy = await swbucket('serve', '--port', String(port));
    expect(busy.code).not.toBe(0);
    expect(busy.stderr).toContain('EADDRINUSE');

    const result = JSON.parse(await run(dir, 'node', ['check.mjs', url])) as Record<string, string>;
    expect(result).toEqual({ etag: expect.stringMatching(/^[0-9a-f]{32}$/), text: 'hello from node', type: 'text/plain' });
    // One log line per request.
    await expect.poll(() => output).toMatch(/ 200 GET 127\.0\.0\.1:\d+\/from-node\/notes\/hello\.txt GetObject /);
    expect(output).toMatch(/ 200 PUT 127\.0\.0\.1:\d+\/from-node\/ CreateBucket /);
    expect(output).toMatch(/ 200 PUT 127\.0\.0\.1:\d+\/from-node\/notes\/hello\.txt PutObject /);

    server.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('SIGTERM, stopping');
  });
});

describe('swbucket export / import / serve --seed', () => {
  const servers: ChildProcess[] = [];
  afterAll(() => {
    for (const s of servers) if (s.exitCode === null) s.kill('SIGKILL');
  });

  /** `swbucket serve` on a free port with these options; resolves once it has said what it did. */
  async function serve(...args: string[]): Promise<{ url: string; output: () => string }> {
    const port = await freePort();
    const server = spawn(join(dir, 'node_modules/.bin/swbucket'), ['serve', '--port', String(port), ...args], { cwd: dir, env: shellEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    servers.push(server);
    let output = '';
    server.stdout!.on('data', (d) => (output += d));
    server.stderr!.on('data', (d) => (output += d));
    await expect.poll(() => output, { timeout: 15_000 }).toContain('listening on');
    if (args.includes('--seed')) await expect.poll(() => output, { timeout: 15_000 }).toMatch(/seeded|not seeded/);
    return { url: `http://127.0.0.1:${port}`, output: () => output };
  }

  it('moves a server\'s data to another through an archive file; --seed fills an empty server', async () => {
    await npmInstall(dir, ['@hono/node-server', 'fake-indexeddb'].map((name) => `${name}@${PKG.devDependencies[name]}`));
    writeFileSync(join(dir, 'welcome.tar'), readFileSync('examples/vanilla/public/welcome.tar'));
    const a = await serve('--seed', 'welcome.tar');
    expect(a.output()).toContain('seeded the empty store from welcome.tar: 1 object(s) in 1 bucket(s)');
    JSON.parse(await run(dir, 'node', ['check.mjs', a.url]));

    const exported = await swbucket('export', '--endpoint', a.url, '-o', 'backup.tar', '--versions');
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toContain('exported 2 objects');
    expect(exported.stdout).toContain('to backup.tar');
    const listing = await run(dir, 'tar', ['-tf', 'backup.tar']);
    expect(listing.split('\n').filter(Boolean)).toEqual(['swbucket.json', 'objects/from-node/notes/hello.txt', 'objects/notes/welcome.txt']);

    const b = await serve();
    const imported = await swbucket('import', 'backup.tar', '--endpoint', b.url);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('imported 2 objects');
    const again = await swbucket('import', 'backup.tar', '--endpoint', b.url);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('ImportConflict');
    expect(again.stderr).toContain('Nothing was imported');
    const skipped = await swbucket('import', 'backup.tar', '--endpoint', b.url, '--conflict', 'skip');
    expect(skipped.stdout).toContain('skipped 2 that existed');
    // From a pipe: standard input, as `-` and as /dev/stdin (a file of no size until read).
    const c = await serve();
    const piped = await run(dir, 'sh', ['-c', `cat backup.tar | npx swbucket import - --endpoint ${c.url}`]);
    expect(piped).toContain('imported 2 objects');
    const devStdin = await run(dir, 'sh', ['-c', `cat backup.tar | npx swbucket import /dev/stdin --endpoint ${c.url} --conflict overwrite`]);
    expect(devStdin).toContain('imported 2 objects');
    // What B serves is what A stored.
    writeFileSync(join(dir, 'read.mjs'), `
import { createClient } from 'swbucket/client';
const s3 = createClient({ endpoint: process.argv[2], accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
const got = await s3.getObject('from-node', 'notes/hello.txt');
const note = await s3.getObject('notes', 'welcome.txt');
console.log(JSON.stringify({ etag: got.etag, text: await got.response.text(), type: got.contentType, author: note.metadata.author }));
`);
    const fromA = JSON.parse(await run(dir, 'node', ['read.mjs', a.url]));
    expect(JSON.parse(await run(dir, 'node', ['read.mjs', b.url]))).toEqual(fromA);
    expect(fromA).toMatchObject({ text: 'hello from node', author: 'swbucket' });

    // A missing seed, a missing archive, no server: each says so.
    expect((await swbucket('serve', '--seed', 'nope.tar')).stderr).toContain('--seed: no such file: nope.tar');
    expect((await swbucket('import', 'nope.tar', '--endpoint', b.url)).stderr).toContain('no such file: nope.tar');
    const nobody = await swbucket('export', '--endpoint', `http://127.0.0.1:${await freePort()}`);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain('nothing answers at');
  });
});

describe('swbucket/vite under the sub-path /demo/', () => {
  let browser: Browser;
  beforeAll(async () => {
    // An app with the plugin copies nothing into public/: the copies `init` made above would
    // otherwise answer for the plugin (Vite serves and emits public/ under the base).
    rmSync(join(dir, 'public'), { recursive: true, force: true });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** The app's page in a fresh browser context: what startService() said. */
  async function startedIn(url: string): Promise<Record<string, unknown>> {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(url);
      await page.waitForFunction(() => document.getElementById('out')?.textContent !== '…', null, { timeout: 30_000 });
      return JSON.parse((await page.locator('#out').textContent())!) as Record<string, unknown>;
    } finally {
      await context.close();
    }
  }

  /** The worker and the console under /demo/, as `served` answers them. */
  async function expectServed(served: Served): Promise<void> {
    const sw = await fetch(`${served.url}/demo/sw.js`);
    expect(sw.status).toBe(200);
    expect(sw.headers.get('content-type')).toMatch(/javascript/);
    const text = await sw.text();
    expect(text.startsWith('/* swbucket ')).toBe(true);
    // The build's sw.js names the build's files at its end (the plugin's precache); dev serves it as shipped.
    if (text !== shippedWorker) expect(text.startsWith(shippedWorker) && /\nself\.swbucketPrecache = \[.*\];\n$/.test(text)).toBe(true);

    const page = await fetch(`${served.url}/demo/swbucket/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('<title>swbucket console</title>');
    // Its script, relative to the console's folder.
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script, html).toBeDefined();
    const asset = await fetch(`${served.url}/demo/swbucket/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
  }

  describe('vite build --base /demo/, vite preview --base /demo/', () => {
    let served: Served;
    beforeAll(async () => {
      await run(dir, 'node', ['node_modules/vite/bin/vite.js', 'build', '--base', '/demo/', '--outDir', 'dist-demo', '--logLevel', 'warn']);
      served = await serveApp(dir, 'preview', ['--base', '/demo/', '--outDir', 'dist-demo']);
    }, 120_000);
    afterAll(async () => {
      await served?.close();
    });

    it('emits sw.js and the console into the build, served under the base', async () => {
      await expectServed(served);
      expect(existsSync(join(dir, 'dist-demo/sw.js'))).toBe(true);
      expect(existsSync(join(dir, 'dist-demo/swbucket/index.html'))).toBe(true);
      // Nothing outside the base.
      expect((await fetch(`${served.url}/sw.js`)).status).toBe(404);
      const bare = await fetch(`${served.url}/demo/swbucket`, { redirect: 'manual' });
      expect(bare.status).toBe(301);
      expect(bare.headers.get('location')).toBe('/demo/swbucket/');
    });

    it('startService() in the page gets scope {origin}/demo/ and mount /demo/svc/', async () => {
      expect(await startedIn(`${served.url}/demo/`)).toEqual({
        ok: true, scope: `${served.url}/demo/`, mount: '/demo/svc/', script: `${served.url}/demo/sw.js`,
      });
    });

    it("names the build's files in sw.js, and keeps them at the first visit: a chunk never loaded imports offline", async () => {
      const sw = read('dist-demo/sw.js');
      const names = JSON.parse(/self\.swbucketPrecache = (\[.*\]);\n$/.exec(sw)![1]!) as string[];
      const later = names.find((n) => /^assets\/later-[\w-]+\.js$/.test(n));
      expect(later, names.join(' ')).toBeDefined();
      expect(names).toContain('index.html');
      expect(names.filter((n) => n === 'sw.js' || n.startsWith('swbucket/') || n.endsWith('.map'))).toEqual([]);

      // An origin of its own (nothing kept yet), stopped to be offline.
      const own = await serveApp(dir, 'preview', ['--base', '/demo/', '--outDir', 'dist-demo']);
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(`${own.url}/demo/`);
        await page.waitForFunction(() => document.getElementById('out')?.textContent !== '…', null, { timeout: 30_000 });
        const laterUrl = `${own.url}/demo/${later!}`;
        // The worker keeps them once the page has started the service (its SHELL_MESSAGE).
        expect(await page.evaluate(async (url) => {
          for (let i = 0; i < 200 && !(await caches.match(url)); i++) await new Promise((r) => setTimeout(r, 100));
          return (await caches.match(url)) !== undefined;
        }, laterUrl)).toBe(true);
        await own.close();
        expect(await page.evaluate(() => fetch(location.href).then(() => 'online', () => 'offline'))).toBe('offline');
        expect(await page.evaluate(() => (window as unknown as { later(): Promise<string> }).later())).toBe('loaded later');
      } finally {
        await context.close();
        await own.close().catch(() => {});
      }
    });

    it('a deep link opened cold starts too: sw.js is found at the base', async () => {
      expect(await startedIn(`${served.url}/demo/gallery/view/`)).toEqual({
        ok: true, scope: `${served.url}/demo/`, mount: '/demo/svc/', script: `${served.url}/demo/sw.js`,
      });
    });
  });

  describe('vite dev --base /demo/', () => {
    let served: Served;
    beforeAll(async () => {
      served = await serveApp(dir, 'dev', ['--base', '/demo/']);
    }, 60_000);
    afterAll(async () => {
      await served?.close();
    });

    it('the plugin serves sw.js and the console (its folder itself, not only index.html) under the base', async () => {
      await expectServed(served);
      const index = await fetch(`${served.url}/demo/swbucket/index.html`);
      expect(await index.text()).toContain('<title>swbucket console</title>');
      const bare = await fetch(`${served.url}/demo/swbucket`, { redirect: 'manual' });
      expect(bare.status).toBe(301);
      expect(bare.headers.get('location')).toBe('/demo/swbucket/');
      // Nothing outside the base, as in the build.
      const outside = await fetch(`${served.url}/sw.js`);
      expect((await outside.text()).startsWith('/* swbucket ')).toBe(false);
    });

    it('startService() in the page gets scope {origin}/demo/ and mount /demo/svc/', async () => {
      expect(await startedIn(`${served.url}/demo/`)).toEqual({
        ok: true, scope: `${served.url}/demo/`, mount: '/demo/svc/', script: `${served.url}/demo/sw.js`,
      });
    });
  });

  it('with precache: false, the build ships sw.js as the package has it', async () => {
    writeFiles(dir, { 'vite.noprecache.config.js': "import { swbucket } from 'swbucket/vite';\n\nexport default { plugins: [swbucket({ precache: false })] };\n" });
    await run(dir, 'node', ['node_modules/vite/bin/vite.js', 'build', '--config', 'vite.noprecache.config.js', '--outDir', 'dist-noprecache', '--logLevel', 'warn']);
    expect(read('dist-noprecache/sw.js')).toBe(shippedWorker);
    expect(read('dist-demo/sw.js')).not.toBe(shippedWorker);
  });

  it("refuses to build over an app's own public/sw.js, saying what to do; a copy from init only gets a warning", async () => {
    writeFiles(dir, { 'public/sw.js': OWN_WORKER });
    try {
      const refused = await run(dir, 'node', ['node_modules/vite/bin/vite.js', 'build', '--outDir', 'dist-refused', '--logLevel', 'warn']).then(() => 'built', (e: Error) => e.message);
      expect(refused).toMatch(/public\/sw\.js is your app's own service worker.*swbucket\(\{ worker: false \}\)/s);
      expect(existsSync(join(dir, 'dist-refused/sw.js'))).toBe(false);
      writeFiles(dir, { 'public/sw.js': shippedWorker });
      const warned = await run(dir, 'node', ['node_modules/vite/bin/vite.js', 'build', '--outDir', 'dist-warned', '--logLevel', 'warn']);
      expect(warned).toMatch(/public\/sw\.js is a copy from `swbucket init`/);
    } finally {
      rmSync(join(dir, 'public/sw.js'), { force: true });
    }
  });
});
