// Multipart upload (docs/protocol.md: "Multipart uploads", "Multipart rules", "Errors", "Limits",
// "Every response"). Plain data: a case cannot carry a value from one step to the
// next, so everything that needs the UploadId returned by Initiate is in test/unit/multipart.test.ts.
// What is here: Initiate, the errors that need no valid UploadId, and List Multipart Uploads.
import { bucket, put, type Case, type Step } from './types.ts';
import { ALICE, COMMON, account, err, host } from './object-helpers.ts';

const P = host('photos');
const PUB = host('pub');
const NOB = host('no-such-bucket');

const XML_DECL = '<\\?xml version="1\\.0" encoding="UTF-8"\\?>';
const ISO_MS = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z';
/** docs/protocol.md, "Multipart rules": URL-safe and never purely digits. */
const UPLOAD_ID = '(?!\\d+<)[A-Za-z0-9._~-]+';
/** An UploadId nobody was given (well formed, never issued). */
const BOGUS = 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz';
const COMPLETE_BODY =
  '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"5d41402abc4b2a76b9719d911017c592"</ETag></Part></CompleteMultipartUpload>';

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** XML fragments in this order, optional whitespace between tags. */
const seq = (...parts: string[]): RegExp => new RegExp(parts.join('\\s*'));
const el = (name: string, value: string): string =>
  value === '' ? `(?:<${name}></${name}>|<${name}/>)` : `<${name}>${esc(value)}</${name}>`;
/** `<Key>` elements appear in exactly this order (other keys may sit between them). */
const keysInOrder = (...keys: string[]): RegExp => new RegExp(keys.map((k) => `<Key>${esc(k)}</Key>`).join('[\\s\\S]*'));
/** The body holds exactly `n` Upload elements. */
const uploadCount = (n: number): RegExp =>
  new RegExp(`^(?:(?!<Upload>)[\\s\\S])*${'<Upload>(?:(?!<Upload>)[\\s\\S])*'.repeat(n)}$`);

function initiate(key: string, headers: Record<string, string> = {}, b = P): Step {
  return {
    method: 'POST',
    url: `${b}/${key}?uploads`,
    headers,
    expect: { status: 200, bodyIncludes: ['<UploadId>'] },
  };
}
function listUploads(query: string, expect: Step['expect'], b = P): Step {
  return { method: 'GET', url: `${b}/?uploads${query}`, expect };
}
function anon(method: string, url: string, extra: Partial<Step> = {}): Step {
  return { method, url, auth: 'anon', expect: err(403, 'AccessDenied'), ...extra };
}

// ---------------------------------------------------------------------------------------------
// Initiate Multipart Upload
// ---------------------------------------------------------------------------------------------

const initiateCases: Case[] = [
  {
    name: 'Initiate → 200 InitiateMultipartUploadResult{Bucket,Key,UploadId} as application/xml with the common headers',
    steps: [
      bucket('photos'),
      {
        method: 'POST',
        url: `${P}/dir/big.bin?uploads`,
        expect: {
          status: 200,
          body: seq(
            `^${XML_DECL}`,
            '<InitiateMultipartUploadResult>',
            el('Bucket', 'photos'),
            el('Key', 'dir/big.bin'),
            `<UploadId>${UPLOAD_ID}</UploadId>`,
            '</InitiateMultipartUploadResult>$',
          ),
          headers: { ...COMMON, 'content-type': /^application\/xml/ },
        },
      },
    ],
  },
  {
    name: 'Initiate does not create the object: GET NoSuchKey, HEAD 404, bucket listing empty; List Uploads shows it',
    steps: [
      bucket('photos'),
      initiate('big', { 'content-type': 'image/png', 'x-svc-meta-owner': 'me' }),
      { method: 'GET', url: `${P}/big`, expect: err(404, 'NoSuchKey') },
      { method: 'HEAD', url: `${P}/big`, expect: { status: 404, body: '' } },
      { method: 'GET', url: `${P}/`, expect: { status: 200, bodyExcludes: ['<Contents>'] } },
      listUploads('', {
        status: 200,
        body: seq('<Upload>', el('Key', 'big'), `<UploadId>${UPLOAD_ID}</UploadId>`),
      }),
    ],
  },
  {
    name: 'Initiate of an existing key leaves the old object readable with its old metadata',
    steps: [
      bucket('photos'),
      put('photos', 'k', 'old', { 'content-type': 'text/plain', 'x-svc-meta-v': 'old' }),
      initiate('k', { 'content-type': 'image/png', 'x-svc-meta-v': 'new' }),
      {
        method: 'GET',
        url: `${P}/k`,
        expect: { status: 200, body: 'old', headers: { 'content-type': 'text/plain', 'x-svc-meta-v': 'old' } },
      },
    ],
  },
  {
    name: 'Initiating the same key twice gives two different UploadIds, both listed (state table: independent uploads)',
    steps: [
      bucket('photos'),
      initiate('big'),
      initiate('big'),
      listUploads('', {
        status: 200,
        body: new RegExp(
          `<Upload>\\s*<Key>big</Key>\\s*<UploadId>(${UPLOAD_ID})</UploadId>[\\s\\S]*` +
            `<Upload>\\s*<Key>big</Key>\\s*<UploadId>(?!\\1<)${UPLOAD_ID}</UploadId>`,
        ),
      }),
      listUploads('', { status: 200, body: uploadCount(2) }),
    ],
  },
  {
    name: 'Initiate in a missing bucket → 404 NoSuchBucket',
    steps: [
      bucket('photos'),
      { method: 'POST', url: `${NOB}/big?uploads`, expect: err(404, 'NoSuchBucket') },
    ],
  },
  {
    name: 'Initiate anonymously (also on a public-read bucket) → 403 AccessDenied; nothing listed',
    steps: [
      bucket('photos'),
      bucket('pub', 'public-read'),
      anon('POST', `${P}/big?uploads`),
      anon('POST', `${PUB}/big?uploads`),
      listUploads('', { status: 200, body: uploadCount(0) }),
      listUploads('', { status: 200, body: uploadCount(0) }, PUB),
    ],
  },
  {
    name: 'Initiate by an account that does not own the bucket → 403 AccessDenied; nothing listed',
    steps: [
      bucket('photos'),
      account('alice', ALICE.secret),
      { method: 'POST', url: `${P}/big?uploads`, auth: ALICE, expect: err(403, 'AccessDenied') },
      listUploads('', { status: 200, body: uploadCount(0) }),
    ],
  },
  {
    name: 'Initiate with a key of 1000 UTF-8 bytes → 200; 1001 bytes → 400 KeyTooLong (ASCII and multi-byte)',
    steps: [
      bucket('photos'),
      initiate('a'.repeat(1000)),
      initiate(encodeURIComponent('é'.repeat(500))), // 500 characters, 1000 bytes
      { method: 'POST', url: `${P}/${'a'.repeat(1001)}?uploads`, expect: err(400, 'KeyTooLong') },
      // 501 characters but 1001 bytes: the limit is in bytes (docs/protocol.md, "Object keys")
      { method: 'POST', url: `${P}/${encodeURIComponent('é'.repeat(500) + 'a')}?uploads`, expect: err(400, 'KeyTooLong') },
      listUploads('', { status: 200, body: uploadCount(2) }),
    ],
  },
  {
    name: 'Initiate without Content-Length → 411 MissingContentLength; nothing listed',
    nodeOnly: true,
    steps: [
      bucket('photos'),
      { method: 'POST', url: `${P}/big?uploads`, contentLength: 'omit', expect: err(411, 'MissingContentLength') },
      listUploads('', { status: 200, body: uploadCount(0) }),
    ],
  },
  {
    name: 'Initiate with user metadata over 2048 bytes → 400 InvalidArgument (docs/protocol.md, "User metadata"); nothing listed',
    steps: [
      bucket('photos'),
      { method: 'POST', url: `${P}/big?uploads`, headers: { 'x-svc-meta-big': 'v'.repeat(2100) }, expect: err(400, 'InvalidArgument') },
      listUploads('', { status: 200, body: uploadCount(0) }),
    ],
  },
  {
    name: 'a bucket holding an in-progress upload cannot be deleted (409 BucketNotEmpty, docs/protocol.md, "Buckets")',
    steps: [
      bucket('photos'),
      initiate('big'),
      { method: 'DELETE', url: `${P}/`, expect: err(409, 'BucketNotEmpty') },
      { method: 'HEAD', url: `${P}/`, expect: { status: 200 } },
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// Errors of Upload Part, Complete, Abort and List Parts that need no issued UploadId
// ---------------------------------------------------------------------------------------------

const partUrl = (b: string, id: string, n: number | string = 1) => `${b}/big?partNumber=${n}&uploadId=${id}`;

const unknownUploadCases: Case[] = [
  {
    name: 'an UploadId that was never issued → 404 NoSuchUpload on Upload Part, Complete, Abort and List Parts',
    steps: [
      bucket('photos'),
      { method: 'PUT', url: partUrl(P, BOGUS), body: 'data', expect: err(404, 'NoSuchUpload') },
      { method: 'PUT', url: partUrl(P, '12345'), body: 'data', expect: err(404, 'NoSuchUpload') },
      { method: 'POST', url: `${P}/big?uploadId=${BOGUS}`, body: COMPLETE_BODY, expect: err(404, 'NoSuchUpload') },
      { method: 'DELETE', url: `${P}/big?uploadId=${BOGUS}`, expect: err(404, 'NoSuchUpload') },
      { method: 'GET', url: `${P}/big?uploadId=${BOGUS}`, expect: err(404, 'NoSuchUpload') },
      // nothing was created by any of them
      { method: 'GET', url: `${P}/big`, expect: err(404, 'NoSuchKey') },
      listUploads('', { status: 200, body: uploadCount(0) }),
    ],
  },
  {
    name: 'Complete with an unknown UploadId → NoSuchUpload before the body is looked at (check order of docs/protocol.md, "Multipart rules")',
    steps: [
      bucket('photos'),
      initiate('big'),
      // docs/protocol.md, "Multipart rules": NoSuchUpload/InvalidArgument are checked before MalformedXML
      { method: 'POST', url: `${P}/big?uploadId=${BOGUS}`, body: 'not xml at all', expect: err(404, 'NoSuchUpload') },
      { method: 'POST', url: `${P}/big?uploadId=${BOGUS}`, body: '', expect: err(404, 'NoSuchUpload') },
    ],
  },
  {
    name: 'Upload Part, Complete, Abort, List Parts in a missing bucket → 404 NoSuchBucket',
    steps: [
      bucket('photos'),
      { method: 'PUT', url: partUrl(NOB, BOGUS), body: 'data', expect: err(404, 'NoSuchBucket') },
      { method: 'POST', url: `${NOB}/big?uploadId=${BOGUS}`, body: COMPLETE_BODY, expect: err(404, 'NoSuchBucket') },
      { method: 'DELETE', url: `${NOB}/big?uploadId=${BOGUS}`, expect: err(404, 'NoSuchBucket') },
      { method: 'GET', url: `${NOB}/big?uploadId=${BOGUS}`, expect: err(404, 'NoSuchBucket') },
      { method: 'GET', url: `${NOB}/?uploads`, expect: err(404, 'NoSuchBucket') },
    ],
  },
  {
    name: 'multipart operations by anonymous callers → 403 AccessDenied, also on a public-read bucket',
    steps: [
      bucket('photos'),
      bucket('pub', 'public-read'),
      initiate('big'),
      initiate('big', {}, PUB),
      anon('PUT', partUrl(P, BOGUS), { body: 'data' }),
      anon('PUT', partUrl(PUB, BOGUS), { body: 'data' }),
      anon('POST', `${P}/big?uploadId=${BOGUS}`, { body: COMPLETE_BODY }),
      anon('POST', `${PUB}/big?uploadId=${BOGUS}`, { body: COMPLETE_BODY }),
      anon('DELETE', `${P}/big?uploadId=${BOGUS}`),
      anon('DELETE', `${PUB}/big?uploadId=${BOGUS}`),
      anon('GET', `${P}/big?uploadId=${BOGUS}`),
      // docs/protocol.md, "Who may do what": only GET/HEAD *of objects* are public; listing parts or uploads is not an object read
      anon('GET', `${PUB}/big?uploadId=${BOGUS}`),
      anon('GET', `${P}/?uploads`),
      anon('GET', `${PUB}/?uploads`),
      listUploads('', { status: 200, body: uploadCount(1) }),
      listUploads('', { status: 200, body: uploadCount(1) }, PUB),
    ],
  },
  {
    name: 'multipart operations by an account that does not own the bucket → 403 AccessDenied',
    steps: [
      bucket('photos'),
      account('alice', ALICE.secret),
      initiate('big'),
      { method: 'PUT', url: partUrl(P, BOGUS), body: 'data', auth: ALICE, expect: err(403, 'AccessDenied') },
      { method: 'POST', url: `${P}/big?uploadId=${BOGUS}`, body: COMPLETE_BODY, auth: ALICE, expect: err(403, 'AccessDenied') },
      { method: 'DELETE', url: `${P}/big?uploadId=${BOGUS}`, auth: ALICE, expect: err(403, 'AccessDenied') },
      { method: 'GET', url: `${P}/big?uploadId=${BOGUS}`, auth: ALICE, expect: err(403, 'AccessDenied') },
      { method: 'GET', url: `${P}/?uploads`, auth: ALICE, expect: err(403, 'AccessDenied') },
      listUploads('', { status: 200, body: uploadCount(1) }),
    ],
  },
  {
    name: 'Abort of an unknown UploadId → 404 NoSuchUpload with an XML error body',
    steps: [
      bucket('photos'),
      { method: 'DELETE', url: `${P}/big?uploadId=${BOGUS}`, expect: err(404, 'NoSuchUpload') },
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// List Multipart Uploads
// ---------------------------------------------------------------------------------------------

const listCases: Case[] = [
  {
    name: 'List Uploads of a bucket without uploads → 200 ListMultipartUploadsResult, not truncated, no Upload',
    steps: [
      bucket('photos'),
      put('photos', 'an-object'),
      listUploads('', {
        status: 200,
        body: new RegExp(`^${XML_DECL}\\s*<ListMultipartUploadsResult>[\\s\\S]*</ListMultipartUploadsResult>$`),
        bodyIncludes: ['<Bucket>photos</Bucket>', '<IsTruncated>false</IsTruncated>'],
        bodyExcludes: ['<Upload>', 'an-object'],
        headers: { ...COMMON, 'content-type': /^application\/xml/ },
      }),
    ],
  },
  {
    name: 'List Uploads: Upload{Key,UploadId,Owner{ID,DisplayName},StorageClass,Initiated}, ordered by key in dictionary order',
    steps: [
      bucket('photos'),
      initiate('c'),
      initiate('a/x'),
      initiate('b'),
      initiate('a'),
      initiate('B'),
      initiate(encodeURIComponent('é')),
      listUploads('', {
        status: 200,
        body: keysInOrder('B', 'a', 'a/x', 'b', 'c', 'é'),
        bodyIncludes: ['<Bucket>photos</Bucket>', '<IsTruncated>false</IsTruncated>'],
      }),
      listUploads('', {
        status: 200,
        body: seq(
          '<Upload>',
          el('Key', 'B'),
          `<UploadId>${UPLOAD_ID}</UploadId>`,
          '<Owner>',
          el('ID', 'svcadmin'),
          el('DisplayName', 'svcadmin'),
          '</Owner>',
          el('StorageClass', 'STANDARD'),
          `<Initiated>${ISO_MS}</Initiated>`,
          '</Upload>',
        ),
      }),
      listUploads('', { status: 200, body: uploadCount(6) }),
    ],
  },
  {
    name: 'List Uploads shows only the uploads of its own bucket',
    steps: [
      bucket('photos'),
      bucket('other'),
      initiate('mine'),
      initiate('theirs', {}, host('other')),
      listUploads('', { status: 200, bodyIncludes: ['<Key>mine</Key>'], bodyExcludes: ['<Key>theirs</Key>'] }),
      listUploads('', { status: 200, bodyIncludes: ['<Key>theirs</Key>'], bodyExcludes: ['<Key>mine</Key>'] }, host('other')),
    ],
  },
  {
    name: 'List Uploads with prefix lists only keys that start with it, and echoes Prefix',
    steps: [
      bucket('photos'),
      initiate('photos/1'),
      initiate('photos/2'),
      initiate('photosX'),
      initiate('videos/1'),
      listUploads('&prefix=photos/', {
        status: 200,
        body: keysInOrder('photos/1', 'photos/2'),
        bodyIncludes: ['<Prefix>photos/</Prefix>', '<IsTruncated>false</IsTruncated>'],
        bodyExcludes: ['<Key>photosX</Key>', '<Key>videos/1</Key>'],
      }),
      listUploads('&prefix=nothing', { status: 200, body: uploadCount(0), bodyIncludes: ['<Prefix>nothing</Prefix>'] }),
    ],
  },
  {
    name: 'List Uploads with key-marker lists only keys greater than it (the marker key itself is not listed) and echoes KeyMarker',
    steps: [
      bucket('photos'),
      initiate('a'),
      initiate('b'),
      initiate('b'),
      initiate('ba'),
      initiate('c'),
      listUploads('&key-marker=b', {
        status: 200,
        body: keysInOrder('ba', 'c'),
        bodyIncludes: ['<KeyMarker>b</KeyMarker>'],
        bodyExcludes: ['<Key>a</Key>', '<Key>b</Key>'],
      }),
      listUploads('&key-marker=b', { status: 200, body: uploadCount(2) }),
      listUploads('&key-marker=c', { status: 200, body: uploadCount(0), bodyIncludes: ['<IsTruncated>false</IsTruncated>'] }),
      listUploads('&key-marker=0', { status: 200, body: uploadCount(5) }),
    ],
  },
  {
    name: 'List Uploads with max-uploads=2 of 3: two entries, IsTruncated, NextKeyMarker = last listed key',
    steps: [
      bucket('photos'),
      initiate('a'),
      initiate('b'),
      initiate('c'),
      listUploads('&max-uploads=2', {
        status: 200,
        body: keysInOrder('a', 'b'),
        bodyIncludes: ['<IsTruncated>true</IsTruncated>', '<NextKeyMarker>b</NextKeyMarker>'],
        bodyExcludes: ['<Key>c</Key>'],
      }),
      listUploads('&max-uploads=2&key-marker=b', {
        status: 200,
        body: uploadCount(1),
        bodyIncludes: ['<Key>c</Key>', '<IsTruncated>false</IsTruncated>'],
      }),
      listUploads('&max-uploads=3', { status: 200, body: uploadCount(3), bodyIncludes: ['<IsTruncated>false</IsTruncated>'] }),
      listUploads('&max-uploads=1000', { status: 200, body: uploadCount(3), bodyIncludes: ['<IsTruncated>false</IsTruncated>'] }),
    ],
  },
  {
    name: 'List Uploads with max-uploads=0 lists no Upload (truncated when uploads exist)',
    steps: [
      bucket('photos'),
      listUploads('&max-uploads=0', { status: 200, body: uploadCount(0), bodyIncludes: ['<IsTruncated>false</IsTruncated>'] }),
      initiate('a'),
      // IsTruncated is true when max-uploads cut the list
      listUploads('&max-uploads=0', { status: 200, body: uploadCount(0), bodyIncludes: ['<IsTruncated>true</IsTruncated>'] }),
    ],
  },
  {
    name: 'List Uploads with max-uploads outside 0–1000 or not an integer → 400 InvalidArgument',
    steps: [
      bucket('photos'),
      initiate('a'),
      // our choice: the error code of a bad max-uploads (the range is 0–1000; S3 and our max-parts
      // and max-keys rules answer 400 InvalidArgument; docs/protocol.md, "Limits").
      listUploads('&max-uploads=1001', err(400, 'InvalidArgument')),
      listUploads('&max-uploads=-1', err(400, 'InvalidArgument')),
      listUploads('&max-uploads=abc', err(400, 'InvalidArgument')),
      listUploads('&max-uploads=1.5', err(400, 'InvalidArgument')),
    ],
  },
  {
    name: 'List Uploads of several uploads of one key pages with key-marker + upload-id-marker (docs/protocol.md, "Multipart rules")',
    steps: [
      bucket('photos'),
      initiate('k'),
      initiate('k'),
      initiate('k'),
      initiate('l'),
      // one entry per page: NextKeyMarker is the last entry's key, NextUploadIdMarker its UploadId
      listUploads('&max-uploads=1', {
        status: 200,
        body: seq('<Upload>', el('Key', 'k'), `<UploadId>${UPLOAD_ID}</UploadId>`),
        bodyIncludes: ['<NextKeyMarker>k</NextKeyMarker>', '<NextUploadIdMarker>', '<IsTruncated>true</IsTruncated>'],
      }),
      listUploads('&max-uploads=1', { status: 200, body: uploadCount(1) }),
      listUploads('&max-uploads=3', {
        status: 200,
        body: new RegExp(`<NextUploadIdMarker>(${UPLOAD_ID})</NextUploadIdMarker>[\\s\\S]*<Upload>\\s*<Key>k</Key>\\s*<UploadId>[^<]+</UploadId>[\\s\\S]*<Upload>\\s*<Key>k</Key>\\s*<UploadId>[^<]+</UploadId>[\\s\\S]*<Upload>\\s*<Key>k</Key>\\s*<UploadId>\\1</UploadId>`),
        bodyIncludes: ['<NextKeyMarker>k</NextKeyMarker>', '<IsTruncated>true</IsTruncated>'],
        bodyExcludes: ['<Key>l</Key>'],
      }),
    ],
  },
];

export const cases: Case[] = [...initiateCases, ...unknownUploadCases, ...listCases];
