// Two tabs of one origin share one worker and one database. Both write the same keys at once, many
// times over; afterwards every object is whole: its bytes hash to its ETag, that ETag is one some
// tab was told, and the bytes are exactly the body of that acknowledged write. No body is orphaned
// and the account's usage is the size of what is stored (docs/browser.md, "Transactions"
// and "Strict durability").
import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './support/chromium.ts';
import { dbSnapshot, installPageHelpers, md5hex, openStartedPage, orphanReport, parseListing, pattern } from './support/lifecycle-helpers.ts';

const BUCKET = 'two-tabs';
const KEYS = ['shared/a.bin', 'shared/b.bin', 'shared/c.bin', 'shared/d.bin'];
const PUTS_PER_TAB = 24;

let browser: Browser;
let context: BrowserContext;
let tabs: Page[];

beforeAll(async () => {
  browser = await launchChromium();
  context = await browser.newContext();
  await installPageHelpers(context);
  tabs = [await openStartedPage(context, inject('baseURL') + '/')];
  tabs.push(await openStartedPage(context, inject('baseURL') + '/'));
});
afterAll(async () => {
  await browser?.close();
});

interface Write {
  tab: number;
  key: string;
  seed: number;
  size: number;
}

/** Sizes from 1 byte to ~600 KiB, some of them crossing Blob and IPC chunk boundaries. */
function plan(tab: number, round: number): Write[] {
  return Array.from({ length: PUTS_PER_TAB }, (_, i) => {
    const seed = 100_000 * (round + 1) + 1000 * (tab + 1) + i;
    return { tab, key: KEYS[(i + tab) % KEYS.length]!, seed, size: 1 + ((seed * 48_271) % (600 * 1024)) };
  });
}

/** All of one tab's PUTs at once; tab 1 addresses the own-origin mount, tab 0 the bucket host. */
async function writeAll(page: Page, writes: Write[], viaMount: boolean) {
  return page.evaluate(async ({ writes, viaMount, bucket }) => Promise.all(writes.map(async (w) => {
    const url = viaMount ? window.__lc.mountUrl(bucket, w.key) : window.__lc.bucketUrl(bucket, w.key);
    try {
      const r = await window.__lc.req('PUT', url, { body: new Blob([window.__lc.pattern(w.seed, w.size)]) });
      return { ...w, status: r.status, etag: r.headers.get('etag'), text: await r.text() };
    } catch (e) {
      return { ...w, status: 0, etag: null, text: String(e) };
    }
  })), { writes, viaMount, bucket: BUCKET });
}

/** GET every key from a tab; the body comes back as base64 so Node hashes the bytes itself. */
async function readAll(page: Page) {
  return page.evaluate(async ({ keys, bucket }) => Promise.all(keys.map(async (key) => {
    const r = await window.__lc.req('GET', window.__lc.bucketUrl(bucket, key));
    const bytes = new Uint8Array(await r.arrayBuffer());
    return { key, status: r.status, etag: r.headers.get('etag'), body: window.__lc.base64(bytes) };
  })), { keys: KEYS, bucket: BUCKET });
}

describe('two tabs writing the same keys concurrently', () => {
  it('both tabs are controlled by the same worker', async () => {
    const seen = await Promise.all(tabs.map((t) => t.evaluate(() => ({
      controller: navigator.serviceWorker.controller?.scriptURL ?? null,
      started: Boolean((window as { swbucket?: unknown }).swbucket),
    }))));
    expect(seen[0]!.controller).toMatch(/\/sw\.js$/);
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[0]!.started).toBe(true);
  });

  it('every object ends whole, its bytes matching its ETag, which is one a tab was acknowledged', async () => {
    const status = await tabs[0]!.evaluate(async (b) => (await window.__lc.req('PUT', window.__lc.bucketUrl(b))).status, BUCKET);
    expect(status).toBe(200);

    for (let round = 0; round < 2; round++) {
      const plans = [plan(0, round), plan(1, round)];
      const results = (await Promise.all([writeAll(tabs[0]!, plans[0]!, false), writeAll(tabs[1]!, plans[1]!, true)])).flat();

      // Every PUT was acknowledged with the MD5 of exactly what that tab sent.
      const expectedEtag = (w: Write) => `"${md5hex(pattern(w.seed, w.size))}"`;
      const refused = results.filter((r) => r.status !== 200 || r.etag !== expectedEtag(r));
      expect(refused.map((r) => ({ tab: r.tab, key: r.key, status: r.status, etag: r.etag, text: r.text.slice(0, 300) })), `round ${round}`).toEqual([]);

      // Each key holds one acknowledged write, whole, as both tabs read it.
      const acked = new Map<string, Map<string, Write>>(KEYS.map((k) => [k, new Map()]));
      for (const r of results) acked.get(r.key)!.set(r.etag!, r);
      const reads = await Promise.all(tabs.map(readAll));
      for (const key of KEYS) {
        const [a, b] = reads.map((rs) => rs.find((r) => r.key === key)!);
        expect(b, `${key}: both tabs read the same object`).toEqual(a);
        const bytes = Buffer.from(a!.body, 'base64');
        expect(a!.status, key).toBe(200);
        expect(a!.etag, `${key}: ETag is the MD5 of the bytes served`).toBe(`"${md5hex(bytes)}"`);
        const winner = acked.get(key)!.get(a!.etag!);
        expect(winner, `${key}: ${a!.etag} is one of the acknowledged ETags ${[...acked.get(key)!.keys()].join(' ')}`).toBeDefined();
        expect(bytes.equals(Buffer.from(pattern(winner!.seed, winner!.size))), `${key}: the bytes are the winner's body`).toBe(true);
      }

      // The listing shows the same objects; nothing is left over from the losing writes.
      const listing = await tabs[1]!.evaluate(async (b) => (await window.__lc.req('GET', window.__lc.bucketUrl(b))).text(), BUCKET);
      expect(parseListing(listing)).toEqual(KEYS.map((key) => {
        const r = reads[0]!.find((x) => x.key === key)!;
        return { key, size: Buffer.from(r.body, 'base64').length, etag: r.etag!.replace(/"/g, '') };
      }));
      expect(orphanReport(await dbSnapshot(tabs[0]!)), `round ${round}`).toEqual([]);
    }
  });
});
