// Authentication and access (docs/protocol.md, "Signing"). Plain data; steps are signed as root unless `auth`
// says otherwise. `{ header }` steps send Authorization verbatim; they also carry a fresh x-svc-date
// (taken when this module loads) so that only the Authorization value is wrong.
import { bucket, put, type Case, type Step, PAGE_ORIGIN } from './types.ts';

const P = 'http://photos.svc.localhost';
const PUB = 'http://pub.svc.localhost';
const SVC = 'http://svc.localhost';
const MOUNT = `${PAGE_ORIGIN}/svc`;

const denied = { status: 403, code: 'AccessDenied' } as const;
const DATE = new Date().toUTCString();

function anon(method: string, url: string, expect: Step['expect'], extra: Partial<Step> = {}): Step {
  return { method, url, auth: 'anon', expect, ...extra };
}
function verbatim(header: string, method = 'GET', url = `${P}/k`): Step {
  return { method, url, auth: { header }, headers: { 'x-svc-date': DATE }, expect: denied };
}

/** A private bucket `photos` and a public-read bucket `pub`, each holding `k` = "hello". */
const SETUP: Step[] = [bucket('photos'), bucket('pub', 'public-read'), put('photos', 'k'), put('pub', 'k')];
const VERSIONING = '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>';

export const cases: Case[] = [
  // ---------------------------------------------------------------- anonymous
  {
    name: 'anonymous writes are 403 AccessDenied and change nothing (private and public-read buckets)',
    steps: [
      ...SETUP,
      anon('PUT', `${P}/k`, denied, { body: 'evil' }),
      anon('PUT', `${PUB}/k`, denied, { body: 'evil' }),
      anon('PUT', `${PUB}/new`, denied, { body: 'evil' }),
      anon('DELETE', `${P}/k`, denied),
      anon('DELETE', `${PUB}/k`, denied),
      anon('PUT', `${PUB}/copy`, denied, { headers: { 'x-svc-copy-source': '/pub/k' } }),
      anon('PUT', `${PUB}/k?meta`, denied, { headers: { 'content-type': 'text/evil' } }),
      anon('POST', `${PUB}/?delete`, denied, { body: '<Delete><Object><Key>k</Key></Object></Delete>' }),
      anon('POST', `${PUB}/big?uploads`, denied),
      { method: 'GET', url: `${P}/k`, expect: { status: 200, body: 'hello' } },
      { method: 'GET', url: `${PUB}/k`, expect: { status: 200, body: 'hello' } },
      { method: 'GET', url: `${PUB}/new`, expect: { status: 404, code: 'NoSuchKey' } },
      { method: 'GET', url: `${PUB}/copy`, expect: { status: 404, code: 'NoSuchKey' } },
      { method: 'GET', url: `${PUB}/?uploads`, expect: { status: 200, bodyExcludes: ['<Upload>'] } },
    ],
  },
  {
    name: 'anonymous bucket operations are 403 AccessDenied, also on a public-read bucket',
    steps: [
      ...SETUP,
      anon('PUT', 'http://newone.svc.localhost/', denied),
      anon('DELETE', `${P}/`, denied),
      anon('DELETE', `${PUB}/`, denied),
      anon('GET', `${P}/`, denied),
      anon('GET', `${PUB}/`, denied), // listing is not an object read
      anon('GET', `${P}/?acl`, denied),
      anon('GET', `${PUB}/?acl`, denied),
      anon('PUT', `${PUB}/?acl`, denied, { headers: { 'x-svc-acl': 'private' } }),
      anon('PUT', `${P}/?acl`, denied, { headers: { 'x-svc-acl': 'public-read' } }),
      anon('PUT', `${PUB}/?versioning`, denied, { body: VERSIONING }),
      anon('GET', `${SVC}/`, denied),
      anon('HEAD', `${P}/`, { status: 403 }),
      { method: 'HEAD', url: 'http://newone.svc.localhost/', expect: { status: 404 } },
      { method: 'GET', url: `${PUB}/?acl`, expect: { status: 200, headers: { 'x-svc-acl': 'public-read' } } },
      { method: 'GET', url: `${P}/?acl`, expect: { status: 200, headers: { 'x-svc-acl': 'private' } } },
      { method: 'GET', url: `${P}/k`, expect: { status: 200, body: 'hello' } },
    ],
  },
  {
    name: 'anonymous GET and HEAD of an object in a public-read bucket are 200',
    steps: [
      ...SETUP,
      anon('GET', `${PUB}/k`, { status: 200, body: 'hello', headers: { etag: '"5d41402abc4b2a76b9719d911017c592"' } }),
      anon('HEAD', `${PUB}/k`, { status: 200, headers: { 'content-length': '5', etag: '"5d41402abc4b2a76b9719d911017c592"' } }),
      anon('GET', `${PUB}/k`, { status: 206, body: 'ell' }, { headers: { Range: 'bytes=1-3' } }),
      anon('GET', `${PUB}/k?download=x.txt`, { status: 200, body: 'hello' }),
      anon('GET', `${SVC}/pub/k`, { status: 200, body: 'hello' }),
      anon('GET', `${MOUNT}/pub/k`, { status: 200, body: 'hello' }),
      // public-read allows reads, so a missing key is reported as missing
      anon('GET', `${PUB}/missing`, { status: 404, code: 'NoSuchKey' }),
    ],
  },
  {
    name: 'anonymous GET and HEAD of an object in a private bucket are 403',
    steps: [
      ...SETUP,
      anon('GET', `${P}/k`, denied),
      anon('HEAD', `${P}/k`, { status: 403 }),
      anon('GET', `${SVC}/photos/k`, denied),
      anon('GET', `${MOUNT}/photos/k`, denied),
      anon('GET', `${P}/k`, { ...denied, bodyExcludes: ['hello'] }, { headers: { Range: 'bytes=0-1' } }),
      anon('GET', `${P}/missing`, denied),
    ],
  },

  // ---------------------------------------------------------------- bad Authorization headers
  {
    name: 'Authorization with a wrong scheme is 403 AccessDenied',
    steps: [...SETUP, verbatim('AWS svcadmin:xxx'), verbatim('Bearer x'), verbatim('svc svcadmin:xxx'), verbatim('AWS svcadmin:xxx', 'GET', `${PUB}/k`)],
  },
  {
    name: 'truncated Authorization is 403 AccessDenied',
    steps: [
      ...SETUP,
      verbatim('SVC svcadmin'),
      verbatim('SVC'),
      verbatim('SVC :'),
      verbatim('SVC svcadmin:'),
      verbatim('SVC :c2lnbmF0dXJl'),
      verbatim('SVC '),
      // a bad Authorization is not anonymous: it fails even where anonymous reads are allowed
      verbatim('SVC', 'GET', `${PUB}/k`),
      verbatim('SVC svcadmin', 'HEAD', `${PUB}/k`),
    ],
  },
  {
    name: 'unknown access key is 403 AccessDenied',
    steps: [
      ...SETUP,
      verbatim('SVC nobody:abc='),
      verbatim('SVC nobody:abc=', 'GET', `${PUB}/k`),
      { method: 'GET', url: `${P}/k`, auth: { accessKeyId: 'nobody', secret: 'svcadmin-secret' }, expect: denied },
    ],
  },
  {
    name: 'forged signature is 403 AccessDenied and writes nothing',
    steps: [
      ...SETUP,
      verbatim('SVC svcadmin:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='),
      { ...verbatim('SVC svcadmin:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', 'PUT', `${P}/forged`), body: 'evil' },
      { ...verbatim('SVC svcadmin:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', 'DELETE', `${P}/k`) },
      { ...verbatim('SVC svcadmin:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', 'DELETE', `${P}/`) },
      { method: 'GET', url: `${P}/forged`, expect: { status: 404, code: 'NoSuchKey' } },
      { method: 'GET', url: `${P}/k`, expect: { status: 200, body: 'hello' } },
    ],
  },
  {
    name: 'wrong secret is 403 AccessDenied whose Message shows the StringToSign',
    steps: [
      ...SETUP,
      {
        method: 'GET',
        url: `${P}/k`,
        auth: { accessKeyId: 'svcadmin', secret: 'wrong' },
        expect: { ...denied, body: /<Message>[^<]*x-svc-date:[^<]*\/photos\/k[^<]*<\/Message>/, bodyExcludes: ['svcadmin-secret'] },
      },
      {
        method: 'PUT',
        url: `${P}/new`,
        body: 'x',
        headers: { 'content-type': 'text/plain' },
        auth: { accessKeyId: 'svcadmin', secret: 'wrong' },
        expect: { ...denied, body: /<Message>[^<]*PUT[^<]*text\/plain[^<]*x-svc-date:[^<]*\/photos\/new[^<]*<\/Message>/ },
      },
      { method: 'GET', url: `${P}/new`, expect: { status: 404, code: 'NoSuchKey' } },
    ],
  },

  // ---------------------------------------------------------------- clock skew
  {
    name: 'a date more than 15 minutes off is 403 RequestTimeTooSkewed',
    steps: [
      ...SETUP,
      { method: 'GET', url: `${P}/k`, clockSkewSeconds: 16 * 60, expect: { status: 403, code: 'RequestTimeTooSkewed' } },
      { method: 'GET', url: `${P}/k`, clockSkewSeconds: -16 * 60, expect: { status: 403, code: 'RequestTimeTooSkewed' } },
      { method: 'PUT', url: `${P}/late`, body: 'x', clockSkewSeconds: -16 * 60, expect: { status: 403, code: 'RequestTimeTooSkewed' } },
      { method: 'GET', url: `${P}/late`, expect: { status: 404, code: 'NoSuchKey' } },
    ],
  },
  {
    name: 'a date less than 15 minutes off is accepted',
    steps: [
      ...SETUP,
      { method: 'GET', url: `${P}/k`, clockSkewSeconds: 14 * 60, expect: { status: 200, body: 'hello' } },
      { method: 'GET', url: `${P}/k`, clockSkewSeconds: -14 * 60, expect: { status: 200, body: 'hello' } },
      { method: 'PUT', url: `${P}/early`, body: 'x', clockSkewSeconds: 14 * 60, expect: { status: 200 } },
      { method: 'GET', url: `${P}/early`, expect: { status: 200, body: 'x' } },
    ],
  },

  // ---------------------------------------------------------------- addressing and signing
  {
    name: 'the mount URL and path style are signed like the virtual host (CanonicalizedResource /bucket/key)',
    steps: [
      { method: 'PUT', url: `${MOUNT}/photos/`, expect: { status: 200 } },
      { method: 'PUT', url: `${MOUNT}/photos/a%20b`, body: 'via mount', expect: { status: 200 } },
      { method: 'GET', url: `${MOUNT}/photos/a%20b`, expect: { status: 200, body: 'via mount' } },
      { method: 'GET', url: `${SVC}/photos/a%20b`, expect: { status: 200, body: 'via mount' } },
      { method: 'GET', url: `${P}/a%20b`, expect: { status: 200, body: 'via mount' } },
      { method: 'PUT', url: `${MOUNT}/photos/?acl`, headers: { 'x-svc-acl': 'public-read' }, expect: { status: 200 } },
      { method: 'GET', url: `${MOUNT}/photos/?acl`, expect: { status: 200, headers: { 'x-svc-acl': 'public-read' } } },
      { method: 'GET', url: `${MOUNT}/`, expect: { status: 200, bodyIncludes: ['<Name>photos</Name>'] } },
      { method: 'GET', url: `${MOUNT}/photos/a%20b`, auth: { accessKeyId: 'svcadmin', secret: 'wrong' }, expect: denied },
    ],
  },
  {
    name: 'signed requests for keys that need re-encoding',
    steps: [
      bucket('photos'),
      { method: 'PUT', url: `${P}/dir/sub/file.txt`, body: '1', expect: { status: 200 } },
      { method: 'PUT', url: `${P}/a+b`, body: '2', expect: { status: 200 } },
      { method: 'PUT', url: `${P}/%F0%9F%98%80~*'()!`, body: '3', expect: { status: 200 } },
      { method: 'GET', url: `${P}/dir/sub/file.txt`, expect: { status: 200, body: '1' } },
      { method: 'GET', url: `${P}/a%2Bb`, expect: { status: 200, body: '2' } },
      { method: 'GET', url: `${P}/a%20b`, expect: { status: 404, code: 'NoSuchKey' } },
      { method: 'GET', url: `${P}/%F0%9F%98%80~*'()!`, expect: { status: 200, body: '3' } },
      { method: 'GET', url: `${P}/`, expect: { status: 200, bodyIncludes: ['<Key>a+b</Key>', '<Key>dir/sub/file.txt</Key>', '<Key>😀~*'] } },
    ],
  },
];
