// The page mount in a real tab, in every engine (Chromium, Firefox, WebKitGTK ephemeral and on disk:
// support/engines.ts), from the built site's console page (window.swbucket: src/App.svelte):
// - <img src> of stored PNGs through the mount: public-read without a signature; private only
//   through a presigned URL made with the client and turned into a mount URL by service.mountUrl(),
//   and not once it expired (README, "Links").
// - a tab that opens an object gets the worker's frame page (docs/protocol.md, "The page mount"):
//   a document of the origin in which no script runs (its Content-Security-Policy, read from the
//   refusal it gives a script), titled with the key's last segment, whose one frame shows the
//   object (read by the driver: EnginePage.frames()) as a sandboxed, opaque document.
// - the WebKit issue this fixes (docs/browser.md, "Opening objects in a tab"): console → a (a link)
//   → b → reload → c → back, back, back to the console → forward → the console typed again, three
//   times in one tab: every document along the way is the worker's, and the console ends running.
// - stored XSS through the mount: HTML and SVG objects (public, presigned, the ifNotFound fallback)
//   whose script would report on the site's BroadcastChannel, to its parent and in its title:
//   nothing ever arrives, while the same script run in a document of the origin does report.
// - the worker's request log holds no signature, after header-signed, presigned and refused
//   requests, presigned images, and presigned objects opened in a tab (checked twice there).
// - startService on a page the worker does not control: in WebKit a frame navigated away from a
//   sandboxed object loads past the worker (the documented leftover), so the console loaded there
//   starts uncontrolled; startService has the worker claim it, without a reload. Chromium and
//   Firefox hand that navigation to the worker, so there the console is controlled from the start
//   (neither lets an engine-neutral test make an uncontrolled page: lifecycle.test.ts does it in
//   Chromium with a CDP hard reload; Firefox's WebDriver BiDi has no reload that ignores the cache).
import { describe, it, expect, beforeAll } from 'vitest';
import type { EnginePage, FrameContent } from './support/engines.ts';
import { useServicePage } from './support/fixture.ts';
import { makePng } from './support/media.ts';
import { loadImage } from './support/page.ts';
import { storedLog } from './support/log.ts';
import { presign, signHeaders } from '../support/sign.ts';
import {
  PROBE_CHANNEL, RAN_MARK, XSS_HTML, XSS_SVG, clickLink, historyGo, lastSegment, readTop, scriptProbe, sleep,
  topAt, until, type TopDocument,
} from './support/engine-mount-helpers.ts';
import type { SwGlobal } from './support/engine-data-helpers.ts';

const service = useServicePage();
const { name } = service;
const isWebKit = name === 'webkit' || name === 'webkit-disk';

/** The console, open for the whole file: it stores, signs, and listens on the probe channel. */
let home: EnginePage;
let origin: string;
/** Every signature this file sends or has made, right or wrong: none may reach the log. */
const signatures: string[] = [];

const PUB = 'mntpub';
const PRIV = 'mntpriv';
/** Text objects for the tab tests, key → body. */
const TEXTS: Record<string, string> = {
  'notes/a.txt': 'the text of a',
  'b.txt': 'the text of b, second',
  'deep/er/c d.txt': 'the text of c, with a space in its name',
};
const png = makePng(3, 2, (x, y) => (x === 0 && y === 0 ? [255, 0, 0] : [0, 0, 255]));

const mount = (bucket: string, key: string) => `${origin}/svc/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
const signatureOf = (url: string) => new URL(url).searchParams.get('Signature');
const future = () => Math.floor(Date.now() / 1000) + 600;

beforeAll(async () => {
  home = service.page;
  origin = new URL(await home.url()).origin;
  const failures = await home.evaluate(async (a: { texts: Record<string, string>; png: number[]; html: string; svg: string; pub: string; priv: string }) => {
    const { client } = (window as unknown as { swbucket: SwGlobal }).swbucket;
    const out: string[] = [];
    const step = (what: string, p: Promise<unknown>) => p.catch((e: unknown) => out.push(`${what}: ${(e as Error).message}`));
    await step('public bucket', client.createBucket(a.pub, { acl: 'public-read' }));
    await step('private bucket', client.createBucket(a.priv));
    for (const bucket of [a.pub, a.priv]) {
      await step(`${bucket} png`, client.putObject(bucket, 'pics/dot.png', new Uint8Array(a.png), { contentType: 'image/png' }));
      await step(`${bucket} html`, client.putObject(bucket, 'evil.html', a.html, { contentType: 'text/html' }));
      await step(`${bucket} svg`, client.putObject(bucket, 'evil.svg', a.svg, { contentType: 'image/svg+xml' }));
    }
    for (const [key, body] of Object.entries(a.texts)) await step(key, client.putObject(a.pub, key, body, { contentType: 'text/plain' }));
    return out;
  }, { texts: TEXTS, png: [...png], html: XSS_HTML, svg: XSS_SVG, pub: PUB, priv: PRIV });
  expect(failures).toEqual([]);
});

// ---------------------------------------------------------------- images

describe('<img src> of stored objects through the mount', () => {
  /** client.presign() (on the bucket host) and service.mountUrl() of it, in the console page. */
  function presignedMount(bucket: string, key: string, expiresIn: number) {
    return home.evaluate(async (a: { bucket: string; key: string; expiresIn: number }) => {
      const s = (window as unknown as { swbucket: SwGlobal }).swbucket;
      const presigned = await s.client.presign(a.bucket, a.key, { expiresIn: a.expiresIn });
      return { presigned, mounted: s.mountUrl(presigned) };
    }, { bucket, key, expiresIn });
  }

  it('a public-read PNG at {origin}/svc/{bucket}/{key} loads, unsigned', async () => {
    expect(await loadImage(home, `${origin}/svc/${PUB}/pics/dot.png`)).toEqual({ loaded: true, width: 3, height: 2, pixel: [255, 0, 0, 255] });
    // The same path relative to the page, as an app writes it.
    expect((await loadImage(home, `/svc/${PUB}/pics/dot.png`)).loaded).toBe(true);
  });

  it('a private PNG does not load unsigned; it does through mountUrl(await client.presign(…)); it does not once expired', async () => {
    const unsigned = await loadImage(home, `${origin}/svc/${PRIV}/pics/dot.png`);
    expect(unsigned.loaded).toBe(false);
    expect(unsigned.width).toBe(0);

    const ok = await presignedMount(PRIV, 'pics/dot.png', 600);
    signatures.push(signatureOf(ok.presigned)!);
    expect(ok.presigned.startsWith(`http://${PRIV}.svc.localhost/pics/dot.png?`), ok.presigned).toBe(true);
    expect(ok.mounted).toBe(`${origin}/svc/${PRIV}/pics/dot.png${new URL(ok.presigned).search}`);
    expect(await loadImage(home, ok.mounted)).toEqual({ loaded: true, width: 3, height: 2, pixel: [255, 0, 0, 255] });

    const expired = await presignedMount(PRIV, 'pics/dot.png', -60);
    signatures.push(signatureOf(expired.presigned)!);
    const r = await loadImage(home, expired.mounted);
    expect(r.loaded, expired.mounted).toBe(false);
    expect(r.width).toBe(0);

    // A signature made for another key does not open this one.
    const other = await presignedMount(PRIV, 'pics/other.png', 600);
    signatures.push(signatureOf(other.presigned)!);
    expect((await loadImage(home, other.mounted.replace('/pics/other.png', '/pics/dot.png'))).loaded).toBe(false);
  });
});

// ---------------------------------------------------------------- a tab that opens an object

/**
 * Waits for the tab to show the frame page of `url` and checks it is the worker's: titled with the
 * key's last segment, one iframe of the same URL whose document the page cannot read (sandboxed,
 * opaque), no script, controlled, and its frame showing `text` (read by the driver).
 */
async function expectFramePage(page: EnginePage, url: string, text: string, what: string): Promise<TopDocument> {
  const top = await topAt(page, url);
  expect(top.title, `${what}: the tab shows the frame page (its title is the key's last segment), not ${JSON.stringify(top)}`).toBe(lastSegment(url));
  expect(top.iframes, what).toEqual([url]);
  expect(top.scripts, what).toBe(0);
  expect(top.controlled, `${what}: the frame page is controlled by the worker`).toBe(true);
  // The frame's document is the object, in an opaque origin: had the frame's request gone to the
  // network, it would hold the site's own page, which the top document could read.
  const frames = await pollFrames(page, what, (f) => f.length === 1 && f[0]!.url === url && f[0]!.text === text);
  expect(frames, what).toEqual([{ url, text }]);
  expect(top.iframeOpaque, what).toEqual([true]);
  return top;
}

/**
 * The tab's frames once they have their documents (not the initial about:blank) and `ok` accepts
 * them; after 10 s, what they are then (for the caller's assertion), or an error when none loaded.
 */
async function pollFrames(page: EnginePage, what: string, ok: (frames: FrameContent[]) => boolean = () => true): Promise<FrameContent[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const frames = await page.frames().catch(() => null);
    const loaded = frames !== null && frames.length > 0 && frames.every((f) => f.url !== 'about:blank');
    if (loaded && ok(frames)) return frames;
    if (Date.now() > deadline) {
      if (loaded) return frames;
      throw new Error(`${what}: the frame never loaded: ${JSON.stringify(frames)}`);
    }
    await sleep(100);
  }
}

/** Waits for the console at `url` to have started, and checks it is controlled, running, not reloaded. */
async function expectConsole(page: EnginePage, url: string, what: string): Promise<TopDocument> {
  // The first look, as soon as the document is there: an uncontrolled page stays so for at least
  // 500 ms after startService began (it waits that long for a claim before asking for one).
  const first = await topAt(page, url);
  if (first.navType === 'navigate' && first.sinceInteractive < 450) {
    expect(first.controlled, `${what}: controlled from the start (seen ${Math.round(first.sinceInteractive)} ms after domInteractive)`).toBe(true);
  }
  const top = await topAt(page, url, (t) => t.started || (t.status ?? '').startsWith('Not running'));
  expect(top.status, what).toMatch(/^Running/);
  expect(top.started, what).toBe(true);
  expect(top.controlled, what).toBe(true);
  expect(top.iframes, what).toEqual([]);
  expect(top.navType, `${what}: startService did not reload`).not.toBe('reload');
  expect(top.guard, what).toBeNull();
  return top;
}

describe('opening objects in a tab', () => {
  it('the tab gets the frame page: no script runs in it (CSP default-src \'none\'), its title is the key\'s last segment, its frame shows the object', async () => {
    const tab = await service.engine.newPage();
    try {
      for (const key of ['notes/a.txt', 'deep/er/c d.txt']) {
        const url = mount(PUB, key);
        await tab.goto(url);
        await expectFramePage(tab, url, TEXTS[key]!, key);
        const probe = await scriptProbe(tab);
        expect(probe.ran, `${key}: a script in the frame page`).toBe(false);
        expect(probe.policy, key).toMatch(/^default-src 'none';/);
        expect(probe.policy, key).not.toMatch(/script-src/);
        expect(probe.directive, key).toMatch(/^script-src/);
        // A fetch() of the same URL (from the console: the frame page's policy refuses any) is not
        // a tab's navigation: it gets the object, sandboxed.
        const fetched = await home.evaluate(async (u: string) => {
          const r = await fetch(u);
          return { status: r.status, csp: r.headers.get('content-security-policy'), nosniff: r.headers.get('x-content-type-options'), text: await r.text() };
        }, url);
        expect(fetched, key).toEqual({ status: 200, csp: 'sandbox', nosniff: 'nosniff', text: TEXTS[key] });
      }
      // The control: the same probe does run a script in the console page.
      expect((await scriptProbe(home)).ran).toBe(true);
    } finally {
      await tab.close();
    }
  });
});

// ---------------------------------------------------------------- the scenario

describe('a tab goes from the console to objects and back (the WebKit issue)', () => {
  const ROUNDS = 3;
  it(`console → a (a link) → b → reload → c → back ×3 to the console → forward → / typed: every document the worker's, ${ROUNDS} times in one tab`, async () => {
    const [a, b, c] = Object.keys(TEXTS).map((k) => ({ url: mount(PUB, k), text: TEXTS[k]! }));
    const tab = await service.engine.newPage();
    const consoleUrl = `${origin}/`;
    try {
      await tab.goto(consoleUrl);
      await expectConsole(tab, consoleUrl, 'the console');
      for (let round = 1; round <= ROUNDS; round++) {
        const r = `round ${round}:`;
        await clickLink(tab, a!.url);
        await expectFramePage(tab, a!.url, a!.text, `${r} a, by a link in the console`);
        await tab.goto(b!.url);
        await expectFramePage(tab, b!.url, b!.text, `${r} b, typed`);
        await tab.reload();
        await expectFramePage(tab, b!.url, b!.text, `${r} b, reloaded`);
        await tab.goto(c!.url);
        await expectFramePage(tab, c!.url, c!.text, `${r} c, typed`);
        await historyGo(tab, -1);
        await expectFramePage(tab, b!.url, b!.text, `${r} back to b`);
        await historyGo(tab, -1);
        await expectFramePage(tab, a!.url, a!.text, `${r} back to a`);
        await historyGo(tab, -1);
        await expectConsole(tab, consoleUrl, `${r} back to the console`);
        await historyGo(tab, 1);
        await expectFramePage(tab, a!.url, a!.text, `${r} forward to a`);
        await tab.goto(consoleUrl);
        await expectConsole(tab, consoleUrl, `${r} the console, typed`);
      }
    } finally {
      await tab.close();
    }
  }, 90_000);
});

// ---------------------------------------------------------------- stored XSS

describe('stored XSS through the mount', () => {
  /** Starts listening on the probe channel in the console page; what arrived is read with heard(). */
  async function listen() {
    await home.evaluate((channel: string) => {
      const w = window as unknown as { __probe?: { bc: BroadcastChannel; heard: string[] } };
      w.__probe?.bc.close();
      const bc = new BroadcastChannel(channel);
      const heard: string[] = [];
      bc.onmessage = (e) => heard.push(String(e.data));
      w.__probe = { bc, heard };
    }, PROBE_CHANNEL);
  }
  const heard = () => home.evaluate(() => (window as unknown as { __probe: { heard: string[] } }).__probe.heard.slice());

  beforeAll(listen);

  it('the probe can tell: its script, run in a document of the origin, reports the origin\'s databases on the channel', async () => {
    // The stored bodies as documents of the origin itself (a srcdoc frame, a blob: URL frame),
    // where nothing sandboxes them: what the mount must never let happen.
    await home.evaluate((a: { html: string; svg: string }) => {
      const f1 = document.createElement('iframe');
      f1.srcdoc = a.html;
      f1.className = 'probe-control';
      const f2 = document.createElement('iframe');
      f2.src = URL.createObjectURL(new Blob([a.svg], { type: 'image/svg+xml' }));
      f2.className = 'probe-control';
      document.body.append(f1, f2);
    }, { html: XSS_HTML, svg: XSS_SVG });
    const got = await until(home, () => (window as unknown as { __probe: { heard: string[] } }).__probe.heard.slice(), undefined,
      (h) => h.length >= 4, 'the control reports');
    expect(got[0]).toBe(`${RAN_MARK}|${origin}|${got[0]!.split('|')[2]}`);
    expect(got.some((m) => /\|read:.*\bswbucket\b/.test(m)), got.join('\n')).toBe(true);
    await home.evaluate(() => {
      document.querySelectorAll('.probe-control').forEach((f) => f.remove());
    });
    await sleep(300);
    await listen();
  });

  const cases: [string, () => string, string][] = [
    ['an HTML object of a public-read bucket', () => mount(PUB, 'evil.html'), 'evil.html'],
    ['an SVG object of a public-read bucket', () => mount(PUB, 'evil.svg'), 'evil.svg'],
    ['a private HTML object through a presigned URL turned into a mount URL', () => presigned(`http://${PRIV}.svc.localhost/evil.html`), 'evil.html'],
    ['a private SVG object through a presigned URL turned into a mount URL', () => presigned(`http://${PRIV}.svc.localhost/evil.svg`), 'evil.svg'],
    ['the ifNotFound fallback (a 404 with the HTML object)', () => `${mount(PUB, 'missing.html')}?ifNotFound=evil.html`, 'evil.html'],
  ];
  /** Presigned in Node (the test's own signer), on the mount. */
  function presigned(url: string): string {
    const p = presign('GET', url, future());
    signatures.push(signatureOf(p)!);
    const u = new URL(p);
    return `${origin}/svc/${u.hostname.split('.')[0]}${u.pathname}${u.search}`;
  }

  for (const [what, url, stored] of cases) {
    it(`${what}: the tab's document runs no script, the stored script reports nothing`, async () => {
      const tab = await service.engine.newPage();
      try {
        const u = url();
        await tab.goto(u);
        // Messages the frame might post to the tab's window (it would keep posting, so listening
        // from now on is enough).
        await tab.evaluate(() => {
          const w = window as unknown as { __messages?: string[] };
          w.__messages = [];
          addEventListener('message', (e) => w.__messages!.push(String(e.data)));
        });
        const top = await topAt(tab, u);
        expect(top.title, JSON.stringify(top)).toBe(lastSegment(u));
        expect(top.iframes).toEqual([u]);
        expect(top.scripts).toBe(0);
        expect(top.iframeOpaque).toEqual([true]);
        const probe = await scriptProbe(tab);
        expect(probe.ran).toBe(false);
        expect(probe.policy).toMatch(/^default-src 'none';/);
        // Time for the stored script to report, were it running (it reports every 100 ms).
        await sleep(1000);
        const frames = await pollFrames(tab, what);
        expect(frames.map((f) => f.url)).toEqual([u]);
        // The stored document is there, its title untouched.
        expect(frames[0]!.text.startsWith('untouched'), `${stored}: ${frames[0]!.text.slice(0, 80)}`).toBe(true);
        expect(frames[0]!.text).not.toContain(RAN_MARK);
        expect(await tab.evaluate(() => (window as unknown as { __messages: string[] }).__messages)).toEqual([]);
        // The channel does reach the console from this tab: a message from the frame page's own
        // origin arrives, the stored script's (from an opaque origin) never does.
        await tab.evaluate((channel: string) => {
          const bc = new BroadcastChannel(channel);
          bc.postMessage('from the tab');
          bc.close();
        }, PROBE_CHANNEL);
        const got = await until(home, () => (window as unknown as { __probe: { heard: string[] } }).__probe.heard.slice(), undefined,
          (h) => h.includes('from the tab'), 'the tab\'s own message');
        expect(got.filter((m) => m !== 'from the tab')).toEqual([]);
      } finally {
        await tab.close();
        await listen();
      }
    });
  }
});

// ---------------------------------------------------------------- startService on an uncontrolled page

describe('startService on a page the worker does not control', () => {
  it(isWebKit
    ? 'a frame navigated from a sandboxed object loads the console past the worker (WebKit); startService has it claimed, without a reload'
    : 'a frame navigated from a sandboxed object loads the console through the worker; startService starts there without a reload', async () => {
    const tab = await service.engine.newPage();
    try {
      const object = mount(PUB, 'notes/a.txt');
      await tab.goto(object);
      await expectFramePage(tab, object, TEXTS['notes/a.txt']!, 'the object');
      const target = `${origin}/?in-a-frame`;
      // The frame page (the driver's script, not a stored one) sends its frame, which holds the
      // sandboxed object, to the console: a navigation that leaves a sandboxed document.
      const early = await tab.evaluate(async (target: string) => {
        const f = document.querySelector('iframe')!;
        const loaded = new Promise((resolve) => (f.onload = resolve));
        f.src = target;
        await loaded;
        const w = f.contentWindow as Window & typeof globalThis;
        const nav = w.performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
        (w as unknown as { __sameDocument?: boolean }).__sameDocument = true;
        return { href: w.location.href, controlled: Boolean(w.navigator.serviceWorker.controller), sinceInteractive: w.performance.now() - nav.domInteractive };
      }, target);
      expect(early.href).toBe(target);
      if (early.sinceInteractive < 450) {
        // Seen before any claim could have come (startService waits 500 ms for one before asking).
        expect(early.controlled, `the console in the frame was ${early.controlled ? '' : 'not '}controlled at its start`).toBe(!isWebKit);
      }
      const state = await until(tab, () => {
        const f = document.querySelector('iframe')!;
        const w = f.contentWindow as Window & typeof globalThis & { swbucket?: unknown; __sameDocument?: boolean };
        const nav = w.performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
        return {
          started: Boolean(w.swbucket),
          status: w.document.querySelector('[data-testid="service-status"]')?.textContent?.trim() ?? null,
          controlled: Boolean(w.navigator.serviceWorker.controller),
          navType: nav.type,
          sameDocument: w.__sameDocument === true,
          guard: w.sessionStorage.getItem('swbucket:reloaded-for-control'),
        };
      }, undefined, (s) => s.started || (s.status ?? '').startsWith('Not running'), 'the console in the frame starts');
      expect(state).toEqual({ started: true, status: expect.stringMatching(/^Running/), controlled: true, navType: 'navigate', sameDocument: true, guard: null });
      // And it works: the console in the frame reads the store through the worker.
      const listed = await tab.evaluate(async (bucket: string) => {
        const w = document.querySelector('iframe')!.contentWindow as unknown as { swbucket: SwGlobal };
        return (await w.swbucket.client.listObjects(bucket)).objects.map((o) => o.key).sort();
      }, PUB);
      expect(listed).toContain('notes/a.txt');
      // Nothing reloads later either.
      await sleep(1500);
      expect(await tab.evaluate(() => (document.querySelector('iframe')!.contentWindow as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
      // The tab itself stayed the worker's frame page.
      const top = await tab.evaluate(readTop);
      expect(top).toMatchObject({ href: object, title: 'a.txt', controlled: true, scripts: 0 });
    } finally {
      await tab.close();
    }
  });

  it('startService on a controlled page resolves at once, sets window.swbucket, and a second console tab does too, without a reload', async () => {
    for (let i = 0; i < 2; i++) {
      const tab = await service.engine.newPage();
      try {
        const url = `${origin}/?tab=${i}`;
        await tab.goto(url);
        await expectConsole(tab, url, `console tab ${i}`);
        await sleep(500);
        expect((await tab.evaluate(readTop)).navType).toBe('navigate');
      } finally {
        await tab.close();
      }
    }
    expect((await home.evaluate(readTop)).started).toBe(true);
  });
});

// ---------------------------------------------------------------- the request log

describe("the worker's request log never holds a signature", () => {
  interface Sent { status: number; id: string }
  /** fetch() from the console page, signed in Node unless `sign` is false. */
  async function send(url: string, o: { sign?: boolean; creds?: { accessKeyId: string; secret: string } } = {}): Promise<Sent> {
    const headers = new Headers();
    if (o.sign !== false) {
      signHeaders('GET', url, headers, o.creds);
      signatures.push(headers.get('authorization')!.split(':')[1]!);
    }
    return home.evaluate(async (a: { url: string; headers: [string, string][] }) => {
      const r = await fetch(a.url, { headers: a.headers });
      await r.arrayBuffer();
      return { status: r.status, id: r.headers.get('x-svc-request-id') ?? '' };
    }, { url, headers: [...headers] });
  }

  it('after header-signed, presigned and refused requests, presigned images and tabs: no signature stored, Authorization "SVC key:…", Signature=…, the claimed key on refusals', async () => {
    const B = `http://${PRIV}.svc.localhost`;
    const M = `${origin}/svc/${PRIV}`;
    const sent: { r: Sent; key: string | undefined; what: string; status: number }[] = [];
    const track = async (what: string, p: Promise<Sent>, key: string | undefined, status: number) => sent.push({ r: await p, key, what, status });
    const presigned = (url: string, expires = future()) => {
      const p = presign('GET', url, expires);
      signatures.push(signatureOf(p)!);
      return p;
    };

    await track('signed GET', send(`${B}/evil.html`), 'svcadmin', 200);
    await track('signed GET on the mount', send(`${M}/evil.html`), 'svcadmin', 200);
    await track('presigned GET', send(presigned(`${B}/evil.svg`), { sign: false }), 'svcadmin', 200);
    await track('presigned GET on the mount', send(presigned(`${M}/evil.svg`), { sign: false }), 'svcadmin', 200);
    await track('a wrong signature', send(`${B}/evil.html`, { creds: { accessKeyId: 'svcadmin', secret: 'not-the-secret' } }), 'svcadmin', 403);
    await track('an unknown key', send(`${B}/evil.html`, { creds: { accessKeyId: 'mallory', secret: 'mallory-secret' } }), 'mallory', 403);
    await track('an expired presigned URL', send(presigned(`${B}/evil.html`, Math.floor(Date.now() / 1000) - 60), { sign: false }), 'svcadmin', 403);
    await track('presigned + ifNotFound', send(presigned(`${B}/gone.html`) + '&ifNotFound=evil.html', { sign: false }), 'svcadmin', 403);
    await track('anonymous', send(`${B}/evil.html`, { sign: false }), undefined, 403);

    // The page's own client, signing with WebCrypto: its signatures are caught on their way out.
    const fromClient = await home.evaluate(async (bucket: string) => {
      const s = (window as unknown as { swbucket: SwGlobal }).swbucket;
      const seen: string[] = [];
      const client = s.createClient({
        endpoint: `http://${s.endpoint}`, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret',
        fetch: (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
          const auth = new Headers(init?.headers).get('authorization');
          if (auth) seen.push(auth.split(':')[1]!);
          return fetch(input, init);
        },
      });
      await client.putObject(bucket, 'client.txt', 'from the client', { contentType: 'text/plain' });
      await (await client.getObject(bucket, 'client.txt')).response.text();
      return seen;
    }, PRIV);
    expect(fromClient.length).toBeGreaterThanOrEqual(2);
    signatures.push(...fromClient);

    // A presigned object opened in a tab: the frame page and its frame, two requests, both checked.
    const tabUrl = presigned(`${M}/evil.html`);
    const tab = await service.engine.newPage();
    try {
      await tab.goto(tabUrl);
      const frames = await pollFrames(tab, 'the presigned tab');
      expect(frames[0]!.text.startsWith('untouched')).toBe(true);
    } finally {
      await tab.close();
    }

    for (const s of sent) expect(s.r.status, s.what).toBe(s.status);
    // The log is written after each answer: wait for every entry.
    let log = await storedLog(home);
    const tabEntries = () => log.filter((e) => e.url.startsWith(`${M}/evil.html?`) && e.url.includes('Signature=') && e.status === 200);
    for (let i = 0; i < 100 && !(sent.every((s) => log.some((e) => e.requestId === s.r.id)) && tabEntries().length >= 2); i++) {
      await sleep(100);
      log = await storedLog(home);
    }
    for (const s of sent) {
      const e = log.find((x) => x.requestId === s.r.id);
      expect(e, s.what).toBeDefined();
      expect(e!.status, s.what).toBe(s.status);
      expect(e!.accessKeyId, s.what).toBe(s.key);
      const auth = e!.requestHeaders.find(([n]) => n.toLowerCase() === 'authorization')?.[1];
      if (s.key !== undefined && !s.what.includes('presigned')) expect(auth, s.what).toBe(`SVC ${s.key}:…`);
      if (e!.url.includes('Signature=')) expect(e!.url, s.what).toMatch(/Signature=…(&|$)/);
    }
    expect(tabEntries().length, 'the presigned tab: the frame page\'s request and its frame\'s').toBeGreaterThanOrEqual(2);
    for (const e of tabEntries()) expect(e.url).toMatch(/Signature=…(&|$)/);
    // Nothing in the whole log: the images, the tabs and the navigations of the tests above included.
    expect(signatures.length).toBeGreaterThanOrEqual(15);
    const everything = JSON.stringify(log);
    for (const sig of signatures) {
      for (const form of [sig, encodeURIComponent(sig), sig.slice(0, 12), encodeURIComponent(sig).slice(0, 12)]) {
        expect(everything.includes(form), `the log holds ${form}`).toBe(false);
      }
    }
  });
});
