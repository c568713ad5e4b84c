// A page controlled by the real worker, and the browser runner for conformance steps: the steps are
// signed inside the page with WebCrypto (support/page-signer.ts, written from docs/protocol.md,
// "Signing", independently of the service and of the Node test signer) and sent with fetch, so the
// worker answers them. Also an <img> loaded in the page, for what the mount serves to one.
// Works on a Playwright page (Chromium) and on any engine's EnginePage (support/engines.ts).
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { bodyText, PAGE_ORIGIN, type Step } from '../../cases/types.ts';
import type { StepResult } from '../../cases/check.ts';
import type { Engine, EnginePage } from './engines.ts';
import { playwrightEnginePage } from './engines/chromium.ts';
import { PAGE_SIGNER, type pageSigner } from './page-signer.ts';

/** A Playwright page or an EnginePage. */
export type AnyPage = Page | EnginePage;

/** The EnginePage interface over either kind of page. */
export function enginePage(page: AnyPage): EnginePage {
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
  return page.evaluate(async ({ steps, signSrc }: { steps: WireStep[]; signSrc: string }) => {
    const { sign } = (new Function(`return (${signSrc})`)() as typeof pageSigner)();
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
  }, { steps: wire, signSrc: PAGE_SIGNER });
}

/** What an <img> made what of: its size, and its top-left pixel when the page may read it. */
export interface LoadedImage {
  loaded: boolean;
  width: number;
  height: number;
  pixel: number[] | null;
}

/** Loads an <img> of `src` in the page, and takes it out again. */
export function loadImage(page: AnyPage, src: string): Promise<LoadedImage> {
  return enginePage(page).evaluate((src: string) => new Promise<LoadedImage>((resolve) => {
    const img = new Image();
    const done = (loaded: boolean) => {
      let pixel: number[] | null = null;
      if (loaded) {
        try {
          const c = document.createElement('canvas');
          c.width = img.naturalWidth;
          c.height = img.naturalHeight;
          const g = c.getContext('2d')!;
          g.drawImage(img, 0, 0);
          pixel = Array.from(g.getImageData(0, 0, 1, 1).data);
        } catch {
          pixel = null; // a cross-origin image taints the canvas
        }
      }
      img.remove();
      resolve({ loaded, width: img.naturalWidth, height: img.naturalHeight, pixel });
    };
    img.onload = () => done(true);
    img.onerror = () => done(false);
    img.src = src;
    document.body.append(img);
  }), src);
}
