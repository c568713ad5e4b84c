// Signature tests (docs/protocol.md, "Signing"). Every expected signature is computed here with node:crypto
// over a StringToSign written out by hand, so a shared bug with sw/core/auth.ts cannot hide.
// Pattern: the right StringToSign must pass, and a plausible wrong one must fail with 403.
import { describe, it, expect, beforeEach } from 'vitest';
import { createHash, createHmac } from 'node:crypto';
import { newService, send, errorCode } from '../support/service.ts';
import { presign, signHeaders } from '../support/sign.ts';

const SECRET = 'svcadmin-secret';
const P = 'http://photos.svc.localhost';
const SVC = 'http://svc.localhost';
const MOUNT = 'http://localhost:5173/svc';

type Handle = (r: Request) => Promise<Response>;
let handle: Handle;

function hmac(sts: string, secret = SECRET): string {
  return createHmac('sha256', secret).update(sts, 'utf8').digest('base64');
}
function now(offsetSeconds = 0): string {
  return new Date(Date.now() + offsetSeconds * 1000).toUTCString();
}
function md5b64(s: string): string {
  return createHash('md5').update(s, 'utf8').digest('base64');
}

interface CallOpts {
  headers?: Record<string, string> | [string, string][];
  body?: string;
  /** StringToSign to sign with; undefined = no Authorization. */
  sts?: string;
  accessKeyId?: string;
  secret?: string;
}

async function call(method: string, url: string, o: CallOpts = {}) {
  const h = new Headers(o.headers ?? {});
  let body: Uint8Array | undefined;
  if (o.body !== undefined) body = new TextEncoder().encode(o.body);
  if (body !== undefined || method === 'PUT' || method === 'POST') h.set('content-length', String(body?.byteLength ?? 0));
  if (o.sts !== undefined) h.set('authorization', `SVC ${o.accessKeyId ?? 'svcadmin'}:${hmac(o.sts, o.secret)}`);
  const init: RequestInit = { method, headers: h };
  if (body !== undefined) init.body = body as Uint8Array<ArrayBuffer>;
  const res = await handle(new Request(url, init));
  const text = method === 'HEAD' ? '' : await res.text();
  return { status: res.status, headers: res.headers, text, code: errorCode(text) };
}

/** StringToSign of a request that carries x-svc-date `d` and no other x-svc-* header. */
function stsX(method: string, d: string, resource: string, md5 = '', type = '', extraCanon = ''): string {
  return `${method}\n${md5}\n${type}\n\n${extraCanon}x-svc-date:${d}\n${resource}`;
}

async function expectDenied(r: { status: number; code: string | undefined; text: string }) {
  expect(r.status, r.text).toBe(403);
  expect(r.code).toBe('AccessDenied');
}

function unescapeXml(s: string): string {
  return s
    .replace(/&#(?:10|x0*a);/gi, '\n')
    .replace(/&#(?:13|x0*d);/gi, '\r')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}
function message(text: string): string {
  return unescapeXml(/<Message>([\s\S]*?)<\/Message>/.exec(text)?.[1] ?? '');
}
/** The Message shows `sts`: verbatim, or with newlines escaped as \n (e.g. JSON-quoted). */
function expectShows(text: string, sts: string) {
  const m = message(text);
  const escaped = JSON.stringify(sts).slice(1, -1);
  expect(m.includes(sts) || m.includes(escaped), `Message ${JSON.stringify(m)} should show ${JSON.stringify(sts)}`).toBe(true);
}

beforeEach(async () => {
  ({ handle } = await newService());
  expect((await send(handle, 'PUT', `${P}/`)).status).toBe(200);
  expect((await send(handle, 'PUT', `${P}/k`, { body: 'hello' })).status).toBe(200);
});

describe('Date line', () => {
  it('signing with the Date header: Date is the 4th line of StringToSign', async () => {
    const d = now();
    const ok = await call('GET', `${P}/k`, { headers: { date: d }, sts: `GET\n\n\n${d}\n/photos/k` });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.text).toBe('hello');
    await expectDenied(await call('GET', `${P}/k`, { headers: { date: d }, sts: `GET\n\n\n\n/photos/k` }));
    await expectDenied(await call('GET', `${P}/k`, { headers: { date: d }, sts: `GET\n\n${d}\n\n/photos/k` }));
  });

  it('with x-svc-date the Date line is empty and x-svc-date is a canonical header', async () => {
    const d = now();
    const ok = await call('GET', `${P}/k`, { headers: { 'x-svc-date': d }, sts: `GET\n\n\n\nx-svc-date:${d}\n/photos/k` });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.text).toBe('hello');
    await expectDenied(await call('GET', `${P}/k`, { headers: { 'x-svc-date': d }, sts: `GET\n\n\n${d}\n/photos/k` }));
    await expectDenied(await call('GET', `${P}/k`, { headers: { 'x-svc-date': d }, sts: `GET\n\n\n${d}\nx-svc-date:${d}\n/photos/k` }));
  });

  it('with both Date and x-svc-date the Date line is still empty', async () => {
    const d = now();
    const other = now(-60);
    const headers = { date: other, 'x-svc-date': d };
    const ok = await call('GET', `${P}/k`, { headers, sts: `GET\n\n\n\nx-svc-date:${d}\n/photos/k` });
    expect(ok.status, ok.text).toBe(200);
    await expectDenied(await call('GET', `${P}/k`, { headers, sts: `GET\n\n\n${other}\nx-svc-date:${d}\n/photos/k` }));
  });

  it('a Date header more than 15 minutes off is 403 RequestTimeTooSkewed; 14 minutes is fine', async () => {
    for (const off of [16 * 60, -16 * 60, 3600 * 24]) {
      const d = now(off);
      const r = await call('GET', `${P}/k`, { headers: { date: d }, sts: `GET\n\n\n${d}\n/photos/k` });
      expect(r.status, `${off}: ${r.text}`).toBe(403);
      expect(r.code).toBe('RequestTimeTooSkewed');
    }
    for (const off of [14 * 60, -14 * 60]) {
      const d = now(off);
      const r = await call('GET', `${P}/k`, { headers: { date: d }, sts: `GET\n\n\n${d}\n/photos/k` });
      expect(r.status, `${off}: ${r.text}`).toBe(200);
    }
  });

  it('the x-svc-date is the one checked for skew when both are sent', async () => {
    // our choice (docs/protocol.md, "Dates and clock skew"): x-svc-date stands in for Date, so (like
    // x-amz-date in S3) it is the request time
    const d = now();
    const old = now(-3600);
    const ok = await call('GET', `${P}/k`, { headers: { date: old, 'x-svc-date': d }, sts: stsX('GET', d, '/photos/k') });
    expect(ok.status, ok.text).toBe(200);
    const skewed = await call('GET', `${P}/k`, { headers: { date: d, 'x-svc-date': old }, sts: stsX('GET', old, '/photos/k') });
    expect(skewed.status).toBe(403);
    expect(skewed.code).toBe('RequestTimeTooSkewed');
  });

  it('a signed request without any date is 403 AccessDenied', async () => {
    // our choice (docs/protocol.md, "Dates and clock skew"), as S3 answers: AccessDenied ("requires a
    // valid Date or x-amz-date header")
    await expectDenied(await call('GET', `${P}/k`, { sts: `GET\n\n\n\n/photos/k` }));
  });

  it('an unparsable date is 403 AccessDenied', async () => {
    // our choice (docs/protocol.md, "Dates and clock skew"): dates are RFC 1123; S3 answers AccessDenied
    // for an invalid date
    await expectDenied(await call('GET', `${P}/k`, { headers: { 'x-svc-date': 'not a date' }, sts: stsX('GET', 'not a date', '/photos/k') }));
  });
});

describe('CanonicalizedHeaders', () => {
  it('x-svc-* headers are lower-cased, sorted by name and written name:value\\n', async () => {
    const d = now();
    const headers: [string, string][] = [
      ['X-Svc-Meta-Zeta', 'z'],
      ['x-svc-meta-Alpha', 'a'],
      ['X-SVC-DATE', d],
    ];
    const good = `PUT\n\n\n\nx-svc-date:${d}\nx-svc-meta-alpha:a\nx-svc-meta-zeta:z\n/photos/m`;
    const unsorted = `PUT\n\n\n\nx-svc-meta-zeta:z\nx-svc-meta-alpha:a\nx-svc-date:${d}\n/photos/m`;
    const upper = `PUT\n\n\n\nX-SVC-DATE:${d}\nx-svc-meta-Alpha:a\nX-Svc-Meta-Zeta:z\n/photos/m`;
    const spaced = `PUT\n\n\n\nx-svc-date: ${d}\nx-svc-meta-alpha: a\nx-svc-meta-zeta: z\n/photos/m`;
    for (const sts of [unsorted, upper, spaced]) await expectDenied(await call('PUT', `${P}/m`, { headers, body: 'x', sts }));
    expect((await send(handle, 'GET', `${P}/m`)).status).toBe(404);
    const ok = await call('PUT', `${P}/m`, { headers, body: 'x', sts: good });
    expect(ok.status, ok.text).toBe(200);
    const r = await send(handle, 'GET', `${P}/m`);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-svc-meta-alpha')).toBe('a');
    expect(r.headers.get('x-svc-meta-zeta')).toBe('z');
  });

  it('header values are trimmed', async () => {
    const d = now();
    const headers = { 'x-svc-date': d, 'x-svc-meta-a': '   padded value  ' };
    await expectDenied(await call('PUT', `${P}/t`, { headers, body: 'x', sts: `PUT\n\n\n\nx-svc-date:${d}\nx-svc-meta-a:   padded value  \n/photos/t` }));
    const ok = await call('PUT', `${P}/t`, { headers, body: 'x', sts: `PUT\n\n\n\nx-svc-date:${d}\nx-svc-meta-a:padded value\n/photos/t` });
    expect(ok.status, ok.text).toBe(200);
  });

  it('headers that are not x-svc-* are not signed', async () => {
    const d = now();
    const headers = { 'x-svc-date': d, 'x-other': '1', 'content-language': 'en', 'cache-control': 'no-cache' };
    await expectDenied(await call('PUT', `${P}/o`, { headers, body: 'x', sts: `PUT\n\n\n\nx-other:1\nx-svc-date:${d}\n/photos/o` }));
    const ok = await call('PUT', `${P}/o`, { headers, body: 'x', sts: stsX('PUT', d, '/photos/o') });
    expect(ok.status, ok.text).toBe(200);
  });

  it('an x-svc-* header that is sent but not signed makes the signature fail', async () => {
    const d = now();
    await expectDenied(await call('PUT', `${P}/u`, { headers: { 'x-svc-date': d, 'x-svc-meta-a': '1' }, body: 'x', sts: stsX('PUT', d, '/photos/u') }));
    expect((await send(handle, 'GET', `${P}/u`)).status).toBe(404);
  });
});

describe('Content-MD5 and Content-Type lines', () => {
  it('Content-MD5 is the 2nd line and Content-Type the 3rd', async () => {
    const d = now();
    const md5 = md5b64('hello');
    const headers = { 'x-svc-date': d, 'content-md5': md5, 'content-type': 'text/plain' };
    for (const sts of [
      stsX('PUT', d, '/photos/c', 'text/plain', md5), // swapped
      stsX('PUT', d, '/photos/c', '', 'text/plain'), // MD5 line missing
      stsX('PUT', d, '/photos/c', md5, ''), // Content-Type line missing
      stsX('PUT', d, '/photos/c'),
    ]) {
      await expectDenied(await call('PUT', `${P}/c`, { headers, body: 'hello', sts }));
    }
    expect((await send(handle, 'GET', `${P}/c`)).status).toBe(404);
    const ok = await call('PUT', `${P}/c`, { headers, body: 'hello', sts: stsX('PUT', d, '/photos/c', md5, 'text/plain') });
    expect(ok.status, ok.text).toBe(200);
    const r = await send(handle, 'GET', `${P}/c`);
    expect(r.text).toBe('hello');
    expect(r.headers.get('content-type')).toBe('text/plain');
  });

  it('a hex Content-MD5 is signed as sent', async () => {
    const d = now();
    const hex = createHash('md5').update('hello').digest('hex');
    const ok = await call('PUT', `${P}/h`, { headers: { 'x-svc-date': d, 'content-md5': hex }, body: 'hello', sts: stsX('PUT', d, '/photos/h', hex) });
    expect(ok.status, ok.text).toBe(200);
  });
});

describe('CanonicalizedResource', () => {
  it('the service host signs as /', async () => {
    const d = now();
    await expectDenied(await call('GET', `${SVC}/`, { headers: { 'x-svc-date': d }, sts: stsX('GET', d, '') }));
    await expectDenied(await call('GET', `${SVC}/`, { headers: { 'x-svc-date': d }, sts: stsX('GET', d, '//') }));
    const ok = await call('GET', `${SVC}/`, { headers: { 'x-svc-date': d }, sts: stsX('GET', d, '/') });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.text).toContain('<ListAllMyBucketsResult>');
  });

  it('a bucket operation signs as /{bucket}/ (virtual host, path style and mount)', async () => {
    const d = now();
    for (const url of [`${P}/`, `${SVC}/photos/`, `${MOUNT}/photos/`]) {
      await expectDenied(await call('GET', url, { headers: { 'x-svc-date': d }, sts: stsX('GET', d, '/photos') }));
      await expectDenied(await call('GET', url, { headers: { 'x-svc-date': d }, sts: stsX('GET', d, '/') }));
      const ok = await call('GET', url, { headers: { 'x-svc-date': d }, sts: stsX('GET', d, '/photos/') });
      expect(ok.status, `${url}: ${ok.text}`).toBe(200);
      expect(ok.text).toContain('<Key>k</Key>');
    }
  });

  // [key, path as sent in the URL, CanonicalizedResource (docs/protocol.md), plausible wrong resources]
  const KEYS: [string, string, string, string[]][] = [
    ['a b', 'a%20b', '/photos/a%20b', ['/photos/a b', '/photos/a+b']],
    ['a/b', 'a/b', '/photos/a%2Fb', ['/photos/a/b']],
    ['a+b', 'a+b', '/photos/a%2Bb', ['/photos/a+b', '/photos/a%20b']],
    ['😀', '%F0%9F%98%80', '/photos/%F0%9F%98%80', ['/photos/😀', '/photos/%f0%9f%98%80']],
    ['a*b', 'a*b', '/photos/a*b', ['/photos/a%2Ab']],
    ['a~b', 'a~b', '/photos/a%7Eb', ['/photos/a~b']],
    ['a~c', 'a%7ec', '/photos/a%7Ec', ['/photos/a%7ec', '/photos/a~c']],
    ['a-_.z', 'a-_.z', '/photos/a-_.z', ['/photos/a%2D%5F%2Ez']],
    ['café', 'caf%C3%A9', '/photos/caf%C3%A9', ['/photos/café', '/photos/caf%E9']],
    ["it's (1)!", "it's%20(1)!", '/photos/it%27s%20%281%29%21', ["/photos/it's%20(1)!"]],
    ['x%20y', 'x%2520y', '/photos/x%2520y', ['/photos/x%20y']],
    ['q?=&', 'q%3F%3D%26', '/photos/q%3F%3D%26', ['/photos/q?=&']],
  ];
  for (const [key, path, good, bads] of KEYS) {
    it(`object key ${JSON.stringify(key)} signs as ${good}`, async () => {
      const d = now();
      const url = `${P}/${path}`;
      for (const bad of bads) {
        const r = await call('PUT', url, { headers: { 'x-svc-date': d }, body: 'v', sts: stsX('PUT', d, bad) });
        expect(r.status, `signed over ${bad}: ${r.text}`).toBe(403);
        expect(r.code).toBe('AccessDenied');
      }
      const ok = await call('PUT', url, { headers: { 'x-svc-date': d }, body: 'v', sts: stsX('PUT', d, good) });
      expect(ok.status, ok.text).toBe(200);
      // stored under the decoded key
      const list = await send(handle, 'GET', `${P}/?prefix=${encodeURIComponent(key)}`);
      expect(list.status).toBe(200);
      const keys = [...list.text.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => unescapeXml(m[1]!));
      expect(keys).toEqual([key]);
      const got = await call('GET', url, { headers: { 'x-svc-date': d }, sts: stsX('GET', d, good) });
      expect(got.status, got.text).toBe(200);
      expect(got.text).toBe('v');
    });
  }

  it('a key is decoded exactly once: /a%2Fb and /a/b are the same object', async () => {
    const d = now();
    const ok = await call('PUT', `${P}/a%2Fb`, { headers: { 'x-svc-date': d }, body: 'slash', sts: stsX('PUT', d, '/photos/a%2Fb') });
    expect(ok.status, ok.text).toBe(200);
    const r = await call('GET', `${P}/a/b`, { headers: { 'x-svc-date': d }, sts: stsX('GET', d, '/photos/a%2Fb') });
    expect(r.status, r.text).toBe(200);
    expect(r.text).toBe('slash');
  });
});

describe('sub-resources', () => {
  it('acl is signed (PUT and GET /?acl)', async () => {
    const d = now();
    const headers = { 'x-svc-date': d, 'x-svc-acl': 'public-read' };
    const canon = 'x-svc-acl:public-read\n';
    await expectDenied(await call('PUT', `${P}/?acl`, { headers, sts: stsX('PUT', d, '/photos/', '', '', canon) }));
    await expectDenied(await call('PUT', `${P}/?acl`, { headers, sts: stsX('PUT', d, '/photos/?acl') })); // x-svc-acl not signed
    const ok = await call('PUT', `${P}/?acl`, { headers, sts: stsX('PUT', d, '/photos/?acl', '', '', canon) });
    expect(ok.status, ok.text).toBe(200);
    await expectDenied(await call('GET', `${P}/?acl`, { headers: { 'x-svc-date': d }, sts: stsX('GET', d, '/photos/') }));
    const g = await call('GET', `${P}/?acl`, { headers: { 'x-svc-date': d }, sts: stsX('GET', d, '/photos/?acl') });
    expect(g.status, g.text).toBe(200);
    expect(g.headers.get('x-svc-acl')).toBe('public-read');
  });

  it('uploads, uploadId and partNumber are signed, sorted by name', async () => {
    const d = now();
    const h = { 'x-svc-date': d };
    await expectDenied(await call('POST', `${P}/big?uploads`, { headers: h, sts: stsX('POST', d, '/photos/big') }));
    const init = await call('POST', `${P}/big?uploads`, { headers: h, sts: stsX('POST', d, '/photos/big?uploads') });
    expect(init.status, init.text).toBe(200);
    const id = /<UploadId>([^<]+)<\/UploadId>/.exec(init.text)?.[1];
    expect(id).toBeTruthy();
    const url = `${P}/big?uploadId=${encodeURIComponent(id!)}&partNumber=1`; // URL order: uploadId first
    for (const bad of [
      `/photos/big?uploadId=${id}&partNumber=1`, // not sorted
      '/photos/big',
      `/photos/big?uploadId=${id}`,
      `/photos/big?partNumber=1`,
    ]) {
      await expectDenied(await call('PUT', url, { headers: h, body: 'part', sts: stsX('PUT', d, bad) }));
    }
    const part = await call('PUT', url, { headers: h, body: 'part', sts: stsX('PUT', d, `/photos/big?partNumber=1&uploadId=${id}`) });
    expect(part.status, part.text).toBe(200);
    // list parts: uploadId signed, max-parts not
    const lp = `${P}/big?max-parts=10&uploadId=${encodeURIComponent(id!)}`;
    await expectDenied(await call('GET', lp, { headers: h, sts: stsX('GET', d, `/photos/big?max-parts=10&uploadId=${id}`) }));
    const parts = await call('GET', lp, { headers: h, sts: stsX('GET', d, `/photos/big?uploadId=${id}`) });
    expect(parts.status, parts.text).toBe(200);
    expect(parts.text).toContain('<PartNumber>1</PartNumber>');
    // list uploads
    await expectDenied(await call('GET', `${P}/?uploads`, { headers: h, sts: stsX('GET', d, '/photos/') }));
    const lu = await call('GET', `${P}/?uploads&prefix=b`, { headers: h, sts: stsX('GET', d, '/photos/?uploads') });
    expect(lu.status, lu.text).toBe(200);
    expect(lu.text).toContain(id!);
  });

  it('delete is signed', async () => {
    const d = now();
    const body = '<Delete><Object><Key>k</Key></Object></Delete>';
    const md5 = md5b64(body);
    const headers = { 'x-svc-date': d, 'content-md5': md5 };
    await expectDenied(await call('POST', `${P}/?delete`, { headers, body, sts: stsX('POST', d, '/photos/', md5) }));
    expect((await send(handle, 'GET', `${P}/k`)).status).toBe(200);
    const ok = await call('POST', `${P}/?delete`, { headers, body, sts: stsX('POST', d, '/photos/?delete', md5) });
    expect(ok.status, ok.text).toBe(200);
    expect((await send(handle, 'GET', `${P}/k`)).status).toBe(404);
  });

  it('versioning, versionId and versions are signed', async () => {
    const d = now();
    const h = { 'x-svc-date': d };
    const body = '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>';
    await expectDenied(await call('PUT', `${P}/?versioning`, { headers: h, body, sts: stsX('PUT', d, '/photos/') }));
    const v = await call('PUT', `${P}/?versioning`, { headers: h, body, sts: stsX('PUT', d, '/photos/?versioning') });
    expect(v.status, v.text).toBe(200);
    const gv = await call('GET', `${P}/?versioning`, { headers: h, sts: stsX('GET', d, '/photos/?versioning') });
    expect(gv.status, gv.text).toBe(200);
    expect(gv.text).toContain('<Status>Enabled</Status>');
    const p = await send(handle, 'PUT', `${P}/vv`, { body: 'one' });
    expect(p.status).toBe(200);
    const vid = p.headers.get('x-svc-version-id');
    expect(vid).toMatch(/^\d+$/);
    await send(handle, 'PUT', `${P}/vv`, { body: 'two!' });
    await expectDenied(await call('GET', `${P}/vv?versionId=${vid}`, { headers: h, sts: stsX('GET', d, '/photos/vv') }));
    const old = await call('GET', `${P}/vv?versionId=${vid}`, { headers: h, sts: stsX('GET', d, `/photos/vv?versionId=${vid}`) });
    expect(old.status, old.text).toBe(200);
    expect(old.text).toBe('one');
    const hd = await call('HEAD', `${P}/vv?versionId=${vid}`, { headers: h, sts: stsX('HEAD', d, `/photos/vv?versionId=${vid}`) });
    expect(hd.status).toBe(200);
    expect(hd.headers.get('content-length')).toBe('3');
    await expectDenied(await call('GET', `${P}/?versions`, { headers: h, sts: stsX('GET', d, '/photos/') }));
    const vs = await call('GET', `${P}/?versions&prefix=v`, { headers: h, sts: stsX('GET', d, '/photos/?versions') });
    expect(vs.status, vs.text).toBe(200);
    expect(vs.text).toContain('<ListVersionsResult');
  });

  it('accounts is signed on the service host', async () => {
    const d = now();
    const h = { 'x-svc-date': d };
    await expectDenied(await call('GET', `${SVC}/?accounts`, { headers: h, sts: stsX('GET', d, '/') }));
    const ok = await call('GET', `${SVC}/?accounts`, { headers: h, sts: stsX('GET', d, '/?accounts') });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.text).toContain('svcadmin');
    expect(ok.text).not.toContain('svcadmin-secret');
  });

  it('meta is not signed', async () => {
    const d = now();
    const headers = { 'x-svc-date': d, 'content-type': 'text/x-meta' };
    await expectDenied(await call('PUT', `${P}/k?meta`, { headers, sts: stsX('PUT', d, '/photos/k?meta', '', 'text/x-meta') }));
    expect((await send(handle, 'HEAD', `${P}/k`)).headers.get('content-type')).not.toBe('text/x-meta');
    const ok = await call('PUT', `${P}/k?meta`, { headers, sts: stsX('PUT', d, '/photos/k', '', 'text/x-meta') });
    expect(ok.status, ok.text).toBe(200);
    expect((await send(handle, 'HEAD', `${P}/k`)).headers.get('content-type')).toBe('text/x-meta');
  });

  it('download is not signed', async () => {
    const d = now();
    const h = { 'x-svc-date': d };
    await expectDenied(await call('GET', `${P}/k?download=x.txt`, { headers: h, sts: stsX('GET', d, '/photos/k?download=x.txt') }));
    const ok = await call('GET', `${P}/k?download=x.txt`, { headers: h, sts: stsX('GET', d, '/photos/k') });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.text).toBe('hello');
    expect(ok.headers.get('content-disposition')).toMatch(/^attachment; filename="x\.txt"/);
  });

  it('ifNotFound is not signed', async () => {
    const d = now();
    const h = { 'x-svc-date': d };
    await expectDenied(await call('GET', `${P}/missing?ifNotFound=k`, { headers: h, sts: stsX('GET', d, '/photos/missing?ifNotFound=k') }));
    const ok = await call('GET', `${P}/missing?ifNotFound=k`, { headers: h, sts: stsX('GET', d, '/photos/missing') });
    expect(ok.status, ok.text).toBe(404);
    expect(ok.text).toBe('hello');
  });

  it('list paging parameters (prefix, max-keys, marker, delimiter) are not signed', async () => {
    const d = now();
    const h = { 'x-svc-date': d };
    const url = `${P}/?prefix=k&max-keys=5&marker=a&delimiter=/`;
    for (const bad of ['/photos/?delimiter=/&marker=a&max-keys=5&prefix=k', '/photos/?prefix=k', '/photos/?max-keys=5']) {
      await expectDenied(await call('GET', url, { headers: h, sts: stsX('GET', d, bad) }));
    }
    const ok = await call('GET', url, { headers: h, sts: stsX('GET', d, '/photos/') });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.text).toContain('<Key>k</Key>');
    expect(ok.text).toContain('<MaxKeys>5</MaxKeys>');
  });
});

describe('signature mismatch', () => {
  it('the Message contains the StringToSign the service computed', async () => {
    const d = now();
    const md5 = md5b64('hello');
    const headers = { 'x-svc-date': d, 'content-md5': md5, 'content-type': 'text/plain', 'x-svc-meta-b': '2', 'x-svc-meta-a': '1' };
    const right = `PUT\n${md5}\ntext/plain\n\nx-svc-date:${d}\nx-svc-meta-a:1\nx-svc-meta-b:2\n/photos/a%20b`;
    const r = await call('PUT', `${P}/a%20b`, { headers, body: 'hello', sts: right, secret: 'not-the-secret' });
    await expectDenied(r);
    expectShows(r.text, right);
    expect(r.text).not.toContain(SECRET);
    expect((await send(handle, 'GET', `${P}/a%20b`)).status).toBe(404);
  });

  it('the Message shows sub-resources and the Date line too', async () => {
    const d = now();
    const right = `GET\n\n\n${d}\n/photos/?acl`;
    const r = await call('GET', `${P}/?acl&prefix=x`, { headers: { date: d }, sts: right + 'x' });
    await expectDenied(r);
    expectShows(r.text, right);
  });
});

describe('presigned URLs', () => {
  const exp = (s: number) => Math.floor(Date.now() / 1000) + s;

  it('a valid presigned GET works without any header', async () => {
    const url = presign('GET', `${P}/k`, exp(300));
    expect(new URL(url).searchParams.get('SVCAccessKeyId')).toBe('svcadmin');
    const r = await call('GET', url);
    expect(r.status, r.text).toBe(200);
    expect(r.text).toBe('hello');
  });

  it('the presigned signature is HMAC over METHOD\\n\\n\\nExpires\\n/bucket/key', async () => {
    const e = exp(300);
    const sig = hmac(`GET\n\n\n${e}\n/photos/k`);
    const r = await call('GET', `${P}/k?SVCAccessKeyId=svcadmin&Expires=${e}&Signature=${encodeURIComponent(sig)}`);
    expect(r.status, r.text).toBe(200);
    expect(r.text).toBe('hello');
  });

  it('a presigned URL with a changed key is 403', async () => {
    await send(handle, 'PUT', `${P}/k2`, { body: 'other' });
    const url = presign('GET', `${P}/k`, exp(300)).replace('/k?', '/k2?');
    await expectDenied(await call('GET', url));
  });

  it('a presigned URL with a changed Expires is 403', async () => {
    const e = exp(300);
    const url = presign('GET', `${P}/k`, e).replace(`Expires=${e}`, `Expires=${e + 1000}`);
    expect(url).toContain(`Expires=${e + 1000}`);
    await expectDenied(await call('GET', url));
  });

  it('a presigned URL whose Expires is past is 403 AccessDenied', async () => {
    await expectDenied(await call('GET', presign('GET', `${P}/k`, exp(-60))));
  });

  it('a presigned URL is only valid for its method', async () => {
    const url = presign('GET', `${P}/k`, exp(300));
    await expectDenied(await call('DELETE', url));
    expect((await send(handle, 'GET', `${P}/k`)).status).toBe(200);
  });

  it('a presigned PUT stores the object', async () => {
    const r = await call('PUT', presign('PUT', `${P}/up`, exp(300)), { body: 'uploaded' });
    expect(r.status, r.text).toBe(200);
    const g = await send(handle, 'GET', `${P}/up`);
    expect(g.text).toBe('uploaded');
  });

  it('a presigned URL with an unknown key or a wrong secret is 403', async () => {
    await expectDenied(await call('GET', presign('GET', `${P}/k`, exp(300), { accessKeyId: 'nobody', secret: SECRET })));
    await expectDenied(await call('GET', presign('GET', `${P}/k`, exp(300), { accessKeyId: 'svcadmin', secret: 'wrong' })));
  });

  it('a presigned URL with a non-numeric Expires is 403', async () => {
    const url = presign('GET', `${P}/k`, exp(300)).replace(/Expires=\d+/, 'Expires=soon');
    await expectDenied(await call('GET', url));
  });

  it('presigned URLs work on the mount and sign a signed sub-resource', async () => {
    const m = await call('GET', presign('GET', `${MOUNT}/photos/k`, exp(300)));
    expect(m.status, m.text).toBe(200);
    expect(m.text).toBe('hello');
    const acl = await call('GET', presign('GET', `${P}/?acl`, exp(300)));
    expect(acl.status, acl.text).toBe(200);
    expect(acl.headers.get('x-svc-acl')).toBe('private');
    // an unsigned parameter can be added after signing
    const dl = await call('GET', presign('GET', `${P}/k`, exp(300)) + '&download=f.txt');
    expect(dl.status, dl.text).toBe(200);
    expect(dl.headers.get('content-disposition')).toMatch(/^attachment; filename="f\.txt"/);
  });
});

describe('addressing', () => {
  it('headers signed for the virtual host are valid on the mount URL and on path style', async () => {
    for (const url of [`${MOUNT}/photos/k`, `${SVC}/photos/k`]) {
      const headers = signHeaders('GET', `${P}/k`, new Headers());
      const res = await handle(new Request(url, { headers }));
      const text = await res.text();
      expect(res.status, `${url}: ${text}`).toBe(200);
      expect(text).toBe('hello');
    }
  });

  it('scheme and port do not change the bucket host', async () => {
    const headers = signHeaders('GET', `${P}/k`, new Headers());
    const res = await handle(new Request('https://photos.svc.localhost:8443/k', { headers }));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello');
  });
});
