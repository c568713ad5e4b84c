// The slow-body bucket swap over a real socket to the HTTP server (node/server.ts): Alice's signed
// PUT (or Upload Part) sends its headers and part of its body; Alice deletes her bucket; Bob,
// another account, creates a bucket of the same name; Alice's body finishes. What must hold
// (docs/browser.md, "Bucket identity"): 404 NoSuchBucket for Alice, Bob's bucket holds nothing of
// hers, his usage is unchanged, the database is exactly as before her body finished, and no body
// record is left behind.
//
// The first part of Alice's body is larger than the socket buffers, so its 'drain' means the server
// is reading it: her request has passed its checks. The server's database is read through its
// IDBFactory (fake-indexeddb), caught as the server opens it.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http from 'node:http';
import { once } from 'node:events';
import { IDBFactory as FakeFactory } from 'fake-indexeddb';
import { startServer } from '../../node/server.ts';
import { signHeaders, ROOT } from '../support/sign.ts';
import { accountXml, dbState, orphans } from './identity-helpers.ts';

type Creds = { accessKeyId: string; secret: string };
const ALICE: Creds = { accessKeyId: 'alice', secret: 'alice-secret' };
const BOB: Creds = { accessKeyId: 'bob', secret: 'bob-secret-1' };
const MiB = 1024 * 1024;
const tag = (text: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];

let srv: Awaited<ReturnType<typeof startServer>>;
let serverFactory: IDBFactory | undefined;

beforeAll(async () => {
  const open = FakeFactory.prototype.open;
  FakeFactory.prototype.open = function (this: IDBFactory, ...args: Parameters<IDBFactory['open']>) {
    if (args[0] === 'swbucket') serverFactory ??= this;
    return open.apply(this, args);
  };
  try {
    srv = await startServer({ port: 0, log: () => {} });
  } finally {
    FakeFactory.prototype.open = open;
  }
  expect(serverFactory, 'the server opened its database through fake-indexeddb').toBeDefined();
  for (const c of [ALICE, BOB]) await ok('PUT', `/?account=${c.accessKeyId}`, ROOT, accountXml(c.secret));
});
afterAll(async () => {
  await srv?.close();
});

/** The server's whole database, read through a second connection that is closed at once. */
async function serverDb(): Promise<Record<string, unknown[]>> {
  const request = serverFactory!.open('swbucket');
  await once(request as unknown as EventTarget, 'success');
  const db = request.result;
  try {
    return await dbState(db);
  } finally {
    db.close();
  }
}

async function call(method: string, path: string, creds: Creds, body?: string) {
  const url = `${srv.url}${path}`;
  const headers = signHeaders(method, url, new Headers(), creds);
  const init: RequestInit = { method, headers };
  if (body !== undefined || method === 'PUT' || method === 'POST') init.body = new TextEncoder().encode(body ?? '');
  const res = await fetch(url, init);
  return { status: res.status, text: await res.text() };
}
async function ok(method: string, path: string, creds: Creds, body?: string) {
  const r = await call(method, path, creds, body);
  expect(r.status, `${method} ${path}: ${r.text}`).toBeLessThan(300);
  return r;
}
async function usedBytes(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const m of (await ok('GET', '/?accounts', ROOT)).text.matchAll(/<Account>([\s\S]*?)<\/Account>/g)) {
    out[tag(m[1]!, 'AccessKeyId')!] = Number(tag(m[1]!, 'UsedBytes'));
  }
  return out;
}

/**
 * A signed PUT over node:http that sends its headers and `first` bytes of its body, and the rest
 * only when told. `reading` resolves once the server has taken in the first part.
 */
function slowPut(path: string, creds: Creds, first: number, rest: number) {
  const url = `${srv.url}${path}`;
  const h = signHeaders('PUT', url, new Headers({ 'content-length': String(first + rest) }), creds);
  const req = http.request({ host: '127.0.0.1', port: srv.port, method: 'PUT', path, headers: Object.fromEntries(h), agent: false });
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  const accepted = req.write(Buffer.alloc(first, 'a'));
  expect(accepted, 'the first part is larger than the socket buffers').toBe(false);
  const reading = Promise.race([
    once(req, 'drain'),
    answer.then((r) => {
      throw new Error(`answered before its body was read: ${r.status} ${r.text}`);
    }),
  ]);
  return { reading, answer, finish: () => req.end(Buffer.alloc(rest, 'b')) };
}

describe('over a socket: Alice\'s body finishes after her bucket was deleted and Bob created one of the same name', () => {
  it('PUT Object → 404 NoSuchBucket; Bob\'s bucket holds nothing of hers, his usage is unchanged, no orphan bodies', { timeout: 60_000 }, async () => {
    await ok('PUT', '/swap-put/', ALICE);
    const put = slowPut('/swap-put/k', ALICE, 24 * MiB, MiB);
    await put.reading;

    await ok('DELETE', '/swap-put/', ALICE);
    await ok('PUT', '/swap-put/', BOB);
    const usage = await usedBytes();
    const before = await serverDb();

    put.finish();
    const r = await put.answer;
    expect(r.status, r.text).toBe(404);
    expect(tag(r.text, 'Code')).toBe('NoSuchBucket');

    expect((await ok('GET', '/swap-put/', BOB)).text).not.toContain('<Key>');
    expect((await call('GET', '/swap-put/k', BOB)).status).toBe(404);
    expect(await usedBytes()).toEqual(usage);
    expect(usage.bob).toBe(0);
    const after = await serverDb();
    expect(after, 'the database after Alice\'s body finished').toEqual(before);
    expect(orphans(after)).toEqual({ unreferenced: [], dangling: [] });
    await ok('DELETE', '/swap-put/', BOB);
  });

  it('Upload Part of an upload begun in the old bucket → 404 NoSuchBucket; nothing of hers in Bob\'s upload or usage', { timeout: 60_000 }, async () => {
    await ok('PUT', '/swap-part/', ALICE);
    const id = tag((await ok('POST', '/swap-part/k?uploads', ALICE)).text, 'UploadId')!;
    const part = slowPut(`/swap-part/k?partNumber=1&uploadId=${id}`, ALICE, 24 * MiB, MiB);
    await part.reading;

    await ok('DELETE', `/swap-part/k?uploadId=${id}`, ALICE);
    await ok('DELETE', '/swap-part/', ALICE);
    await ok('PUT', '/swap-part/', BOB);
    const bobs = tag((await ok('POST', '/swap-part/k?uploads', BOB)).text, 'UploadId')!;
    await ok('PUT', `/swap-part/k?partNumber=1&uploadId=${bobs}`, BOB, 'bob part');
    const usage = await usedBytes();
    const before = await serverDb();

    part.finish();
    const r = await part.answer;
    expect(r.status, r.text).toBe(404);
    expect(tag(r.text, 'Code')).toBe('NoSuchBucket');

    expect(await usedBytes()).toEqual(usage);
    expect(usage.bob).toBe('bob part'.length);
    const after = await serverDb();
    expect(after, 'the database after Alice\'s body finished').toEqual(before);
    expect(orphans(after)).toEqual({ unreferenced: [], dangling: [] });
    await ok('DELETE', `/swap-part/k?uploadId=${bobs}`, BOB);
    await ok('DELETE', '/swap-part/', BOB);
  });
});
