// The NOS dialect (NetEase's names for the same protocol: `Authorization: NOS key:signature`,
// x-nos-* headers, presigned NOSAccessKeyId/Expires/Signature) straight into the handler, on
// `{bucket}.nos.localhost`. Requests are signed by this file's own signer, written from the scheme
// (docs/protocol.md, "Signing", with NOS's names) with node:crypto, so that a bug in
// protocol/signing.ts or sw/core/auth.ts cannot hide by being shared; it is checked first against
// the worked examples of docs/protocol.md. Where NetEase's own SDKs send something particular (the
// Date header, a hex Content-MD5, `x-nos-Object-md5`), the request is sent the way they send it.
// S3 requests are signed with the AWS SDK's signer (@smithy/signature-v4), SVC ones also with the
// suite's signer (test/support/sign.ts).
import { describe, expect, it } from 'vitest';
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@aws-crypto/sha256-js';
import { newService } from '../support/service.ts';
import { signHeaders } from '../support/sign.ts';
import type { Handle } from '../../sw/core/handler.ts';

interface Creds {
  accessKeyId: string;
  secret: string;
}
type Scheme = 'NOS' | 'SVC';

const ROOT: Creds = { accessKeyId: 'svcadmin', secret: 'svcadmin-secret' };
const PREFIX: Record<Scheme, string> = { NOS: 'x-nos-', SVC: 'x-svc-' };
/** The service hosts of the handler's defaults; `{bucket}.{host}` is a bucket host. */
const HOSTS = ['nos.localhost', 'svc.localhost', 's3.localhost'];
/** docs/protocol.md, "CanonicalizedResource": the signed sub-resources. */
const SIGNED_SUBRESOURCES = new Set([
  'acl', 'account', 'accounts', 'bucket', 'conflict', 'delete', 'export', 'import', 'partNumber', 'uploadId', 'uploads',
  'versionId', 'versioning', 'versions',
]);
const REQUEST_ID = /^[0-9A-F]{16}$/;
const EMPTY_MD5 = 'd41d8cd98f00b204e9800998ecf8427e';

const te = new TextEncoder();
const td = new TextDecoder();
const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');
const hmac = (secret: string, text: string) => createHmac('sha256', secret).update(text, 'utf8').digest('base64');

/** Every UTF-8 byte except A-Z a-z 0-9 - _ . * as %XX, upper-case hex: `/` is %2F, `~` %7E. */
function encodeKey(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.*]/.test(c) ? c : '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** `/{bucket}/{key re-encoded}` plus the signed sub-resources sorted by name; `/` for the service. */
function canonicalResource(url: URL): string {
  const host = HOSTS.find((h) => url.hostname.endsWith('.' + h));
  let bucket: string;
  let rawKey: string;
  if (host !== undefined) {
    bucket = url.hostname.slice(0, -host.length - 1);
    rawKey = url.pathname.slice(1);
  } else {
    const rest = url.pathname.slice(1);
    const slash = rest.indexOf('/');
    bucket = slash < 0 ? rest : rest.slice(0, slash);
    rawKey = slash < 0 ? '' : rest.slice(slash + 1);
  }
  let resource = bucket === '' ? '/' : `/${bucket}/${encodeKey(decodeURIComponent(rawKey))}`;
  const subs = [...url.searchParams].filter(([name]) => SIGNED_SUBRESOURCES.has(name));
  subs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (subs.length > 0) resource += '?' + subs.map(([name, value]) => (value === '' ? name : `${name}=${value}`)).join('&');
  return resource;
}

/** METHOD, Content-MD5, Content-Type, date line; then the prefix's headers by name, `name:value` trimmed; then the resource. */
function stringToSign(method: string, url: URL, headers: Headers, prefix: string, dateLine: string): string {
  const names = [...new Set([...headers.keys()].map((n) => n.toLowerCase()))].filter((n) => n.startsWith(prefix)).sort();
  return `${method}\n${headers.get('content-md5') ?? ''}\n${headers.get('content-type') ?? ''}\n${dateLine}\n`
    + names.map((n) => `${n}:${headers.get(n)!.trim()}\n`).join('') + canonicalResource(url);
}

interface SignOptions {
  scheme?: Scheme;
  creds?: Creds;
  /** Where the date goes: the Date header (NetEase's SDKs; the default for NOS) or `x-nos-date` / `x-svc-date` (the default for SVC). */
  date?: 'Date' | 'own';
}

/** Sets the date and Authorization: `NOS key:signature` (or `SVC …`), in place. */
function sign(method: string, url: URL, headers: Headers, o: SignOptions = {}): void {
  const scheme = o.scheme ?? 'NOS';
  const prefix = PREFIX[scheme];
  const now = new Date().toUTCString();
  let dateLine = '';
  if ((o.date ?? (scheme === 'NOS' ? 'Date' : 'own')) === 'Date') {
    headers.set('date', now);
    dateLine = now;
  } else {
    headers.set(`${prefix}date`, now);
  }
  const creds = o.creds ?? ROOT;
  headers.set('authorization', `${scheme} ${creds.accessKeyId}:${hmac(creds.secret, stringToSign(method, url, headers, prefix, dateLine))}`);
}

/** A presigned NOS URL: the Expires value is the date line; no headers are signed. */
function presign(method: string, url: string, expires: number, creds: Creds = ROOT): string {
  const u = new URL(url);
  const signature = hmac(creds.secret, stringToSign(method, u, new Headers(), 'x-nos-', String(expires)));
  u.searchParams.set('NOSAccessKeyId', creds.accessKeyId);
  u.searchParams.set('Expires', String(expires));
  u.searchParams.set('Signature', signature);
  return u.toString();
}

interface Answer {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  text: string;
}

interface SendOptions extends SignOptions {
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Unsigned: no Authorization at all. */
  anonymous?: boolean;
  /** A change made to the headers after signing. */
  after?: (headers: Headers) => void;
}

async function answer(res: Response): Promise<Answer> {
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, text: td.decode(bytes) };
}

/** A request signed as NOS (or SVC) signs, with Content-Length where a body goes, into the handler. */
async function call(handle: Handle, method: string, url: string, o: SendOptions = {}): Promise<Answer> {
  const headers = new Headers(o.headers);
  const body = typeof o.body === 'string' ? te.encode(o.body) : o.body;
  if (body !== undefined || method === 'PUT' || method === 'POST') headers.set('content-length', String(body?.byteLength ?? 0));
  if (!o.anonymous) sign(method, new URL(url), headers, o);
  o.after?.(headers);
  const init: RequestInit = { method, headers };
  if (body !== undefined) init.body = body as Uint8Array<ArrayBuffer>;
  return answer(await handle(new Request(url, init)));
}

const s3Signer = new SignatureV4({
  service: 's3', region: 'us-east-1', credentials: { accessKeyId: ROOT.accessKeyId, secretAccessKey: ROOT.secret }, sha256: Sha256,
  uriEscapePath: false, applyChecksum: false,
});

/** A bodiless S3 request signed as the AWS SDK signs one (SigV4). */
async function s3(handle: Handle, method: string, url: string): Promise<Answer> {
  const u = new URL(url);
  const query: Record<string, string> = {};
  for (const [name, value] of u.searchParams) query[name] = value;
  const signed = await s3Signer.sign(
    { method, protocol: 'http:', hostname: u.hostname, path: u.pathname, query, headers: { host: u.host, 'x-amz-content-sha256': createHash('sha256').digest('hex') } },
    { signingDate: new Date() },
  );
  return answer(await handle(new Request(url, { method, headers: signed.headers as Record<string, string> })));
}

/** `http://{bucket}.nos.localhost/{key}`, the key encoded as NetEase's Node SDK encodes it (everything but A-Z a-z 0-9 - _ . *). */
const nosUrl = (bucket: string, key = '', query = '') => `http://${bucket}.nos.localhost/${encodeKey(key)}${query ? '?' + query : ''}`;

/** A key as the AWS SDK puts it in a path: each segment encodeURIComponent'd, and ! ' ( ) * too (SigV4's canonical form). */
const s3Path = (key: string) => key.split('/').map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join('/');

const codeOf = (a: Answer) => /<Code>([^<]*)<\/Code>/.exec(a.text)?.[1];
const xmlField = (a: Answer, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(a.text)?.[1];
const headerNames = (h: Headers) => [...h.keys()];

/** A fresh service with the bucket made through the NOS dialect. */
async function withBucket(bucket: string, headers: Record<string, string> = {}) {
  const { handle, store } = await newService();
  const made = await call(handle, 'PUT', nosUrl(bucket), { headers });
  expect(made.status).toBe(200);
  return { handle, store };
}

const KEY = "notes/2024 plan (1) it's ~*!.txt";
const UNICODE_KEY = '报告/é ключ 😀.txt';

describe('the NOS dialect, straight into the handler', () => {
  it("the test's signer reproduces docs/protocol.md's worked examples (the scheme NOS shares with SVC)", () => {
    // Example 1: PUT with Content-MD5, Content-Type, x-svc-date and metadata.
    const h = new Headers({
      'content-type': 'text/plain', 'content-md5': '0dpy2Clu7LYI/Ppm3ndv+g==', 'x-svc-date': 'Tue, 05 Mar 2024 09:30:00 GMT',
      'x-svc-meta-author': 'ada', 'X-Svc-Meta-Project': 'apollo',
    });
    const sts = stringToSign('PUT', new URL('http://svc.localhost/photos/notes/2024%20plan.txt'), h, 'x-svc-', '');
    expect(sts).toBe('PUT\n0dpy2Clu7LYI/Ppm3ndv+g==\ntext/plain\n\nx-svc-date:Tue, 05 Mar 2024 09:30:00 GMT\nx-svc-meta-author:ada\n'
      + 'x-svc-meta-project:apollo\n/photos/notes%2F2024%20plan.txt');
    expect(hmac(ROOT.secret, sts)).toBe('QHYG5ouT48MHVjQdtt19i7X731V9alAfTQhXDGIZ8Ss=');
    // Example 3: two sub-resources, sorted by name.
    const parts = stringToSign('PUT', new URL('http://svc.localhost/photos/video.mp4?uploadId=u0lte65m80k3x9q1f7zm&partNumber=2'),
      new Headers({ 'x-svc-date': 'Tue, 05 Mar 2024 09:30:00 GMT' }), 'x-svc-', '');
    expect(hmac(ROOT.secret, parts)).toBe('lYfU87q+Tt+j6ZKZXKqTGcaLdts8D/j0FgrnCr+u9yw=');
    // Example 4: a presigned URL, Expires as the date line; on a virtual host the resource is the same.
    expect(hmac(ROOT.secret, stringToSign('GET', new URL('http://photos.nos.localhost/cat.jpg'), new Headers(), 'x-nos-', '1709631600')))
      .toBe('vCkivN6yEi2erkbLCi0Koz5vZEEVbbB7jfWaHc39h88=');
    // NOS's own headers are signed under its prefix, not SVC's.
    const nos = stringToSign('PUT', new URL(nosUrl('b', 'k')), new Headers({ 'x-nos-meta-a': '1', 'x-svc-meta-b': '2' }), 'x-nos-', 'D');
    expect(nos).toBe('PUT\n\n\nD\nx-nos-meta-a:1\n/b/k');
  });

  it('PUT, GET and HEAD on {bucket}.nos.localhost signed NOS: x-nos-meta-* stored and answered, x-nos-request-id, nothing of SVC', async () => {
    const { handle } = await newService();
    const created = await call(handle, 'PUT', nosUrl('nosdemo'));
    expect(created.status).toBe(200);
    expect(created.headers.get('x-nos-request-id')).toMatch(REQUEST_ID);
    expect(created.headers.has('x-svc-request-id')).toBe(false);

    const body = 'Buy milk.\n';
    const put = await call(handle, 'PUT', nosUrl('nosdemo', KEY), {
      body, headers: { 'content-type': 'text/plain', 'x-nos-meta-author': 'ada', 'X-Nos-Meta-Project': 'apollo', 'cache-control': 'max-age=60' },
    });
    expect(put.status).toBe(200);
    expect(put.headers.get('etag')).toBe(`"${md5(body)}"`);
    expect(put.headers.get('x-nos-request-id')).toMatch(REQUEST_ID);
    expect(put.headers.has('x-svc-request-id')).toBe(false);
    expect(put.headers.has('x-nos-version-id')).toBe(false); // versioning never enabled

    const got = await call(handle, 'GET', nosUrl('nosdemo', KEY));
    expect(got.status).toBe(200);
    expect(got.text).toBe(body);
    expect(got.headers.get('content-type')).toBe('text/plain');
    expect(got.headers.get('cache-control')).toBe('max-age=60');
    expect(got.headers.get('x-nos-meta-author')).toBe('ada');
    expect(got.headers.get('x-nos-meta-project')).toBe('apollo');
    expect(got.headers.get('content-disposition')).toMatch(/^inline; filename=/);
    expect(got.headers.get('x-nos-request-id')).toMatch(REQUEST_ID);
    expect(headerNames(got.headers).filter((n) => n.startsWith('x-svc-') || n.startsWith('x-amz-'))).toEqual([]);
    expect(got.headers.get('access-control-expose-headers')).toContain('x-nos-meta-author');

    const head = await call(handle, 'HEAD', nosUrl('nosdemo', KEY));
    expect(head.status).toBe(200);
    expect(head.bytes.byteLength).toBe(0);
    expect(head.headers.get('content-length')).toBe(String(body.length));
    expect(head.headers.get('x-nos-meta-author')).toBe('ada');

    // The date in x-nos-date (what a page, which cannot set Date, sends), and a key URL-encoded another way: the same key.
    const other = await call(handle, 'PUT', `http://nosdemo.nos.localhost/${UNICODE_KEY.split('/').map(encodeURIComponent).join('/')}`, {
      body: 'ü', date: 'own', headers: { 'x-nos-meta-lang': 'ru' },
    });
    expect(other.status).toBe(200);
    const back = await call(handle, 'GET', nosUrl('nosdemo', UNICODE_KEY));
    expect([back.status, back.text, back.headers.get('x-nos-meta-lang')]).toEqual([200, 'ü', 'ru']);

    // The listing: NOS's XML, no namespace, NOS's default page of 100.
    const list = await call(handle, 'GET', nosUrl('nosdemo', '', 'prefix=notes%2F'));
    expect(list.status).toBe(200);
    expect(list.text).toContain('<ListBucketResult>');
    expect(xmlField(list, 'MaxKeys')).toBe('100');
    expect(list.text).toContain(`<Key>${KEY.replace(/'/g, '&apos;')}</Key>`);
    expect(list.text).not.toContain(UNICODE_KEY);
  });

  it('a versioned bucket answers x-nos-version-id on PUT, GET and HEAD; ?versionId reads an earlier version', async () => {
    const { handle } = await withBucket('nosver');
    const on = await call(handle, 'PUT', nosUrl('nosver', '', 'versioning'), {
      headers: { 'content-type': 'application/xml' }, body: '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>',
    });
    expect(on.status).toBe(200);
    const first = await call(handle, 'PUT', nosUrl('nosver', KEY), { body: 'one' });
    const second = await call(handle, 'PUT', nosUrl('nosver', KEY), { body: 'two' });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.headers.get('x-nos-version-id')).toBe('1');
    expect(second.headers.get('x-nos-version-id')).toBe('2');
    expect(second.headers.has('x-svc-version-id')).toBe(false);

    const current = await call(handle, 'GET', nosUrl('nosver', KEY));
    expect([current.text, current.headers.get('x-nos-version-id')]).toEqual(['two', '2']);
    const head = await call(handle, 'HEAD', nosUrl('nosver', KEY));
    expect(head.headers.get('x-nos-version-id')).toBe('2');
    const earlier = await call(handle, 'GET', nosUrl('nosver', KEY, 'versionId=1'));
    expect([earlier.status, earlier.text, earlier.headers.get('x-nos-version-id')]).toEqual([200, 'one', '1']);
    const status = await call(handle, 'GET', nosUrl('nosver', '', 'versioning'));
    expect(xmlField(status, 'Status')).toBe('Enabled');
  });

  it('x-nos-copy-source copies (also across buckets), x-nos-move-source moves within the bucket', async () => {
    const { handle } = await withBucket('nossrc');
    expect((await call(handle, 'PUT', nosUrl('nosdst'))).status).toBe(200);
    const body = 'copied bytes';
    await call(handle, 'PUT', nosUrl('nossrc', KEY), { body, headers: { 'content-type': 'text/plain', 'x-nos-meta-author': 'ada' } });
    // As NetEase's SDK writes the source: /{bucket}/{key URL-encoded}.
    const source = `/nossrc/${encodeKey(KEY)}`;

    const copy = await call(handle, 'PUT', nosUrl('nosdst', UNICODE_KEY), { headers: { 'x-nos-copy-source': source } });
    expect(copy.status).toBe(200);
    expect(copy.headers.get('etag')).toBe(`"${md5(body)}"`);
    const copied = await call(handle, 'GET', nosUrl('nosdst', UNICODE_KEY));
    expect([copied.status, copied.text, copied.headers.get('x-nos-meta-author'), copied.headers.get('content-type')])
      .toEqual([200, body, 'ada', 'text/plain']);
    expect((await call(handle, 'HEAD', nosUrl('nossrc', KEY))).status).toBe(200); // a copy leaves its source

    const move = await call(handle, 'PUT', nosUrl('nossrc', 'moved/(here) ~!.txt'), { headers: { 'x-nos-move-source': source } });
    expect(move.status).toBe(200);
    expect(move.headers.get('etag')).toBe(`"${md5(body)}"`);
    const gone = await call(handle, 'GET', nosUrl('nossrc', KEY));
    expect([gone.status, codeOf(gone)]).toEqual([404, 'NoSuchKey']);
    const moved = await call(handle, 'GET', nosUrl('nossrc', 'moved/(here) ~!.txt'));
    expect([moved.status, moved.text, moved.headers.get('x-nos-meta-author')]).toEqual([200, body, 'ada']);

    const across = await call(handle, 'PUT', nosUrl('nosdst', 'x'), { headers: { 'x-nos-move-source': `/nossrc/${encodeKey('moved/(here) ~!.txt')}` } });
    expect([across.status, codeOf(across)]).toEqual([400, 'InvalidArgument']);
    const missing = await call(handle, 'PUT', nosUrl('nossrc', 'y'), { headers: { 'x-nos-move-source': '/nossrc/nothing' } });
    expect([missing.status, codeOf(missing)]).toEqual([404, 'NoSuchKey']);
    const both = await call(handle, 'PUT', nosUrl('nossrc', 'z'), {
      headers: { 'x-nos-copy-source': '/nossrc/moved%2F%28here%29', 'x-nos-move-source': '/nossrc/moved%2F%28here%29' },
    });
    expect([both.status, codeOf(both)]).toEqual([400, 'InvalidArgument']);

    // In NOS's dialect its own prefix selects the copy: an x-svc-copy-source is an unknown header, and the PUT stores its empty body.
    const foreign = await call(handle, 'PUT', nosUrl('nossrc', 'not-a-copy'), { headers: { 'x-svc-copy-source': `/nossrc/${encodeKey('moved/(here) ~!.txt')}` } });
    expect([foreign.status, foreign.headers.get('etag')]).toEqual([200, `"${EMPTY_MD5}"`]);
  });

  it('x-nos-acl on bucket create; GetBucketAcl answers x-nos-acl; PUT ?acl changes it; anonymous reads follow it', async () => {
    const { handle } = await withBucket('nospub', { 'x-nos-acl': 'public-read' });
    await call(handle, 'PUT', nosUrl('nospub', KEY), { body: 'public' });

    const acl = await call(handle, 'GET', nosUrl('nospub', '', 'acl'));
    expect(acl.status).toBe(200);
    expect(acl.headers.get('x-nos-acl')).toBe('public-read');
    expect(acl.headers.has('x-svc-acl')).toBe(false);
    const anonymous = await call(handle, 'GET', nosUrl('nospub', KEY), { anonymous: true });
    expect([anonymous.status, anonymous.text]).toEqual([200, 'public']);
    expect(anonymous.headers.get('x-nos-request-id')).toMatch(REQUEST_ID);

    expect((await call(handle, 'PUT', nosUrl('nospub', '', 'acl'), { headers: { 'x-nos-acl': 'private' } })).status).toBe(200);
    expect((await call(handle, 'GET', nosUrl('nospub', '', 'acl'))).headers.get('x-nos-acl')).toBe('private');
    const refused = await call(handle, 'GET', nosUrl('nospub', KEY), { anonymous: true });
    expect([refused.status, codeOf(refused)]).toEqual([403, 'AccessDenied']);

    const { handle: other } = await newService();
    const privateByDefault = await call(other, 'PUT', nosUrl('nospriv'));
    expect(privateByDefault.status).toBe(200);
    expect((await call(other, 'GET', nosUrl('nospriv', '', 'acl'))).headers.get('x-nos-acl')).toBe('private');
    const bad = await call(other, 'PUT', nosUrl('nosbad'), { headers: { 'x-nos-acl': 'public-read-write' } });
    expect([bad.status, codeOf(bad)]).toEqual([400, 'InvalidArgument']);
  });

  it('a presigned NOS URL (NOSAccessKeyId, Expires, Signature) reads without headers; expired or altered, 403', async () => {
    const { handle } = await withBucket('nospre');
    await call(handle, 'PUT', nosUrl('nospre', KEY), { body: 'by link', headers: { 'x-nos-meta-author': 'ada' } });
    const expires = Math.floor(Date.now() / 1000) + 600;

    const url = presign('GET', nosUrl('nospre', KEY), expires);
    expect(new URL(url).searchParams.get('NOSAccessKeyId')).toBe('svcadmin');
    const got = await answer(await handle(new Request(url)));
    expect([got.status, got.text]).toEqual([200, 'by link']);
    expect(got.headers.get('x-nos-meta-author')).toBe('ada');
    expect(got.headers.get('x-nos-request-id')).toMatch(REQUEST_ID);

    // Path style on SVC's host: the presigning parameters, not the host, say the URL is NOS's.
    const onSvcHost = await answer(await handle(new Request(presign('GET', `http://svc.localhost/nospre/${encodeKey(KEY)}`, expires))));
    expect([onSvcHost.status, onSvcHost.text]).toEqual([200, 'by link']);
    expect(onSvcHost.headers.get('x-nos-request-id')).toMatch(REQUEST_ID);
    expect(onSvcHost.headers.has('x-svc-request-id')).toBe(false);

    const expired = await answer(await handle(new Request(presign('GET', nosUrl('nospre', KEY), Math.floor(Date.now() / 1000) - 1))));
    expect([expired.status, codeOf(expired)]).toEqual([403, 'AccessDenied']);
    const otherKey = new URL(url);
    otherKey.pathname = '/' + encodeKey('notes/other.txt');
    const altered = await answer(await handle(new Request(otherKey)));
    expect([altered.status, codeOf(altered)]).toEqual([403, 'AccessDenied']);
    const later = new URL(url);
    later.searchParams.set('Expires', String(expires + 1));
    expect((await handle(new Request(later))).status).toBe(403);
  });

  it("an SVC-signed request with x-svc-* headers on the NOS host is answered in SVC's dialect", async () => {
    const { handle } = await withBucket('nosmix');
    const put = await call(handle, 'PUT', nosUrl('nosmix', KEY), {
      scheme: 'SVC', body: 'svc bytes', headers: { 'x-svc-meta-lang': 'en', 'x-nos-meta-other': 'not SVC metadata' },
    });
    expect(put.status).toBe(200);
    expect(put.headers.get('x-svc-request-id')).toMatch(REQUEST_ID);
    expect(put.headers.has('x-nos-request-id')).toBe(false);

    const svcGet = await call(handle, 'GET', nosUrl('nosmix', KEY), { scheme: 'SVC' });
    expect([svcGet.status, svcGet.text, svcGet.headers.get('x-svc-meta-lang')]).toEqual([200, 'svc bytes', 'en']);
    expect(headerNames(svcGet.headers).filter((n) => n.startsWith('x-nos-'))).toEqual([]);
    expect(headerNames(svcGet.headers).filter((n) => n.startsWith('x-svc-meta-'))).toEqual(['x-svc-meta-lang']);

    // The same object read in NOS's dialect: the same metadata under NOS's names.
    const nosGet = await call(handle, 'GET', nosUrl('nosmix', KEY));
    expect([nosGet.status, nosGet.headers.get('x-nos-meta-lang')]).toEqual([200, 'en']);
    expect(headerNames(nosGet.headers).filter((n) => n.startsWith('x-svc-'))).toEqual([]);
    expect(nosGet.headers.has('x-nos-meta-other')).toBe(false);

    // An SVC error on the NOS host is SVC's too.
    const missing = await call(handle, 'GET', nosUrl('nosmix', 'absent'), { scheme: 'SVC' });
    expect([missing.status, codeOf(missing)]).toEqual([404, 'NoSuchKey']);
    expect(xmlField(missing, 'RequestId')).toBe(missing.headers.get('x-svc-request-id'));
  });

  it('a NOS-signed request changed after signing is 403 AccessDenied and changes nothing', async () => {
    const { handle } = await withBucket('nossig');
    const signedAs = { body: 'x', headers: { 'content-type': 'text/plain', 'x-nos-meta-author': 'ada' } };

    const changedMeta = await call(handle, 'PUT', nosUrl('nossig', KEY), { ...signedAs, after: (h) => h.set('x-nos-meta-author', 'mallory') });
    expect([changedMeta.status, codeOf(changedMeta)]).toEqual([403, 'AccessDenied']);
    expect(xmlField(changedMeta, 'RequestId')).toBe(changedMeta.headers.get('x-nos-request-id'));
    const addedMeta = await call(handle, 'PUT', nosUrl('nossig', KEY), { ...signedAs, after: (h) => h.set('x-nos-meta-role', 'admin') });
    expect([addedMeta.status, codeOf(addedMeta)]).toEqual([403, 'AccessDenied']);
    const changedType = await call(handle, 'PUT', nosUrl('nossig', KEY), { ...signedAs, after: (h) => h.set('content-type', 'text/html') });
    expect([changedType.status, codeOf(changedType)]).toEqual([403, 'AccessDenied']);
    const wrongSecret = await call(handle, 'PUT', nosUrl('nossig', KEY), { ...signedAs, creds: { accessKeyId: 'svcadmin', secret: 'not-the-secret' } });
    expect([wrongSecret.status, codeOf(wrongSecret)]).toEqual([403, 'AccessDenied']);
    // None of them wrote anything.
    const none = await call(handle, 'GET', nosUrl('nossig', KEY));
    expect([none.status, codeOf(none)]).toEqual([404, 'NoSuchKey']);

    // The same request, unchanged, is accepted.
    const unchanged = await call(handle, 'PUT', nosUrl('nossig', KEY), signedAs);
    expect(unchanged.status).toBe(200);
    expect((await call(handle, 'GET', nosUrl('nossig', KEY))).headers.get('x-nos-meta-author')).toBe('ada');
  });

  it("DELETE of a missing key is 404 NoSuchKey in NOS's dialect (S3's answers 204)", async () => {
    const { handle } = await withBucket('nosdel');
    await call(handle, 'PUT', nosUrl('nosdel', KEY), { body: 'soon gone' });

    const deleted = await call(handle, 'DELETE', nosUrl('nosdel', KEY));
    expect([deleted.status, deleted.text]).toEqual([200, '']);
    const again = await call(handle, 'DELETE', nosUrl('nosdel', KEY));
    expect(again.status).toBe(404);
    expect(codeOf(again)).toBe('NoSuchKey');
    expect(xmlField(again, 'Resource')).toBe(`/nosdel/${KEY.replace(/'/g, '&apos;')}`);
    expect(xmlField(again, 'RequestId')).toBe(again.headers.get('x-nos-request-id'));
    expect(again.text).not.toContain('xmlns');

    // The same missing key deleted in S3's dialect: 204, as for any delete.
    const s3Delete = await s3(handle, 'DELETE', `http://nosdel.s3.localhost/${s3Path(KEY)}`);
    expect(s3Delete.status, s3Delete.text).toBe(204);
    expect(s3Delete.headers.has('x-nos-request-id')).toBe(false);
  });

  it('an object written through the NOS dialect reads back through the SVC and S3 dialects', async () => {
    const { handle } = await withBucket('nosall');
    const body = new Uint8Array(3000).map((_, i) => (i * 31) % 251);
    const put = await call(handle, 'PUT', nosUrl('nosall', UNICODE_KEY), {
      body, headers: { 'content-type': 'application/x-demo', 'x-nos-meta-author': 'ada' },
    });
    expect(put.status).toBe(200);

    // SVC, path style on svc.localhost, signed by the suite's own SVC signer.
    const svcUrl = `http://svc.localhost/nosall/${encodeKey(UNICODE_KEY)}`;
    const svc = await answer(await handle(new Request(svcUrl, { headers: signHeaders('GET', svcUrl, new Headers()) })));
    expect(svc.status).toBe(200);
    expect(Buffer.from(svc.bytes).equals(Buffer.from(body))).toBe(true);
    expect(svc.headers.get('x-svc-meta-author')).toBe('ada');
    expect(svc.headers.get('content-type')).toBe('application/x-demo');
    expect(svc.headers.get('etag')).toBe(`"${md5(body)}"`);

    // S3, virtual host on s3.localhost, signed by the AWS SDK's signer.
    const s3Get = await s3(handle, 'GET', `http://nosall.s3.localhost/${s3Path(UNICODE_KEY)}`);
    expect(s3Get.status).toBe(200);
    expect(Buffer.from(s3Get.bytes).equals(Buffer.from(body))).toBe(true);
    expect(s3Get.headers.get('x-amz-meta-author')).toBe('ada');
    expect(s3Get.headers.get('etag')).toBe(`"${md5(body)}"`);
    expect(headerNames(s3Get.headers).filter((n) => n.startsWith('x-nos-') || n.startsWith('x-svc-'))).toEqual([]);
  });

  it("what NetEase's SDKs send: a hex Content-MD5 on Delete Multiple and Complete, x-nos-Object-md5, metadata names that prefix one another", async () => {
    const { handle } = await withBucket('nossdk');
    // Header lines sorted by name (as NetEase's Python SDK sorts them): x-nos-meta-a before x-nos-meta-a-b.
    const prefixed = await call(handle, 'PUT', nosUrl('nossdk', 'a & b'), { body: '1', headers: { 'x-nos-meta-a': '1', 'x-nos-meta-a-b': '2' } });
    expect(prefixed.status).toBe(200);
    await call(handle, 'PUT', nosUrl('nossdk', "c<d>'e"), { body: '2' });

    // Delete Multiple as the Node SDK builds it (xml2js, Quiet False), Content-MD5 in hex.
    const xml = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Delete>\n  <Quiet>False</Quiet>\n'
      + '  <Object>\n    <Key>a &amp; b</Key>\n  </Object>\n  <Object>\n    <Key>c&lt;d&gt;\'e</Key>\n  </Object>\n'
      + '  <Object>\n    <Key>never there</Key>\n  </Object>\n</Delete>';
    const multi = await call(handle, 'POST', nosUrl('nossdk', '', 'delete'), { body: xml, headers: { 'content-md5': md5(xml) } });
    expect(multi.status).toBe(200);
    expect(multi.text).toContain('<DeleteResult>');
    expect([...multi.text.matchAll(/<Deleted><Key>([^<]*)<\/Key><\/Deleted>/g)].map((m) => m[1]))
      .toEqual(['a &amp; b', 'c&lt;d&gt;&apos;e', 'never there']);
    expect((await call(handle, 'HEAD', nosUrl('nossdk', 'a & b'))).status).toBe(404);

    // Multipart: Initiate with metadata, parts of NOS's least size (16 KiB) and a short last one, Complete as the Node SDK sends it.
    const key = 'big/multi part ~(1)!.bin';
    const init = await call(handle, 'POST', nosUrl('nossdk', key, 'uploads'), { headers: { 'x-nos-meta-origin': 'sdk' } });
    expect(init.status).toBe(200);
    const uploadId = xmlField(init, 'UploadId')!;
    expect([xmlField(init, 'Bucket'), xmlField(init, 'Key')]).toEqual(['nossdk', key]);
    const parts = [new Uint8Array(16 * 1024).fill(1), te.encode('tail')];
    const etags: string[] = [];
    for (const [i, part] of parts.entries()) {
      const up = await call(handle, 'PUT', nosUrl('nossdk', key, `partNumber=${i + 1}&uploadId=${uploadId}`), { body: part });
      expect(up.status).toBe(200);
      etags.push(up.headers.get('etag')!.replace(/"/g, ''));
    }
    expect(etags).toEqual(parts.map((p) => md5(p)));
    const complete = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<CompleteMultipartUpload>\n  \n'
      + etags.map((e, i) => `  <Part>\n    <PartNumber>${i + 1}</PartNumber>\n    <ETag>${e}</ETag>\n  </Part>\n`).join('') + '</CompleteMultipartUpload>';
    const whole = Buffer.concat(parts);
    const done = await call(handle, 'POST', nosUrl('nossdk', key, `uploadId=${uploadId}`), {
      body: complete, headers: { 'content-md5': md5(complete), 'x-nos-Object-md5': md5(whole) },
    });
    expect(done.status).toBe(200);
    expect(xmlField(done, 'ETag')).toBe(`&quot;${md5(etags.map((e) => e + '-').join(''))}-1&quot;`);
    expect(xmlField(done, 'Location')).toBe(`http://nossdk.nos.localhost/${key.split('/').map(encodeURIComponent).join('/')}`);
    const got = await call(handle, 'GET', nosUrl('nossdk', key));
    expect(Buffer.from(got.bytes).equals(whole)).toBe(true);
    expect(got.headers.get('x-nos-object-md5')).toBe(md5(whole));
    expect(got.headers.get('x-nos-meta-origin')).toBe('sdk');
  });
});

describe("NetEase's Python SDK's Date", () => {
  it("`… Asia/Shanghai` is read as UTC+8 in NOS's dialect, and only there", async () => {
    const { handle } = await newService();
    const now = new Date();
    const shanghai = new Date(now.getTime() + 8 * 3600_000).toUTCString().replace('GMT', 'Asia/Shanghai');
    const sign = (scheme: string, date: string) => {
      const sts = `GET\n\n\n${date}\n/`;
      return `${scheme} svcadmin:${createHmac('sha256', 'svcadmin-secret').update(sts).digest('base64')}`;
    };
    const nos = await handle(new Request('http://nos.localhost/', { headers: { date: shanghai, authorization: sign('NOS', shanghai) } }));
    expect(nos.status).toBe(200);
    const svc = await handle(new Request('http://svc.localhost/', { headers: { date: shanghai, authorization: sign('SVC', shanghai) } }));
    expect(svc.status).toBe(403);
    // Eight hours off, read as UTC+8, is skew.
    const wrong = now.toUTCString().replace('GMT', 'Asia/Shanghai');
    const skewed = await handle(new Request('http://nos.localhost/', { headers: { date: wrong, authorization: sign('NOS', wrong) } }));
    expect(skewed.status).toBe(403);
  });

  it('a Date that is not an HTTP date is refused in NOS and SVC, never guessed at (issue 37): no zone, ISO 8601, a wrong weekday, 31 November, a numeric zone', async () => {
    const { handle } = await newService();
    const sign = (scheme: string, date: string) => `${scheme} svcadmin:${createHmac('sha256', 'svcadmin-secret').update(`GET\n\n\n${date}\n/`).digest('base64')}`;
    const now = new Date();
    const imf = now.toUTCString();
    const [weekday, rest] = [imf.slice(0, 3), imf.slice(5)];
    const otherDay = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].find((d) => d !== weekday)!;
    const refused = [
      imf.replace(' GMT', ''), now.toISOString(), now.toISOString().slice(0, 19), `${otherDay}, ${rest}`, imf.replace('GMT', '+0000'),
      `${weekday}, 31 Nov ${now.getUTCFullYear()} 00:00:00 GMT`, now.toString(), String(now.getTime()),
    ];
    for (const scheme of ['NOS', 'SVC']) {
      const host = scheme === 'NOS' ? 'nos.localhost' : 'svc.localhost';
      for (const date of refused) {
        const r = await handle(new Request(`http://${host}/`, { headers: { date, authorization: sign(scheme, date) } }));
        expect([r.status, /<Code>(\w+)/.exec(await r.text())?.[1]], `${scheme} Date: ${date}`).toEqual([403, 'AccessDenied']);
      }
      // HTTP's obsolete forms are still HTTP dates (RFC 9110), read as GMT.
      const pad = (n: number) => String(n).padStart(2, '0');
      const time = `${pad(now.getUTCHours())}:${pad(now.getUTCMinutes())}:${pad(now.getUTCSeconds())}`;
      const month = imf.slice(8, 11);
      const longDay = { Sun: 'Sunday', Mon: 'Monday', Tue: 'Tuesday', Wed: 'Wednesday', Thu: 'Thursday', Fri: 'Friday', Sat: 'Saturday' }[weekday]!;
      for (const date of [`${longDay}, ${pad(now.getUTCDate())}-${month}-${String(now.getUTCFullYear()).slice(2)} ${time} GMT`, `${weekday} ${month} ${String(now.getUTCDate()).padStart(2, ' ')} ${time} ${now.getUTCFullYear()}`]) {
        const r = await handle(new Request(`http://${host}/`, { headers: { date, authorization: sign(scheme, date) } }));
        expect(r.status, `${scheme} Date: ${date}`).toBe(200);
      }
    }
  });
});
