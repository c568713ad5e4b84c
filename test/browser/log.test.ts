// The request log in real Chromium: the worker writes one entry per request to the 'swbucket-log'
// database (store 'entries', keyPath seq) and broadcasts it on BroadcastChannel('swbucket-log').
// The page reads both the way a log viewer would.
import { describe, it, expect, beforeAll } from 'vitest';
import type { Page } from 'playwright-core';
import { useChromiumServicePage } from './support/fixture.ts';
import { openServicePage, sendSteps } from './support/page.ts';
import { presign, signHeaders } from '../support/sign.ts';
import { errorCode, type StepResult } from '../cases/check.ts';
import { PAGE_ORIGIN, type Step } from '../cases/types.ts';
import type { LoggedEntry } from '../../sw/log/ring.ts';
import { storedLog } from './support/log.ts';

type Entry = LoggedEntry;

/** Starts collecting the live log in the page (before any request of the test is sent). */
async function listen(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __logChannel?: BroadcastChannel; __broadcast: unknown[] };
    w.__logChannel?.close();
    w.__broadcast = [];
    w.__logChannel = new BroadcastChannel('swbucket-log');
    w.__logChannel.onmessage = (e) => w.__broadcast.push(e.data);
  });
}

const broadcast = (page: Page) => page.evaluate(() => (window as unknown as { __broadcast: Entry[] }).__broadcast);


const idOf = (r: StepResult) => r.headers['x-svc-request-id']!;
const only = <T extends { requestId: string }>(entries: T[], id: string) => entries.filter((e) => e.requestId === id);

/** Waits until every id is in the broadcast and in the database; returns both. */
async function settled(page: Page, ids: string[]): Promise<{ live: Entry[]; rows: Entry[] }> {
  let live: Entry[] = [];
  let rows: Entry[] = [];
  await expect.poll(async () => {
    live = await broadcast(page);
    rows = await storedLog(page);
    return ids.filter((id) => !live.some((e) => e.requestId === id) || !rows.some((e) => e.requestId === id));
  }, { timeout: 10_000, message: 'request ids missing from the broadcast or the database' }).toEqual([]);
  return { live, rows };
}

const chromium = useChromiumServicePage();
let page: Page;

beforeAll(() => {
  page = chromium.page;
});

describe('request log', () => {
  it('one entry per request: broadcast live once, stored once, with its fields; it survives a reload', async () => {
    const started = Date.now();
    // What the set-up requests logged is written (and broadcast) before this test listens.
    await storedLog(page);
    await listen(page);
    const B = 'http://logbook.svc.localhost';
    const presigned = presign('GET', `${B}/notes/a.txt`, Math.floor(Date.now() / 1000) + 600);
    // signed: accessKeyId is svcadmin (true), absent (false), or not checked (undefined: a request
    // refused by routing is answered before its signature is looked at).
    type Want = Partial<Entry> & { operation: string; bytesIn: number; signed: boolean | undefined };
    const cases: [Step, Want][] = [
      [{ method: 'PUT', url: `${B}/`, expect: { status: 200 } },
        { operation: 'CreateBucket', bucket: 'logbook', key: '', bytesIn: 0, signed: true }],
      [{ method: 'PUT', url: `${B}/notes/a.txt`, body: 'hello, log', headers: { 'content-type': 'text/plain' }, expect: { status: 200 } },
        { operation: 'PutObject', bucket: 'logbook', key: 'notes/a.txt', bytesIn: 10, signed: true }],
      [{ method: 'GET', url: `${B}/notes/a.txt`, expect: { status: 200 } },
        { operation: 'GetObject', key: 'notes/a.txt', bytesIn: 0, signed: true }],
      [{ method: 'GET', url: `${B}/notes/a.txt`, headers: { range: 'bytes=0-4' }, expect: { status: 206 } },
        { operation: 'GetObject', bytesIn: 0, signed: true }],
      [{ method: 'HEAD', url: `${B}/notes/a.txt`, expect: { status: 200 } },
        { operation: 'HeadObject', bytesIn: 0, signed: true }],
      [{ method: 'GET', url: `${B}/missing.txt`, expect: { status: 404, code: 'NoSuchKey' } },
        { operation: 'GetObject', key: 'missing.txt', bytesIn: 0, signed: true }],
      [{ method: 'GET', url: `${B}/notes/a.txt`, auth: 'anon', expect: { status: 403, code: 'AccessDenied' } },
        { operation: 'GetObject', bytesIn: 0, signed: false }],
      [{ method: 'GET', url: presigned, auth: 'anon', expect: { status: 200 } },
        { operation: 'GetObject', key: 'notes/a.txt', bytesIn: 0, signed: true }],
      [{ method: 'GET', url: `${PAGE_ORIGIN}/svc/logbook/notes/a.txt`, expect: { status: 200 } },
        { operation: 'GetObject', bucket: 'logbook', key: 'notes/a.txt', bytesIn: 0, signed: true }],
      [{ method: 'GET', url: `${B}/notes/a.txt`, headers: { range: 'bytes=100-200' }, expect: { status: 416, code: 'InvalidRange' } },
        { operation: 'GetObject', bytesIn: 0, signed: true }],
      [{ method: 'POST', url: `${B}/notes/a.txt`, expect: { status: 405, code: 'MethodNotAllowed' } },
        { operation: '', bucket: 'logbook', key: 'notes/a.txt', bytesIn: 0, signed: undefined }],
      [{ method: 'GET', url: 'http://svc.localhost/', expect: { status: 200 } },
        { operation: 'ListBuckets', bucket: '', key: '', bytesIn: 0, signed: true }],
      [{ method: 'PUT', url: `${B}/notes/b.bin`, body: { repeat: 'xyz', times: 7000 }, expect: { status: 200 } },
        { operation: 'PutObject', key: 'notes/b.bin', bytesIn: 21000, signed: true }],
      [{ method: 'DELETE', url: `${B}/notes/a.txt`, expect: { status: 200 } },
        { operation: 'DeleteObject', bytesIn: 0, signed: true }],
    ];
    const results = await sendSteps(page, cases.map(([s]) => s));
    cases.forEach(([s], i) => expect(results[i]!.status, `${s.method} ${s.url}: ${results[i]!.text.slice(0, 200)}`).toBe(s.expect.status));
    const ids = results.map(idOf);
    expect(new Set(ids).size).toBe(ids.length);

    const { live, rows } = await settled(page, ids);

    // Exactly once each, live and stored, and nothing else was broadcast meanwhile.
    for (const id of ids) {
      expect(only(live, id), `broadcasts of ${id}`).toHaveLength(1);
      expect(only(rows, id), `stored entries of ${id}`).toHaveLength(1);
    }
    expect(live.map((e) => e.requestId)).toEqual(ids);

    const origin = new URL(page.url()).origin;
    cases.forEach(([step, want], i) => {
      const r = results[i]!;
      const e = only(live, ids[i]!)[0]!;
      const where = `${step.method} ${step.url}`;
      expect(e, where).toEqual(only(rows, ids[i]!)[0]); // the stored entry is the broadcast one
      expect(e.method, where).toBe(step.method);
      // As requested, except a presigned Signature, which the log never holds (shown as …).
      expect(e.url, where).toBe(step.url.replace(PAGE_ORIGIN, origin).replace(/([?&]Signature=)[^&]*/, '$1…'));
      expect(e.operation, where).toBe(want.operation);
      if (want.bucket !== undefined) expect(e.bucket, where).toBe(want.bucket);
      else expect(e.bucket, where).toBe('logbook');
      if (want.key !== undefined) expect(e.key, where).toBe(want.key);
      else expect(e.key, where).toBe('notes/a.txt');
      expect(e.status, where).toBe(r.status);
      if (r.status >= 400) expect(e.code, where).toBe(errorCode(r.text) ?? step.expect.code);
      else expect(e.code, where).toBeUndefined();
      expect(e.bytesIn, where).toBe(want.bytesIn);
      expect(e.bytesOut, where).toBe(Buffer.byteLength(r.text));
      if (want.signed === true) expect(e.accessKeyId, where).toBe('svcadmin');
      if (want.signed === false) expect(e.accessKeyId, where).toBeUndefined();
      expect(e.time, where).toBeGreaterThanOrEqual(started - 1000);
      expect(e.time, where).toBeLessThanOrEqual(Date.now() + 1000);
      expect(e.durationMs, where).toBeGreaterThanOrEqual(0);
      // Headers as pairs: what was sent, and what was answered (every header the page could see).
      const sent = new Map(e.requestHeaders.map(([n, v]) => [n.toLowerCase(), v]));
      for (const [name, value] of Object.entries(step.headers ?? {})) expect(sent.get(name), `${where} request ${name}`).toBe(value);
      if (step.auth !== 'anon') expect(sent.get('authorization'), where).toBe('SVC svcadmin:…');
      const answered = new Map(e.responseHeaders.map(([n, v]) => [n.toLowerCase(), v]));
      expect(answered.get('x-svc-request-id'), where).toBe(ids[i]);
      for (const [name, value] of Object.entries(r.headers)) expect(answered.get(name), `${where} response ${name}`).toBe(value);
    });
    // In request order in the ring.
    const seqs = ids.map((id) => only(rows, id)[0]!.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);

    // A reload (a new page, the same database): still there, unchanged.
    await page.reload();
    await page.waitForFunction(() => Boolean((window as { swbucket?: unknown }).swbucket), null, { timeout: 20_000 });
    const after = await storedLog(page);
    for (const id of ids) expect(only(after, id)).toEqual(only(rows, id));
  });

  it('keeps logging after a viewer deletes the log database (clearing the log)', async () => {
    // Something is logged first, so the worker holds an open connection to the log database.
    await listen(page);
    const first = await sendSteps(page, [{ method: 'GET', url: 'http://svc.localhost/', expect: { status: 200 } }]);
    await settled(page, [idOf(first[0]!)]);

    await page.evaluate(() => new Promise<void>((resolve, reject) => {
      const r = indexedDB.deleteDatabase('swbucket-log');
      r.onsuccess = () => resolve();
      r.onerror = () => reject(r.error);
      r.onblocked = () => reject(new Error('deleting the log database was blocked: a connection did not close'));
    }));
    expect(await storedLog(page)).toEqual([]);

    await listen(page);
    const results = await sendSteps(page, [
      { method: 'GET', url: 'http://svc.localhost/', expect: { status: 200 } },
      { method: 'GET', url: 'http://logbook.svc.localhost/nothing-here', expect: { status: 404 } },
    ]);
    const ids = results.map(idOf);
    const { live, rows } = await settled(page, ids);
    expect(live.map((e) => e.requestId)).toEqual(ids);
    expect(rows.map((e) => e.requestId)).toEqual(ids);
  });

  it('a response does not wait for its log entry (the log database held in an upgrade)', async () => {
    // A fresh context: its worker has not opened the log database yet, so the page can create it
    // first and keep its upgrade transaction busy; the worker's log write queues behind it. The
    // console opens on Settings, the one view that sends no request when it loads.
    const { context, page: fresh } = await openServicePage(chromium.browser, `${chromium.baseURL}/#/settings`);
    try {
      await listen(fresh);
      const url = 'http://held.svc.localhost/';
      const headers = [...signHeaders('PUT', url, new Headers())];
      const r = await fresh.evaluate(async ({ url, headers }) => {
        let answered = false;
        let upgradeDone = false;
        let upgraded = false;
        const deadline = Date.now() + 10_000; // only reached when the response waits for the log
        const open = indexedDB.open('swbucket-log', 1);
        const holding = new Promise<void>((resolve) => {
          open.onupgradeneeded = () => {
            upgraded = true;
            // The schema the worker makes itself (sw/log/ring.ts).
            const store = open.result.createObjectStore('entries', { keyPath: 'seq', autoIncrement: true });
            open.transaction!.addEventListener('complete', () => {
              upgradeDone = true;
            });
            const spin = () => {
              if (!answered && Date.now() < deadline) store.count().onsuccess = spin;
            };
            spin();
            resolve();
          };
          open.onsuccess = () => resolve();
        });
        const opened = new Promise<IDBDatabase>((resolve, reject) => {
          open.addEventListener('success', () => resolve(open.result));
          open.addEventListener('error', () => reject(open.error));
        });
        await holding;
        const res = await fetch(url, { method: 'PUT', headers });
        const heldWhenAnswered = !upgradeDone && upgraded;
        answered = true;
        (await opened).close();
        return { status: res.status, id: res.headers.get('x-svc-request-id')!, upgraded, heldWhenAnswered };
      }, { url, headers });
      expect(r.upgraded, 'the page created the log database (the worker had not)').toBe(true);
      expect(r.status).toBe(200);
      expect(r.heldWhenAnswered, 'the response arrived while the log database was still held').toBe(true);
      // Once the database is free, the entry is written and broadcast after all.
      const { live, rows } = await settled(fresh, [r.id]);
      expect(only(live, r.id)).toHaveLength(1);
      expect(only(rows, r.id)[0]).toMatchObject({ operation: 'CreateBucket', bucket: 'held', status: 200 });
    } finally {
      await context.close();
    }
  });
});
