// Helpers for the lifecycle and multi-tab tests: a signed fetch installed in every page of a context
// (support/page-signer.ts; Blob bodies, concurrency), deterministic test bytes the page and Node
// both produce, control of the real worker through CDP (stop it, watch its running status), a look
// straight into the service's IndexedDB from the page to count orphans, and a new build of the
// worker with one more schema step (for engine-lifecycle.test.ts too).
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { build } from 'esbuild';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { expect } from 'vitest';
import { PAGE_SIGNER, type pageSigner, type RootFetchInit } from './page-signer.ts';

/** What the init script puts on `window.__lc` in every page of the context. */
export interface PageLc {
  /** PageSigner.fetchAsRoot: fetch() signed as root, a body as it is (a string as a type-less Blob), a stream streamed. */
  req(method: string, url: string, init?: RootFetchInit): Promise<Response>;
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
 * page (by the init script, or by a test's tools) and in Node, so Node knows the MD5 of what a page sent.
 */
export const PATTERN_SOURCE = `function pattern(seed, length) {
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

export const md5hex = (bytes: Uint8Array | string): string => createHash('md5').update(bytes).digest('hex');
export const sha256hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Runs in the page at document start (serialized by Playwright: no outside references). */
function installLc({ patternSource, signSource }: { patternSource: string; signSource: string }): void {
  // The navigation log: was this document controlled when it started, and was the reload guard set.
  if (window === window.top) {
    const key = 'lifecycle-test:navigations';
    const log = JSON.parse(sessionStorage.getItem(key) ?? '[]') as unknown[];
    log.push({ controlled: Boolean(navigator.serviceWorker?.controller), guard: sessionStorage.getItem('swbucket:reloaded-for-control') });
    sessionStorage.setItem(key, JSON.stringify(log));
  }
  const ENDPOINT = 'svc.localhost';
  const { fetchAsRoot } = (new Function(`return (${signSource})`)() as typeof pageSigner)();
  const hex = (buf: ArrayBuffer) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
  const lc: PageLc = {
    req: fetchAsRoot,
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
  await context.addInitScript(installLc, { patternSource: PATTERN_SOURCE, signSource: PAGE_SIGNER });
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
  /** The bodies of imports not committed (sw/store/rules/imports.ts): a problem once no import runs. */
  heldBodies?: { holder: string; bodyId: string; size: number }[];
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
      const withImports = db.objectStoreNames.contains('held-bodies');
      const tx = db.transaction(['objects', 'versions', 'parts', 'bodies', 'accounts', ...(withImports ? ['held-bodies'] : [])], 'readonly');
      const all = <T>(name: string) => new Promise<T[]>((res, rej) => {
        const r = tx.objectStore(name).getAll();
        r.onsuccess = () => res(r.result as T[]);
        r.onerror = () => rej(r.error);
      });
      const [objects, versions, parts, bodies, accounts, heldBodies] = await Promise.all([
        all<DbSnapshot['objects'][number]>('objects'),
        all<DbSnapshot['versions'][number]>('versions'),
        all<DbSnapshot['parts'][number]>('parts'),
        all<{ id: string; blob?: Blob; bytes?: Uint8Array }>('bodies'),
        all<DbSnapshot['accounts'][number]>('accounts'),
        withImports ? all<NonNullable<DbSnapshot['heldBodies']>[number]>('held-bodies') : Promise.resolve([]),
      ]);
      return {
        version: db.version,
        stores: [...db.objectStoreNames],
        objects: objects.map((o) => ({ bucket: o.bucket, key: o.key, size: o.size, etag: o.etag, chunks: o.chunks })),
        versions: versions.map((v) => ({ chunks: v.chunks, size: v.size })),
        parts: parts.map((p) => ({ bodyId: p.bodyId, size: p.size })),
        bodies: bodies.map((b) => ({ id: b.id, size: b.blob?.size ?? b.bytes!.byteLength })),
        accounts: accounts.map((a) => ({ accessKeyId: a.accessKeyId, usedBytes: a.usedBytes })),
        heldBodies: heldBodies.map(({ holder, bodyId, size }) => ({ holder, bodyId, size })),
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
  for (const b of s.heldBodies ?? []) {
    ref(b.bodyId, b.size, `held by ${b.holder}`);
    problems.push(`body ${b.bodyId} is held by ${b.holder}, which is not running`);
  }
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

// ---- a new build of the worker ------------------------------------------------------------------

/**
 * The worker as scripts/bundles.ts builds it, but reporting `version` and with one more schema step,
 * creating the object store `store`, appended to UPGRADES in sw/store/idb.ts: a new build at the same
 * URL, for the takeover tests.
 */
export async function buildVariantWorker(version: string, store: string): Promise<string> {
  let patched = 0;
  const out = await build({
    entryPoints: ['sw/worker.ts'],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome110',
    write: false,
    minify: true,
    plugins: [{
      name: 'append-upgrade-step',
      setup(b) {
        b.onLoad({ filter: /[\\/]protocol[\\/]version\.ts$/ }, () => ({ contents: `export const VERSION = '${version}';`, loader: 'ts' }));
        b.onLoad({ filter: /[\\/]sw[\\/]store[\\/]idb\.ts$/ }, async (args) => {
          const source = await readFile(args.path, 'utf8');
          const start = source.indexOf('const UPGRADES');
          const end = start < 0 ? -1 : source.indexOf('\n];', start);
          if (start < 0 || end < 0) throw new Error('idb.ts has no `const UPGRADES = [ … \\n];` literal to extend');
          patched++;
          const step = `\n  (db: IDBDatabase) => { db.createObjectStore('${store}'); },`;
          return { contents: source.slice(0, end) + step + source.slice(end), loader: 'ts' };
        });
      },
    }],
  });
  expect(patched, 'the UPGRADES array of sw/store/idb.ts was extended').toBe(1);
  return out.outputFiles[0]!.text;
}
