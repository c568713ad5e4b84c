// Backup and restore in the console (Settings → Backup and restore), in real Chromium, clicked
// through as a user does: export chosen buckets with every version as a .tar download (checked
// with modern-tar), delete everything, import the saved file through the file input, and find
// every version back byte for byte with its ETag, metadata and headers; the conflict choices, a
// file that is not an archive, progress and cancelling on a larger export, and the root-only rule.
// The root client in the page only seeds and checks the service.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import type { Download, Page } from 'playwright-core';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unpackTar } from 'modern-tar';
import {
  expectNotice, formatBytes, MiB, nav, startSampling, stopSampling, useConsolePage, withClient,
} from './console-helpers.ts';

const consolePage = useConsolePage();
let page: Page;
let dir: string;

beforeAll(async () => {
  page = consolePage.page;
  dir = await mkdtemp(join(tmpdir(), 'swbucket-backup-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** One stored version as the client reads it back. */
interface Stored {
  bucket: string;
  key: string;
  versionId: string;
  isLatest: boolean;
  etag: string;
  size: number;
  lastModified: number;
  contentType: string;
  metadata: Record<string, string>;
  headers: Record<string, string>;
  sha256: string;
}

interface Snapshot {
  buckets: { name: string; acl: string; versioning: string | null }[];
  objects: Stored[];
}

/** Everything the service holds for root, read through the client in the page: every version, its bytes hashed. */
function snapshot(): Promise<Snapshot> {
  return withClient(page, async (c) => {
    const hex = (b: ArrayBuffer) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, '0')).join('');
    const buckets: Snapshot['buckets'] = [];
    const objects: Stored[] = [];
    for (const b of (await c.listBuckets()).buckets) {
      buckets.push({ name: b.name, acl: await c.getBucketAcl(b.name), versioning: (await c.getBucketVersioning(b.name)) ?? null });
      for await (const v of c.listAllVersions(b.name)) {
        const id = Number(v.versionId);
        const r = await c.getObject(b.name, v.key, Number.isInteger(id) && id > 0 ? { versionId: id } : {});
        const bytes = await (await r.response.blob()).arrayBuffer();
        const headers: Record<string, string> = {};
        for (const h of ['cache-control', 'content-disposition', 'content-encoding', 'content-language', 'expires']) {
          const value = r.headers.get(h);
          if (value !== null) headers[h] = value;
        }
        objects.push({
          bucket: b.name, key: v.key, versionId: v.versionId, isLatest: v.isLatest, etag: r.etag, size: r.size,
          lastModified: v.lastModified.getTime(), contentType: r.contentType, metadata: r.metadata, headers,
          sha256: hex(await crypto.subtle.digest('SHA-256', bytes)),
        });
      }
    }
    return { buckets, objects };
  }, null);
}

/** Only the named buckets' part of a snapshot. */
const only = (s: Snapshot, names: string[]): Snapshot => ({
  buckets: s.buckets.filter((b) => names.includes(b.name)),
  objects: s.objects.filter((o) => names.includes(o.bucket)),
});

async function saved(download: Download): Promise<string> {
  expect(await download.failure()).toBeNull();
  const path = join(dir, download.suggestedFilename());
  await download.saveAs(path);
  return path;
}

interface ManifestObject {
  bucket: string; key: string; current: boolean; file: string; size: number; etag: string; versionId?: number;
  contentType: string; headers: Record<string, string>; meta: [string, string][]; lastModified: number;
}
interface Manifest {
  format: string;
  accounts?: unknown[];
  buckets: { name: string; acl: string; versioning?: string }[];
  objects: ManifestObject[];
}

async function openArchive(path: string): Promise<{ manifest: Manifest; files: Map<string, Uint8Array> }> {
  const entries = await unpackTar(new Uint8Array(await readFile(path)));
  expect(entries[0]!.header.name).toBe('swbucket.json');
  const manifest = JSON.parse(new TextDecoder().decode(entries[0]!.data)) as Manifest;
  return { manifest, files: new Map(entries.slice(1).map((e) => [e.header.name, e.data!])) };
}

const backup = () => page.getByTestId('backup');
const importError = () => page.getByTestId('backup-import-error');
const importResult = () => page.getByTestId('backup-import-result');
/** The result summary as one line. */
const resultText = async () => (await importResult().textContent())!.replace(/\s+/g, ' ').trim();

/** Chooses the file and the conflict choice, clicks Import, and waits until it is done. */
async function importFile(file: string | { name: string; mimeType: string; buffer: Buffer }, conflict: 'fail' | 'skip' | 'overwrite'): Promise<void> {
  await page.getByTestId('backup-file').setInputFiles(file);
  await page.getByTestId(`backup-conflict-${conflict}`).check();
  await page.getByTestId('backup-import').click();
  await expect.poll(async () => (await importError().count()) + (await importResult().count()), { timeout: 30_000 }).toBe(1);
  await expect.poll(() => page.getByTestId('backup-import').textContent()).toBe('Import');
}

let original: Snapshot;
let archivePath: string;

describe('backup and restore', () => {
  it('exports the chosen buckets with every version: a tar whose manifest lists what was stored', async () => {
    await withClient(page, async (c) => {
      await c.createBucket('photos');
      await c.putBucketVersioning('photos', 'Enabled');
      await c.putObject('photos', 'cat.jpg', 'meow, the first', { contentType: 'image/jpeg', cacheControl: 'max-age=60', metadata: { camera: 'Pentax' } });
      const binary = new Uint8Array(3000).map((_, i) => (i * 7) & 255);
      await c.putObject('photos', 'cat.jpg', binary, { contentType: 'application/octet-stream', metadata: { camera: 'Nikon', lens: '50mm' } });
      await c.putObject('photos', 'cat.jpg', 'meow, the last', {
        contentType: 'image/jpeg', contentDisposition: 'inline; filename="cat.jpg"', metadata: { camera: 'Leica' },
      });
      await c.putObject('photos', 'notes/ünïcode ✓.txt', 'accents', { contentType: 'text/plain; charset=utf-8', contentLanguage: 'fr', metadata: { note: 'accented' } });
      await c.createBucket('docs', { acl: 'public-read' });
      await c.putObject('docs', 'readme.md', '# Docs\n', { contentType: 'text/markdown', expires: 'Thu, 01 Jan 2037 00:00:00 GMT', metadata: { author: 'ann' } });
      // A multipart object: its ETag is not the MD5 of its bytes.
      const id = await c.createMultipartUpload('docs', 'parts.bin', { contentType: 'application/octet-stream', metadata: { parts: 'two' } });
      const one = await c.uploadPart('docs', 'parts.bin', id, 1, new Uint8Array(20 * 1024).fill(97));
      const two = await c.uploadPart('docs', 'parts.bin', id, 2, new Uint8Array(5 * 1024).fill(98));
      await c.completeMultipartUpload('docs', 'parts.bin', id, [{ partNumber: 1, etag: one.etag }, { partNumber: 2, etag: two.etag }]);
      await c.createBucket('scratch');
      await c.putObject('scratch', 'left-out.txt', 'not chosen');
    }, null);
    original = only(await snapshot(), ['docs', 'photos']);
    expect(original.objects.filter((o) => o.key === 'cat.jpg')).toHaveLength(3);
    expect(original.objects.find((o) => o.key === 'parts.bin')!.etag).toMatch(/^[0-9a-f]{32}-1$/);

    await nav(page, 'Settings');
    await page.getByTestId('backup-scope-some').check();
    await page.locator('[data-testid=backup-bucket][data-bucket=photos]').check();
    await page.locator('[data-testid=backup-bucket][data-bucket=docs]').check();
    await page.getByTestId('backup-versions').check();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('backup-export').click()]);
    expect(download.suggestedFilename()).toMatch(/^swbucket-\d{8}-\d{6}\.tar$/);
    archivePath = await saved(download);
    await expect.poll(() => page.getByTestId('backup-export-done').textContent())
      .toBe(`Saved ${download.suggestedFilename()}: 6 objects, ${formatBytes((await stat(archivePath)).size)}.`);
    expect(await page.getByTestId('backup-export-progress').count()).toBe(0);

    const { manifest, files } = await openArchive(archivePath);
    expect(manifest.format).toBe('swbucket-archive');
    expect(manifest.accounts).toBeUndefined(); // not asked for
    expect(manifest.buckets.map((b) => [b.name, b.acl, b.versioning ?? null]).sort())
      .toEqual([['docs', 'public-read', null], ['photos', 'private', 'Enabled']]);
    const listed = manifest.objects.map((o) => ({
      bucket: o.bucket, key: o.key, versionId: o.versionId === undefined ? 'null' : String(o.versionId), isLatest: o.current,
      etag: o.etag, size: o.size, lastModified: o.lastModified, contentType: o.contentType, metadata: Object.fromEntries(o.meta),
      sha256: sha256(files.get(o.file)!),
    }));
    const key = (o: { bucket: string; key: string; versionId: string }) => `${o.bucket}/${o.key}#${o.versionId}`;
    const byKey = (a: { bucket: string; key: string; versionId: string }, b: typeof a) => key(a).localeCompare(key(b));
    // A GET adds a Content-Disposition where none was stored: the archive holds only what was stored.
    expect(listed.sort(byKey)).toEqual(original.objects.map(({ headers: _headers, ...o }) => o).sort(byKey));
    const headersOf = (k: string, current: boolean) => manifest.objects.filter((o) => o.key === k && o.current === current).map((o) => o.headers);
    expect(headersOf('cat.jpg', true)).toEqual([{ 'content-disposition': 'inline; filename="cat.jpg"' }]);
    expect(headersOf('cat.jpg', false)).toEqual(expect.arrayContaining([{ 'cache-control': 'max-age=60' }, {}]));
    expect(headersOf('notes/ünïcode ✓.txt', true)).toEqual([{ 'content-language': 'fr' }]);
    expect(headersOf('readme.md', true)).toEqual([{ expires: 'Thu, 01 Jan 2037 00:00:00 GMT' }]);
    // Named after their keys: current objects under objects/, older versions under versions/.
    expect(files.has('objects/photos/cat.jpg')).toBe(true);
    expect(files.has('objects/photos/notes/ünïcode ✓.txt')).toBe(true);
    expect([...files.keys()].filter((f) => f.startsWith('versions/photos/') && f.endsWith('/cat.jpg'))).toHaveLength(2);
    expect(files.size).toBe(6);
  });

  it('after deleting everything, importing the file restores every version byte for byte, with its ETag, metadata and headers', async () => {
    await page.getByTestId('settings-delete-all').click(); // confirm() is accepted
    await expectNotice(page, 'Deleted all data');
    expect(await withClient(page, async (c) => (await c.listBuckets()).buckets.length, null)).toBe(0);

    await importFile(archivePath, 'fail');
    expect(await importError().count()).toBe(0);
    expect(await resultText()).toContain(
      'Imported: 6 objects restored (', // bytes in the console's format
    );
    expect(await resultText()).toContain('0 skipped (already here); 2 buckets created, 0 already here; accounts: 0 created, 0 updated, 0 skipped.');
    expect(await snapshot()).toEqual(original);

    // The other views show it as they open.
    await importResult().getByRole('link', { name: 'See the buckets' }).click();
    await expect.poll(() => page.getByTestId('bucket-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-bucket')))).toEqual(['docs', 'photos']);
    await page.locator('[data-testid=bucket-row][data-bucket=photos]').getByRole('link', { name: 'photos', exact: true }).click();
    await expect.poll(() => page.getByTestId('object-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')))).toContain('cat.jpg');
  });

  it('importing it again with "stop if anything exists" says ImportConflict and changes nothing', async () => {
    await nav(page, 'Settings');
    expect(await page.getByTestId('backup-conflict-fail').isChecked()).toBe(true); // the default
    await importFile(archivePath, 'fail');
    const message = await importError().textContent();
    expect(message).toMatch(/^ImportConflict: .*exists in .*Nothing was imported\./);
    expect(await importResult().count()).toBe(0);
    expect(await snapshot()).toEqual(original);
  });

  it('with "skip what exists" it keeps what is here and says how many it skipped', async () => {
    await importFile(archivePath, 'skip');
    expect(await importError().count()).toBe(0);
    expect(await resultText()).toContain('Imported: 0 objects restored (0 B), 6 skipped (already here); 0 buckets created, 2 already here;');
    expect(await snapshot()).toEqual(original);
  });

  it('a file that is not an archive shows MalformedArchive, and nothing changes', async () => {
    await importFile({ name: 'holiday.tar', mimeType: 'application/x-tar', buffer: Buffer.from('these are not the bytes of a tar file\n') }, 'overwrite');
    expect(await importError().textContent()).toMatch(/^MalformedArchive: .*Nothing was imported/);
    expect(await importResult().count()).toBe(0);
    expect(await snapshot()).toEqual(original);
  });

  it('shows progress while a larger archive downloads and uploads; Cancel stops an export with nothing saved', async () => {
    const size = 24 * MiB;
    await withClient(page, async (c, size) => {
      const bytes = new Uint8Array(size);
      for (let i = 0; i < size; i += 4) bytes[i] = (i >>> 2) & 255;
      await c.createBucket('big');
      await c.putObject('big', 'big.bin', bytes, { contentType: 'application/octet-stream' });
    }, size);
    const bigSha = (await snapshot()).objects.find((o) => o.key === 'big.bin')!.sha256;

    // What the export's bar and its text say, at every render.
    await startSampling(page, 'exportProgress', `() => {
      const p = document.querySelector('[data-testid=backup-export-progress] progress');
      return p ? { value: p.value, max: p.max, text: document.querySelector('[data-testid=backup-export-status]').textContent.trim() } : undefined;
    }`);
    await page.getByTestId('backup-scope-all').check();
    await page.getByTestId('backup-versions').uncheck();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('backup-export').click()]);
    const bigPath = await saved(download);
    const samples = await stopSampling<{ value: number; max: number; text: string }>(page, 'exportProgress');
    expect(samples.length).toBeGreaterThan(0);
    // Once the answer's headers are in, the bar's end is about the archive's size: 5 current objects, 24 MiB and a little.
    const sized = samples.filter((s) => s.max > 1);
    expect(sized.length).toBeGreaterThan(0);
    expect(sized[0]!.max).toBeGreaterThan(size);
    expect(sized[0]!.max).toBeLessThan(size + MiB);
    expect(sized[0]!.text).toMatch(/^[\d.]+ (B|KiB|MiB) of about 24 MiB · 5 objects$/);
    const { manifest, files } = await openArchive(bigPath);
    expect(manifest.buckets.map((b) => b.name).sort()).toEqual(['big', 'docs', 'photos']);
    expect(sha256(files.get('objects/big/big.bin')!)).toBe(bigSha);

    // Cancel as soon as the bar shows the archive's size: no download, and it says so.
    let downloads = 0;
    const count = () => downloads++;
    page.on('download', count);
    await page.evaluate(() => {
      const observer = new MutationObserver(() => {
        const status = document.querySelector('[data-testid=backup-export-status]');
        if (status?.textContent?.includes('of about')) {
          observer.disconnect();
          (document.querySelector('[data-testid=backup-export-cancel]') as HTMLButtonElement).click();
        }
      });
      observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.getByTestId('backup-export').click();
    await expect.poll(() => page.getByTestId('backup-export-done').textContent()).toBe('Export cancelled: nothing was saved.');
    expect(await page.getByTestId('backup-export-error').count()).toBe(0);
    await page.waitForTimeout(500);
    page.off('download', count);
    expect(downloads).toBe(0);

    // The import's bar: the big bucket goes, and comes back from the archive.
    await withClient(page, async (c) => {
      await c.deleteObject('big', 'big.bin');
      await c.deleteBucket('big');
    }, null);
    await startSampling(page, 'importProgress', `() => {
      const p = document.querySelector('[data-testid=backup-import-progress] progress');
      return p ? { value: p.value, max: p.max } : undefined;
    }`);
    await importFile(bigPath, 'skip');
    const sent = await stopSampling<{ value: number; max: number }>(page, 'importProgress');
    const fileSize = (await stat(bigPath)).size;
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((s) => s.max === fileSize)).toBe(true);
    expect(await resultText()).toContain('Imported: 1 object restored (24 MiB), 4 skipped (already here); 1 bucket created, 2 already here;');
    expect((await snapshot()).objects.find((o) => o.key === 'big.bin')!.sha256).toBe(bigSha);
  });

  it('asks for the root account when the console signs as another', async () => {
    await withClient(page, (c) => c.putAccount('alice', { secretAccessKey: 'alice-secret', displayName: 'Alice' }), null);
    await page.getByTestId('settings-signin-id').fill('alice');
    await page.getByTestId('settings-signin-secret').fill('alice-secret');
    await page.getByTestId('settings-signin').click();
    await expect.poll(() => page.getByTestId('backup-needs-root').textContent()).toContain('Export and import need the root account');
    expect(await backup().getByRole('button').count()).toBe(0);
    expect(await page.getByTestId('backup-file').count()).toBe(0);
    await page.getByTestId('settings-signin-root').click();
    await expect.poll(() => page.getByTestId('backup-export').count()).toBe(1);
    expect(await page.getByTestId('backup-needs-root').count()).toBe(0);
  });
});
