// The console's object browser in real Chromium, clicked through as a user does: prefix folders,
// paging, sort, search; uploads by the file picker and by drag-and-drop with their progress bars
// (a 20 MiB multipart upload to 100 %, a 48 MiB one aborted half-way); download one, or several as a tar; a grid of thumbnails; delete one and
// many; copy, move/rename; the metadata editor; object details; previews of every kind.
// The root client in the page only seeds data and checks what the service holds afterwards.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import type { Page } from 'playwright-core';
import { createHash, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { unpackTar } from 'modern-tar';
import { makeMp4, makePng } from './support/media.ts';
import { tempDir } from '../support/stores.ts';
import {
  b64, dialogs, expectNotice, makeWav, MiB, nav, openBucket, row, shownKeys, startSampling, stopSampling, storedLog, useConsolePage,
  visit, withClient,
} from './console-helpers.ts';

const consolePage = useConsolePage();
let page: Page;

beforeAll(() => {
  page = consolePage.page;
});

const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');

/** Puts small text objects (key → body) in a new bucket. */
async function seedBucket(bucket: string, objects: Record<string, string>, o: { versioning?: boolean } = {}): Promise<void> {
  await withClient(page, async (c, { bucket, objects, versioning }) => {
    await c.createBucket(bucket);
    if (versioning) await c.putBucketVersioning(bucket, 'Enabled');
    await Promise.all(Object.entries(objects).map(([k, v]) => c.putObject(bucket, k, v, { contentType: 'text/plain' })));
  }, { bucket, objects, versioning: o.versioning ?? false });
}

/** Keys of the bucket as the service lists them (no delimiter). */
function serviceKeys(bucket: string): Promise<string[]> {
  return withClient(page, async (c, bucket) => {
    const keys: string[] = [];
    for await (const o of c.listAllObjects(bucket)) if ('key' in o) keys.push(o.key);
    return keys;
  }, bucket);
}

async function serviceText(bucket: string, key: string): Promise<{ text: string; contentType: string }> {
  return withClient(page, async (c, { bucket, key }) => {
    const r = await c.getObject(bucket, key);
    return { text: await r.response.text(), contentType: r.contentType };
  }, { bucket, key });
}

/** The HTTP status of a HEAD of the key (404 once it is gone). */
function headStatus(bucket: string, key: string): Promise<number> {
  return withClient(page, async (c, { bucket, key }) => {
    try {
      await c.headObject(bucket, key);
      return 200;
    } catch (e) {
      return (e as { status: number }).status;
    }
  }, { bucket, key });
}

const folderLabels = () => page.getByTestId('folder-row').evaluateAll((rows) => rows.map((r) => r.textContent!.trim()));

describe('browsing', () => {
  beforeAll(async () => {
    await seedBucket('docs', {
      'top.txt': 'top', 'readme.md': 'readme', 'docs/a.txt': 'a', 'docs/b.txt': 'b', 'docs/sub/c.txt': 'c', 'img/logo.txt': 'logo',
    });
  });

  it('shows prefix folders (delimiter /) and opens them from a deep link', async () => {
    await openBucket(page, 'docs');
    await expect.poll(() => folderLabels()).toEqual(['docs/', 'img/']);
    expect(await shownKeys(page)).toEqual(['readme.md', 'top.txt']);
    // A shared link straight into a folder lists that folder.
    await visit(page, '#/b/docs/docs/');
    await page.reload();
    await expect.poll(() => shownKeys(page)).toEqual(['docs/a.txt', 'docs/b.txt']);
    expect(await folderLabels()).toEqual(['sub/']);
    const crumbs = await page.getByRole('navigation', { name: 'Folder' }).getByRole('link').allTextContents();
    expect(crumbs).toEqual(['Buckets', 'docs', 'docs']);
  });

  it('opens a folder by clicking it, and goes back up by the breadcrumb', async () => {
    await openBucket(page, 'docs');
    await expect.poll(() => folderLabels()).toEqual(['docs/', 'img/']);
    await page.getByTestId('folder-row').getByRole('link', { name: 'docs/' }).click();
    await expect.poll(() => page.evaluate(() => location.hash)).toBe('#/b/docs/docs/');
    // The list must now be the folder's: what the service lists under docs/ with delimiter /.
    await expect.poll(() => shownKeys(page), { message: 'the objects of docs/ after clicking the folder' }).toEqual(['docs/a.txt', 'docs/b.txt']);
    expect(await folderLabels()).toEqual(['sub/']);
    await page.getByTestId('folder-row').getByRole('link', { name: 'sub/' }).click();
    await expect.poll(() => shownKeys(page)).toEqual(['docs/sub/c.txt']);
    await page.getByTestId('crumb-bucket').click();
    await expect.poll(() => shownKeys(page)).toEqual(['readme.md', 'top.txt']);
    expect(await folderLabels()).toEqual(['docs/', 'img/']);
  });

  it('pages through a bucket of 130 objects, 100 at a time', async () => {
    await withClient(page, async (c) => {
      await c.createBucket('many');
      await Promise.all(Array.from({ length: 130 }, (_, i) => c.putObject('many', `obj-${String(i).padStart(3, '0')}`, `#${i}`)));
    }, null);
    expect(await serviceKeys('many')).toHaveLength(130);
    await openBucket(page, 'many');
    const pager = page.locator('.pager');
    await expect.poll(() => shownKeys(page)).toHaveLength(100);
    let keys = await shownKeys(page);
    expect([keys[0], keys[99]]).toEqual(['obj-000', 'obj-099']);
    expect(await pager.textContent()).toContain('Page 1');
    expect(await pager.getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true);

    await page.getByTestId('next-page').click();
    await expect.poll(() => shownKeys(page)).toHaveLength(30);
    keys = await shownKeys(page);
    expect([keys[0], keys[29]]).toEqual(['obj-100', 'obj-129']);
    expect(await pager.textContent()).toContain('Page 2 (last)');
    expect(await page.getByTestId('next-page').isDisabled()).toBe(true);

    await pager.getByRole('button', { name: 'Previous' }).click();
    await expect.poll(() => shownKeys(page)).toHaveLength(100);
    expect((await shownKeys(page))[0]).toBe('obj-000');
    expect(await pager.textContent()).toContain('Page 1');
  });

  it('searches by prefix, with an empty state when nothing matches', async () => {
    // Still in "many".
    const search = page.getByTestId('object-search');
    // Typed, one listing per keystroke: whatever order their answers come in, the last one must win.
    for (let round = 0; round < 3; round++) {
      await search.fill('');
      await expect.poll(() => shownKeys(page)).toHaveLength(100);
      await search.click();
      await page.keyboard.type('obj-12');
      expect(await search.inputValue()).toBe('obj-12');
      await expect.poll(() => shownKeys(page), { message: `round ${round}: the objects starting with obj-12` })
        .toEqual(Array.from({ length: 10 }, (_, i) => `obj-12${i}`));
    }
    expect(await page.locator('.pager').textContent()).toContain('(last)');
    await search.fill('zzz');
    await expect.poll(() => page.getByTestId('objects-empty').textContent()).toContain('Nothing starts with “zzz”');
    await search.fill('');
    await expect.poll(() => shownKeys(page)).toHaveLength(100);
  });

  it('sorts by name, size and date, both ways', async () => {
    // Sizes and dates in opposite orders to names, so each sort gives its own order.
    await withClient(page, async (c) => {
      await c.createBucket('sorting');
      const items: [string, number][] = [['d-small', 1], ['c-mid', 200], ['b-big', 3000], ['a-huge', 40000]];
      for (const [key, size] of items) {
        await c.putObject('sorting', key, 'x'.repeat(size));
        await new Promise((r) => setTimeout(r, 20)); // distinct Last-Modified (milliseconds in listings)
      }
    }, null);
    await openBucket(page, 'sorting');
    await expect.poll(() => shownKeys(page)).toEqual(['a-huge', 'b-big', 'c-mid', 'd-small']);
    const header = (name: string) => page.getByTestId('objects-table').locator('th', { has: page.getByRole('button', { name, exact: true }) });
    expect(await header('Name').getAttribute('aria-sort')).toBe('ascending');

    await page.getByRole('button', { name: 'Size', exact: true }).click();
    await expect.poll(() => shownKeys(page)).toEqual(['d-small', 'c-mid', 'b-big', 'a-huge']);
    expect(await header('Size').getAttribute('aria-sort')).toBe('ascending');
    expect(await header('Name').getAttribute('aria-sort')).toBe('none');
    await page.getByRole('button', { name: 'Size', exact: true }).click();
    await expect.poll(() => shownKeys(page)).toEqual(['a-huge', 'b-big', 'c-mid', 'd-small']);
    expect(await header('Size').getAttribute('aria-sort')).toBe('descending');

    await page.getByRole('button', { name: 'Last modified', exact: true }).click();
    await expect.poll(() => shownKeys(page)).toEqual(['d-small', 'c-mid', 'b-big', 'a-huge']);
    await page.getByRole('button', { name: 'Last modified', exact: true }).click();
    await expect.poll(() => shownKeys(page)).toEqual(['a-huge', 'b-big', 'c-mid', 'd-small']);

    await page.getByRole('button', { name: 'Name', exact: true }).click();
    await expect.poll(() => shownKeys(page)).toEqual(['a-huge', 'b-big', 'c-mid', 'd-small']);
    await page.getByRole('button', { name: 'Name', exact: true }).click();
    await expect.poll(() => shownKeys(page)).toEqual(['d-small', 'c-mid', 'b-big', 'a-huge']);
    expect(await header('Name').getAttribute('aria-sort')).toBe('descending');
  });

  it('says when a folder is empty, and when the bucket does not exist', async () => {
    await withClient(page, (c) => c.createBucket('hollow'), null);
    await openBucket(page, 'hollow');
    await expect.poll(() => page.getByTestId('objects-empty').textContent()).toContain('This folder is empty');
    await visit(page, '#/b/missing/');
    const error = page.locator('.state.error');
    await expect.poll(() => error.textContent()).toContain('Could not list missing: NoSuchBucket');
    expect(await error.getByRole('button', { name: 'Try again' }).count()).toBe(1);
  });
});

describe('uploads', () => {
  const item = (key: string) => page.getByTestId('upload-item').filter({ has: page.locator('.name', { hasText: new RegExp(`^${key.replace(/[.]/g, '\\.')}$`) }) });

  it('uploads by the file picker', async () => {
    await withClient(page, (c) => c.createBucket('inbox'), null);
    await openBucket(page, 'inbox');
    await page.getByTestId('file-input').setInputFiles([
      { name: 'hello.txt', mimeType: 'text/plain', buffer: Buffer.from('Hello, picker!\n') },
      { name: 'data.json', mimeType: 'application/json', buffer: Buffer.from('{"a":1}') },
    ]);
    await expect.poll(() => item('hello.txt').getAttribute('data-state')).toBe('done');
    await expect.poll(() => item('data.json').getAttribute('data-state')).toBe('done');
    expect(await item('hello.txt').textContent()).toContain('done');
    await expect.poll(() => shownKeys(page)).toEqual(['data.json', 'hello.txt']);
    expect(await serviceText('inbox', 'hello.txt')).toEqual({ text: 'Hello, picker!\n', contentType: 'text/plain' });
    expect(await serviceText('inbox', 'data.json')).toEqual({ text: '{"a":1}', contentType: 'application/json' });
  });

  it('uploads files dropped on the list (drag-and-drop), highlighting the drop zone', async () => {
    const view = page.getByTestId('objects-view');
    const dropped = [
      { name: 'dropped-1.txt', type: 'text/plain', text: 'first dropped file' },
      { name: 'dropped-2.csv', type: 'text/csv', text: 'a,b\n1,2\n' },
    ];
    // Drag over the table (inside the zone): the zone lights up.
    await page.getByTestId('objects-table').evaluate((el, files) => {
      const dt = new DataTransfer();
      for (const f of files) dt.items.add(new File([f.text], f.name, { type: f.type }));
      (window as unknown as { __dt: DataTransfer }).__dt = dt;
      el.dispatchEvent(new DragEvent('dragenter', { bubbles: true, cancelable: true, dataTransfer: dt }));
      el.dispatchEvent(new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer: dt }));
    }, dropped);
    await expect.poll(() => view.getAttribute('class')).toContain('dragging');
    await page.getByTestId('objects-table').evaluate((el) => {
      const dt = (window as unknown as { __dt: DataTransfer }).__dt;
      el.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
    });
    expect(await view.getAttribute('class')).not.toContain('dragging');
    await expect.poll(() => item('dropped-1.txt').getAttribute('data-state')).toBe('done');
    await expect.poll(() => item('dropped-2.csv').getAttribute('data-state')).toBe('done');
    await expect.poll(() => shownKeys(page)).toEqual(['data.json', 'dropped-1.txt', 'dropped-2.csv', 'hello.txt']);
    expect(await serviceText('inbox', 'dropped-1.txt')).toEqual({ text: 'first dropped file', contentType: 'text/plain' });
    expect(await serviceText('inbox', 'dropped-2.csv')).toEqual({ text: 'a,b\n1,2\n', contentType: 'text/csv' });
    // Four uploads done: the overall bar is full.
    expect(await page.getByTestId('overall-progress').evaluate((p: HTMLProgressElement) => [p.value, p.max])).toEqual([100, 100]);
  });

  it('uploads a 20 MiB file through the picker in parts, the bars growing to 100 %', async () => {
    await withClient(page, (c) => c.createBucket('big'), null);
    await openBucket(page, 'big'); // a new view: an empty upload queue
    const size = 20 * MiB;
    const bytes = randomBytes(size);
    await startSampling(page, 'progress20', `() => {
      const li = document.querySelector('[data-testid=upload-item]');
      const overall = document.querySelector('[data-testid=overall-progress]');
      if (!li || !overall) return undefined;
      const file = li.querySelector('[data-testid=file-progress]');
      return { overall: overall.value, overallMax: overall.max, file: file.value, fileMax: file.max, state: li.dataset.state };
    }`);
    // From a file the browser reads itself (a buffer would cross the DevTools protocol as base64).
    const file = join(tempDir('swbucket-twenty-'), 'twenty.bin');
    await writeFile(file, bytes);
    await page.getByTestId('file-input').setInputFiles(file, { timeout: 60_000 });
    await expect.poll(() => item('twenty.bin').getAttribute('data-state'), { timeout: 60_000 }).toBe('done');
    const samples = await stopSampling<{ overall: number; overallMax: number; file: number; fileMax: number; state: string }>(page, 'progress20');

    expect(samples.length).toBeGreaterThan(1);
    for (let i = 1; i < samples.length; i++) {
      expect(samples[i]!.overall, `overall bar, sample ${i}`).toBeGreaterThanOrEqual(samples[i - 1]!.overall);
      expect(samples[i]!.file, `file bar, sample ${i}`).toBeGreaterThanOrEqual(samples[i - 1]!.file);
    }
    const last = samples.at(-1)!;
    expect(last).toEqual({ overall: 100, overallMax: 100, file: size, fileMax: size, state: 'done' });
    // It moved through the parts (8 MiB each) rather than jumping from 0 to the end.
    expect(samples.some((s) => s.file > 0 && s.file < size), 'a value between 0 and the size').toBe(true);
    expect(samples.some((s) => s.overall > 0 && s.overall < 100)).toBe(true);
    expect(await item('twenty.bin').textContent()).toContain('done');
    await expect.poll(() => row(page, 'twenty.bin').locator('td.num').textContent()).toBe('20 MiB');

    // The service holds exactly these bytes, in three 8 MiB parts: the multipart ETag
    // md5hex(e1 + "-" + e2 + "-" + e3 + "-") + "-1" (docs/protocol.md, "ETags and Content-MD5"),
    // and the same SHA-256 read back.
    const partSize = 8 * MiB;
    const parts = [0, 1, 2].map((i) => md5(bytes.subarray(i * partSize, Math.min(size, (i + 1) * partSize))));
    const multipartEtag = `${md5(parts.map((e) => `${e}-`).join(''))}-1`;
    const head = await withClient(page, async (c) => {
      const h = await c.headObject('big', 'twenty.bin');
      return { size: h.size, etag: h.etag };
    }, null);
    expect(head).toEqual({ size, etag: multipartEtag });
    const served = await withClient(page, async (c) => {
      const buf = new Uint8Array(await (await (await c.getObject('big', 'twenty.bin')).response.blob()).arrayBuffer());
      return Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', buf)), (b) => b.toString(16).padStart(2, '0')).join('');
    }, null);
    expect(served).toBe(createHash('sha256').update(bytes).digest('hex'));
  });

  it('aborts a 48 MiB upload half-way: the item says aborted, no upload is left on the service', async () => {
    const size = 48 * MiB;
    // From a file the browser reads itself, as above.
    const file = join(tempDir('swbucket-abort-'), 'abort-me.bin');
    await writeFile(file, randomBytes(size));
    await page.getByTestId('file-input').setInputFiles(file, { timeout: 60_000 });
    const bar = item('abort-me.bin').getByTestId('file-progress');
    // Mid-way: some parts are in, the rest are not. The wait hands back where the Abort button is
    // at that moment, and the mouse clicks it at once (parts keep arriving meanwhile).
    const at = await page.waitForFunction(() => {
      const li = [...document.querySelectorAll('[data-testid=upload-item]')].find((l) => l.querySelector('.name')?.textContent === 'abort-me.bin');
      const p = li?.querySelector('progress');
      const button = li?.querySelector('[data-testid=abort-upload]');
      if (!p || !button || !(p.value > 0 && p.value < p.max)) return false;
      const r = button.getBoundingClientRect();
      return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
    }, null, { polling: 'raf', timeout: 60_000 });
    const { x, y } = (await at.jsonValue()) as { x: number; y: number };
    await page.mouse.click(x, y);
    const clicked = await item('abort-me.bin').evaluate((li) => `${li.getAttribute('data-state')} at ${li.querySelector('progress')!.value} bytes`);
    await expect.poll(() => item('abort-me.bin').getAttribute('data-state'), { message: `clicked Abort when ${clicked}` }).toBe('aborted');
    expect(await item('abort-me.bin').locator('.status').textContent()).toContain('aborted');
    expect(await item('abort-me.bin').getByTestId('abort-upload').count()).toBe(0);
    const stoppedAt = await bar.evaluate((p: HTMLProgressElement) => p.value);
    expect(stoppedAt).toBeLessThan(size);
    // The aborted file leaves the overall bar: only twenty.bin counts, and it is done.
    expect(await page.getByTestId('overall-progress').evaluate((p: HTMLProgressElement) => p.value)).toBe(100);

    await expect.poll(() => withClient(page, async (c) => (await c.listMultipartUploads('big')).uploads.map((u) => u.key), null),
      { message: 'uploads left for abort-me.bin' }).toEqual([]);
    expect(await headStatus('big', 'abort-me.bin')).toBe(404);
    expect(await shownKeys(page)).toEqual(['twenty.bin']);
  });
});

describe('one object', () => {
  beforeAll(async () => {
    await seedBucket('work', { 'hello.txt': 'Hello, world!\n', 'notes.txt': 'notes', 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c' });
    await withClient(page, (c) => c.createBucket('archive'), null);
  });

  const details = () => page.getByTestId('object-details');
  async function openDetails(key: string): Promise<void> {
    await row(page, key).getByRole('button', { name: key.slice(key.lastIndexOf('/') + 1), exact: true }).click();
    await expect.poll(() => details().locator('h3').textContent()).toBe(key);
    await expect.poll(() => details().getByTestId('detail-etag').count()).toBe(1);
  }

  it('downloads an object from its row and from its details', async () => {
    await openBucket(page, 'work');
    const [download] = await Promise.all([page.waitForEvent('download'), row(page, 'hello.txt').getByTestId('download').click()]);
    expect(download.suggestedFilename()).toBe('hello.txt');
    expect(await download.failure()).toBeNull();
    expect(await readFile(await download.path(), 'utf8')).toBe('Hello, world!\n');

    await openDetails('notes.txt');
    const [again] = await Promise.all([page.waitForEvent('download'), details().getByRole('button', { name: 'Download', exact: true }).click()]);
    expect(again.suggestedFilename()).toBe('notes.txt');
    expect(await readFile(await again.path(), 'utf8')).toBe('notes');
  });

  it('shows the details: every header, ETag, size, and the versions', async () => {
    await withClient(page, async (c) => {
      await c.createBucket('kept');
      await c.putBucketVersioning('kept', 'Enabled');
      await c.putObject('kept', 'report.txt', 'first draft', { contentType: 'text/plain', cacheControl: 'no-cache', metadata: { author: 'ann' } });
      await c.putObject('kept', 'report.txt', 'second, final draft', { contentType: 'text/plain', cacheControl: 'no-cache', metadata: { author: 'ann' } });
    }, null);
    const head = await withClient(page, async (c) => {
      const h = await c.headObject('kept', 'report.txt');
      return { etag: h.etag, size: h.size, versionId: h.versionId, headers: [...h.headers] };
    }, null);
    await openBucket(page, 'kept');
    await openDetails('report.txt');
    expect(await details().getByTestId('detail-size').textContent()).toBe(`${head.size} B (${head.size} bytes)`);
    expect(await details().getByTestId('detail-etag').textContent()).toBe(head.etag);
    expect(head.etag).toBe(md5('second, final draft'));
    // Every response header of a HEAD, name and value: the object's own first, the service's behind a closed disclosure.
    const rowsOf = (testId: string) => details().getByTestId(testId).locator('tr').evaluateAll((rows) =>
      rows.map((r) => [r.querySelector('th')!.textContent!, r.querySelector('td')!.textContent!] as [string, string]));
    const own = await rowsOf('detail-headers');
    const service = await rowsOf('detail-service-headers');
    expect(own.map(([n]) => n).sort()).toEqual(['cache-control', 'content-disposition', 'content-length', 'content-type', 'etag', 'last-modified', 'x-svc-meta-author', 'x-svc-version-id']);
    expect(service.map(([n]) => n)).toEqual(expect.arrayContaining(['x-svc-request-id', 'content-security-policy', 'access-control-expose-headers']));
    expect(await details().locator('details.more-headers').evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    const shown = [...own, ...service];
    // (Each HEAD has its own request id and date.)
    const stable = (h: [string, string][]) => new Map(h.filter(([n]) => n !== 'x-svc-request-id' && n !== 'date'));
    expect(stable(shown as [string, string][])).toEqual(stable(head.headers));
    const shownId = (shown as [string, string][]).find(([n]) => n === 'x-svc-request-id')![1];
    const logged = (await storedLog(page)).find((e) => e.requestId === shownId);
    expect(logged && [logged.operation, logged.bucket, logged.key, logged.status]).toEqual(['HeadObject', 'kept', 'report.txt', 200]);
    expect(Object.fromEntries(shown as [string, string][])).toMatchObject({
      'content-type': 'text/plain', 'cache-control': 'no-cache', 'x-svc-meta-author': 'ann', 'content-length': String(head.size),
    });
    const versions = await details().getByTestId('detail-versions').locator('li').allTextContents();
    expect(versions).toHaveLength(2);
    expect(versions.filter((v) => v.includes('(current)'))).toHaveLength(1);
    expect(versions.find((v) => v.includes('(current)'))).toContain(String(head.versionId));
    await details().getByRole('button', { name: 'Close details' }).click();
    expect(await details().count()).toBe(0);

    // An object of a bucket never versioned has no history to list (not a lone "null (current)").
    await withClient(page, async (c) => {
      await c.ensureBucket('plain');
      await c.putObject('plain', 'once.txt', 'just once', { contentType: 'text/plain' });
    }, null);
    await openBucket(page, 'plain');
    await openDetails('once.txt');
    await expect.poll(() => details().getByTestId('detail-etag').count()).toBe(1);
    expect(await details().getByTestId('detail-versions').count()).toBe(0);
    expect(await details().textContent()).not.toContain('null');
  });

  it('creates a folder: an empty marker object, shown as the folder and not inside it', async () => {
    await openBucket(page, 'work');
    dialogs.answer = 'drafts';
    try {
      await page.getByTestId('new-folder').click();
    } finally {
      dialogs.answer = '';
    }
    await expectNotice(page, 'Folder drafts/ created.');
    await expect.poll(async () => (await page.getByTestId('folder-row').allTextContents()).map((t) => t.trim())).toContain('drafts/');
    const marker = await withClient(page, async (c) => {
      const h = await c.headObject('work', 'drafts/');
      return { size: h.size };
    }, null);
    expect(marker).toEqual({ size: 0 });
    await page.getByTestId('folder-row').filter({ hasText: 'drafts/' }).getByRole('link').click();
    await expect.poll(() => page.locator('[data-testid=object-row]').count()).toBe(0);
    expect(await page.locator('[data-testid=object-row][data-key="drafts/"]').count()).toBe(0);
    await withClient(page, async (c) => c.deleteObject('work', 'drafts/'), null);
  });

  it('shares a presigned link on the mount, valid for the chosen time, that reads the object unsigned', async () => {
    await openBucket(page, 'work');
    await openDetails('hello.txt');
    await details().getByTestId('share-expiry').selectOption({ label: '1 day' });
    const before = Math.floor(Date.now() / 1000);
    await details().getByTestId('share-link').click();
    await expect.poll(() => details().getByTestId('share-url').count()).toBe(1);
    const link = new URL(await details().getByTestId('share-url').inputValue());
    expect(link.origin).toBe(new URL(page.url()).origin);
    expect(link.pathname).toBe('/svc/work/hello.txt');
    const lifetime = Number(link.searchParams.get('Expires')) - before;
    expect(lifetime).toBeGreaterThanOrEqual(86_400 - 5);
    expect(lifetime).toBeLessThanOrEqual(86_400 + 60);
    await expect.poll(() => details().getByTestId('share-result').textContent()).toMatch(/can read hello\.txt until/);
    const want = await withClient(page, async (c) => (await c.getObject('work', 'hello.txt')).response.text(), null);
    const got = await page.evaluate(async (url) => {
      const r = await fetch(url, { credentials: 'omit' });
      return { status: r.status, text: await r.text() };
    }, link.href);
    expect(got).toEqual({ status: 200, text: want });
  });

  it('edits the metadata (PUT Object Meta)', async () => {
    await openBucket(page, 'work');
    await openDetails('hello.txt');
    await details().getByTestId('edit-metadata').click();
    const form = details().getByTestId('metadata-form');
    expect(await form.getByLabel('Content-Type').inputValue()).toBe('text/plain');
    await form.getByLabel('Cache-Control').fill('max-age=60');
    await form.getByLabel('Content-Language').fill('en');
    await form.getByTestId('add-meta').click();
    await form.getByTestId('meta-name').last().fill('Owner');
    await form.getByTestId('meta-value').last().fill('alice');
    await form.getByTestId('save-metadata').click();
    await expectNotice(page, 'Metadata saved.');
    expect(await details().getByTestId('metadata-form').count()).toBe(0);
    await expect.poll(async () => Object.fromEntries(await details().getByTestId('detail-headers').locator('tr').evaluateAll((rows) =>
      rows.map((r) => [r.querySelector('th')!.textContent!, r.querySelector('td')!.textContent!])))).toMatchObject({
      'cache-control': 'max-age=60', 'content-language': 'en', 'x-svc-meta-owner': 'alice', 'content-type': 'text/plain',
    });
    const held = await withClient(page, async (c) => {
      const h = await c.headObject('work', 'hello.txt');
      return { metadata: h.metadata, cache: h.headers.get('cache-control'), lang: h.headers.get('content-language'), type: h.contentType };
    }, null);
    expect(held).toEqual({ metadata: { owner: 'alice' }, cache: 'max-age=60', lang: 'en', type: 'text/plain' });
    // The body is untouched.
    expect((await serviceText('work', 'hello.txt')).text).toBe('Hello, world!\n');
  });

  it('copies to another bucket and moves (renames) within the bucket', async () => {
    // Details of hello.txt are still open.
    const copy = details().getByTestId('copy-form');
    await copy.getByLabel('Bucket').selectOption('archive');
    await copy.getByLabel('Key').fill('copies/hello.txt');
    await copy.getByRole('button', { name: 'Copy', exact: true }).click();
    await expectNotice(page, 'Copied to archive/copies/hello.txt.');
    expect(await serviceText('archive', 'copies/hello.txt')).toEqual({ text: 'Hello, world!\n', contentType: 'text/plain' });

    const move = details().getByTestId('move-form');
    await move.getByLabel('New key').fill('greetings/hello.txt');
    await move.getByRole('button', { name: 'Move', exact: true }).click();
    await expectNotice(page, 'Moved to greetings/hello.txt.');
    await expect.poll(() => details().count()).toBe(0);
    await expect.poll(() => shownKeys(page)).toEqual(['a.txt', 'b.txt', 'c.txt', 'notes.txt']);
    expect(await folderLabels()).toEqual(['greetings/']);
    expect(await headStatus('work', 'hello.txt')).toBe(404);
    expect(await serviceText('work', 'greetings/hello.txt')).toEqual({ text: 'Hello, world!\n', contentType: 'text/plain' });
  });

  it('deletes many at once (Delete Multiple Objects) and one from its details', async () => {
    const before = (await storedLog(page)).length;
    const button = page.getByTestId('delete-selected');
    expect(await button.isDisabled()).toBe(true);
    await page.getByRole('checkbox', { name: 'Select a.txt' }).check();
    await page.getByRole('checkbox', { name: 'Select c.txt' }).check();
    expect(await button.textContent()).toContain('Delete selected (2)');
    await button.click();
    await expectNotice(page, 'Deleted 2 objects.');
    await expect.poll(() => shownKeys(page)).toEqual(['b.txt', 'notes.txt']);
    expect(await serviceKeys('work')).toEqual(['b.txt', 'greetings/hello.txt', 'notes.txt']);
    // One request for both: the multi-object delete.
    const ops = (await storedLog(page)).slice(before).map((e) => e.operation);
    expect(ops.filter((o) => o === 'DeleteObjects')).toHaveLength(1);
    expect(ops).not.toContain('DeleteObject');

    await openDetails('b.txt');
    await details().getByTestId('delete-object').click();
    await expectNotice(page, 'Deleted b.txt.');
    await expect.poll(() => shownKeys(page)).toEqual(['notes.txt']);
    expect(await details().count()).toBe(0);
    expect(await serviceKeys('work')).toEqual(['greetings/hello.txt', 'notes.txt']);
  });
});

describe('grid, and several objects at once', () => {
  const png = makePng(3, 2, (x, y) => [x * 120, y * 255, 64]);
  const long = `${'長い名前'.repeat(30)}.txt`; // 120 characters, 360 bytes: a PAX name in the tar

  beforeAll(async () => {
    await withClient(page, async (c, { png, long }) => {
      await c.createBucket('gallery');
      const bytes = Uint8Array.from(atob(png), (ch) => ch.charCodeAt(0));
      await c.putObject('gallery', 'pixel.png', bytes, { contentType: 'image/png' });
      await c.putObject('gallery', 'readme.txt', 'read me\n', { contentType: 'text/plain' });
      await c.putObject('gallery', long, 'long', { contentType: 'text/plain' });
      await c.putObject('gallery', 'trips/rome.txt', 'Rome', { contentType: 'text/plain' });
      await c.putObject('gallery', 'trips/paris.bin', new Uint8Array(1500).map((_, i) => i & 255));
    }, { png: b64(png), long });
  });
  afterAll(async () => {
    await page.evaluate(() => localStorage.removeItem('swbucket-console-layout'));
  });

  const tile = (key: string) => page.locator(`[data-testid=object-tile][data-key="${key}"]`);

  it('shows a grid: folders, a thumbnail of each image read through the worker, the extension of the rest', async () => {
    await openBucket(page, 'gallery');
    await page.getByTestId('layout-grid').click();
    expect(await page.getByTestId('layout-grid').getAttribute('aria-pressed')).toBe('true');
    expect(await page.getByTestId('objects-table').count()).toBe(0);
    expect(await page.getByTestId('folder-tile').allTextContents()).toEqual([expect.stringContaining('trips/')]);
    expect(await page.getByTestId('object-tile').evaluateAll((t) => t.map((e) => e.getAttribute('data-key')))).toEqual(['pixel.png', 'readme.txt', long]);
    const thumb = tile('pixel.png').getByTestId('thumbnail');
    await expect.poll(() => thumb.evaluate((i: HTMLImageElement) => (i.complete && i.currentSrc !== '' ? [i.naturalWidth, i.naturalHeight] : null)))
      .toEqual([3, 2]);
    expect(await tile('readme.txt').getByTestId('file-glyph').textContent()).toBe('TXT');
    expect(await tile('readme.txt').getByTestId('thumbnail').count()).toBe(0);

    // A tile opens the object's details; a folder tile opens the folder, still as a grid.
    await tile('readme.txt').getByRole('button', { name: 'readme.txt' }).click();
    await expect.poll(() => page.getByTestId('object-details').locator('h3').textContent()).toBe('readme.txt');
    await page.getByTestId('folder-tile').getByRole('link').click();
    await expect.poll(() => page.getByTestId('object-tile').evaluateAll((t) => t.map((e) => e.getAttribute('data-key'))))
      .toEqual(['trips/paris.bin', 'trips/rome.txt']);

    // The choice is this browser's, kept across a reload.
    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=object-tile]').length === 2, null, { timeout: 20_000 });
    await page.getByTestId('layout-list').click();
    await expect.poll(() => shownKeys(page)).toEqual(['trips/paris.bin', 'trips/rome.txt']);
  });

  /** Clicks "Download selected" and reads the tar it saves: name, and each entry's name and bytes. */
  async function downloadSelected(): Promise<{ file: string; entries: [string, string][] }> {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-selected').click()]);
    expect(await download.failure()).toBeNull();
    const entries = await unpackTar(await readFile(await download.path()));
    return { file: download.suggestedFilename(), entries: entries.map((e) => [e.header.name, Buffer.from(e.data!).toString('hex')]) };
  }
  const hex = (s: string | Uint8Array) => Buffer.from(s).toString('hex');

  it('downloads the selected objects as one tar named after the folder, each under its name in it', async () => {
    await openBucket(page, 'gallery');
    const button = page.getByTestId('download-selected');
    expect(await button.isDisabled()).toBe(true);
    await page.getByTestId('select-all').check();
    expect(await button.textContent()).toContain('Download selected (3)');
    const all = await downloadSelected();
    expect(all.file).toBe('gallery.tar');
    expect(all.entries).toEqual([['pixel.png', hex(png)], ['readme.txt', hex('read me\n')], [long, hex('long')]]);

    // Inside a folder the names are the folder's; one object selected downloads as itself.
    await page.getByRole('link', { name: 'trips/' }).click();
    await expect.poll(() => shownKeys(page)).toEqual(['trips/paris.bin', 'trips/rome.txt']);
    await page.getByTestId('select-all').check();
    const folder = await downloadSelected();
    expect(folder.file).toBe('gallery-trips.tar');
    expect(folder.entries).toEqual([['paris.bin', hex(new Uint8Array(1500).map((_, i) => i & 255))], ['rome.txt', hex('Rome')]]);
    await page.getByTestId('select-all').uncheck();
    await page.getByRole('checkbox', { name: 'Select trips/rome.txt' }).check();
    const [one] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-selected').click()]);
    expect(one.suggestedFilename()).toBe('rome.txt');
    expect(await readFile(await one.path(), 'utf8')).toBe('Rome');
  });
});

describe('details in a long folder', () => {
  beforeAll(async () => {
    const objects: Record<string, string> = {};
    for (let i = 1; i <= 30; i++) objects[`folder/item-${String(i).padStart(2, '0')}.txt`] = `item ${i}`;
    await seedBucket('long', objects);
  });
  afterAll(async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  const details = () => page.getByTestId('object-details');

  // Clicking a name at the bottom of a long list must show the details (not open them below the
  // fold, where the click seems to do nothing) and move the keyboard focus to them.
  for (const [width, height] of [[1280, 720], [400, 720]] as const) {
    it(`brings the details of the last of 30 objects into view, focused, at ${width}×${height}`, async () => {
      await page.setViewportSize({ width, height });
      await openBucket(page, 'long');
      await page.getByTestId('folder-row').getByRole('link', { name: 'folder/' }).click();
      await expect.poll(() => page.getByTestId('object-row').count()).toBe(30);
      await page.evaluate(() => window.scrollTo(0, 0));
      await row(page, 'folder/item-30.txt').getByRole('button', { name: 'item-30.txt', exact: true }).click();
      await expect.poll(() => details().locator('h3').textContent()).toBe('folder/item-30.txt');
      await expect.poll(() => details().getByTestId('detail-etag').count()).toBe(1);

      // The heading is wholly on screen, and the panel fills at least half the screen (or is whole),
      // once the panel has scrolled up after its details loaded (a frame or two on a busy machine).
      const measure = () => details().evaluate((panel) => {
        const p = panel.getBoundingClientRect();
        const h = panel.querySelector('h3')!.getBoundingClientRect();
        const visible = Math.min(p.bottom, window.innerHeight) - Math.max(p.top, 0);
        return { headTop: h.top, headBottom: h.bottom, visible, needed: Math.min(p.height, window.innerHeight / 2), innerHeight: window.innerHeight };
      });
      await expect.poll(async () => {
        const m = await measure();
        return m.visible >= m.needed;
      }, { timeout: 5_000 }).toBe(true);
      const seen = await measure();
      expect(seen.headTop, `heading top at ${width} px`).toBeGreaterThanOrEqual(0);
      expect(seen.headBottom, `heading bottom at ${width} px`).toBeLessThanOrEqual(seen.innerHeight);
      expect(seen.visible, `panel height on screen at ${width} px`).toBeGreaterThanOrEqual(seen.needed);
      // The row clicked is still marked as the open one, and the focus is on the panel's heading.
      expect(await row(page, 'folder/item-30.txt').getAttribute('class')).toContain('open');
      expect(await page.evaluate(() => {
        const el = document.activeElement;
        return el?.tagName === 'H3' && el.closest('[data-testid=object-details]') !== null ? el.textContent : `${el?.tagName} ${el?.textContent?.slice(0, 40)}`;
      })).toBe('folder/item-30.txt');
      await details().getByRole('button', { name: 'Close details' }).click();
      expect(await details().count()).toBe(0);
    });
  }
});

describe('previews', () => {
  const png = makePng(2, 2, (x, y) => [x * 255, y * 255, 128]);
  const clip = makeMp4({ seconds: 6 });
  const wav = makeWav(1);
  const json = { name: 'swbucket', list: [1, 2, 3], nested: { ok: true } };

  beforeAll(async () => {
    await withClient(page, async (c, files) => {
      await c.createBucket('media'); // private: the previews read it through presigned URLs
      const bytes = (s: string) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));
      await c.putObject('media', 'pixel.png', bytes(files.png), { contentType: 'image/png' });
      await c.putObject('media', 'clip.mp4', bytes(files.mp4), { contentType: 'video/mp4' });
      await c.putObject('media', 'tone.wav', bytes(files.wav), { contentType: 'audio/wav' });
      await c.putObject('media', 'poem.txt', 'Roses are red,\nbytes are blue.\n', { contentType: 'text/plain' });
      await c.putObject('media', 'data.json', files.json, { contentType: 'application/json' });
    }, { png: b64(png), mp4: b64(clip.mp4), wav: b64(wav), json: JSON.stringify(json) });
    await openBucket(page, 'media');
  });

  const details = () => page.getByTestId('object-details');
  const open = async (key: string) => {
    await row(page, key).getByRole('button', { name: key, exact: true }).click();
    await expect.poll(() => details().locator('h3').textContent()).toBe(key);
  };

  it('shows an image', async () => {
    await open('pixel.png');
    const img = details().getByTestId('preview-image');
    // Loaded from its URL (an <img> whose src is not set yet also counts as complete).
    await expect.poll(() => img.evaluate((i: HTMLImageElement) => (i.complete && i.currentSrc !== '' ? [i.naturalWidth, i.naturalHeight] : null)))
      .toEqual([2, 2]);
    expect(await img.getAttribute('alt')).toBe('Preview of pixel.png');
  });

  it('shows text, and JSON pretty-printed', async () => {
    await open('poem.txt');
    await expect.poll(() => details().getByTestId('preview-text').textContent()).toBe('Roses are red,\nbytes are blue.\n');
    await open('data.json');
    await expect.poll(() => details().getByTestId('preview-text').textContent()).toBe(JSON.stringify(json, null, 2));
  });

  it('plays audio', async () => {
    await open('tone.wav');
    await page.waitForFunction(() => ((document.querySelector('[data-testid=preview-audio]') as HTMLAudioElement | null)?.readyState ?? 0) >= 1);
    const duration = await details().getByTestId('preview-audio').evaluate((a: HTMLAudioElement) => a.duration);
    expect(duration).toBeCloseTo(1, 2);
  });

  it('plays video and seeks through range requests (206 in the request log)', async () => {
    await open('clip.mp4');
    await page.waitForFunction(() => ((document.querySelector('[data-testid=preview-video]') as HTMLVideoElement | null)?.readyState ?? 0) >= 1);
    const video = details().getByTestId('preview-video');
    expect(await video.evaluate((v: HTMLVideoElement) => [v.duration, v.videoWidth, v.videoHeight])).toEqual([6, 128, 96]);
    const seeked = await video.evaluate((v: HTMLVideoElement) => new Promise<number>((resolve) => {
      v.addEventListener('seeked', () => resolve(v.currentTime), { once: true });
      v.currentTime = 4.5;
    }));
    expect(seeked).toBeCloseTo(4.5, 1);

    // The log view shows the partial responses the element asked for.
    await nav(page, 'Request log');
    await page.getByTestId('log-filter-text').fill('clip.mp4');
    await expect.poll(async () => {
      const rows = await page.getByTestId('log-row').evaluateAll((rs) => rs.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent!.trim())));
      return rows.some((cells) => cells[1] === 'GET' && cells[2] === 'GetObject' && cells[3] === 'media/clip.mp4' && cells[4] === '206');
    }, { message: 'a 206 GetObject of media/clip.mp4 in the log table' }).toBe(true);
    const held = (await storedLog(page)).filter((e) => e.key === 'clip.mp4' && e.status === 206);
    expect(held.length).toBeGreaterThan(0);
    expect(held.every((e) => e.responseHeaders.some(([n, v]) => n === 'content-range' && v.startsWith('bytes ')))).toBe(true);
    await page.getByTestId('log-filter-text').fill('');
  });
});
