// The request log's ring buffer (sw/log/ring.ts) over fake-indexeddb: the newest `capacity`
// entries are kept, in order; each write is broadcast with its seq once it is stored.
import { describe, it, expect, afterEach } from 'vitest';
import { IDBFactory } from 'fake-indexeddb';
import { createRequestLog, readLog, LOG_CHANNEL, LOG_DB, type LoggedEntry } from '../../sw/log/ring.ts';
import type { LogEntry } from '../../sw/core/handler.ts';

let run = 0;

/** A distinct entry; `tag` keeps entries of different tests apart on the shared channel. */
function entry(tag: string, i: number): LogEntry {
  return {
    time: 1_700_000_000_000 + i,
    requestId: `${tag}-${i}`,
    method: i % 2 ? 'GET' : 'PUT',
    url: `http://ring.svc.localhost/k${i}`,
    operation: i % 2 ? 'GetObject' : 'PutObject',
    bucket: 'ring',
    key: `k${i}`,
    status: i % 5 === 0 ? 404 : 200,
    ...(i % 5 === 0 ? { code: 'NoSuchKey' } : {}),
    bytesIn: i % 2 ? 0 : i,
    bytesOut: i % 2 ? i : 0,
    durationMs: i % 7,
    accessKeyId: 'svcadmin',
    requestHeaders: [['x-svc-date', 'Tue, 14 Nov 2023 22:13:20 GMT'], ['x-n', String(i)]],
    responseHeaders: [['x-svc-request-id', `${tag}-${i}`]],
  };
}

const channels: BroadcastChannel[] = [];
afterEach(() => {
  for (const c of channels.splice(0)) c.close();
});

/** Everything broadcast on the log channel (by any log in this process) from now on. */
function listen(): LoggedEntry[] {
  const got: LoggedEntry[] = [];
  const c = new BroadcastChannel(LOG_CHANNEL);
  c.onmessage = (e: MessageEvent) => got.push(e.data as LoggedEntry);
  channels.push(c);
  return got;
}

function setup(capacity: number) {
  const factory = new IDBFactory();
  const tag = `t${++run}`;
  // No wait for company: these tests await each write, and batching is not what they check.
  return { factory, tag, log: createRequestLog({ indexedDB: factory, capacity, delayMs: 0 }) };
}

describe('ring buffer', () => {
  it.each([1, 7, 50, 123])('keeps exactly the newest 50 after 50 + %i writes, in order', async (k) => {
    const { factory, tag, log } = setup(50);
    for (let i = 0; i < 50 + k; i++) await log.write(entry(tag, i));
    const newestFirst = await readLog(1000, factory);
    expect(newestFirst).toHaveLength(50);
    const ids = newestFirst.map((e) => e.requestId).reverse();
    expect(ids).toEqual(Array.from({ length: 50 }, (_, j) => `${tag}-${k + j}`));
    // seq numbers increase by one per write, with nothing missing in the kept window.
    expect(newestFirst.map((e) => e.seq).reverse()).toEqual(Array.from({ length: 50 }, (_, j) => k + j + 1));
  });

  it('keeps everything below capacity, and exactly capacity at capacity', async () => {
    const { factory, tag, log } = setup(50);
    for (let i = 0; i < 30; i++) await log.write(entry(tag, i));
    expect((await readLog(1000, factory)).map((e) => e.requestId).reverse())
      .toEqual(Array.from({ length: 30 }, (_, i) => `${tag}-${i}`));
    for (let i = 30; i < 50; i++) await log.write(entry(tag, i));
    expect(await readLog(1000, factory)).toHaveLength(50);
    await log.write(entry(tag, 50));
    const after = await readLog(1000, factory);
    expect(after).toHaveLength(50);
    expect(after.at(-1)!.requestId).toBe(`${tag}-1`); // the oldest one fell off
    expect(after[0]!.requestId).toBe(`${tag}-50`);
  });

  it('keeps the newest entries when many writes overlap', async () => {
    const { factory, tag, log } = setup(50);
    await Promise.all(Array.from({ length: 180 }, (_, i) => log.write(entry(tag, i))));
    const ids = (await readLog(1000, factory)).map((e) => e.requestId).reverse();
    expect(ids).toEqual(Array.from({ length: 50 }, (_, j) => `${tag}-${130 + j}`));
  });

  it('stores each entry whole, with its seq; readLog returns the newest `limit` first', async () => {
    const { factory, tag, log } = setup(50);
    for (let i = 0; i < 60; i++) await log.write(entry(tag, i));
    const three = await readLog(3, factory);
    expect(three.map((e) => e.requestId)).toEqual([`${tag}-59`, `${tag}-58`, `${tag}-57`]);
    expect(three[0]).toEqual({ ...entry(tag, 59), seq: 60 });
    expect(three[2]).toEqual({ ...entry(tag, 57), seq: 58 });
    expect(three[1]!.code).toBeUndefined();
    const five = (await readLog(100, factory)).find((e) => e.requestId === `${tag}-55`);
    expect(five).toEqual({ ...entry(tag, 55), seq: 56 });
    expect(five!.code).toBe('NoSuchKey');
  });

  it('the default capacity is 10,000', async () => {
    const factory = new IDBFactory();
    const tag = `t${++run}`;
    const log = createRequestLog({ indexedDB: factory });
    const n = 10_000 + 5;
    // Written as a busy worker writes them: many at once, in batches.
    await Promise.all(Array.from({ length: n }, (_, i) => log.write(entry(tag, i))));
    const all = await readLog(20_000, factory);
    expect(all).toHaveLength(10_000);
    expect(all.at(-1)!.requestId).toBe(`${tag}-5`);
    expect(all[0]!.requestId).toBe(`${tag}-${n - 1}`);
  });
});

describe('broadcast', () => {
  it('every write is broadcast once, with its seq, after it is stored', async () => {
    const got = listen();
    const { factory, tag, log } = setup(50);
    // A viewer that reads the database when a message comes finds the entry there.
    const foundOnMessage: Promise<boolean>[] = [];
    const viewer = new BroadcastChannel(LOG_CHANNEL);
    channels.push(viewer);
    viewer.onmessage = (e: MessageEvent) => {
      const id = (e.data as LoggedEntry).requestId;
      if (id.startsWith(`${tag}-`)) foundOnMessage.push(readLog(100, factory).then((rows) => rows.some((r) => r.requestId === id)));
    };
    for (let i = 0; i < 55; i++) await log.write(entry(tag, i));
    await expect.poll(() => got.filter((e) => e.requestId.startsWith(`${tag}-`)).length).toBe(55);
    const mine = got.filter((e) => e.requestId.startsWith(`${tag}-`));
    expect(mine.map((e) => e.requestId)).toEqual(Array.from({ length: 55 }, (_, i) => `${tag}-${i}`));
    mine.forEach((e, i) => expect(e).toEqual({ ...entry(tag, i), seq: i + 1 }));
    await expect.poll(() => foundOnMessage.length).toBe(55);
    expect(await Promise.all(foundOnMessage)).toEqual(Array(55).fill(true));
  });
});

describe('after the log database is deleted', () => {
  it('the next writes go to a new database (a viewer may clear the log by deleting it)', async () => {
    const { factory, tag, log } = setup(50);
    await log.write(entry(tag, 0));
    await new Promise<void>((resolve, reject) => {
      const r = factory.deleteDatabase(LOG_DB);
      r.onsuccess = () => resolve();
      r.onerror = () => reject(r.error);
    });
    await log.write(entry(tag, 1));
    await log.write(entry(tag, 2));
    expect((await readLog(10, factory)).map((e) => e.requestId)).toEqual([`${tag}-2`, `${tag}-1`]);
  });
});
