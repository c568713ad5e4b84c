// Issue 23, F2 and F4 in the browser: the attacks of test/hostile/import-unit.test.ts through the
// built worker in Chromium, over the browser's IndexedDB. The import's body is streamed from the
// page and held part-way (only Chromium sends request streams), so that alice's write lands while
// the import runs; the archive is then damaged. Her write stays, nothing of the import does, and
// a conflict=overwrite import that fails leaves nothing it made.
import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { packTar } from 'modern-tar';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './support/chromium.ts';
import { openServicePage, resetService } from './support/page.ts';
import { signHeaders } from '../support/sign.ts';

let browser: Browser;
let page: Page;
const ALICE = { accessKeyId: 'alice', secret: 'alice-secret' };
const S = 'http://svc.localhost';
const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');

beforeAll(async () => {
  browser = await launchChromium();
  ({ page } = await openServicePage(browser, inject('baseURL')));
});
afterAll(async () => {
  await browser?.close();
});

interface Result { status: number; text: string }

/** fetch() from the page, signed here. */
async function call(method: string, url: string, o: { body?: string; creds?: typeof ALICE; headers?: Record<string, string> } = {}): Promise<Result> {
  const headers = signHeaders(method, url, new Headers(o.headers ?? {}), o.creds);
  return page.evaluate(async ({ method, url, headers, body }) => {
    const r = await fetch(url, { method, headers, ...(body !== undefined ? { body: new Blob([body]) } : {}) });
    return { status: r.status, text: method === 'HEAD' ? '' : await r.text() };
  }, { method, url, headers: [...headers], body: o.body });
}

async function ok(method: string, url: string, o: Parameters<typeof call>[2] = {}): Promise<Result> {
  const r = await call(method, url, o);
  expect(r.status, `${method} ${url}: ${r.text}`).toBeLessThan(300);
  return r;
}

function archive(o: { accounts?: string[]; buckets: [string, string][]; items: { bucket: string; key: string; bytes: Uint8Array }[] }): Promise<Uint8Array> {
  const manifest = JSON.stringify({
    format: 'swbucket-archive', version: 1,
    ...(o.accounts ? { accounts: o.accounts.map((a) => ({ accessKeyId: a, secret: `${a}-secret`, displayName: a })) } : {}),
    buckets: o.buckets.map(([name, owner]) => ({ name, owner, acl: 'private', created: 0, nextVersionId: 1 })),
    objects: o.items.map((it) => ({
      bucket: it.bucket, key: it.key, current: true, file: `objects/${it.bucket}/${it.key}`, size: it.bytes.byteLength,
      etag: md5(it.bytes), lastModified: 0, contentType: 'application/octet-stream', headers: {}, meta: [],
    })),
  });
  return packTar([
    { header: { name: 'swbucket.json', size: Buffer.byteLength(manifest) }, body: manifest },
    ...o.items.map((it) => ({ header: { name: `objects/${it.bucket}/${it.key}`, size: it.bytes.byteLength }, body: it.bytes })),
  ]);
}

/** Where entry `n` (0 = the manifest) of a tar ends. */
function endOfEntry(tar: Uint8Array, n: number): number {
  let at = 0;
  for (let i = 0; i <= n; i++) at += 512 + Math.ceil(parseInt(Buffer.from(tar.subarray(at + 124, at + 136)).toString().replace(/\0.*$/, '').trim(), 8) / 512) * 512;
  return at;
}

/** How many bodies an import holds in the service's database, as the page reads it. */
const heldBodies = () => page.evaluate(() => new Promise<number>((resolve, reject) => {
  const open = indexedDB.open('swbucket');
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const db = open.result;
    const r = db.transaction('held-bodies').objectStore('held-bodies').count();
    r.onsuccess = () => {
      db.close();
      resolve(r.result);
    };
    r.onerror = () => reject(r.error);
  };
}));

describe('an import in the worker is one unit of work (Chromium)', () => {
  it("F2: alice's write during an import that then fails stays; nothing of the import does", async () => {
    await resetService(page);
    await ok('PUT', `${S}/?account=alice`, { body: '<Account><SecretAccessKey>alice-secret</SecretAccessKey></Account>' });
    await ok('PUT', 'http://alices.svc.localhost/', { creds: ALICE });
    const items = Array.from({ length: 5 }, (_, i) => ({ bucket: 'alices', key: `k${i}`, bytes: randomBytes(1_500_000 + i) }));
    const tar = await archive({ buckets: [['alices', 'alice']], items });
    const url = `${S}/?import&conflict=skip`;
    const headers = signHeaders('POST', url, new Headers());
    // The page streams the first four entries (k0…k2 make a stored batch), then waits.
    await page.evaluate(({ url, headers, first }) => {
      const w = window as unknown as { imp: Promise<Result>; rest: (b: number[] | null) => void };
      let push!: (b: number[] | null) => void;
      let waiting = new Promise<number[] | null>((r) => (push = r));
      w.rest = (b) => push(b);
      let sentFirst = false;
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          if (!sentFirst) {
            sentFirst = true;
            return c.enqueue(Uint8Array.from(atob(first), (ch) => ch.charCodeAt(0)));
          }
          const next = await waiting;
          waiting = new Promise((r) => (push = r));
          if (next === null) return c.close();
          c.enqueue(new Uint8Array(next));
        },
      });
      w.imp = fetch(url, { method: 'POST', headers, body, duplex: 'half' } as RequestInit).then(async (r) => ({ status: r.status, text: await r.text() }));
    }, { url, headers: [...headers], first: Buffer.from(tar.subarray(0, endOfEntry(tar, 4))).toString('base64') });
    await expect.poll(heldBodies, { timeout: 20_000 }).toBeGreaterThan(0);
    await ok('PUT', 'http://alices.svc.localhost/k1', { creds: ALICE, body: 'alice wrote this' });
    // Then the archive turns out damaged: a block that is no tar header.
    await page.evaluate((bytes) => (window as unknown as { rest: (b: number[] | null) => void }).rest(bytes), new Array(1024).fill(0x41));
    await page.evaluate(() => (window as unknown as { rest: (b: number[] | null) => void }).rest(null)).catch(() => {});
    const r = await page.evaluate(() => (window as unknown as { imp: Promise<Result> }).imp);
    expect([r.status, /<Code>([^<]*)</.exec(r.text)?.[1]], r.text).toEqual([400, 'MalformedArchive']);
    expect((await ok('GET', 'http://alices.svc.localhost/k1', { creds: ALICE })).text).toBe('alice wrote this');
    const listed = (await ok('GET', 'http://alices.svc.localhost/', { creds: ALICE })).text;
    expect([...listed.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1])).toEqual(['k1']);
    expect(await heldBodies()).toBe(0);
  });

  it('F4: a conflict=overwrite import that fails leaves nothing it made: no account, bucket or object, and what it would replace stays', async () => {
    await resetService(page);
    await ok('PUT', 'http://mine.svc.localhost/');
    await ok('PUT', 'http://mine.svc.localhost/k0', { body: 'old' });
    const items = [
      ...Array.from({ length: 3 }, (_, i) => ({ bucket: 'mine', key: `k${i}`, bytes: randomBytes(20_000 + i) })),
      ...Array.from({ length: 3 }, (_, i) => ({ bucket: 'fresh', key: `n${i}`, bytes: randomBytes(20_000 + i) })),
    ];
    const tar = await archive({ accounts: ['bob'], buckets: [['mine', 'svcadmin'], ['fresh', 'bob']], items });
    const cut = Buffer.from(tar.subarray(0, endOfEntry(tar, 5) + 700)).toString('latin1');
    const url = `${S}/?import&conflict=overwrite`;
    const headers = signHeaders('POST', url, new Headers());
    const r = await page.evaluate(async ({ url, headers, cut }) => {
      const bytes = Uint8Array.from(cut, (ch) => ch.charCodeAt(0));
      const res = await fetch(url, { method: 'POST', headers, body: new Blob([bytes]) });
      return { status: res.status, text: await res.text() };
    }, { url, headers: [...headers], cut });
    expect([r.status, /<Code>([^<]*)</.exec(r.text)?.[1]], r.text).toEqual([400, 'MalformedArchive']);
    expect((await ok('GET', 'http://mine.svc.localhost/k0')).text).toBe('old');
    expect((await ok('GET', 'http://mine.svc.localhost/')).text.match(/<Key>/g)).toHaveLength(1);
    expect((await call('GET', 'http://fresh.svc.localhost/')).status).toBe(404);
    expect((await ok('GET', `${S}/?accounts`)).text).not.toContain('<AccessKeyId>bob</AccessKeyId>');
    expect(await heldBodies()).toBe(0);
  });
});
