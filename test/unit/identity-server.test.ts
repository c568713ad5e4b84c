// Identity, quotas and versioning through the real HTTP server (sw/server.ts), path style
// http://127.0.0.1:PORT/{bucket}/{key}, with plain fetch(): a second account denied, a presigned
// GET as a plain link, a quota refusal, and a versioned PUT/GET by versionId.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createHash } from 'node:crypto';
import { startServer } from '../../node/server.ts';
import { presign, signHeaders } from '../support/sign.ts';

type Creds = { accessKeyId: string; secret: string };
const ROOT: Creds = { accessKeyId: 'svcadmin', secret: 'svcadmin-secret' };
const ALICE: Creds = { accessKeyId: 'alice', secret: 'alice-secret' };
const BOB: Creds = { accessKeyId: 'bob', secret: 'bob-secret-1' };
const md5 = (s: string): string => createHash('md5').update(s).digest('hex');
const tag = (text: string, name: string): string | undefined => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];

let srv: Awaited<ReturnType<typeof startServer>>;
beforeAll(async () => {
  srv = await startServer({ port: 0, log: () => {} });
});
afterAll(async () => {
  await srv?.close();
});

interface Res {
  status: number;
  headers: Headers;
  text: string;
  code: string | undefined;
}

/** A request over the socket, signed with `creds` unless 'anon'. */
async function req(method: string, path: string, o: { body?: string; headers?: Record<string, string>; as?: Creds | 'anon' } = {}): Promise<Res> {
  const url = `${srv.url}${path}`;
  const headers = new Headers(o.headers ?? {});
  const as = o.as ?? ROOT;
  if (as !== 'anon') signHeaders(method, url, headers, as);
  const init: RequestInit = { method, headers };
  // fetch sets Content-Length from the body; PUT/POST always carry one. Bytes, not a string: a
  // string body would make fetch add a Content-Type after signing.
  if (o.body !== undefined || method === 'PUT' || method === 'POST') init.body = new TextEncoder().encode(o.body ?? '');
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, code: tag(text, 'Code') };
}
async function ok(method: string, path: string, o: Parameters<typeof req>[2] = {}): Promise<Res> {
  const r = await req(method, path, o);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(200);
  return r;
}
async function account(c: Creds, quota?: number): Promise<void> {
  await ok('PUT', `/?account=${c.accessKeyId}`, {
    body:
      `<Account><SecretAccessKey>${c.secret}</SecretAccessKey><DisplayName>${c.accessKeyId}</DisplayName>` +
      (quota !== undefined ? `<QuotaBytes>${quota}</QuotaBytes>` : '') +
      '</Account>',
  });
}
function expectError(r: Res, status: number, code: string) {
  expect(r.status, r.text).toBe(status);
  expect(r.code).toBe(code);
  expect(r.headers.get('content-type')).toMatch(/^application\/xml/);
}

describe('over HTTP', () => {
  it('accounts: root creates alice and bob; GET /?accounts lists them without secrets; non-root is denied', async () => {
    await account(ALICE);
    await account(BOB);
    const list = await ok('GET', '/?accounts');
    expect(list.text).toContain('<AccessKeyId>alice</AccessKeyId>');
    expect(list.text).toContain('<AccessKeyId>bob</AccessKeyId>');
    expect(list.text).not.toContain(ALICE.secret);
    expect(list.text).not.toContain('svcadmin-secret');
    expectError(await req('GET', '/?accounts', { as: ALICE }), 403, 'AccessDenied');
    expectError(await req('PUT', '/?account=mallory', { as: BOB, body: '<Account><SecretAccessKey>mallory-secret</SecretAccessKey></Account>' }), 403, 'AccessDenied');
    expectError(await req('DELETE', '/?account=alice', { as: 'anon' }), 403, 'AccessDenied');
    expect((await ok('GET', '/?accounts')).text).not.toContain('mallory');
  });

  it('a second account is denied on the first account\'s bucket, and nothing changes', async () => {
    await account(ALICE);
    await account(BOB);
    await ok('PUT', '/alice-http/', { as: ALICE });
    await ok('PUT', '/alice-http/doc.txt', { as: ALICE, body: 'alice document' });
    expectError(await req('GET', '/alice-http/doc.txt', { as: BOB }), 403, 'AccessDenied');
    expectError(await req('PUT', '/alice-http/doc.txt', { as: BOB, body: 'bob was here' }), 403, 'AccessDenied');
    expectError(await req('DELETE', '/alice-http/doc.txt', { as: BOB }), 403, 'AccessDenied');
    expectError(await req('GET', '/alice-http/', { as: BOB }), 403, 'AccessDenied');
    expectError(await req('DELETE', '/alice-http/', { as: BOB }), 403, 'AccessDenied');
    const head = await req('HEAD', '/alice-http/doc.txt', { as: BOB });
    expect(head.status).toBe(403);
    expect(head.text).toBe('');
    expect(head.headers.get('etag')).toBeNull();
    expectError(await req('PUT', '/alice-http/copy', { as: BOB, headers: { 'x-svc-copy-source': '/alice-http/doc.txt' } }), 403, 'AccessDenied');
    expectError(await req('POST', '/alice-http/?delete', { as: BOB, body: '<Delete><Object><Key>doc.txt</Key></Object></Delete>' }), 403, 'AccessDenied');
    // unchanged for the owner
    const g = await ok('GET', '/alice-http/doc.txt', { as: ALICE });
    expect(g.text).toBe('alice document');
    expect(g.headers.get('etag')).toBe(`"${md5('alice document')}"`);
    expect((await ok('GET', '/alice-http/', { as: ALICE })).text).not.toContain('<Key>copy</Key>');
    // bob's bucket list does not show it
    expect((await ok('GET', '/', { as: BOB })).text).not.toContain('alice-http');
  });

  it('a presigned GET works with plain fetch (no headers); expired or altered → 403', async () => {
    await account(ALICE);
    await ok('PUT', '/alice-pre/', { as: ALICE });
    await ok('PUT', '/alice-pre/photo.jpg', { as: ALICE, body: 'not really a jpeg', headers: { 'content-type': 'image/jpeg' } });
    await ok('PUT', '/alice-pre/other.jpg', { as: ALICE, body: 'other secret body' });
    const now = Math.floor(Date.now() / 1000);
    const url = presign('GET', `${srv.url}/alice-pre/photo.jpg`, now + 300, ALICE);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(await res.text()).toBe('not really a jpeg');
    // anonymous without the signature: denied
    expect((await fetch(`${srv.url}/alice-pre/photo.jpg`)).status).toBe(403);
    for (const bad of [
      presign('GET', `${srv.url}/alice-pre/photo.jpg`, now - 5, ALICE),
      url.replace('/photo.jpg?', '/other.jpg?'),
      url.replace(`Expires=${now + 300}`, `Expires=${now + 3000}`),
      presign('GET', `${srv.url}/alice-pre/photo.jpg`, now + 300, { accessKeyId: 'alice', secret: 'wrong-secret' }),
    ]) {
      const r = await fetch(bad);
      const text = await r.text();
      expect(r.status, bad).toBe(403);
      expect(tag(text, 'Code')).toBe('AccessDenied');
      expect(text).not.toContain('not really a jpeg');
      expect(text).not.toContain('other secret body');
    }
  });

  it('a write past the quota → 403 QuotaExceeded and nothing stored; exactly the quota fits', async () => {
    const carol = { accessKeyId: 'carol', secret: 'carol-secret' };
    await account(carol, 10);
    await ok('PUT', '/carol-q/', { as: carol });
    expectError(await req('PUT', '/carol-q/big', { as: carol, body: '12345678901' }), 403, 'QuotaExceeded');
    expectError(await req('GET', '/carol-q/big', { as: carol }), 404, 'NoSuchKey');
    await ok('PUT', '/carol-q/fits', { as: carol, body: '1234567890' });
    expectError(await req('PUT', '/carol-q/one-more', { as: carol, body: 'x' }), 403, 'QuotaExceeded');
    expectError(await req('PUT', '/carol-q/copy', { as: carol, headers: { 'x-svc-copy-source': '/carol-q/fits' } }), 403, 'QuotaExceeded');
    const list = await ok('GET', '/?accounts');
    expect(list.text).toMatch(/<AccessKeyId>carol<\/AccessKeyId>\s*<DisplayName>carol<\/DisplayName>\s*<QuotaBytes>10<\/QuotaBytes>\s*<UsedBytes>10<\/UsedBytes>/);
    expect((await ok('GET', '/carol-q/', { as: carol })).text).not.toContain('<Key>big</Key>');
  });

  it('versioning: PUT returns x-svc-version-id; GET and HEAD ?versionId read an older version; ?versions lists both', async () => {
    await ok('PUT', '/root-ver/');
    await ok('PUT', '/root-ver/?versioning', { body: '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>' });
    expect((await ok('GET', '/root-ver/?versioning')).text).toContain('<Status>Enabled</Status>');
    const p1 = await ok('PUT', '/root-ver/k', { body: 'first version' });
    const p2 = await ok('PUT', '/root-ver/k', { body: 'second' });
    const v1 = p1.headers.get('x-svc-version-id')!;
    const v2 = p2.headers.get('x-svc-version-id')!;
    expect(v1).toMatch(/^\d+$/);
    expect(Number(v2)).toBeGreaterThan(Number(v1));
    // a page's fetch() can read the header: it is exposed
    expect(p1.headers.get('access-control-expose-headers') ?? '').toMatch(/x-svc-version-id/i);
    const cur = await ok('GET', '/root-ver/k');
    expect(cur.text).toBe('second');
    expect(cur.headers.get('x-svc-version-id')).toBe(v2);
    const old = await ok('GET', `/root-ver/k?versionId=${v1}`);
    expect(old.text).toBe('first version');
    expect(old.headers.get('x-svc-version-id')).toBe(v1);
    expect(old.headers.get('etag')).toBe(`"${md5('first version')}"`);
    const head = await req('HEAD', `/root-ver/k?versionId=${v1}`);
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('13');
    expect(head.text).toBe('');
    expectError(await req('GET', '/root-ver/k?versionId=999999'), 404, 'NoSuchVersion');
    const vs = await ok('GET', '/root-ver/?versions');
    expect(vs.text).toMatch(new RegExp(`<Key>k</Key>\\s*<VersionId>${v2}</VersionId>\\s*<IsLatest>true</IsLatest>[\\s\\S]*<Key>k</Key>\\s*<VersionId>${v1}</VersionId>\\s*<IsLatest>false</IsLatest>`));
    // DELETE keeps history; Delete Multiple with VersionId removes it
    await ok('DELETE', '/root-ver/k');
    expect((await ok('GET', `/root-ver/k?versionId=${v1}`)).text).toBe('first version');
    expectError(await req('DELETE', '/root-ver/'), 409, 'BucketNotEmpty');
    const d = await ok('POST', '/root-ver/?delete', { body: `<Delete><Object><Key>k</Key><VersionId>${v1}</VersionId></Object></Delete>` });
    expect(d.text).toMatch(new RegExp(`<Deleted>\\s*<Key>k</Key>\\s*<VersionId>${v1}</VersionId>`));
    expect((await ok('GET', '/root-ver/?versions')).text).not.toContain('<Version>');
    await ok('DELETE', '/root-ver/');
  });
});
