// A real full disk in real Chromium (issue 14, point 2): the origin gets a small quota through the
// DevTools protocol (Storage.overrideQuotaForOrigin, set before the origin first touches storage),
// so IndexedDB itself refuses writes with QuotaExceededError. Writes over the limit are 403
// QuotaExceeded and change nothing (no orphan body or part, UsedBytes unchanged, earlier objects
// byte for byte); the service keeps serving; a request log that cannot write takes nothing down;
// and the console says plainly that the browser's storage for this site is full.
//
// The quota an incognito context reports through navigator.storage.estimate() is made up (Chromium
// hides the real one there), but the usage is real: sizes are derived from the usage measured once
// the service has started, never hard-coded.
import { describe, it, expect, beforeAll, afterAll, afterEach, vi } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './support/chromium.ts';
import { startStaticServer, type StaticServer } from './support/static-server.ts';
import { dbSnapshot, installPageHelpers, md5hex, orphanReport, pattern, sha256hex, waitStarted } from './support/lifecycle-helpers.ts';
import { openBucket, withClient } from './console-helpers.ts';

vi.setConfig({ expect: { poll: { timeout: 15_000, interval: 50 } } });

const MiB = 1024 * 1024;
/** The origin's quota: the worker script, the databases and a few MiB of objects fit. */
const QUOTA = 8 * MiB;
const BUCKET = 'full-disk';

let browser: Browser;
const contexts: BrowserContext[] = [];
const servers: StaticServer[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await browser?.close();
});

/**
 * A fresh origin (its own static server, so its own port) in a fresh context, with its quota set to
 * `quota` before anything is stored, then the built site's page, started.
 */
async function smallDiskPage(quota = QUOTA): Promise<Page> {
  const server = await startStaticServer();
  servers.push(server);
  const context = await browser.newContext();
  contexts.push(context);
  await installPageHelpers(context);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: server.url, quotaSize: quota });
  await page.goto(server.url + '/');
  await waitStarted(page);
  return page;
}

interface Answer {
  status: number;
  code: string | null;
  /** Milliseconds the answer took: a refused write must not hang. */
  ms: number;
}

/** One signed request from the page; a Blob body is made there from `pattern(seed, size)`. */
async function send(
  page: Page, method: string, key: string, o: { seed?: number; size?: number; query?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer & { text: string }> {
  return page.evaluate(async ({ method, bucket, key, o }) => {
    const lc = window.__lc;
    const body = o.body !== undefined ? o.body : o.size !== undefined ? new Blob([lc.pattern(o.seed ?? 0, o.size)]) : undefined;
    const t0 = performance.now();
    const r = await lc.req(method, lc.bucketUrl(bucket, key) + (o.query ?? ''), { ...(o.headers ? { headers: o.headers } : {}), ...(body !== undefined ? { body } : {}) });
    const text = method === 'HEAD' ? '' : await r.text();
    return { status: r.status, code: /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? null, ms: performance.now() - t0, text };
  }, { method, bucket: BUCKET, key, o });
}

/** What the origin stores now, by navigator.storage.estimate() (the usage is real even in incognito). */
const usage = (page: Page) => page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);

/** The root account's UsedBytes, by GET /?accounts. */
async function usedBytes(page: Page): Promise<number> {
  const text = await page.evaluate(async () => (await window.__lc.req('GET', 'http://svc.localhost/?accounts')).text());
  const m = /<UsedBytes>(\d+)<\/UsedBytes>/.exec(text);
  if (!m) throw new Error(`no UsedBytes in ${text}`);
  return Number(m[1]);
}

/** GET key: status, size and SHA-256 of the body, and the ETag. */
function read(page: Page, key: string) {
  return page.evaluate(async ({ bucket, key }) => {
    const r = await window.__lc.req('GET', window.__lc.bucketUrl(bucket, key));
    const blob = await r.blob();
    return { status: r.status, etag: r.headers.get('etag'), size: blob.size, sha256: await window.__lc.sha256(blob) };
  }, { bucket: BUCKET, key });
}

async function expectWhole(page: Page, key: string, seed: number, size: number): Promise<void> {
  const bytes = pattern(seed, size);
  expect(await read(page, key), key).toEqual({ status: 200, etag: `"${md5hex(bytes)}"`, size, sha256: sha256hex(bytes) });
}

async function expectNoOrphans(page: Page): Promise<void> {
  expect(orphanReport(await dbSnapshot(page))).toEqual([]);
}

/** Entries in the request log's database (swbucket-log), counted from the page. */
function logCount(page: Page): Promise<number> {
  return page.evaluate(() => new Promise<number>((resolve, reject) => {
    const open = indexedDB.open('swbucket-log');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const r = db.transaction('entries').objectStore('entries').count();
      r.onsuccess = () => {
        db.close();
        resolve(r.result);
      };
      r.onerror = () => reject(r.error);
    };
  }));
}

/** Complete Multipart Upload with part 1. */
function completeUpload(page: Page, uploadId: string, etag: string): Promise<{ status: number; code: string | null; text: string }> {
  return page.evaluate(async ({ bucket, uploadId, etag }) => {
    const xml = `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${etag}</ETag></Part></CompleteMultipartUpload>`;
    const r = await window.__lc.req('POST', window.__lc.bucketUrl(bucket, 'multi') + `?uploadId=${uploadId}`, { body: xml });
    const text = await r.text();
    return { status: r.status, code: /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? null, text };
  }, { bucket: BUCKET, uploadId, etag });
}

/** A completed multipart object reads back as its parts' bytes, in order. */
async function expectParts(page: Page, key: string, parts: { seed: number; size: number }[]): Promise<void> {
  const bytes = Buffer.concat(parts.map((p) => pattern(p.seed, p.size)));
  const got = await read(page, key);
  expect({ status: got.status, size: got.size, sha256: got.sha256 }, key).toEqual({ status: 200, size: bytes.length, sha256: sha256hex(bytes) });
}

/** Creates an upload of `multi` with part 1 of `size` pattern(7) bytes. */
async function startUpload(page: Page, size: number): Promise<{ uploadId: string; etag: string }> {
  const created = await send(page, 'POST', 'multi', { query: '?uploads' });
  expect(created.status).toBe(200);
  const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(created.text)![1]!;
  const part = await send(page, 'PUT', 'multi', { seed: 7, size, query: `?partNumber=1&uploadId=${uploadId}` });
  expect(part.status).toBe(200);
  return { uploadId, etag: `"${md5hex(pattern(7, size))}"` };
}

describe('a full disk: IndexedDB refuses the write', () => {
  it('PUT, Upload Part and Copy over the limit are 403 QuotaExceeded and change nothing; Complete adds no bytes; the service keeps serving', async () => {
    const page = await smallDiskPage();
    expect((await send(page, 'PUT', '')).status, 'create bucket').toBe(200);
    const free = QUOTA - (await usage(page));
    expect(free, 'room left after start').toBeGreaterThan(4 * MiB);

    // One object takes 60% of what is left: another of its size (PUT, a part, a copy) cannot fit.
    const big = Math.floor(free * 0.6);
    expect((await send(page, 'PUT', 'kept', { seed: 1, size: big })).status).toBe(200);
    // A multipart upload in progress, with one small part.
    const small = 64 * 1024;
    const { uploadId, etag } = await startUpload(page, small);

    const before = await usedBytes(page);
    expect(before).toBe(big + small);
    const snapshot = await dbSnapshot(page);
    expect(orphanReport(snapshot)).toEqual([]);

    const refusals = {
      put: await send(page, 'PUT', 'too-big', { seed: 2, size: big }),
      replace: await send(page, 'PUT', 'multi-other', { seed: 3, size: big }),
      part: await send(page, 'PUT', 'multi', { seed: 4, size: big, query: `?partNumber=2&uploadId=${uploadId}` }),
      copy: await send(page, 'PUT', 'kept-copy', { headers: { 'x-svc-copy-source': `/${BUCKET}/kept` } }),
    };
    for (const [what, r] of Object.entries(refusals)) {
      expect({ what, status: r.status, code: r.code }).toEqual({ what, status: 403, code: 'QuotaExceeded' });
      expect(r.text, what).toContain('The browser refused to store more data.');
      expect(r.ms, `${what} answered in time`).toBeLessThan(10_000);
    }

    // Nothing half-written: the same records, no orphan body or part, the same usage figure.
    const after = await dbSnapshot(page);
    expect(orphanReport(after)).toEqual([]);
    expect(after.bodies.map((b) => b.id).sort()).toEqual(snapshot.bodies.map((b) => b.id).sort());
    expect(after.parts).toEqual(snapshot.parts);
    expect(after.objects.map((o) => o.key)).toEqual(['kept']);
    expect(await usedBytes(page)).toBe(before);
    await expectWhole(page, 'kept', 1, big);
    for (const key of ['too-big', 'multi-other', 'kept-copy']) expect((await read(page, key)).status, key).toBe(404);

    // Completing hands the parts' bodies to the object: no byte is added. Chromium may still count
    // the refused bodies for a moment and refuse even these few metadata bytes: then the answer is
    // 403 QuotaExceeded and nothing changed (the brim test below forces that case).
    const complete = () => completeUpload(page, uploadId, etag);
    const first = await complete();
    expect([200, 403]).toContain(first.status);
    if (first.status === 403) {
      expect(first.code).toBe('QuotaExceeded');
      expect(await dbSnapshot(page)).toEqual(after);
    }

    // The service keeps serving: delete the big object, and a write that needs its room fits.
    // Even while Chromium counts the origin as full (it refuses any transaction that puts a
    // record), the DELETE frees the room: refused, it is retried deleting the owner's usage marker
    // instead of putting the figure (sw/store/rules/store.ts, freeing), and the figure is recomputed.
    const deleted = await send(page, 'DELETE', 'kept');
    expect(deleted.status, deleted.text).toBe(200);
    expect((await read(page, 'kept')).status).toBe(404);
    expect(await usedBytes(page)).toBe(small);
    if (first.status === 403) expect((await complete()).status).toBe(200);
    await expectParts(page, 'multi', [{ seed: 7, size: small }]);
    // Chromium deletes a freed body's file, and stops counting its bytes, a moment after the commit
    // (seen once in a loaded CI run): until then a write that needs that room may still be refused,
    // cleanly (403 QuotaExceeded, nothing changed: the usage and orphan checks below hold).
    let again = await send(page, 'PUT', 'after', { seed: 5, size: big });
    for (let i = 0; i < 40 && again.status === 403 && again.code === 'QuotaExceeded'; i++) {
      await new Promise((r) => setTimeout(r, 250));
      again = await send(page, 'PUT', 'after', { seed: 5, size: big });
    }
    expect(again.status, again.text).toBe(200);
    await expectWhole(page, 'after', 5, big);
    expect(await usedBytes(page)).toBe(small + big);
    await expectNoOrphans(page);
  });

  it('when the request log cannot write (the origin is full), requests still answer on their own merits, none hangs', async () => {
    const page = await smallDiskPage();
    expect((await send(page, 'PUT', '')).status, 'create bucket').toBe(200);
    const { uploadId, etag } = await startUpload(page, 64 * 1024);
    const free = QUOTA - (await usage(page));
    // Fill the origin to the brim: ever smaller objects until not even one byte more is stored.
    const stored: { key: string; seed: number; size: number }[] = [];
    let n = 0;
    for (let size = Math.floor(free / 8); size >= 1; size = Math.floor(size / 4)) {
      for (;;) {
        const key = `fill-${n++}`;
        const r = await send(page, 'PUT', key, { seed: n, size });
        if (r.status !== 200) {
          expect({ status: r.status, code: r.code }).toEqual({ status: 403, code: 'QuotaExceeded' });
          break;
        }
        stored.push({ key, seed: n, size });
      }
    }
    expect(stored.length).toBeGreaterThan(0);
    // Let the log finish what it could still write, then note how many entries it holds.
    let logged = await logCount(page);
    await expect.poll(async () => {
      const was = logged;
      await new Promise((r) => setTimeout(r, 300));
      logged = await logCount(page);
      return logged === was;
    }).toBe(true);

    const used = await usedBytes(page);
    const answers = {
      get: await send(page, 'GET', stored[0]!.key),
      head: await send(page, 'HEAD', stored[0]!.key),
      missing: await send(page, 'GET', 'no-such-key'),
      list: await send(page, 'GET', ''),
      put: await send(page, 'PUT', 'one-more', { body: 'x' }),
      badBucket: await page.evaluate(async () => {
        const t0 = performance.now();
        const r = await window.__lc.req('GET', window.__lc.bucketUrl('no-such-bucket', 'k'));
        const text = await r.text();
        return { status: r.status, code: /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? null, ms: performance.now() - t0, text };
      }),
    };
    const seen = Object.fromEntries(Object.entries(answers).map(([k, a]) => [k, { status: a.status, code: a.code }]));
    expect(seen).toEqual({
      get: { status: 200, code: null },
      head: { status: 200, code: null },
      missing: { status: 404, code: 'NoSuchKey' },
      list: { status: 200, code: null },
      put: { status: 403, code: 'QuotaExceeded' },
      badBucket: { status: 404, code: 'NoSuchBucket' },
    });
    for (const [k, a] of Object.entries(answers)) expect(a.ms, `${k} answered in time`).toBeLessThan(10_000);
    expect(answers.list.text).toContain(`<Key>${stored[0]!.key}</Key>`);
    // Complete Multipart Upload adds no byte, but its few metadata bytes do not fit either: refused,
    // and nothing changed (the upload and its part are still there).
    const whole = await dbSnapshot(page);
    const done = await completeUpload(page, uploadId, etag);
    expect({ status: done.status, code: done.code }).toEqual({ status: 403, code: 'QuotaExceeded' });
    expect(await dbSnapshot(page)).toEqual(whole);
    expect(whole.parts).toHaveLength(1);
    // The log really could not write: those seven requests left no entry.
    await new Promise((r) => setTimeout(r, 500));
    expect(await logCount(page)).toBe(logged);
    // And the store is whole: every object byte for byte, no orphan, the usage figure unchanged.
    for (const s of stored.slice(0, 3)) await expectWhole(page, s.key, s.seed, s.size);
    expect(await usedBytes(page)).toBe(used);
    await expectNoOrphans(page);
  });

  it('the console says plainly that the browser\'s storage for this site is full, and what to do', async () => {
    const page = await smallDiskPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.waitForFunction(() => document.querySelector('[data-testid=current-account]')?.textContent === 'svcadmin', null, { timeout: 20_000 });
    await withClient(page, (c, b) => c.createBucket(b), BUCKET);
    const free = QUOTA - (await usage(page));
    await openBucket(page, BUCKET);
    // Under the client's part size (8 MiB), so one PUT; clearly bigger than all the room there is
    // (exactly `free` bytes fitted once, in one run of many: the usage read had not settled).
    const size = Math.min(free + MiB, 8 * MiB - 1);
    await page.getByTestId('file-input').setInputFiles({ name: 'too-big.bin', mimeType: 'application/octet-stream', buffer: Buffer.from(pattern(9, size)) });
    const item = page.getByTestId('upload-item').filter({ has: page.locator('.name', { hasText: /^too-big\.bin$/ }) });
    await expect.poll(() => item.getAttribute('data-state')).toBe('failed');
    const text = (await item.textContent()) ?? '';
    expect(text).toContain("The browser's storage for this site is full");
    expect(text).toMatch(/Delete objects/);
    expect(text).toContain('Settings → Storage');
  });
});
