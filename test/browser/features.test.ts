// Browser features in real Chromium against the built worker: MD5 in the worker (hash-wasm, and
// spark-md5 where a Content-Security-Policy refuses WebAssembly), large and multipart objects read
// whole and by range, and what needs the page-origin mount: downloads, <img>, <video>.
import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import type { Browser, BrowserContext, Page, Worker } from 'playwright-core';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { launchChromium } from './support/chromium.ts';
import { loadImage, openServicePage, resetService, sendSteps } from './support/page.ts';
import { startStaticServer, type StaticServer } from './support/static-server.ts';
import { makeMp4, makePng } from './support/media.ts';
import { presign, signHeaders } from '../support/sign.ts';
import type { Step } from '../cases/types.ts';
import { storedLog } from './support/log.ts';
import type { LoggedEntry } from '../../sw/log/ring.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

// ------------------------------------------------------------------ helpers

/** Deterministic bytes (xorshift32), the same in Node and in the page (its source is sent there). */
function prngBytes(seed: number, size: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    if ((i & 3) === 0) {
      x ^= x << 13;
      x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
    }
    out[i] = (x >>> ((i & 3) * 8)) & 255;
  }
  return out;
}

const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const future = () => Math.floor(Date.now() / 1000) + 600;

/** A body made in the page: a slice of prngBytes(seed, size), or bytes sent as base64, or text. */
type PageBody =
  | { prng: { seed: number; size: number; start?: number; end?: number } }
  | { base64: string }
  | { text: string };

interface PageResult {
  status: number;
  headers: Record<string, string>;
  size: number;
  sha256: string;
  text: string;
}

/**
 * fetch() from inside the page, so the worker answers. Signed here in Node (test/support/sign.ts)
 * unless `sign` is false; bodies go as type-less Blobs so the browser adds no Content-Type.
 */
async function pageFetch(
  page: Page,
  method: string,
  url: string,
  o: { headers?: Record<string, string>; body?: PageBody; sign?: boolean } = {},
): Promise<PageResult> {
  const headers = new Headers(o.headers ?? {});
  if (o.sign !== false) signHeaders(method, url, headers);
  return page.evaluate(async ({ method, url, headers, body, prngSource }) => {
    let data: BlobPart | undefined;
    if (body && 'prng' in body) {
      const gen = new Function(`return (${prngSource})`)() as (seed: number, size: number) => Uint8Array<ArrayBuffer>;
      const all = gen(body.prng.seed, body.prng.size);
      data = all.subarray(body.prng.start ?? 0, body.prng.end ?? all.length);
    } else if (body && 'base64' in body) {
      data = Uint8Array.from(atob(body.base64), (c) => c.charCodeAt(0));
    } else if (body && 'text' in body) {
      data = body.text;
    }
    const init: RequestInit = { method, headers };
    if (data !== undefined) init.body = new Blob([data]);
    const r = await fetch(url, init);
    const bytes = method === 'HEAD' ? new Uint8Array(0) : new Uint8Array(await (await r.blob()).arrayBuffer());
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
    return {
      status: r.status,
      headers: Object.fromEntries(r.headers),
      size: bytes.length,
      sha256: Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join(''),
      text: bytes.length <= 64 * 1024 ? new TextDecoder().decode(bytes) : '',
    };
  }, { method, url, headers: [...headers], body: o.body, prngSource: prngBytes.toString() });
}

const header = (pairs: [string, string][], name: string) => pairs.find(([n]) => n.toLowerCase() === name)?.[1];

// ------------------------------------------------------------------ MD5 engine

describe('MD5 in the worker', () => {
  let server: StaticServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startStaticServer();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const sizes = [0, 1, MiB + 3];
  /** ASCII bodies (one byte per character), so the page's string equals these bytes. */
  const bodies = sizes.map((n, i) => Array.from(prngBytes(100 + i, n), (b) => String.fromCharCode(97 + (b % 26))).join(''));

  /** Wraps WebAssembly.compile/instantiate in the worker so the test can see what hash-wasm got. */
  async function instrument(sw: Worker): Promise<string> {
    return sw.evaluate(async () => {
      const g = self as unknown as { __wasmCalls: string[] };
      // A probe first, with the real compile: is WebAssembly allowed in this worker at all?
      const probe = await WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])).then(
        () => 'allowed',
        (e: unknown) => `refused: ${String(e)}`,
      );
      g.__wasmCalls = [];
      const wrap = <A extends unknown[], R>(name: string, f: (...a: A) => Promise<R>) => (...a: A): Promise<R> => {
        let p: Promise<R>;
        try {
          p = f(...a);
        } catch (e) {
          g.__wasmCalls.push(`${name} threw`);
          throw e;
        }
        p.then(() => g.__wasmCalls.push(`${name} ok`), () => g.__wasmCalls.push(`${name} refused`));
        return p;
      };
      const W = WebAssembly as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
      W.compile = wrap('compile', W.compile!.bind(WebAssembly));
      W.instantiate = wrap('instantiate', W.instantiate!.bind(WebAssembly));
      return probe;
    });
  }

  async function putAll(context: BrowserContext, page: Page) {
    const sw = context.serviceWorkers()[0];
    expect(sw, 'the page has a service worker').toBeDefined();
    const probe = await instrument(sw!);
    const steps: Step[] = [
      { method: 'PUT', url: 'http://hashing.svc.localhost/', expect: { status: 200 } },
      ...bodies.map((body, i): Step => ({ method: 'PUT', url: `http://hashing.svc.localhost/size-${sizes[i]}`, body, expect: { status: 200 } })),
      // Content-MD5 is checked with the same engine: right (base64) passes, wrong is BadDigest.
      {
        method: 'PUT', url: 'http://hashing.svc.localhost/checked', body: bodies[2]!,
        headers: { 'content-md5': createHash('md5').update(bodies[2]!).digest('base64') }, expect: { status: 200 },
      },
      {
        method: 'PUT', url: 'http://hashing.svc.localhost/bad', body: bodies[2]!,
        headers: { 'content-md5': md5(bodies[1]!) }, expect: { status: 400 },
      },
      { method: 'GET', url: `http://hashing.svc.localhost/size-${MiB + 3}`, expect: { status: 200 } },
    ];
    const results = await sendSteps(page, steps);
    const calls = await sw!.evaluate(() => (self as unknown as { __wasmCalls: string[] }).__wasmCalls);
    return { probe, results, calls };
  }

  function expectEtags(results: Awaited<ReturnType<typeof sendSteps>>) {
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 400, 200]);
    sizes.forEach((n, i) => expect(results[i + 1]!.headers.etag, `ETag of ${n} bytes`).toBe(`"${md5(bodies[i]!)}"`));
    expect(results[4]!.headers.etag).toBe(`"${md5(bodies[2]!)}"`);
    expect(results[5]!.text).toContain('<Code>BadDigest</Code>');
    expect(results[6]!.text === bodies[2], 'the 1 MiB + 3 object reads back unchanged').toBe(true);
  }

  it("falls back to spark-md5 when the worker's CSP refuses WebAssembly, with the same ETags", async () => {
    server.headers.set('/sw.js', { 'content-security-policy': "script-src 'self'" });
    const { context, page } = await openServicePage(browser, server.url);
    try {
      const { probe, results, calls } = await putAll(context, page);
      // The CSP reached the worker: WebAssembly is refused there.
      expect(probe).toMatch(/^refused: CompileError/);
      expectEtags(results);
      // hash-wasm tried and was refused, and nothing was instantiated: the digests came from spark-md5.
      expect(calls).toContain('compile refused');
      expect(calls).not.toContain('compile ok');
      expect(calls).not.toContain('instantiate ok');
    } finally {
      server.headers.delete('/sw.js');
      await context.close();
    }
  });

  it('uses hash-wasm where WebAssembly is allowed, with the same ETags', async () => {
    server.headers.delete('/sw.js');
    const { context, page } = await openServicePage(browser, server.url);
    try {
      const { probe, results, calls } = await putAll(context, page);
      expect(probe).toBe("allowed");
      expectEtags(results);
      expect(calls).toContain('compile ok');
      expect(calls).toContain('instantiate ok');
      expect(calls).not.toContain('compile refused');
    } finally {
      await context.close();
    }
  });
});

// ------------------------------------------------------------------ the rest share one page

describe('with the page of the built site', () => {
  let browser: Browser;
  let page: Page;
  let origin: string;

  beforeAll(async () => {
    browser = await launchChromium();
    ({ page } = await openServicePage(browser, inject('baseURL')));
    origin = new URL(page.url()).origin;
    await resetService(page);
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function createBucket(name: string, acl: 'private' | 'public-read' = 'private') {
    const r = await pageFetch(page, 'PUT', `http://${name}.svc.localhost/`, { headers: { 'x-svc-acl': acl } });
    expect(r.status, r.text).toBe(200);
  }

  async function putBytes(bucket: string, key: string, data: Uint8Array, contentType: string) {
    const r = await pageFetch(page, 'PUT', `http://${bucket}.svc.localhost/${key}`, {
      headers: { 'content-type': contentType },
      body: { base64: Buffer.from(data).toString('base64') },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.etag).toBe(`"${md5(data)}"`);
  }

  // ---------------------------------------------------------------- large and multipart objects

  describe('large objects stream from their Blobs; ranges slice', () => {
    const SIZE = 32 * MiB;
    const SEED = 7;
    let data: Uint8Array;

    beforeAll(() => {
      data = prngBytes(SEED, SIZE);
    });

    it('a 32 MiB object: PUT, then GET whole and by ranges (bucket host and mount)', async () => {
      await createBucket('large');
      const put = await pageFetch(page, 'PUT', 'http://large.svc.localhost/blob32', { body: { prng: { seed: SEED, size: SIZE } } });
      expect(put.status, put.text).toBe(200);
      expect(put.headers.etag).toBe(`"${md5(data)}"`);

      const whole = await pageFetch(page, 'GET', 'http://large.svc.localhost/blob32');
      expect(whole.status).toBe(200);
      expect(whole.headers['content-length']).toBe(String(SIZE));
      expect(whole.headers['accept-ranges']).toBe('bytes');
      expect(whole.size).toBe(SIZE);
      expect(whole.sha256).toBe(sha256(data));

      const ranges: [string, number, number][] = [
        ['bytes=0-0', 0, 0],
        ['bytes=16777215-16777216', 16 * MiB - 1, 16 * MiB],
        ['bytes=1000-2000000', 1000, 2_000_000],
        [`bytes=${SIZE - 432}-`, SIZE - 432, SIZE - 1],
        ['bytes=-1000', SIZE - 1000, SIZE - 1],
        [`bytes=${SIZE - 1}-99999999999`, SIZE - 1, SIZE - 1],
        [`bytes=5-${SIZE + 5}`, 5, SIZE - 1],
      ];
      for (const [range, start, end] of ranges) {
        const r = await pageFetch(page, 'GET', 'http://large.svc.localhost/blob32', { headers: { range } });
        expect(r.status, range).toBe(206);
        expect(r.headers['content-range'], range).toBe(`bytes ${start}-${end}/${SIZE}`);
        expect(r.headers['content-length'], range).toBe(String(end - start + 1));
        expect(r.size, range).toBe(end - start + 1);
        expect(r.sha256, range).toBe(sha256(data.subarray(start, end + 1)));
      }

      // The same object through the page-origin mount, signed for /large/blob32.
      const mounted = await pageFetch(page, 'GET', `${origin}/svc/large/blob32`, { headers: { range: 'bytes=31000000-31999999' } });
      expect(mounted.status).toBe(206);
      expect(mounted.sha256).toBe(sha256(data.subarray(31_000_000, 32_000_000)));
      const mountedWhole = await pageFetch(page, 'GET', `${origin}/svc/large/blob32`);
      expect(mountedWhole.status).toBe(200);
      expect(mountedWhole.sha256).toBe(sha256(data));
    });

    it('a multipart object of 3 parts: ETag, whole read, and ranges across part boundaries', async () => {
      await createBucket('composed');
      const sizes = [3 * MiB + 1, 16 * KiB, 777];
      const total = sizes.reduce((a, b) => a + b, 0);
      const seed = 11;
      const all = prngBytes(seed, total);
      const url = 'http://composed.svc.localhost/parts/joined.bin';

      const init = await pageFetch(page, 'POST', `${url}?uploads`, { headers: { 'content-type': 'application/x-test' } });
      expect(init.status, init.text).toBe(200);
      const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(init.text)?.[1];
      expect(uploadId).toBeTruthy();

      const etags: string[] = [];
      let at = 0;
      for (const [i, size] of sizes.entries()) {
        const part = all.subarray(at, at + size);
        const r = await pageFetch(page, 'PUT', `${url}?partNumber=${i + 1}&uploadId=${uploadId}`, {
          body: { prng: { seed, size: total, start: at, end: at + size } },
        });
        expect(r.status, r.text).toBe(200);
        expect(r.headers.etag).toBe(`"${md5(part)}"`);
        etags.push(md5(part));
        at += size;
      }
      const xml = '<CompleteMultipartUpload>'
        + etags.map((e, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>"${e}"</ETag></Part>`).join('')
        + '</CompleteMultipartUpload>';
      const done = await pageFetch(page, 'POST', `${url}?uploadId=${uploadId}`, { body: { text: xml } });
      expect(done.status, done.text).toBe(200);
      const multipartEtag = `${md5(etags.map((e) => e + '-').join(''))}-1`;
      expect(done.text).toContain(multipartEtag);

      const head = await pageFetch(page, 'HEAD', url);
      expect(head.status).toBe(200);
      expect(head.headers['content-length']).toBe(String(total));
      expect(head.headers.etag).toBe(`"${multipartEtag}"`);
      expect(head.headers['content-type']).toBe('application/x-test');

      const whole = await pageFetch(page, 'GET', url);
      expect(whole.status).toBe(200);
      expect(whole.size).toBe(total);
      expect(whole.sha256).toBe(sha256(all));

      const b1 = sizes[0]!; // first byte of part 2
      const b2 = sizes[0]! + sizes[1]!; // first byte of part 3
      const ranges: [string, number, number][] = [
        [`bytes=${b1 - 5}-${b1 + 4}`, b1 - 5, b1 + 4], // across the first boundary
        [`bytes=${b1 - 1}-${b2}`, b1 - 1, b2], // across both boundaries
        [`bytes=${b1}-${b2 - 1}`, b1, b2 - 1], // exactly part 2
        [`bytes=${b2}-${b2}`, b2, b2], // the first byte of the last part
        [`bytes=-${sizes[2]! + 10}`, total - sizes[2]! - 10, total - 1], // suffix: last part and a little before
        [`bytes=${b1 - 100}-`, b1 - 100, total - 1], // open-ended from part 1 to the end
        ['bytes=0-1048575', 0, MiB - 1], // inside part 1
      ];
      for (const [range, start, end] of ranges) {
        const r = await pageFetch(page, 'GET', url, { headers: { range } });
        expect(r.status, range).toBe(206);
        expect(r.headers['content-range'], range).toBe(`bytes ${start}-${end}/${total}`);
        expect(r.size, range).toBe(end - start + 1);
        expect(r.sha256, range).toBe(sha256(all.subarray(start, end + 1)));
      }
      // And through the mount.
      const mounted = await pageFetch(page, 'GET', `${origin}/svc/composed/parts/joined.bin`, { headers: { range: `bytes=${b1 - 3}-${b2 + 3}` } });
      expect(mounted.status).toBe(206);
      expect(mounted.sha256).toBe(sha256(all.subarray(b1 - 3, b2 + 4)));
    });
  });

  // ---------------------------------------------------------------- downloads

  describe('a link with ?download= saves the file under that name', () => {
    const text = 'quarterly numbers\nline two\n';

    beforeAll(async () => {
      await createBucket('pubfiles', 'public-read');
      await createBucket('privfiles');
      await putBytes('pubfiles', 'reports/2024/q3.txt', new TextEncoder().encode(text), 'text/plain');
      await putBytes('privfiles', 'secret.txt', new TextEncoder().encode('private ' + text), 'text/plain');
    });

    async function clickDownload(href: string) {
      await page.evaluate((href) => {
        document.getElementById('dl')?.remove();
        const a = document.createElement('a');
        a.id = 'dl';
        a.href = href;
        a.textContent = 'download';
        document.body.prepend(a);
      }, href);
      const [download] = await Promise.all([page.waitForEvent('download', { timeout: 15_000 }), page.click('#dl')]);
      const path = await download.path();
      return { name: download.suggestedFilename(), content: await readFile(path, 'utf8'), failure: await download.failure() };
    }

    it('public-read object, plain link', async () => {
      const d = await clickDownload('/svc/pubfiles/reports/2024/q3.txt?download=name.txt');
      expect(d.failure).toBeNull();
      expect(d.name).toBe('name.txt');
      expect(d.content).toBe(text);
    });

    it('a name that is not ASCII', async () => {
      const d = await clickDownload(`/svc/pubfiles/reports/2024/q3.txt?download=${encodeURIComponent('Résumé 2024 ✓.txt')}`);
      expect(d.name).toBe('Résumé 2024 ✓.txt');
      expect(d.content).toBe(text);
    });

    it('private object through a presigned link', async () => {
      const href = presign('GET', `${origin}/svc/privfiles/secret.txt?download=mine.txt`, future());
      const d = await clickDownload(href);
      expect(d.failure).toBeNull();
      expect(d.name).toBe('mine.txt');
      expect(d.content).toBe('private ' + text);
    });
  });

  // ---------------------------------------------------------------- images

  describe('<img src> of stored objects', () => {
    const png = makePng(3, 2, (x, y) => (x === 0 && y === 0 ? [255, 0, 0] : [0, 0, 255]));

    beforeAll(async () => {
      await createBucket('pubimg', 'public-read');
      await createBucket('privimg');
      await putBytes('pubimg', 'pics/dot.png', png, 'image/png');
      await putBytes('privimg', 'pics/dot.png', png, 'image/png');
    });

    it('a public-read object through the mount shows', async () => {
      const r = await loadImage(page, '/svc/pubimg/pics/dot.png');
      expect(r).toEqual({ loaded: true, width: 3, height: 2, pixel: [255, 0, 0, 255] });
    });

    it('a public-read object on its bucket host shows', async () => {
      const r = await loadImage(page, 'http://pubimg.svc.localhost/pics/dot.png');
      expect(r.loaded).toBe(true);
      expect([r.width, r.height]).toEqual([3, 2]);
    });

    it('a private object shows through a presigned URL (mount and bucket host)', async () => {
      const viaMount = await loadImage(page, presign('GET', `${origin}/svc/privimg/pics/dot.png`, future()));
      expect(viaMount).toEqual({ loaded: true, width: 3, height: 2, pixel: [255, 0, 0, 255] });
      const viaHost = await loadImage(page, presign('GET', 'http://privimg.svc.localhost/pics/dot.png', future()));
      expect(viaHost.loaded).toBe(true);
      expect([viaHost.width, viaHost.height]).toEqual([3, 2]);
    });

    it('a private object does not show unsigned, nor with an expired or altered presigned URL', async () => {
      expect((await loadImage(page, '/svc/privimg/pics/dot.png')).loaded).toBe(false);
      const expired = presign('GET', `${origin}/svc/privimg/pics/dot.png`, Math.floor(Date.now() / 1000) - 60);
      expect((await loadImage(page, expired)).loaded).toBe(false);
      const other = presign('GET', `${origin}/svc/privimg/pics/other.png`, future()).replace('/other.png', '/dot.png');
      expect((await loadImage(page, other)).loaded).toBe(false);
    });
  });

  // ---------------------------------------------------------------- video

  describe('<video src> of a stored MP4', () => {
    const clip = makeMp4({ width: 128, height: 96, fps: 10, seconds: 6 });
    const key = 'clips/grey steps.mp4';

    it('plays and seeks; its range requests were answered with 206', async () => {
      await createBucket('media', 'public-read');
      await putBytes('media', encodeURIComponent(key).replace(/%2F/g, '/'), clip.mp4, 'video/mp4');
      const before = new Set((await storedLog(page)).map((e) => e.seq));

      const r = await page.evaluate(async (src) => {
        const v = document.createElement('video');
        v.muted = true;
        v.preload = 'auto';
        document.body.append(v);
        const once = (name: string) => new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no ${name} event (readyState ${v.readyState}, error ${v.error?.message ?? 'none'})`)), 15_000);
          v.addEventListener(name, () => {
            clearTimeout(timer);
            resolve();
          }, { once: true });
          v.addEventListener('error', () => {
            clearTimeout(timer);
            reject(new Error(`media error ${v.error?.code}: ${v.error?.message}`));
          }, { once: true });
        });
        const greyAt = () => {
          const c = document.createElement('canvas');
          c.width = v.videoWidth;
          c.height = v.videoHeight;
          const g = c.getContext('2d')!;
          g.drawImage(v, 0, 0);
          return Array.from(g.getImageData(c.width >> 1, c.height >> 1, 1, 1).data);
        };
        const loaded = once('loadedmetadata');
        v.src = src;
        await loaded;
        const meta = { readyState: v.readyState, duration: v.duration, width: v.videoWidth, height: v.videoHeight };

        // Plays: time advances past 0.5 s.
        await v.play();
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`playback stuck at ${v.currentTime}`)), 15_000);
          v.addEventListener('timeupdate', function tick() {
            if (v.currentTime > 0.5) {
              clearTimeout(timer);
              v.removeEventListener('timeupdate', tick);
              resolve();
            }
          });
        });
        v.pause();
        const played = v.currentTime;

        // Seeks: the seeked event fires, and the frame shown is one of second 3 (4.5 → second 4).
        const seeks: { time: number; readyState: number; pixel: number[] }[] = [];
        for (const t of [3.5, 1.2, 4.5]) {
          const seeked = once('seeked');
          v.currentTime = t;
          await seeked;
          seeks.push({ time: v.currentTime, readyState: v.readyState, pixel: greyAt() });
        }
        return { meta, played, seeks };
      }, `/svc/media/${encodeURIComponent(key).replace(/%2F/g, '/')}`);

      expect(r.meta.readyState).toBeGreaterThanOrEqual(1); // HAVE_METADATA
      expect(r.meta.duration).toBeCloseTo(clip.seconds, 1);
      expect([r.meta.width, r.meta.height]).toEqual([clip.width, clip.height]);
      expect(r.played).toBeGreaterThan(0.5);
      // The decoded frame after each seek is the grey of that second (BT.601 limited range).
      const rgb = (y: number) => Math.round((y - 16) * 255 / 219);
      r.seeks.forEach((s, i) => {
        const t = [3.5, 1.2, 4.5][i]!;
        expect(s.time, `seek ${t}`).toBeCloseTo(t, 1);
        expect(s.readyState, `seek ${t}: a frame is there`).toBeGreaterThanOrEqual(2); // HAVE_CURRENT_DATA
        const want = rgb(clip.lumaOfSecond(Math.floor(t)));
        for (const c of s.pixel.slice(0, 3)) expect(Math.abs(c - want), `seek ${t}: pixel ${s.pixel} vs grey ${want}`).toBeLessThanOrEqual(8);
      });

      // What the worker answered the media element, from its request log.
      let gets: LoggedEntry[] = [];
      await expect.poll(async () => {
        gets = (await storedLog(page)).filter((e) => !before.has(e.seq) && e.bucket === 'media' && e.key === key && e.method === 'GET');
        return gets.length;
      }, { timeout: 10_000 }).toBeGreaterThan(0);
      for (const e of gets) {
        expect(e.operation).toBe('GetObject');
        const range = header(e.requestHeaders, 'range');
        expect(range, 'the media element asks for ranges').toMatch(/^bytes=\d+-\d*$/);
        expect(e.status, `answer to ${range}`).toBe(206);
        const cr = header(e.responseHeaders, 'content-range');
        const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(cr ?? '');
        expect(m, `Content-Range ${cr}`).not.toBeNull();
        expect(Number(m![3])).toBe(clip.mp4.length);
        expect(Number(m![1])).toBe(Number(/^bytes=(\d+)/.exec(range!)![1]));
        expect(e.bytesOut).toBe(Number(m![2]) - Number(m![1]) + 1);
      }
    });
  });
});
