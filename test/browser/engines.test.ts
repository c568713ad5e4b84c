// The engine layer (support/engines.ts) in the project's engine: the built worker controls the page,
// evaluate() carries JSON both ways and surfaces a page's throw with its message, waitForFunction()
// waits and times out, IndexedDB keeps data across a reload, a Blob can be stored in IndexedDB (or,
// in WebKit's ephemeral automation storage, is refused as the store expects), bodies on both sides
// of the store's 16 KiB inline size round-trip through the worker, pages of one engine share its
// storage, each launch starts empty, and evaluate() gives up after its timeout.
import { describe, it, expect } from 'vitest';
import { launchEngine } from './support/engines.ts';
import { useServicePage } from './support/fixture.ts';
import { openServicePage, resetService, sendSteps } from './support/page.ts';

const service = useServicePage();
const { name, baseURL } = service;

/** Puts `value` at `key` in a database of the test's own, and reads it back. */
function idbPut(args: { db: string; key: string; value: string | { blob: string } }): Promise<string> {
  return new Promise<IDBDatabase>((resolve, reject) => {
    const open = indexedDB.open(args.db, 1);
    open.onupgradeneeded = () => open.result.createObjectStore('s');
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  }).then((db) => new Promise<string>((resolve, reject) => {
    const tx = db.transaction('s', 'readwrite');
    const value = typeof args.value === 'string' ? args.value : new Blob([args.value.blob]);
    const put = tx.objectStore('s').put(value, args.key);
    tx.oncomplete = () => {
      db.close();
      resolve('stored');
    };
    tx.onabort = () => {
      db.close();
      const e = put.error ?? tx.error;
      reject(new Error(e ? `${e.name}: ${e.message}` : 'the transaction aborted'));
    };
  }));
}

/** The value at `key`, a Blob read as text; null when the database or the key is missing. */
async function idbGet(args: { db: string; key: string }): Promise<string | null> {
  if (!(await indexedDB.databases()).some((d) => d.name === args.db)) return null;
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const open = indexedDB.open(args.db, 1);
    open.onupgradeneeded = () => open.result.createObjectStore('s');
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  const value = await new Promise<unknown>((resolve, reject) => {
    const get = db.transaction('s').objectStore('s').get(args.key);
    get.onsuccess = () => resolve(get.result);
    get.onerror = () => reject(get.error);
  });
  db.close();
  if (value === undefined) return null;
  return value instanceof Blob ? value.text() : String(value);
}

describe(`engine: ${name}`, () => {
  it('runs the named engine, and the built worker controls the page', async () => {
    expect(service.engine.name).toBe(name);
    expect(service.engine.version).toMatch(name === 'chromium' ? /^Chromium \d/ : name === 'firefox' ? /^Firefox \d/ : /^WebKitGTK \d/);
    expect(await service.page.url()).toBe(baseURL + '/');
    expect(await service.page.evaluate(() => Boolean(navigator.serviceWorker.controller))).toBe(true);
  });

  it('evaluate() carries JSON values both ways and awaits promises', async () => {
    expect(await service.page.evaluate(() => 1 + 1)).toBe(2);
    expect(await service.page.evaluate(async (a: { n: number; s: string[] }) => ({ n: a.n * 2, s: a.s.join('') }), { n: 21, s: ['a', 'é', '\u{1F600}'] }))
      .toEqual({ n: 42, s: 'aé\u{1F600}' });
    expect(await service.page.evaluate(() => undefined)).toBeUndefined();
    expect(await service.page.evaluate(() => null)).toBeNull();
    expect(await service.page.evaluate((s: string) => s.length, 'x'.repeat(1 << 20))).toBe(1 << 20);
  });

  it('evaluate() rejects with the message of what the page threw or rejected with', async () => {
    await expect(service.page.evaluate(() => {
      throw new TypeError('thrown in the page');
    })).rejects.toThrow('thrown in the page');
    await expect(service.page.evaluate(async () => {
      await new Promise((r) => setTimeout(r, 10));
      throw new Error('rejected in the page');
    })).rejects.toThrow('rejected in the page');
    // The page still answers after an error.
    expect(await service.page.evaluate(() => 'still here')).toBe('still here');
  });

  it('waitForFunction() waits for a condition that becomes true later, and times out when it never does', async () => {
    await service.page.evaluate(() => {
      setTimeout(() => ((window as unknown as { __later?: number }).__later = 7), 300);
    });
    await service.page.waitForFunction((want: number) => (window as unknown as { __later?: number }).__later === want, 7, { timeout: 5_000 });
    const started = Date.now();
    await expect(service.page.waitForFunction(() => false, undefined, { timeout: 500 })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('IndexedDB keeps its data across a reload, and the worker controls the reloaded page', async () => {
    const db = 'engines-test-reload';
    expect(await service.page.evaluate(idbPut, { db, key: 'k', value: 'kept' })).toBe('stored');
    await service.page.reload();
    await service.page.waitForFunction(() => Boolean((window as { swbucket?: unknown }).swbucket), undefined, { timeout: 20_000 });
    expect(await service.page.evaluate(() => Boolean(navigator.serviceWorker.controller))).toBe(true);
    expect(await service.page.evaluate(idbGet, { db, key: 'k' })).toBe('kept');
  });

  it(name === 'webkit'
    ? 'a Blob cannot be stored in IndexedDB (WebKit\'s ephemeral automation storage refuses it)'
    : 'a Blob can be stored in IndexedDB and read back', async () => {
    const stored = service.page.evaluate(idbPut, { db: 'engines-test-blob', key: 'b', value: { blob: 'blob body' } });
    if (name === 'webkit') {
      await expect(stored).rejects.toThrow('Error preparing Blob/File data to be stored in object store');
    } else {
      await expect(stored).resolves.toBe('stored');
      expect(await service.page.evaluate(idbGet, { db: 'engines-test-blob', key: 'b' })).toBe('blob body');
    }
  });

  it('objects of 1 KiB, 64 KiB and 1 MiB round-trip through the worker (both sides of the 16 KiB inline size)', async () => {
    await resetService(service.page);
    const sizes = [1024, 64 * 1024, 1024 * 1024];
    const text = (n: number) => 'swbucket'.repeat(n / 8);
    const results = await sendSteps(service.page, [
      { method: 'PUT', url: 'http://engines.svc.localhost/', expect: { status: 200 } },
      ...sizes.map((n) => ({ method: 'PUT', url: `http://engines.svc.localhost/o${n}`, body: text(n), expect: { status: 200 } })),
      ...sizes.map((n) => ({ method: 'GET', url: `http://engines.svc.localhost/o${n}`, expect: { status: 200 } })),
    ]);
    results.slice(0, 1 + sizes.length).forEach((r, i) => expect(r.status, `PUT ${i}: ${r.text.slice(0, 300)}`).toBe(200));
    sizes.forEach((n, i) => {
      const got = results[1 + sizes.length + i]!;
      expect(got.status, `GET o${n}: ${got.text.slice(0, 300)}`).toBe(200);
      expect(got.text.length, `GET o${n} length`).toBe(n);
      expect(got.text === text(n), `GET o${n} bytes`).toBe(true);
    });
  });

  it('a second page shares the engine\'s storage; closing it leaves the first page working', async () => {
    const db = 'engines-test-shared';
    expect(await service.page.evaluate(idbPut, { db, key: 'k', value: 'from the first page' })).toBe('stored');
    const { page: second } = await openServicePage(service.engine, baseURL);
    expect(await second.evaluate(() => Boolean(navigator.serviceWorker.controller))).toBe(true);
    expect(await second.evaluate(idbGet, { db, key: 'k' })).toBe('from the first page');
    await second.close();
    expect(await service.page.evaluate(idbGet, { db, key: 'k' })).toBe('from the first page');
  });

  it('each launch starts with empty storage; evaluate() gives up after evaluateTimeout and the page answers again', async () => {
    expect(await service.page.evaluate(idbPut, { db: 'engines-test-fresh', key: 'k', value: 'v' })).toBe('stored');
    const other = await launchEngine(name, { evaluateTimeout: 1_000 });
    try {
      const fresh = await other.newPage();
      await fresh.goto(baseURL + '/');
      expect(await fresh.evaluate(idbGet, { db: 'engines-test-fresh', key: 'k' })).toBeNull();
      await expect(fresh.evaluate(() => new Promise(() => {}))).rejects.toThrow('evaluate: no result within 1000 ms');
      expect(await fresh.evaluate(() => 'answers')).toBe('answers');
    } finally {
      await other.close();
    }
  });
});
