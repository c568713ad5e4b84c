// Every main view of the console with meaningful data, in real Chromium: each shows a loading
// state before its data, fits a 400 px wide screen without page-level horizontal scroll, and is
// saved as a screenshot at 1280×800 and 400×800 (test-results/screenshots/{view}-{width}.png; with
// UPDATE_SCREENSHOTS=1 also test/browser/screenshots/{view}.png for the README).
import { describe, it, expect, beforeAll } from 'vitest';
import type { Page } from 'playwright-core';
import { makeMp4, makePng } from './support/media.ts';
import {
  b64, expectNoHorizontalScroll, MiB, nav, openBucket, row, screenshot, useConsolePage, withClient, type ConsoleWindow,
} from './console-helpers.ts';

const consolePage = useConsolePage();
let page: Page;

beforeAll(async () => {
  page = consolePage.page;
  await seed();
}, 120_000);

/** A small but believable store: three buckets, photos and documents, uploads in progress, accounts. */
async function seed(): Promise<void> {
  const photo = (w: number, h: number, tint: [number, number, number]) => b64(makePng(w, h, (x, y) => [
    Math.round((x / w) * tint[0]), Math.round((y / h) * tint[1]), Math.round(((x + y) / (w + h)) * tint[2]),
  ]));
  await withClient(page, async (c, files) => {
    const bytes = (s: string) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));
    await c.createBucket('photos', { acl: 'public-read' });
    await c.putBucketVersioning('photos', 'Enabled');
    await c.createBucket('documents');
    await c.createBucket('backups');
    await c.putBucketVersioning('backups', 'Suspended');
    await c.putObject('photos', 'cover.png', bytes(files.cover), { contentType: 'image/png', cacheControl: 'max-age=3600', metadata: { camera: 'pixel-8', album: 'summer' } });
    await c.putObject('photos', 'holiday/beach.png', bytes(files.beach), { contentType: 'image/png' });
    await c.putObject('photos', 'holiday/sunset.png', bytes(files.sunset), { contentType: 'image/png' });
    await c.putObject('photos', 'clips/waves.mp4', bytes(files.mp4), { contentType: 'video/mp4' });
    await c.putObject('photos', 'captions.json', JSON.stringify({ cover: 'The bay at dawn', beach: 'Low tide' }), { contentType: 'application/json' });
    await c.putObject('photos', 'README.txt', 'Photos of the summer trip.\n', { contentType: 'text/plain' });
    await c.putObject('photos', 'large-panorama.png', new Uint8Array(3 * 1024 * 1024 + 12345), { contentType: 'image/png' });
    await c.putObject('photos', 'cover.png', bytes(files.cover), { contentType: 'image/png', cacheControl: 'max-age=3600', metadata: { camera: 'pixel-8', album: 'summer' } });
    for (const [k, v] of Object.entries({ 'reports/2024/q3.txt': 'Q3 numbers', 'reports/2024/q4.txt': 'Q4 numbers', 'invoice-0042.txt': 'Invoice 42', 'contracts/lease.txt': 'Lease' })) {
      await c.putObject('documents', k, v, { contentType: 'text/plain' });
    }
    // Uploads in progress.
    const dump = await c.createMultipartUpload('backups', 'db-dump-2024-11.tar');
    for (let p = 1; p <= 3; p++) await c.uploadPart('backups', 'db-dump-2024-11.tar', dump, p, new Uint8Array(64 * 1024 + p));
    const raw = await c.createMultipartUpload('photos', 'raw/IMG_2001.cr2');
    await c.uploadPart('photos', 'raw/IMG_2001.cr2', raw, 1, new Uint8Array(48 * 1024));
    // Accounts with quotas and use.
    await c.putAccount('alice', { secretAccessKey: 'alice-secret', displayName: 'Alice', quotaBytes: 10 * 1024 * 1024 });
    await c.putAccount('bob', { secretAccessKey: 'bob-secret-1', displayName: 'Bob', quotaBytes: 1024 * 1024 });
    await c.putAccount('carol', { secretAccessKey: 'carol-secret', displayName: 'Carol' });
    const as = (id: string, secret: string) => (window as unknown as ConsoleWindow).swbucket.createClient({ endpoint: 'http://svc.localhost', accessKeyId: id, secretAccessKey: secret });
    const alice = as('alice', 'alice-secret');
    await alice.createBucket('alice-notes');
    await alice.putObject('alice-notes', 'draft.bin', new Uint8Array(3 * 1024 * 1024 + 400 * 1024));
    const bob = as('bob', 'bob-secret-1');
    await bob.createBucket('bob-music');
    await bob.putObject('bob-music', 'song.bin', new Uint8Array(950 * 1024));
    // A few failures for the log.
    await c.getObject('photos', 'missing.jpg').catch(() => {});
    await c.deleteBucket('documents').catch(() => {});
    await fetch('http://documents.svc.localhost/invoice-0042.txt');
  }, { cover: photo(320, 200, [255, 180, 120]), beach: photo(160, 100, [90, 200, 255]), sunset: photo(160, 100, [255, 120, 60]), mp4: b64(makeMp4({ seconds: 2 }).mp4) });
}

type View = 'buckets' | 'objects' | 'grid' | 'uploads' | 'accounts' | 'log' | 'playground' | 'settings';

/** Brings a view up with its data on screen (as a user would get there), ready for a picture. */
async function show(view: View): Promise<void> {
  switch (view) {
    case 'buckets':
      await nav(page, 'Buckets');
      await page.getByTestId('refresh-buckets').click();
      await expect.poll(() => page.getByTestId('bucket-row').count()).toBe(3);
      await expect.poll(() => page.locator('[data-testid=bucket-acl]:disabled').count()).toBe(0);
      break;
    case 'objects':
      await openBucket(page, 'photos');
      await page.getByTestId('layout-list').click();
      await expect.poll(() => page.getByTestId('object-row').count()).toBe(4);
      if (await page.getByTestId('object-details').count() === 0) {
        await row(page, 'cover.png').getByRole('button', { name: 'cover.png' }).click();
      }
      await page.waitForFunction(() => ((document.querySelector('[data-testid=preview-image]') as HTMLImageElement | null)?.naturalWidth ?? 0) > 0);
      await expect.poll(() => page.getByTestId('detail-versions').locator('li').count()).toBe(2);
      break;
    case 'grid':
      await openBucket(page, 'photos');
      await page.getByTestId('layout-grid').click();
      await expect.poll(() => page.getByTestId('object-tile').count()).toBe(4);
      await page.waitForFunction(() => ((document.querySelector('[data-key="cover.png"] [data-testid=thumbnail]') as HTMLImageElement | null)?.naturalWidth ?? 0) > 0);
      // Named like an image but not one: it shows its extension once the browser gives up drawing it.
      await expect.poll(() => page.locator('[data-key="large-panorama.png"] [data-testid=file-glyph]').textContent()).toBe('PNG');
      break;
    case 'uploads':
      await nav(page, 'Uploads');
      await expect.poll(() => page.getByTestId('upload-row').count()).toBe(2);
      await page.getByTestId('upload-row').filter({ hasText: 'db-dump-2024-11.tar' }).getByTestId('upload-parts-toggle').click();
      await expect.poll(() => page.getByTestId('part-row').count()).toBe(3);
      break;
    case 'accounts':
      await nav(page, 'Accounts');
      await expect.poll(() => page.getByTestId('account-row').count()).toBe(4);
      await expect.poll(() => page.locator('[data-testid=usage-bar][data-id="(browser)"] .nums').textContent()).not.toBe('measuring…');
      break;
    case 'log':
      // Recent traffic with its failures, so the newest rows show more than 200s.
      await withClient(page, async (c) => {
        await c.putObject('documents', 'reports/2024/q4.txt', 'Q4 numbers, revised', { contentType: 'text/plain' });
        await c.getObject('photos', 'holiday/missing.png').catch(() => {});
        await fetch('http://documents.svc.localhost/reports/2024/q4.txt');
        await c.deleteBucket('photos').catch(() => {});
        await c.getObject('photos', 'cover.png', { range: { start: 0, end: 1023 } });
      }, null);
      await nav(page, 'Request log');
      await expect.poll(async () => Number(await page.getByTestId('log-table').getAttribute('data-count'))).toBeGreaterThan(20);
      break;
    case 'playground':
      await nav(page, 'Playground');
      await page.getByTestId('playground-method').selectOption('PUT');
      await page.getByTestId('playground-bucket').fill('documents');
      await page.getByTestId('playground-key').fill('notes/hello.txt');
      await page.getByTestId('playground-headers').fill('Content-Type: text/plain\nx-svc-meta-author: playground\nCache-Control: no-cache');
      await page.getByTestId('playground-body').fill('Hello from the playground!\n');
      await page.getByTestId('playground-send').click();
      await expect.poll(() => page.getByTestId('playground-response-status').textContent()).toBe('200 OK');
      expect(await withClient(page, async (c) => (await c.headObject('documents', 'notes/hello.txt')).metadata, null)).toEqual({ author: 'playground' });
      break;
    case 'settings':
      await nav(page, 'Settings');
      await expect.poll(() => page.getByTestId('settings-worker-state').textContent()).toBe('activated');
      await page.getByTestId('settings-check').click();
      await expect.poll(() => page.getByTestId('settings-check-result').textContent()).toMatch(/^OK/);
      break;
  }
  // The objects view shows its list and the open details together: the list at the top of the screen.
  if (view === 'objects') await page.getByTestId('objects-table').evaluate((t) => t.scrollIntoView({ block: 'start' }));
  else await page.evaluate(() => window.scrollTo(0, 0));
}

const VIEWS: View[] = ['buckets', 'objects', 'grid', 'uploads', 'accounts', 'log', 'playground', 'settings'];

describe('every view', () => {
  it('shows a loading state before its data', async () => {
    // Every state box and busy marker that ever enters the page, however briefly.
    await page.evaluate(() => {
      const w = window as unknown as { __states: string[] };
      w.__states = [];
      new MutationObserver((records) => {
        for (const r of records) {
          for (const n of r.addedNodes) {
            if (!(n instanceof HTMLElement)) continue;
            for (const el of [n, ...n.querySelectorAll<HTMLElement>('.state, [aria-busy=true]')]) {
              if (el.matches('.state, [aria-busy=true]')) w.__states.push(el.textContent!.trim());
            }
          }
        }
      }).observe(document.body, { childList: true, subtree: true });
    });
    await nav(page, 'Settings'); // from elsewhere, so that each view below is mounted afresh
    await show('buckets');
    await show('objects');
    await show('uploads');
    await show('accounts');
    await show('log');
    const states = await page.evaluate(() => (window as unknown as { __states: string[] }).__states);
    for (const text of ['Loading buckets…', 'Loading…', 'Looking for uploads in progress…', 'Loading accounts…', 'Reading the request log…']) {
      expect(states, `a "${text}" state`).toContain(text);
    }
  });

  it('labels every control, and shows where the keyboard focus is on every view', async () => {
    for (const view of VIEWS) {
      await show(view);
      const unnamed = await page.evaluate(() => {
        const nameOf = (el: HTMLElement): string => {
          const labels = (el as HTMLInputElement).labels;
          if (labels && labels.length > 0) return [...labels].map((l) => l.textContent!.trim()).join(' ');
          const by = el.getAttribute('aria-labelledby');
          if (by) return by.split(' ').map((id) => document.getElementById(id)?.textContent?.trim() ?? '').join(' ');
          return el.getAttribute('aria-label') ?? (el.tagName === 'BUTTON' || el.tagName === 'A' ? el.textContent!.trim() : '') ?? '';
        };
        return [...document.querySelectorAll<HTMLElement>('input, select, textarea, button, a[href]')]
          .filter((el) => el.checkVisibility() && (el as HTMLInputElement).type !== 'hidden')
          .filter((el) => nameOf(el).trim() === '')
          .map((el) => el.outerHTML.slice(0, 120));
      });
      expect(unnamed, `${view}: controls without an accessible name`).toEqual([]);
      // Tab through the view: every stop is marked.
      let stops = 0;
      for (let i = 0; i < 15; i++) {
        await page.keyboard.press('Tab');
        const f = await page.evaluate(() => {
          const el = document.activeElement as HTMLElement;
          const st = getComputedStyle(el);
          return { what: `${el.tagName} ${el.textContent?.trim().slice(0, 30)}`, body: el === document.body, visible: el.matches(':focus-visible'), outline: `${st.outlineStyle} ${st.outlineWidth}` };
        });
        if (f.body) continue;
        stops++;
        expect(f.visible, `${view}: ${f.what} matches :focus-visible`).toBe(true);
        expect(f.outline, `${view}: ${f.what} has an outline`).toMatch(/^(solid|auto|dotted|dashed|double) [1-9]/);
      }
      expect(stops, `${view}: focus stops reached`).toBeGreaterThan(10);
      await page.keyboard.press('Escape');
    }
  });

  it('at 1280 px: the seeded data on every view, saved as screenshots', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    for (const view of VIEWS) {
      await show(view);
      await expectNoHorizontalScroll(page, view);
      await screenshot(page, view);
    }
    // What the pictures show is what the service holds.
    const held = await withClient(page, async (c) => (await c.listBuckets()).buckets.map((b) => b.name), null);
    expect(held).toEqual(['backups', 'documents', 'photos']);
  });

  it('at 390 px: every tab is in sight; every view fits the width (no page-level horizontal scroll), saved as screenshots', async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    const tabs = await page.locator('nav[aria-label="Views"] a').evaluateAll((links) => links.map((a) => {
      const r = a.getBoundingClientRect();
      return { tab: a.textContent, inSight: r.left >= 0 && r.right <= window.innerWidth && r.width > 0 };
    }));
    expect(tabs.length).toBeGreaterThanOrEqual(6);
    expect(tabs.filter((t) => !t.inSight)).toEqual([]);
    for (const view of VIEWS) {
      await show(view);
      await expectNoHorizontalScroll(page, view);
      await screenshot(page, view);
    }
    // And with a log entry's details open.
    await nav(page, 'Request log');
    await page.getByTestId('log-row-open').first().click();
    await expect.poll(() => page.getByTestId('log-details').evaluate((d: HTMLDialogElement) => d.open)).toBe(true);
    await expectNoHorizontalScroll(page, 'log details');
    const box = await page.getByTestId('log-details').boundingBox();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    await page.keyboard.press('Escape');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('the root client saw the same store the views showed', async () => {
    const summary = await page.evaluate(async () => {
      const c = (window as unknown as ConsoleWindow).swbucket.client;
      const accounts = await c.listAccounts();
      const uploads = (await c.listMultipartUploads('backups')).uploads.length + (await c.listMultipartUploads('photos')).uploads.length;
      return { accounts: accounts.map((a) => [a.accessKeyId, a.quotaBytes ?? null]), uploads };
    });
    expect(summary).toEqual({
      accounts: [['alice', 10 * MiB], ['bob', MiB], ['carol', null], ['svcadmin', null]],
      uploads: 2,
    });
  });
});
