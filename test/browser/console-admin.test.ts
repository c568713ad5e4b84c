// The console's other views in real Chromium, clicked through as a user does: multipart uploads in
// progress (list, parts, abort), accounts and quotas with the usage chart, the playground
// (StringToSign, Authorization, send, raw response) and settings (endpoint, worker status and
// build, switching account). The root client in the page only seeds and checks the service.
import { describe, it, expect, beforeAll } from 'vitest';
import type { Page } from 'playwright-core';
import { createHash, createHmac } from 'node:crypto';
import {
  expectNotice, formatBytes, KiB, MiB, nav, useConsolePage, withClient, type ConsoleWindow,
} from './console-helpers.ts';

const consolePage = useConsolePage();
const { baseURL } = consolePage;
let page: Page;

beforeAll(() => {
  page = consolePage.page;
});

const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');
/** Deterministic part bodies: `size` bytes of one character. */
const body = (ch: string, size: number) => ch.repeat(size);

describe('uploads in progress', () => {
  const uploadRow = (key: string) => page.getByTestId('upload-row').filter({ has: page.locator('td.key', { hasText: key }) });
  const uploadKeys = () => page.getByTestId('upload-row').evaluateAll((rows) => rows.map((r) => `${r.children[0]!.textContent}/${r.children[1]!.textContent}`));

  it('says so when nothing is in progress', async () => {
    await nav(page, 'Uploads');
    await expect.poll(() => page.getByTestId('uploads-empty').textContent()).toContain('No uploads in progress: svcadmin has no buckets yet.');
    await withClient(page, (c) => c.createBucket('incoming'), null);
    await page.getByTestId('uploads-refresh').click();
    await expect.poll(() => page.getByTestId('uploads-empty').textContent()).toContain('No uploads in progress in your bucket.');
  });

  it('lists uploads in progress in every bucket, shows the parts of each, and aborts one', async () => {
    const ids = await withClient(page, async (c, parts) => {
      await c.createBucket('other');
      const raw = await c.createMultipartUpload('incoming', 'video/raw.bin');
      await c.uploadPart('incoming', 'video/raw.bin', raw, 1, parts.one);
      await c.uploadPart('incoming', 'video/raw.bin', raw, 2, parts.two);
      const half = await c.createMultipartUpload('other', 'half.iso');
      await c.uploadPart('other', 'half.iso', half, 1, parts.one);
      const none = await c.createMultipartUpload('other', 'nothing-yet.bin');
      return { raw, half, none };
    }, { one: body('a', 20 * KiB), two: body('b', 17 * KiB) });

    await page.getByTestId('uploads-refresh').click();
    await expect.poll(() => uploadKeys()).toEqual(['incoming/video/raw.bin', 'other/half.iso', 'other/nothing-yet.bin']);
    expect(await page.locator('p.count').textContent()).toContain('3 uploads in progress');
    // The id, shortened, with the full one in the title.
    const idCell = uploadRow('video/raw.bin').locator('td.mono');
    expect(await idCell.getAttribute('title')).toBe(ids.raw);
    expect(await idCell.textContent()).toBe(ids.raw.length > 16 ? `${ids.raw.slice(0, 8)}…${ids.raw.slice(-6)}` : ids.raw);

    // Parts of one upload.
    const toggle = uploadRow('video/raw.bin').getByTestId('upload-parts-toggle');
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    await toggle.click();
    const parts = page.getByTestId('upload-parts');
    await expect.poll(() => parts.getByTestId('part-row').count()).toBe(2);
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    expect(await toggle.textContent()).toBe('Hide parts');
    const partCells = await parts.getByTestId('part-row').evaluateAll((rows) => rows.map((r) => {
      const td = r.querySelectorAll('td');
      return [td[0]!.textContent, td[1]!.getAttribute('title'), td[2]!.textContent];
    }));
    expect(partCells).toEqual([
      ['1', `${20 * KiB} bytes`, md5(body('a', 20 * KiB))],
      ['2', `${17 * KiB} bytes`, md5(body('b', 17 * KiB))],
    ]);
    expect(await parts.locator('p.muted').textContent()).toContain(`2 parts, ${formatBytes(37 * KiB)}`);
    await toggle.click();
    await expect.poll(() => parts.count()).toBe(0);

    // An upload with no parts yet says so.
    await uploadRow('nothing-yet.bin').getByTestId('upload-parts-toggle').click();
    await expect.poll(() => page.getByTestId('upload-parts').textContent()).toContain('No parts received yet.');

    // Abort (after the confirm dialog).
    await uploadRow('half.iso').getByTestId('upload-abort').click();
    await expectNotice(page, 'Aborted the upload of other/half.iso.');
    await expect.poll(() => uploadKeys()).toEqual(['incoming/video/raw.bin', 'other/nothing-yet.bin']);
    const held = await withClient(page, async (c) => ({
      incoming: (await c.listMultipartUploads('incoming')).uploads.map((u) => u.uploadId),
      other: (await c.listMultipartUploads('other')).uploads.map((u) => u.uploadId),
    }), null);
    expect(held).toEqual({ incoming: [ids.raw], other: [ids.none] });
  });
});

describe('accounts and quotas', () => {
  const accountRow = (id: string) => page.locator(`[data-testid=account-row][data-id="${id}"]`);
  const accountIds = () => page.getByTestId('account-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')));
  const bar = (id: string) => page.locator(`[data-testid=usage-bar][data-id="${id}"]`);
  const heldAccounts = () => withClient(page, (c) => c.listAccounts(), null);

  it('lists the accounts, root marked as root and as you', async () => {
    await nav(page, 'Accounts');
    await expect.poll(() => accountIds()).toEqual(['svcadmin']);
    const root = accountRow('svcadmin');
    expect(await root.locator('.badge').allTextContents()).toEqual(['root', 'you']);
    expect(await root.locator('td').nth(3).textContent()).toContain('unlimited');
    // Root can be neither removed nor signed in as (it is you).
    expect(await root.getByTestId('account-remove').count()).toBe(0);
    expect(await root.getByTestId('account-signin-button').count()).toBe(0);
  });

  it('creates an account, refusing bad input before asking the service', async () => {
    const create = page.getByTestId('account-create-form');
    const problem = page.getByTestId('account-create-problem');
    await create.getByTestId('account-new-id').fill('a');
    await create.getByTestId('account-new-secret').fill('alice-secret');
    await create.getByTestId('account-create-submit').click();
    await expect.poll(() => problem.textContent()).toContain('The access key id is 3 to 64 characters');
    await create.getByTestId('account-new-id').fill('alice');
    await create.getByTestId('account-new-secret').fill('short');
    await create.getByTestId('account-create-submit').click();
    await expect.poll(() => problem.textContent()).toContain('The secret is 8 to 128 printable ASCII characters');
    await create.getByTestId('account-new-secret').fill('alice-secret');
    await create.getByTestId('account-new-quota').fill('-3');
    await create.getByTestId('account-create-submit').click();
    await expect.poll(() => problem.textContent()).toContain('The quota is a number of zero or more.');
    expect((await heldAccounts()).map((a) => a.accessKeyId)).toEqual(['svcadmin']);

    await create.getByTestId('account-new-name').fill('Alice Liddell');
    await create.getByTestId('account-new-quota').fill('5');
    await create.getByTestId('account-create-submit').click();
    await expectNotice(page, 'Created alice with a quota of 5.0 MiB.');
    expect(await page.getByTestId('accounts-message').textContent()).toContain('Created alice with a quota of 5.0 MiB.');
    await expect.poll(() => accountIds()).toEqual(['alice', 'svcadmin']);
    expect(await accountRow('alice').locator('td').allTextContents()).toEqual(expect.arrayContaining(['Alice Liddell', '0 B']));
    expect((await accountRow('alice').locator('td').nth(3).textContent())!.trim()).toBe('5.0 MiB');
    expect(await problem.count()).toBe(0);
    expect(await create.getByTestId('account-new-id').inputValue()).toBe('');
    const alice = (await heldAccounts()).find((a) => a.accessKeyId === 'alice');
    expect(alice).toEqual({ accessKeyId: 'alice', displayName: 'Alice Liddell', quotaBytes: 5 * MiB, usedBytes: 0, root: false });
    // The new account signs requests with that secret.
    const works = await page.evaluate(async () => {
      const c = (window as unknown as ConsoleWindow).swbucket.createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'alice', secretAccessKey: 'alice-secret' });
      await c.createBucket('alice-files');
      await c.putObject('alice-files', 'one-mib.bin', new Uint8Array(1024 * 1024));
      return (await c.listBuckets()).buckets.map((b) => b.name);
    });
    expect(works).toEqual(['alice-files']);
  });

  it('draws storage used per account against its quota, and the browser\'s own estimate', async () => {
    await page.getByTestId('accounts-refresh').click();
    await expect.poll(() => accountRow('alice').locator('td').nth(2).textContent()).toBe('1.0 MiB');
    const chart = page.getByTestId('usage-chart');
    expect(await chart.locator('figcaption').textContent()).toContain('Storage used');
    expect(await bar('alice').locator('.nums').textContent()).toBe('1.0 MiB of 5.0 MiB (20%)');
    expect(await bar('alice').locator('svg').getAttribute('aria-label')).toBe('alice: 1.0 MiB used of a 5.0 MiB quota, 20%.');
    expect(Number(await bar('alice').locator('rect.fill').getAttribute('width'))).toBeCloseTo(20, 5);
    // Root has no quota: drawn against what the browser allows the site.
    const estimate = await page.evaluate(async () => {
      const e = await navigator.storage.estimate();
      return { usage: e.usage ?? 0, quota: e.quota ?? 0 };
    });
    const rootUsed = (await heldAccounts()).find((a) => a.root)!.usedBytes;
    expect(await bar('svcadmin').locator('.nums').textContent()).toBe(`${formatBytes(rootUsed)}, no quota`);
    expect(await bar('svcadmin').locator('svg').getAttribute('aria-label')).toContain(`drawn against this browser's quota of ${formatBytes(estimate.quota)}`);
    const browserBar = bar('(browser)');
    expect(await browserBar.locator('.label').textContent()).toBe("This browser's storage (all of this site)");
    expect(await browserBar.locator('.nums').textContent()).toContain(` of ${formatBytes(estimate.quota)} (`);
    expect(await browserBar.locator('.nums').textContent()).toMatch(/^[\d.]+ (B|KiB|MiB|GiB) of /);
  });

  it('sets, changes and removes a quota', async () => {
    await accountRow('alice').getByTestId('account-quota-button').click();
    const quotaForm = page.getByTestId('account-quota-form');
    // Focus moves into the form, which starts from the current quota.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('account-quota-input');
    expect(await quotaForm.getByTestId('account-quota-input').inputValue()).toBe('5');
    await quotaForm.getByTestId('account-quota-input').fill('2');
    await quotaForm.getByTestId('account-quota-set').click();
    await expectNotice(page, 'alice now has a quota of 2.0 MiB.');
    await expect.poll(() => bar('alice').locator('.nums').textContent()).toBe('1.0 MiB of 2.0 MiB (50%)');
    expect((await heldAccounts()).find((a) => a.accessKeyId === 'alice')!.quotaBytes).toBe(2 * MiB);

    // A quota in bytes.
    await accountRow('alice').getByTestId('account-quota-button').click();
    await quotaForm.getByTestId('account-quota-unit').selectOption('bytes');
    await quotaForm.getByTestId('account-quota-input').fill('1500000');
    await quotaForm.getByTestId('account-quota-set').click();
    await expectNotice(page, `alice now has a quota of ${formatBytes(1_500_000)}.`);
    expect((await heldAccounts()).find((a) => a.accessKeyId === 'alice')!.quotaBytes).toBe(1_500_000);
    await expect.poll(() => bar('alice').locator('rect.fill').getAttribute('width')).toBe(String((MiB / 1_500_000) * 100));

    // Escape closes the form without a change.
    await accountRow('alice').getByTestId('account-quota-button').click();
    await page.keyboard.press('Escape');
    await expect.poll(() => quotaForm.count()).toBe(0);

    await accountRow('alice').getByTestId('account-quota-button').click();
    await quotaForm.getByTestId('account-quota-remove').click();
    await expectNotice(page, 'alice has no quota now.');
    await expect.poll(() => accountRow('alice').locator('td').nth(3).textContent()).toContain('unlimited');
    expect((await heldAccounts()).find((a) => a.accessKeyId === 'alice')!.quotaBytes).toBeUndefined();
  });

  it('removes an account; one that owns buckets stays, with the service\'s reason', async () => {
    await accountRow('alice').getByTestId('account-remove').click();
    await expectNotice(page, 'Could not remove alice: AccountNotEmpty');
    expect(await page.getByTestId('accounts-message').textContent()).toContain('Could not remove alice: AccountNotEmpty: The account still owns buckets');
    expect(await accountIds()).toEqual(['alice', 'svcadmin']);

    await withClient(page, (c) => c.putAccount('bob', { secretAccessKey: 'bob-secret-1' }), null);
    await page.getByTestId('accounts-refresh').click();
    await expect.poll(() => accountIds()).toEqual(['alice', 'bob', 'svcadmin']);
    await accountRow('bob').getByTestId('account-remove').click();
    await expectNotice(page, 'Removed bob.');
    await expect.poll(() => accountIds()).toEqual(['alice', 'svcadmin']);
    expect((await heldAccounts()).map((a) => a.accessKeyId)).toEqual(['alice', 'svcadmin']);
  });

  it('is for root only: signed in as another account, it says so and offers to go back', async () => {
    // alice's secret was typed in this console: one click signs in.
    await accountRow('alice').getByTestId('account-signin-button').click();
    await expect.poll(() => page.getByTestId('current-account').textContent()).toBe('alice');
    await expect.poll(() => page.getByTestId('accounts-not-root').textContent()).toContain('Only the root account manages accounts and quotas. You are signed in as alice.');
    expect(await page.getByTestId('accounts-table').count()).toBe(0);
    await page.getByTestId('accounts-sign-in-root').click();
    await expect.poll(() => page.getByTestId('current-account').textContent()).toBe('svcadmin');
    await expect.poll(() => accountIds()).toEqual(['alice', 'svcadmin']);
  });
});

describe('settings', () => {
  it('shows the endpoint, the mount, the worker\'s state and build', async () => {
    await nav(page, 'Settings');
    const svc = await page.evaluate(() => {
      const s = (window as unknown as ConsoleWindow).swbucket;
      return { endpoint: s.endpoint, mount: s.mount, version: s.version };
    });
    expect(await page.getByTestId('settings-endpoint').textContent()).toBe(svc.endpoint);
    expect(svc.endpoint).toBe('svc.localhost');
    expect(await page.getByTestId('settings-mount').textContent()).toBe(svc.mount);
    expect(await page.getByTestId('settings-version').textContent()).toBe(svc.version);
    expect(await page.getByTestId('settings-page-version').textContent()).toBe(svc.version);
    expect(await page.getByTestId('settings-build-match').textContent()).toBe('same as the page');
    expect(await page.getByTestId('settings-scope').textContent()).toBe(`${baseURL}/`);
    await expect.poll(() => page.getByTestId('settings-worker-state').textContent()).toBe('activated');
    expect(await page.getByTestId('settings-worker-state').locator('..').textContent()).toContain('controls this page');
    // And the worker really is the one answering: the version it reports to the page.
    const controller = await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL ?? '');
    expect(controller).toContain('/sw.js');
  });

  it('refuses wrong credentials after testing them', async () => {
    await page.getByTestId('settings-signin-id').fill('alice');
    await page.getByTestId('settings-signin-secret').fill('not-her-secret');
    await page.getByTestId('settings-signin').click();
    await expect.poll(() => page.getByTestId('settings-signin-problem').textContent()).toMatch(/^Not signed in: AccessDenied: /);
    await page.getByTestId('settings-signin-id').fill('nobody');
    await page.getByTestId('settings-signin').click();
    await expect.poll(() => page.getByTestId('settings-signin-problem').textContent()).toMatch(/^Not signed in: AccessDenied: .*(nobody|access key)/i);
    expect(await page.getByTestId('current-account').textContent()).toBe('svcadmin');
    expect(await page.getByTestId('settings-access-key').textContent()).toBe('svcadmin');
    // Nothing of alice's was kept.
    expect(await page.evaluate(() => localStorage.getItem('swbucket:console:credentials') ?? '')).not.toContain('alice');
  });

  it('switches account with right credentials, keeps it across a reload, and checks the service', async () => {
    await page.getByTestId('settings-signin-id').fill('alice');
    await page.getByTestId('settings-signin-secret').fill('alice-secret');
    await page.getByTestId('settings-signin').click();
    await expectNotice(page, 'Now signed in as alice.');
    expect(await page.getByTestId('current-account').textContent()).toBe('alice');
    expect(await page.getByTestId('settings-access-key').textContent()).toBe('alice');
    expect(await page.getByTestId('settings-signin-problem').count()).toBe(0);

    await page.reload();
    await expect.poll(() => page.getByTestId('current-account').textContent(), { timeout: 20_000 }).toBe('alice');
    await page.getByTestId('settings-check').click();
    await expect.poll(() => page.getByTestId('settings-check-result').textContent()).toMatch(/^OK: the service answered in [\d.]+ ms; Alice Liddell owns 1 bucket\.$/);

    // The other views act as alice now: her bucket only.
    await nav(page, 'Buckets');
    await expect.poll(() => page.getByTestId('bucket-row').evaluateAll((r) => r.map((x) => x.getAttribute('data-bucket')))).toEqual(['alice-files']);

    await nav(page, 'Settings');
    await page.getByTestId('settings-signin-root').click();
    await expect.poll(() => page.getByTestId('current-account').textContent()).toBe('svcadmin');
    expect(await page.getByTestId('settings-signin-root').isDisabled()).toBe(true);
  });
});

describe('playground', () => {
  const sts = () => page.getByTestId('playground-sts').textContent();
  const verify = (text: string) => `SVC svcadmin:${createHmac('sha256', 'svcadmin-secret').update(text).digest('base64')}`;

  it('shows the StringToSign and the Authorization the client computed, live', async () => {
    await nav(page, 'Playground');
    expect(await page.getByTestId('playground-no-response').textContent()).toContain('Nothing sent yet.');
    await page.getByTestId('preset-create-bucket').click();
    await expect.poll(async () => (await sts())?.split('\n').at(-1)).toBe('/playground/');
    const text = (await sts())!;
    const date = (await page.getByTestId('playground-date').textContent())!;
    expect(text).toBe(`PUT\n\n\n\nx-svc-acl:private\nx-svc-date:${date}\n/playground/`);
    expect(new Date(date).getTime()).not.toBeNaN();
    // The Authorization is HMAC-SHA256 of exactly that text with root's secret.
    expect(await page.getByTestId('playground-auth').textContent()).toBe(verify(text));
    expect(await page.getByTestId('playground-url').textContent()).toBe('PUT http://playground.svc.localhost/');

    // Edits re-sign as you type: a sub-resource is signed, a plain query parameter is not.
    await page.getByTestId('playground-method').selectOption('GET');
    await page.getByTestId('playground-headers').fill('');
    await page.getByTestId('playground-query').fill('acl');
    await expect.poll(async () => (await sts())?.split('\n').at(-1)).toBe('/playground/?acl');
    expect((await sts())!.startsWith('GET\n')).toBe(true);
    await page.getByTestId('playground-query').fill('max-keys=3');
    await expect.poll(async () => (await sts())?.split('\n').at(-1)).toBe('/playground/');
    const now = (await sts())!;
    expect(await page.getByTestId('playground-auth').textContent()).toBe(verify(now));
  });

  it('sends requests and shows the raw response; the service then holds the result', async () => {
    await page.getByTestId('preset-create-bucket').click();
    await page.getByTestId('playground-send').click();
    const status = page.getByTestId('playground-response-status');
    await expect.poll(() => status.textContent()).toBe('200 OK');
    const headers = Object.fromEntries(await page.getByTestId('playground-response-headers').locator('tbody tr').evaluateAll((rows) =>
      rows.map((r) => [r.children[0]!.textContent, r.children[1]!.textContent])));
    expect(headers['x-svc-request-id']).toMatch(/^[0-9A-F]{16}$/);
    expect(await withClient(page, async (c) => [await c.headBucket('playground'), await c.getBucketAcl('playground')], null)).toEqual([true, 'private']);

    await page.getByTestId('preset-put-object').click();
    expect(await page.getByTestId('playground-body').inputValue()).toBe('Hello from the playground!\n');
    await page.getByTestId('playground-send').click();
    await expect.poll(() => status.textContent()).toBe('200 OK');
    const put = await withClient(page, async (c) => {
      const r = await c.getObject('playground', 'hello.txt');
      return { text: await r.response.text(), type: r.contentType, meta: r.metadata };
    }, null);
    expect(put).toEqual({ text: 'Hello from the playground!\n', type: 'text/plain', meta: { author: 'playground' } });

    await page.getByTestId('preset-get-object').click();
    await page.getByTestId('playground-send').click();
    await expect.poll(() => page.getByTestId('playground-response-body').textContent()).toBe('Hello from the playground!\n');
    expect(await status.textContent()).toBe('200 OK');

    // XML answers are indented for reading; "Indent XML" off shows the bytes as received.
    await page.getByTestId('preset-list-objects').click();
    await page.getByTestId('playground-send').click();
    const shown = page.getByTestId('playground-response-body');
    await expect.poll(() => shown.textContent()).toContain('\n    <Key>hello.txt</Key>');
    await page.getByTestId('playground-pretty').uncheck();
    const raw = (await shown.textContent())!;
    expect(raw).toContain('<Key>hello.txt</Key>');
    expect(raw.split('\n').length).toBeLessThan(4);
  });

  it('shows error responses as they are: a missing key, an unsigned request, a malformed header', async () => {
    const status = page.getByTestId('playground-response-status');
    await page.getByTestId('preset-get-object').click();
    await page.getByTestId('playground-key').fill('nope.txt');
    await page.getByTestId('playground-send').click();
    await expect.poll(() => status.textContent()).toBe('404 Not Found');
    expect(await page.getByTestId('playground-response-body').textContent()).toContain('<Code>NoSuchKey</Code>');

    await page.getByTestId('playground-key').fill('hello.txt');
    await page.getByTestId('playground-signed').uncheck();
    await page.getByTestId('playground-send').click();
    await expect.poll(() => status.textContent()).toBe('403 Forbidden');
    expect(await page.getByTestId('playground-response-body').textContent()).toContain('<Code>AccessDenied</Code>');
    await page.getByTestId('playground-signed').check();

    await page.getByTestId('playground-headers').fill('no colon here');
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'Line 1: write "Name: value".' }).count()).toBe(1);
    expect(await page.getByTestId('playground-send').isDisabled()).toBe(true);
    await page.getByTestId('playground-headers').fill('');
    expect(await page.getByTestId('playground-send').isDisabled()).toBe(false);
  });

  it('signs in S3\'s dialect with SigV4, showing the canonical request, the string to sign and the signing key; the request is answered in S3\'s dialect', async () => {
    await page.getByTestId('playground-dialect-s3').check();
    await page.getByTestId('preset-put-object').click();
    expect(await page.getByTestId('playground-headers').inputValue()).toBe('Content-Type: text/plain\nx-amz-meta-author: playground');
    await page.getByTestId('playground-key').fill('s3 note.txt');
    const canonical = page.getByTestId('playground-canonical');
    await expect.poll(async () => (await canonical.textContent())?.split('\n')[1]).toBe('/s3%20note.txt');
    const c = (await canonical.textContent())!.split('\n');
    const bodyHash = createHash('sha256').update('Hello from the playground!\n').digest('hex');
    expect([c[0], c.at(-1), c.at(-2)]).toEqual(['PUT', bodyHash, 'content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-author']);
    expect(c).toContain('host:playground.s3.localhost');
    const amzDate = (await page.getByTestId('playground-date').textContent())!;
    const sts = (await page.getByTestId('playground-sts').textContent())!;
    const scope = `${amzDate.slice(0, 8)}/us-east-1/s3/aws4_request`;
    expect(sts).toBe(`AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${createHash('sha256').update(c.join('\n')).digest('hex')}`);
    // The signing key's four steps, and the signature they make.
    let k: Buffer = Buffer.from('AWS4svcadmin-secret');
    const steps = await page.getByTestId('playground-key-steps').locator('li').allTextContents();
    for (const [i, input] of [amzDate.slice(0, 8), 'us-east-1', 's3', 'aws4_request'].entries()) {
      k = createHmac('sha256', k).update(input).digest();
      expect(steps[i]).toContain(k.toString('hex'));
    }
    const signature = createHmac('sha256', k).update(sts).digest('hex');
    expect(await page.getByTestId('playground-auth').textContent()).toBe(`AWS4-HMAC-SHA256 Credential=svcadmin/${scope}, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-author, Signature=${signature}`);

    await page.getByTestId('playground-send').click();
    const status = page.getByTestId('playground-response-status');
    await expect.poll(() => status.textContent()).toBe('200 OK');
    const headers = Object.fromEntries(await page.getByTestId('playground-response-headers').locator('tbody tr').evaluateAll((rows) =>
      rows.map((r) => [r.children[0]!.textContent, r.children[1]!.textContent])));
    expect([headers['x-amz-request-id'], headers['x-svc-request-id']]).toEqual([expect.stringMatching(/^[0-9A-F]{16}$/), undefined]);
    const put = await withClient(page, async (cl) => (await cl.getObject('playground', 's3 note.txt')).metadata, null);
    expect(put).toEqual({ author: 'playground' });

    await page.getByTestId('preset-list-objects').click();
    expect(await page.getByTestId('playground-query').inputValue()).toBe('list-type=2&delimiter=/&max-keys=100');
    await page.getByTestId('playground-send').click();
    await expect.poll(() => page.getByTestId('playground-response-body').textContent()).toContain('<KeyCount>');
    await page.getByTestId('playground-dialect-svc').check();
  });
});
