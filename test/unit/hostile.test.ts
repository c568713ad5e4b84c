// Hostile input (docs/protocol.md, "Every response": a 500 InternalError is a bug, whatever the
// input). No request here may give a 5xx, and none may change the store: each
// test takes a snapshot of everything observable before and after. Where docs/protocol.md names the
// code, the test expects it; where it does not, only a 4xx with an XML <Error><Code> is required.
import { describe, it, expect, beforeEach } from 'vitest';
import { createHash } from 'node:crypto';
import { newService, send, errorCode, buildRequest } from '../support/service.ts';
import { canonicalHeaders, hmac, signHeaders, ROOT } from '../support/sign.ts';

const P = 'http://photos.svc.localhost';
const O = 'http://other.svc.localhost';
const SVC = 'http://svc.localhost';
const MOUNT = 'http://localhost:5173/svc';

type Handle = (r: Request) => Promise<Response>;
let handle: Handle;

interface Result {
  status: number;
  headers: Headers;
  text: string;
  code: string | undefined;
  where: string;
}

interface RawOpts {
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** root (default, test signer), anon, or sign as root over this CanonicalizedResource verbatim. */
  auth?: 'root' | 'anon' | { resource: string };
}

/** A request built by hand: no automatic Content-Length, headers exactly as given. */
async function raw(method: string, url: string, o: RawOpts = {}): Promise<Result> {
  const h = new Headers(o.headers ?? {});
  const body = typeof o.body === 'string' ? new TextEncoder().encode(o.body) : o.body;
  const auth = o.auth ?? 'root';
  if (auth === 'root') signHeaders(method, url, h);
  else if (auth !== 'anon') {
    if (!h.has('x-svc-date')) h.set('x-svc-date', new Date().toUTCString());
    const sts = `${method}\n${h.get('content-md5') ?? ''}\n${h.get('content-type') ?? ''}\n\n${canonicalHeaders(h)}${auth.resource}`;
    h.set('authorization', `SVC ${ROOT.accessKeyId}:${hmac(ROOT.secret, sts)}`);
  }
  const init: RequestInit = { method, headers: h };
  if (body !== undefined) init.body = body as Uint8Array<ArrayBuffer>;
  const res = await handle(new Request(url, init));
  const text = method === 'HEAD' ? '' : await res.text();
  return { status: res.status, headers: res.headers, text, code: errorCode(text), where: `${method} ${url.slice(0, 120)}` };
}

/** The usual well-formed signed request (support/service.ts), as a Result. */
async function ok(method: string, url: string, o: Parameters<typeof send>[3] = {}): Promise<Result> {
  const r = await send(handle, method, url, o);
  return { ...r, code: errorCode(r.text), where: `${method} ${url.slice(0, 120)}` };
}

function expectClientError(r: Result, method = 'GET') {
  expect(r.status, `${r.where}: ${r.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
  expect(r.status, `${r.where}: ${r.text.slice(0, 300)}`).toBeLessThan(500);
  if (method !== 'HEAD') {
    expect(r.text, r.where).toMatch(/<Error>[\s\S]*<Code>[^<]+<\/Code>/);
  }
}
function expectError(r: Result, status: number, code: string) {
  expect(r.status, `${r.where}: ${r.text.slice(0, 300)}`).toBe(status);
  expect(r.code, r.where).toBe(code);
}
/** Not a server error; an error status must come with an XML error body. */
function expectNo5xx(r: Result, method = 'GET') {
  expect(r.status, `${r.where}: ${r.text.slice(0, 300)}`).toBeLessThan(500);
  if (r.status >= 400 && method !== 'HEAD' && r.status !== 404) expect(r.text, r.where).toMatch(/<Code>[^<]+<\/Code>/);
}

/** Everything observable about the store, as one string. */
async function snapshot(): Promise<string> {
  const parts: string[] = [];
  const urls = [
    `${SVC}/`,
    `${SVC}/?accounts`,
    `${P}/`,
    `${P}/?uploads`,
    `${P}/?acl`,
    `${P}/?versioning`,
    `${P}/?versions`,
    `${P}/a`,
    `${P}/b`,
    `${P}/dir/c`,
    `${O}/`,
    `${O}/o`,
  ];
  for (const u of urls) {
    const r = await send(handle, 'GET', u);
    const hs = ['etag', 'last-modified', 'content-type', 'x-svc-acl', 'content-length'].map((n) => `${n}=${r.headers.get(n)}`);
    parts.push(`${u} ${r.status} ${hs.join(' ')}\n${r.text.replace(/<RequestId>[^<]*<\/RequestId>/g, '')}`);
  }
  return parts.join('\n---\n');
}

let before: string;
beforeEach(async () => {
  ({ handle } = await newService());
  for (const [m, u, b] of [
    ['PUT', `${P}/`, undefined],
    ['PUT', `${O}/`, undefined],
    ['PUT', `${P}/a`, 'alpha'],
    ['PUT', `${P}/b`, 'bravo'],
    ['PUT', `${P}/dir/c`, 'charlie'],
    ['PUT', `${O}/o`, 'oscar'],
  ] as const) {
    const r = await send(handle, m, u, b === undefined ? {} : { body: b });
    expect(r.status, `${m} ${u}: ${r.text}`).toBe(200);
  }
  before = await snapshot();
});

async function expectUnchanged() {
  expect(await snapshot()).toBe(before);
}

const deleteBody = (...keys: string[]) => `<Delete>${keys.map((k) => `<Object><Key>${k}</Key></Object>`).join('')}</Delete>`;

// ------------------------------------------------------------------------------------------------
describe('Delete Multiple Objects: malformed XML', () => {
  const unparsable: [string, string][] = [
    ['empty body', ''],
    ['plain text', 'not xml at all'],
    ['JSON', '{"Delete":{"Object":[{"Key":"a"}]}}'],
    ['unclosed root', '<Delete><Object><Key>a</Key></Object>'],
    ['only an open tag', '<Delete>'],
    ['crossed tags', '<Delete><Object><Key>a</Object></Key></Delete>'],
    ['trailing junk after the root', '<Delete><Object><Key>a</Key></Object></Delete>trailing<junk'],
    ['two roots', '<Delete><Object><Key>a</Key></Object></Delete><Delete><Object><Key>b</Key></Object></Delete>'],
    ['undefined entity', '<Delete><Object><Key>&bogus;</Key></Object></Delete>'],
    ['bare ampersand', '<Delete><Object><Key>a&b</Key></Object></Delete>'],
    ['unterminated comment', '<Delete><!-- <Object><Key>a</Key></Object></Delete>'],
    ['no Object', '<Delete></Delete>'],
    ['no Object, Quiet only', '<Delete><Quiet>true</Quiet></Delete>'],
    ['self-closing root', '<Delete/>'],
    ['wrong root element', '<?xml version="1.0"?><Remove><Object><Key>a</Key></Object></Remove>'],
  ];
  for (const [name, body] of unparsable) {
    it(`${name} → 400 MalformedXML, nothing deleted`, async () => {
      expectError(await ok('POST', `${P}/?delete`, { body }), 400, 'MalformedXML');
      await expectUnchanged();
    });
  }

  // no code is fixed for schema violations inside a parsable document: any 4xx, nothing deleted
  const invalid: [string, string][] = [
    ['two Keys in one Object', '<Delete><Object><Key>a</Key><Key>b</Key></Object></Delete>'],
    ['an element inside Key', '<Delete><Object><Key><x>a</x></Key></Object></Delete>'],
    ['a NUL character', '<Delete><Object><Key>a\u0000</Key></Object></Delete>'],
    ['an invalid XML character', '<Delete><Object><Key>a\u0001</Key></Object></Delete>'],
  ];
  for (const [name, body] of invalid) {
    it(`${name} → 4xx, nothing deleted`, async () => {
      expectClientError(await ok('POST', `${P}/?delete`, { body }));
      await expectUnchanged();
    });
  }

  // odd but acceptable documents: no 5xx; they name no existing key, so nothing changes
  const odd: [string, string][] = [
    ['empty Key', deleteBody('')],
    ['Object without Key', '<Delete><Object><VersionId>1</VersionId></Object></Delete>'],
    ['Quiet not a boolean', '<Delete><Quiet>maybe</Quiet><Object><Key>zzz</Key></Object></Delete>'],
    ['prototype keys', deleteBody('__proto__', 'constructor', 'toString', 'hasOwnProperty')],
    ['CDATA key', '<Delete><Object><Key><![CDATA[zz<z]]></Key></Object></Delete>'],
    ['comments and processing instructions', '<?xml version="1.0"?><!-- c --><Delete><?pi x?><Object><Key>zz</Key></Object></Delete>'],
    ['attributes and a namespace', '<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/" a="1"><Object b="2"><Key>zz</Key></Object></Delete>'],
    ['a numeric character reference key', deleteBody('&#97;x')],
    ['non-numeric VersionId', '<Delete><Object><Key>zz</Key><VersionId>abc</VersionId></Object></Delete>'],
  ];
  for (const [name, body] of odd) {
    it(`${name} → no 5xx, nothing changed`, async () => {
      expectNo5xx(await ok('POST', `${P}/?delete`, { body }));
      await expectUnchanged();
    });
  }

  it('a 50 MB body → 400 MalformedXML, nothing deleted', { timeout: 60_000 }, async () => {
    const head = Buffer.from(deleteBody('a').replace('</Delete>', ''));
    const tail = Buffer.from('</Delete>');
    const body = Buffer.alloc(50 * 1024 * 1024, 0x20);
    head.copy(body, 0);
    tail.copy(body, body.length - tail.length);
    expectError(await ok('POST', `${P}/?delete`, { body: new Uint8Array(body) }), 400, 'MalformedXML');
    await expectUnchanged();
  });

  it('a well-formed body just over 2 MB → 400 MalformedXML; just under 2 MB works', async () => {
    const padded = (total: number) => {
      const open = '<Delete><Object><Key>a</Key></Object>';
      return open + ' '.repeat(total - open.length - '</Delete>'.length) + '</Delete>';
    };
    expectError(await ok('POST', `${P}/?delete`, { body: padded(2_100_000) }), 400, 'MalformedXML');
    await expectUnchanged();
    const r = await ok('POST', `${P}/?delete`, { body: padded(1_900_000) });
    expect(r.status, r.text).toBe(200);
    expect((await ok('GET', `${P}/a`)).status).toBe(404);
  });

  it('billion laughs DOCTYPE → 400 MalformedXML, quickly and without expanding', { timeout: 10_000 }, async () => {
    let dtd = '<!ENTITY lol0 "lollollollollollollollollollol">';
    for (let i = 1; i <= 9; i++) dtd += `<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`;
    const body = `<?xml version="1.0"?><!DOCTYPE Delete [${dtd}]><Delete><Object><Key>&lol9;</Key></Object></Delete>`;
    expectError(await ok('POST', `${P}/?delete`, { body }), 400, 'MalformedXML');
    await expectUnchanged();
  });

  it('an internal entity naming an existing key does not delete it', async () => {
    const body = '<?xml version="1.0"?><!DOCTYPE Delete [<!ENTITY x "a">]><Delete><Object><Key>&x;</Key></Object></Delete>';
    expectClientError(await ok('POST', `${P}/?delete`, { body }));
    await expectUnchanged();
  });

  it('an external entity (XXE) is not resolved', async () => {
    const body = '<?xml version="1.0"?><!DOCTYPE Delete [<!ENTITY x SYSTEM "file:///etc/passwd">]><Delete><Object><Key>&x;</Key></Object></Delete>';
    const r = await ok('POST', `${P}/?delete`, { body });
    expectClientError(r);
    expect(r.text).not.toContain('root:');
    await expectUnchanged();
  });

  it('deeply nested elements → 400 MalformedXML (no stack overflow)', { timeout: 20_000 }, async () => {
    const n = 100_000;
    const body = `<Delete>${'<x>'.repeat(n)}${'</x>'.repeat(n)}</Delete>`;
    expectError(await ok('POST', `${P}/?delete`, { body }), 400, 'MalformedXML');
    await expectUnchanged();
  });

  it('1001 keys → 400 MalformedXML, none deleted', async () => {
    const keys = ['a', 'b', ...Array.from({ length: 999 }, (_, i) => `n${i}`)];
    expect(keys.length).toBe(1001);
    expectError(await ok('POST', `${P}/?delete`, { body: deleteBody(...keys) }), 400, 'MalformedXML');
    expectError(await ok('POST', `${P}/?delete`, { body: deleteBody(...keys).replace('<Delete>', '<Delete><Quiet>true</Quiet>') }), 400, 'MalformedXML');
    await expectUnchanged();
  });

  it('missing Content-Length → 411 MissingContentLength, nothing deleted', async () => {
    expectError(await ok('POST', `${P}/?delete`, { body: deleteBody('a'), contentLength: 'omit' }), 411, 'MissingContentLength');
    await expectUnchanged();
  });
});

// ------------------------------------------------------------------------------------------------
describe('Content-MD5', () => {
  const md5b64 = (s: string) => createHash('md5').update(s).digest('base64');
  const cases: [string, string, number, string][] = [
    ['non-base64 garbage', '!!!not base64!!!', 400, 'InvalidDigest'],
    ['a 15-byte digest', Buffer.alloc(15, 7).toString('base64'), 400, 'InvalidDigest'],
    ['a 17-byte digest', Buffer.alloc(17, 7).toString('base64'), 400, 'InvalidDigest'],
    ['31 hex chars', 'f'.repeat(31), 400, 'InvalidDigest'],
    ['33 hex chars', 'f'.repeat(33), 400, 'InvalidDigest'],
    ['32 chars that are not hex', 'g'.repeat(32), 400, 'InvalidDigest'],
    ['a well-formed digest of other bytes (base64)', md5b64('other'), 400, 'BadDigest'],
    ['a well-formed digest of other bytes (hex)', createHash('md5').update('other').digest('hex'), 400, 'BadDigest'],
  ];
  for (const [name, value, status, code] of cases) {
    it(`PUT Object with ${name} → ${status} ${code}, nothing written`, async () => {
      expectError(await ok('PUT', `${P}/new`, { body: 'hello', headers: { 'content-md5': value } }), status, code);
      expectError(await ok('PUT', `${P}/a`, { body: 'hello', headers: { 'content-md5': value } }), status, code);
      await expectUnchanged();
    });
    it(`Delete Multiple with ${name} → ${status} ${code}, nothing deleted`, async () => {
      expectError(await ok('POST', `${P}/?delete`, { body: deleteBody('a'), headers: { 'content-md5': value } }), status, code);
      await expectUnchanged();
    });
  }

  it('an empty Content-MD5 → 4xx, nothing written', async () => {
    expectClientError(await ok('PUT', `${P}/new`, { body: 'hello', headers: { 'content-md5': '' } }));
    await expectUnchanged();
  });
});

// ------------------------------------------------------------------------------------------------
describe('Content-Length', () => {
  it('PUT Object without Content-Length → 411 MissingContentLength', async () => {
    expectError(await ok('PUT', `${P}/new`, { body: 'hello', contentLength: 'omit' }), 411, 'MissingContentLength');
    expectError(await ok('PUT', `${P}/a`, { body: 'hello', contentLength: 'omit' }), 411, 'MissingContentLength');
    await expectUnchanged();
  });

  it('Initiate Multipart Upload without Content-Length → 411 MissingContentLength', async () => {
    expectError(await ok('POST', `${P}/big?uploads`, { contentLength: 'omit' }), 411, 'MissingContentLength');
    await expectUnchanged();
  });

  it('Content-Length larger or smaller than the body → 400 IncompleteBody', async () => {
    expectError(await ok('PUT', `${P}/new`, { body: 'hello', contentLength: 10 }), 400, 'IncompleteBody');
    expectError(await ok('PUT', `${P}/new`, { body: 'hello', contentLength: 2 }), 400, 'IncompleteBody');
    expectError(await ok('PUT', `${P}/a`, { body: 'hello', contentLength: 6 }), 400, 'IncompleteBody');
    expectError(await ok('PUT', `${P}/a`, { body: 'hello', contentLength: 0 }), 400, 'IncompleteBody');
    await expectUnchanged();
  });

  // no code is fixed for malformed values: S3 answers 400; any 4xx will do, nothing may be written
  for (const value of ['-1', '-5', 'abc', '5abc', '1e1', '0x5', '5.0', '+5', '99999999999999999999999999', '5, 5']) {
    it(`Content-Length ${JSON.stringify(value)} → 4xx, nothing written`, async () => {
      expectClientError(await raw('PUT', `${P}/new`, { body: 'hello', headers: { 'content-length': value } }));
      expectClientError(await raw('PUT', `${P}/a`, { body: 'hello', headers: { 'content-length': value } }));
      expectClientError(await raw('POST', `${P}/?delete`, { body: deleteBody('a'), headers: { 'content-length': value } }));
      await expectUnchanged();
    });
  }
});

// ------------------------------------------------------------------------------------------------
describe('bucket names', () => {
  const bad = ['ab', 'Bad', 'a_b', '-abc', 'abc-', 'a.b', 'a'.repeat(64), 'a'.repeat(300), '%E2%82%AC%E2%82%AC%E2%82%AC', 'a%20b'];
  for (const name of bad) {
    it(`invalid bucket name ${name.slice(0, 20)}: create → 400 InvalidBucketName, other operations 4xx`, async () => {
      expectError(await raw('PUT', `${SVC}/${name}/`, { auth: { resource: `/${decodeURIComponent(name)}/` } }), 400, 'InvalidBucketName');
      for (const [m, path, body] of [
        ['GET', '/', undefined],
        ['HEAD', '/', undefined],
        ['DELETE', '/', undefined],
        ['GET', '/k', undefined],
        ['PUT', '/k', 'x'],
        ['DELETE', '/k', undefined],
        ['POST', '/?delete', deleteBody('k')],
      ] as const) {
        const url = `${SVC}/${name}${path}`;
        const resource = `/${decodeURIComponent(name)}/${path === '/k' ? 'k' : ''}${path.includes('delete') ? '?delete' : ''}`;
        const headers: Record<string, string> = body === undefined ? {} : { 'content-length': String(body.length) };
        expectClientError(await raw(m, url, { body, headers, auth: { resource } }), m);
      }
      await expectUnchanged();
    });
  }
});

// ------------------------------------------------------------------------------------------------
describe('unknown sub-resources and query parameters', () => {
  const reads = [
    `${P}/?foo`,
    `${P}/?torrent`,
    `${P}/a?torrent`,
    `${P}/?acl&uploads`,
    `${P}/a?acl`,
    `${P}/a?uploads`,
    `${P}/a?partNumber=1`,
    `${P}/a?uploadId=`,
    `${P}/a?versionId=abc`,
    `${P}/a?versionId=99999999999999999999999999`,
    `${P}/?versions&versionId=1`,
    `${P}/?location`,
    `${P}/?policy`,
    `${SVC}/?foo`,
    `${SVC}/?acl`,
    `${SVC}/?account=nobody`,
    `${P}/a?foo&bar=baz&=x&&`,
  ];
  for (const url of reads) {
    it(`GET and HEAD ${url} → no 5xx, nothing changed`, async () => {
      expectNo5xx(await ok('GET', url));
      expectNo5xx(await ok('HEAD', url), 'HEAD');
      await expectUnchanged();
    });
  }

  it('POST without a known sub-resource → 405 MethodNotAllowed', async () => {
    expectError(await ok('POST', `${P}/?foo`, { body: '' }), 405, 'MethodNotAllowed');
    expectError(await ok('POST', `${P}/a?foo`, { body: 'x' }), 405, 'MethodNotAllowed');
    expectError(await ok('POST', `${P}/a?torrent`, { body: 'x' }), 405, 'MethodNotAllowed');
    await expectUnchanged();
  });

  it('PUT /{key}?uploads is not a PUT Object (4xx, the object is unchanged)', async () => {
    expectClientError(await ok('PUT', `${P}/a?uploads`, { body: 'evil' }));
    await expectUnchanged();
  });

  it('PUT /?torrent on an existing bucket → 4xx', async () => {
    expectClientError(await ok('PUT', `${P}/?torrent`, { body: '' }));
    await expectUnchanged();
  });

  it('DELETE /?uploads → 4xx, the bucket stays', async () => {
    expectClientError(await ok('DELETE', `${P}/?uploads`));
    await expectUnchanged();
  });

  it('an unknown uploadId never touches the object of the same key', async () => {
    expectError(await ok('DELETE', `${P}/a?uploadId=nope`), 404, 'NoSuchUpload');
    expectError(await ok('PUT', `${P}/a?partNumber=1&uploadId=nope`, { body: 'evil' }), 404, 'NoSuchUpload');
    expectError(
      await ok('POST', `${P}/a?uploadId=nope`, { body: '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>' }),
      404,
      'NoSuchUpload',
    );
    expectError(await ok('GET', `${P}/a?uploadId=nope`), 404, 'NoSuchUpload');
    expectError(await ok('DELETE', `${P}/a?uploadId=${encodeURIComponent('../../a')}`), 404, 'NoSuchUpload');
    await expectUnchanged();
  });

  it('account admin calls with bad input → 4xx, accounts unchanged', async () => {
    expectClientError(await ok('PUT', `${SVC}/?account=`, { body: '<Account><SecretAccessKey>s</SecretAccessKey><DisplayName>d</DisplayName></Account>' }));
    expectClientError(await ok('PUT', `${SVC}/?account=x`, { body: '' }));
    expectClientError(await ok('PUT', `${SVC}/?account=x`, { body: '<Account><SecretAccessKey>' }));
    expectClientError(await ok('DELETE', `${SVC}/?account=svcadmin`));
    await expectUnchanged();
    expect((await ok('GET', `${P}/a`)).text).toBe('alpha'); // root still works
  });
});

// ------------------------------------------------------------------------------------------------
describe('malformed paths', () => {
  const paths = ['/%E0%A4%A', '/%FF', '/%', '/%zz', '/a%2', '/%C0%AF', '/%ED%A0%80', '/%F4%90%80%80', '/%E2%82'];
  for (const p of paths) {
    it(`bad percent-encoding ${p} → 4xx, nothing written`, async () => {
      for (const [m, body] of [
        ['GET', undefined],
        ['HEAD', undefined],
        ['PUT', 'evil'],
        ['DELETE', undefined],
      ] as const) {
        const headers: Record<string, string> = body === undefined ? {} : { 'content-length': String(body.length) };
        for (const url of [`${P}${p}`, `${SVC}/photos${p}`, `${MOUNT}/photos${p}`]) {
          expectClientError(await raw(m, url, { body, headers, auth: { resource: `/photos${p}` } }), m);
        }
        expectClientError(await raw(m, `${P}${p}`, { body, headers, auth: 'anon' }), m);
      }
      await expectUnchanged();
    });
  }

  it('bad percent-encoding in a path-style bucket name → 4xx', async () => {
    for (const url of [`${SVC}/%FF/k`, `${SVC}/%E0%A4%A/`, `${MOUNT}/%FF/k`]) {
      expectClientError(await raw('GET', url, { auth: { resource: '/x/k' } }));
      expectClientError(await raw('PUT', url, { body: 'x', headers: { 'content-length': '1' }, auth: { resource: '/x/k' } }));
    }
    await expectUnchanged();
  });

  it('a NUL byte in a key → no 5xx', async () => {
    expectNo5xx(await raw('GET', `${P}/a%00b`, { auth: { resource: '/photos/a%00b' } }));
  });

  it('writes on the bare service host path / → 4xx', async () => {
    expectClientError(await ok('PUT', `${SVC}/`, { body: '' }));
    expectClientError(await ok('DELETE', `${SVC}/`));
    expectClientError(await ok('POST', `${SVC}/`, { body: '' }));
    expectClientError(await ok('POST', `${SVC}/?delete`, { body: deleteBody('a') }));
    expectClientError(await ok('PUT', `${MOUNT}/`, { body: '' }));
    await expectUnchanged();
  });

  it('empty path segments → no 5xx', async () => {
    for (const url of [`${P}//`, `${SVC}//`, `${SVC}///a`, `${P}//a`, `${MOUNT}//`, `${MOUNT}`, 'http://localhost:5173/svc']) {
      expectNo5xx(await raw('GET', url, { auth: { resource: '/' } }));
      expectNo5xx(await raw('HEAD', url, { auth: { resource: '/' } }), 'HEAD');
    }
    await expectUnchanged();
  });
});

// ------------------------------------------------------------------------------------------------
describe('long values', () => {
  it('very long query strings → no 5xx', async () => {
    for (const url of [
      `${P}/?prefix=${'x'.repeat(100_000)}`,
      `${P}/?marker=${'x'.repeat(100_000)}`,
      `${P}/?delimiter=${'x'.repeat(100_000)}`,
      `${P}/?${'p=1&'.repeat(20_000)}`,
      `${P}/a?${'acl&'.repeat(5000)}`,
      `${P}/missing?ifNotFound=${'k'.repeat(5000)}`,
      `${P}/?prefix=${encodeURIComponent('\u{10FFFF}\u{1F600}\uFFFD')}`,
    ]) {
      expectNo5xx(await ok('GET', url));
    }
    await expectUnchanged();
  });

  it('max-keys with 1000 digits → 400 InvalidArgument', async () => {
    expectError(await ok('GET', `${P}/?max-keys=${'9'.repeat(1000)}`), 400, 'InvalidArgument');
    expectError(await ok('GET', `${P}/?max-keys=1.5`), 400, 'InvalidArgument');
  });

  it('download longer than 256 bytes → 400 InvalidArgument; 256 bytes is fine', async () => {
    expectError(await ok('GET', `${P}/a?download=${'d'.repeat(257)}`), 400, 'InvalidArgument');
    expectError(await ok('GET', `${P}/a?download=${encodeURIComponent('é'.repeat(129))}`), 400, 'InvalidArgument');
    const r = await ok('GET', `${P}/a?download=${encodeURIComponent('é'.repeat(128))}`);
    expect(r.status, r.text).toBe(200);
    expect(r.text).toBe('alpha');
  });

  it('keys longer than 1000 bytes are refused and nothing is written', async () => {
    expectError(await ok('PUT', `${P}/${'k'.repeat(1001)}`, { body: 'x' }), 400, 'InvalidArgument');
    expectError(await ok('PUT', `${P}/${'é'.repeat(501)}`, { body: 'x' }), 400, 'InvalidArgument'); // 1002 bytes
    expectError(await ok('PUT', `${P}/${'k'.repeat(100_000)}`, { body: 'x' }), 400, 'InvalidArgument');
    expectError(await ok('POST', `${P}/${'k'.repeat(1001)}?uploads`), 400, 'KeyTooLong');
    expectNo5xx(await ok('GET', `${P}/${'k'.repeat(100_000)}`));
    await expectUnchanged();
  });

  it('user metadata over 2048 bytes → 400 InvalidArgument, nothing written', async () => {
    expectError(await ok('PUT', `${P}/new`, { body: 'x', headers: { 'x-svc-meta-a': 'v'.repeat(64 * 1024) } }), 400, 'InvalidArgument');
    const many: Record<string, string> = {};
    for (let i = 0; i < 300; i++) many[`x-svc-meta-k${i}`] = 'value';
    expectError(await ok('PUT', `${P}/new`, { body: 'x', headers: many }), 400, 'InvalidArgument');
    expectError(await ok('PUT', `${P}/a`, { body: 'x', headers: { 'x-svc-meta-a': 'v'.repeat(2048) } }), 400, 'InvalidArgument'); // 1 + 2048
    await expectUnchanged();
    const r = await ok('PUT', `${P}/new`, { body: 'x', headers: { 'x-svc-meta-a': 'v'.repeat(2047) } }); // exactly 2048
    expect(r.status, r.text).toBe(200);
  });

  it('a 100 KB Authorization header → 403 AccessDenied', async () => {
    const d = new Date().toUTCString();
    for (const header of [`SVC svcadmin:${'A'.repeat(100_000)}`, `SVC ${'k'.repeat(100_000)}:abc=`, `SVC a:b:c`, `SVC  svcadmin:abc=`, `${'SVC '.repeat(1000)}`]) {
      expectError(await ok('GET', `${P}/a`, { auth: { header }, headers: { 'x-svc-date': d } }), 403, 'AccessDenied');
      expectError(await ok('PUT', `${P}/a`, { body: 'evil', auth: { header }, headers: { 'x-svc-date': d } }), 403, 'AccessDenied');
    }
    await expectUnchanged();
  });

  it('a 10 KB garbage x-svc-date → 403', async () => {
    const r = await ok('GET', `${P}/a`, { headers: { 'x-svc-date': 'x'.repeat(10_000) } });
    expect(r.status, r.text).toBe(403);
    expect(['AccessDenied', 'RequestTimeTooSkewed']).toContain(r.code);
  });

  it('incomplete presigned queries → 403 AccessDenied', async () => {
    const e = Math.floor(Date.now() / 1000) + 300;
    for (const q of ['SVCAccessKeyId=svcadmin', 'Signature=abc', `SVCAccessKeyId=svcadmin&Expires=${e}`, `SVCAccessKeyId=svcadmin&Signature=abc`, `SVCAccessKeyId=svcadmin&Expires=${'9'.repeat(400)}&Signature=abc`, `SVCAccessKeyId=&Expires=${e}&Signature=`]) {
      expectError(await raw('GET', `${P}/a?${q}`, { auth: 'anon' }), 403, 'AccessDenied');
    }
  });

  it('a huge x-svc-acl → 400 InvalidArgument, no bucket', async () => {
    expectError(await ok('PUT', 'http://newbucket.svc.localhost/', { headers: { 'x-svc-acl': 'public-read'.repeat(1000) } }), 400, 'InvalidArgument');
    expectError(await ok('PUT', `${P}/?acl`, { headers: { 'x-svc-acl': 'p'.repeat(10_000) } }), 400, 'InvalidArgument');
    await expectUnchanged();
  });

  it('odd header values on reads are ignored (If-Modified-Since garbage, latin-1 metadata)', async () => {
    const r = await ok('GET', `${P}/a`, { headers: { 'if-modified-since': 'x'.repeat(10_000) } });
    expect(r.status, r.text).toBe(200);
    expect(r.text).toBe('alpha');
    expectNo5xx(await ok('GET', `${P}/a`, { headers: { 'x-svc-meta-x': 'é\u00ff' } }));
    await expectUnchanged();
  });
});

// ------------------------------------------------------------------------------------------------
describe('Range', () => {
  // docs/protocol.md, "Ranges": only bytes=a-b (a ≤ b), bytes=a-, bytes=-n (n ≥ 1), one range; else 416
  for (const range of ['bytes=3-1', 'bytes=-0', 'bytes=0-1,2-3', 'items=0-1', 'bytes=abc', 'bytes=--1', 'bytes=1.5-2', 'bytes=0x1-2', 'bytes=5-', 'bytes=5-9', `bytes=${'9'.repeat(400)}-`, 'bytes=' + Array.from({ length: 1000 }, (_, i) => `${i}-${i}`).join(',')]) {
    it(`Range ${range.slice(0, 30)} → 416 InvalidRange with Content-Range bytes */5`, async () => {
      const r = await ok('GET', `${P}/a`, { headers: { range: range } });
      expectError(r, 416, 'InvalidRange');
      expect(r.headers.get('content-range')).toBe('bytes */5');
    });
  }
  it('huge range bounds are clamped, not overflowed', async () => {
    for (const range of [`bytes=0-${'9'.repeat(400)}`, `bytes=-${'9'.repeat(400)}`, 'bytes=1-9007199254740993']) {
      const r = await ok('GET', `${P}/a`, { headers: { range } });
      expect(r.status, `${range}: ${r.text}`).toBe(206);
      expect(r.headers.get('content-range')).toBe(range.startsWith('bytes=1-') ? 'bytes 1-4/5' : 'bytes 0-4/5');
    }
  });
});

// ------------------------------------------------------------------------------------------------
describe('copy and move sources', () => {
  const sources: [string, number | null, string | null][] = [
    ['', null, null],
    ['/', null, null],
    ['/photos', null, null],
    ['/photos/', null, null],
    ['/nobucket/a', 404, 'NoSuchBucket'],
    ['/photos/missing', 404, 'NoSuchKey'],
    ['/photos/%FF', null, null],
    ['/photos/%E0%A4%A', null, null],
    ['/../../etc/passwd', null, null],
    ['/' + 'x'.repeat(10_000), null, null],
  ];
  for (const [src, status, code] of sources) {
    it(`x-svc-copy-source ${JSON.stringify(src.slice(0, 30))} → ${status ?? '4xx'}, nothing written`, async () => {
      const r = await ok('PUT', `${P}/dest`, { headers: { 'x-svc-copy-source': src } });
      if (status !== null) expectError(r, status, code!);
      else expectClientError(r);
      await expectUnchanged();
    });
    it(`x-svc-move-source ${JSON.stringify(src.slice(0, 30))} → ${src === '/nobucket/a' ? '400' : status ?? '4xx'}, nothing moved`, async () => {
      const r = await ok('PUT', `${P}/dest`, { headers: { 'x-svc-move-source': src } });
      // docs/protocol.md, "Copy, move and metadata replacement": a move names its own bucket only, else
      // 400 InvalidArgument (before any lookup)
      if (src === '/nobucket/a') expectError(r, 400, 'InvalidArgument');
      else if (status !== null) expectError(r, status, code!);
      else expectClientError(r);
      await expectUnchanged();
    });
  }
  it('move onto itself and across buckets → 400 InvalidArgument, nothing lost', async () => {
    expectError(await ok('PUT', `${P}/a`, { headers: { 'x-svc-move-source': '/photos/a' } }), 400, 'InvalidArgument');
    expectError(await ok('PUT', `${P}/o`, { headers: { 'x-svc-move-source': '/other/o' } }), 400, 'InvalidArgument');
    await expectUnchanged();
  });
});

// ------------------------------------------------------------------------------------------------
describe('methods', () => {
  for (const method of ['PATCH', 'PROPFIND', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'PURGE', 'FOO']) {
    it(`${method} → 405 MethodNotAllowed on object, bucket and service host`, async () => {
      for (const url of [`${P}/a`, `${P}/`, `${SVC}/`, `${SVC}/photos/a`]) {
        expectError(await ok(method, url, { body: 'x' }), 405, 'MethodNotAllowed');
      }
      await expectUnchanged();
    });
  }
});

// ------------------------------------------------------------------------------------------------
describe('bodies of other XML operations', () => {
  const laughs = (() => {
    let dtd = '<!ENTITY l0 "lollollollollollollollollollol">';
    for (let i = 1; i <= 9; i++) dtd += `<!ENTITY l${i} "${`&l${i - 1};`.repeat(10)}">`;
    return (root: string, inner: string) => `<?xml version="1.0"?><!DOCTYPE ${root} [${dtd}]><${root}>${inner}</${root}>`;
  })();

  it('Complete Multipart Upload with billion laughs or garbage → 400 MalformedXML, upload unchanged', { timeout: 20_000 }, async () => {
    const init = await ok('POST', `${P}/big?uploads`);
    expect(init.status, init.text).toBe(200);
    const id = /<UploadId>([^<]+)<\/UploadId>/.exec(init.text)![1]!;
    const part = await ok('PUT', `${P}/big?partNumber=1&uploadId=${encodeURIComponent(id)}`, { body: 'part one' });
    expect(part.status, part.text).toBe(200);
    const etag = part.headers.get('etag')!;
    before = await snapshot();
    const url = `${P}/big?uploadId=${encodeURIComponent(id)}`;
    for (const body of [
      laughs('CompleteMultipartUpload', `<Part><PartNumber>1</PartNumber><ETag>&l9;</ETag></Part>`),
      '',
      'garbage',
      '<CompleteMultipartUpload>',
      '<CompleteMultipartUpload></CompleteMultipartUpload>',
      `<CompleteMultipartUpload>${'<x>'.repeat(100_000)}${'</x>'.repeat(100_000)}</CompleteMultipartUpload>`,
      `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${etag}</ETag></Part>`,
    ]) {
      expectError(await ok('POST', url, { body }), 400, 'MalformedXML');
    }
    await expectUnchanged();
    const parts = await ok('GET', url);
    expect(parts.status).toBe(200);
    expect(parts.text).toContain('<PartNumber>1</PartNumber>');
    expectError(await ok('GET', `${P}/big`), 404, 'NoSuchKey');
  });

  it('PUT /?versioning with billion laughs or garbage → 4xx, versioning unchanged', async () => {
    for (const body of [laughs('VersioningConfiguration', '<Status>&l9;</Status>'), '', 'garbage', '<VersioningConfiguration><Status>Maybe</Status></VersioningConfiguration>']) {
      expectClientError(await ok('PUT', `${P}/?versioning`, { body }));
    }
    await expectUnchanged();
  });

  it('PUT /?account with billion laughs → 4xx, no account created', async () => {
    const body = laughs('Account', '<SecretAccessKey>&l9;</SecretAccessKey><DisplayName>x</DisplayName>');
    expectClientError(await ok('PUT', `${SVC}/?account=evil`, { body }));
    await expectUnchanged();
  });
});

// ------------------------------------------------------------------------------------------------
describe('responses without a body', () => {
  it('HEAD responses carry no body, also on errors', async () => {
    for (const url of [`${P}/a`, `${P}/missing`, 'http://nobucket.svc.localhost/a', `${P}/`, 'http://nobucket.svc.localhost/']) {
      for (const auth of ['root', 'anon'] as const) {
        const res = await handle(await buildRequest('HEAD', url, { auth }));
        expect(res.status, `HEAD ${url} ${auth}`).toBeLessThan(500);
        expect((await res.arrayBuffer()).byteLength, `HEAD ${url} ${auth}`).toBe(0);
      }
    }
  });

  it('304 and 204 responses carry no body', async () => {
    const lm = (await ok('HEAD', `${P}/a`)).headers.get('last-modified')!;
    const res304 = await handle(await buildRequest('GET', `${P}/a`, { headers: { 'if-modified-since': lm } }));
    expect(res304.status).toBe(304);
    expect((await res304.arrayBuffer()).byteLength).toBe(0);
    const init = await ok('POST', `${P}/big?uploads`);
    const id = /<UploadId>([^<]+)<\/UploadId>/.exec(init.text)?.[1];
    expect(id, init.text).toBeTruthy();
    const res204 = await handle(await buildRequest('DELETE', `${P}/big?uploadId=${encodeURIComponent(id!)}`));
    expect(res204.status).toBe(204);
    expect((await res204.arrayBuffer()).byteLength).toBe(0);
    await expectUnchanged();
  });
});
