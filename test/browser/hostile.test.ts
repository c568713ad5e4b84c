// Attacks that only a browser shows, through the built worker in Chromium:
// - stored XSS through the page-origin mount: an HTML and an SVG object with a script, opened in a
//   tab on the page's own origin (plainly from a public-read bucket, through a presigned link turned
//   into a mount URL, and as the ifNotFound fallback). Without a sandbox the script would run with
//   the page origin's rights and read its IndexedDB (the service's own database). What must hold:
//   the tab gets the worker's frame page (no script), the object in its frame carries
//   `X-Content-Type-Options: nosniff` and `Content-Security-Policy: sandbox`, the
//   stored script does not get to report anything, and the document lives in an opaque origin
//   (`self.origin === 'null'`) where IndexedDB access throws.
// - the request log as a place to steal credentials from: after signed and presigned requests
//   (and refused ones), the worker's log database holds no signature, and refused requests carry
//   the access key they claimed.
import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import type { Browser, BrowserContext, Frame, Page, Response } from 'playwright-core';
import { launchChromium } from './support/chromium.ts';
import { openServicePage, resetService } from './support/page.ts';
import { storedLog } from './support/log.ts';
import { presign, signHeaders } from '../support/sign.ts';

let browser: Browser;
let context: BrowserContext;
let page: Page;
let origin: string;
/** Every signature this file sends, right or wrong: none may reach the log. */
const signatures: string[] = [];

const future = () => Math.floor(Date.now() / 1000) + 600;

/** What the stored documents run when they are allowed to: read the origin's IndexedDB, then report. */
const PAYLOAD = `(async () => {
  let result;
  try { result = 'read:' + (await indexedDB.databases()).map((d) => d.name).join(','); }
  catch (e) { result = 'denied:' + (e && e.name); }
  document.title = 'ran|' + self.origin + '|' + result;
  console.log('xss-probe ' + document.title);
})();`;
const HTML = `<!doctype html><html><head><title>untouched</title></head><body><p>hello</p><script>${PAYLOAD}</script></body></html>`;
const SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><title>untouched</title><rect width="40" height="40" fill="red"/><script>//<![CDATA[\n${PAYLOAD}\n//]]></script></svg>`;

interface PageResult { status: number; headers: Record<string, string>; text: string }

/** fetch() from the page (so the worker answers), signed in Node unless `sign` is false. */
async function pageFetch(method: string, url: string, o: { headers?: Record<string, string>; body?: string; sign?: boolean; creds?: { accessKeyId: string; secret: string } } = {}): Promise<PageResult> {
  const headers = new Headers(o.headers ?? {});
  if (o.sign !== false) {
    signHeaders(method, url, headers, o.creds);
    signatures.push(headers.get('authorization')!.split(':')[1]!);
  }
  return page.evaluate(async ({ method, url, headers, body }) => {
    const init: RequestInit = { method, headers };
    if (body !== undefined) init.body = new Blob([body]);
    const r = await fetch(url, init);
    return { status: r.status, headers: Object.fromEntries(r.headers), text: method === 'HEAD' ? '' : await r.text() };
  }, { method, url, headers: [...headers], body: o.body });
}

function presigned(url: string, expires = future()): string {
  const p = presign('GET', url, expires);
  signatures.push(new URL(p).searchParams.get('Signature')!);
  return p;
}

beforeAll(async () => {
  browser = await launchChromium();
  ({ context, page } = await openServicePage(browser, inject('baseURL')));
  origin = new URL(page.url()).origin;
  await resetService(page);
  for (const [bucket, acl] of [['xsspub', 'public-read'], ['xsspriv', 'private']] as const) {
    const b = await pageFetch('PUT', `http://${bucket}.svc.localhost/`, { headers: { 'x-svc-acl': acl } });
    expect(b.status, b.text).toBe(200);
    for (const [key, body, type] of [['evil.html', HTML, 'text/html'], ['evil.svg', SVG, 'image/svg+xml']] as const) {
      const r = await pageFetch('PUT', `http://${bucket}.svc.localhost/${key}`, { body, headers: { 'content-type': type } });
      expect(r.status, r.text).toBe(200);
    }
  }
});
afterAll(async () => {
  await browser?.close();
});

/** What a script in a document can reach of its origin's storage (run by the test, in that document). */
function probeStorage(p: Page | Frame) {
  return p.evaluate(async () => ({
    origin: self.origin,
    databases: await indexedDB.databases().then(
      (list) => 'read:' + list.map((d) => d.name).sort().join(','),
      (e: unknown) => 'denied:' + (e as Error).name,
    ),
    open: (() => {
      try {
        indexedDB.open('swbucket');
        return 'opened';
      } catch (e) {
        return 'denied:' + (e as Error).name;
      }
    })(),
  }));
}

/**
 * Opens `url` in a new tab of the page's context (same origin, same worker, same storage). The tab
 * gets the frame page (no script of its own) and the object is the document of its one frame.
 */
async function openInTab(url: string) {
  const tab = await context.newPage();
  const messages: string[] = [];
  const responses: Response[] = [];
  tab.on('console', (m) => messages.push(m.text()));
  tab.on('response', (r) => responses.push(r));
  try {
    const res = await tab.goto(url);
    expect(res, url).not.toBeNull();
    // Time for the stored script to run and report, if it runs at all.
    await tab.waitForTimeout(700);
    const frame = tab.frames().find((f) => f !== tab.mainFrame());
    expect(frame, 'the frame page holds the object in a frame').toBeDefined();
    const object = responses.find((r) => r.frame() === frame && r.request().isNavigationRequest());
    expect(object, 'the frame\'s own request was answered').toBeDefined();
    return {
      page: { status: res!.status(), headers: await res!.allHeaders(), fromWorker: res!.fromServiceWorker() },
      status: object!.status(),
      headers: await object!.allHeaders(),
      title: await frame!.title(),
      messages,
      probe: await probeStorage(frame!),
    };
  } finally {
    await tab.close();
  }
}

describe('stored XSS through the mount', () => {
  it('the probe can tell: on the page itself it reads the origin\'s databases', async () => {
    const here = await probeStorage(page);
    expect(here.origin).toBe(origin);
    expect(here.databases).toMatch(/^read:.*\bswbucket\b/);
    expect(here.open).toBe('opened');
  });

  const cases: [string, () => string, number][] = [
    ['an HTML object of a public-read bucket, /svc/{bucket}/{key}', () => `${origin}/svc/xsspub/evil.html`, 200],
    ['an SVG object of a public-read bucket, /svc/{bucket}/{key}', () => `${origin}/svc/xsspub/evil.svg`, 200],
    ['a private HTML object through a presigned link turned into a mount URL',
      () => presigned('http://xsspriv.svc.localhost/evil.html').replace('http://xsspriv.svc.localhost/', `${origin}/svc/xsspriv/`), 200],
    ['a private SVG object through a presigned link turned into a mount URL',
      () => presigned('http://xsspriv.svc.localhost/evil.svg').replace('http://xsspriv.svc.localhost/', `${origin}/svc/xsspriv/`), 200],
    ['the ifNotFound fallback (404 with the HTML object)', () => `${origin}/svc/xsspub/missing.html?ifNotFound=evil.html`, 404],
  ];
  for (const [what, url, status] of cases) {
    it(`${what}: sandboxed, the script reaches nothing of the origin`, async () => {
      const r = await openInTab(url());
      // The tab's own document is the worker's frame page: no script may run in it at all.
      expect(r.page.fromWorker).toBe(true);
      expect(r.page.status).toBe(status);
      expect(r.page.headers['content-security-policy']).toMatch(/^default-src 'none';/);
      expect(r.page.headers['content-security-policy']).not.toMatch(/script-src/);
      expect(r.status).toBe(status);
      expect(r.headers['x-content-type-options']).toBe('nosniff');
      expect(r.headers['content-security-policy']).toBe('sandbox');
      // The stored script reported nothing: neither a database list nor anything else.
      expect(r.messages.filter((m) => m.startsWith('xss-probe')), r.messages.join('\n')).toEqual([]);
      expect(r.title).not.toMatch(/^ran\|/);
      // Anything that does run in that document is in an opaque origin, cut off from IndexedDB.
      expect(r.probe.origin).toBe('null');
      expect(r.probe.databases).toBe('denied:SecurityError');
      expect(r.probe.open).toBe('denied:SecurityError');
    });
  }
});

describe("the worker's request log never holds a signature", () => {
  it('after signed, presigned and refused requests: no signature stored, Authorization "SVC key:…", Signature …, the claimed key on refusals', async () => {
    const B = 'http://xsspriv.svc.localhost';
    const sent: { id: string; key: string | undefined; what: string }[] = [];
    const track = (what: string, r: PageResult, key: string | undefined) => sent.push({ id: r.headers['x-svc-request-id']!, key, what });

    track('signed GET', await pageFetch('GET', `${B}/evil.html`), 'svcadmin');
    track('signed GET on the mount', await pageFetch('GET', `${origin}/svc/xsspriv/evil.html`), 'svcadmin');
    track('presigned GET', await pageFetch('GET', presigned(`${B}/evil.svg`), { sign: false }), 'svcadmin');
    track('presigned GET on the mount', await pageFetch('GET', presigned(`${origin}/svc/xsspriv/evil.svg`), { sign: false }), 'svcadmin');
    const refused: [string, PageResult][] = [
      ['a wrong signature', await pageFetch('GET', `${B}/evil.html`, { creds: { accessKeyId: 'svcadmin', secret: 'not-the-secret' } })],
      ['an unknown key', await pageFetch('GET', `${B}/evil.html`, { creds: { accessKeyId: 'mallory', secret: 'mallory-secret' } })],
      ['an expired presigned URL', await pageFetch('GET', presigned(`${B}/evil.html`, Math.floor(Date.now() / 1000) - 60), { sign: false })],
      ['presigned + ifNotFound', await pageFetch('GET', presigned(`${B}/gone.html`) + '&ifNotFound=evil.html', { sign: false })],
    ];
    for (const [what, r] of refused) {
      expect(r.status, `${what}: ${r.text}`).toBe(403);
      track(what, r, what === 'an unknown key' ? 'mallory' : 'svcadmin');
    }
    track('anonymous', await pageFetch('GET', `${B}/evil.html`, { sign: false }), undefined);

    // The log is written after each answer: wait for every entry.
    let log = await storedLog(page);
    for (let i = 0; i < 100 && !sent.every((s) => log.some((e) => e.requestId === s.id)); i++) {
      await page.waitForTimeout(100);
      log = await storedLog(page);
    }
    for (const s of sent) {
      const e = log.find((x) => x.requestId === s.id);
      expect(e, s.what).toBeDefined();
      expect(e!.accessKeyId, s.what).toBe(s.key);
      const auth = e!.requestHeaders.find(([n]) => n.toLowerCase() === 'authorization')?.[1];
      if (auth !== undefined) expect(auth, s.what).toBe(`SVC ${s.key}:…`);
      if (e!.url.includes('Signature=')) expect(e!.url, s.what).toMatch(/Signature=…(&|$)/);
    }
    // Nothing in the whole log, the navigations of the tests above included.
    expect(signatures.length).toBeGreaterThanOrEqual(15);
    const everything = JSON.stringify(log);
    for (const sig of signatures) {
      for (const form of [sig, encodeURIComponent(sig), sig.slice(0, 12), encodeURIComponent(sig).slice(0, 12)]) {
        expect(everything.includes(form), `the log holds ${form}`).toBe(false);
      }
    }
  });
});
