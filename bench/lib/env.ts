// Everything the figures run against, started once: the built site (dist-site/ via the tests' static
// server), the bench origin (floor worker, raw page, MD5 worker), the storage floor's origin, s3rver,
// and one Chromium.
import { build as viteBuild } from 'vite';
import { build as esbuild } from 'esbuild';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import S3rver from 's3rver';
import { CHROMIUM_FLAGS, findChromium } from '../../test/browser/support/chromium.ts';
import { startStaticServer, type StaticServer } from '../../test/browser/support/static-server.ts';

const BENCH = fileURLToPath(new URL('..', import.meta.url));
/** How long after launching Chromium the figures may start (see startEnv). */
const SETTLE_MS = 8000;

/** Bundles one of bench/browser/*.ts into a classic script. */
export async function bundle(entry: string): Promise<string> {
  const out = await esbuild({
    entryPoints: [join(BENCH, 'browser', entry)],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome110',
    write: false,
    minify: true,
  });
  return out.outputFiles[0]!.text;
}

export interface Pages {
  /** The built swbucket page, controlled by dist-site/sw.js. */
  sw: Page;
  /** Controlled by the floor worker. */
  floor: Page;
  /** Controlled by the storage floor worker, on an origin of its own. */
  store: Page;
  /** Controlled by no worker: raw IndexedDB, s3rver, the MD5 worker. */
  raw: Page;
}

export interface Env {
  context: BrowserContext;
  pages: Pages;
  site: StaticServer;
  bench: StaticServer;
  /** The storage floor's origin. */
  storage: StaticServer;
  s3: { url: string; bucket: string };
  chromiumVersion: string;
  close(): Promise<void>;
}

/** s3rver in this process, on a free loopback port, its data in a temp directory, CORS open to any origin. */
async function startS3rver(dir: string, bucket: string): Promise<{ url: string; close(): Promise<void> }> {
  const cors = `<CORSConfiguration><CORSRule>
    <AllowedOrigin>*</AllowedOrigin>
    <AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod><AllowedMethod>POST</AllowedMethod>
    <AllowedMethod>DELETE</AllowedMethod><AllowedMethod>HEAD</AllowedMethod>
    <AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>3000</MaxAgeSeconds>
  </CORSRule></CORSConfiguration>`;
  const s3 = new S3rver({ directory: dir, silent: true, configureBuckets: [{ name: bucket, configs: [cors] }] });
  await s3.configureBuckets();
  // Its own http server on port 0, so no fixed port can collide with anything else on the machine.
  const server: Server = createServer(s3.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

export async function startEnv(log: (line: string) => void): Promise<Env> {
  log('building the site (vite build)…');
  await viteBuild({ logLevel: 'warn' });
  const [harness, floorSw, storageFloorSw, md5Worker] = await Promise.all(
    [bundle('harness.ts'), bundle('floor-sw.ts'), bundle('storage-floor-sw.ts'), bundle('md5-worker.ts')]);

  const site = await startStaticServer();
  const bench = await startStaticServer(join(BENCH, 'pages'));
  bench.bodies.set('/floor-sw.js', floorSw);
  bench.bodies.set('/md5-worker.js', md5Worker);
  // Its own origin: its IndexedDB and its quota are not the raw page's.
  const storage = await startStaticServer(join(BENCH, 'pages'));
  storage.bodies.set('/storage-floor-sw.js', storageFloorSw);

  const tmp = await mkdtemp(join(tmpdir(), 'swbucket-bench-'));
  const s3Bucket = 'bench-s3';
  const s3 = await startS3rver(join(tmp, 's3rver'), s3Bucket);

  // A persistent profile on disk: IndexedDB writes reach the disk as they do for a user (a fresh
  // incognito-like context would keep IndexedDB in memory and flatter every figure).
  const launched = Date.now();
  const context = await chromium.launchPersistentContext(join(tmp, 'profile'), {
    executablePath: findChromium(),
    args: CHROMIUM_FLAGS,
    headless: true,
  });
  const chromiumVersion = context.browser()?.version() ?? 'unknown';
  await writeFile(join(tmp, 'harness.js'), harness);

  const open = async (url: string, ready: string): Promise<Page> => {
    const page = await context.newPage();
    page.on('pageerror', (e) => log(`  [page error ${url}] ${e.message}`));
    await page.goto(url);
    await page.waitForFunction(ready, null, { timeout: 30_000 });
    await page.addScriptTag({ content: harness });
    return page;
  };
  const sw = await open(site.url + '/', 'Boolean(window.swbucket && window.swbucket.client)');
  const floor = await open(bench.url + '/floor/index.html', 'window.floorReady && navigator.serviceWorker.controller !== null');
  const store = await open(storage.url + '/storage-floor/index.html', 'window.floorReady && navigator.serviceWorker.controller !== null');
  const raw = await open(bench.url + '/raw.html', 'document.readyState === "complete"');
  await raw.evaluate((u) => (window as unknown as { __bench: { setS3Base(u: string): void } }).__bench.setS3Base(u), `${s3.url}`);
  // Large Blobs sent to the worker in Chromium's first seconds fail (seen with Chromium 156: Upload
  // Parts of a 256 MiB Blob's 8 MiB slices answered 400 "could not be read to its end" and 500
  // "Failed to write blobs (InvalidBlob)" from IndexedDB, and the same calls 5 s later succeed), so
  // a run whose first figure is 4 (`--only 4`, `--only 7`) would stop. Let the browser settle.
  await new Promise((r) => setTimeout(r, Math.max(0, SETTLE_MS - (Date.now() - launched))));

  return {
    context,
    pages: { sw, floor, store, raw },
    site,
    bench,
    storage,
    s3: { url: s3.url, bucket: s3Bucket },
    chromiumVersion,
    async close() {
      await context.close().catch(() => {});
      await Promise.all([site.close(), bench.close(), storage.close(), s3.close()]);
      await rm(tmp, { recursive: true, force: true });
    },
  };
}

/** Calls window.__bench[name](...args) in a page. */
export function call<T>(page: Page, name: string, ...args: unknown[]): Promise<T> {
  return page.evaluate(
    ([n, a]) => (window as unknown as { __bench: Record<string, (...x: unknown[]) => unknown> }).__bench[n as string]!(...(a as unknown[])),
    [name, args] as const,
  ) as Promise<T>;
}
