// protocol/sigv4.ts against the AWS SDK's own signer (@smithy/signature-v4, what @aws-sdk/client-s3
// signs with), configured as the S3 client configures it (path encoded once): for header-signed and
// presigned requests over keys, queries and headers that trip up hand-written signers, our
// canonical request and signature must be the SDK's; a change to anything signed must not verify.
import { describe, it, expect } from 'vitest';
import { SignatureV4 } from '@smithy/signature-v4';
import { S3RequestPresigner } from '@aws-sdk/s3-request-presigner';
import { Sha256 } from '@aws-crypto/sha256-js';
import {
  amzDateMs, canonicalRequest, parseAuthorization, parsePresigned, presignRequestV4, signRequestV4, uriEncode, signV4, stringToSignV4, verifyV4, UNSIGNED_PAYLOAD,
  type SignedBy,
} from '../../protocol/sigv4.ts';

const CREDS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const WHEN = new Date('2026-11-26T10:30:00Z');

const signer = (region = 'us-east-1') => new SignatureV4({ credentials: CREDS, region, service: 's3', sha256: Sha256, uriEscapePath: false, applyChecksum: true });

interface Case {
  name: string;
  method: string;
  /** The path as the client sends it, encoded once. */
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string;
  region?: string;
}

const enc = (key: string) => key.split('/').map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join('/');

const CASES: Case[] = [
  { name: 'a plain GET', method: 'GET', path: '/photos/cat.jpg' },
  { name: 'the service root', method: 'GET', path: '/' },
  { name: 'a key with spaces, +, unicode and an astral character', method: 'PUT', path: `/photos/${enc('a b+c/ü/😀 (1).txt')}`, body: 'hello' },
  { name: 'a key with every reserved character', method: 'GET', path: `/b/${enc("!#$&'()*,;=:@[]?%")}` },
  { name: 'a key with empty segments', method: 'GET', path: '/b/a//b/' },
  { name: 'sub-resources with empty values, x-id, sorted by name then value', method: 'POST', path: '/b/k', query: { uploads: '', 'x-id': 'CreateMultipartUpload' } },
  { name: 'ListObjectsV2 with values needing encoding', method: 'GET', path: '/b/', query: { 'list-type': '2', prefix: 'a b/ü+', delimiter: '/', 'start-after': 'x~y', 'max-keys': '10', 'encoding-type': 'url' } },
  { name: 'headers with runs of spaces and metadata', method: 'PUT', path: '/b/k', headers: { 'x-amz-meta-note': '  two   spaces  ', 'content-type': 'text/plain', 'x-amz-acl': 'public-read' }, body: 'x' },
  { name: 'another region', method: 'HEAD', path: '/b/k', region: 'eu-west-3' },
];

async function signedBySdk(c: Case) {
  const host = 'localhost:9000';
  const request = {
    method: c.method, protocol: 'http:', hostname: 'localhost', port: 9000, path: c.path, query: c.query ?? {},
    headers: { host, ...(c.headers ?? {}), 'x-amz-content-sha256': c.body === undefined ? 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' : UNSIGNED_PAYLOAD },
    ...(c.body !== undefined ? { body: c.body } : {}),
  };
  const signed = await signer(c.region).sign(request, { signingDate: WHEN });
  return { host, headers: new Headers(signed.headers as Record<string, string>) };
}

const queryOf = (q: Record<string, string | string[]> = {}) => {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) for (const x of [v].flat()) out.append(k, x);
  return out;
};

describe('SigV4 as the AWS SDK signs it', () => {
  for (const c of CASES) {
    it(`header-signed: ${c.name}`, async () => {
      const { host, headers } = await signedBySdk(c);
      const by = parseAuthorization(headers.get('authorization')!, headers.get('x-amz-date')) as SignedBy;
      expect(by).toMatchObject({ credential: { accessKeyId: CREDS.accessKeyId, date: '20261126', region: c.region ?? 'us-east-1', service: 's3' } });
      const canonical = canonicalRequest({
        method: c.method, rawPath: c.path, query: queryOf(c.query), headers, host, signedHeaders: by.signedHeaders, payloadHash: headers.get('x-amz-content-sha256')!,
      })!;
      const sts = await stringToSignV4(by.amzDate, by.credential, canonical);
      expect(await signV4(CREDS.secretAccessKey, by.credential, sts)).toBe(by.signature);
      expect(await verifyV4(CREDS.secretAccessKey, by.credential, sts, by.signature)).toBe(true);
      // Another secret, or anything signed changed, does not verify.
      expect(await verifyV4('other-secret', by.credential, sts, by.signature)).toBe(false);
      const changed = canonicalRequest({
        method: c.method, rawPath: c.path + 'x', query: queryOf(c.query), headers, host, signedHeaders: by.signedHeaders, payloadHash: headers.get('x-amz-content-sha256')!,
      })!;
      expect(await verifyV4(CREDS.secretAccessKey, by.credential, await stringToSignV4(by.amzDate, by.credential, changed), by.signature)).toBe(false);
    });
  }

  it('presigned: a GET and a PUT as getSignedUrl makes them, and a URL with one parameter changed does not verify', async () => {
    // As @aws-sdk/s3-request-presigner asks it: the payload is UNSIGNED-PAYLOAD, carried in the query.
    for (const method of ['GET', 'PUT']) {
      const presigned = await signer().presign(
        { method, protocol: 'http:', hostname: 'localhost', port: 9000, path: `/b/${enc('a b/ü.txt')}`, query: { 'x-id': method === 'GET' ? 'GetObject' : 'PutObject' }, headers: { host: 'localhost:9000', 'x-amz-content-sha256': UNSIGNED_PAYLOAD } },
        { signingDate: WHEN, expiresIn: 900 },
      );
      const query = queryOf(presigned.query as Record<string, string>);
      const by = parsePresigned(query) as SignedBy;
      expect(by).toMatchObject({ expires: 900, signedHeaders: ['host'], amzDate: '20261126T103000Z' });
      const canonical = (q: URLSearchParams) => canonicalRequest({
        method, rawPath: presigned.path, query: q, headers: new Headers(), host: 'localhost:9000', signedHeaders: by.signedHeaders,
        payloadHash: q.get('X-Amz-Content-Sha256') ?? UNSIGNED_PAYLOAD, presigned: true,
      })!;
      expect(await verifyV4(CREDS.secretAccessKey, by.credential, await stringToSignV4(by.amzDate, by.credential, canonical(query)), by.signature)).toBe(true);
      const longer = new URLSearchParams(query);
      longer.set('X-Amz-Expires', '604800');
      expect(await verifyV4(CREDS.secretAccessKey, by.credential, await stringToSignV4(by.amzDate, by.credential, canonical(longer)), by.signature)).toBe(false);
    }
  });

  it('reads what it can, and says malformed for SigV4 it cannot read; other schemes are not its business', () => {
    expect(parseAuthorization('SVC key:sig', null)).toBeUndefined();
    expect(parseAuthorization('AWS4-HMAC-SHA256 Credential=a/20261126/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=zz', '20261126T103000Z')).toBe('malformed');
    expect(parseAuthorization(`AWS4-HMAC-SHA256 Credential=a/2026/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=${'0'.repeat(64)}`, '20261126T103000Z')).toBe('malformed');
    expect(parseAuthorization(`AWS4-HMAC-SHA256 Credential=a/20261126/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=${'0'.repeat(64)}`, null)).toBe('malformed');
    expect(parsePresigned(new URLSearchParams('a=b'))).toBeUndefined();
    expect(parsePresigned(new URLSearchParams('X-Amz-Algorithm=AWS4-HMAC-SHA1'))).toBe('malformed');
    expect(canonicalRequest({ method: 'GET', rawPath: '/b/%FF', query: new URLSearchParams(), headers: new Headers(), host: 'h', signedHeaders: ['host'], payloadHash: UNSIGNED_PAYLOAD })).toBeUndefined();
    expect(canonicalRequest({ method: 'GET', rawPath: '/b/k', query: new URLSearchParams(), headers: new Headers(), host: 'h', signedHeaders: ['host', 'x-amz-date'], payloadHash: UNSIGNED_PAYLOAD })).toBeUndefined();
    expect(amzDateMs('20261126T103000Z')).toBe(WHEN.getTime());
    expect(amzDateMs('2026-11-26')).toBeNaN();
  });
});

describe('signRequestV4 (the console playground signs S3 requests with it)', () => {
  it("makes the AWS SDK's own signature, and the signing key's steps are the documented derivation", async () => {
    const { createHmac } = await import('node:crypto');
    for (const c of CASES.filter((x) => x.body !== undefined || x.method !== 'PUT')) {
      const body = c.body === undefined ? undefined : new TextEncoder().encode(c.body);
      const url = new URL(`http://localhost:9000${c.path}`);
      for (const [k, v] of Object.entries(c.query ?? {})) url.searchParams.append(k, v);
      const headers = new Headers(c.headers ?? {});
      const ours = await signRequestV4({ method: c.method, url, headers, ...(body ? { body } : {}), accessKeyId: CREDS.accessKeyId, secret: CREDS.secretAccessKey, region: c.region ?? 'us-east-1', now: WHEN, explain: true });
      const sdk = await signer(c.region).sign({
        method: c.method, protocol: 'http:', hostname: 'localhost', port: 9000, path: c.path, query: c.query ?? {},
        headers: { host: 'localhost:9000', ...(c.headers ?? {}), 'x-amz-content-sha256': ours.payloadHash },
        ...(c.body !== undefined ? { body: c.body } : {}),
      }, { signingDate: WHEN });
      const theirs = parseAuthorization((sdk.headers as Record<string, string>).authorization!, (sdk.headers as Record<string, string>)['x-amz-date']!) as SignedBy;
      // The SDK signs every header it was given; ours signs host, x-amz-* and the content headers: compare over the SDK's list.
      const canonical = canonicalRequest({ method: c.method, rawPath: url.pathname, query: url.searchParams, headers, host: url.host, signedHeaders: theirs.signedHeaders, payloadHash: ours.payloadHash })!;
      expect(await signV4(CREDS.secretAccessKey, theirs.credential, await stringToSignV4(ours.amzDate, theirs.credential, canonical)), c.name).toBe(theirs.signature);
      expect(headers.get('authorization')).toBe(ours.authorization);
      let k: Buffer = Buffer.from(`AWS4${CREDS.secretAccessKey}`);
      for (const step of ours.keySteps) {
        k = createHmac('sha256', k).update(step.input).digest();
        expect(step.hex, step.name).toBe(k.toString('hex'));
      }
      expect(createHmac('sha256', k).update(ours.stringToSign).digest('hex')).toBe(ours.signature);
    }
  });
});

describe('presignRequestV4 (a replica signs its GETs and HEADs in the URL)', () => {
  it("makes the AWS SDK presigner's URL: the same parameters and signature, a session token signed in, values encoded as SigV4 encodes them", async () => {
    for (const c of CASES.filter((x) => x.method === 'GET' || x.method === 'HEAD')) {
      for (const sessionToken of [undefined, 'token/with+odd=chars ']) {
        const url = new URL(`http://localhost:9000${c.path}`);
        for (const [k, v] of Object.entries(c.query ?? {})) url.searchParams.append(k, v);
        await presignRequestV4({ method: c.method, url, accessKeyId: CREDS.accessKeyId, secret: CREDS.secretAccessKey, region: c.region ?? 'us-east-1', expiresSeconds: 900, now: WHEN, ...(sessionToken ? { sessionToken } : {}) });
        const theirs = await new S3RequestPresigner({ credentials: { ...CREDS, ...(sessionToken ? { sessionToken } : {}) }, region: c.region ?? 'us-east-1', sha256: Sha256 }).presign(
          { method: c.method, protocol: 'http:', hostname: 'localhost', port: 9000, path: c.path, query: { ...(c.query ?? {}) }, headers: {} },
          { signingDate: WHEN, expiresIn: 900 },
        );
        const ours = Object.fromEntries(url.searchParams);
        expect(ours, `${c.name}${sessionToken ? ', with a session token' : ''}`).toEqual({ ...(c.query ?? {}), ...(theirs.query as Record<string, string>) });
        // Nothing a server would read differently: no '+' standing for a space, every value percent-encoded as signed.
        expect(url.search).not.toContain('+');
        // And the server's side (parsePresigned, canonicalRequest) verifies it.
        const by = parsePresigned(url.searchParams) as SignedBy;
        const canonical = canonicalRequest({ method: c.method, rawPath: url.pathname, query: url.searchParams, headers: new Headers(), host: url.host, signedHeaders: by.signedHeaders, payloadHash: UNSIGNED_PAYLOAD, presigned: true })!;
        expect(await verifyV4(CREDS.secretAccessKey, by.credential, await stringToSignV4(by.amzDate, by.credential, canonical), by.signature)).toBe(true);
      }
    }
  });
});

describe('uriEncode', () => {
  it('encodes every byte but A-Z a-z 0-9 - _ . ~ (and / when kept) as %XX of its UTF-8, a lone surrogate as U+FFFD', () => {
    const reference = (text: string, keepSlash: boolean) => [...new TextEncoder().encode(text)]
      .map((b) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) || (keepSlash && b === 0x2f) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
    const samples = ["!#$&'()*+,;=:@[]?%/ ", 'a b+c/ü/😀 (1).txt', '%2F%25', '\ud800x/y', 'x\udfff', ''];
    for (let c = 0; c < 0x300; c++) samples.push(String.fromCharCode(c) + '/' + String.fromCharCode(c + 0xd700));
    for (const text of samples) for (const keep of [false, true]) expect(uriEncode(text, keep), JSON.stringify(text)).toBe(reference(text, keep));
  });
});
