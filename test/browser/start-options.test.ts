// startService() and the client from a page of an app's own, in real Chromium: the package entry
// (src/index.ts) bundled as the package build bundles it, with the client's real hashing worker
// inlined, and served as /lab.js beside the built site (whose own page starts the console, so it
// cannot be the page under test). What the options promise: the client's MD5 falls back to this
// thread where a Content-Security-Policy refuses blob: workers, and never hangs; a worker that
// already owns the scope is adopted, never replaced; `name` keeps instances apart; options the
// worker does not serve are refused; mountUrl() turns a presigned URL into one a navigation reaches.
import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { StaticServer } from './support/static-server.ts';
import { LAB_HTML, startLab } from './support/lab.ts';
import type * as Swbucket from '../../src/index.ts';

const MiB = 1024 * 1024;

/** What /lab.js puts on the page. */
type Lab = Pick<typeof Swbucket, 'createClient' | 'SvcClientError' | 'startService' | 'ServiceStartError'>;

/** One `new Worker(…)` the page attempted (recorded by the init script). */
interface WorkerAttempt {
  url: string;
  /** 'created', 'threw: {name}', 'error' (an error event), or 'ready' (the first message arrived). */
  outcome: string;
}

declare global {
  interface Window {
    lib: Lab;
    __workerAttempts: WorkerAttempt[];
  }
}



/** An app's own worker that knows nothing of swbucket: it answers /api/ping and nothing else. */
const APP_SW = `
self.addEventListener('install', (event) => event.waitUntil(self.skipWaiting()));
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (url.origin === self.location.origin && url.pathname === '/api/ping') {
    event.respondWith(Response.json({ pong: true, from: 'app-sw' }));
  }
});
`;

/** Deterministic bytes, one source text run in Node and in the page. */
const BYTES_SOURCE = `function bytes(seed, length) {
  const out = new Uint8Array(length);
  let x = (seed * 2654435761 + 1) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    out[i] = x & 255;
  }
  return out;
}`;
const bytes = new Function(`return (${BYTES_SOURCE});`)() as (seed: number, length: number) => Uint8Array;
const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');

/** Runs at document start in every page: records each Worker the page tries to start, and how it went. */
function recordWorkers(): void {
  const attempts: WorkerAttempt[] = [];
  window.__workerAttempts = attempts;
  const Real = window.Worker;
  window.Worker = new Proxy(Real, {
    construct(target, args, newTarget) {
      const entry: WorkerAttempt = { url: String(args[0]), outcome: 'pending' };
      attempts.push(entry);
      let worker: Worker;
      try {
        worker = Reflect.construct(target, args, newTarget) as Worker;
      } catch (e) {
        entry.outcome = `threw: ${(e as Error).name}`;
        throw e;
      }
      entry.outcome = 'created';
      worker.addEventListener('error', () => (entry.outcome = 'error'), { once: true });
      worker.addEventListener('message', () => {
        if (entry.outcome === 'created') entry.outcome = 'ready';
      }, { once: true });
      return worker;
    },
  });
}

let browser: Browser;
let site: StaticServer;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  ({ browser, site } = await startLab('lib', ['createClient', 'SvcClientError', 'startService', 'ServiceStartError']));
  // The same page under a policy that lets same-origin workers (the service worker) start but refuses blob: ones.
  site.bodies.set('/lab-csp.html', LAB_HTML);
  site.headers.set('/lab-csp.html', { 'content-security-policy': "worker-src 'self'" });
  site.bodies.set('/app-sw.js', APP_SW);
});
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

/** A fresh context (its own registrations and databases) with a lab page open and window.lib loaded. */
async function labPage(path = '/lab.html'): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  contexts.push(context);
  await context.addInitScript(recordWorkers);
  const page = await context.newPage();
  await page.goto(site.url + path);
  await page.waitForFunction(() => Boolean(window.lib), null, { timeout: 10_000 });
  return { context, page };
}

interface StartError {
  name: string;
  reason?: string;
  message: string;
  isServiceStartError: boolean;
}

// ------------------------------------------------------------------ hashing

describe('the client hashes Content-MD5', () => {
  /** startService, createBucket and a 1 MiB putObject with Content-MD5, raced against a 20 s timer in the page. */
  async function putWithChecksum(page: Page) {
    return page.evaluate(async ({ source, size }) => {
      const timer = new Promise<'timed out'>((resolve) => setTimeout(() => resolve('timed out'), 20_000));
      const run = async () => {
        await window.lib.startService();
        const client = window.lib.createClient({ accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
        await client.createBucket('hashing');
        const data = (new Function(`return (${source})`)() as (seed: number, length: number) => Uint8Array<ArrayBuffer>)(7, size);
        const started = performance.now();
        const put = await client.putObject('hashing', 'one-mib', new Blob([data]));
        return { etag: put.etag, putMs: Math.round(performance.now() - started) };
      };
      const result = await Promise.race([run(), timer]);
      return { result, attempts: window.__workerAttempts.map((a) => ({ ...a })) };
    }, { source: BYTES_SOURCE, size: MiB });
  }

  it('hashes in place, without hanging, when a Content-Security-Policy refuses blob: workers', async () => {
    const { page } = await labPage('/lab-csp.html');
    // The policy is in force: a blob: worker is refused here, while /sw.js (same origin) still registers below.
    const probe = await page.evaluate(async () => {
      const url = URL.createObjectURL(new Blob(['postMessage(1)'], { type: 'text/javascript' }));
      try {
        const w = new Worker(url);
        return await new Promise<string>((resolve) => {
          w.onmessage = () => resolve('ran');
          w.onerror = () => resolve('error event');
          setTimeout(() => resolve('silent'), 3000);
        });
      } catch (e) {
        return `threw ${(e as Error).name}`;
      } finally {
        window.__workerAttempts.length = 0; // only the client's own attempts count below
      }
    });
    // Chromium does not throw from the constructor: the refused worker fires an error event at once.
    expect(['error event', 'threw SecurityError'], 'the page refuses a blob: worker').toContain(probe);

    const { result, attempts } = await putWithChecksum(page);
    expect(result, 'putObject resolved within 20 s').not.toBe('timed out');
    expect(result).toMatchObject({ etag: md5(bytes(7, MiB)) });
    expect(attempts, 'the client tried its hashing worker once, from a blob: URL').toHaveLength(1);
    expect(attempts[0]!.url).toMatch(/^blob:/);
    expect(['error', 'threw: SecurityError'], 'and the worker never ran').toContain(attempts[0]!.outcome);
    // The refusal is noticed at once (an error event), not after the client's 10 s startup limit.
    expect((result as { putMs: number }).putMs, 'the fallback followed the refusal, not a timer').toBeLessThan(5000);
    expect(await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL), 'the service worker still registered').toBe(`${site.url}/sw.js`);
  });

  it('hashes in its worker, started once from a blob: URL, where nothing refuses it', async () => {
    const { page } = await labPage();
    const { result, attempts } = await putWithChecksum(page);
    expect(result, 'putObject resolved within 20 s').not.toBe('timed out');
    expect(result).toMatchObject({ etag: md5(bytes(7, MiB)) });
    // A second put reuses the worker rather than starting another.
    const etag2 = await page.evaluate(async () => {
      const client = window.lib.createClient({ accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
      return (await client.putObject('hashing', 'small', 'hello, hashing worker')).etag;
    });
    expect(etag2).toBe(md5('hello, hashing worker'));
    const after = await page.evaluate(() => window.__workerAttempts.map((a) => ({ ...a })));
    expect(after, 'one worker, from a blob: URL, that ran').toEqual([{ url: expect.stringMatching(/^blob:/), outcome: 'ready' }]);
  });
});

// ------------------------------------------------------------------ a worker of the app's own

describe('a worker that already owns the scope', () => {
  /** Registers /app-sw.js and waits until it controls the page; then calls startService(options). */
  async function startOverAppWorker(page: Page, options: Swbucket.StartOptions | undefined) {
    return page.evaluate(async (options) => {
      const sw = navigator.serviceWorker;
      await sw.register('/app-sw.js', { scope: '/' });
      if (!sw.controller) await new Promise((resolve) => sw.addEventListener('controllerchange', resolve, { once: true }));
      const before = sw.controller!.scriptURL;
      let error: StartError | null = null;
      try {
        await window.lib.startService(options);
      } catch (e) {
        const err = e as Error & { reason?: string };
        error = { name: err.name, reason: err.reason, message: err.message, isServiceStartError: err instanceof window.lib.ServiceStartError };
      }
      const regs = await sw.getRegistrations();
      const reg = await sw.getRegistration('/');
      const ping = await fetch('/api/ping').then(async (r) => ({ status: r.status, body: await r.text() }));
      return {
        before,
        error,
        registrations: regs.map((r) => ({ scope: r.scope, active: r.active?.scriptURL ?? null, waiting: r.waiting?.scriptURL ?? null, installing: r.installing?.scriptURL ?? null })),
        active: reg?.active?.scriptURL ?? null,
        controller: sw.controller?.scriptURL ?? null,
        ping,
      };
    }, options);
  }

  async function expectAdoptedNotReplaced(context: BrowserContext, page: Page, out: Awaited<ReturnType<typeof startOverAppWorker>>) {
    const appSw = `${site.url}/app-sw.js`;
    expect(out.before).toBe(appSw);
    expect(out.error, 'startService failed').not.toBeNull();
    expect(out.error!.isServiceStartError).toBe(true);
    expect(out.error!.name).toBe('ServiceStartError');
    expect(out.error!.reason).toBe('not-swbucket');
    expect(out.error!.message).toContain('/app-sw.js');
    expect(out.error!.message).toContain('swbucket/sw');
    expect(out.registrations, 'one registration, still the app\'s worker, nothing installing or waiting').toEqual([
      { scope: `${site.url}/`, active: appSw, waiting: null, installing: null },
    ]);
    expect(out.active).toBe(appSw);
    expect(out.controller).toBe(appSw);
    expect(out.ping).toEqual({ status: 200, body: JSON.stringify({ pong: true, from: 'app-sw' }) });
    // Still so a moment later (a replacement would be installing by now), and no /sw.js ever ran in this context.
    await page.waitForTimeout(500);
    expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration('/'))?.active?.scriptURL)).toBe(appSw);
    expect(context.serviceWorkers().map((w) => w.url())).not.toContain(`${site.url}/sw.js`);
  }

  it('is adopted and never replaced: startService() says it does not answer for swbucket', async () => {
    const { context, page } = await labPage();
    const out = await startOverAppWorker(page, undefined);
    await expectAdoptedNotReplaced(context, page, out);
  });

  it('gives the same answer with register: false', async () => {
    const { context, page } = await labPage();
    const out = await startOverAppWorker(page, { register: false });
    await expectAdoptedNotReplaced(context, page, out);
  });
});

// ------------------------------------------------------------------ name

describe('the name option', () => {
  it('keeps an instance apart: its worker, database, log database and log channel carry the name', async () => {
    const { page } = await labPage();
    const out = await page.evaluate(async () => {
      const service = await window.lib.startService({ name: 'second' });
      const channel = new BroadcastChannel('second-log');
      const defaultChannel = new BroadcastChannel('swbucket-log');
      const heard: unknown[] = [];
      const heardOnDefault: unknown[] = [];
      defaultChannel.onmessage = (e) => heardOnDefault.push(e.data);
      const logged = new Promise<Record<string, unknown>>((resolve) => {
        channel.onmessage = (e) => {
          heard.push(e.data);
          if ((e.data as { operation?: string }).operation === 'PutObject') resolve(e.data as Record<string, unknown>);
        };
      });
      const client = window.lib.createClient({ accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
      await client.createBucket('named');
      const put = await client.putObject('named', 'note.txt', 'kept apart');
      const entry = await Promise.race([logged, new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000))]);
      // The log database is written off the response path: wait for it to appear.
      let databases: string[] = [];
      for (let i = 0; i < 50; i++) {
        databases = (await indexedDB.databases()).map((d) => d.name ?? '').sort();
        if (databases.includes('second-log')) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      channel.close();
      defaultChannel.close();
      return {
        service: { name: service.name, scriptUrl: service.scriptUrl, endpoint: service.endpoint, mount: service.mount },
        controller: navigator.serviceWorker.controller?.scriptURL ?? '',
        put,
        entry,
        heardOnDefault: heardOnDefault.length,
        databases,
      };
    });
    const script = new URL(out.controller);
    expect(script.pathname).toBe('/sw.js');
    expect(script.searchParams.get('name')).toBe('second');
    expect(out.service.scriptUrl).toBe(out.controller);
    expect(out.service.name).toBe('second');
    expect(out.service.endpoint).toBe('svc.localhost');
    expect(out.service.mount).toBe('/svc/');
    expect(out.put.etag).toBe(md5('kept apart'));
    expect(out.entry, 'the PUT was announced on second-log').not.toBeNull();
    expect(out.entry).toMatchObject({ operation: 'PutObject', method: 'PUT', bucket: 'named', key: 'note.txt', status: 200, requestId: out.put.requestId });
    expect(out.heardOnDefault, 'nothing on the default instance\'s channel').toBe(0);
    expect(out.databases).toContain('second');
    expect(out.databases).toContain('second-log');
    expect(out.databases).not.toContain('swbucket');
    expect(out.databases).not.toContain('swbucket-log');
  });

  it('refuses an invalid name at once, with the rule, registering nothing', async () => {
    const { context, page } = await labPage();
    const out = await page.evaluate(async () => {
      const started = performance.now();
      let error: StartError | null = null;
      try {
        await window.lib.startService({ name: 'bad name!' });
      } catch (e) {
        const err = e as Error & { reason?: string };
        error = { name: err.name, reason: err.reason, message: err.message, isServiceStartError: err instanceof window.lib.ServiceStartError };
      }
      return {
        ms: performance.now() - started,
        error,
        registrations: (await navigator.serviceWorker.getRegistrations()).length,
        controller: navigator.serviceWorker.controller?.scriptURL ?? null,
      };
    });
    expect(out.error, 'startService rejected').not.toBeNull();
    expect(out.error, 'with a TypeError, not a ServiceStartError').toMatchObject({ name: 'TypeError', isServiceStartError: false });
    expect(out.error!.message).toContain('"bad name!"');
    expect(out.error!.message).toContain('1–64 characters of A-Z a-z 0-9 . _ -');
    expect(out.ms, 'at once, not after a timeout').toBeLessThan(1000);
    expect(out.registrations).toBe(0);
    expect(out.controller).toBeNull();
    await page.waitForTimeout(300);
    expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).length)).toBe(0);
    expect(context.serviceWorkers()).toHaveLength(0);
  });
});

// ------------------------------------------------------------------ options the worker does not serve

describe('options the worker does not serve', () => {
  it('refuses an endpoint other than the running worker\'s, naming both', async () => {
    const { page } = await labPage();
    const out = await page.evaluate(async () => {
      const first = await window.lib.startService();
      try {
        await window.lib.startService({ register: false, endpoint: 'other.localhost' });
        return { first: first.endpoint, error: null };
      } catch (e) {
        const err = e as Error & { reason?: string };
        return {
          first: first.endpoint,
          error: { name: err.name, reason: err.reason, message: err.message, isServiceStartError: err instanceof window.lib.ServiceStartError },
        };
      }
    });
    expect(out.first).toBe('svc.localhost');
    expect(out.error, 'the second call rejected').not.toBeNull();
    expect(out.error!.isServiceStartError).toBe(true);
    expect(out.error!.reason).toBe('options-mismatch');
    expect(out.error!.message).toContain('"other.localhost"');
    expect(out.error!.message).toContain('"svc.localhost"');
  });
});

// ------------------------------------------------------------------ mountUrl

describe('mountUrl', () => {
  it('turns a presigned URL into one on this origin\'s mount that a navigation opens', async () => {
    const { page } = await labPage();
    const key = 'notes/hello world.txt';
    const text = 'mounted bytes: héllo\n';
    const out = await page.evaluate(async ({ key, text }) => {
      const service = await window.lib.startService();
      const client = window.lib.createClient({ accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
      await client.createBucket('private-mount', { acl: 'private' });
      await client.putObject('private-mount', key, text, { contentType: 'text/plain; charset=utf-8' });
      const presigned = await client.presign('private-mount', key);
      let foreign: string;
      try {
        foreign = `returned ${service.mountUrl('https://example.com/x')}`;
      } catch (e) {
        foreign = `threw ${(e as Error).name}: ${(e as Error).message}`;
      }
      const anonymous = (await fetch(`${location.origin}/svc/private-mount/${key.split('/').map(encodeURIComponent).join('/')}`)).status;
      return { presigned, mounted: service.mountUrl(presigned), serviceRoot: service.mountUrl('http://svc.localhost/'), foreign, anonymous, origin: location.origin };
    }, { key, text });

    const presigned = new URL(out.presigned);
    expect(presigned.origin).toBe('http://private-mount.svc.localhost');
    expect(presigned.pathname).toBe('/notes/hello%20world.txt');
    expect(presigned.search).not.toBe('');
    expect(out.mounted).toBe(`${out.origin}/svc/private-mount/notes/hello%20world.txt${presigned.search}`);
    expect(out.serviceRoot).toBe(`${out.origin}/svc/`);
    expect(out.foreign).toMatch(/^threw TypeError: https:\/\/example\.com\/x is not a URL of the service at svc\.localhost/);
    expect(out.anonymous, 'the bucket is private: the mount without a signature is refused').toBe(403);

    // The tab gets the worker's frame page; the object is its frame's document, fetched by the frame.
    const framed = page.waitForResponse((r) => r.url() === out.mounted && r.request().frame() !== page.mainFrame());
    const response = await page.goto(out.mounted);
    expect(response, 'the navigation got a response').not.toBeNull();
    expect(response!.status()).toBe(200);
    expect(response!.headers()['server']).toBe('swbucket');
    expect(response!.fromServiceWorker()).toBe(true);
    const object = await framed;
    expect(object.fromServiceWorker()).toBe(true);
    expect(Buffer.from(await object.body()).toString('utf8')).toBe(text);
    const frame = page.frames().find((f) => f !== page.mainFrame())!;
    await expect.poll(() => frame.evaluate(() => document.body?.innerText ?? '')).toBe(text);
  });
});

describe('taking control without a needless reload', () => {
  it('register: false, called before the app registers its worker, waits for it and does not reload the page', async () => {
    // swbucket's own worker under another name, so that it counts as the app's worker.
    site.bodies.set('/app-swbucket.js', await readFile('dist-site/sw.js', 'utf8'));
    const { page } = await labPage();
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    const out = await page.evaluate(async () => {
      const started = window.lib.startService({ register: false });
      await navigator.serviceWorker.register('/app-swbucket.js');
      const s = await started;
      return { script: new URL(s.scriptUrl).pathname, controlled: Boolean(navigator.serviceWorker.controller) };
    });
    expect(out).toEqual({ script: '/app-swbucket.js', controlled: true });
    expect(navigations, 'the page was not reloaded').toBe(0);
  });

  it('new options on a page its worker already controls: the first call waits for the worker they install', async () => {
    const { page } = await labPage();
    const out = await page.evaluate(async () => {
      await window.lib.startService();
      const s = await window.lib.startService({ name: 'renamed' });
      return { name: s.name, script: s.scriptUrl, controller: navigator.serviceWorker.controller?.scriptURL };
    });
    expect(out.name).toBe('renamed');
    expect(new URL(out.script).search).toBe('?name=renamed');
    expect(out.controller).toBe(out.script);
  });
});
