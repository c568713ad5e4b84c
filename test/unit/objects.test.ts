// Object-operation checks that cannot be plain data (test/cases/*.cases.ts): they need values from
// earlier responses (Last-Modified, UploadId, versionId), timing, concurrency, binary or very large
// bodies. Written from docs/protocol.md only.
import { describe, it, expect, beforeAll } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { newService, send, buildRequest, errorCode } from '../support/service.ts';
import { STORE_KINDS, type StoreKind } from '../support/stores.ts';

const U = 'http://photos.svc.localhost';
type Handle = (r: Request) => Promise<Response>;

const md5hex = (b: string | Uint8Array): string => createHash('md5').update(b).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits until the wall clock is past `t` (ms since epoch). */
async function waitUntil(t: number): Promise<void> {
  while (Date.now() <= t) await sleep(Math.min(100, t - Date.now() + 5));
}

async function service(): Promise<Handle> {
  const { handle } = await newService({ kind });
  const r = await send(handle, 'PUT', `${U}/`);
  expect(r.status, r.text).toBe(200);
  return handle;
}

async function putOk(handle: Handle, key: string, body: string | Uint8Array, headers: Record<string, string> = {}) {
  const r = await send(handle, 'PUT', `${U}/${key}`, { body, headers });
  expect(r.status, r.text).toBe(200);
  return r;
}

/** GET with the raw Response, so binary bodies can be read exactly. */
async function getRaw(handle: Handle, key: string, headers: Record<string, string> = {}) {
  const res = await handle(await buildRequest('GET', `${U}/${key}`, { headers }));
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

async function lastModified(handle: Handle, key: string): Promise<string> {
  const h = await send(handle, 'HEAD', `${U}/${key}`);
  expect(h.status).toBe(200);
  const lm = h.headers.get('last-modified');
  expect(lm).toMatch(/GMT$/);
  return lm!;
}

/** The store the tests below run on: each describe.each round sets it before its tests. */
let kind: StoreKind = 'idb';

describe.each(STORE_KINDS)('%s store', (storeKind) => {
  beforeAll(() => {
    kind = storeKind;
  });

  describe('If-Modified-Since at one-second resolution (docs/protocol.md, "Conditional reads")', () => {
    it('equal to Last-Modified → 304 with ETag and Last-Modified and no body (GET and HEAD)', async () => {
      const handle = await service();
      const p = await putOk(handle, 'a.txt', 'hello');
      const lm = await lastModified(handle, 'a.txt');
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await handle(await buildRequest(method, `${U}/a.txt`, { headers: { 'If-Modified-Since': lm } }));
        expect(res.status, method).toBe(304);
        expect(res.headers.get('etag')).toBe(p.headers.get('etag'));
        expect(res.headers.get('etag')).toBe(`"${md5hex('hello')}"`);
        expect(res.headers.get('last-modified')).toBe(lm);
        expect(res.headers.get('x-svc-request-id')).toBeTruthy();
        expect(res.headers.get('server')).toBe('swbucket');
        expect(await res.text()).toBe('');
      }
    });

    it('one second before Last-Modified → 200 with the body', async () => {
      const handle = await service();
      await putOk(handle, 'a.txt', 'hello');
      const lm = await lastModified(handle, 'a.txt');
      const before = new Date(Date.parse(lm) - 1000).toUTCString();
      const g = await send(handle, 'GET', `${U}/a.txt`, { headers: { 'If-Modified-Since': before } });
      expect(g.status).toBe(200);
      expect(g.text).toBe('hello');
      const h = await send(handle, 'HEAD', `${U}/a.txt`, { headers: { 'If-Modified-Since': before } });
      expect(h.status).toBe(200);
    });

    it('after Last-Modified but not in the future → 304', async () => {
      const handle = await service();
      await putOk(handle, 'a.txt', 'hello');
      const lm = await lastModified(handle, 'a.txt');
      const after = Date.parse(lm) + 1000;
      await waitUntil(after + 50);
      const g = await send(handle, 'GET', `${U}/a.txt`, { headers: { 'If-Modified-Since': new Date(after).toUTCString() } });
      expect(g.status).toBe(304);
      expect(g.text).toBe('');
    });

    it('a date in the future is ignored → 200', async () => {
      const handle = await service();
      await putOk(handle, 'a.txt', 'hello');
      const future = new Date(Date.now() + 120_000).toUTCString();
      const g = await send(handle, 'GET', `${U}/a.txt`, { headers: { 'If-Modified-Since': future } });
      expect(g.status).toBe(200);
      expect(g.text).toBe('hello');
    });

    it('an object rewritten after the given date → 200', async () => {
      const handle = await service();
      await putOk(handle, 'a.txt', 'first');
      const lm1 = await lastModified(handle, 'a.txt');
      await waitUntil(Date.parse(lm1) + 1000 + 20);
      await putOk(handle, 'a.txt', 'second');
      const lm2 = await lastModified(handle, 'a.txt');
      expect(Date.parse(lm2)).toBeGreaterThan(Date.parse(lm1));
      const g = await send(handle, 'GET', `${U}/a.txt`, { headers: { 'If-Modified-Since': lm1 } });
      expect(g.status).toBe(200);
      expect(g.text).toBe('second');
    });

    it('If-Modified-Since on a missing key → 404 NoSuchKey, not 304', async () => {
      const handle = await service();
      const g = await send(handle, 'GET', `${U}/none`, { headers: { 'If-Modified-Since': 'Fri, 01 Jan 2100 00:00:00 GMT' } });
      expect(g.status).toBe(404);
      expect(errorCode(g.text)).toBe('NoSuchKey');
    });
  });

  describe('PUT Object: concurrency, size limit, binary bodies', () => {
    it('two PUTs to one key racing: GET returns one whole body whose MD5 is its ETag and whose metadata matches', async () => {
      const handle = await service();
      const a = new Uint8Array(randomBytes(1 << 20));
      const b = new Uint8Array(randomBytes(1 << 20));
      const [ra, rb] = await Promise.all([
        send(handle, 'PUT', `${U}/race.bin`, { body: a, headers: { 'x-svc-meta-writer': 'A' } }),
        send(handle, 'PUT', `${U}/race.bin`, { body: b, headers: { 'x-svc-meta-writer': 'B' } }),
      ]);
      expect(ra.status, ra.text).toBe(200);
      expect(rb.status, rb.text).toBe(200);
      expect(ra.headers.get('etag')).toBe(`"${md5hex(a)}"`);
      expect(rb.headers.get('etag')).toBe(`"${md5hex(b)}"`);
      const { res, bytes } = await getRaw(handle, 'race.bin');
      expect(res.status).toBe(200);
      expect(bytes.byteLength).toBe(1 << 20);
      expect(res.headers.get('content-length')).toBe(String(1 << 20));
      const sum = md5hex(bytes);
      expect(res.headers.get('etag')).toBe(`"${sum}"`);
      const writer = sum === md5hex(a) ? 'A' : sum === md5hex(b) ? 'B' : 'neither';
      expect(writer).not.toBe('neither');
      expect(res.headers.get('x-svc-meta-writer')).toBe(writer);
    });

    it('PUT of 100 MiB + 1 byte → 400 EntityTooLarge, nothing stored', { timeout: 120_000 }, async () => {
      const handle = await service();
      const r = await send(handle, 'PUT', `${U}/big`, { body: new Uint8Array(100 * 1024 * 1024 + 1) });
      expect(r.status).toBe(400);
      expect(errorCode(r.text)).toBe('EntityTooLarge');
      const g = await send(handle, 'GET', `${U}/big`);
      expect(g.status).toBe(404);
      expect(errorCode(g.text)).toBe('NoSuchKey');
    });

    // our choice: the 100M of PUT Object is 100 MiB, as for parts (docs/protocol.md, "Limits").
    it('PUT of exactly 100 MiB → 200, HEAD reports the size', { timeout: 180_000 }, async () => {
      const handle = await service();
      const body = new Uint8Array(100 * 1024 * 1024);
      body[0] = 1;
      body[body.length - 1] = 2;
      const r = await send(handle, 'PUT', `${U}/big`, { body });
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('etag')).toBe(`"${md5hex(body)}"`);
      const h = await send(handle, 'HEAD', `${U}/big`);
      expect(h.status).toBe(200);
      expect(h.headers.get('content-length')).toBe(String(body.length));
      const { res, bytes } = await getRaw(handle, 'big', { Range: `bytes=-2` });
      expect(res.status).toBe(206);
      expect([...bytes]).toEqual([0, 2]);
    });

    it('a binary body (all 256 byte values, invalid UTF-8) round-trips exactly, whole and as a range', async () => {
      const handle = await service();
      const body = new Uint8Array(256 * 4 + 65536);
      for (let i = 0; i < 1024; i++) body[i] = i % 256;
      body.set(randomBytes(65536), 1024);
      const r = await send(handle, 'PUT', `${U}/bin`, {
        body,
        headers: { 'Content-MD5': createHash('md5').update(body).digest('base64'), 'Content-Type': 'application/octet-stream' },
      });
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('etag')).toBe(`"${md5hex(body)}"`);
      const whole = await getRaw(handle, 'bin');
      expect(whole.res.status).toBe(200);
      expect(Buffer.from(whole.bytes).equals(Buffer.from(body))).toBe(true);
      const part = await getRaw(handle, 'bin', { Range: 'bytes=100-1123' });
      expect(part.res.status).toBe(206);
      expect(part.res.headers.get('content-range')).toBe(`bytes 100-1123/${body.length}`);
      expect(Buffer.from(part.bytes).equals(Buffer.from(body.subarray(100, 1124)))).toBe(true);
      const tail = await getRaw(handle, 'bin', { Range: 'bytes=-7' });
      expect(Buffer.from(tail.bytes).equals(Buffer.from(body.subarray(body.length - 7)))).toBe(true);
    });
  });

  describe('HEAD never carries a body (docs/protocol.md, "Errors" and "Every response")', () => {
    it('200, 304, 404, 403 and NoSuchBucket HEAD responses have no body', async () => {
      const handle = await service();
      await putOk(handle, 'a.txt', 'some content');
      const lm = await lastModified(handle, 'a.txt');
      const urls: [string, Record<string, string>, 'root' | 'anon', number][] = [
        [`${U}/a.txt`, {}, 'root', 200],
        [`${U}/a.txt`, { 'If-Modified-Since': lm }, 'root', 304],
        [`${U}/missing`, {}, 'root', 404],
        [`${U}/a.txt`, {}, 'anon', 403],
        ['http://no-such-bucket.svc.localhost/a.txt', {}, 'root', 404],
      ];
      for (const [url, headers, auth, status] of urls) {
        const res = await handle(await buildRequest('HEAD', url, { headers, auth }));
        expect(res.status, url).toBe(status);
        expect(await res.text(), `${url} body`).toBe('');
        expect(res.headers.get('x-svc-request-id'), url).toBeTruthy();
      }
      const ok = await handle(await buildRequest('HEAD', `${U}/a.txt`));
      expect(ok.headers.get('content-length')).toBe('12');
    });
  });

  describe('common response headers and error documents (docs/protocol.md, "Every response", "Errors")', () => {
    it('every response has a unique x-svc-request-id, a current Date, Connection and Server; RequestId matches the header', async () => {
      const handle = await service();
      const responses = [
        await send(handle, 'PUT', `${U}/a`, { body: 'x' }),
        await send(handle, 'GET', `${U}/a`),
        await send(handle, 'GET', `${U}/a`, { headers: { Range: 'bytes=0-0' } }),
        await send(handle, 'GET', `${U}/a`, { headers: { Range: 'bytes=5-' } }),
        await send(handle, 'HEAD', `${U}/a`),
        await send(handle, 'DELETE', `${U}/a`),
        await send(handle, 'GET', `${U}/a`),
        await send(handle, 'DELETE', `${U}/a`),
      ];
      const ids = new Set<string>();
      for (const r of responses) {
        const id = r.headers.get('x-svc-request-id');
        expect(id).toBeTruthy();
        ids.add(id!);
        const date = Date.parse(r.headers.get('date') ?? '');
        expect(Math.abs(date - Date.now())).toBeLessThan(60_000);
        expect(r.headers.get('connection')).toBeTruthy();
        expect(r.headers.get('server')).toBe('swbucket');
        expect(r.headers.get('access-control-allow-origin')).toBe('*');
        if (r.status >= 400) {
          expect(r.headers.get('content-type')).toMatch(/^application\/xml/);
          expect(/<RequestId>([^<]*)<\/RequestId>/.exec(r.text)?.[1]).toBe(id);
        }
      }
      expect(ids.size).toBe(responses.length);
    });
  });

  describe('copy, move and ?meta: values that need earlier responses', () => {
    async function multipart(handle: Handle, key: string, data: string): Promise<string> {
      const init = await send(handle, 'POST', `${U}/${key}?uploads`);
      expect(init.status, init.text).toBe(200);
      const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(init.text)?.[1];
      expect(uploadId).toBeTruthy();
      const part = await send(handle, 'PUT', `${U}/${key}?partNumber=1&uploadId=${encodeURIComponent(uploadId!)}`, { body: data });
      expect(part.status, part.text).toBe(200);
      const e1 = part.headers.get('etag')!.replace(/"/g, '');
      expect(e1).toBe(md5hex(data));
      const done = await send(handle, 'POST', `${U}/${key}?uploadId=${encodeURIComponent(uploadId!)}`, {
        body: `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"${e1}"</ETag></Part></CompleteMultipartUpload>`,
      });
      expect(done.status, done.text).toBe(200);
      const etag = `"${md5hex(e1 + '-')}-1"`; // docs/protocol.md, "ETags and Content-MD5"
      const h = await send(handle, 'HEAD', `${U}/${key}`);
      expect(h.headers.get('etag')).toBe(etag);
      return etag;
    }

    it('copy of a multipart object gets the plain MD5 of the bytes as ETag', async () => {
      const handle = await service();
      await multipart(handle, 'mp', 'multipart data');
      const c = await send(handle, 'PUT', `${U}/copy`, { headers: { 'x-svc-copy-source': '/photos/mp' } });
      expect(c.status, c.text).toBe(200);
      const g = await send(handle, 'GET', `${U}/copy`);
      expect(g.text).toBe('multipart data');
      expect(g.headers.get('etag')).toBe(`"${md5hex('multipart data')}"`);
    });

    it('move of a multipart object carries its ETag over', async () => {
      const handle = await service();
      const etag = await multipart(handle, 'mp', 'multipart data');
      const m = await send(handle, 'PUT', `${U}/moved`, { headers: { 'x-svc-move-source': '/photos/mp' } });
      expect(m.status, m.text).toBe(200);
      const g = await send(handle, 'GET', `${U}/moved`);
      expect(g.text).toBe('multipart data');
      expect(g.headers.get('etag')).toBe(etag);
      expect((await send(handle, 'GET', `${U}/mp`)).status).toBe(404);
    });

    it('move, copy and ?meta set Last-Modified to the time of the operation; ?meta keeps the ETag', async () => {
      const handle = await service();
      await putOk(handle, 'a', 'data');
      await putOk(handle, 'b', 'data');
      await putOk(handle, 'c', 'data');
      const lm = await lastModified(handle, 'a');
      await waitUntil(Date.parse(lm) + 1000 + 20);
      expect((await send(handle, 'PUT', `${U}/a2`, { headers: { 'x-svc-move-source': '/photos/a' } })).status).toBe(200);
      expect((await send(handle, 'PUT', `${U}/b2`, { headers: { 'x-svc-copy-source': '/photos/b' } })).status).toBe(200);
      const meta = await send(handle, 'PUT', `${U}/c?meta`, { headers: { 'Content-Type': 'text/plain' } });
      expect(meta.status).toBe(200);
      for (const key of ['a2', 'b2', 'c']) {
        const got = Date.parse(await lastModified(handle, key));
        expect(got, key).toBeGreaterThan(Date.parse(lm));
        expect(got, key).toBeLessThanOrEqual(Date.now());
      }
      const c = await send(handle, 'HEAD', `${U}/c`);
      expect(c.headers.get('etag')).toBe(`"${md5hex('data')}"`);
      expect(c.headers.get('content-type')).toBe('text/plain');
    });
  });

  describe('Delete Multiple Objects with versions (docs/protocol.md, "Delete Multiple Objects")', () => {
    it('VersionId of an existing version deletes that version only', async () => {
      const handle = await service();
      const v = await send(handle, 'PUT', `${U}/?versioning`, {
        body: '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>',
      });
      expect(v.status, v.text).toBe(200);
      const p1 = await putOk(handle, 'a', 'one');
      const p2 = await putOk(handle, 'a', 'two');
      const v1 = p1.headers.get('x-svc-version-id');
      const v2 = p2.headers.get('x-svc-version-id');
      expect(v1).toMatch(/^\d+$/);
      expect(v2).toMatch(/^\d+$/);
      expect(Number(v2)).toBeGreaterThan(Number(v1));
      const d = await send(handle, 'POST', `${U}/?delete`, {
        body: `<Delete><Object><Key>a</Key><VersionId>${v1}</VersionId></Object></Delete>`,
      });
      expect(d.status, d.text).toBe(200);
      expect(d.text).toMatch(/<Deleted>(?:(?!<\/Deleted>)[\s\S])*<Key>a<\/Key>/);
      expect(d.text).not.toContain('<Error>');
      expect((await send(handle, 'HEAD', `${U}/a?versionId=${v1}`)).status).toBe(404);
      const g = await send(handle, 'GET', `${U}/a`);
      expect(g.status).toBe(200);
      expect(g.text).toBe('two');
    });
  });
});
