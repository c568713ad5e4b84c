// The console's buckets view in real Chromium, clicked (and typed) through as a user does: the
// empty state, name validation that agrees with the service's, create, access (private /
// public-read), versioning, delete (and the message when a bucket is not empty), the whole create
// flow with the keyboard only, and the error state when the listing fails.
import { describe, it, expect, beforeAll } from 'vitest';
import type { Page } from 'playwright-core';
import { sendSteps } from './support/page.ts';
import { dialogs, expectNotice, nav, useConsolePage, withClient } from './console-helpers.ts';

const consolePage = useConsolePage();
let page: Page;

beforeAll(() => {
  page = consolePage.page;
});

const bucketRow = (name: string) => page.locator(`[data-testid=bucket-row][data-bucket="${name}"]`);
const bucketNames = () => page.getByTestId('bucket-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-bucket')));
const form = () => page.getByTestId('create-bucket-form');
const nameInput = () => form().getByLabel('New bucket name');

/** What the service holds: names, and each bucket's ACL and versioning. */
function held(): Promise<{ name: string; acl: string; versioning: string | null }[]> {
  return withClient(page, async (c) => {
    const { buckets } = await c.listBuckets();
    return Promise.all(buckets.map(async (b) => ({
      name: b.name, acl: await c.getBucketAcl(b.name), versioning: (await c.getBucketVersioning(b.name)) ?? null,
    })));
  }, null);
}

describe('buckets', () => {
  it('says there are no buckets yet on a fresh service', async () => {
    await nav(page, 'Buckets');
    await expect.poll(() => page.getByTestId('buckets-empty').textContent()).toContain('No buckets yet. Create one above.');
    expect(await page.getByTestId('buckets-table').count()).toBe(0);
    expect(await held()).toEqual([]);
  });

  it('validates the name as the service does', async () => {
    const candidates = [
      'ab', 'abc', 'a'.repeat(63), 'a'.repeat(64), 'Photos', 'my_bucket', 'my.bucket', '-abc', 'abc-', 'a--b', '123', 'photos 2024', 'ünï',
    ];
    const verdicts: { name: string; ui: string | null; service: string | null }[] = [];
    for (const name of candidates) {
      await nameInput().fill(name);
      const help = await page.getByTestId('bucket-name-help').textContent();
      const invalid = (await nameInput().getAttribute('aria-invalid')) === 'true';
      const disabled = await form().getByRole('button', { name: 'Create bucket' }).isDisabled();
      expect(invalid, `${name}: aria-invalid and the disabled button agree`).toBe(disabled);
      verdicts.push({ name, ui: invalid ? help!.trim() : null, service: null });
    }
    // The service's own verdict, path style so the name reaches it exactly as typed.
    const answers = await sendSteps(page, candidates.map((name) => ({
      method: 'PUT', url: `http://svc.localhost/${encodeURIComponent(name)}`, expect: { status: 200 },
    })));
    answers.forEach((a, i) => {
      verdicts[i]!.service = a.status === 200 ? null : /<Code>(\w+)<\/Code>/.exec(a.text)?.[1] ?? String(a.status);
    });
    for (const v of verdicts) {
      expect(v.ui === null, `${v.name}: the console says ${v.ui ?? 'valid'}, the service says ${v.service ?? 'created'}`).toBe(v.service === null);
      if (v.service !== null) expect(v.service).toBe('InvalidBucketName');
    }
    // The messages say what is wrong.
    const says = Object.fromEntries(verdicts.map((v) => [v.name, v.ui]));
    expect(says['ab']).toBe('A bucket name has 3 to 63 characters.');
    expect(says['Photos']).toBe('Use only lower-case letters, digits and hyphens.');
    expect(says['-abc']).toBe('Start and end with a letter or a digit.');
    // Clean up what the service accepted.
    await withClient(page, async (c, names) => {
      for (const n of names) await c.deleteBucket(n);
    }, verdicts.filter((v) => v.service === null).map((v) => v.name));
    await nameInput().fill('');
  });

  it('creates a bucket, public-read, and reports the service refusing a name in use', async () => {
    await nameInput().fill('photos');
    expect(await nameInput().getAttribute('aria-invalid')).toBe('false');
    await form().getByLabel('Access').selectOption('public-read');
    await form().getByRole('button', { name: 'Create bucket' }).click();
    await expectNotice(page, 'Bucket photos created.');
    await expect.poll(() => bucketNames()).toEqual(['photos']);
    expect(await nameInput().inputValue()).toBe('');
    await expect.poll(() => bucketRow('photos').getByTestId('bucket-acl').inputValue()).toBe('public-read');
    expect(await bucketRow('photos').locator('.badge.public').textContent()).toBe('public');
    expect(await bucketRow('photos').getByTestId('bucket-versioning').inputValue()).toBe('');
    expect(await bucketRow('photos').getByTestId('bucket-versioning').locator('option:checked').textContent()).toBe('off (never enabled)');
    expect(await held()).toEqual([{ name: 'photos', acl: 'public-read', versioning: null }]);

    await nameInput().fill('photos');
    await form().getByRole('button', { name: 'Create bucket' }).click();
    await expectNotice(page, /^BucketAlreadyExists: .*photos/);
    expect(await bucketNames()).toEqual(['photos']);
  });

  it('switches the access between private and public-read, asking before it makes a bucket public', async () => {
    await bucketRow('photos').getByTestId('bucket-acl').selectOption('private');
    await expectNotice(page, 'photos is now private.');
    await expect.poll(() => bucketRow('photos').locator('.badge.public').count()).toBe(0);
    expect((await held())[0]!.acl).toBe('private');
    // Making it public asks first; declined, nothing changes.
    const before = dialogs.seen.length;
    dialogs.accept = false;
    try {
      await bucketRow('photos').getByTestId('bucket-acl').selectOption('public-read');
      await expect.poll(() => dialogs.seen.slice(before)).toEqual(['Make photos public-read? Anyone with a link can then read every object in it, without signing.']);
    } finally {
      dialogs.accept = true;
    }
    await expect.poll(() => bucketRow('photos').getByTestId('bucket-acl').inputValue()).toBe('private');
    expect((await held())[0]!.acl).toBe('private');
    await bucketRow('photos').getByTestId('bucket-acl').selectOption('public-read');
    await expectNotice(page, 'photos is now public-read.');
    await expect.poll(() => bucketRow('photos').locator('.badge.public').count()).toBe(1);
    expect((await held())[0]!.acl).toBe('public-read');
  });

  it("shows each bucket's object count and size", async () => {
    await withClient(page, async (c) => {
      await c.ensureBucket('counted');
      await c.putObject('counted', 'a.bin', new Uint8Array(1000));
      await c.putObject('counted', 'b/c.bin', new Uint8Array(2048));
      await c.putObject('counted', 'b/d.bin', new Uint8Array(1024 * 1024));
      await c.ensureBucket('empty-one');
    }, null);
    await page.getByTestId('refresh-buckets').click();
    await expect.poll(() => bucketRow('counted').getByTestId('bucket-stats').textContent()).toBe('3 · 1.0 MiB');
    await expect.poll(() => bucketRow('empty-one').getByTestId('bucket-stats').textContent()).toBe('0 · 0 B');
    await withClient(page, async (c) => {
      await c.deleteObjects('counted', ['a.bin', 'b/c.bin', 'b/d.bin']);
      await c.deleteBucket('counted');
      await c.deleteBucket('empty-one');
    }, null);
    await page.getByTestId('refresh-buckets').click();
    await expect.poll(() => page.locator('[data-testid=bucket-row][data-bucket=counted]').count()).toBe(0);
  });

  it('turns versioning on, then suspends it', async () => {
    const select = bucketRow('photos').getByTestId('bucket-versioning');
    await select.selectOption('Enabled');
    await expectNotice(page, 'Versioning of photos: Enabled.');
    expect((await held())[0]!.versioning).toBe('Enabled');
    // Once enabled, "off" is no longer a choice (versioning can only be suspended).
    await expect.poll(() => select.locator('option').allTextContents()).toEqual(['enabled', 'suspended']);
    await select.selectOption('Suspended');
    await expectNotice(page, 'Versioning of photos: Suspended.');
    expect((await held())[0]!.versioning).toBe('Suspended');
    // A fresh listing reads the same from the service.
    await page.getByTestId('refresh-buckets').click();
    await expect.poll(async () => [await select.inputValue(), await bucketRow('photos').getByTestId('bucket-acl').inputValue()])
      .toEqual(['Suspended', 'public-read']);
  });

  it('deletes an empty bucket, and says clearly why a bucket that is not empty stays', async () => {
    await withClient(page, async (c) => {
      await c.createBucket('scratch');
      await c.createBucket('keepers');
      await c.putObject('keepers', 'one.txt', '1');
    }, null);
    await page.getByTestId('refresh-buckets').click();
    await expect.poll(() => bucketNames()).toEqual(['keepers', 'photos', 'scratch']);

    await bucketRow('keepers').getByTestId('delete-bucket').click();
    await expectNotice(page, 'keepers is not empty: delete its objects, old versions and unfinished uploads first.');
    expect(await bucketNames()).toContain('keepers');
    expect((await held()).map((b) => b.name)).toContain('keepers');

    await bucketRow('scratch').getByTestId('delete-bucket').click();
    await expectNotice(page, 'Bucket scratch deleted.');
    await expect.poll(() => bucketNames()).toEqual(['keepers', 'photos']);
    expect((await held()).map((b) => b.name)).toEqual(['keepers', 'photos']);
  });

  it('creates a bucket and opens it with the keyboard only, focus always visible', async () => {
    await nav(page, 'Buckets');
    // Start from the top of the document, as after loading the page.
    await page.evaluate(() => {
      (document.activeElement as HTMLElement | null)?.blur();
      window.getSelection()?.removeAllRanges();
    });
    const focused = () => page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      const style = getComputedStyle(el);
      return {
        tag: el.tagName, name: el.getAttribute('name'), text: el.textContent?.trim() ?? '', label: el.closest('label')?.textContent?.trim() ?? '',
        outline: `${style.outlineStyle} ${style.outlineWidth}`, visible: el.matches(':focus-visible'),
      };
    });
    const seen: string[] = [];
    for (let i = 0; i < 20; i++) {
      await page.keyboard.press('Tab');
      const f = await focused();
      seen.push(`${f.tag}:${f.name ?? f.text}`);
      // Every stop shows where the focus is.
      expect(f.visible, `${f.tag} ${f.text} matches :focus-visible`).toBe(true);
      expect(f.outline.startsWith('none') || f.outline.endsWith(' 0px'), `${f.tag} ${f.text} outline ${f.outline}`).toBe(false);
      if (f.name === 'bucket-name') break;
    }
    expect(seen.at(-1), `Tab stops: ${seen.join(', ')}`).toBe('INPUT:bucket-name');
    await page.keyboard.type('keyboard-made');
    await page.keyboard.press('Tab');
    expect((await focused()).name).toBe('bucket-acl');
    await page.keyboard.press('ArrowDown'); // private → public-read
    expect(await form().getByLabel('Access').inputValue()).toBe('public-read');
    await page.keyboard.press('Tab');
    expect(await focused()).toMatchObject({ tag: 'BUTTON', text: 'Create bucket', visible: true });
    await page.keyboard.press('Enter');
    await expectNotice(page, 'Bucket keyboard-made created.');
    await expect.poll(() => bucketNames()).toEqual(['keepers', 'keyboard-made', 'photos']);
    expect((await held()).find((b) => b.name === 'keyboard-made')).toEqual({ name: 'keyboard-made', acl: 'public-read', versioning: null });

    // On into the table: Tab to the new bucket's link, Enter opens it.
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      const f = await focused();
      expect(f.visible, `${f.tag} ${f.text} matches :focus-visible`).toBe(true);
      if (f.tag === 'A' && f.text === 'keyboard-made') break;
    }
    expect(await focused()).toMatchObject({ tag: 'A', text: 'keyboard-made' });
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => location.hash)).toBe('#/b/keyboard-made/');
    await expect.poll(() => page.getByTestId('objects-empty').textContent()).toContain('This folder is empty');
  });

  it('shows an error state with a way out when the listing fails', async () => {
    // Signed in (through Settings) as an account that is then removed behind the console's back.
    await withClient(page, (c) => c.putAccount('ghost', { secretAccessKey: 'ghost-secret' }), null);
    await nav(page, 'Settings');
    await page.getByTestId('settings-signin-id').fill('ghost');
    await page.getByTestId('settings-signin-secret').fill('ghost-secret');
    await page.getByTestId('settings-signin').click();
    await expect.poll(() => page.getByTestId('current-account').textContent()).toBe('ghost');
    await withClient(page, (c) => c.deleteAccount('ghost'), null);

    await nav(page, 'Buckets');
    const error = page.locator('.state.error');
    await expect.poll(() => error.textContent()).toMatch(/Could not list buckets: \w+/);
    expect(await page.getByTestId('buckets-table').count()).toBe(0);
    await error.getByRole('button', { name: 'Try again' }).click();
    await expect.poll(() => error.textContent()).toMatch(/Could not list buckets/);

    // The uploads view says the same.
    await nav(page, 'Uploads');
    await expect.poll(() => page.getByTestId('uploads-error').textContent()).toMatch(/Could not list the buckets: \w+/);
    expect(await page.getByTestId('uploads-error').getByRole('button', { name: 'Try again' }).count()).toBe(1);

    await nav(page, 'Settings');
    await page.getByTestId('settings-signin-root').click();
    await expect.poll(() => page.getByTestId('current-account').textContent()).toBe('svcadmin');
    await nav(page, 'Buckets');
    await expect.poll(() => bucketNames()).toEqual(['keepers', 'keyboard-made', 'photos']);
  });
});
