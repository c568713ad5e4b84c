// Archives and fixtures in real Chromium, through the built worker and real IndexedDB: export →
// delete everything → import gives back every version byte for byte with its ETag, headers and
// metadata; startService({ seed }) fills an empty store on the first start and never again over
// data; a 256 MiB export streams through the worker without holding it (CDP heap samples).
import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_FLAGS, findChromium } from './support/chromium.ts';
import type { StaticServer } from './support/static-server.ts';
import { startLab } from './support/lab.ts';
import { attachToServiceWorker } from '../../bench/lib/cdp.ts';
import type * as Swbucket from '../../src/index.ts';

type ArchiveLab = Pick<typeof Swbucket, 'createClient' | 'startService' | 'deleteAllData'>;

declare global {
  interface Window {
    archiveLab: ArchiveLab;
  }
}

let browser: Browser;
let site: StaticServer;
const contexts: BrowserContext[] = [];
const cleanups: (() => Promise<void>)[] = [];
const MiB = 1024 * 1024;

beforeAll(async () => {
  ({ browser, site } = await startLab('archiveLab', ['createClient', 'startService', 'deleteAllData']));
  // The notes example's seed: an archive made by swbucket's export (npm run example-archive).
  site.bodies.set('/welcome.tar', new Uint8Array(readFileSync('examples/vanilla/public/welcome.tar')));
});
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

async function labPage(context?: BrowserContext): Promise<Page> {
  const ctx = context ?? (await browser.newContext());
  if (!context) contexts.push(ctx);
  const page = await ctx.newPage();
  await page.goto(site.url + '/lab.html');
  await page.waitForFunction(() => Boolean(window.archiveLab), null, { timeout: 10_000 });
  return page;
}

/** Puts a bit of everything in the store and returns what a reader sees of it. */
async function fill(page: Page) {
  return page.evaluate(async () => {
    const { startService, createClient } = window.archiveLab;
    const service = await startService();
    const s3 = createClient({ endpoint: `http://${service.endpoint}`, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
    await s3.createBucket('photos', { acl: 'public-read' });
    await s3.createBucket('docs');
    const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);
    await s3.putObject('photos', 'cat.jpg', bytes(300_000, 1), {
      contentType: 'image/jpeg', cacheControl: 'max-age=60', contentLanguage: 'en', metadata: { camera: 'Pentax', 'taken-at': 'noon' },
    });
    await s3.putObject('photos', 'a', 'file a');
    await s3.putObject('photos', 'a/b', 'under a');
    await s3.putObject('docs', 'ünïcode ✓/𝄞.txt', 'music', { contentType: 'text/plain; charset=utf-8' });
    await s3.putBucketVersioning('docs', 'Enabled');
    for (const text of ['one', 'two', 'three']) await s3.putObject('docs', 'v.txt', text);
    // A multipart object: its ETag is no MD5 of its bytes.
    await s3.upload('docs', 'big.bin', new Blob([bytes(5 * 1024 * 1024 + 7, 9)]), { partSize: 5 * 1024 * 1024 });
  });
}

/** Every stored version as a reader sees it: headers and a SHA-256 of the bytes. */
async function snapshot(page: Page) {
  return page.evaluate(async () => {
    const { createClient } = window.archiveLab;
    const s3 = createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
    const out: Record<string, unknown> = {};
    const hex = (b: ArrayBuffer) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, '0')).join('');
    for (const { name } of (await s3.listBuckets()).buckets) {
      const items = [];
      for await (const v of s3.listAllVersions(name)) {
        const got = await s3.getObject(name, v.key, v.versionId === 'null' ? {} : { versionId: Number(v.versionId) });
        const headers = Object.fromEntries([...got.headers].filter(([h]) => !['x-svc-request-id', 'date'].includes(h)));
        items.push({ key: v.key, versionId: v.versionId, latest: v.isLatest, sha: hex(await crypto.subtle.digest('SHA-256', await got.response.arrayBuffer())), headers });
      }
      out[name] = { acl: await s3.getBucketAcl(name), versioning: await s3.getBucketVersioning(name), items };
    }
    return out;
  });
}

describe('export → delete everything → import', () => {
  it('gives back every version byte for byte, with its ETag, headers, metadata and versionId', async () => {
    const page = await labPage();
    await fill(page);
    const before = await snapshot(page);
    expect(Object.keys(before)).toEqual(['docs', 'photos']);
    const out = await page.evaluate(async () => {
      const { createClient, deleteAllData } = window.archiveLab;
      const s3 = createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
      const archive = await s3.exportArchive({ versions: true });
      const file = await new Response(archive.body).blob();
      await deleteAllData({ name: 'swbucket' });
      const emptied = (await s3.listBuckets()).buckets.length;
      const result = await s3.importArchive(file);
      return { fileName: archive.fileName, objects: archive.objects, size: file.size, emptied, result };
    });
    expect(out.fileName).toMatch(/^swbucket-\d{8}-\d{6}\.tar$/);
    expect(out.emptied, 'deleteAllData left nothing').toBe(0);
    expect(out.objects).toBe(8);
    expect(out.result).toMatchObject({ objectsRestored: 8, bucketsCreated: 2, objectsSkipped: 0 });
    expect(await snapshot(page)).toEqual(before);
  });

  it('an archive cut short is refused and changes nothing', async () => {
    const page = await labPage();
    await fill(page);
    const out = await page.evaluate(async () => {
      const { createClient, deleteAllData } = window.archiveLab;
      const s3 = createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
      const file = await new Response((await s3.exportArchive()).body).blob();
      await deleteAllData({ name: 'swbucket' });
      await s3.createBucket('kept');
      try {
        await s3.importArchive(file.slice(0, Math.floor(file.size * 0.8)));
        return { code: 'none' };
      } catch (e) {
        const err = e as { code: string; message: string };
        return { code: err.code, message: err.message, buckets: (await s3.listBuckets()).buckets.map((b) => b.name) };
      }
    });
    expect(out.code).toBe('MalformedArchive');
    expect(out.message).toContain('Nothing was imported');
    expect(out.buckets).toEqual(['kept']);
  });
});

describe('startService({ seed })', () => {
  it('seeds an empty store on the first start, and not on the next one', async () => {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await labPage(context);
    const first = await page.evaluate(async () => {
      const service = await window.archiveLab.startService({ seed: '/welcome.tar' });
      const s3 = window.archiveLab.createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
      const note = await s3.getObject('notes', 'welcome.txt');
      // The user writes something of their own, and deletes the seeded note.
      await s3.putObject('notes', 'mine.txt', 'my own note');
      await s3.deleteObject('notes', 'welcome.txt');
      return { seeded: service.seeded, text: await note.response.text(), author: note.metadata.author };
    });
    expect(first).toEqual({ seeded: true, text: expect.stringContaining('This note came from welcome.tar'), author: 'swbucket' });
    await page.reload();
    await page.waitForFunction(() => Boolean(window.archiveLab));
    const second = await page.evaluate(async () => {
      const service = await window.archiveLab.startService({ seed: '/welcome.tar' });
      const s3 = window.archiveLab.createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
      const keys = [];
      for await (const o of s3.listAllObjects('notes')) if ('key' in o) keys.push(o.key);
      return { seeded: service.seeded, keys };
    });
    expect(second).toEqual({ seeded: false, keys: ['mine.txt'] });
  });

  it('a function seed runs once, in one tab of two starting together', async () => {
    const context = await browser.newContext();
    contexts.push(context);
    const [a, b] = [await labPage(context), await labPage(context)];
    // The worker is installed by one start first, so that both tabs start under it.
    await a.evaluate(() => window.archiveLab.startService().then(() => undefined));
    await b.reload();
    await b.waitForFunction(() => Boolean(window.archiveLab));
    const start = (p: Page) => p.evaluate(async () => {
      const service = await window.archiveLab.startService({
        seed: async (client) => {
          await client.createBucket('demo');
          await client.putObject('demo', `from-${Math.random()}`, 'x');
        },
      });
      return service.seeded;
    });
    const seeded = await Promise.all([start(a), start(b)]);
    expect(seeded.filter(Boolean)).toHaveLength(1);
    const keys = await a.evaluate(async () => {
      const s3 = window.archiveLab.createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
      return (await s3.listObjects('demo')).objects.length;
    });
    expect(keys).toBe(1);
  });

  it('a seed that cannot be fetched fails the start with what to do, and leaves the store empty', async () => {
    const page = await labPage();
    const out = await page.evaluate(async () => {
      try {
        await window.archiveLab.startService({ seed: '/missing.tar' });
        return { reason: 'none', message: '' };
      } catch (e) {
        const s3 = window.archiveLab.createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
        return { reason: (e as { reason: string }).reason, message: (e as Error).message, buckets: (await s3.listBuckets()).buckets.length };
      }
    });
    expect(out.reason).toBe('seed-failed');
    expect(out.message).toMatch(/missing\.tar could not be fetched \(404.*public\//);
    expect(out.buckets).toBe(0);
  });
});

describe('a large export streams', () => {
  it("exports 256 MiB while the worker's heap grows by less than 64 MiB, and imports it one object at a time", { timeout: 240_000 }, async () => {
    // A profile on disk: an incognito-like context keeps IndexedDB, and so 256 MiB of objects, in memory.
    const profile = mkdtempSync(join(tmpdir(), 'swbucket-archive-profile-'));
    const context = await chromium.launchPersistentContext(profile, { executablePath: findChromium(), args: CHROMIUM_FLAGS, headless: true });
    cleanups.push(async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    });
    const page = await labPage(context);
    // (256 MiB: twice the import's bound below, four times the export's.)
    const objects = 8;
    const size = 32 * MiB;
    await page.evaluate(async ({ objects, size }) => {
      const service = await window.archiveLab.startService();
      const s3 = window.archiveLab.createClient({ endpoint: `http://${service.endpoint}`, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
      await s3.createBucket('big');
      const chunk = new Uint8Array(1024 * 1024);
      for (let i = 0; i < objects; i++) {
        chunk.fill(i);
        await s3.putObject('big', `part-${String(i).padStart(2, '0')}.bin`, new Blob(Array.from({ length: size / chunk.length }, () => chunk)), { checksum: false });
      }
    }, { objects, size });

    const session = await attachToServiceWorker({ context, site });
    try {
      const used = async () => {
        const h = await session.send<{ usedSize: number; backingStorageSize?: number }>('Runtime.getHeapUsage');
        return h.usedSize + (h.backingStorageSize ?? 0);
      };
      /** The worker heap's peak growth (MiB) while `run` runs, sampled as fast as CDP answers. */
      const peakGrowth = async <T>(run: () => Promise<T>) => {
        await session.send('HeapProfiler.collectGarbage');
        const before = await used();
        let peak = before;
        let done = false;
        const running = run().finally(() => {
          done = true;
        });
        let samples = 0;
        while (!done) {
          peak = Math.max(peak, await used());
          samples++;
        }
        return { result: await running, growth: (peak - before) / MiB, samples };
      };
      await session.send('HeapProfiler.enable');

      // The page keeps the archive as a Blob (the browser's, on disk when large), as a download would.
      const exported = await peakGrowth(() => page.evaluate(async () => {
        const s3 = window.archiveLab.createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
        const archive = await s3.exportArchive();
        (window as unknown as { saved: Blob }).saved = await new Response(archive.body).blob();
        return { bytes: (window as unknown as { saved: Blob }).saved.size, objects: archive.objects };
      }));
      expect(exported.result.objects).toBe(objects);
      expect(exported.result.bytes).toBeGreaterThan(objects * size);
      expect(exported.samples, 'the heap was sampled during the export').toBeGreaterThan(10);
      console.log(`256 MiB export: worker heap peak +${exported.growth.toFixed(1)} MiB over ${exported.samples} samples`);
      expect(exported.growth).toBeLessThan(64);

      // Import it again into the emptied store: the worker holds one object's bytes at a time.
      await page.evaluate(() => window.archiveLab.deleteAllData({ name: 'swbucket' }));
      const imported = await peakGrowth(() => page.evaluate(async () => {
        const s3 = window.archiveLab.createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
        return s3.importArchive((window as unknown as { saved: Blob }).saved);
      }));
      expect(imported.result.objectsRestored).toBe(objects);
      expect(imported.result.bytesRestored).toBe(objects * size);
      console.log(`256 MiB import: worker heap peak +${imported.growth.toFixed(1)} MiB over ${imported.samples} samples`);
      // One 32 MiB object in flight, and the garbage of the chunks it came in (measured: +48-57 MiB).
      expect(imported.growth).toBeLessThan(128);
    } finally {
      await session.close();
    }
  });
});
