// Multipart upload through handle(): everything that needs the UploadId Initiate returns, the state
// table, every error code of the six operations, Complete's check order, paging, the multipart ETag
// (computed here with node:crypto), the storage design (no copy at Complete, nothing left behind,
// atomic Complete) and races. Written from docs/protocol.md ("Multipart uploads", "Multipart
// rules", "ETags and Content-MD5", "Errors"); the store's records are read only to count them
// (test/support/stores.ts contents()). Runs over both Node stores, fake-indexeddb and LMDB.
import { describe, it, expect, beforeAll } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { newService, send, buildRequest, errorCode, twoRuntimes, type SendOptions } from '../support/service.ts';
import { STORE_KINDS, contents, type StoreKind } from '../support/stores.ts';

type Svc = Awaited<ReturnType<typeof newService>>;
type Res = Awaited<ReturnType<typeof send>>;

const B = 'http://photos.svc.localhost';
const KiB = 1024;
const MiB = 1024 * KiB;
/** docs/protocol.md, "Limits": every part but the last must be at least 16 KiB (16384 bytes). */
const MIN = 16 * KiB;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const md5 = (b: Uint8Array | string): string => createHash('md5').update(b).digest('hex');
const md5b64 = (b: Uint8Array | string): string => createHash('md5').update(b).digest('base64');
/** docs/protocol.md, "ETags and Content-MD5": md5hex(e1 + "-" + e2 + "-" + … + eN + "-") + "-1", the ETags
 * unquoted hex, in list order. */
const multipartEtag = (etags: string[]): string => md5(etags.map((e) => `${e}-`).join('')) + '-1';
const bytes = (n: number): Uint8Array => new Uint8Array(randomBytes(n));
const concat = (...parts: Uint8Array[]): Uint8Array => new Uint8Array(Buffer.concat(parts));
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

const enc = (key: string): string => key.split('/').map((s) => encodeURIComponent(s)).join('/');
const objUrl = (key: string, b = B): string => `${b}/${enc(key)}`;
const uploadUrl = (key: string, id: string, b = B): string => `${objUrl(key, b)}?uploadId=${encodeURIComponent(id)}`;
const partUrl = (key: string, id: string, n: number | string, b = B): string =>
  `${objUrl(key, b)}?partNumber=${n}&uploadId=${encodeURIComponent(id)}`;

/** Text of the first `<name>` element (exact name, so `PartNumber` never matches `PartNumberMarker`). */
const tag = (text: string, name: string): string | undefined => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];
const unquote = (s: string | null | undefined): string => (s ?? '').replace(/&quot;/g, '"').replace(/^"|"$/g, '');

async function service(): Promise<Svc> {
  const s = await newService({ kind });
  expect((await send(s.handle, 'PUT', `${B}/`)).status).toBe(200);
  return s;
}

const call = (s: Svc, method: string, url: string, o: SendOptions = {}): Promise<Res> => send(s.handle, method, url, o);

async function initiate(s: Svc, key: string, headers: Record<string, string> = {}, b = B): Promise<string> {
  const r = await call(s, 'POST', `${objUrl(key, b)}?uploads`, { headers });
  expect(r.status, r.text).toBe(200);
  const id = tag(r.text, 'UploadId');
  expect(id).toBeTruthy();
  return id!;
}

const uploadPart = (s: Svc, key: string, id: string, n: number | string, body: Uint8Array | string, o: SendOptions = {}) =>
  call(s, 'PUT', partUrl(key, id, n), { ...o, body });

/** Uploads a part that must succeed; returns its ETag unquoted. */
async function putPart(s: Svc, key: string, id: string, n: number, body: Uint8Array | string): Promise<string> {
  const r = await uploadPart(s, key, id, n, body);
  expect(r.status, r.text).toBe(200);
  expect(r.headers.get('etag')).toBe(`"${md5(body)}"`);
  return md5(body);
}

interface ListedPart { n: number | string; etag: string }
function completeXml(parts: ListedPart[], quote = true): string {
  const q = quote ? '"' : '';
  return (
    '<CompleteMultipartUpload>' +
    parts.map((p) => `<Part><PartNumber>${p.n}</PartNumber><ETag>${q}${p.etag}${q}</ETag></Part>`).join('') +
    '</CompleteMultipartUpload>'
  );
}

function complete(s: Svc, key: string, id: string, parts: ListedPart[] | string, o: SendOptions = {}): Promise<Res> {
  return call(s, 'POST', uploadUrl(key, id), { ...o, body: typeof parts === 'string' ? parts : completeXml(parts) });
}

const abort = (s: Svc, key: string, id: string, o: SendOptions = {}) => call(s, 'DELETE', uploadUrl(key, id), o);
const listParts = (s: Svc, key: string, id: string, query = '') => call(s, 'GET', uploadUrl(key, id) + query);
const listUploads = (s: Svc, query = '') => call(s, 'GET', `${B}/?uploads${query}`);

function parseParts(text: string) {
  return [...text.matchAll(/<Part>([\s\S]*?)<\/Part>/g)].map((m) => ({
    n: Number(tag(m[1]!, 'PartNumber')),
    etag: unquote(tag(m[1]!, 'ETag')),
    size: Number(tag(m[1]!, 'Size')),
    lastModified: tag(m[1]!, 'LastModified') ?? '',
  }));
}
function parseUploads(text: string) {
  return [...text.matchAll(/<Upload>([\s\S]*?)<\/Upload>/g)].map((m) => ({
    key: tag(m[1]!, 'Key') ?? '',
    uploadId: tag(m[1]!, 'UploadId') ?? '',
    initiated: tag(m[1]!, 'Initiated') ?? '',
  }));
}

/** GET with the raw bytes (send() decodes text, which loses random bytes). */
async function getBytes(s: Svc, key: string, headers: Record<string, string> = {}) {
  const res = await s.handle(await buildRequest('GET', objUrl(key), { headers }));
  const body = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body };
}

function expectError(r: Res, status: number, code: string, what = ''): void {
  expect(r.status, `${what} ${r.text}`).toBe(status);
  expect(errorCode(r.text), `${what} code`).toBe(code);
  expect(r.headers.get('content-type') ?? '', what).toMatch(/^application\/xml/);
}

// ------------------------------------------------------------------------------------------------
// The database, only to count what is left behind
// ------------------------------------------------------------------------------------------------

interface PartRec { uploadId: string; partNumber: number; etag: string; size: number; bodyId: string }
interface ObjRec { bucket: string; key: string; chunks: { id: string; size: number }[]; etag: string }

async function records(s: Svc) {
  const c = await contents(s.store);
  const uploads: { uploadId: string }[] = c.uploads;
  const parts: PartRec[] = c.parts;
  const bodies = c.bodies.map((b) => b.id).sort();
  const objects: ObjRec[] = c.objects;
  return { uploads, parts, bodies, objects };
}

/** Everything stored, as comparable data (for "the upload is exactly as it was"). */
async function snapshot(s: Svc): Promise<string> {
  const r = await records(s);
  return JSON.stringify(r);
}

/** Body records referenced by neither an object nor a part, and references to missing bodies. */
async function orphans(s: Svc) {
  const r = await records(s);
  const referenced = [...r.objects.flatMap((o) => o.chunks.map((c) => c.id)), ...r.parts.map((p) => p.bodyId)];
  const have = new Set(r.bodies);
  return {
    unreferenced: r.bodies.filter((id) => !referenced.includes(id)),
    dangling: referenced.filter((id) => !have.has(id)),
    sharedReferences: referenced.filter((id, i) => referenced.indexOf(id) !== i),
  };
}

async function expectNoOrphans(s: Svc): Promise<void> {
  expect(await orphans(s)).toEqual({ unreferenced: [], dangling: [], sharedReferences: [] });
}

async function objectRecord(s: Svc, key: string): Promise<ObjRec | undefined> {
  return (await records(s)).objects.find((o) => o.bucket === 'photos' && o.key === key);
}

async function partRecords(s: Svc, id: string): Promise<PartRec[]> {
  return (await records(s)).parts.filter((p) => p.uploadId === id).sort((a, b) => a.partNumber - b.partNumber);
}

/** Every later use of a finished UploadId is 404 NoSuchUpload (docs/protocol.md, "Multipart rules"). */
async function expectFinished(s: Svc, key: string, id: string): Promise<void> {
  expectError(await uploadPart(s, key, id, 1, bytes(10)), 404, 'NoSuchUpload', 'Upload Part');
  expectError(await complete(s, key, id, [{ n: 1, etag: md5('x') }]), 404, 'NoSuchUpload', 'Complete');
  expectError(await abort(s, key, id), 404, 'NoSuchUpload', 'Abort');
  expectError(await listParts(s, key, id), 404, 'NoSuchUpload', 'List Parts');
  const ups = parseUploads((await listUploads(s)).text);
  expect(ups.map((u) => u.uploadId)).not.toContain(id);
}

// ================================================================================================
// Initiate
// ================================================================================================

/** The store the tests below run on: each describe.each round sets it before its tests. */
let kind: StoreKind = 'idb';

describe.each(STORE_KINDS)('%s store', (storeKind) => {
  beforeAll(() => {
    kind = storeKind;
  });

  describe('Initiate Multipart Upload', () => {
    it('UploadIds are unique, URL-safe, never purely digits and sort in the order of initiation (50 in a row)', async () => {
      const s = await service();
      const ids: string[] = [];
      for (let i = 0; i < 50; i++) ids.push(await initiate(s, ['a', 'b', 'c'][i % 3]!));
      expect(new Set(ids).size).toBe(50);
      for (const id of ids) {
        expect(id).toMatch(/^[A-Za-z0-9._~-]+$/); // unreserved URL characters only
        expect(id).not.toMatch(/^\d+$/);
        expect(encodeURIComponent(id)).toBe(id);
      }
      const sorted = [...ids].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
      expect(sorted).toEqual(ids);
      // List Uploads: by key, then uploadId, i.e. each key's uploads in initiation order
      const listed = parseUploads((await listUploads(s)).text);
      const expected = ['a', 'b', 'c'].flatMap((k) => ids.filter((_, i) => ['a', 'b', 'c'][i % 3] === k).map((id) => ({ k, id })));
      expect(listed.map((u) => ({ k: u.key, id: u.uploadId }))).toEqual(expected);
    });

    it('the upload is listed with its Initiated time, Owner and StorageClass', async () => {
      const s = await service();
      const before = Date.now();
      const id = await initiate(s, 'k');
      const after = Date.now();
      const r = await listUploads(s);
      const [u] = parseUploads(r.text);
      expect(u?.uploadId).toBe(id);
      expect(u?.initiated).toMatch(ISO_MS);
      const t = Date.parse(u!.initiated);
      expect(t).toBeGreaterThanOrEqual(before - 1000);
      expect(t).toBeLessThanOrEqual(after + 1000);
      expect(r.text).toMatch(/<Upload>[\s\S]*<Owner>\s*<ID>svcadmin<\/ID>\s*<DisplayName>svcadmin<\/DisplayName>\s*<\/Owner>[\s\S]*<StorageClass>STANDARD<\/StorageClass>/);
    });

    it('initiating creates no object, no part and no body record', async () => {
      const s = await service();
      await initiate(s, 'k', { 'content-type': 'image/png', 'x-svc-meta-a': '1' });
      const r = await records(s);
      expect(r.uploads.length).toBe(1);
      expect(r.parts.length).toBe(0);
      expect(r.bodies.length).toBe(0);
      expect(r.objects.length).toBe(0);
      expect((await call(s, 'HEAD', objUrl('k'))).status).toBe(404);
    });
  });

  // ================================================================================================
  // Upload Part
  // ================================================================================================

  describe('Upload Part', () => {
    it('→ 200, the quoted MD5 of the part as ETag and no body; List Parts shows number, size, ETag and time', async () => {
      const s = await service();
      const id = await initiate(s, 'big');
      const data = bytes(1000);
      const before = Date.now();
      const r = await uploadPart(s, 'big', id, 7, data);
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('etag')).toBe(`"${md5(data)}"`);
      expect(r.text).toBe('');
      expect(r.headers.get('x-svc-request-id')).toBeTruthy();
      const parts = parseParts((await listParts(s, 'big', id)).text);
      expect(parts.map((p) => ({ n: p.n, etag: p.etag, size: p.size }))).toEqual([{ n: 7, etag: md5(data), size: 1000 }]);
      expect(parts[0]!.lastModified).toMatch(ISO_MS);
      expect(Math.abs(Date.parse(parts[0]!.lastModified) - before)).toBeLessThan(5000);
      // the part is not an object
      expect((await call(s, 'GET', objUrl('big'))).status).toBe(404);
    });

    it('a 0-byte part is stored (Size 0, ETag = MD5 of nothing)', async () => {
      const s = await service();
      const id = await initiate(s, 'big');
      const r = await uploadPart(s, 'big', id, 1, '');
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('etag')).toBe('"d41d8cd98f00b204e9800998ecf8427e"');
      const parts = parseParts((await listParts(s, 'big', id)).text);
      expect(parts.map((p) => [p.n, p.size, p.etag])).toEqual([[1, 0, 'd41d8cd98f00b204e9800998ecf8427e']]);
    });

    it('part numbers 1 and 10000 are accepted; 0, 10001, -1, abc, 1.5, empty and missing → 400 InvalidArgument, nothing stored', async () => {
      const s = await service();
      const id = await initiate(s, 'big');
      await putPart(s, 'big', id, 1, 'first');
      await putPart(s, 'big', id, 10000, 'last');
      const before = await snapshot(s);
      for (const n of ['0', '10001', '-1', 'abc', '1.5', '', '99999999999999999999']) {
        expectError(await uploadPart(s, 'big', id, n, 'bad'), 400, 'InvalidArgument', `partNumber=${n}`);
      }
      // no partNumber at all, but an uploadId: an Upload Part without a part number
      expectError(await call(s, 'PUT', uploadUrl('big', id), { body: 'bad' }), 400, 'InvalidArgument', 'missing partNumber');
      expect(await snapshot(s)).toBe(before);
      expect(parseParts((await listParts(s, 'big', id)).text).map((p) => p.n)).toEqual([1, 10000]);
      expect((await call(s, 'GET', objUrl('big'))).status).toBe(404); // no PUT Object happened either
    });

    it('an UploadId of another key or another bucket → 400 InvalidArgument; neither upload changes', async () => {
      const s = await service();
      expect((await call(s, 'PUT', 'http://second.svc.localhost/')).status).toBe(200);
      const other = await initiate(s, 'other');
      const elsewhere = await initiate(s, 'big', {}, 'http://second.svc.localhost');
      const mine = await initiate(s, 'big');
      await putPart(s, 'other', other, 1, bytes(MIN));
      const before = await snapshot(s);
      expectError(await uploadPart(s, 'big', other, 1, 'x'), 400, 'InvalidArgument', 'part, other key');
      expectError(await uploadPart(s, 'big', elsewhere, 1, 'x'), 400, 'InvalidArgument', 'part, other bucket');
      expectError(await complete(s, 'big', other, [{ n: 1, etag: md5('x') }]), 400, 'InvalidArgument', 'complete, other key');
      expectError(await complete(s, 'big', elsewhere, [{ n: 1, etag: md5('x') }]), 400, 'InvalidArgument', 'complete, other bucket');
      expectError(await listParts(s, 'big', other), 400, 'InvalidArgument', 'list parts, other key');
      expectError(await listParts(s, 'big', elsewhere), 400, 'InvalidArgument', 'list parts, other bucket');
      // Abort with an UploadId of another key: no code is fixed for it (InvalidArgument today,
      // docs/protocol.md, "Multipart uploads"). Whatever the code, it must be refused and must not abort the other key's upload.
      const ab = await abort(s, 'big', other);
      expect(ab.status, ab.text).toBeGreaterThanOrEqual(400);
      expect(['InvalidArgument', 'NoSuchUpload']).toContain(errorCode(ab.text));
      expect(await snapshot(s)).toBe(before);
      expect(parseParts((await listParts(s, 'other', other)).text).length).toBe(1);
      expect(parseUploads((await listUploads(s)).text).map((u) => u.uploadId)).toEqual([mine, other]);
    });

    it('Content-MD5 matching (base64 or hex) → 200; mismatch → 400 BadDigest; neither form → 400 InvalidDigest; nothing stored', async () => {
      const s = await service();
      const id = await initiate(s, 'big');
      const data = bytes(5000);
      let r = await uploadPart(s, 'big', id, 1, data, { headers: { 'content-md5': md5b64(data) } });
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('etag')).toBe(`"${md5(data)}"`);
      r = await uploadPart(s, 'big', id, 2, data, { headers: { 'content-md5': md5(data) } });
      expect(r.status, r.text).toBe(200);
      const before = await snapshot(s);
      expectError(await uploadPart(s, 'big', id, 3, data, { headers: { 'content-md5': md5b64('other') } }), 400, 'BadDigest', 'b64');
      expectError(await uploadPart(s, 'big', id, 3, data, { headers: { 'content-md5': md5('other') } }), 400, 'BadDigest', 'hex');
      // replacing an existing part with a bad digest leaves the old part
      expectError(await uploadPart(s, 'big', id, 1, bytes(10), { headers: { 'content-md5': md5b64(data) } }), 400, 'BadDigest', 'replace');
      for (const bad of ['xyz', 'not base64 at all!', md5(data).slice(1)]) {
        expectError(await uploadPart(s, 'big', id, 3, data, { headers: { 'content-md5': bad } }), 400, 'InvalidDigest', bad);
      }
      expect(await snapshot(s)).toBe(before);
      expect(parseParts((await listParts(s, 'big', id)).text).map((p) => [p.n, p.etag])).toEqual([[1, md5(data)], [2, md5(data)]]);
    });

    it('no Content-Length → 411 MissingContentLength; Content-Length ≠ body → 400 IncompleteBody; nothing stored', async () => {
      const s = await service();
      const id = await initiate(s, 'big');
      const before = await snapshot(s);
      expectError(await uploadPart(s, 'big', id, 1, 'hello', { contentLength: 'omit' }), 411, 'MissingContentLength');
      expectError(await uploadPart(s, 'big', id, 1, 'hello', { contentLength: 10 }), 400, 'IncompleteBody', 'longer');
      expectError(await uploadPart(s, 'big', id, 1, 'hello', { contentLength: 3 }), 400, 'IncompleteBody', 'shorter');
      expect(await snapshot(s)).toBe(before);
      expect(parseParts((await listParts(s, 'big', id)).text)).toEqual([]);
    });

    it('a declared size over 100 MiB → 400 EntityTooLarge; exactly 100 MiB is not too large', async () => {
      const s = await service();
      const id = await initiate(s, 'big');
      const before = await snapshot(s);
      expectError(await uploadPart(s, 'big', id, 1, 'tiny', { contentLength: 100 * MiB + 1 }), 400, 'EntityTooLarge', '100 MiB + 1');
      // 100 MiB declared, 4 bytes sent: the size is allowed, the body is incomplete
      expectError(await uploadPart(s, 'big', id, 1, 'tiny', { contentLength: 100 * MiB }), 400, 'IncompleteBody', '100 MiB');
      expect(await snapshot(s)).toBe(before);
    });

    it('a real body of 100 MiB + 1 bytes → 400 EntityTooLarge, nothing stored', { timeout: 60_000 }, async () => {
      const s = await service();
      const id = await initiate(s, 'big');
      const r = await uploadPart(s, 'big', id, 1, new Uint8Array(100 * MiB + 1));
      expectError(r, 400, 'EntityTooLarge');
      const rec = await records(s);
      expect(rec.parts.length).toBe(0);
      expect(rec.bodies.length).toBe(0);
    });

    it('the same part number again replaces the part: new ETag listed, old bytes deleted; Complete with the old ETag → InvalidPart', async () => {
      const s = await service();
      const id = await initiate(s, 'big');
      const v1 = bytes(MIN);
      const v2 = bytes(MIN + 10);
      const tail = bytes(3);
      const e1 = await putPart(s, 'big', id, 1, v1);
      const et = await putPart(s, 'big', id, 2, tail);
      const oldBody = (await partRecords(s, id))[0]!.bodyId;
      const e2 = await putPart(s, 'big', id, 1, v2);
      expect(e2).not.toBe(e1);
      const parts = parseParts((await listParts(s, 'big', id)).text);
      expect(parts.map((p) => [p.n, p.etag, p.size])).toEqual([[1, e2, MIN + 10], [2, et, 3]]);
      const rec = await records(s);
      expect(rec.parts.length).toBe(2);
      expect(rec.bodies.length).toBe(2);
      expect(rec.bodies).not.toContain(oldBody);
      await expectNoOrphans(s);

      const before = await snapshot(s);
      expectError(await complete(s, 'big', id, [{ n: 1, etag: e1 }, { n: 2, etag: et }]), 400, 'InvalidPart', 'old ETag');
      expect(await snapshot(s)).toBe(before);
      const ok = await complete(s, 'big', id, [{ n: 1, etag: e2 }, { n: 2, etag: et }]);
      expect(ok.status, ok.text).toBe(200);
      const got = await getBytes(s, 'big');
      expect(md5(got.body)).toBe(md5(concat(v2, tail)));
      expect(got.headers.get('etag')).toBe(`"${multipartEtag([e2, et])}"`);
    });

    it('32 parts uploaded at once are all stored, listed and combined in part-number order', async () => {
      const s = await service();
      const id = await initiate(s, 'big');
      const data = Array.from({ length: 32 }, (_, i) => bytes(MIN + i * 97));
      const results = await Promise.all(data.map((d, i) => uploadPart(s, 'big', id, i + 1, d)));
      results.forEach((r, i) => {
        expect(r.status, `part ${i + 1}: ${r.text}`).toBe(200);
        expect(r.headers.get('etag')).toBe(`"${md5(data[i]!)}"`);
      });
      const listed = parseParts((await listParts(s, 'big', id)).text);
      expect(listed.map((p) => [p.n, p.etag, p.size])).toEqual(data.map((d, i) => [i + 1, md5(d), d.length]));
      expect((await records(s)).bodies.length).toBe(32);
      const etags = data.map((d) => md5(d));
      const c = await complete(s, 'big', id, etags.map((etag, i) => ({ n: i + 1, etag })));
      expect(c.status, c.text).toBe(200);
      const got = await getBytes(s, 'big');
      expect(got.body.length).toBe(data.reduce((n, d) => n + d.length, 0));
      expect(md5(got.body)).toBe(md5(concat(...data)));
      expect(got.headers.get('etag')).toBe(`"${multipartEtag(etags)}"`);
      await expectNoOrphans(s);
    });

    it('anonymous Upload Part with a real UploadId → 403 AccessDenied, nothing stored', async () => {
      const s = await service();
      const id = await initiate(s, 'big');
      const before = await snapshot(s);
      expectError(await uploadPart(s, 'big', id, 1, 'evil', { auth: 'anon' }), 403, 'AccessDenied');
      expectError(await complete(s, 'big', id, [{ n: 1, etag: md5('evil') }], { auth: 'anon' }), 403, 'AccessDenied');
      expectError(await abort(s, 'big', id, { auth: 'anon' }), 403, 'AccessDenied');
      expectError(await call(s, 'GET', uploadUrl('big', id), { auth: 'anon' }), 403, 'AccessDenied');
      expect(await snapshot(s)).toBe(before);
    });
  });

  // ================================================================================================
  // Complete
  // ================================================================================================

  describe('Complete Multipart Upload', () => {
    it('→ 200 CompleteMultipartUploadResult{Location,Bucket,Key,ETag}; GET and HEAD give the bytes and the multipart ETag computed here', async () => {
      const s = await service();
      const key = 'dir/big.bin';
      const id = await initiate(s, key);
      const data = [bytes(MIN), bytes(MIN + 1), bytes(5)];
      const etags: string[] = [];
      for (const [i, d] of data.entries()) etags.push(await putPart(s, key, id, i + 1, d));
      const expected = multipartEtag(etags);
      expect(expected).toMatch(/^[0-9a-f]{32}-1$/);
      expect(expected.slice(0, 32)).not.toBe(md5(concat(...data))); // not an MD5 of the content

      const r = await complete(s, key, id, etags.map((etag, i) => ({ n: i + 1, etag })));
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/xml/);
      expect(r.text).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?>\s*<CompleteMultipartUploadResult>/);
      expect(tag(r.text, 'Location')).toBe('http://photos.svc.localhost/dir/big.bin');
      expect(tag(r.text, 'Bucket')).toBe('photos');
      expect(tag(r.text, 'Key')).toBe(key);
      expect(unquote(tag(r.text, 'ETag'))).toBe(expected);
      expect(tag(r.text, 'ETag')).toMatch(/^(?:"|&quot;)[0-9a-f]{32}-1(?:"|&quot;)$/); // written quoted (docs/protocol.md, "ETags and Content-MD5")

      const size = data.reduce((n, d) => n + d.length, 0);
      const got = await getBytes(s, key);
      expect(got.status).toBe(200);
      expect(got.body.length).toBe(size);
      expect(md5(got.body)).toBe(md5(concat(...data)));
      expect(got.headers.get('etag')).toBe(`"${expected}"`);
      expect(got.headers.get('content-length')).toBe(String(size));
      const head = await call(s, 'HEAD', objUrl(key));
      expect(head.status).toBe(200);
      expect(head.headers.get('etag')).toBe(`"${expected}"`);
      expect(head.headers.get('content-length')).toBe(String(size));
      const listing = await call(s, 'GET', `${B}/`);
      expect(listing.text).toMatch(new RegExp(`<Key>dir/big\\.bin</Key>[\\s\\S]*?<ETag>(?:"|&quot;)${expected}(?:"|&quot;)</ETag>\\s*<Size>${size}</Size>`));
      // the upload is finished and nothing but the object's chunks is left
      await expectFinished(s, key, id);
      const rec = await records(s);
      expect(rec.uploads.length).toBe(0);
      expect(rec.parts.length).toBe(0);
      expect(rec.bodies.length).toBe(3);
      await expectNoOrphans(s);
    });

    it('ETags in the part list may be quoted or unquoted; a pretty-printed body with an XML declaration is accepted', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      const e1 = await putPart(s, 'k', id, 1, bytes(MIN));
      const e2 = await putPart(s, 'k', id, 2, bytes(MIN));
      const e3 = await putPart(s, 'k', id, 3, bytes(10));
      const body =
        '<?xml version="1.0" encoding="UTF-8"?>\n<CompleteMultipartUpload>\n' +
        `  <Part>\n    <PartNumber>1</PartNumber>\n    <ETag>"${e1}"</ETag>\n  </Part>\n` +
        `  <Part>\n    <PartNumber>2</PartNumber>\n    <ETag>${e2}</ETag>\n  </Part>\n` +
        `  <Part><ETag>&quot;${e3}&quot;</ETag><PartNumber>3</PartNumber></Part>\n` +
        '</CompleteMultipartUpload>\n';
      const r = await complete(s, 'k', id, body);
      expect(r.status, r.text).toBe(200);
      expect(unquote(tag(r.text, 'ETag'))).toBe(multipartEtag([e1, e2, e3]));
    });

    it('unquoted ETags only', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      const e1 = await putPart(s, 'k', id, 1, bytes(MIN));
      const e2 = await putPart(s, 'k', id, 2, bytes(1));
      const r = await complete(s, 'k', id, completeXml([{ n: 1, etag: e1 }, { n: 2, etag: e2 }], false));
      expect(r.status, r.text).toBe(200);
      expect((await getBytes(s, 'k')).headers.get('etag')).toBe(`"${multipartEtag([e1, e2])}"`);
    });

    it('part numbers may have gaps (1, 3, 7, 10000)', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      const nums = [1, 3, 7, 10000];
      const data = nums.map((n, i) => bytes(i === nums.length - 1 ? 77 : MIN + n));
      const etags: string[] = [];
      for (const [i, n] of nums.entries()) etags.push(await putPart(s, 'k', id, n, data[i]!));
      const r = await complete(s, 'k', id, nums.map((n, i) => ({ n, etag: etags[i]! })));
      expect(r.status, r.text).toBe(200);
      const got = await getBytes(s, 'k');
      expect(md5(got.body)).toBe(md5(concat(...data)));
      expect(got.headers.get('etag')).toBe(`"${multipartEtag(etags)}"`);
    });

    it('no byte is copied: the object is made of exactly the listed parts\' bodies; unlisted parts are deleted', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      const data = [bytes(MIN), bytes(MIN), bytes(MIN), bytes(MIN), bytes(9)];
      const etags: string[] = [];
      for (const [i, d] of data.entries()) etags.push(await putPart(s, 'k', id, i + 1, d));
      const before = await partRecords(s, id);
      expect(before.map((p) => p.partNumber)).toEqual([1, 2, 3, 4, 5]);
      const listed = [1, 3, 5];
      const r = await complete(s, 'k', id, listed.map((n) => ({ n, etag: etags[n - 1]! })));
      expect(r.status, r.text).toBe(200);
      const obj = await objectRecord(s, 'k');
      expect(obj?.chunks.map((c) => c.id)).toEqual(listed.map((n) => before[n - 1]!.bodyId));
      expect(obj?.chunks.map((c) => c.size)).toEqual([MIN, MIN, 9]);
      const rec = await records(s);
      expect(rec.bodies.length).toBe(3);
      expect(rec.bodies).toEqual(listed.map((n) => before[n - 1]!.bodyId).sort());
      expect(rec.parts.length).toBe(0);
      expect(rec.uploads.length).toBe(0);
      await expectNoOrphans(s);
      const got = await getBytes(s, 'k');
      expect(md5(got.body)).toBe(md5(concat(data[0]!, data[2]!, data[4]!)));
      expect(got.headers.get('etag')).toBe(`"${multipartEtag(listed.map((n) => etags[n - 1]!))}"`);
    });

    it('a 0-byte last part is allowed; a single part of any size (also 0 bytes) is allowed', async () => {
      const s = await service();
      let id = await initiate(s, 'a');
      const first = bytes(MIN);
      const e1 = await putPart(s, 'a', id, 1, first);
      const e0 = await putPart(s, 'a', id, 2, '');
      let r = await complete(s, 'a', id, [{ n: 1, etag: e1 }, { n: 2, etag: e0 }]);
      expect(r.status, r.text).toBe(200);
      let got = await getBytes(s, 'a');
      expect(got.body.length).toBe(MIN);
      expect(md5(got.body)).toBe(md5(first));
      expect(got.headers.get('etag')).toBe(`"${multipartEtag([e1, 'd41d8cd98f00b204e9800998ecf8427e'])}"`);

      id = await initiate(s, 'b');
      const e = await putPart(s, 'b', id, 1, 'small');
      r = await complete(s, 'b', id, [{ n: 1, etag: e }]);
      expect(r.status, r.text).toBe(200);
      got = await getBytes(s, 'b');
      expect(new TextDecoder().decode(got.body)).toBe('small');
      expect(got.headers.get('etag')).toBe(`"${md5(`${md5('small')}-`)}-1"`);

      id = await initiate(s, 'c');
      const z = await putPart(s, 'c', id, 1, '');
      r = await complete(s, 'c', id, [{ n: 1, etag: z }]);
      expect(r.status, r.text).toBe(200);
      got = await getBytes(s, 'c');
      expect(got.status).toBe(200);
      expect(got.body.length).toBe(0);
      expect(got.headers.get('content-length')).toBe('0');
      await expectNoOrphans(s);
    });

    it('EntityTooSmall: a part other than the last of 16383 bytes (or 0 bytes) → 400; 16384 bytes is enough', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      const e1 = await putPart(s, 'k', id, 1, bytes(MIN - 1));
      const e2 = await putPart(s, 'k', id, 2, bytes(MIN));
      const e3 = await putPart(s, 'k', id, 3, '');
      const e4 = await putPart(s, 'k', id, 4, bytes(5));
      const before = await snapshot(s);
      expectError(await complete(s, 'k', id, [{ n: 1, etag: e1 }, { n: 4, etag: e4 }]), 400, 'EntityTooSmall', '16383, then small');
      expectError(await complete(s, 'k', id, [{ n: 1, etag: e1 }, { n: 2, etag: e2 }]), 400, 'EntityTooSmall', '16383, then 16384');
      expectError(await complete(s, 'k', id, [{ n: 2, etag: e2 }, { n: 3, etag: e3 }, { n: 4, etag: e4 }]), 400, 'EntityTooSmall', '0-byte middle');
      expect(await snapshot(s)).toBe(before);
      const r = await complete(s, 'k', id, [{ n: 2, etag: e2 }, { n: 4, etag: e4 }]);
      expect(r.status, r.text).toBe(200);
      expect((await getBytes(s, 'k')).body.length).toBe(MIN + 5);
    });

    it('check order (docs/protocol.md, "Multipart rules"): NoSuchUpload/InvalidArgument → MalformedXML → InvalidPartOrder → InvalidPart → EntityTooSmall; each refusal leaves the upload unchanged', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      const other = await initiate(s, 'other');
      const small = await putPart(s, 'k', id, 1, bytes(100)); // too small unless last
      const e2 = await putPart(s, 'k', id, 2, bytes(MIN));
      const e3 = await putPart(s, 'k', id, 3, bytes(MIN));
      const e4 = await putPart(s, 'k', id, 4, bytes(7));
      const done = await initiate(s, 'k');
      await putPart(s, 'k', done, 1, 'x');
      expect((await abort(s, 'k', done)).status).toBe(204);
      const before = await snapshot(s);
      const garbage = '<CompleteMultipartUpload><Part><PartNumber>2</PartNumber>';

      // 1. NoSuchUpload / InvalidArgument come before the body is parsed
      expectError(await complete(s, 'k', 'never-issued-id', garbage), 404, 'NoSuchUpload', 'unknown + malformed');
      expectError(await complete(s, 'k', done, garbage), 404, 'NoSuchUpload', 'aborted + malformed');
      expectError(await complete(s, 'k', other, garbage), 400, 'InvalidArgument', 'other key + malformed');

      // 2. MalformedXML: unparsable, no Part — also when the (unparsable) list is descending as well
      const malformed: [string, string][] = [
        ['empty body', ''],
        ['not XML', 'hello'],
        ['unclosed', garbage],
        ['descending and unclosed', `<CompleteMultipartUpload><Part><PartNumber>3</PartNumber><ETag>${e3}</ETag></Part><Part><PartNumber>2</PartNumber><ETag>${e2}</ETag></Part>`],
        ['mismatched tags', `<CompleteMultipartUpload><Part><PartNumber>2</PartNumber><ETag>${e2}</Tag></Part></CompleteMultipartUpload>`],
        ['no Part', '<CompleteMultipartUpload></CompleteMultipartUpload>'],
        ['no Part, self-closing', '<CompleteMultipartUpload/>'],
        ['billion laughs',
          '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">' +
          '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">' +
          '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">' +
          '<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">' +
          '<!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">' +
          '<!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">' +
          '<!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">' +
          '<!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">' +
          '<!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">]>' +
          `<CompleteMultipartUpload><Part><PartNumber>2</PartNumber><ETag>&lol9;</ETag></Part></CompleteMultipartUpload>`],
        // our choice: a Part without its required PartNumber or ETag, or another root element
        // (both children and the root are required; S3 answers MalformedXML).
        ['Part without ETag', '<CompleteMultipartUpload><Part><PartNumber>2</PartNumber></Part></CompleteMultipartUpload>'],
        ['Part without PartNumber', `<CompleteMultipartUpload><Part><ETag>${e2}</ETag></Part></CompleteMultipartUpload>`],
        ['other root', `<Complete><Part><PartNumber>2</PartNumber><ETag>${e2}</ETag></Part></Complete>`],
      ];
      for (const [what, body] of malformed) {
        const started = Date.now();
        expectError(await complete(s, 'k', id, body), 400, 'MalformedXML', what);
        expect(Date.now() - started, what).toBeLessThan(5000);
      }

      // 3. InvalidPartOrder beats InvalidPart and EntityTooSmall
      const order: [string, ListedPart[]][] = [
        ['descending, all valid', [{ n: 3, etag: e3 }, { n: 2, etag: e2 }, { n: 4, etag: e4 }]],
        ['duplicate number', [{ n: 2, etag: e2 }, { n: 2, etag: e2 }, { n: 4, etag: e4 }]],
        ['descending, parts not uploaded', [{ n: 9, etag: md5('a') }, { n: 8, etag: md5('b') }]],
        ['descending, wrong ETags', [{ n: 3, etag: e2 }, { n: 2, etag: e3 }]],
        ['descending, too small', [{ n: 4, etag: e4 }, { n: 1, etag: small }]],
      ];
      for (const [what, parts] of order) expectError(await complete(s, 'k', id, parts), 400, 'InvalidPartOrder', what);

      // 4. InvalidPart beats EntityTooSmall (the too-small part comes first in the list)
      const invalid: [string, ListedPart[]][] = [
        ['not uploaded after a small part', [{ n: 1, etag: small }, { n: 5, etag: md5('nope') }]],
        ['wrong ETag after a small part', [{ n: 1, etag: small }, { n: 4, etag: md5('nope') }]],
        ['ETag of another part', [{ n: 2, etag: e3 }, { n: 3, etag: e3 }]],
        ['ETag of the same part number in another upload', [{ n: 1, etag: md5('x') }]],
      ];
      for (const [what, parts] of invalid) expectError(await complete(s, 'k', id, parts), 400, 'InvalidPart', what);

      // 5. EntityTooSmall last
      expectError(await complete(s, 'k', id, [{ n: 1, etag: small }, { n: 2, etag: e2 }]), 400, 'EntityTooSmall', 'small first');

      // A failed Complete leaves the upload exactly as it was (docs/protocol.md, "Multipart rules")
      expect(await snapshot(s)).toBe(before);
      expect(parseParts((await listParts(s, 'k', id)).text).map((p) => p.n)).toEqual([1, 2, 3, 4]);
      expect((await call(s, 'HEAD', objUrl('k'))).status).toBe(404);
      const ok = await complete(s, 'k', id, [{ n: 2, etag: e2 }, { n: 3, etag: e3 }, { n: 4, etag: e4 }]);
      expect(ok.status, ok.text).toBe(200);
      await expectNoOrphans(s);
    });

    it('a Complete for an upload with no part at all → 400 InvalidPart; the upload stays', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      expectError(await complete(s, 'k', id, [{ n: 1, etag: md5('') }]), 400, 'InvalidPart');
      expect(parseUploads((await listUploads(s)).text).map((u) => u.uploadId)).toEqual([id]);
    });

    it('a PartNumber that is not a part number in the list is refused with 400, the upload unchanged', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      const e1 = await putPart(s, 'k', id, 1, bytes(10));
      const before = await snapshot(s);
      for (const n of ['abc', '0', '10001', '-1', '1.5', '']) {
        const r = await complete(s, 'k', id, [{ n, etag: e1 }]);
        // no code is fixed here (S3: MalformedXML or InvalidPart); never 200 or 500
        expect(r.status, `${n}: ${r.text}`).toBe(400);
        expect(['MalformedXML', 'InvalidPart', 'InvalidArgument'], n).toContain(errorCode(r.text));
      }
      expect(await snapshot(s)).toBe(before);
    });

    it('Complete without Content-Length → 411 MissingContentLength, the upload unchanged', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      const e1 = await putPart(s, 'k', id, 1, 'one');
      const before = await snapshot(s);
      expectError(await complete(s, 'k', id, [{ n: 1, etag: e1 }], { contentLength: 'omit' }), 411, 'MissingContentLength');
      expect(await snapshot(s)).toBe(before);
      expect((await complete(s, 'k', id, [{ n: 1, etag: e1 }])).status).toBe(200);
    });

    it('Content-MD5 of the Complete body: matching → 200; mismatch → 400 BadDigest and the upload unchanged (docs/protocol.md, "ETags and Content-MD5")', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      const e1 = await putPart(s, 'k', id, 1, 'one');
      const body = completeXml([{ n: 1, etag: e1 }]);
      const before = await snapshot(s);
      expectError(await complete(s, 'k', id, body, { headers: { 'content-md5': md5b64(body + ' ') } }), 400, 'BadDigest');
      expect(await snapshot(s)).toBe(before);
      const r = await complete(s, 'k', id, body, { headers: { 'content-md5': md5b64(body) } });
      expect(r.status, r.text).toBe(200);
    });

    it('x-svc-Object-md5: 32 hex chars are stored and returned as x-svc-object-md5 on GET and HEAD; anything else → 400 InvalidDigest, upload unchanged', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      const data = bytes(300);
      const e1 = await putPart(s, 'k', id, 1, data);
      const before = await snapshot(s);
      for (const bad of ['xyz', md5(data).slice(1), md5(data) + 'a', 'g'.repeat(32), md5b64(data), ' ']) {
        expectError(await complete(s, 'k', id, [{ n: 1, etag: e1 }], { headers: { 'x-svc-Object-md5': bad } }), 400, 'InvalidDigest', bad);
      }
      expect(await snapshot(s)).toBe(before);
      const r = await complete(s, 'k', id, [{ n: 1, etag: e1 }], { headers: { 'x-svc-Object-md5': md5(data) } });
      expect(r.status, r.text).toBe(200);
      const got = await getBytes(s, 'k');
      expect(got.headers.get('x-svc-object-md5')).toBe(md5(data));
      expect(got.headers.get('etag')).toBe(`"${multipartEtag([e1])}"`); // the ETag rule is unchanged
      expect((await call(s, 'HEAD', objUrl('k'))).headers.get('x-svc-object-md5')).toBe(md5(data));
      // without the header: no x-svc-object-md5
      const id2 = await initiate(s, 'plain');
      const p = await putPart(s, 'plain', id2, 1, data);
      expect((await complete(s, 'plain', id2, [{ n: 1, etag: p }])).status).toBe(200);
      expect((await call(s, 'HEAD', objUrl('plain'))).headers.get('x-svc-object-md5')).toBeNull();
    });

    it('metadata given at Initiate takes effect only at Complete; Complete\'s own x-svc-meta-* win; Complete\'s Content-Type does not', async () => {
      const s = await service();
      expect((await call(s, 'PUT', objUrl('k'), { body: 'old', headers: { 'content-type': 'text/plain', 'x-svc-meta-b': 'old' } })).status).toBe(200);
      const id = await initiate(s, 'k', { 'content-type': 'image/png', 'x-svc-meta-a': 'from-initiate', 'x-svc-meta-b': 'from-initiate' });
      const id2 = await initiate(s, 'fresh', { 'content-type': 'image/gif', 'x-svc-meta-a': '1', 'x-svc-meta-b': '2' });
      const e1 = await putPart(s, 'k', id, 1, bytes(20));
      const f1 = await putPart(s, 'fresh', id2, 1, bytes(20));
      // before Complete: the old object, with its old metadata; no object at all for "fresh"
      let h = await call(s, 'HEAD', objUrl('k'));
      expect(h.headers.get('content-type')).toBe('text/plain');
      expect(h.headers.get('x-svc-meta-b')).toBe('old');
      expect(h.headers.get('x-svc-meta-a')).toBeNull();
      expect((await call(s, 'HEAD', objUrl('fresh'))).status).toBe(404);

      const r = await complete(s, 'k', id, [{ n: 1, etag: e1 }], {
        headers: { 'content-type': 'application/xml', 'x-svc-meta-b': 'from-complete', 'x-svc-meta-c': 'from-complete' },
      });
      expect(r.status, r.text).toBe(200);
      h = await call(s, 'HEAD', objUrl('k'));
      expect(h.headers.get('content-type')).toBe('image/png');
      expect(h.headers.get('x-svc-meta-b')).toBe('from-complete');
      expect(h.headers.get('x-svc-meta-c')).toBe('from-complete');
      // not asserted: whether Initiate's x-svc-meta-a survives next to Complete's own metadata (today it
      // does: docs/protocol.md, "Multipart rules")

      expect((await complete(s, 'fresh', id2, [{ n: 1, etag: f1 }])).status).toBe(200);
      const g = await getBytes(s, 'fresh');
      expect(g.headers.get('content-type')).toBe('image/gif');
      expect(g.headers.get('x-svc-meta-a')).toBe('1');
      expect(g.headers.get('x-svc-meta-b')).toBe('2');
    });

    it('user metadata over 2048 bytes given at Complete → 400 InvalidArgument (docs/protocol.md, "User metadata"), the upload unchanged', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      const e1 = await putPart(s, 'k', id, 1, 'one');
      const before = await snapshot(s);
      expectError(await complete(s, 'k', id, [{ n: 1, etag: e1 }], { headers: { 'x-svc-meta-big': 'v'.repeat(2100) } }), 400, 'InvalidArgument');
      expect(await snapshot(s)).toBe(before);
      expect((await complete(s, 'k', id, [{ n: 1, etag: e1 }], { headers: { 'x-svc-meta-ok': 'v'.repeat(100) } })).status).toBe(200);
    });

    it('state table: after Complete every use of the UploadId → NoSuchUpload; other UploadIds of the key are unaffected', async () => {
      const s = await service();
      const a = await initiate(s, 'k');
      const b = await initiate(s, 'k');
      const c = await initiate(s, 'k');
      const a1 = await putPart(s, 'k', a, 1, bytes(MIN));
      const a2 = await putPart(s, 'k', a, 2, 'a-tail');
      const bData = [bytes(MIN + 1), bytes(4)];
      const b1 = await putPart(s, 'k', b, 1, bData[0]!);
      const b2 = await putPart(s, 'k', b, 2, bData[1]!);
      await putPart(s, 'k', c, 1, 'c');
      expect((await complete(s, 'k', a, [{ n: 1, etag: a1 }, { n: 2, etag: a2 }])).status).toBe(200);
      await expectFinished(s, 'k', a);
      // b and c untouched, still listed, with their parts
      expect(parseUploads((await listUploads(s)).text).map((u) => u.uploadId)).toEqual([b, c]);
      expect(parseParts((await listParts(s, 'k', b)).text).map((p) => [p.n, p.etag])).toEqual([[1, b1], [2, b2]]);
      expect(parseParts((await listParts(s, 'k', c)).text).map((p) => p.n)).toEqual([1]);
      // b still takes parts and completes: it replaces a's object
      const b3 = await putPart(s, 'k', b, 3, 'b3');
      expect((await complete(s, 'k', b, [{ n: 1, etag: b1 }, { n: 2, etag: b2 }])).status).toBe(200);
      const got = await getBytes(s, 'k');
      expect(md5(got.body)).toBe(md5(concat(...bData)));
      expect(got.headers.get('etag')).toBe(`"${multipartEtag([b1, b2])}"`);
      expect(b3).toBe(md5('b3'));
      await expectFinished(s, 'k', b);
      // c is aborted: gone, every use → NoSuchUpload
      const ab = await abort(s, 'k', c);
      expect(ab.status).toBe(204);
      await expectFinished(s, 'k', c);
      const rec = await records(s);
      expect(rec.uploads.length).toBe(0);
      expect(rec.parts.length).toBe(0);
      expect(rec.bodies.length).toBe(2); // b's two listed parts, nothing of a or c
      await expectNoOrphans(s);
    });

    it('Complete over an existing object replaces it and deletes its bytes (single-request and multipart)', async () => {
      const s = await service();
      expect((await call(s, 'PUT', objUrl('k'), { body: bytes(1000) })).status).toBe(200);
      for (let round = 0; round < 2; round++) {
        const id = await initiate(s, 'k');
        const d = [bytes(MIN), bytes(11)];
        const e = [await putPart(s, 'k', id, 1, d[0]!), await putPart(s, 'k', id, 2, d[1]!)];
        expect((await complete(s, 'k', id, [{ n: 1, etag: e[0]! }, { n: 2, etag: e[1]! }])).status).toBe(200);
        const got = await getBytes(s, 'k');
        expect(md5(got.body)).toBe(md5(concat(...d)));
        expect((await records(s)).bodies.length).toBe(2);
        await expectNoOrphans(s);
      }
    });

    it('Complete is atomic: GETs racing it see the whole old object or the whole new one, each with its own ETag', async () => {
      const s = await service();
      const old = bytes(200 * KiB);
      expect((await call(s, 'PUT', objUrl('k'), { body: old })).status).toBe(200);
      const id = await initiate(s, 'k');
      const d = [bytes(64 * KiB), bytes(64 * KiB), bytes(64 * KiB), bytes(1000)];
      const etags: string[] = [];
      for (const [i, p] of d.entries()) etags.push(await putPart(s, 'k', id, i + 1, p));
      const fresh = concat(...d);
      const want = new Map([
        [md5(old), `"${md5(old)}"`],
        [md5(fresh), `"${multipartEtag(etags)}"`],
      ]);
      const reads: ReturnType<typeof getBytes>[] = [];
      const done = complete(s, 'k', id, etags.map((etag, i) => ({ n: i + 1, etag })));
      for (let i = 0; i < 40; i++) {
        reads.push(getBytes(s, 'k'));
        await tick();
      }
      expect((await done).status).toBe(200);
      reads.push(getBytes(s, 'k'));
      const results = await Promise.all(reads);
      for (const r of results) {
        expect(r.status).toBe(200);
        const sum = md5(r.body);
        expect(want.has(sum), `a read saw ${r.body.length} bytes that are neither version`).toBe(true);
        expect(r.headers.get('etag')).toBe(want.get(sum));
        expect(r.headers.get('content-length')).toBe(String(r.body.length));
      }
      expect(md5(results.at(-1)!.body)).toBe(md5(fresh));
      await expectNoOrphans(s);
      expect((await records(s)).bodies.length).toBe(4);
    });

    it('two Completes racing: one 200, the other 404 NoSuchUpload; the object is the winner\'s list, nothing left behind', async () => {
      const s = await service();
      for (let round = 0; round < 6; round++) {
        const key = `race${round}`;
        const id = await initiate(s, key);
        const d = [bytes(MIN), bytes(MIN), bytes(10)];
        const e: string[] = [];
        for (const [i, p] of d.entries()) e.push(await putPart(s, key, id, i + 1, p));
        const lists: ListedPart[][] = [
          [{ n: 1, etag: e[0]! }, { n: 2, etag: e[1]! }, { n: 3, etag: e[2]! }],
          [{ n: 1, etag: e[0]! }, { n: 3, etag: e[2]! }],
        ];
        const first = round % 2;
        const rs = await Promise.all([complete(s, key, id, lists[first]!), complete(s, key, id, lists[1 - first]!)]);
        const statuses = rs.map((r) => r.status).sort();
        expect(statuses, rs.map((r) => r.text).join('\n')).toEqual([200, 404]);
        const loser = rs.find((r) => r.status === 404)!;
        expect(errorCode(loser.text)).toBe('NoSuchUpload');
        const winner = rs[0]!.status === 200 ? lists[first]! : lists[1 - first]!;
        const got = await getBytes(s, key);
        expect(md5(got.body)).toBe(md5(concat(...winner.map((p) => d[(p.n as number) - 1]!))));
        expect(got.headers.get('etag')).toBe(`"${multipartEtag(winner.map((p) => p.etag))}"`);
        expect((await objectRecord(s, key))?.chunks.length).toBe(winner.length);
        await expectFinished(s, key, id);
      }
      const rec = await records(s);
      expect(rec.uploads.length).toBe(0);
      expect(rec.parts.length).toBe(0);
      await expectNoOrphans(s);
    });

    it('part uploads racing Complete: each is 200 or 404 NoSuchUpload; afterwards no part, no upload and no orphaned body', async () => {
      const s = await service();
      for (let round = 0; round < 3; round++) {
        const key = `k${round}`;
        const id = await initiate(s, key);
        const p1 = bytes(MIN);
        const p2 = bytes(100);
        const e1 = await putPart(s, key, id, 1, p1);
        const e2 = await putPart(s, key, id, 2, p2);
        const ups: Promise<Res>[] = [];
        for (let n = 3; n < 10; n++) ups.push(uploadPart(s, key, id, n, bytes(MIN)));
        ups.push(uploadPart(s, key, id, 2, p2)); // same bytes again: the ETag stays valid either way
        if (round > 0) await tick();
        const c = complete(s, key, id, [{ n: 1, etag: e1 }, { n: 2, etag: e2 }]);
        for (let n = 10; n < 17; n++) ups.push(uploadPart(s, key, id, n, bytes(MIN)));
        const [cr, ...prs] = await Promise.all([c, ...ups]);
        expect(cr.status, cr.text).toBe(200);
        for (const r of prs) {
          expect([200, 404], r.text).toContain(r.status);
          if (r.status === 404) expect(errorCode(r.text)).toBe('NoSuchUpload');
        }
        const got = await getBytes(s, key);
        expect(md5(got.body)).toBe(md5(concat(p1, p2)));
        expect((await objectRecord(s, key))?.chunks.length).toBe(2);
        await expectFinished(s, key, id);
      }
      const rec = await records(s);
      expect(rec.parts.length).toBe(0);
      expect(rec.uploads.length).toBe(0);
      expect(rec.bodies.length).toBe(6);
      await expectNoOrphans(s);
    });
  });

  // ================================================================================================
  // Abort
  // ================================================================================================

  describe('Abort Multipart Upload', () => {
    it('→ 204 with no body; the upload, its parts and their bytes are deleted; every later use → NoSuchUpload', async () => {
      const s = await service();
      expect((await call(s, 'PUT', objUrl('k'), { body: 'existing' })).status).toBe(200);
      const id = await initiate(s, 'k', { 'x-svc-meta-a': '1' });
      const keep = await initiate(s, 'k');
      for (let n = 1; n <= 5; n++) await putPart(s, 'k', id, n, bytes(MIN));
      await putPart(s, 'k', keep, 1, 'kept');
      expect((await records(s)).bodies.length).toBe(7);
      const r = await abort(s, 'k', id);
      expect(r.status, r.text).toBe(204);
      expect(r.text).toBe('');
      expect(r.headers.get('x-svc-request-id')).toBeTruthy();
      await expectFinished(s, 'k', id);
      const rec = await records(s);
      expect(rec.uploads.map((u) => u.uploadId)).toEqual([keep]);
      expect(rec.parts.map((p) => p.uploadId)).toEqual([keep]);
      expect(rec.bodies.length).toBe(2); // the existing object and the other upload's part
      await expectNoOrphans(s);
      // the object at the key and the other upload are untouched
      expect((await call(s, 'GET', objUrl('k'))).text).toBe('existing');
      expect(parseParts((await listParts(s, 'k', keep)).text).map((p) => p.n)).toEqual([1]);
      // aborting the last upload frees the bucket for deletion
      expect((await abort(s, 'k', keep)).status).toBe(204);
      expect((await call(s, 'DELETE', objUrl('k'))).status).toBe(200);
      expect((await call(s, 'DELETE', `${B}/`)).status).toBe(200);
    });

    it('an upload without parts can be aborted', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      expect((await abort(s, 'k', id)).status).toBe(204);
      await expectFinished(s, 'k', id);
      expect((await records(s)).uploads.length).toBe(0);
    });

    it('Abort racing part uploads: each part is 200 or 404 NoSuchUpload; afterwards zero parts, uploads and bodies', async () => {
      const s = await service();
      for (let round = 0; round < 3; round++) {
        const key = `k${round}`;
        const id = await initiate(s, key);
        for (let n = 1; n <= 3; n++) await putPart(s, key, id, n, bytes(MIN));
        const ups: Promise<Res>[] = [];
        for (let n = 4; n < 14; n++) ups.push(uploadPart(s, key, id, n, bytes(MIN)));
        for (let i = 0; i < round; i++) await tick();
        const ab = abort(s, key, id);
        for (let n = 14; n < 24; n++) ups.push(uploadPart(s, key, id, n, bytes(MIN)));
        ups.push(uploadPart(s, key, id, 1, bytes(MIN))); // a replacement racing the abort
        const [ar, ...prs] = await Promise.all([ab, ...ups]);
        expect(ar.status, ar.text).toBe(204);
        for (const r of prs) {
          expect([200, 404], r.text).toContain(r.status);
          if (r.status === 404) expect(errorCode(r.text)).toBe('NoSuchUpload');
        }
        await expectFinished(s, key, id);
      }
      const rec = await records(s);
      expect(rec.uploads.length).toBe(0);
      expect(rec.parts.length).toBe(0);
      expect(rec.bodies.length).toBe(0);
      expect(rec.objects.length).toBe(0);
    });

    it('two Aborts racing: one 204, the other 404 NoSuchUpload', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      await putPart(s, 'k', id, 1, 'x');
      const rs = await Promise.all([abort(s, 'k', id), abort(s, 'k', id)]);
      expect(rs.map((r) => r.status).sort()).toEqual([204, 404]);
      expect(errorCode(rs.find((r) => r.status === 404)!.text)).toBe('NoSuchUpload');
      expect((await records(s)).bodies.length).toBe(0);
    });

    it('Abort racing Complete: exactly one wins; the loser gets NoSuchUpload; nothing left behind', async () => {
      const s = await service();
      for (let round = 0; round < 4; round++) {
        const key = `k${round}`;
        const id = await initiate(s, key);
        const e1 = await putPart(s, key, id, 1, bytes(MIN));
        const e2 = await putPart(s, key, id, 2, bytes(5));
        const ops = [complete(s, key, id, [{ n: 1, etag: e1 }, { n: 2, etag: e2 }]), abort(s, key, id)];
        if (round % 2) ops.reverse();
        const rs = await Promise.all(ops);
        const ok = rs.filter((r) => r.status === 200 || r.status === 204);
        expect(ok.length, rs.map((r) => `${r.status} ${r.text}`).join('\n')).toBe(1);
        const lost = rs.find((r) => r !== ok[0])!;
        expectError(lost, 404, 'NoSuchUpload');
        const obj = await objectRecord(s, key);
        if (ok[0]!.status === 200) expect(obj?.chunks.length).toBe(2);
        else expect(obj).toBeUndefined();
        await expectFinished(s, key, id);
      }
      const rec = await records(s);
      expect(rec.parts.length).toBe(0);
      expect(rec.uploads.length).toBe(0);
      await expectNoOrphans(s);
    });
  });

  // ================================================================================================
  // List Parts
  // ================================================================================================

  /** Pages through List Parts, checking every page; returns the listed part numbers and the page count. */
  async function pageParts(s: Svc, key: string, id: string, maxParts?: number) {
    const seen: number[] = [];
    let marker: number | undefined;
    let pages = 0;
    for (;;) {
      pages++;
      expect(pages).toBeLessThan(12000);
      const q = [maxParts !== undefined ? `max-parts=${maxParts}` : '', marker !== undefined ? `part-number-marker=${marker}` : '']
        .filter(Boolean).map((x) => '&' + x).join('');
      const r = await listParts(s, key, id, q);
      expect(r.status, r.text).toBe(200);
      const parts = parseParts(r.text).map((p) => p.n);
      const limit = maxParts ?? 1000;
      expect(tag(r.text, 'PartNumberMarker')).toBe(String(marker ?? 0));
      expect(tag(r.text, 'MaxParts')).toBe(String(limit));
      expect(parts.length).toBeLessThanOrEqual(limit);
      if (parts.length) expect(tag(r.text, 'NextPartNumberMarker')).toBe(String(parts.at(-1)));
      seen.push(...parts);
      const truncated = tag(r.text, 'IsTruncated');
      if (truncated === 'false') break;
      expect(truncated).toBe('true');
      expect(parts.length).toBe(limit); // only a full page may be truncated
      marker = Number(tag(r.text, 'NextPartNumberMarker'));
    }
    return { seen, pages };
  }

  async function uploadParts(s: Svc, key: string, id: string, from: number, to: number): Promise<void> {
    for (let n = from; n <= to; n += 50) {
      const batch: Promise<Res>[] = [];
      for (let m = n; m <= Math.min(to, n + 49); m++) batch.push(uploadPart(s, key, id, m, `p${m}`));
      for (const r of await Promise.all(batch)) expect(r.status, r.text).toBe(200);
    }
  }

  describe('List Parts', () => {
    it('ListPartsResult: Bucket, Key, UploadId, Owner, StorageClass STANDARD, PartNumberMarker 0, NextPartNumberMarker, MaxParts, IsTruncated; parts ascending', async () => {
      const s = await service();
      const id = await initiate(s, 'dir/k');
      const d3 = bytes(30);
      const d1 = bytes(10);
      const d2 = bytes(20);
      await putPart(s, 'dir/k', id, 3, d3);
      await putPart(s, 'dir/k', id, 1, d1);
      await putPart(s, 'dir/k', id, 2, d2);
      const r = await listParts(s, 'dir/k', id);
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/xml/);
      expect(r.text).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?>\s*<ListPartsResult>[\s\S]*<\/ListPartsResult>$/);
      expect(tag(r.text, 'Bucket')).toBe('photos');
      expect(tag(r.text, 'Key')).toBe('dir/k');
      expect(tag(r.text, 'UploadId')).toBe(id);
      expect(r.text).toMatch(/<Owner>\s*<ID>svcadmin<\/ID>\s*<DisplayName>svcadmin<\/DisplayName>\s*<\/Owner>/);
      expect(tag(r.text, 'StorageClass')).toBe('STANDARD');
      expect(tag(r.text, 'PartNumberMarker')).toBe('0');
      expect(tag(r.text, 'NextPartNumberMarker')).toBe('3');
      expect(tag(r.text, 'MaxParts')).toBe('1000');
      expect(tag(r.text, 'IsTruncated')).toBe('false');
      const parts = parseParts(r.text);
      expect(parts.map((p) => [p.n, p.etag, p.size])).toEqual([[1, md5(d1), 10], [2, md5(d2), 20], [3, md5(d3), 30]]);
      for (const p of parts) expect(p.lastModified).toMatch(ISO_MS);
      expect(r.text).toMatch(/<Part>\s*<PartNumber>1<\/PartNumber>\s*<LastModified>[^<]+<\/LastModified>\s*<ETag>(?:"|&quot;)[0-9a-f]{32}(?:"|&quot;)<\/ETag>\s*<Size>10<\/Size>\s*<\/Part>/);
    });

    it('an upload without parts lists none, not truncated', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      const r = await listParts(s, 'k', id);
      expect(r.status).toBe(200);
      expect(parseParts(r.text)).toEqual([]);
      expect(tag(r.text, 'IsTruncated')).toBe('false');
      expect(tag(r.text, 'PartNumberMarker')).toBe('0');
    });

    it('part-number-marker lists only greater numbers and is echoed; NextPartNumberMarker is the last listed (with gaps)', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      for (const n of [2, 4, 6, 8, 10000]) await putPart(s, 'k', id, n, `p${n}`);
      const page = async (q: string) => {
        const r = await listParts(s, 'k', id, q);
        expect(r.status, r.text).toBe(200);
        return { nums: parseParts(r.text).map((p) => p.n), marker: tag(r.text, 'PartNumberMarker'), next: tag(r.text, 'NextPartNumberMarker'), truncated: tag(r.text, 'IsTruncated') };
      };
      expect(await page('&part-number-marker=4&max-parts=2')).toEqual({ nums: [6, 8], marker: '4', next: '8', truncated: 'true' });
      expect(await page('&part-number-marker=8&max-parts=2')).toEqual({ nums: [10000], marker: '8', next: '10000', truncated: 'false' });
      expect((await page('&part-number-marker=3')).nums).toEqual([4, 6, 8, 10000]);
      expect((await page('&part-number-marker=1')).nums).toEqual([2, 4, 6, 8, 10000]);
      const end = await page('&part-number-marker=10000');
      expect(end.nums).toEqual([]);
      expect(end.truncated).toBe('false');
      expect(end.marker).toBe('10000');
    });

    it('max-parts 0 to 1000 is accepted (0 lists nothing, truncated when parts exist); 1001, -1, x, 1.5 → 400 InvalidArgument', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      await putPart(s, 'k', id, 1, 'a');
      await putPart(s, 'k', id, 2, 'b');
      let r = await listParts(s, 'k', id, '&max-parts=0');
      expect(r.status, r.text).toBe(200);
      expect(parseParts(r.text)).toEqual([]);
      expect(tag(r.text, 'MaxParts')).toBe('0');
      expect(tag(r.text, 'IsTruncated')).toBe('true'); // true when max-parts cut the list (docs/protocol.md, "Multipart rules")
      r = await listParts(s, 'k', id, '&max-parts=1');
      expect(parseParts(r.text).map((p) => p.n)).toEqual([1]);
      expect(tag(r.text, 'IsTruncated')).toBe('true');
      r = await listParts(s, 'k', id, '&max-parts=2');
      expect(parseParts(r.text).map((p) => p.n)).toEqual([1, 2]);
      expect(tag(r.text, 'IsTruncated')).toBe('false');
      r = await listParts(s, 'k', id, '&max-parts=1000');
      expect(r.status).toBe(200);
      expect(tag(r.text, 'MaxParts')).toBe('1000');
      for (const bad of ['1001', '-1', 'x', '1.5', '99999999999999999999']) {
        expectError(await listParts(s, 'k', id, `&max-parts=${bad}`), 400, 'InvalidArgument', `max-parts=${bad}`);
      }
    });

    it('paging through 0, 1, 999, 1000 and 1001 parts reaches every part exactly once', { timeout: 60_000 }, async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      const expectPaging = async (n: number) => {
        const all = Array.from({ length: n }, (_, i) => i + 1);
        for (const [max, pages] of [[undefined, Math.max(1, Math.ceil(n / 1000))], [1000, Math.max(1, Math.ceil(n / 1000))], [333, Math.max(1, Math.ceil(n / 333))]] as const) {
          const got = await pageParts(s, 'k', id, max);
          expect(got.seen, `${n} parts, max-parts=${max}`).toEqual(all);
          expect(got.pages, `${n} parts, max-parts=${max}`).toBe(pages);
        }
      };
      await expectPaging(0);
      await uploadParts(s, 'k', id, 1, 1);
      await expectPaging(1);
      await uploadParts(s, 'k', id, 2, 999);
      await expectPaging(999);
      await uploadParts(s, 'k', id, 1000, 1000);
      await expectPaging(1000);
      await uploadParts(s, 'k', id, 1001, 1001);
      await expectPaging(1001);
      // the default page of 1001 parts: exactly 1000, truncated, NextPartNumberMarker 1000
      const r = await listParts(s, 'k', id);
      expect(parseParts(r.text).length).toBe(1000);
      expect(tag(r.text, 'IsTruncated')).toBe('true');
      expect(tag(r.text, 'NextPartNumberMarker')).toBe('1000');
      // parts this small are fine until Complete: then EntityTooSmall, the upload unchanged
      const c = await complete(s, 'k', id, [{ n: 1, etag: md5('p1') }, { n: 2, etag: md5('p2') }]);
      expectError(c, 400, 'EntityTooSmall');
      expect((await records(s)).parts.length).toBe(1001);
    });

    it('after a part is replaced, List Parts shows the new ETag and size only', async () => {
      const s = await service();
      const id = await initiate(s, 'k');
      await putPart(s, 'k', id, 5, 'first version');
      await putPart(s, 'k', id, 5, 'v2');
      expect(parseParts((await listParts(s, 'k', id)).text).map((p) => [p.n, p.etag, p.size])).toEqual([[5, md5('v2'), 2]]);
    });
  });

  // ================================================================================================
  // List Multipart Uploads
  // ================================================================================================

  /** Pages through List Uploads with key-marker and upload-id-marker; returns "key uploadId" entries. */
  async function pageUploads(s: Svc, maxUploads?: number, prefix?: string) {
    const seen: string[] = [];
    let km: string | undefined;
    let um: string | undefined;
    let pages = 0;
    for (;;) {
      pages++;
      expect(pages).toBeLessThan(5000);
      const q = new URLSearchParams();
      if (prefix !== undefined) q.set('prefix', prefix);
      if (maxUploads !== undefined) q.set('max-uploads', String(maxUploads));
      if (km !== undefined) q.set('key-marker', km);
      if (um !== undefined) q.set('upload-id-marker', um);
      const r = await listUploads(s, q.size ? '&' + q.toString() : '');
      expect(r.status, r.text).toBe(200);
      const ups = parseUploads(r.text);
      const limit = maxUploads ?? 1000;
      expect(ups.length).toBeLessThanOrEqual(limit);
      if (km !== undefined) expect(tag(r.text, 'KeyMarker')).toBe(km);
      if (ups.length) {
        expect(tag(r.text, 'NextKeyMarker')).toBe(ups.at(-1)!.key);
        expect(tag(r.text, 'NextUploadIdMarker')).toBe(ups.at(-1)!.uploadId);
      }
      seen.push(...ups.map((u) => `${u.key} ${u.uploadId}`));
      const truncated = tag(r.text, 'IsTruncated');
      if (truncated === 'false') break;
      expect(truncated).toBe('true');
      expect(ups.length).toBe(limit);
      km = tag(r.text, 'NextKeyMarker');
      um = tag(r.text, 'NextUploadIdMarker');
      expect(km).toBeDefined();
      expect(um).toBeDefined();
    }
    return { seen, pages };
  }

  describe('List Multipart Uploads', () => {
    it('paging through 0, 1, 999, 1000 and 1001 uploads (several per key): by key, then initiation order; each exactly once', { timeout: 60_000 }, async () => {
      const s = await service();
      const made: { key: string; id: string; i: number }[] = [];
      const keyOf = (i: number) => `k/${String((i * 37) % 101).padStart(3, '0')}`;
      const grow = async (to: number) => {
        for (let i = made.length; i < to; i++) made.push({ key: keyOf(i), id: await initiate(s, keyOf(i)), i });
      };
      const expected = () =>
        [...made].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.i - b.i)).map((u) => `${u.key} ${u.id}`);
      const check = async (n: number) => {
        for (const [max, pages] of [[undefined, Math.max(1, Math.ceil(n / 1000))], [1000, Math.max(1, Math.ceil(n / 1000))], [250, Math.max(1, Math.ceil(n / 250))]] as const) {
          const got = await pageUploads(s, max);
          expect(got.seen, `${n} uploads, max-uploads=${max}`).toEqual(expected());
          expect(got.pages, `${n} uploads, max-uploads=${max}`).toBe(pages);
        }
      };
      await check(0);
      await grow(1);
      await check(1);
      await grow(999);
      await check(999);
      await grow(1000);
      await check(1000);
      await grow(1001);
      await check(1001);
      // the default page: 1000 entries, truncated
      const r = await listUploads(s);
      expect(parseUploads(r.text).length).toBe(1000);
      expect(tag(r.text, 'IsTruncated')).toBe('true');
      // prefix and paging together
      const sub = await pageUploads(s, 7, 'k/05');
      expect(sub.seen).toEqual(expected().filter((e) => e.startsWith('k/05')));
    });

    it('upload-id-marker with key-marker: the rest of that key\'s uploads after the marker, then greater keys', async () => {
      const s = await service();
      const a = [await initiate(s, 'a'), await initiate(s, 'a'), await initiate(s, 'a')];
      const b = await initiate(s, 'b');
      const page = async (q: string) => parseUploads((await listUploads(s, q)).text).map((u) => `${u.key} ${u.uploadId}`);
      expect(await page(`&key-marker=a&upload-id-marker=${a[0]}`)).toEqual([`a ${a[1]}`, `a ${a[2]}`, `b ${b}`]);
      expect(await page(`&key-marker=a&upload-id-marker=${a[2]}`)).toEqual([`b ${b}`]);
      expect(await page('&key-marker=a')).toEqual([`b ${b}`]);
      const r = await listUploads(s, `&key-marker=a&upload-id-marker=${a[1]}&max-uploads=1`);
      expect(tag(r.text, 'KeyMarker')).toBe('a');
      expect(tag(r.text, 'UploadIdMarker')).toBe(a[1]);
      expect(tag(r.text, 'NextKeyMarker')).toBe('a');
      expect(tag(r.text, 'NextUploadIdMarker')).toBe(a[2]);
      expect(tag(r.text, 'IsTruncated')).toBe('true');
    });

    it('only in-progress uploads are listed: completed and aborted ones disappear', async () => {
      const s = await service();
      const done = await initiate(s, 'a');
      const gone = await initiate(s, 'b');
      const open = await initiate(s, 'c');
      const e = await putPart(s, 'a', done, 1, 'x');
      expect((await complete(s, 'a', done, [{ n: 1, etag: e }])).status).toBe(200);
      expect((await abort(s, 'b', gone)).status).toBe(204);
      const r = await listUploads(s);
      expect(parseUploads(r.text).map((u) => `${u.key} ${u.uploadId}`)).toEqual([`c ${open}`]);
    });
  });

  // ================================================================================================
  // Objects made by Complete
  // ================================================================================================

  async function multipartObject(s: Svc, key: string, headers: Record<string, string> = {}) {
    const id = await initiate(s, key, headers);
    const data = [bytes(MIN), bytes(MIN), bytes(100)];
    const etags: string[] = [];
    for (const [i, d] of data.entries()) etags.push(await putPart(s, key, id, i + 1, d));
    const r = await complete(s, key, id, etags.map((etag, i) => ({ n: i + 1, etag })));
    expect(r.status, r.text).toBe(200);
    return { content: concat(...data), etag: multipartEtag(etags) };
  }

  describe('objects made by Complete', () => {
    it('Range reads across part boundaries', async () => {
      const s = await service();
      const { content, etag } = await multipartObject(s, 'k');
      const size = content.length;
      expect(size).toBe(2 * MIN + 100);
      const cases: [string, number, number][] = [
        [`bytes=${MIN - 4}-${MIN + 6}`, MIN - 4, MIN + 6], // part 1 → part 2
        [`bytes=${MIN - 1}-${2 * MIN}`, MIN - 1, 2 * MIN], // all three parts
        [`bytes=${MIN}-${MIN}`, MIN, MIN], // first byte of part 2
        [`bytes=${MIN}-`, MIN, size - 1],
        ['bytes=-150', size - 150, size - 1], // part 2 → part 3
        [`bytes=0-${size + 1000}`, 0, size - 1],
      ];
      for (const [range, a, b] of cases) {
        const r = await getBytes(s, 'k', { range });
        expect(r.status, range).toBe(206);
        expect(r.headers.get('content-range'), range).toBe(`bytes ${a}-${b}/${size}`);
        expect(r.headers.get('content-length'), range).toBe(String(b - a + 1));
        expect(md5(r.body), range).toBe(md5(content.subarray(a, b + 1)));
        expect(r.headers.get('etag')).toBe(`"${etag}"`);
      }
      const bad = await call(s, 'GET', objUrl('k'), { headers: { range: `bytes=${size}-` } });
      expectError(bad, 416, 'InvalidRange');
    });

    it('Copy makes a new object: same bytes, Content-Type and metadata, the plain MD5 as ETag; it outlives the source', async () => {
      const s = await service();
      const { content, etag } = await multipartObject(s, 'src', { 'content-type': 'video/mp4', 'x-svc-meta-m': 'v' });
      const r = await call(s, 'PUT', objUrl('copy'), { headers: { 'x-svc-copy-source': '/photos/src' } });
      expect(r.status, r.text).toBe(200);
      let got = await getBytes(s, 'copy');
      expect(md5(got.body)).toBe(md5(content));
      expect(got.headers.get('etag')).toBe(`"${md5(content)}"`);
      expect(got.headers.get('content-type')).toBe('video/mp4');
      expect(got.headers.get('x-svc-meta-m')).toBe('v');
      expect((await getBytes(s, 'src')).headers.get('etag')).toBe(`"${etag}"`);
      await expectNoOrphans(s);
      expect((await call(s, 'DELETE', objUrl('src'))).status).toBe(200);
      got = await getBytes(s, 'copy');
      expect(md5(got.body)).toBe(md5(content));
      await expectNoOrphans(s);
      expect((await records(s)).objects.length).toBe(1);
    });

    it('Move changes metadata only: the same body records, the multipart ETag and metadata carry over, no body added', async () => {
      const s = await service();
      const { content, etag } = await multipartObject(s, 'src', { 'content-type': 'video/mp4', 'x-svc-meta-m': 'v' });
      const chunks = (await objectRecord(s, 'src'))!.chunks.map((c) => c.id);
      const bodiesBefore = (await records(s)).bodies;
      const r = await call(s, 'PUT', objUrl('moved'), { headers: { 'x-svc-move-source': '/photos/src' } });
      expect(r.status, r.text).toBe(200);
      expect((await call(s, 'GET', objUrl('src'))).status).toBe(404);
      const got = await getBytes(s, 'moved');
      expect(md5(got.body)).toBe(md5(content));
      expect(got.headers.get('etag')).toBe(`"${etag}"`);
      expect(got.headers.get('content-type')).toBe('video/mp4');
      expect(got.headers.get('x-svc-meta-m')).toBe('v');
      expect((await objectRecord(s, 'moved'))!.chunks.map((c) => c.id)).toEqual(chunks);
      expect((await records(s)).bodies).toEqual(bodiesBefore);
      const ranged = await getBytes(s, 'moved', { range: `bytes=${MIN - 2}-${MIN + 1}` });
      expect(md5(ranged.body)).toBe(md5(content.subarray(MIN - 2, MIN + 2)));
    });

    it('DELETE, overwrite by PUT and Delete Multiple remove every chunk of a multipart object', async () => {
      const s = await service();
      await multipartObject(s, 'a');
      await multipartObject(s, 'b');
      await multipartObject(s, 'c');
      expect((await records(s)).bodies.length).toBe(9);
      expect((await call(s, 'DELETE', objUrl('a'))).status).toBe(200);
      expect((await call(s, 'PUT', objUrl('b'), { body: 'small' })).status).toBe(200);
      expect((await call(s, 'POST', `${B}/?delete`, { body: '<Delete><Object><Key>c</Key></Object></Delete>' })).status).toBe(200);
      const rec = await records(s);
      expect(rec.bodies.length).toBe(1);
      await expectNoOrphans(s);
    });

    it('HEAD, If-Modified-Since and ?meta work on a multipart object; the ETag stays', async () => {
      const s = await service();
      const { etag } = await multipartObject(s, 'k');
      const h = await call(s, 'HEAD', objUrl('k'));
      expect(h.status).toBe(200);
      expect(h.headers.get('etag')).toBe(`"${etag}"`);
      const lm = h.headers.get('last-modified')!;
      const nm = await call(s, 'GET', objUrl('k'), { headers: { 'if-modified-since': lm } });
      expect(nm.status).toBe(304);
      expect(nm.headers.get('etag')).toBe(`"${etag}"`);
      const meta = await call(s, 'PUT', `${objUrl('k')}?meta`, { headers: { 'content-type': 'text/x-new' } });
      expect(meta.status, meta.text).toBe(200);
      const after = await getBytes(s, 'k');
      expect(after.headers.get('content-type')).toBe('text/x-new');
      expect(after.headers.get('etag')).toBe(`"${etag}"`);
      expect(after.body.length).toBe(2 * MIN + 100);
    });
  });
});

// The IndexedDB store remembers uploads in progress (sw/store/rules/caches.ts): an upload that
// ended must be gone for every later request, whether this runtime ended it or another one did.
describe('an ended upload stays ended (IndexedDB store)', () => {
  const initiate = async (handle: (r: Request) => Promise<Response>) => {
    expect((await send(handle, 'PUT', `${B}/`)).status).toBe(200);
    const r = await send(handle, 'POST', `${objUrl('k')}?uploads`);
    return tag(r.text, 'UploadId')!;
  };

  for (const end of ['Complete', 'Abort'] as const) {
    it(`after ${end} in this runtime, Upload Part and List Parts answer 404 NoSuchUpload`, async () => {
      const { a } = await twoRuntimes('ended');
      const id = await initiate(a);
      const part = await send(a, 'PUT', partUrl('k', id, 1), { body: 'one' });
      expect(part.status).toBe(200);
      const ended = end === 'Complete'
        ? await send(a, 'POST', uploadUrl('k', id), { body: `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${part.headers.get('etag')}</ETag></Part></CompleteMultipartUpload>` })
        : await send(a, 'DELETE', uploadUrl('k', id));
      expect([200, 204]).toContain(ended.status);
      for (const r of [await send(a, 'PUT', partUrl('k', id, 2), { body: 'two' }), await send(a, 'GET', uploadUrl('k', id))]) {
        expect(r.status, r.text).toBe(404);
        expect(errorCode(r.text)).toBe('NoSuchUpload');
      }
    });
  }

  it('ended by another runtime on the same database: this one answers 404 NoSuchUpload and stores nothing', async () => {
    const { a, b } = await twoRuntimes('ended');
    const id = await initiate(a);
    expect((await send(a, 'PUT', partUrl('k', id, 1), { body: 'one' })).status).toBe(200); // a now remembers the upload
    expect((await send(b, 'DELETE', uploadUrl('k', id))).status).toBe(204);
    const r = await send(a, 'PUT', partUrl('k', id, 2), { body: 'two' });
    expect(r.status, r.text).toBe(404);
    expect(errorCode(r.text)).toBe('NoSuchUpload');
    expect((await send(a, 'GET', `${B}/?uploads`)).text).not.toContain('<Upload>');
  });
});
