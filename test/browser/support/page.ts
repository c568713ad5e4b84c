// A page controlled by the real worker, and the browser runner for conformance steps: the steps are
// signed inside the page with WebCrypto (written here from docs/protocol.md, "Signing", independently of the
// service and of the Node test signer) and sent with fetch, so the worker answers them.
// Works on a Playwright page (Chromium) and on any engine's EnginePage (support/engines.ts).
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { bodyText, PAGE_ORIGIN, type Step } from '../../cases/types.ts';
import type { StepResult } from '../../cases/check.ts';
import type { Engine, EnginePage } from './engines.ts';
import { playwrightEnginePage } from './engines/chromium.ts';

/** A Playwright page or an EnginePage. */
export type AnyPage = Page | EnginePage;

function enginePage(page: AnyPage): EnginePage {
  return 'mainFrame' in page ? playwrightEnginePage(page) : page;
}

const started = () => Boolean((window as { swbucket?: unknown }).swbucket);

/**
 * The built site's page at `baseURL` (its path and hash kept), once the service started on it. With a
 * Playwright browser the page is in a new context of its own; with an Engine it is a new page of it.
 */
export async function openServicePage(browser: Browser, baseURL: string): Promise<{ context: BrowserContext; page: Page }>;
export async function openServicePage(engine: Engine, baseURL: string): Promise<{ page: EnginePage }>;
export async function openServicePage(browser: Browser | Engine, baseURL: string): Promise<{ context?: BrowserContext; page: AnyPage }> {
  if ('newContext' in browser) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(baseURL + '/');
    await page.waitForFunction(started, null, { timeout: 20_000 });
    return { context, page };
  }
  const page = await browser.newPage();
  await page.goto(baseURL + '/');
  await page.waitForFunction(started, undefined, { timeout: 20_000 });
  return { page };
}

/** Deletes the service's database; the worker closes its connection on versionchange and reopens a fresh one. */
export async function resetService(page: AnyPage): Promise<void> {
  await enginePage(page).evaluate(() => new Promise<void>((resolve, reject) => {
    const r = indexedDB.deleteDatabase('swbucket');
    r.onsuccess = () => resolve();
    r.onerror = () => reject(r.error);
  }));
}

interface WireStep {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  auth: Step['auth'];
  clockSkewSeconds: number;
}

/** Sends steps in order from inside the page; returns what each got. */
export async function sendSteps(anyPage: AnyPage, steps: Step[]): Promise<StepResult[]> {
  const page = enginePage(anyPage);
  const origin = new URL(await page.url()).origin;
  const wire: WireStep[] = steps.map((s) => ({
    method: s.method,
    url: s.url.startsWith(PAGE_ORIGIN + '/') ? origin + s.url.slice(PAGE_ORIGIN.length) : s.url,
    headers: s.headers ?? {},
    ...(s.body !== undefined ? { body: bodyText(s.body) } : {}),
    auth: s.auth ?? 'root',
    clockSkewSeconds: s.clockSkewSeconds ?? 0,
  }));
  return page.evaluate(async (steps: WireStep[]) => {
    const ENDPOINT = 'svc.localhost';
    const SIGNED = ['acl', 'versioning', 'versions', 'versionId', 'uploadId', 'uploads', 'partNumber', 'delete', 'account', 'accounts', 'export', 'import', 'bucket', 'conflict'];
    const enc = new TextEncoder();
    const decode = (s: string) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    };
    const encodeKey = (key: string) => Array.from(enc.encode(key), (b) => {
      const c = String.fromCharCode(b);
      return /[A-Za-z0-9\-_.*]/.test(c) ? c : '%' + b.toString(16).toUpperCase().padStart(2, '0');
    }).join('');
    function resource(u: URL): string {
      let bucket: string;
      let key: string;
      if (u.hostname.endsWith('.' + ENDPOINT)) {
        bucket = u.hostname.slice(0, -ENDPOINT.length - 1);
        key = decode(u.pathname.slice(1));
      } else {
        let path = u.pathname;
        if (u.hostname !== ENDPOINT && (path === '/svc' || path.startsWith('/svc/'))) path = path.slice(4);
        const rest = path.replace(/^\//, '');
        const slash = rest.indexOf('/');
        bucket = decode(slash < 0 ? rest : rest.slice(0, slash));
        key = slash < 0 ? '' : decode(rest.slice(slash + 1));
      }
      let res = bucket === '' ? '/' : `/${bucket}/${encodeKey(key)}`;
      const subs = [...new URLSearchParams(u.search)].filter(([n]) => SIGNED.includes(n))
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([n, v]) => (v === '' ? n : `${n}=${v}`));
      if (subs.length) res += '?' + subs.join('&');
      return res;
    }
    async function sign(method: string, url: string, h: Headers, creds: { accessKeyId: string; secret: string }) {
      const names = [...h.keys()].filter((n) => n.startsWith('x-svc-')).sort();
      const canonical = names.map((n) => `${n}:${h.get(n)!.trim()}\n`).join('');
      const sts = `${method}\n${h.get('content-md5') ?? ''}\n${h.get('content-type') ?? ''}\n\n${canonical}${resource(new URL(url))}`;
      const key = await crypto.subtle.importKey('raw', enc.encode(creds.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
      const sig = new Uint8Array(await crypto.subtle.sign('HMAC', key, enc.encode(sts)));
      h.set('authorization', `SVC ${creds.accessKeyId}:${btoa(String.fromCharCode(...sig))}`);
    }
    const out: { status: number; headers: Record<string, string>; text: string }[] = [];
    for (const s of steps) {
      const h = new Headers(s.headers);
      if (s.auth !== 'anon') {
        if (typeof s.auth === 'object' && 'header' in s.auth) h.set('authorization', s.auth.header);
        else {
          const creds = s.auth === 'root' || s.auth === undefined ? { accessKeyId: 'svcadmin', secret: 'svcadmin-secret' } : s.auth;
          if (!h.has('x-svc-date')) h.set('x-svc-date', new Date(Date.now() + s.clockSkewSeconds * 1000).toUTCString());
          await sign(s.method, s.url, h, creds);
        }
      }
      // A Blob without a type: a string body would make the browser add a Content-Type the
      // signature did not cover.
      const init: RequestInit = { method: s.method, headers: h };
      if (s.body !== undefined && s.method !== 'GET' && s.method !== 'HEAD') init.body = new Blob([s.body]);
      const r = await fetch(s.url, init);
      out.push({ status: r.status, headers: Object.fromEntries(r.headers), text: s.method === 'HEAD' ? '' : await r.text() });
    }
    return out;
  }, wire);
}
