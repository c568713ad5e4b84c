// The console's request log in real Chromium: empty state after clearing, the live table (newest
// first) streaming without moving what the reader looks at and without layout shift, pause and
// resume, filters (checked against what the worker stored), one request's details opened with the
// keyboard only, the latency chart, and entries surviving a reload (the ring buffer).
import { describe, it, expect, beforeAll } from 'vitest';
import type { Page } from 'playwright-core';
import { expectNotice, nav, storedLog, useConsolePage, withClient, type StoredLogEntry } from './console-helpers.ts';

const consolePage = useConsolePage();
let page: Page;

beforeAll(() => {
  page = consolePage.page;
});

const table = () => page.getByTestId('log-table');
const count = async () => Number(await table().getAttribute('data-count'));
const scroller = () => page.getByTestId('log-scroller');

/** `n` signed HEAD Bucket requests, one after another. */
function heads(n: number, bucket = 'logb'): Promise<void> {
  return withClient(page, async (c, { n, bucket }) => {
    for (let i = 0; i < n; i++) await c.headBucket(bucket);
  }, { n, bucket });
}

/** The filters of the view, applied to what the worker stored (the view's own rule). */
function matching(entries: StoredLogEntry[], f: { status?: string; operation?: string; bucket?: string; text?: string }): StoredLogEntry[] {
  const needle = (f.text ?? '').trim().toLowerCase();
  return entries.filter((r) => (!f.status || String(r.status).startsWith(f.status))
    && (f.operation === undefined || r.operation === f.operation)
    && (f.bucket === undefined || r.bucket === f.bucket)
    && (needle === '' || [r.url, r.key, r.requestId, r.code ?? ''].some((x) => x.toLowerCase().includes(needle))));
}

function formatMs(ms: number): string {
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

describe('request log', () => {
  it('is empty once cleared, then shows each new request as it happens', async () => {
    await nav(page, 'Request log');
    await page.getByTestId('log-clear').click(); // confirm() is accepted
    await expectNotice(page, 'The request log is cleared.');
    expect(await page.getByTestId('log-empty').textContent()).toContain('No requests yet');
    expect(await count()).toBe(0);
    expect(await storedLog(page)).toEqual([]);

    await withClient(page, (c) => c.createBucket('logb'), null);
    await expect.poll(() => count()).toBe(1);
    const cells = await page.getByTestId('log-row').first().locator('td').allTextContents();
    expect(cells.slice(1, 5)).toEqual(['PUT', 'CreateBucket', 'logb/', '200']);
    expect(cells[8]).toBe('svcadmin');
    expect(await page.getByTestId('log-empty').count()).toBe(0);
    const held = await storedLog(page);
    expect(held.map((e) => e.operation)).toEqual(['CreateBucket']);
  });

  it('streams new requests in without moving the row being read, and without layout shift', async () => {
    await heads(60);
    await expect.poll(() => count()).toBe(61);
    // Newest first.
    const seqs = await page.getByTestId('log-row').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-seq'))));
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(seqs[0]).toBe(Math.max(...(await storedLog(page)).map((e) => e.seq)));

    await page.evaluate(() => {
      const w = window as unknown as { __shift: number };
      w.__shift = 0;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries() as (PerformanceEntry & { value: number; hadRecentInput: boolean })[]) {
          if (!e.hadRecentInput) w.__shift += e.value;
        }
      }).observe({ type: 'layout-shift' });
    });
    // Scroll the table down by ten rows, with the mouse wheel, and read the row in the middle.
    // On a loaded machine a wheel event sent before the pointer has reached the table scrolls
    // nothing (seen once in a clean-clone run): sent again until the table has scrolled.
    const scrollTop = () => scroller().evaluate((s) => s.scrollTop);
    for (let tries = 0; (await scrollTop()) < 300; tries++) {
      expect(tries, 'the table did not scroll under the mouse wheel').toBeLessThan(5);
      await scroller().hover();
      await page.mouse.wheel(0, 340);
      for (let t = 0; t < 20 && (await scrollTop()) < 300; t++) await page.waitForTimeout(100);
    }
    const watched = await scroller().evaluate((s) => {
      const box = s.getBoundingClientRect();
      const tr = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2)!.closest('tr[data-uid]')!;
      return { uid: tr.getAttribute('data-uid')!, top: tr.getBoundingClientRect().top, text: tr.textContent };
    });

    await heads(50);
    await expect.poll(() => count()).toBe(111);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const after = await page.locator(`tr[data-uid="${watched.uid}"]`).evaluate((tr) => ({ top: tr.getBoundingClientRect().top, text: tr.textContent }));
    expect(after.text).toBe(watched.text);
    expect(Math.abs(after.top - watched.top), `row moved from ${watched.top} to ${after.top}`).toBeLessThanOrEqual(1);
    const shift = await page.evaluate(() => (window as unknown as { __shift: number }).__shift);
    expect(shift, 'layout shift while the log streamed').toBeLessThan(0.01);

    // Back at the top, the 50 new ones are there, newest first.
    await scroller().evaluate((s) => s.scrollTo(0, 0));
    await expect.poll(() => page.getByTestId('log-row').first().getAttribute('data-seq'))
      .toBe(String(Math.max(...(await storedLog(page)).map((e) => e.seq))));
  });

  it('pauses and resumes the stream', async () => {
    const pause = page.getByTestId('log-pause');
    await pause.click();
    expect(await pause.getAttribute('aria-pressed')).toBe('true');
    expect(await page.getByTestId('log-count').textContent()).toContain('· paused');
    const before = await count();
    await heads(3);
    await expect.poll(() => pause.textContent()).toContain('Resume (3 new)');
    expect(await count()).toBe(before);
    await pause.click();
    await expect.poll(() => count()).toBe(before + 3);
    expect(await pause.getAttribute('aria-pressed')).toBe('false');
  });

  it('filters by status class, operation, bucket and text, as many as the worker stored', async () => {
    // Some failures among the successes: 404 NoSuchKey, 403 AccessDenied (anonymous), 409 BucketNotEmpty.
    await withClient(page, async (c) => {
      await c.createBucket('other-b');
      await c.putObject('other-b', 'kept.txt', 'x');
      await c.putObject('logb', 'present.txt', 'here');
      await c.getObject('logb', 'present.txt');
      for (const k of ['missing-key-1.txt', 'missing-key-2.txt']) await c.getObject('logb', k).catch(() => {});
      await c.deleteBucket('other-b').catch(() => {});
      await fetch('http://logb.svc.localhost/present.txt');
    }, null);
    const held = await storedLog(page);
    await expect.poll(() => count()).toBe(held.length);

    const status = page.getByTestId('log-filter-status');
    const operation = page.getByTestId('log-filter-operation');
    const bucket = page.getByTestId('log-filter-bucket');
    const text = page.getByTestId('log-filter-text');

    await status.selectOption('4');
    const errors = matching(held, { status: '4' });
    expect(errors.map((e) => e.code).sort()).toEqual(['AccessDenied', 'BucketNotEmpty', 'NoSuchKey', 'NoSuchKey']);
    await expect.poll(() => count()).toBe(errors.length);
    expect(await page.getByTestId('log-row').locator('td:nth-child(5)').allTextContents()).toEqual(errors.reverse().map((e) => String(e.status)));
    await status.selectOption('2');
    await expect.poll(() => count()).toBe(matching(held, { status: '2' }).length);
    await status.selectOption('5');
    await expect.poll(() => page.getByTestId('log-no-match').textContent()).toContain('No request matches these filters.');
    expect(await count()).toBe(0);
    await status.selectOption('all');

    expect(await operation.locator('option').allTextContents()).toEqual(
      ['All operations', ...[...new Set(held.map((e) => e.operation))].sort().map((o) => o || '(no operation)')]);
    await operation.selectOption('GetObject');
    await expect.poll(() => count()).toBe(matching(held, { operation: 'GetObject' }).length);
    expect(await count()).toBe(4);
    await bucket.selectOption('other-b');
    await expect.poll(() => count()).toBe(0);
    await operation.selectOption('*');
    await expect.poll(() => count()).toBe(matching(held, { bucket: 'other-b' }).length);
    expect(await count()).toBe(3); // create, put, the refused delete
    await bucket.selectOption('*');

    await text.fill('MISSING-KEY');
    await expect.poll(() => count()).toBe(2);
    expect(matching(held, { text: 'MISSING-KEY' })).toHaveLength(2);
    await text.fill('nosuchkey');
    await expect.poll(() => count()).toBe(2);
    const one = held.find((e) => e.operation === 'PutObject' && e.key === 'present.txt')!;
    await text.fill(one.requestId);
    await expect.poll(() => count()).toBe(1);
    expect(await page.getByTestId('log-row').getAttribute('data-seq')).toBe(String(one.seq));

    await page.getByRole('button', { name: 'Clear filters' }).first().click();
    await expect.poll(() => count()).toBe(held.length);
    expect(await text.inputValue()).toBe('');
  });

  it('draws the latency of the requests shown', async () => {
    const held = await storedLog(page);
    const chart = page.getByTestId('latency-chart');
    const check = async (shown: StoredLogEntry[]) => {
      // The chart: the newest 100 of those shown, oldest left.
      const recent = shown.slice(-100);
      const sorted = recent.map((e) => e.durationMs).sort((a, b) => a - b);
      const pct = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
      await expect.poll(() => chart.locator('rect.bar').count()).toBe(recent.length);
      expect(await chart.locator('svg').getAttribute('aria-label')).toBe(
        `Latency of the last ${recent.length} requests: median ${formatMs(pct(0.5))}, 95th percentile ${formatMs(pct(0.95))}, slowest ${formatMs(sorted.at(-1)!)}.`);
      // Failures are coloured as such.
      expect(await chart.locator('rect.bar.s4').count()).toBe(recent.filter((e) => e.status >= 400 && e.status < 500).length);
    };
    await check(held);
    await page.getByTestId('log-filter-bucket').selectOption('other-b');
    await check(matching(held, { bucket: 'other-b' }));
    await page.getByTestId('log-filter-bucket').selectOption('*');
  });

  it('opens one request\'s details with the keyboard: headers, error code, timing, bytes', async () => {
    await withClient(page, (c) => c.getObject('logb', 'keyboard-missing.txt').catch(() => {}), null);
    const entry = (await storedLog(page)).find((e) => e.key === 'keyboard-missing.txt')!;
    expect(entry).toMatchObject({ status: 404, code: 'NoSuchKey' });

    // Freshly loaded, from the top of the page: Tab to the text filter and type.
    await page.reload();
    await page.waitForFunction(() => Number(document.querySelector('[data-testid=log-table]')?.getAttribute('data-count') ?? 0) > 0, null, { timeout: 20_000 });
    const focused = () => page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      const s = getComputedStyle(el);
      return { testid: el.getAttribute('data-testid'), visible: el.matches(':focus-visible'), outline: `${s.outlineStyle} ${s.outlineWidth}` };
    });
    const stops: string[] = [];
    for (let i = 0; i < 30 && (await focused()).testid !== 'log-filter-text'; i++) {
      await page.keyboard.press('Tab');
      stops.push(await page.evaluate(() => `${document.activeElement?.tagName}:${document.activeElement?.textContent?.trim().slice(0, 20)}:${document.activeElement?.getAttribute('data-testid')}`));
    }
    expect((await focused()).testid, stops.join(' | ')).toBe('log-filter-text');
    await page.keyboard.type('keyboard-missing');
    await expect.poll(() => count()).toBe(1);
    // On to the row's button (past "Clear filters").
    for (let i = 0; i < 5 && (await focused()).testid !== 'log-row-open'; i++) await page.keyboard.press('Tab');
    const f = await focused();
    expect(f.testid).toBe('log-row-open');
    expect(f.visible).toBe(true);
    expect(f.outline).toMatch(/^(solid|auto|dotted|dashed|double) [1-9]/);
    await page.keyboard.press('Enter');

    const dialog = page.getByTestId('log-details');
    await expect.poll(() => dialog.evaluate((d: HTMLDialogElement) => d.open)).toBe(true);
    expect(await dialog.locator('h3').first().textContent()).toBe('GET GetObject 404');
    const facts = Object.fromEntries(await dialog.locator('dl').evaluate((dl) =>
      [...dl.querySelectorAll('dt')].map((dt) => [dt.textContent, dt.nextElementSibling!.textContent!.trim()])));
    expect(facts).toMatchObject({
      'Request id': entry.requestId,
      URL: entry.url,
      Operation: 'GetObject',
      Bucket: 'logb',
      Key: 'keyboard-missing.txt',
      Status: '404',
      'Error code': 'NoSuchKey',
      Duration: `${entry.durationMs.toFixed(1)} ms`,
      'Access key': 'svcadmin',
      'Log position': `#${entry.seq}`,
    });
    expect(facts['Bytes in']).toContain(`(${entry.bytesIn} bytes)`);
    expect(facts['Bytes out']).toContain(`(${entry.bytesOut} bytes)`);
    expect(entry.bytesOut).toBeGreaterThan(0); // the XML error body
    const headerTable = async (testid: string) => dialog.getByTestId(testid).locator('tbody tr').evaluateAll((rows) =>
      rows.map((r) => [r.children[0]!.textContent, r.children[1]!.textContent]));
    expect(await headerTable('log-details-request-headers')).toEqual(entry.requestHeaders);
    expect(await headerTable('log-details-response-headers')).toEqual(entry.responseHeaders);
    expect(entry.requestHeaders.map(([n]) => n)).toEqual(expect.arrayContaining(['authorization', 'x-svc-date']));
    expect(entry.responseHeaders).toContainEqual(['x-svc-request-id', entry.requestId]);

    // Escape closes it, and the focus goes back to where it was.
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.evaluate((d: HTMLDialogElement) => d.open)).toBe(false);
    expect((await focused()).testid).toBe('log-row-open');
    await page.getByTestId('log-filter-text').fill('');
  });

  it('keeps earlier requests across a reload (the ring buffer)', async () => {
    const held = await storedLog(page);
    const first = held[0]!;
    await page.reload();
    await page.waitForFunction(() => Boolean((window as unknown as { swbucket?: unknown }).swbucket), null, { timeout: 20_000 });
    expect(await page.evaluate(() => location.hash)).toBe('#/log');
    const now = await storedLog(page);
    await expect.poll(() => count()).toBe(now.length);
    expect(now.length).toBeGreaterThanOrEqual(held.length);
    await page.getByTestId('log-filter-text').fill(first.requestId);
    await expect.poll(() => count()).toBe(1);
    expect(await page.getByTestId('log-row').locator('td').nth(2).textContent()).toBe('CreateBucket');
    await page.getByTestId('log-filter-text').fill('');
  });

  it('names the dialect of a request that was not SVC\'s: S3 beside the operation, and in the details', async () => {
    await nav(page, 'Request log');
    await page.getByTestId('log-clear').click();
    await expectNotice(page, 'The request log is cleared.');
    // An anonymous ListObjectsV2 on S3's host: refused, in S3's dialect.
    const status = await page.evaluate(async () => (await fetch('http://logb.s3.localhost/?list-type=2')).status);
    expect(status).toBe(403);
    await expect.poll(() => count()).toBe(1);
    expect(await page.getByTestId('log-row-dialect').allTextContents()).toEqual(['S3']);
    expect((await storedLog(page)).map((e) => (e as { dialect?: string }).dialect)).toEqual(['s3']);
    await page.getByTestId('log-row-open').first().click();
    expect(await page.getByTestId('log-details-dialect').textContent()).toContain('S3 (AWS Signature Version 4');
    await page.getByTestId('log-details-close').click();
    await withClient(page, (c) => c.headBucket('logb'), null);
    await expect.poll(() => count()).toBe(2);
    // An SVC request has no badge.
    expect(await page.getByTestId('log-row-dialect').count()).toBe(1);
  });
});
