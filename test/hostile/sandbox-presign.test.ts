// Two attacks on what an object answer lets a link do (docs/protocol.md, "Presigned URLs" and
// "Every response"; contract sections 2 and 7):
// - a stored HTML or SVG document opened from the page-origin mount would run with that origin's
//   rights: every object answer (GET, HEAD, 206, the ifNotFound 404) is sandboxed;
// - a presigned URL with unsigned parameters added that change what is read (`ifNotFound`) or
//   written (`meta`): refused, nothing read or changed; `download` stays allowed.
// Through the handler called directly, and over a real socket to the HTTP server.
import { describe, it, expect, beforeEach } from 'vitest';
import http from 'node:http';
import { newService, send, type SendOptions } from '../support/service.ts';
import { presign, signHeaders } from '../support/sign.ts';
import { startServer, type RunningServer } from '../../node/server.ts';

const B = 'http://vault.svc.localhost';
const MOUNT = 'http://localhost:5173/svc';
const PUB = 'http://openhouse.svc.localhost';
const SECRET = '<script>the private report</script>';
const HTML = '<!doctype html><title>x</title><script>indexedDB.databases().then(console.log)</script>';
const exp = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;
const tag = (text: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1]?.replace(/&quot;/g, '"');

let svc: Awaited<ReturnType<typeof newService>>;
const call = (method: string, url: string, o: SendOptions = {}) => send(svc.handle, method, url, o);

beforeEach(async () => {
  svc = await newService();
  const ok = async (method: string, url: string, o: SendOptions = {}) => {
    const r = await call(method, url, o);
    expect(r.status, `${method} ${url}: ${r.text}`).toBe(200);
  };
  await ok('PUT', `${B}/`);
  await ok('PUT', `${B}/secret.html`, { body: SECRET, headers: { 'content-type': 'text/html' } });
  await ok('PUT', `${B}/shared.txt`, {
    body: 'shared text',
    headers: { 'content-type': 'text/plain', 'x-svc-meta-owner': 'alice', 'cache-control': 'max-age=60' },
  });
  await ok('PUT', `${B}/evil.svg`, {
    body: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>',
    headers: { 'content-type': 'image/svg+xml' },
  });
  await ok('PUT', `${PUB}/`, { headers: { 'x-svc-acl': 'public-read' } });
  await ok('PUT', `${PUB}/page.html`, { body: HTML, headers: { 'content-type': 'text/html' } });
});

function expectSandboxed(r: { status: number; headers: Headers }, where: string): void {
  expect(r.headers.get('x-content-type-options'), where).toBe('nosniff');
  expect(r.headers.get('content-security-policy'), where).toBe('sandbox');
}

describe('every object answer is sandboxed', () => {
  it('GET 200, HEAD, 206, the ifNotFound 404, a version, a download, 304: nosniff and CSP sandbox', async () => {
    const v = await call('PUT', `${B}/?versioning`, { body: '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>' });
    expect(v.status).toBe(200);
    const put = await call('PUT', `${B}/page.html`, { body: HTML, headers: { 'content-type': 'text/html' } });
    const versionId = put.headers.get('x-svc-version-id');
    expect(versionId).toMatch(/^\d+$/);
    const cases: [string, number, string, SendOptions?][] = [
      ['GET', 200, `${B}/page.html`],
      ['HEAD', 200, `${B}/page.html`],
      ['GET', 206, `${B}/page.html`, { headers: { range: 'bytes=0-9' } }],
      ['GET', 404, `${B}/missing.html?ifNotFound=page.html`],
      ['GET', 200, `${B}/page.html?versionId=${versionId}`],
      ['GET', 200, `${B}/evil.svg?download=evil.svg`],
      ['GET', 304, `${B}/page.html`, { headers: { 'if-modified-since': new Date().toUTCString() } }],
      ['GET', 200, `${MOUNT}/vault/evil.svg`],
      ['GET', 200, `${MOUNT}/openhouse/page.html`, { auth: 'anon' }],
      ['HEAD', 200, `${PUB}/page.html`, { auth: 'anon' }],
    ];
    for (const [method, status, url, o] of cases) {
      const r = await call(method, url, o);
      expect(r.status, `${method} ${url}`).toBe(status);
      expectSandboxed(r, `${method} ${url} (${r.status})`);
    }
    // a presigned link on the mount, as a page would put it in <a href>
    const link = await svc.handle(new Request(presign('GET', `${MOUNT}/vault/secret.html`, exp(300))));
    expect(link.status).toBe(200);
    expectSandboxed(link, 'presigned link on the mount');
  });

  it('an object read refused or missing is sandboxed too; other answers keep their own headers', async () => {
    expectSandboxed(await call('GET', `${B}/nothing.html`), 'NoSuchKey');
    expectSandboxed(await call('GET', `${MOUNT}/vault/secret.html`, { auth: 'anon' }), 'anonymous on a private bucket');
    const list = await call('GET', `${B}/`);
    expect(list.status).toBe(200);
    // the rest of "Every response" holds as before
    expect(list.headers.get('access-control-allow-origin')).toBe('*');
    expect(list.headers.get('x-svc-request-id')).toMatch(/^[0-9A-F]{16}$/);
  });

  it('over a real socket to the HTTP server too', async () => {
    const srv = await startServer({ port: 0, log: () => {} });
    try {
      const put = await httpRequest(srv, 'PUT', '/vault-http/', {});
      expect(put.status).toBe(200);
      const obj = await httpRequest(srv, 'PUT', '/vault-http/x.html', { 'content-type': 'text/html' }, HTML);
      expect(obj.status).toBe(200);
      for (const [method, headers, status] of [['GET', {}, 200], ['HEAD', {}, 200], ['GET', { range: 'bytes=0-3' }, 206]] as const) {
        const r = await httpRequest(srv, method, '/vault-http/x.html', headers);
        expect(r.status).toBe(status);
        expect(r.headers['x-content-type-options']).toBe('nosniff');
        expect(r.headers['content-security-policy']).toBe('sandbox');
      }
    } finally {
      await srv.close();
    }
  });
});

describe('a presigned URL grants exactly what was signed', () => {
  it('presigned GET + &ifNotFound= of another private object → 403 AccessDenied, and nothing of it is read', async () => {
    // A link to an object that does not exist (yet, or any more): today's fallback would answer
    // with another object of the bucket, which the link never granted.
    for (const url of [
      presign('GET', `${B}/gone.txt`, exp(300)) + '&ifNotFound=secret.html',
      presign('GET', `${B}/shared.txt`, exp(300)) + '&ifNotFound=secret.html',
      presign('GET', `${B}/gone.txt`, exp(300)) + '&ifNotFound=',
      presign('GET', `${MOUNT}/vault/gone.txt`, exp(300)) + '&ifNotFound=secret.html',
      'http://vault.svc.localhost/gone.txt?ifNotFound=secret.html&' + presign('GET', `${B}/gone.txt`, exp(300)).split('?')[1],
    ]) {
      const r = await svc.handle(new Request(url));
      const text = await r.text();
      expect(r.status, url).toBe(403);
      expect(tag(text, 'Code'), url).toBe('AccessDenied');
      expect(tag(text, 'Message'), url).toMatch(/ifNotFound.*not covered by the signature/);
      expect(text).not.toContain('private report');
      expect(text).not.toContain('shared text');
    }
  });

  it('presigned PUT + &meta → 403 AccessDenied, and the object, its metadata and ETag are unchanged', async () => {
    const before = await call('HEAD', `${B}/shared.txt`);
    const url = presign('PUT', `${B}/shared.txt`, exp(300)) + '&meta';
    // Exactly what the signature covers: no Content-Type, no x-svc-* (a metadata replacement would
    // clear the Content-Type, the Cache-Control and every x-svc-meta-*).
    const r = await svc.handle(new Request(url, { method: 'PUT' }));
    const text = await r.text();
    expect(r.status).toBe(403);
    expect(tag(text, 'Code')).toBe('AccessDenied');
    expect(tag(text, 'Message')).toMatch(/"meta".*not covered by the signature/);
    const after = await call('GET', `${B}/shared.txt`);
    expect(after.text).toBe('shared text');
    for (const name of ['etag', 'content-type', 'cache-control', 'last-modified', 'x-svc-meta-owner']) {
      expect(after.headers.get(name), name).toBe(before.headers.get(name));
    }
    // Both at once: both named.
    const both = await svc.handle(new Request(presign('PUT', `${B}/shared.txt`, exp(300)) + '&meta&ifNotFound=secret.html', { method: 'PUT' }));
    expect(both.status).toBe(403);
    expect(tag(await both.text(), 'Message')).toMatch(/"meta" and "ifNotFound" are not covered by the signature/);
  });

  it('presigned GET + &download= still works: only the presentation changes', async () => {
    const r = await svc.handle(new Request(presign('GET', `${B}/shared.txt`, exp(300)) + '&download=mine.txt'));
    expect(r.status).toBe(200);
    expect(r.headers.get('content-disposition')).toBe('attachment; filename="mine.txt"');
    expect(await r.text()).toBe('shared text');
    // and the plain presigned PUT it was (no meta) still stores
    const put = await call('PUT', presign('PUT', `${B}/new.txt`, exp(300)), { auth: 'anon', body: 'new' });
    expect(put.status).toBe(200);
  });

  it('a header-signed request keeps ifNotFound and meta: the refusal is about presigned URLs only', async () => {
    const fallback = await call('GET', `${B}/gone.txt?ifNotFound=shared.txt`);
    expect(fallback.status).toBe(404);
    expect(fallback.text).toBe('shared text');
    const meta = await call('PUT', `${B}/shared.txt?meta`, { headers: { 'content-type': 'text/markdown' } });
    expect(meta.status).toBe(200);
  });

  it('over a real socket: presigned GET + &ifNotFound= → 403 AccessDenied', async () => {
    const srv = await startServer({ port: 0, log: () => {} });
    try {
      expect((await httpRequest(srv, 'PUT', '/vault-http/', {})).status).toBe(200);
      expect((await httpRequest(srv, 'PUT', '/vault-http/secret.txt', {}, 'top secret')).status).toBe(200);
      const url = new URL(presign('GET', `${srv.url}/vault-http/gone.txt`, exp(300)) + '&ifNotFound=secret.txt');
      const r = await httpRequest(srv, 'GET', url.pathname + url.search, {}, undefined, false);
      expect(r.status).toBe(403);
      expect(tag(r.text, 'Code')).toBe('AccessDenied');
      expect(r.text).not.toContain('top secret');
    } finally {
      await srv.close();
    }
  });
});

// ------------------------------------------------------------------------------------------------

interface HttpRes { status: number; headers: http.IncomingHttpHeaders; text: string }

/** node:http to the server, signed as root unless `sign` is false. */
function httpRequest(
  srv: RunningServer, method: string, path: string, extra: Record<string, string>, body?: string, sign = true,
): Promise<HttpRes> {
  const h = new Headers(extra);
  if (body !== undefined || method === 'PUT') h.set('content-length', String(Buffer.byteLength(body ?? '')));
  if (sign) signHeaders(method, `${srv.url}${path}`, h);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: srv.port, method, path, headers: Object.fromEntries(h), agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
