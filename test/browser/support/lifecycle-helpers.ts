// Helpers for the lifecycle and multi-tab tests: a signed fetch installed in every page of a context
// (Blob bodies, concurrency), deterministic test bytes the page and Node both produce, control of the
// real worker through CDP (stop it, watch its running status), and a look straight into the
// service's IndexedDB from the page to count orphans.
import { createHash } from 'node:crypto';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';

/** What the init script puts on `window.__lc` in every page of the context. */
export interface PageLc {
  /**
   * fetch() signed as root (docs/protocol.md, "Signing"). A Blob body goes out as is, without a type; a
   * ReadableStream body is streamed (duplex: 'half'), so the page decides when each byte is sent.
   */
  req(method: string, url: string, init?: { headers?: Record<string, string>; body?: Blob | string | ReadableStream<Uint8Array> }): Promise<Response>;
  /** http://{bucket}.svc.localhost/{key} */
  bucketUrl(bucket: string, key?: string): string;
  /** {page origin}/svc/{bucket}/{key}: the own-origin mount. */
  mountUrl(bucket: string, key?: string): string;
  /** The same bytes as `pattern` in Node. */
  pattern(seed: number, length: number): Uint8Array<ArrayBuffer>;
  /** Lower-case hex SHA-256 of a Blob or bytes. */
  sha256(data: Blob | Uint8Array): Promise<string>;
  /** Bytes as base64, for returning small bodies to Node. */
  base64(data: Uint8Array): string;
}

declare global {
  interface Window {
    __lc: PageLc;
  }
}

/** One entry per document load of the top frame, kept in sessionStorage across reloads. */
export interface NavRecord {
  controlled: boolean;
  guard: string | null;
}
export const NAV_LOG = 'lifecycle-test:navigations';

/**
 * Deterministic bytes from a seed: xorshift32 words, little-endian. One source text, evaluated in the
 * page (by the init script) and in Node, so Node knows the MD5 of what a page sent.
 */
const PATTERN_SOURCE = `function pattern(seed, length) {
  const words = new Uint32Array(Math.ceil(length / 4));
  let x = (Math.imul(seed, 2654435761) + 1) >>> 0 || 1;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    words[i] = x;
  }
  return new Uint8Array(words.buffer, 0, length);
}`;
export const pattern = new Function(`return (${PATTERN_SOURCE});`)() as (seed: number, length: number) => Uint8Array<ArrayBuffer>;

export const md5hex = (bytes: Uint8Array): string => createHash('md5').update(bytes).digest('hex');
export const sha256hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Runs in the page at document start (serialized by Playwright: no outside references). */
function installLc(patternSource: string): void {
  // The navigation log: was this document controlled when it started, and was the reload guard set.
  if (window === window.top) {
    const key = 'lifecycle-test:navigations';
    const log = JSON.parse(sessionStorage.getItem(key) ?? '[]') as unknown[];
    log.push({ controlled: Boolean(navigator.serviceWorker?.controller), guard: sessionStorage.getItem('swbucket:reloaded-for-control') });
    sessionStorage.setItem(key, JSON.stringify(log));
  }
  const ENDPOINT = 'svc.localhost';
  const SIGNED = ['acl', 'versioning', 'versions', 'versionId', 'uploadId', 'uploads', 'partNumber', 'delete', 'account', 'accounts', 'export', 'import', 'bucket', 'conflict'];
  const enc = new TextEncoder();
  const encodeKey = (key: string) => Array.from(enc.encode(key), (b) => {
    const c = String.fromCharCode(b);
    return /[A-Za-z0-9\-_.*]/.test(c) ? c : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }).join('');
  function resource(u: URL): string {
    let bucket: string;
    let key: string;
    if (u.hostname.endsWith('.' + ENDPOINT)) {
      bucket = u.hostname.slice(0, -ENDPOINT.length - 1);
      key = decodeURIComponent(u.pathname.slice(1));
    } else {
      let path = u.pathname;
      if (u.hostname !== ENDPOINT && (path === '/svc' || path.startsWith('/svc/'))) path = path.slice(4);
      const rest = path.replace(/^\//, '');
      const slash = rest.indexOf('/');
      bucket = decodeURIComponent(slash < 0 ? rest : rest.slice(0, slash));
      key = slash < 0 ? '' : decodeURIComponent(rest.slice(slash + 1));
    }
    let res = bucket === '' ? '/' : `/${bucket}/${encodeKey(key)}`;
    const subs = [...new URLSearchParams(u.search)].filter(([n]) => SIGNED.includes(n))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([n, v]) => (v === '' ? n : `${n}=${v}`));
    if (subs.length) res += '?' + subs.join('&');
    return res;
  }
  let hmacKey: Promise<CryptoKey> | undefined;
  const hex = (buf: ArrayBuffer) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
  const lc: PageLc = {
    async req(method, url, init = {}) {
      const h = new Headers(init.headers ?? {});
      h.set('x-svc-date', new Date().toUTCString());
      const names = [...h.keys()].filter((n) => n.startsWith('x-svc-')).sort();
      const canonical = names.map((n) => `${n}:${h.get(n)!.trim()}\n`).join('');
      const sts = `${method}\n${h.get('content-md5') ?? ''}\n${h.get('content-type') ?? ''}\n\n${canonical}${resource(new URL(url, location.href))}`;
      hmacKey ??= crypto.subtle.importKey('raw', enc.encode('svcadmin-secret'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
      const sig = new Uint8Array(await crypto.subtle.sign('HMAC', await hmacKey, enc.encode(sts)));
      h.set('authorization', `SVC svcadmin:${btoa(String.fromCharCode(...sig))}`);
      const body = typeof init.body === 'string' ? new Blob([init.body]) : init.body;
      const streamed = body instanceof ReadableStream ? { duplex: 'half' } : {};
      return fetch(url, { method, headers: h, ...(body !== undefined ? { body } : {}), ...streamed } as RequestInit);
    },
    bucketUrl: (bucket, key = '') => `http://${bucket}.${ENDPOINT}/${key}`,
    mountUrl: (bucket, key = '') => `${location.origin}/svc/${bucket}/${key}`,
    pattern: new Function(`return (${patternSource});`)() as PageLc['pattern'],
    async sha256(data) {
      const bytes = data instanceof Blob ? await data.arrayBuffer() : data;
      return hex(await crypto.subtle.digest('SHA-256', bytes as ArrayBuffer));
    },
    base64(data) {
      let s = '';
      for (let i = 0; i < data.length; i += 0x8000) s += String.fromCharCode(...data.subarray(i, i + 0x8000));
      return btoa(s);
    },
  };
  window.__lc = lc;
}

/** Installs window.__lc (and the navigation log) in every page of the context, from the next navigation on. */
export async function installPageHelpers(context: BrowserContext): Promise<void> {
  await context.addInitScript(installLc, PATTERN_SOURCE);
}

/** A new page of the context at `url`, waiting until the page says the service started. */
export async function openStartedPage(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await waitStarted(page);
  return page;
}

export async function waitStarted(page: Page): Promise<void> {
  await page.waitForFunction(() => Boolean((window as { swbucket?: unknown }).swbucket), null, { timeout: 20_000 });
}

export async function navigationLog(page: Page): Promise<NavRecord[]> {
  return page.evaluate((key) => JSON.parse(sessionStorage.getItem(key) ?? '[]') as NavRecord[], NAV_LOG);
}

// ---- the worker through CDP -------------------------------------------------------------------

interface VersionInfo {
  versionId: string;
  scriptURL: string;
  runningStatus: 'stopped' | 'starting' | 'running' | 'stopping';
  status: string;
}

export interface WorkerControl {
  session: CDPSession;
  /** Latest state of each worker version the browser reported. */
  versions: Map<string, VersionInfo>;
  /** ServiceWorker.stopAllWorkers, then waits until the browser reports a worker stopped. */
  stopAll(): Promise<void>;
  /** How many times a worker was reported stopped. */
  stops(): number;
}

/** A page-level CDP session with the ServiceWorker domain enabled (stopAllWorkers works from it). */
export async function workerControl(page: Page): Promise<WorkerControl> {
  const session = await page.context().newCDPSession(page);
  const versions = new Map<string, VersionInfo>();
  let stopped = 0;
  const waiters: (() => void)[] = [];
  session.on('ServiceWorker.workerVersionUpdated', (e: { versions: VersionInfo[] }) => {
    for (const v of e.versions) {
      const before = versions.get(v.versionId);
      versions.set(v.versionId, v);
      if (v.runningStatus === 'stopped' && before?.runningStatus !== 'stopped') {
        stopped++;
        waiters.splice(0).forEach((w) => w());
      }
    }
  });
  await session.send('ServiceWorker.enable');
  // enable reports the existing versions right after it returns.
  for (let i = 0; versions.size === 0 && i < 100; i++) await new Promise((r) => setTimeout(r, 50));
  if (versions.size === 0) throw new Error('ServiceWorker.enable reported no worker version for this page');
  return {
    session,
    versions,
    stops: () => stopped,
    async stopAll() {
      const running = [...versions.values()].some((v) => v.runningStatus !== 'stopped');
      if (!running) {
        await session.send('ServiceWorker.stopAllWorkers');
        return;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const seen = new Promise<void>((resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`no worker was reported stopped: ${JSON.stringify([...versions.values()])}`)), 10_000);
        waiters.push(resolve);
      });
      try {
        await session.send('ServiceWorker.stopAllWorkers');
        await seen;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

// ---- the database as the page sees it ----------------------------------------------------------

export interface DbSnapshot {
  version: number;
  stores: string[];
  objects: { bucket: string; key: string; size: number; etag: string; chunks: { id: string; size: number }[] }[];
  versions: { chunks: { id: string; size: number }[]; size: number }[];
  parts: { bodyId: string; size: number }[];
  bodies: { id: string; size: number }[];
  accounts: { accessKeyId: string; usedBytes: number }[];
}

/**
 * Opens the service's database from the page (no version: whatever the current one is), reads the
 * records that matter for orphans, and closes it at once so no schema upgrade is ever blocked.
 */
export async function dbSnapshot(page: Page): Promise<DbSnapshot> {
  return page.evaluate(async () => {
    // Opening a database that does not exist would create an empty one: refuse instead.
    if (!(await indexedDB.databases()).some((d) => d.name === 'swbucket')) throw new Error('the swbucket database does not exist yet');
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = indexedDB.open('swbucket');
      open.onerror = () => reject(open.error);
      open.onsuccess = () => resolve(open.result);
    });
    try {
      const tx = db.transaction(['objects', 'versions', 'parts', 'bodies', 'accounts'], 'readonly');
      const all = <T>(name: string) => new Promise<T[]>((res, rej) => {
        const r = tx.objectStore(name).getAll();
        r.onsuccess = () => res(r.result as T[]);
        r.onerror = () => rej(r.error);
      });
      const [objects, versions, parts, bodies, accounts] = await Promise.all([
        all<DbSnapshot['objects'][number]>('objects'),
        all<DbSnapshot['versions'][number]>('versions'),
        all<DbSnapshot['parts'][number]>('parts'),
        all<{ id: string; blob?: Blob; bytes?: Uint8Array }>('bodies'),
        all<DbSnapshot['accounts'][number]>('accounts'),
      ]);
      return {
        version: db.version,
        stores: [...db.objectStoreNames],
        objects: objects.map((o) => ({ bucket: o.bucket, key: o.key, size: o.size, etag: o.etag, chunks: o.chunks })),
        versions: versions.map((v) => ({ chunks: v.chunks, size: v.size })),
        parts: parts.map((p) => ({ bodyId: p.bodyId, size: p.size })),
        bodies: bodies.map((b) => ({ id: b.id, size: b.blob?.size ?? b.bytes!.byteLength })),
        accounts: accounts.map((a) => ({ accessKeyId: a.accessKeyId, usedBytes: a.usedBytes })),
      };
    } finally {
      db.close();
    }
  });
}

/**
 * The store's invariants, as a list of violations (empty when whole): every body belongs to exactly
 * one object, version or part and has the size that record says; every object's size is the sum of
 * its chunks; the root account's usage is the size of everything stored.
 */
export function orphanReport(s: DbSnapshot): string[] {
  const problems: string[] = [];
  const bodies = new Map(s.bodies.map((b) => [b.id, b.size]));
  const refs = new Map<string, number>();
  const ref = (id: string, size: number, owner: string) => {
    refs.set(id, (refs.get(id) ?? 0) + 1);
    const actual = bodies.get(id);
    if (actual === undefined) problems.push(`${owner}: body ${id} is missing`);
    else if (actual !== size) problems.push(`${owner}: body ${id} holds ${actual} bytes, the record says ${size}`);
  };
  for (const o of s.objects) {
    o.chunks.forEach((c) => ref(c.id, c.size, `object ${o.bucket}/${o.key}`));
    const sum = o.chunks.reduce((n, c) => n + c.size, 0);
    if (sum !== o.size) problems.push(`object ${o.bucket}/${o.key}: size ${o.size}, chunks hold ${sum}`);
  }
  for (const v of s.versions) v.chunks.forEach((c) => ref(c.id, c.size, 'a version'));
  for (const p of s.parts) ref(p.bodyId, p.size, 'a part');
  for (const [id, n] of refs) if (n > 1) problems.push(`body ${id} is referenced ${n} times`);
  for (const id of bodies.keys()) if (!refs.has(id)) problems.push(`body ${id} (${bodies.get(id)} bytes) belongs to nothing`);
  const stored = s.objects.reduce((n, o) => n + o.size, 0) + s.versions.reduce((n, v) => n + v.size, 0)
    + s.parts.reduce((n, p) => n + p.size, 0);
  const used = s.accounts.reduce((n, a) => n + a.usedBytes, 0);
  if (used !== stored) problems.push(`accounts' usedBytes total ${used}, the store holds ${stored}`);
  return problems;
}

/** Keys and sizes of a ListBucketResult. */
export function parseListing(xml: string): { key: string; size: number; etag: string }[] {
  return [...xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)].map(([, c]) => ({
    key: /<Key>([\s\S]*?)<\/Key>/.exec(c!)?.[1] ?? '',
    size: Number(/<Size>(\d+)<\/Size>/.exec(c!)?.[1]),
    etag: (/<ETag>([\s\S]*?)<\/ETag>/.exec(c!)?.[1] ?? '').replace(/&quot;|"/g, ''),
  }));
}
