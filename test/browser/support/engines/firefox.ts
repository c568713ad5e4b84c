// Firefox ESR through puppeteer-core over WebDriver BiDi. puppeteer-core never downloads a browser:
// it runs the Firefox found here (FIREFOX_PATH, else firefox-esr or firefox on PATH), headless, with
// a fresh temporary profile per launch (a copy of one Firefox has started on once: profileTemplate)
// removed on close.
import puppeteer, { type Page } from 'puppeteer-core';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evaluateWithin, type Engine, type EnginePage, type WaitOptions } from '../engines.ts';
import { findExecutable } from './find.ts';

export function findFirefox(env: Record<string, string | undefined> = process.env): string {
  return findExecutable({
    what: 'Firefox',
    envVar: 'FIREFOX_PATH',
    commands: ['firefox-esr', 'firefox'],
    install: 'apt-get install firefox-esr',
  }, env);
}

export async function checkFirefox(): Promise<void> {
  findFirefox();
}

/**
 * On top of puppeteer's own test profile (no updates, telemetry, safe browsing, normandy, search
 * updates): no connections of Firefox's own on start or in the background. Service workers need
 * nothing: Firefox allows them on http://localhost (a secure context) with its defaults.
 */
export const FIREFOX_PREFS: Record<string, unknown> = {
  'app.update.auto': false,
  'browser.aboutHomeSnippets.updateUrl': '',
  'browser.newtabpage.activity-stream.feeds.section.topstories': false,
  'browser.newtabpage.activity-stream.feeds.snippets': false,
  'browser.newtabpage.activity-stream.default.sites': '',
  'browser.region.network.url': '',
  'browser.region.update.enabled': false,
  'browser.safebrowsing.provider.google.updateURL': '',
  'browser.safebrowsing.provider.google4.updateURL': '',
  'browser.safebrowsing.provider.mozilla.updateURL': '',
  'browser.topsites.contile.enabled': false,
  'extensions.blocklist.enabled': false,
  'extensions.systemAddon.update.enabled': false,
  'media.gmp-gmpopenh264.enabled': false,
  'network.captive-portal-service.enabled': false,
  'network.connectivity-service.enabled': false,
  'network.dns.disablePrefetch': true,
  'network.predictor.enabled': false,
  'network.prefetch-next': false,
  // Remote Settings skips all remote activity with this dummy server (puppeteer's is a host to resolve).
  'services.settings.server': 'data:,#remote-settings-dummy/v1',
  'toolkit.telemetry.enabled': false,
  'toolkit.telemetry.server': '',
};

/**
 * Firefox's own test switch: connections to anything but this machine are refused, and with it
 * Firefox honours the Remote Agent's dummy Remote Settings server (a release build otherwise ignores
 * that pref and polls firefox.settings.services.mozilla.com at start).
 */
export const FIREFOX_ENV: Record<string, string> = { MOZ_DISABLE_NONLOCAL_CONNECTIONS: '1' };

/** Puppeteer's WebDriver BiDi browsing context of a page, as far as this file uses it (not public API). */
interface BidiContext {
  id: string;
  userContext: { browser: { session: { send(method: string, params: object): Promise<unknown> } } };
}

/** The page's top-level browsing context id, and a way to send it WebDriver BiDi commands. */
function bidi(page: Page): { id: string; send(method: string, params: object): Promise<unknown> } {
  const context = (page.mainFrame() as unknown as { browsingContext: BidiContext }).browsingContext;
  const { session } = context.userContext.browser;
  return { id: context.id, send: (method, params) => session.send(method, params) };
}

const NAVIGATION_TIMEOUT_MS = 30_000;

function firefoxPage(page: Page, evaluateTimeout: number | undefined): EnginePage {
  return {
    engine: 'firefox',
    // Navigations are WebDriver BiDi commands of their own: after a traversal of the session history
    // (history.back() in the page, or puppeteer's goBack()) puppeteer's goto() and reload() never
    // saw their load (puppeteer-core 24.43, Firefox ESR 153), although the page had loaded.
    async goto(url: string) {
      await evaluateWithin(bidi(page).send('browsingContext.navigate', { context: bidi(page).id, url, wait: 'complete' }), NAVIGATION_TIMEOUT_MS);
    },
    async url() {
      return page.url();
    },
    evaluate<A, R>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<R> {
      return evaluateWithin(page.evaluate(fn as (arg: unknown) => R | Promise<R>, arg as unknown) as Promise<R>, evaluateTimeout);
    },
    async waitForFunction<A>(fn: (arg: A) => unknown, arg?: A, options: WaitOptions = {}) {
      await page.waitForFunction(fn as (arg: unknown) => unknown, { timeout: options.timeout ?? 20_000 }, arg as unknown);
    },
    async reload() {
      await evaluateWithin(bidi(page).send('browsingContext.reload', { context: bidi(page).id, wait: 'complete' }), NAVIGATION_TIMEOUT_MS);
    },
    async frames() {
      // Asked of Firefox itself (browsingContext.getTree), not of puppeteer's frame tree, which
      // misses the frames of a document restored from the back-forward cache.
      const { id, send } = bidi(page);
      const { result } = await send('browsingContext.getTree', { root: id, maxDepth: 1 }) as { result: { contexts: { children?: { context: string; url: string }[] }[] } };
      return Promise.all((result.contexts[0]?.children ?? []).map(async (child) => {
        const { result: r } = await send('script.callFunction', {
          functionDeclaration: '() => ({ url: location.href, text: document.documentElement ? document.documentElement.textContent : "" })',
          target: { context: child.context },
          awaitPromise: true,
          resultOwnership: 'none',
        }) as { result: { type: string; result?: { value: [string, { value: string }][] }; exceptionDetails?: { text: string } } };
        if (r.type !== 'success' || !r.result) throw new Error(`frames(): ${r.exceptionDetails?.text ?? 'no result'}`);
        const fields = Object.fromEntries(r.result.value.map(([k, v]) => [k, v.value]));
        return { url: String(fields.url), text: String(fields.text) };
      }));
    },
    async close() {
      await page.close();
    },
  };
}

const launchOptions = (prefs: Record<string, unknown>, userDataDir: string | undefined) => ({
  ...(userDataDir !== undefined ? { userDataDir } : {}),
  browser: 'firefox' as const,
  protocol: 'webDriverBiDi' as const,
  executablePath: findFirefox(),
  headless: true,
  extraPrefsFirefox: { ...FIREFOX_PREFS, ...prefs },
  env: { ...process.env, ...FIREFOX_ENV },
  // No network events: nothing here reads them, and with them every evaluate() whose page code
  // fetched took ~45 ms longer (a 6 ms GET through the worker came back after 50 ms).
  networkEnabled: false,
});

let template: Promise<string | undefined> | undefined;
/**
 * A profile Firefox has started on once, and nothing else (no page was opened in it): Firefox
 * starts on a copy of it in about 1.05 s, on a new profile in about 2.2 s (measured here), and
 * the suite starts Firefox dozens of times. Made once for this machine's Firefox and prefs, in
 * the temporary folder, by whichever test process gets there first; undefined if it cannot be
 * made (each launch then makes a new profile, as before).
 */
function profileTemplate(): Promise<string | undefined> {
  template ??= (async () => {
    const executable = findFirefox();
    const key = createHash('sha256').update(JSON.stringify([executable, statSync(executable).mtimeMs, FIREFOX_PREFS, FIREFOX_ENV])).digest('hex').slice(0, 16);
    const dir = join(tmpdir(), `swbucket-firefox-profile-${key}`);
    const ready = (d: string) => existsSync(join(d, READY));
    if (ready(dir)) return dir;
    const making = mkdtempSync(`${dir}-making-`);
    try {
      const browser = await puppeteer.launch(launchOptions({}, making));
      await browser.close();
      writeFileSync(join(making, READY), '');
      renameSync(making, dir);
    } catch {
      // another process made it first, or it could not be made
      rmSync(making, { recursive: true, force: true });
    }
    return ready(dir) ? dir : undefined;
  })();
  return template;
}
const READY = 'swbucket-template-ready';

export async function launchFirefoxEngine(
  { evaluateTimeout, prefs = {}, profileDir }: { evaluateTimeout?: number; prefs?: Record<string, unknown>; profileDir?: string } = {},
): Promise<Engine> {
  // A profile of the test's, which puppeteer leaves in place on close; else a copy of the template, removed on close.
  let copy: string | undefined;
  if (profileDir === undefined) {
    const from = await profileTemplate();
    if (from) {
      copy = mkdtempSync(join(tmpdir(), 'swbucket-firefox-'));
      cpSync(from, copy, { recursive: true });
      rmSync(join(copy, READY));
    }
  }
  const forget = () => copy && rmSync(copy, { recursive: true, force: true });
  const browser = await puppeteer.launch(launchOptions(prefs, profileDir ?? copy)).catch((e: unknown) => {
    forget();
    throw e;
  });
  try {
    const version = (await browser.version()).replace(/^firefox\//i, 'Firefox ');
    // Firefox opens with one blank tab: the first page is that tab, later ones are new tabs.
    let blank: Page | undefined = (await browser.pages())[0];
    return {
      name: 'firefox',
      version,
      async newPage() {
        const page = blank ?? await browser.newPage();
        blank = undefined;
        return firefoxPage(page, evaluateTimeout);
      },
      async close() {
        await browser.close();
        forget();
      },
    };
  } catch (e) {
    await browser.close();
    forget();
    throw e;
  }
}
