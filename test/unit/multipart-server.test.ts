// Multipart upload through the real HTTP server (sw/server.ts), path style
// (http://127.0.0.1:PORT/{bucket}/{key}), with Node's fetch: the wire details only a socket shows
// (Content-Length, chunked bodies, a body cut short, large bodies) and the whole flow, the check
// order, paging and races end to end. docs/protocol.md: "Multipart uploads", "Multipart rules",
// "Content-Length", "Errors".
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import net from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { signHeaders } from '../support/sign.ts';
import { startServer } from '../../node/server.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const MIN = 16 * KiB;

const md5 = (b: Uint8Array | string): string => createHash('md5').update(b).digest('hex');
const md5b64 = (b: Uint8Array | string): string => createHash('md5').update(b).digest('base64');
const multipartEtag = (etags: string[]): string => md5(etags.map((e) => `${e}-`).join('')) + '-1';
const bytes = (n: number): Uint8Array => new Uint8Array(randomBytes(n));
const concat = (...parts: Uint8Array[]): Uint8Array => new Uint8Array(Buffer.concat(parts));
const tag = (text: string, name: string): string | undefined => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];
const code = (text: string): string | undefined => tag(text, 'Code');
const unquote = (s: string | null | undefined): string => (s ?? '').replace(/&quot;/g, '"').replace(/^"|"$/g, '');
const enc = (key: string): string => key.split('/').map((s) => encodeURIComponent(s)).join('/');

let srv: Awaited<ReturnType<typeof startServer>>;
let bucketCount = 0;
const run = Date.now().toString(36);

beforeAll(async () => {
  srv = await startServer({ port: 0, log: () => {} });
});
afterAll(async () => {
  await srv?.close();
});

interface Res { status: number; headers: Headers; text: string; body: Uint8Array }
interface CallOpts {
  body?: Uint8Array | string | ReadableStream<Uint8Array>;
  headers?: Record<string, string>;
  anon?: boolean;
}

async function call(method: string, url: string, o: CallOpts = {}): Promise<Res> {
  const headers = new Headers(o.headers ?? {});
  if (!o.anon) signHeaders(method, url, headers);
  const init: RequestInit & { duplex?: 'half' } = { method, headers };
  // a string goes as bytes: fetch would add a Content-Type to a string body after it was signed
  if (o.body !== undefined) init.body = (typeof o.body === 'string' ? new TextEncoder().encode(o.body) : o.body) as BodyInit;
  if (o.body instanceof ReadableStream) init.duplex = 'half';
  const res = await fetch(url, init);
  const body = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, text: Buffer.from(body).toString('utf8'), body };
}

function expectError(r: Res, status: number, errCode: string, what = ''): void {
  expect(r.status, `${what} ${r.text}`).toBe(status);
  expect(code(r.text), `${what} code`).toBe(errCode);
  expect(r.headers.get('content-type') ?? '', what).toMatch(/^application\/xml/);
  expect(r.headers.get('x-svc-request-id'), what).toBeTruthy();
}

/** A fresh bucket for one test, and URL builders for it. */
async function bucket() {
  const name = `mp-${run}-${++bucketCount}`;
  const root = `${srv.url}/${name}`;
  const r = await call('PUT', `${root}/`);
  expect(r.status, r.text).toBe(200);
  const obj = (key: string) => `${root}/${enc(key)}`;
  const upl = (key: string, id: string) => `${obj(key)}?uploadId=${encodeURIComponent(id)}`;
  const part = (key: string, id: string, n: number | string) => `${obj(key)}?partNumber=${n}&uploadId=${encodeURIComponent(id)}`;
  const initiate = async (key: string, headers: Record<string, string> = {}): Promise<string> => {
    const res = await call('POST', `${obj(key)}?uploads`, { headers });
    expect(res.status, res.text).toBe(200);
    const id = tag(res.text, 'UploadId');
    expect(id).toBeTruthy();
    return id!;
  };
  const putPart = async (key: string, id: string, n: number, data: Uint8Array | string): Promise<string> => {
    const res = await call('PUT', part(key, id, n), { body: data });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('etag')).toBe(`"${md5(data)}"`);
    return md5(data);
  };
  const xml = (parts: { n: number; etag: string }[]) =>
    '<CompleteMultipartUpload>' +
    parts.map((p) => `<Part><PartNumber>${p.n}</PartNumber><ETag>"${p.etag}"</ETag></Part>`).join('') +
    '</CompleteMultipartUpload>';
  const complete = (key: string, id: string, parts: { n: number; etag: string }[] | string, headers: Record<string, string> = {}) =>
    call('POST', upl(key, id), { body: typeof parts === 'string' ? parts : xml(parts), headers });
  const abort = (key: string, id: string) => call('DELETE', upl(key, id));
  const listParts = (key: string, id: string, q = '') => call('GET', upl(key, id) + q);
  const listUploads = (q = '') => call('GET', `${root}/?uploads${q}`);
  const partNumbers = (text: string) => [...text.matchAll(/<Part>[\s\S]*?<PartNumber>(\d+)<\/PartNumber>/g)].map((m) => Number(m[1]));
  const uploadIds = (text: string) => [...text.matchAll(/<Upload>[\s\S]*?<UploadId>([^<]+)<\/UploadId>/g)].map((m) => m[1]!);
  const expectFinished = async (key: string, id: string) => {
    expectError(await call('PUT', part(key, id, 1), { body: 'x' }), 404, 'NoSuchUpload', 'Upload Part');
    expectError(await complete(key, id, [{ n: 1, etag: md5('x') }]), 404, 'NoSuchUpload', 'Complete');
    expectError(await abort(key, id), 404, 'NoSuchUpload', 'Abort');
    expectError(await listParts(key, id), 404, 'NoSuchUpload', 'List Parts');
    expect(uploadIds((await listUploads()).text)).not.toContain(id);
  };
  return { name, root, obj, upl, part, initiate, putPart, complete, abort, listParts, listUploads, partNumbers, uploadIds, expectFinished, xml };
}

/** A raw HTTP/1.1 request over a socket: for bodies fetch cannot send (cut short, over-declared). */
function rawRequest(method: string, url: string, headers: Record<string, string>, body: string, halfClose: boolean): Promise<string> {
  const u = new URL(url);
  const h = new Headers(headers);
  signHeaders(method, url, h);
  return new Promise((resolve) => {
    const socket = net.connect(Number(u.port), u.hostname, () => {
      let head = `${method} ${u.pathname}${u.search} HTTP/1.1\r\nhost: ${u.host}\r\n`;
      for (const [k, v] of h) head += `${k}: ${v}\r\n`;
      socket.write(head + '\r\n' + body);
      if (halfClose) socket.end();
    });
    let out = '';
    const finish = () => {
      socket.destroy();
      resolve(out);
    };
    socket.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      if (/\r\n\r\n/.test(out) && (out.includes('</Error>') || /content-length: 0\r\n/i.test(out))) finish();
    });
    socket.on('close', () => resolve(out));
    socket.on('error', () => resolve(out));
    socket.setTimeout(10_000, finish);
  });
}

// ================================================================================================

describe('multipart upload through the HTTP server', () => {
  it('Initiate, parts in parallel (one of 3 MiB), List Parts, Complete, then GET, HEAD and Range with the multipart ETag computed here', async () => {
    const b = await bucket();
    const key = 'videos/clip one.bin';
    const id = await b.initiate(key, { 'content-type': 'video/mp4', 'x-svc-meta-camera': 'A' });
    expect(id).toMatch(/^[A-Za-z0-9._~-]+$/);
    expect(id).not.toMatch(/^\d+$/);
    const data = [bytes(3 * MiB), bytes(MIN), bytes(1234)];
    const etags = await Promise.all(data.map((d, i) => b.putPart(key, id, i + 1, d)));
    const lp = await b.listParts(key, id);
    expect(lp.status, lp.text).toBe(200);
    expect(b.partNumbers(lp.text)).toEqual([1, 2, 3]);
    expect(tag(lp.text, 'Bucket')).toBe(b.name);
    expect(tag(lp.text, 'Key')).toBe(key);
    expect(tag(lp.text, 'StorageClass')).toBe('STANDARD');
    expect(tag(lp.text, 'PartNumberMarker')).toBe('0');
    expect(tag(lp.text, 'NextPartNumberMarker')).toBe('3');
    expect(lp.text).toContain(`<Size>${3 * MiB}</Size>`);
    expect((await call('HEAD', b.obj(key))).status).toBe(404); // not before Complete

    const content = concat(...data);
    const c = await b.complete(key, id, etags.map((etag, i) => ({ n: i + 1, etag })), { 'x-svc-Object-md5': md5(content) });
    expect(c.status, c.text).toBe(200);
    const expected = multipartEtag(etags);
    expect(unquote(tag(c.text, 'ETag'))).toBe(expected);
    expect(tag(c.text, 'Bucket')).toBe(b.name);
    expect(tag(c.text, 'Key')).toBe(key);
    expect(tag(c.text, 'Location')).toMatch(new RegExp(`^http://${b.name}\\.svc\\.localhost/videos/clip(%20| )one\\.bin$`));

    const get = await call('GET', b.obj(key));
    expect(get.status).toBe(200);
    expect(get.body.length).toBe(content.length);
    expect(md5(get.body)).toBe(md5(content));
    expect(get.headers.get('etag')).toBe(`"${expected}"`);
    expect(get.headers.get('content-length')).toBe(String(content.length));
    expect(get.headers.get('content-type')).toBe('video/mp4');
    expect(get.headers.get('x-svc-meta-camera')).toBe('A');
    expect(get.headers.get('x-svc-object-md5')).toBe(md5(content));
    const head = await call('HEAD', b.obj(key));
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers.get('etag')).toBe(`"${expected}"`);
    expect(head.headers.get('x-svc-object-md5')).toBe(md5(content));
    // a range across the boundary of part 1 and part 2, and one across parts 2 and 3
    for (const [a, z] of [[3 * MiB - 10, 3 * MiB + 9], [3 * MiB + MIN - 5, 3 * MiB + MIN + 5]] as const) {
      const r = await call('GET', b.obj(key), { headers: { range: `bytes=${a}-${z}` } });
      expect(r.status).toBe(206);
      expect(r.headers.get('content-range')).toBe(`bytes ${a}-${z}/${content.length}`);
      expect(md5(r.body)).toBe(md5(content.subarray(a, z + 1)));
    }
    await b.expectFinished(key, id);
  });

  it('32 parts uploaded at once through the server are all stored, listed and combined', async () => {
    const b = await bucket();
    const id = await b.initiate('k');
    const data = Array.from({ length: 32 }, (_, i) => bytes(MIN + i));
    const etags = await Promise.all(data.map((d, i) => b.putPart('k', id, i + 1, d)));
    expect(b.partNumbers((await b.listParts('k', id)).text)).toEqual(data.map((_, i) => i + 1));
    const c = await b.complete('k', id, etags.map((etag, i) => ({ n: i + 1, etag })));
    expect(c.status, c.text).toBe(200);
    const got = await call('GET', b.obj('k'));
    expect(md5(got.body)).toBe(md5(concat(...data)));
    expect(got.headers.get('etag')).toBe(`"${multipartEtag(etags)}"`);
  });

  it('errors of Initiate and Upload Part: NoSuchBucket, AccessDenied, KeyTooLong, InvalidArgument, NoSuchUpload, BadDigest, InvalidDigest', async () => {
    const b = await bucket();
    const missing = `${srv.url}/no-such-${run}`;
    expectError(await call('POST', `${missing}/k?uploads`), 404, 'NoSuchBucket', 'initiate, no bucket');
    expectError(await call('POST', `${b.obj('k')}?uploads`, { anon: true }), 403, 'AccessDenied', 'initiate, anonymous');
    expectError(await call('POST', `${b.obj('a'.repeat(1001))}?uploads`), 400, 'KeyTooLong', 'initiate, 1001 bytes');
    expect((await call('POST', `${b.obj('é'.repeat(500))}?uploads`)).status).toBe(200); // 1000 bytes
    const id = await b.initiate('k');
    const other = await b.initiate('other');
    expectError(await call('PUT', `${missing}/k?partNumber=1&uploadId=${id}`, { body: 'x' }), 404, 'NoSuchBucket', 'part, no bucket');
    expectError(await call('PUT', b.part('k', id, 1), { body: 'x', anon: true }), 403, 'AccessDenied', 'part, anonymous');
    for (const n of ['0', '10001', '-1', 'abc', '1.5', '']) {
      expectError(await call('PUT', b.part('k', id, n), { body: 'x' }), 400, 'InvalidArgument', `partNumber=${n}`);
    }
    expectError(await call('PUT', b.part('k', other, 1), { body: 'x' }), 400, 'InvalidArgument', 'UploadId of another key');
    expectError(await call('PUT', b.part('k', 'never-issued', 1), { body: 'x' }), 404, 'NoSuchUpload', 'unknown UploadId');
    expectError(await call('PUT', b.part('k', id, 1), { body: 'x', headers: { 'content-md5': md5b64('y') } }), 400, 'BadDigest', 'bad digest');
    expectError(await call('PUT', b.part('k', id, 1), { body: 'x', headers: { 'content-md5': 'nope' } }), 400, 'InvalidDigest', 'invalid digest');
    expect(b.partNumbers((await b.listParts('k', id)).text)).toEqual([]);
    expect(b.partNumbers((await b.listParts('other', other)).text)).toEqual([]);
    expect((await call('PUT', b.part('k', id, 10000), { body: 'x', headers: { 'content-md5': md5b64('x') } })).status).toBe(200);
  });

  it('chunked bodies without Content-Length → 411 MissingContentLength on Initiate, Upload Part and Complete', async () => {
    const b = await bucket();
    const stream = (s: string) => new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode(s));
        c.close();
      },
    });
    // Initiate has no body: a POST with neither Content-Length nor Transfer-Encoding
    const raw = await rawRequest('POST', `${b.obj('k')}?uploads`, {}, '', false);
    expect(raw).toMatch(/^HTTP\/1\.1 411 /);
    expect(raw).toContain('<Code>MissingContentLength</Code>');
    expectError(await call('POST', `${b.obj('k')}?uploads`, { body: stream('x') }), 411, 'MissingContentLength', 'initiate, chunked');
    expect(b.uploadIds((await b.listUploads()).text)).toEqual([]);
    const id = await b.initiate('k');
    expectError(await call('PUT', b.part('k', id, 1), { body: stream('part data') }), 411, 'MissingContentLength', 'part');
    expect(b.partNumbers((await b.listParts('k', id)).text)).toEqual([]);
    const e = await b.putPart('k', id, 1, 'one');
    expectError(await call('POST', b.upl('k', id), { body: stream(b.xml([{ n: 1, etag: e }])) }), 411, 'MissingContentLength', 'complete');
    expect(b.uploadIds((await b.listUploads()).text)).toEqual([id]);
    expect((await b.complete('k', id, [{ n: 1, etag: e }])).status).toBe(200);
  });

  it('a part over 100 MiB → 400 EntityTooLarge: a real body of 100 MiB + 1 bytes, and a declared length alone', { timeout: 60_000 }, async () => {
    const b = await bucket();
    const id = await b.initiate('k');
    expectError(await call('PUT', b.part('k', id, 1), { body: new Uint8Array(100 * MiB + 1) }), 400, 'EntityTooLarge', 'real body');
    const raw = await rawRequest('PUT', b.part('k', id, 2), { 'content-length': String(100 * MiB + 1) }, 'abc', false);
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain('<Code>EntityTooLarge</Code>');
    expect(b.partNumbers((await b.listParts('k', id)).text)).toEqual([]);
  });

  it('a part body cut short (Content-Length 10, 5 bytes sent, then the client closes) → 400 IncompleteBody; nothing stored', async () => {
    const b = await bucket();
    const id = await b.initiate('k');
    const raw = await rawRequest('PUT', b.part('k', id, 1), { 'content-length': '10' }, 'hello', true);
    const lp = await b.listParts('k', id);
    expect(lp.status).toBe(200);
    expect(b.partNumbers(lp.text)).toEqual([]);
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    // docs/protocol.md, "Content-Length": IncompleteBody arises where the runtime delivers the real
    // header, as the HTTP server does; "Errors": an error carries the XML Error body and x-svc-request-id.
    expect(raw).toContain('<Code>IncompleteBody</Code>');
    expect(raw.toLowerCase()).toContain('x-svc-request-id:');
  });

  it('Complete check order through the server; a refused Complete changes nothing; afterwards every use → NoSuchUpload', async () => {
    const b = await bucket();
    const id = await b.initiate('k');
    const other = await b.initiate('other');
    const small = await b.putPart('k', id, 1, bytes(MIN - 1));
    const e2 = await b.putPart('k', id, 2, bytes(MIN));
    const e3 = await b.putPart('k', id, 3, bytes(9));
    const bad = '<CompleteMultipartUpload><Part>';
    const before = (await b.listParts('k', id)).text;
    expectError(await b.complete('k', 'never-issued', bad), 404, 'NoSuchUpload', 'unknown + malformed');
    expectError(await b.complete('k', other, bad), 400, 'InvalidArgument', 'other key + malformed');
    expectError(await b.complete('k', id, bad), 400, 'MalformedXML', 'malformed');
    expectError(await b.complete('k', id, '<CompleteMultipartUpload></CompleteMultipartUpload>'), 400, 'MalformedXML', 'no Part');
    expectError(await b.complete('k', id, [{ n: 3, etag: md5('nope') }, { n: 2, etag: e2 }]), 400, 'InvalidPartOrder', 'descending + wrong ETag');
    expectError(await b.complete('k', id, [{ n: 2, etag: e2 }, { n: 2, etag: e2 }]), 400, 'InvalidPartOrder', 'duplicate');
    expectError(await b.complete('k', id, [{ n: 1, etag: small }, { n: 4, etag: md5('nope') }]), 400, 'InvalidPart', 'small + not uploaded');
    expectError(await b.complete('k', id, [{ n: 1, etag: small }, { n: 3, etag: e3 }]), 400, 'EntityTooSmall', '16383 bytes');
    expectError(await b.complete('k', id, [{ n: 2, etag: e2 }], { 'x-svc-Object-md5': 'xyz' }), 400, 'InvalidDigest', 'object md5');
    const after = (await b.listParts('k', id)).text;
    expect(after).toBe(before);
    const ok = await b.complete('k', id, [{ n: 2, etag: e2 }, { n: 3, etag: e3 }]);
    expect(ok.status, ok.text).toBe(200);
    await b.expectFinished('k', id);
    expect(b.uploadIds((await b.listUploads()).text)).toEqual([other]);
  });

  it('Abort: 204 with no body; parts gone; every use → NoSuchUpload; the bucket can then be deleted', async () => {
    const b = await bucket();
    const id = await b.initiate('k');
    await Promise.all([1, 2, 3].map((n) => b.putPart('k', id, n, bytes(MIN))));
    expectError(await call('DELETE', `${b.root}/`), 409, 'BucketNotEmpty', 'bucket with an upload');
    expectError(await call('DELETE', b.upl('k', id), { anon: true }), 403, 'AccessDenied', 'anonymous abort');
    const r = await b.abort('k', id);
    expect(r.status, r.text).toBe(204);
    expect(r.body.length).toBe(0);
    await b.expectFinished('k', id);
    expect((await call('DELETE', `${b.root}/`)).status).toBe(200);
  });

  it('metadata given at Initiate takes effect only at Complete; Complete\'s x-svc-meta-* win', async () => {
    const b = await bucket();
    expect((await call('PUT', b.obj('k'), { body: 'old', headers: { 'content-type': 'text/plain' } })).status).toBe(200);
    const id = await b.initiate('k', { 'content-type': 'image/png', 'x-svc-meta-v': 'initiate' });
    const e = await b.putPart('k', id, 1, 'new');
    let h = await call('HEAD', b.obj('k'));
    expect(h.headers.get('content-type')).toBe('text/plain');
    expect(h.headers.get('x-svc-meta-v')).toBeNull();
    expect((await b.complete('k', id, [{ n: 1, etag: e }], { 'x-svc-meta-v': 'complete' })).status).toBe(200);
    h = await call('HEAD', b.obj('k'));
    expect(h.headers.get('content-type')).toBe('image/png');
    expect(h.headers.get('x-svc-meta-v')).toBe('complete');
    expect((await call('GET', b.obj('k'))).text).toBe('new');
  });

  it('List Parts paging through 1001 parts and List Uploads paging through 1001 uploads', { timeout: 60_000 }, async () => {
    const b = await bucket();
    const id = await b.initiate('k');
    for (let n = 1; n <= 1001; n += 50) {
      const batch = [];
      for (let m = n; m <= Math.min(1001, n + 49); m++) batch.push(b.putPart('k', id, m, `p${m}`));
      await Promise.all(batch);
    }
    for (const max of [undefined, 1000, 333]) {
      const seen: number[] = [];
      let marker = 0;
      for (let page = 0; page < 10; page++) {
        const q = (max !== undefined ? `&max-parts=${max}` : '') + (marker ? `&part-number-marker=${marker}` : '');
        const r = await b.listParts('k', id, q);
        expect(r.status, r.text).toBe(200);
        expect(tag(r.text, 'PartNumberMarker')).toBe(String(marker));
        const nums = b.partNumbers(r.text);
        seen.push(...nums);
        if (tag(r.text, 'IsTruncated') === 'false') break;
        expect(nums.length).toBe(max ?? 1000);
        expect(tag(r.text, 'NextPartNumberMarker')).toBe(String(nums.at(-1)));
        marker = Number(tag(r.text, 'NextPartNumberMarker'));
      }
      expect(seen, `max-parts=${max}`).toEqual(Array.from({ length: 1001 }, (_, i) => i + 1));
    }
    expectError(await b.listParts('k', id, '&max-parts=1001'), 400, 'InvalidArgument', 'max-parts=1001');
    expect(b.partNumbers((await b.listParts('k', id, '&max-parts=0')).text)).toEqual([]);

    // 1000 more uploads (1001 with the one above), four per key, initiated in order
    const made: { key: string; id: string; i: number }[] = [{ key: 'k', id, i: 0 }];
    for (let i = 1; i < 1001; i++) {
      const key = `u${String(i % 250).padStart(3, '0')}`;
      made.push({ key, id: await b.initiate(key), i });
    }
    const expected = [...made].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : x.i - y.i)).map((u) => u.id);
    for (const max of [undefined, 1000, 300]) {
      const seen: string[] = [];
      let km = '';
      let um = '';
      for (let page = 0; page < 10; page++) {
        const q = new URLSearchParams();
        if (max !== undefined) q.set('max-uploads', String(max));
        if (km) q.set('key-marker', km);
        if (um) q.set('upload-id-marker', um);
        const r = await b.listUploads(q.size ? '&' + q.toString() : '');
        expect(r.status, r.text).toBe(200);
        const ids = b.uploadIds(r.text);
        seen.push(...ids);
        if (tag(r.text, 'IsTruncated') === 'false') break;
        expect(ids.length).toBe(max ?? 1000);
        km = tag(r.text, 'NextKeyMarker') ?? '';
        um = tag(r.text, 'NextUploadIdMarker') ?? '';
        expect(um).toBe(ids.at(-1));
      }
      expect(seen, `max-uploads=${max}`).toEqual(expected);
    }
    expectError(await b.listUploads('&max-uploads=1001'), 400, 'InvalidArgument', 'max-uploads=1001');
  });

  it('races: two Completes → one 200, one NoSuchUpload; Abort racing part uploads → each part 200 or NoSuchUpload, nothing left', async () => {
    const b = await bucket();
    const id = await b.initiate('k');
    const e1 = await b.putPart('k', id, 1, bytes(MIN));
    const e2 = await b.putPart('k', id, 2, bytes(10));
    const rs = await Promise.all([b.complete('k', id, [{ n: 1, etag: e1 }, { n: 2, etag: e2 }]), b.complete('k', id, [{ n: 1, etag: e1 }])]);
    expect(rs.map((r) => r.status).sort(), rs.map((r) => r.text).join('\n')).toEqual([200, 404]);
    expect(code(rs.find((r) => r.status === 404)!.text)).toBe('NoSuchUpload');
    await b.expectFinished('k', id);

    const id2 = await b.initiate('j');
    await b.putPart('j', id2, 1, bytes(MIN));
    const ups = Array.from({ length: 16 }, (_, i) => call('PUT', b.part('j', id2, i + 2), { body: bytes(MIN) }));
    const ab = b.abort('j', id2);
    const more = Array.from({ length: 16 }, (_, i) => call('PUT', b.part('j', id2, i + 20), { body: bytes(MIN) }));
    const [ar, ...prs] = await Promise.all([ab, ...ups, ...more]);
    expect(ar.status, ar.text).toBe(204);
    for (const r of prs) {
      expect([200, 404], r.text).toContain(r.status);
      if (r.status === 404) expect(code(r.text)).toBe('NoSuchUpload');
    }
    await b.expectFinished('j', id2);
    expect(b.uploadIds((await b.listUploads()).text)).toEqual([]);
  });

  it('Copy (new object, plain MD5 ETag) and Move (same ETag) of a multipart object through the server', async () => {
    const b = await bucket();
    const id = await b.initiate('src', { 'content-type': 'application/x-test' });
    const data = [bytes(MIN), bytes(77)];
    const etags = [await b.putPart('src', id, 1, data[0]!), await b.putPart('src', id, 2, data[1]!)];
    expect((await b.complete('src', id, [{ n: 1, etag: etags[0]! }, { n: 2, etag: etags[1]! }])).status).toBe(200);
    const content = concat(...data);
    const cp = await call('PUT', b.obj('copy'), { headers: { 'x-svc-copy-source': `/${b.name}/src` } });
    expect(cp.status, cp.text).toBe(200);
    let g = await call('GET', b.obj('copy'));
    expect(md5(g.body)).toBe(md5(content));
    expect(g.headers.get('etag')).toBe(`"${md5(content)}"`);
    expect(g.headers.get('content-type')).toBe('application/x-test');
    const mv = await call('PUT', b.obj('moved'), { headers: { 'x-svc-move-source': `/${b.name}/src` } });
    expect(mv.status, mv.text).toBe(200);
    expect((await call('GET', b.obj('src'))).status).toBe(404);
    g = await call('GET', b.obj('moved'));
    expect(md5(g.body)).toBe(md5(content));
    expect(g.headers.get('etag')).toBe(`"${multipartEtag(etags)}"`);
  });
});
