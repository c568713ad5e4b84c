// The typed client (src/client/) in real Chromium against the built worker: every method once with
// its typed result, the paged iterators across several pages, typed errors (code, status, message,
// request id), keys that URL parsing likes to mangle, the signature as the worker received it
// (checked against the test suite's own Node signer), Blob bodies, and a presigned <img>.
// The client used is the page's own `window.swbucket.client` (root) and `createClient` from it.
import { describe, it, expect, beforeAll } from 'vitest';
import type { Page } from 'playwright-core';
import { createHash } from 'node:crypto';
import { useChromiumServicePage } from './support/fixture.ts';
import { makePng } from './support/media.ts';
import { READ_LOG_IN_PAGE } from './support/log.ts';
import { hmac, stringToSign } from '../support/sign.ts';
import type { Client, createClient } from '../../src/client/index.ts';
import type { LoggedEntry } from '../../sw/log/ring.ts';

// ------------------------------------------------------------------ page harness

interface SwGlobal {
  version: string;
  endpoint: string;
  client: Client;
  createClient: typeof createClient;
}

type LogEntry = LoggedEntry;

/** A thrown value, as plain fields. */
interface Thrown {
  isError: boolean;
  name: string;
  code?: string;
  status?: number;
  message: string;
  requestId?: string | null;
  resource?: string | null;
  /** Same constructor as the first SvcClientError seen in this page (the class is not exported to window). */
  sameClass: boolean;
}

interface Tools {
  sw: SwGlobal;
  /** Awaits p; what it threw as plain fields, or null when it resolved. */
  thrown(p: Promise<unknown>): Promise<Thrown | null>;
  /** Every entry of the request log (the worker writes it after answering, so it may lag). */
  log(): Promise<LogEntry[]>;
  /** Waits until the log has the entry of this request id. */
  entry(requestId: string): Promise<LogEntry>;
  bytes(text: string): Uint8Array<ArrayBuffer>;
}

/** Built inside the page from its source text (it must not reference anything of this module). */
function makeTools(readLogSrc: string): Tools {
  const w = window as unknown as { swbucket: SwGlobal; __svcErrorClass?: unknown };
  const log = new Function(`return (${readLogSrc})`)() as () => Promise<LogEntry[]>;
  return {
    sw: w.swbucket,
    async thrown(p) {
      try {
        await p;
        return null;
      } catch (e) {
        const o = e as Record<string, unknown>;
        if (o && o.name === 'SvcClientError') w.__svcErrorClass ??= o.constructor;
        return {
          isError: e instanceof Error,
          name: String(o?.name),
          message: String(o?.message),
          sameClass: Boolean(o) && o.constructor === w.__svcErrorClass,
          ...(o && 'code' in o ? { code: o.code as string } : {}),
          ...(o && 'status' in o ? { status: o.status as number } : {}),
          ...(o && 'requestId' in o ? { requestId: o.requestId as string | null } : {}),
          ...(o && 'resource' in o ? { resource: o.resource as string | null } : {}),
        };
      }
    },
    log,
    async entry(requestId) {
      for (let i = 0; i < 200; i++) {
        const found = (await log()).find((e) => e.requestId === requestId);
        if (found) return found;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`no log entry for request ${requestId}`);
    },
    bytes: (text) => new TextEncoder().encode(text),
  };
}

const chromium = useChromiumServicePage();
let page: Page;

/** Runs `fn` in the page with the tools; `fn` is sent as source, so it may only use its arguments. */
function run<R, A = undefined>(fn: (t: Tools, arg: A) => Promise<R>, arg?: A): Promise<R> {
  return page.evaluate(async ({ fnSrc, toolsSrc, readLogSrc, arg }) => {
    const tools = (new Function(`return (${toolsSrc})`)() as (r: string) => Tools)(readLogSrc);
    const f = new Function(`return (${fnSrc})`)() as (t: Tools, a: unknown) => Promise<unknown>;
    return f(tools, arg);
  }, { fnSrc: fn.toString(), toolsSrc: makeTools.toString(), readLogSrc: READ_LOG_IN_PAGE, arg: arg as unknown }) as Promise<R>;
}

const md5 = (b: string | Uint8Array) => createHash('md5').update(b).digest('hex');
/** docs/protocol.md, "ETags and Content-MD5": md5hex(e1 + "-" + … + eN + "-") + "-1". */
const multipartEtag = (etags: string[]) => md5(etags.map((e) => e + '-').join('')) + '-1';
const header = (e: LogEntry, name: string) => e.requestHeaders.find(([n]) => n.toLowerCase() === name)?.[1];

beforeAll(() => {
  page = chromium.page;
});

// ------------------------------------------------------------------ buckets

describe('bucket methods', () => {
  it('createBucket (with acl), listBuckets, headBucket, get/putBucketAcl, deleteBucket', async () => {
    const r = await run(async ({ sw: { client }, thrown }) => {
      await client.createBucket('cl-private');
      await client.createBucket('cl-public', { acl: 'public-read' });
      const listed = await client.listBuckets();
      const acls = [await client.getBucketAcl('cl-private'), await client.getBucketAcl('cl-public')];
      await client.putBucketAcl('cl-private', 'public-read');
      await client.putBucketAcl('cl-public', 'private');
      const aclsAfter = [await client.getBucketAcl('cl-private'), await client.getBucketAcl('cl-public')];
      const heads = [await client.headBucket('cl-private'), await client.headBucket('cl-missing')];
      await client.createBucket('cl-doomed');
      const doomedBefore = await client.headBucket('cl-doomed');
      await client.deleteBucket('cl-doomed');
      const doomedAfter = await client.headBucket('cl-doomed');
      const deleteMissing = await thrown(client.deleteBucket('cl-doomed'));
      return {
        owner: listed.owner,
        buckets: listed.buckets.map((b) => ({ name: b.name, isDate: b.creationDate instanceof Date, age: Date.now() - b.creationDate.getTime() })),
        acls, aclsAfter, heads, doomedBefore, doomedAfter, deleteMissing,
        afterList: (await client.listBuckets()).buckets.map((b) => b.name),
      };
    });
    expect(r.owner.id).toBe('svcadmin');
    expect(r.owner.displayName).not.toBe('');
    expect(r.buckets.map((b) => b.name)).toEqual(['cl-private', 'cl-public']);
    for (const b of r.buckets) {
      expect(b.isDate).toBe(true);
      expect(b.age).toBeGreaterThanOrEqual(-60_000); // a real date, not NaN and not 1970
      expect(b.age).toBeLessThan(10 * 60_000);
    }
    expect(r.acls).toEqual(['private', 'public-read']);
    expect(r.aclsAfter).toEqual(['public-read', 'private']);
    expect(r.heads).toEqual([true, false]);
    expect([r.doomedBefore, r.doomedAfter]).toEqual([true, false]);
    expect(r.deleteMissing).toMatchObject({ name: 'SvcClientError', code: 'NoSuchBucket', status: 404 });
    expect(r.afterList).toEqual(['cl-private', 'cl-public']);
  });

  it('getBucketVersioning / putBucketVersioning', async () => {
    const r = await run(async ({ sw: { client } }) => {
      await client.createBucket('cl-vers-cfg');
      const never = await client.getBucketVersioning('cl-vers-cfg');
      await client.putBucketVersioning('cl-vers-cfg', 'Enabled');
      const enabled = await client.getBucketVersioning('cl-vers-cfg');
      await client.putBucketVersioning('cl-vers-cfg', 'Suspended');
      const suspended = await client.getBucketVersioning('cl-vers-cfg');
      return { never: never ?? null, enabled, suspended };
    });
    expect(r).toEqual({ never: null, enabled: 'Enabled', suspended: 'Suspended' });
  });
});

// ------------------------------------------------------------------ objects

describe('object methods', () => {
  beforeAll(async () => {
    await run(async ({ sw: { client } }) => {
      await client.createBucket('cl-obj');
      await client.createBucket('cl-obj2');
    });
  });

  it('putObject with metadata and headers; headObject and getObject return them typed', async () => {
    const body = 'hello, typed client';
    const r = await run(async ({ sw: { client } }, body) => {
      const put = await client.putObject('cl-obj', 'docs/hello.txt', body, {
        contentType: 'text/plain; charset=utf-8',
        cacheControl: 'max-age=60',
        contentDisposition: 'inline; filename="greeting.txt"',
        contentLanguage: 'en',
        contentEncoding: 'identity',
        expires: 'Thu, 01 Jan 2037 00:00:00 GMT',
        metadata: { Author: 'Ada', 'x-thing': 'a b c' },
      });
      const head = await client.headObject('cl-obj', 'docs/hello.txt');
      const got = await client.getObject('cl-obj', 'docs/hello.txt');
      const text = await got.response.text();
      const pick = (h: Headers) => ({
        cacheControl: h.get('cache-control'), disposition: h.get('content-disposition'), language: h.get('content-language'),
        encoding: h.get('content-encoding'), expires: h.get('expires'), acceptRanges: h.get('accept-ranges'),
      });
      return {
        put,
        head: { ...head, headers: pick(head.headers), lastModified: head.lastModified.getTime() },
        got: { status: got.status, notModified: got.notModified, etag: got.etag, size: got.size, contentType: got.contentType, metadata: got.metadata, contentRange: got.contentRange, headers: pick(got.headers) },
        text,
      };
    }, body);
    expect(r.put.etag).toBe(md5(body));
    expect(r.put.requestId).toMatch(/\S/);
    expect(r.put.versionId).toBeUndefined();
    expect(r.head).toMatchObject({
      etag: md5(body), size: Buffer.byteLength(body), contentType: 'text/plain; charset=utf-8',
      metadata: { author: 'Ada', 'x-thing': 'a b c' }, notModified: false,
      headers: { cacheControl: 'max-age=60', disposition: 'inline; filename="greeting.txt"', language: 'en', encoding: 'identity', expires: 'Thu, 01 Jan 2037 00:00:00 GMT' },
    });
    expect(Math.abs(r.head.lastModified - Date.now())).toBeLessThan(5 * 60_000);
    expect(r.got).toMatchObject({
      status: 200, notModified: false, etag: md5(body), size: Buffer.byteLength(body), contentType: 'text/plain; charset=utf-8',
      metadata: { author: 'Ada', 'x-thing': 'a b c' }, contentRange: null,
      headers: { acceptRanges: 'bytes', cacheControl: 'max-age=60' },
    });
    expect(r.text).toBe(body);
  });

  it('getObject: ranges (string and object forms), ifModifiedSince → notModified, download, ifNotFound', async () => {
    const r = await run(async ({ sw: { client }, thrown }) => {
      await client.putObject('cl-obj', 'digits.txt', '0123456789');
      await client.putObject('cl-obj', 'fallback.html', '<p>fallback</p>', { contentType: 'text/html' });
      const range = async (o: Parameters<typeof client.getObject>[2]) => {
        const g = await client.getObject('cl-obj', 'digits.txt', o);
        return { status: g.status, contentRange: g.contentRange, text: await g.response.text() };
      };
      const ranges = {
        str: await range({ range: 'bytes=2-5' }),
        startEnd: await range({ range: { start: 3, end: 4 } }),
        open: await range({ range: { start: 7 } }),
        suffix: await range({ range: { suffix: 3 } }),
      };
      const head = await client.headObject('cl-obj', 'digits.txt');
      const notModified = await client.getObject('cl-obj', 'digits.txt', { ifModifiedSince: head.lastModified });
      const notModifiedHead = await client.headObject('cl-obj', 'digits.txt', { ifModifiedSince: head.lastModified });
      const modified = await client.getObject('cl-obj', 'digits.txt', { ifModifiedSince: new Date(head.lastModified.getTime() - 3600_000) });
      const download = await client.getObject('cl-obj', 'digits.txt', { download: 'report final.txt' });
      const fallback = await client.getObject('cl-obj', 'no/such/page.html', { ifNotFound: 'fallback.html' });
      const noFallback = await thrown(client.getObject('cl-obj', 'no/such/page.html', { ifNotFound: 'also-missing.html' }));
      const badRange = await thrown(client.getObject('cl-obj', 'digits.txt', { range: { start: 50 } }));
      return {
        ranges,
        notModified: { status: notModified.status, notModified: notModified.notModified, etag: notModified.etag, body: await notModified.response.text() },
        notModifiedHead: notModifiedHead.notModified,
        modified: { status: modified.status, notModified: modified.notModified, text: await modified.response.text() },
        download: { disposition: download.headers.get('content-disposition'), text: await download.response.text() },
        fallback: { status: fallback.status, etag: fallback.etag, contentType: fallback.contentType, text: await fallback.response.text() },
        noFallback, badRange,
      };
    });
    expect(r.ranges).toEqual({
      str: { status: 206, contentRange: 'bytes 2-5/10', text: '2345' },
      startEnd: { status: 206, contentRange: 'bytes 3-4/10', text: '34' },
      open: { status: 206, contentRange: 'bytes 7-9/10', text: '789' },
      suffix: { status: 206, contentRange: 'bytes 7-9/10', text: '789' },
    });
    expect(r.notModified).toEqual({ status: 304, notModified: true, etag: md5('0123456789'), body: '' });
    expect(r.notModifiedHead).toBe(true);
    expect(r.modified).toEqual({ status: 200, notModified: false, text: '0123456789' });
    expect(r.download.disposition).toMatch(/^attachment; filename="report final.txt"/);
    expect(r.download.text).toBe('0123456789');
    expect(r.fallback).toEqual({ status: 404, etag: md5('<p>fallback</p>'), contentType: 'text/html', text: '<p>fallback</p>' });
    expect(r.noFallback).toMatchObject({ name: 'SvcClientError', code: 'NoSuchKey', status: 404 });
    expect(r.badRange).toMatchObject({ name: 'SvcClientError', code: 'InvalidRange', status: 416 });
  });

  it('versions: versionId on writes and reads, listVersions, listAllVersions over pages, deleteObjects with versionId', async () => {
    const r = await run(async ({ sw: { client } }) => {
      await client.createBucket('cl-vers');
      await client.putBucketVersioning('cl-vers', 'Enabled');
      const v1 = await client.putObject('cl-vers', 'doc.txt', 'one');
      const v2 = await client.putObject('cl-vers', 'doc.txt', 'two');
      const v3 = await client.putObject('cl-vers', 'other.txt', 'three');
      const readV1 = await client.getObject('cl-vers', 'doc.txt', { versionId: v1.versionId! });
      const headV1 = await client.headObject('cl-vers', 'doc.txt', { versionId: v1.versionId! });
      const current = await client.getObject('cl-vers', 'doc.txt');
      const page1 = await client.listVersions('cl-vers', { maxKeys: 1 });
      const all: { key: string; versionId: string; isLatest: boolean; etag: string; size: number; date: boolean }[] = [];
      for await (const v of client.listAllVersions('cl-vers', { maxKeys: 1 })) {
        all.push({ key: v.key, versionId: v.versionId, isLatest: v.isLatest, etag: v.etag, size: v.size, date: v.lastModified.getTime() > 0 });
      }
      const del = await client.deleteObjects('cl-vers', [{ key: 'doc.txt', versionId: v1.versionId! }, { key: 'doc.txt', versionId: 987654 }]);
      const after: string[] = [];
      for await (const v of client.listAllVersions('cl-vers')) after.push(`${v.key}@${v.versionId}`);
      return {
        ids: [v1.versionId, v2.versionId, v3.versionId],
        readV1: { text: await readV1.response.text(), versionId: readV1.versionId },
        headV1: { etag: headV1.etag, versionId: headV1.versionId, size: headV1.size },
        current: { text: await current.response.text(), versionId: current.versionId },
        page1: { n: page1.versions.length, isTruncated: page1.isTruncated, nextMarker: page1.nextMarker },
        all, del, after,
      };
    });
    const [v1, v2, v3] = r.ids as number[];
    expect(typeof v1).toBe('number');
    expect(v2).toBeGreaterThan(v1!);
    expect(v3).toBeGreaterThan(v2!);
    expect(r.readV1).toEqual({ text: 'one', versionId: v1 });
    expect(r.headV1).toEqual({ etag: md5('one'), versionId: v1, size: 3 });
    expect(r.current).toEqual({ text: 'two', versionId: v2 });
    expect(r.page1).toMatchObject({ n: 1, isTruncated: true, nextMarker: 'doc.txt' });
    expect(r.all).toEqual([
      { key: 'doc.txt', versionId: String(v2), isLatest: true, etag: md5('two'), size: 3, date: true },
      { key: 'doc.txt', versionId: String(v1), isLatest: false, etag: md5('one'), size: 3, date: true },
      { key: 'other.txt', versionId: String(v3), isLatest: true, etag: md5('three'), size: 5, date: true },
    ]);
    expect(r.del.deleted).toEqual([{ key: 'doc.txt', versionId: String(v1) }]);
    expect(r.del.errors).toEqual([{ key: 'doc.txt', code: 'NoSuchVersion', message: expect.any(String) }]);
    expect(r.after).toEqual([`doc.txt@${v2}`, `other.txt@${v3}`]);
  });

  it('deleteObject, deleteObjects verbose and quiet', async () => {
    const r = await run(async ({ sw: { client }, thrown }) => {
      for (const k of ['d/1', 'd/2', 'd/3', 'd/4', 'd/5', 'd/<&>']) await client.putObject('cl-obj', k, k);
      await client.deleteObject('cl-obj', 'd/1');
      const gone = await thrown(client.headObject('cl-obj', 'd/1'));
      const missing = await thrown(client.deleteObject('cl-obj', 'd/1'));
      const verbose = await client.deleteObjects('cl-obj', ['d/2', 'd/3', 'd/never', 'd/<&>']);
      const quiet = await client.deleteObjects('cl-obj', ['d/4', { key: 'd/5' }], { quiet: true });
      const left = (await client.listObjects('cl-obj', { prefix: 'd/' })).objects.map((o) => o.key);
      return { gone, missing, verbose, quiet, left };
    });
    expect(r.gone).toMatchObject({ name: 'SvcClientError', status: 404 });
    expect(r.missing).toMatchObject({ name: 'SvcClientError', code: 'NoSuchKey', status: 404 });
    expect(r.verbose.errors).toEqual([]);
    expect(r.verbose.deleted.map((d) => d.key).sort()).toEqual(['d/2', 'd/3', 'd/<&>', 'd/never']);
    expect(r.quiet).toEqual({ deleted: [], errors: [] });
    expect(r.left).toEqual([]);
  });

  // Bodies are deleted by range when their ids, which start with the key, hold nothing else
  // (sw/store/rules/bodies.ts, dropBodies); a moved object keeps its body's id, inside the folder's run.
  it('deleteObjects of a folder leaves the body of a key moved out of it, and the keys around it', async () => {
    const r = await run(async ({ sw: { client } }) => {
      const keys = ['e', 'f/1', 'f/2', 'f/3', 'f/4', 'f/5', 'g'];
      for (const k of keys) await client.putObject('cl-obj', k, `body of ${k}`);
      await client.moveObject('cl-obj', 'f/3', 'moved');
      const del = await client.deleteObjects('cl-obj', ['f/1', 'f/2', 'f/4', 'f/5']);
      const read = async (k: string) => (await client.getObject('cl-obj', k)).response.text();
      const left = (await client.listObjects('cl-obj')).objects.map((o) => o.key).filter((k) => ['e', 'g', 'moved'].includes(k) || k.startsWith('f/'));
      const bodies = { e: await read('e'), g: await read('g'), moved: await read('moved') };
      await client.deleteObjects('cl-obj', ['e', 'g', 'moved']);
      return { errors: del.errors, left, bodies };
    });
    expect(r.errors).toEqual([]);
    expect(r.left).toEqual(['e', 'g', 'moved']);
    expect(r.bodies).toEqual({ e: 'body of e', g: 'body of g', moved: 'body of f/3' });
  });

  it('copyObject, moveObject, putObjectMeta', async () => {
    const r = await run(async ({ sw: { client }, thrown }) => {
      await client.putObject('cl-obj', 'src/photo.bin', 'PHOTO-BYTES', { contentType: 'image/x-test', metadata: { camera: 'pinhole' } });
      const copy = await client.copyObject({ bucket: 'cl-obj', key: 'src/photo.bin' }, 'cl-obj2', 'copies/photo.bin');
      const copied = await client.getObject('cl-obj2', 'copies/photo.bin');
      const srcStill = await client.headObject('cl-obj', 'src/photo.bin');
      const move = await client.moveObject('cl-obj2', 'copies/photo.bin', 'moved/photo.bin');
      const moved = await client.getObject('cl-obj2', 'moved/photo.bin');
      const moveSrc = await thrown(client.headObject('cl-obj2', 'copies/photo.bin'));
      const copyMissing = await thrown(client.copyObject({ bucket: 'cl-obj', key: 'src/none' }, 'cl-obj2', 'x'));
      await client.putObjectMeta('cl-obj2', 'moved/photo.bin', { contentType: 'image/png', cacheControl: 'no-store', metadata: { label: 'after' } });
      const meta = await client.headObject('cl-obj2', 'moved/photo.bin');
      return {
        copy, copied: { text: await copied.response.text(), contentType: copied.contentType, metadata: copied.metadata, etag: copied.etag },
        srcStill: srcStill.etag,
        move, moved: { text: await moved.response.text(), metadata: moved.metadata, etag: moved.etag },
        moveSrc, copyMissing,
        meta: { contentType: meta.contentType, cacheControl: meta.headers.get('cache-control'), metadata: meta.metadata, etag: meta.etag, size: meta.size },
      };
    });
    expect(r.copy.etag).toBe(md5('PHOTO-BYTES'));
    expect(r.copy.requestId).toMatch(/\S/);
    expect(r.copied).toEqual({ text: 'PHOTO-BYTES', contentType: 'image/x-test', metadata: { camera: 'pinhole' }, etag: md5('PHOTO-BYTES') });
    expect(r.srcStill).toBe(md5('PHOTO-BYTES'));
    expect(r.move.etag).toBe(md5('PHOTO-BYTES'));
    expect(r.moved).toEqual({ text: 'PHOTO-BYTES', metadata: { camera: 'pinhole' }, etag: md5('PHOTO-BYTES') });
    expect(r.moveSrc).toMatchObject({ name: 'SvcClientError', status: 404 });
    expect(r.copyMissing).toMatchObject({ name: 'SvcClientError', code: 'NoSuchKey', status: 404 });
    expect(r.meta).toEqual({ contentType: 'image/png', cacheControl: 'no-store', metadata: { label: 'after' }, etag: md5('PHOTO-BYTES'), size: 11 });
  });

  it('keys with space, +, %, emoji, / and dot segments round-trip through put, list, get, head, copy, presign and delete', async () => {
    const keys = ['with space.txt', 'a+b.txt', '100%.txt', 'lit%20eral', 'emoji 📷.jpg', 'dir/sub/file.txt', 'a/../b.txt', '../up.txt', 'x/./y', '..', 'q?x=1#frag', 'folder/', 'a//b', '/lead', 'back\\slash', "it's (1)!~*", 'tab\there'];
    const r = await run(async ({ sw: { client }, entry }, keys) => {
      const out: Record<string, unknown> = {};
      for (const key of keys) {
        const put = await client.putObject('cl-obj2', `k/${key}`, `body of ${key}`);
        const logged = await entry(put.requestId!);
        const got = await client.getObject('cl-obj2', `k/${key}`);
        const head = await client.headObject('cl-obj2', `k/${key}`);
        await client.copyObject({ bucket: 'cl-obj2', key: `k/${key}` }, 'cl-obj2', `c/${key}`);
        const copied = await (await client.getObject('cl-obj2', `c/${key}`)).response.text();
        const presigned = await fetch(await client.presign('cl-obj2', `k/${key}`, { expiresIn: 300 }));
        out[key] = {
          loggedKey: logged.key, text: await got.response.text(), headEtag: head.etag, copied,
          presigned: { status: presigned.status, text: await presigned.text() },
        };
      }
      const listed: string[] = [];
      for await (const o of client.listAllObjects('cl-obj2', { prefix: 'k/' })) if ('key' in o) listed.push(o.key);
      const del = await client.deleteObjects('cl-obj2', keys.map((k) => `c/${k}`));
      for (const key of keys) await client.deleteObject('cl-obj2', `k/${key}`);
      const left = (await client.listObjects('cl-obj2', { prefix: 'k/' })).objects.length + (await client.listObjects('cl-obj2', { prefix: 'c/' })).objects.length;
      return { out, listed, deleted: del.deleted.map((d) => d.key), errors: del.errors, left };
    }, keys);
    for (const key of keys) {
      expect(r.out[key], key).toEqual({
        loggedKey: `k/${key}`, text: `body of ${key}`, headEtag: md5(`body of ${key}`), copied: `body of ${key}`,
        presigned: { status: 200, text: `body of ${key}` },
      });
    }
    const sorted = (a: string[]) => [...a].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(r.listed).toEqual(sorted(keys.map((k) => `k/${k}`)));
    expect(r.deleted.sort()).toEqual(keys.map((k) => `c/${k}`).sort());
    expect(r.errors).toEqual([]);
    expect(r.left).toBe(0);
  });
});

// ------------------------------------------------------------------ listing

describe('listing', () => {
  const keys = ['a/1', 'a/2', 'b/1', 'b/c/2', 'c.txt', 'd.txt', 'e/x', 'f.txt'];

  it('listObjects, listObjectsPages and listAllObjects with a delimiter over several pages', async () => {
    const r = await run(async ({ sw: { client } }, keys) => {
      await client.createBucket('cl-list');
      for (const k of keys) await client.putObject('cl-list', k, k);
      const one = await client.listObjects('cl-list', { delimiter: '/', maxKeys: 2 });
      const pages = [];
      for await (const p of client.listObjectsPages('cl-list', { delimiter: '/', maxKeys: 2 })) {
        pages.push({ objects: p.objects.map((o) => o.key), prefixes: p.commonPrefixes, isTruncated: p.isTruncated, nextMarker: p.nextMarker ?? null });
      }
      const all: string[] = [];
      for await (const e of client.listAllObjects('cl-list', { delimiter: '/', maxKeys: 2 })) all.push('key' in e ? e.key : `prefix:${e.prefix}`);
      const flat: string[] = [];
      for await (const e of client.listAllObjects('cl-list', { maxKeys: 3 })) if ('key' in e) flat.push(e.key);
      const sub = await client.listObjects('cl-list', { prefix: 'b/', delimiter: '/' });
      const marker = await client.listObjects('cl-list', { marker: 'c.txt' });
      return {
        one: { ...one, objects: one.objects.map((o) => ({ ...o, lastModified: o.lastModified.getTime() > 0 })) },
        pages, all, flat,
        sub: { objects: sub.objects.map((o) => o.key), prefixes: sub.commonPrefixes, isTruncated: sub.isTruncated },
        marker: marker.objects.map((o) => o.key),
        first: marker.objects[0],
      };
    }, keys);
    expect(r.one).toEqual({ objects: [], commonPrefixes: ['a/', 'b/'], isTruncated: true, nextMarker: 'b/' });
    expect(r.pages).toEqual([
      { objects: [], prefixes: ['a/', 'b/'], isTruncated: true, nextMarker: 'b/' },
      { objects: ['c.txt', 'd.txt'], prefixes: [], isTruncated: true, nextMarker: 'd.txt' },
      { objects: ['f.txt'], prefixes: ['e/'], isTruncated: false, nextMarker: null },
    ]);
    expect(r.all).toEqual(['prefix:a/', 'prefix:b/', 'c.txt', 'd.txt', 'prefix:e/', 'f.txt']);
    expect(r.flat).toEqual(keys);
    expect(r.sub).toEqual({ objects: ['b/1'], prefixes: ['b/c/'], isTruncated: false });
    expect(r.marker).toEqual(['d.txt', 'e/x', 'f.txt']);
    expect(r.first).toMatchObject({ key: 'd.txt', etag: md5('d.txt'), size: 5, storageClass: 'STANDARD' });
  });
});

// ------------------------------------------------------------------ multipart

describe('multipart methods', () => {
  it('create, uploadPart, listParts (paged), listAllParts, listMultipartUploads, complete (ETag formula, object MD5, metadata), abort', async () => {
    const KiB = 1024;
    const sizes = [20 * KiB, 20 * KiB, 5];
    const partText = (i: number, size: number) => String.fromCharCode(97 + i).repeat(size);
    const parts = sizes.map((s, i) => partText(i, s));
    const r = await run(async ({ sw: { client }, thrown }, parts) => {
      await client.createBucket('cl-multi');
      const key = 'big/file.bin';
      const uploadId = await client.createMultipartUpload('cl-multi', key, { contentType: 'application/x-test', metadata: { origin: 'initiate' } });
      const etags = [];
      for (let i = 0; i < parts.length; i++) etags.push((await client.uploadPart('cl-multi', key, uploadId, i + 1, new Blob([parts[i]!]))).etag);
      const p1 = await client.listParts('cl-multi', key, uploadId, { maxParts: 2 });
      const p2 = await client.listParts('cl-multi', key, uploadId, { maxParts: 2, partNumberMarker: p1.nextPartNumberMarker });
      const all = [];
      for await (const p of client.listAllParts('cl-multi', key, uploadId)) all.push({ partNumber: p.partNumber, etag: p.etag, size: p.size, date: p.lastModified.getTime() > 0 });
      const uploads = await client.listMultipartUploads('cl-multi');
      const whole = parts.join('');
      const wholeMd5 = await (async () => {
        // Object MD5 for x-svc-object-md5: reuse the service's own answer of a plain PUT of the same bytes.
        const w = await client.putObject('cl-multi', 'scratch', whole);
        await client.deleteObject('cl-multi', 'scratch');
        return w.etag;
      })();
      const done = await client.completeMultipartUpload('cl-multi', key, uploadId,
        etags.map((etag, i) => ({ partNumber: i + 1, etag })), { objectMd5: wholeMd5, metadata: { origin: 'complete' } });
      const head = await client.headObject('cl-multi', key);
      const got = await (await client.getObject('cl-multi', key)).response.text();
      const afterComplete = await client.listMultipartUploads('cl-multi');
      const partAfter = await thrown(client.uploadPart('cl-multi', key, uploadId, 1, 'x'));

      const second = await client.createMultipartUpload('cl-multi', 'other.bin');
      await client.uploadPart('cl-multi', 'other.bin', second, 1, 'zz');
      const listedSecond = (await client.listMultipartUploads('cl-multi', { prefix: 'other' })).uploads.map((u) => u.uploadId);
      await client.abortMultipartUpload('cl-multi', 'other.bin', second);
      const afterAbort = (await client.listMultipartUploads('cl-multi')).uploads.length;
      const partAborted = await thrown(client.uploadPart('cl-multi', 'other.bin', second, 2, 'x'));
      const badComplete = await thrown(client.completeMultipartUpload('cl-multi', 'other.bin', second, [{ partNumber: 1, etag: 'x' }]));
      return {
        uploadId, etags, p1, p2, all,
        uploads: { ...uploads, uploads: uploads.uploads.map((u) => ({ key: u.key, uploadId: u.uploadId, initiatedAgo: Date.now() - u.initiated.getTime() })) },
        wholeMd5, done,
        head: { etag: head.etag, size: head.size, contentType: head.contentType, metadata: head.metadata, objectMd5: head.objectMd5 },
        got, afterComplete: afterComplete.uploads.length, partAfter, second, listedSecond, afterAbort, partAborted, badComplete,
      };
    }, parts);
    const partMd5s = parts.map((p) => md5(p));
    expect(r.uploadId).toMatch(/\S/);
    expect(r.uploadId).not.toMatch(/^\d+$/);
    expect(r.etags).toEqual(partMd5s);
    expect(r.p1.parts.map((p) => [p.partNumber, p.size, p.etag])).toEqual([[1, sizes[0], partMd5s[0]], [2, sizes[1], partMd5s[1]]]);
    expect(r.p1).toMatchObject({ isTruncated: true, nextPartNumberMarker: 2 });
    expect(r.p2.parts.map((p) => p.partNumber)).toEqual([3]);
    expect(r.p2.isTruncated).toBe(false);
    expect(r.all).toEqual(sizes.map((size, i) => ({ partNumber: i + 1, etag: partMd5s[i], size, date: true })));
    expect(r.uploads.uploads).toHaveLength(1);
    expect(r.uploads.uploads[0]).toMatchObject({ key: 'big/file.bin', uploadId: r.uploadId });
    expect(Math.abs(r.uploads.uploads[0]!.initiatedAgo)).toBeLessThan(5 * 60_000);
    expect(r.uploads.isTruncated).toBe(false);
    expect(r.wholeMd5).toBe(md5(parts.join('')));
    expect(r.done.etag).toBe(multipartEtag(partMd5s));
    expect(r.done.location).toBe('http://cl-multi.svc.localhost/big/file.bin');
    expect(r.done.requestId).toMatch(/\S/);
    expect(r.head).toEqual({
      etag: multipartEtag(partMd5s), size: sizes.reduce((a, b) => a + b, 0), contentType: 'application/x-test',
      metadata: { origin: 'complete' }, objectMd5: md5(parts.join('')),
    });
    expect(r.got).toBe(parts.join(''));
    expect(r.afterComplete).toBe(0);
    expect(r.partAfter).toMatchObject({ name: 'SvcClientError', code: 'NoSuchUpload', status: 404 });
    expect(r.listedSecond).toEqual([r.second]);
    expect(r.afterAbort).toBe(0);
    expect(r.partAborted).toMatchObject({ name: 'SvcClientError', code: 'NoSuchUpload', status: 404 });
    expect(r.badComplete).toMatchObject({ name: 'SvcClientError', code: 'NoSuchUpload', status: 404 });
  });

  it('listAllParts and listAllMultipartUploads follow their markers past a 1000-entry page', async () => {
    const N = 1001;
    const r = await run(async ({ sw: { client }, log }, N) => {
      await client.createBucket('cl-many');
      const uploadId = await client.createMultipartUpload('cl-many', 'parts.bin');
      const pool = async (count: number, width: number, job: (i: number) => Promise<unknown>) => {
        let next = 0;
        await Promise.all(Array.from({ length: width }, async () => {
          while (next < count) await job(next++);
        }));
      };
      await pool(N, 16, (i) => client.uploadPart('cl-many', 'parts.bin', uploadId, i + 1, new Blob([String(i)]), { checksum: false }));
      // Uploads of one key, so the second page starts inside that key (key-marker + upload-id-marker).
      await pool(N - 1, 16, () => client.createMultipartUpload('cl-many', 'same.bin'));
      // The log is written in batches after the answers: wait until it holds the setup's last entry.
      let before = -1;
      for (let i = 0; i < 100; i++) {
        const seq = Math.max(0, ...(await log()).map((e) => e.seq));
        if (seq === before) break;
        before = seq;
        await new Promise((r) => setTimeout(r, 100));
      }
      const parts: number[] = [];
      for await (const p of client.listAllParts('cl-many', 'parts.bin', uploadId)) parts.push(p.partNumber);
      const uploads: string[] = [];
      for await (const u of client.listAllMultipartUploads('cl-many')) uploads.push(`${u.key} ${u.uploadId}`);
      let calls: { operation: string; url: string }[] = [];
      for (let i = 0; i < 100; i++) {
        calls = (await log()).filter((e) => e.seq > before).map((e) => ({ operation: e.operation, url: e.url }));
        if (calls.length >= 4) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      return { parts, uploads, calls };
    }, N);
    expect(r.parts).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    expect(r.uploads).toHaveLength(N);
    expect(new Set(r.uploads).size).toBe(N);
    // ordered by key, then uploadId
    expect(r.uploads).toEqual([...r.uploads].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(r.uploads.filter((u) => u.startsWith('parts.bin ')).length).toBe(1);
    expect(r.calls.filter((c) => c.operation === 'ListParts')).toHaveLength(2);
    const listUploads = r.calls.filter((c) => c.operation === 'ListMultipartUploads');
    expect(listUploads).toHaveLength(2);
    const second = new URL(listUploads[1]!.url).searchParams;
    expect(second.get('key-marker')).toBe('same.bin');
    expect(second.get('upload-id-marker')).toMatch(/\S/);
  });
});

// ------------------------------------------------------------------ accounts

describe('account methods', () => {
  it('putAccount, listAccounts, a client of the new account, deleteAccount', async () => {
    const r = await run(async ({ sw: { client, createClient }, thrown }) => {
      await client.putAccount('alice', { secretAccessKey: 'alice-secret-1', displayName: 'Alice', quotaBytes: 1_000_000 });
      const alice = createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'alice', secretAccessKey: 'alice-secret-1' });
      await alice.createBucket('cl-alice');
      await alice.putObject('cl-alice', 'notes.txt', '0123456789');
      const aliceBuckets = await alice.listBuckets();
      const accounts = await client.listAccounts();
      const aliceListsAccounts = await thrown(alice.listAccounts());
      const rootReadsAlice = await thrown(client.getObject('cl-alice', 'notes.txt'));
      const deleteBusy = await thrown(client.deleteAccount('alice'));
      await client.putAccount('alice', { displayName: 'Alice Two' });
      const renamed = (await client.listAccounts()).find((a) => a.accessKeyId === 'alice');
      await alice.deleteObject('cl-alice', 'notes.txt');
      await alice.deleteBucket('cl-alice');
      await client.deleteAccount('alice');
      const afterDelete = (await client.listAccounts()).map((a) => a.accessKeyId);
      const aliceAfter = await thrown(alice.listBuckets());
      const deleteRoot = await thrown(client.deleteAccount('svcadmin'));
      return { aliceBuckets, accounts, aliceListsAccounts, rootReadsAlice, deleteBusy, renamed, afterDelete, aliceAfter, deleteRoot };
    });
    expect(r.aliceBuckets.owner).toEqual({ id: 'alice', displayName: 'Alice' });
    expect(r.aliceBuckets.buckets.map((b) => b.name)).toEqual(['cl-alice']);
    const byId = Object.fromEntries(r.accounts.map((a) => [a.accessKeyId, a]));
    expect(byId.alice).toEqual({ accessKeyId: 'alice', displayName: 'Alice', quotaBytes: 1_000_000, usedBytes: 10, root: false });
    expect(byId.svcadmin).toMatchObject({ accessKeyId: 'svcadmin', root: true });
    expect(byId.svcadmin).not.toHaveProperty('quotaBytes');
    expect(JSON.stringify(r.accounts)).not.toContain('alice-secret-1');
    expect(r.aliceListsAccounts).toMatchObject({ name: 'SvcClientError', code: 'AccessDenied', status: 403 });
    expect(r.rootReadsAlice).toMatchObject({ name: 'SvcClientError', code: 'AccessDenied', status: 403 });
    expect(r.deleteBusy).toMatchObject({ name: 'SvcClientError', code: 'AccountNotEmpty', status: 409 });
    expect(r.renamed).toMatchObject({ displayName: 'Alice Two', usedBytes: 10 });
    expect(r.afterDelete).not.toContain('alice');
    expect(r.afterDelete).toContain('svcadmin');
    expect(r.aliceAfter).toMatchObject({ name: 'SvcClientError', code: 'AccessDenied', status: 403 });
    expect(r.deleteRoot).toMatchObject({ name: 'SvcClientError', code: 'InvalidArgument', status: 400 });
  });
});

// ------------------------------------------------------------------ typed errors

describe('typed errors', () => {
  it('NoSuchKey, NoSuchBucket, AccessDenied, BucketAlreadyExists and a bodiless HEAD: SvcClientError with code, status, message and the logged request id; a bad bucket name before sending', async () => {
    const r = await run(async ({ sw: { client, createClient }, thrown, entry }) => {
      await client.createBucket('cl-err');
      await client.putObject('cl-err', 'secret.txt', 'private bytes');
      const anon = createClient({ endpoint: 'http://svc.localhost' });
      const cases = {
        noSuchKey: await thrown(client.getObject('cl-err', 'missing.txt')),
        noSuchBucket: await thrown(client.listObjects('cl-no-such-bucket')),
        accessDenied: await thrown(anon.getObject('cl-err', 'secret.txt')),
        anonList: await thrown(anon.listBuckets()),
        exists: await thrown(client.createBucket('cl-err')),
        headMissing: await thrown(client.headObject('cl-err', 'missing.txt')),
        headDenied: await thrown(anon.headObject('cl-err', 'secret.txt')),
        invalidName: await thrown(client.createBucket('Not_A_Bucket')),
      };
      const logged: Record<string, { code?: string; status: number } | null> = {};
      for (const [name, t] of Object.entries(cases)) {
        logged[name] = t?.requestId ? await entry(t.requestId).then((e) => ({ status: e.status, ...(e.code ? { code: e.code } : {}) })) : null;
      }
      return { cases, logged, anonPresign: await thrown(anon.presign('cl-err', 'secret.txt')), anonExplain: await anon.explainSignature('GET', 'cl-err', 'secret.txt') };
    });
    const want: Record<string, [string, number]> = {
      noSuchKey: ['NoSuchKey', 404],
      noSuchBucket: ['NoSuchBucket', 404],
      accessDenied: ['AccessDenied', 403],
      anonList: ['AccessDenied', 403],
      exists: ['BucketAlreadyExists', 409],
      headMissing: ['NotFound', 404],
      headDenied: ['AccessDenied', 403],
    };
    for (const [name, [code, status]] of Object.entries(want)) {
      const t = r.cases[name as keyof typeof r.cases];
      expect(t, name).toMatchObject({ isError: true, name: 'SvcClientError', sameClass: true, code, status });
      expect(t!.message, name).toMatch(/\S/);
      expect(t!.requestId, name).toMatch(/\S/);
      // the id is the one the worker logged for that very request, with that status
      expect(r.logged[name], name).toMatchObject({ status });
    }
    // bodies carry the service's code and resource; HEAD has no body, so its code comes from the status
    expect(r.logged.noSuchKey).toMatchObject({ code: 'NoSuchKey' });
    expect(r.cases.noSuchKey!.resource).toBe('/cl-err/missing.txt');
    expect(r.cases.accessDenied!.message).not.toMatch(/^403\b/); // the service's Message, not a status line
    expect(r.logged.headMissing).toMatchObject({ code: 'NoSuchKey' });
    // A bucket name the service would refuse is refused by the client, before it is lower-cased into a host name.
    expect(r.cases.invalidName).toMatchObject({ isError: true, name: 'SvcClientError', sameClass: true, code: 'InvalidBucketName', status: 400, requestId: null });
    expect(r.cases.invalidName!.message).toBe('The bucket name "Not_A_Bucket" is not valid: bucket names are 3–63 characters of a-z, 0-9 and -, '
      + 'starting and ending with a letter or digit (upper-case letters are not allowed: a host name does not keep them).');
    expect(r.logged.invalidName).toBeNull();
    expect(r.anonPresign).toMatchObject({ isError: true });
    expect(r.anonExplain).toBeNull();
  });
});

// ------------------------------------------------------------------ signing, bodies, presign

describe('signing', () => {
  it('every signed request carries x-svc-date and Authorization `SVC id:sig`, and the signature is what the Node signer computes', async () => {
    const r = await run(async ({ sw: { createClient }, log, thrown, entry }) => {
      // What the client hands to fetch, recorded on the way out: the log keeps no signature.
      const sent: { method: string; url: string; headers: [string, string][] }[] = [];
      const client = createClient({
        endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret',
        fetch: (input: RequestInfo | URL, init?: RequestInit) => {
          sent.push({ method: init?.method ?? 'GET', url: String(input), headers: [...new Headers(init?.headers)] });
          return fetch(input, init);
        },
      });
      const before = Math.max(0, ...(await log()).map((e) => e.seq));
      await client.createBucket('cl-sign');
      await client.putObject('cl-sign', 'dir/a b+c.txt', 'signed body', { contentType: 'text/plain', metadata: { Zeta: '1', alpha: ' 2 ' } });
      await client.getObject('cl-sign', 'dir/a b+c.txt', { range: 'bytes=0-1' });
      await client.headObject('cl-sign', 'dir/a b+c.txt');
      await client.putBucketVersioning('cl-sign', 'Enabled');
      await client.putObject('cl-sign', 'v.txt', 'v');
      const uploadId = await client.createMultipartUpload('cl-sign', 'mp.bin');
      await client.uploadPart('cl-sign', 'mp.bin', uploadId, 1, 'part');
      await client.listParts('cl-sign', 'mp.bin', uploadId);
      await client.deleteObjects('cl-sign', ['v.txt']);
      const last = (await client.putObject('cl-sign', 'last', '')).requestId!;
      const anon = (await thrown(createClient({ endpoint: 'http://svc.localhost' }).listBuckets()))!.requestId!;
      await entry(last);
      const anonEntry = await entry(anon);
      const mine = (await log()).filter((e) => e.seq > before && e.requestId !== anon);
      return { mine, anonEntry, sent };
    });
    const ops = r.mine.map((e) => e.operation);
    expect(ops).toEqual(expect.arrayContaining(['CreateBucket', 'PutObject', 'GetObject', 'HeadObject', 'PutBucketVersioning', 'CreateMultipartUpload', 'UploadPart', 'ListParts', 'DeleteObjects']));
    expect(r.mine.length).toBeGreaterThanOrEqual(11);
    expect(r.sent).toHaveLength(r.mine.length);
    for (const e of r.mine) {
      const what = `${e.method} ${e.url}`;
      expect(e.accessKeyId, what).toBe('svcadmin');
      expect(e.status, what).toBeLessThan(300);
      // The log shows who signed, never the signature.
      expect(header(e, 'authorization'), what).toBe('SVC svcadmin:…');
    }
    for (const s of r.sent) {
      const what = `${s.method} ${s.url}`;
      const headers = new Headers(s.headers);
      const date = headers.get('x-svc-date');
      const auth = headers.get('authorization');
      expect(date, what).toMatch(/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
      expect(Math.abs(Date.parse(date!) - Date.now()), what).toBeLessThan(15 * 60_000);
      expect(auth, what).toMatch(/^SVC svcadmin:[A-Za-z0-9+/]{43}=$/);
      // What the client sent, signed again by the suite's own signer (written from docs/protocol.md, "Signing").
      expect(auth, what).toBe(`SVC svcadmin:${hmac('svcadmin-secret', stringToSign(s.method, new URL(s.url), headers))}`);
    }
    // An anonymous client sends neither.
    expect(r.anonEntry).toMatchObject({ operation: 'ListBuckets', status: 403, code: 'AccessDenied' });
    expect(r.anonEntry.accessKeyId).toBeUndefined();
    expect(header(r.anonEntry, 'authorization')).toBeUndefined();
    expect(header(r.anonEntry, 'x-svc-date')).toBeUndefined();
  });

  it('explainSignature gives the StringToSign and Authorization a request will carry, and they are accepted', async () => {
    const r = await run(async ({ sw: { client } }) => {
      await client.createBucket('cl-explain');
      await client.putObject('cl-explain', 'k y.txt', 'explained');
      const x = await client.explainSignature('GET', 'cl-explain', 'k y.txt', { versionId: 'null', 'max-keys': '1' });
      const res = await fetch(x!.url.replace(/\?.*$/, ''), { headers: { authorization: x!.authorization, 'x-svc-date': x!.date } });
      const plain = await client.explainSignature('GET', 'cl-explain', 'k y.txt');
      const ok = await fetch(plain!.url, { headers: { authorization: plain!.authorization, 'x-svc-date': plain!.date } });
      return { x, status: res.status, plain, okStatus: ok.status, okText: await ok.text() };
    });
    expect(r.x!.stringToSign).toBe(`GET\n\n\n\nx-svc-date:${r.x!.date}\n/cl-explain/k%20y.txt?versionId=null`);
    expect(r.x!.authorization).toBe(`SVC svcadmin:${hmac('svcadmin-secret', r.x!.stringToSign)}`);
    expect(r.x!.url).toMatch(/^http:\/\/cl-explain\.svc\.localhost\/k%20y\.txt\?/);
    // signed with a sub-resource the request then does not carry: refused
    expect(r.status).toBe(403);
    expect(r.plain!.stringToSign).toBe(`GET\n\n\n\nx-svc-date:${r.plain!.date}\n/cl-explain/k%20y.txt`);
    expect(r.plain!.url).toBe('http://cl-explain.svc.localhost/k%20y.txt');
    expect([r.okStatus, r.okText]).toEqual([200, 'explained']);
  });

  it('request bodies are sent as Blobs, whatever the caller passed', async () => {
    const r = await run(async ({ sw: { createClient } }) => {
      const seen: { method: string; url: string; body: string }[] = [];
      const c = createClient({
        endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret',
        fetch: (input, init) => {
          seen.push({ method: init?.method ?? 'GET', url: String(input), body: init?.body === undefined ? 'none' : init.body instanceof Blob ? 'Blob' : Object.prototype.toString.call(init.body) });
          return fetch(input, init);
        },
      });
      await c.createBucket('cl-blob');
      await c.putObject('cl-blob', 'string', 'a string');
      await c.putObject('cl-blob', 'u8', new Uint8Array([1, 2, 3]));
      await c.putObject('cl-blob', 'ab', new Uint8Array([4, 5]).buffer);
      await c.putObject('cl-blob', 'blob', new Blob(['blob']));
      await c.putBucketVersioning('cl-blob', 'Enabled');
      const id = await c.createMultipartUpload('cl-blob', 'mp');
      const p = await c.uploadPart('cl-blob', 'mp', id, 1, new Uint8Array(10));
      await c.completeMultipartUpload('cl-blob', 'mp', id, [{ partNumber: 1, etag: p.etag }]);
      await c.deleteObjects('cl-blob', ['string']);
      await c.putAccount('bodytest', { secretAccessKey: 'bodytest-secret', displayName: 'b' });
      await c.deleteAccount('bodytest');
      const u8 = await (await c.getObject('cl-blob', 'u8')).response.arrayBuffer();
      const ab = await (await c.getObject('cl-blob', 'ab')).response.arrayBuffer();
      return { seen, u8: [...new Uint8Array(u8)], ab: [...new Uint8Array(ab)] };
    });
    const withBody = r.seen.filter((s) => s.method === 'PUT' || s.method === 'POST');
    expect(withBody.filter((s) => s.body === 'Blob').length).toBeGreaterThanOrEqual(9);
    for (const s of withBody) {
      if (s.body !== 'none') expect(s.body, `${s.method} ${s.url}`).toBe('Blob');
    }
    expect(r.seen.filter((s) => s.method === 'GET' || s.method === 'HEAD').every((s) => s.body === 'none')).toBe(true);
    expect(r.u8).toEqual([1, 2, 3]);
    expect(r.ab).toEqual([4, 5]);
  });
});

describe('presign', () => {
  const png = makePng(2, 2, (x, y) => (x === 0 && y === 0 ? [255, 0, 0] : [0, 128, 255]));

  it('a presigned URL shows a private PNG in <img>; unsigned, expired or for another key it does not', async () => {
    const r = await run(async ({ sw: { client } }, pngBytes) => {
      await client.createBucket('cl-img');
      await client.putObject('cl-img', 'pics/dot 1.png', new Uint8Array(pngBytes), { contentType: 'image/png' });
      const load = (src: string) => new Promise<{ loaded: boolean; width: number; height: number }>((resolve) => {
        const img = new Image();
        img.onload = () => resolve({ loaded: true, width: img.naturalWidth, height: img.naturalHeight });
        img.onerror = () => resolve({ loaded: false, width: img.naturalWidth, height: img.naturalHeight });
        img.src = src;
        document.body.append(img);
      });
      const url = await client.presign('cl-img', 'pics/dot 1.png', { expiresIn: 600 });
      const expired = await client.presign('cl-img', 'pics/dot 1.png', { expiresIn: -120 });
      const otherKey = (await client.presign('cl-img', 'pics/other.png', { expiresIn: 600 })).replace('/pics/other.png', '/pics/dot%201.png');
      const head = await client.presign('cl-img', 'pics/dot 1.png', { expiresIn: 600, method: 'HEAD' });
      const headRes = await fetch(head, { method: 'HEAD' });
      const withDownload = await fetch(await client.presign('cl-img', 'pics/dot 1.png', { query: { download: 'saved.png' } }));
      await client.putBucketVersioning('cl-img', 'Enabled');
      const v1 = await client.putObject('cl-img', 'pics/v.txt', 'first');
      await client.putObject('cl-img', 'pics/v.txt', 'second');
      const versioned = await fetch(await client.presign('cl-img', 'pics/v.txt', { query: { versionId: String(v1.versionId) } }));
      const fetched = await fetch(url);
      const expiredRes = await fetch(expired);
      return {
        url,
        signed: await load(url),
        unsigned: await load(url.replace(/\?.*$/, '')),
        expired: await load(expired),
        otherKey: await load(otherKey),
        fetched: { status: fetched.status, type: fetched.headers.get('content-type'), size: (await fetched.arrayBuffer()).byteLength },
        expiredRes: { status: expiredRes.status, code: /<Code>([^<]*)<\/Code>/.exec(await expiredRes.text())?.[1] },
        headStatus: headRes.status,
        withDownload: { status: withDownload.status, disposition: withDownload.headers.get('content-disposition') },
        versioned: { status: versioned.status, text: await versioned.text() },
      };
    }, [...png]);
    const u = new URL(r.url);
    expect(u.origin).toBe('http://cl-img.svc.localhost');
    expect(u.pathname).toBe('/pics/dot%201.png');
    expect(u.searchParams.get('SVCAccessKeyId')).toBe('svcadmin');
    const expires = Number(u.searchParams.get('Expires'));
    expect(Math.abs(expires - (Math.floor(Date.now() / 1000) + 600))).toBeLessThan(120);
    // the signature is what the Node signer computes for this URL (Date line = Expires)
    const bare = new URL(r.url);
    bare.search = '';
    expect(u.searchParams.get('Signature')).toBe(hmac('svcadmin-secret', stringToSign('GET', bare, new Headers(), String(expires))));
    expect(r.signed).toEqual({ loaded: true, width: 2, height: 2 });
    expect(r.unsigned.loaded).toBe(false);
    expect(r.expired.loaded).toBe(false);
    expect(r.otherKey.loaded).toBe(false);
    expect(r.fetched).toEqual({ status: 200, type: 'image/png', size: png.length });
    expect(r.expiredRes).toEqual({ status: 403, code: 'AccessDenied' });
    expect(r.headStatus).toBe(200);
    // unsigned query parameters ride along; a signed sub-resource (versionId) is covered by the signature
    expect(r.withDownload).toEqual({ status: 200, disposition: expect.stringMatching(/^attachment; filename="saved.png"/) });
    expect(r.versioned).toEqual({ status: 200, text: 'first' });
  });
});
