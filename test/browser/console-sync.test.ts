// The console's Sync view in real Chromium (issue 33): a bucket bound to a bucket of
// `swbucket serve` (a separate process) shows its state and what waits to be pushed; the object
// list marks what is not yet pushed; Sync now pushes it; a key changed on both sides shows as a
// conflict with both versions to open, and Dismiss forgets it; Pause and Resume. The page's own
// service.replicas only binds the bucket; the remote is written with the AWS SDK from Node.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { nav, useConsolePage, visit, withClient } from './console-helpers.ts';
import { serve, type Served } from '../support/serve.ts';

const consolePage = useConsolePage();
const ROOT = { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' };
let page: Page;
let remote: Served;
let sdk: S3Client;

beforeAll(async () => {
  page = consolePage.page;
  remote = await serve(['--dialect', 's3']);
  sdk = new S3Client({ endpoint: remote.url, region: 'us-east-1', forcePathStyle: true, credentials: ROOT });
  await sdk.send(new CreateBucketCommand({ Bucket: 'console-remote' }));
}, 60_000);
afterAll(async () => {
  sdk?.destroy();
  await remote?.stop();
});

const remoteRead = async (Key: string) => {
  try {
    return await (await sdk.send(new GetObjectCommand({ Bucket: 'console-remote', Key }))).Body!.transformToString();
  } catch {
    return null;
  }
};

describe('the Sync view', () => {
  it('says how to add a replica when there is none', async () => {
    await nav(page, 'Sync');
    await expect.poll(() => page.getByTestId('sync-empty').textContent()).toContain('No replicas');
  });

  it('shows a replica, marks what is not yet pushed, pushes it on Sync now, and shows a conflict with both versions', async () => {
    // Bound and synced once, then paused, so that what is written next waits.
    await page.evaluate(async (remoteUrl) => {
      const sw = (window as unknown as { swbucket: { replicas: { add(c: object): Promise<void>; syncNow(): Promise<unknown>; pause(b: string): Promise<void> } } }).swbucket;
      await sw.replicas.add({ bucket: 'album', remote: { endpoint: remoteUrl, region: 'us-east-1', bucket: 'console-remote', forcePathStyle: true, credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } } });
      await sw.replicas.syncNow();
      await sw.replicas.pause('album');
    }, remote.url);
    await withClient(page, (c) => c.putObject('album', 'beach.txt', 'sand'), null);
    await nav(page, 'Sync');
    const replica = page.getByTestId('replica').filter({ has: page.locator('h3', { hasText: 'album' }) });
    await expect.poll(() => replica.getAttribute('data-state')).toBe('paused');
    await expect.poll(() => replica.getByTestId('replica-pending').textContent()).toBe('1 change waits to be pushed (4 B)');
    // The object list marks it.
    await visit(page, '#/b/album/');
    await expect.poll(() => page.getByTestId('object-row').filter({ hasText: 'beach.txt' }).getByTestId('object-pending').count()).toBe(1);
    await nav(page, 'Sync');
    await replica.getByTestId('replica-resume').click();
    await expect.poll(() => remoteRead('beach.txt'), { timeout: 20_000 }).toBe('sand');
    await expect.poll(() => replica.getAttribute('data-state'), { timeout: 20_000 }).toBe('idle');
    await expect.poll(() => replica.getByTestId('replica-pending').textContent()).toBe('Nothing waits to be pushed');
    // Both sides change beach.txt; Sync now finds the conflict.
    await withClient(page, (c) => c.putObject('album', 'beach.txt', 'sand, here'), null);
    await sdk.send(new PutObjectCommand({ Bucket: 'console-remote', Key: 'beach.txt', Body: 'sand, there' }));
    await replica.getByTestId('replica-sync').click();
    const conflict = replica.getByTestId('conflict').filter({ hasText: 'beach.txt' });
    await expect.poll(() => conflict.count(), { timeout: 20_000 }).toBe(1);
    expect(await conflict.textContent()).toMatch(/changed on both sides/);
    const kept = await conflict.getByTestId('conflict-kept').getAttribute('href');
    const atKey = await conflict.getByTestId('conflict-key').getAttribute('href');
    // Both versions open from the links (the page's mount).
    const texts = await page.evaluate(async (urls) => Promise.all(urls.map(async (u) => (await fetch(u)).text())), [atKey!, kept!]);
    expect(texts).toEqual(['sand, there', 'sand, here']);
    await conflict.getByTestId('conflict-dismiss').click();
    await expect.poll(() => replica.getByTestId('conflict').count()).toBe(0);
  });

  it('in the cache mode, the object list marks what is on the remote only, and an object no more once it was read', async () => {
    await sdk.send(new CreateBucketCommand({ Bucket: 'console-cache' }));
    for (const Key of ['read.txt', 'unread.txt']) await sdk.send(new PutObjectCommand({ Bucket: 'console-cache', Key, Body: Key }));
    await page.evaluate(async (remoteUrl) => {
      const sw = (window as unknown as { swbucket: { replicas: { add(c: object): Promise<void>; syncNow(o: object): Promise<unknown> } } }).swbucket;
      await sw.replicas.add({ bucket: 'cached', mode: 'cache', remote: { endpoint: remoteUrl, region: 'us-east-1', bucket: 'console-cache', forcePathStyle: true, credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } } });
      await sw.replicas.syncNow({ bucket: 'cached' });
    }, remote.url);
    const marked = async () => {
      const rows = page.getByTestId('object-row');
      const out: string[] = [];
      for (let i = 0; i < (await rows.count()); i++) {
        if ((await rows.nth(i).getByTestId('object-remote-only').count()) > 0) out.push((await rows.nth(i).getAttribute('data-key'))!);
      }
      return out;
    };
    await visit(page, '#/b/cached/');
    await expect.poll(() => page.getByTestId('object-row').count()).toBe(2);
    await expect.poll(marked).toEqual(['read.txt', 'unread.txt']);
    expect(await withClient(page, async (c) => (await c.getObject('cached', 'read.txt')).response.text(), null)).toBe('read.txt');
    await visit(page, '#/b/album/');
    await visit(page, '#/b/cached/');
    await expect.poll(() => page.getByTestId('object-row').count()).toBe(2);
    await expect.poll(marked).toEqual(['unread.txt']);
  });
});
