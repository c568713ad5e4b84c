// Helpers for test/browser/engine-mount.test.ts, on the engine-neutral page (support/engines.ts):
// what a tab's top document is (the worker's frame page, or the console), polling that survives a
// navigation, history steps, and the stored-script probe.
import type { EnginePage } from './engines.ts';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Evaluates `fn(arg)` in the page until `ok` accepts its result, and returns that result. A page
 * that navigates meanwhile makes evaluate() fail now and then: those errors only mean "not yet".
 * Evaluates in a loop from Node rather than with waitForFunction, which some drivers run through
 * `new Function` in the page, refused by the frame page's Content-Security-Policy.
 */
export async function until<R, A = undefined>(
  page: EnginePage, fn: (arg: A) => R | Promise<R>, arg: A, ok: (r: R) => boolean, what: string, timeout = 20_000,
): Promise<R> {
  const deadline = Date.now() + timeout;
  let last: R | undefined;
  let error: unknown;
  for (;;) {
    try {
      last = await page.evaluate(fn, arg);
      error = undefined;
      if (ok(last)) return last;
    } catch (e) {
      error = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${timeout} ms; last seen ${JSON.stringify(last)}${error ? `; last error: ${(error as Error).message}` : ''}`);
    }
    await sleep(100);
  }
}

/** What a tab's top document is, read from the document itself. */
export interface TopDocument {
  href: string;
  readyState: DocumentReadyState;
  title: string;
  controlled: boolean;
  /** `src` of each iframe (resolved), in document order. */
  iframes: string[];
  /** Per iframe: true when the top document cannot read its document (another origin, or an opaque one). */
  iframeOpaque: boolean[];
  scripts: number;
  /** window.swbucket is set: the console's startService resolved. */
  started: boolean;
  /** The console's status line, or null when there is none. */
  status: string | null;
  /** PerformanceNavigationTiming.type of this document ('navigate', 'reload', 'back_forward'). */
  navType: string | null;
  /** startService's reload guard in this tab's sessionStorage (null: none). */
  guard: string | null;
  /** Milliseconds from this document's domInteractive to now. */
  sinceInteractive: number;
}

export function readTop(): TopDocument {
  const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
  const frames = [...document.querySelectorAll('iframe')];
  // A sandboxed document (an object shown at top level) throws on both.
  let guard: string | null = null;
  try {
    guard = sessionStorage.getItem('swbucket:reloaded-for-control');
  } catch {
    guard = null;
  }
  let controlled = false;
  try {
    controlled = Boolean(navigator.serviceWorker?.controller);
  } catch {
    controlled = false;
  }
  return {
    href: location.href,
    readyState: document.readyState,
    title: document.title,
    controlled,
    iframes: frames.map((f) => f.src),
    iframeOpaque: frames.map((f) => {
      try {
        return f.contentDocument === null;
      } catch {
        return true;
      }
    }),
    scripts: document.scripts.length,
    started: Boolean((window as { swbucket?: unknown }).swbucket),
    status: document.querySelector('[data-testid="service-status"]')?.textContent?.trim() ?? null,
    navType: nav?.type ?? null,
    guard,
    sinceInteractive: nav ? performance.now() - nav.domInteractive : -1,
  };
}

/** Waits until the tab's top document is at `href` and loaded, and returns what it is. */
export function topAt(page: EnginePage, href: string, extra: (t: TopDocument) => boolean = () => true, timeout = 20_000): Promise<TopDocument> {
  return until(page, readTop, undefined, (t) => t.href === href && t.readyState === 'complete' && extra(t), `the tab at ${href}`, timeout);
}

/** Steps through the tab's session history (history.go(delta)) without waiting; follow with topAt(). */
export async function historyGo(page: EnginePage, delta: number): Promise<void> {
  // Later, so that the driver's script returns before the document goes away.
  await page.evaluate((d: number) => {
    setTimeout(() => history.go(d), 20);
  }, delta);
}

/** Follows a link: an <a href> clicked in the tab's document (a navigation the document starts). */
export async function clickLink(page: EnginePage, href: string): Promise<void> {
  await page.evaluate((h: string) => {
    const a = document.createElement('a');
    a.href = h;
    a.textContent = 'open';
    document.body.append(a);
    setTimeout(() => a.click(), 20);
  }, href);
}

/**
 * Tries to run a script in the top document: an inline <script> appended to it. Says whether it
 * ran and, when the document's Content-Security-Policy refused it, the policy (from the
 * securitypolicyviolation event, so the policy the document really has, whatever its URL would
 * answer to a fetch()).
 */
export function scriptProbe(page: EnginePage): Promise<{ ran: boolean; policy: string | null; directive: string | null }> {
  return page.evaluate(() => new Promise<{ ran: boolean; policy: string | null; directive: string | null }>((resolve) => {
    const w = window as { __scriptProbeRan?: boolean };
    delete w.__scriptProbeRan;
    let violation: SecurityPolicyViolationEvent | null = null;
    document.addEventListener('securitypolicyviolation', (e) => (violation = e), { once: true });
    const s = document.createElement('script');
    s.textContent = 'window.__scriptProbeRan = true;';
    document.head.append(s);
    s.remove();
    setTimeout(() => {
      const v = violation as SecurityPolicyViolationEvent | null;
      resolve({ ran: w.__scriptProbeRan === true, policy: v ? v.originalPolicy : null, directive: v ? v.effectiveDirective : null });
    }, 200);
  }));
}

/** The last path segment of a mount URL's key, decoded: the frame page's title. */
export function lastSegment(url: string): string {
  const path = new URL(url).pathname;
  return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
}

// ---------------------------------------------------------------- stored scripts

/** The BroadcastChannel the stored script reports on, and the console page listens to. */
export const PROBE_CHANNEL = 'xss-probe';
/** What the stored document's title becomes when its script runs (never written as such in it). */
export const RAN_MARK = 'SCRIPT-RAN';

/**
 * What the stored documents run when they are allowed to: read the origin's IndexedDB, then report
 * it, every 100 ms (so that a listener set up after the document loaded still hears it) on the
 * site's BroadcastChannel, to the parent and top windows, and in the document's own title.
 */
const PAYLOAD = `(function () {
  var mark = ['SCRIPT', 'RAN'].join('-');
  function report(what) {
    var text = mark + '|' + self.origin + '|' + what;
    try { new BroadcastChannel('xss-probe').postMessage(text); } catch (e) {}
    try { parent.postMessage(text, '*'); } catch (e) {}
    try { top.postMessage(text, '*'); } catch (e) {}
    try { document.title = text; } catch (e) {}
  }
  function probe() {
    var p;
    try { p = indexedDB.databases().then(function (l) { return 'read:' + l.map(function (d) { return d.name; }).join(','); }); }
    catch (e) { p = Promise.resolve('denied:' + (e && e.name)); }
    p.then(report, function (e) { report('denied:' + (e && e.name)); });
  }
  probe();
  setInterval(probe, 100);
})();`;
export const XSS_HTML = `<!doctype html><html><head><title>untouched</title></head><body><p>hello</p><script>${PAYLOAD}</script></body></html>`;
export const XSS_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><title>untouched</title><rect width="40" height="40" fill="red"/><script>//<![CDATA[\n${PAYLOAD}\n//]]></script></svg>`;
