// PUT / GET / HEAD / DELETE Object, from docs/protocol.md ("Objects" and what follows it)
// (sections 1, 2, 5, 7). Plain data: every case runs on a fresh service, signed as root by default.
import { bucket, put, type Case, type Step } from './types.ts';
import {
  ALICE, COMMON, RFC1123, account, emptyListing, enc, err, etagOf, gone, has, host, md5b64, md5hex,
} from './object-helpers.ts';

const P = host('photos');
const TEN = '0123456789';

// ---------------------------------------------------------------------------------------------
// PUT Object
// ---------------------------------------------------------------------------------------------

const putCases: Case[] = [
  {
    name: 'PUT returns 200, an empty body and the quoted lower-case hex MD5 as ETag; GET returns the bytes',
    steps: [
      bucket('photos'),
      {
        method: 'PUT',
        url: `${P}/hello.txt`,
        body: 'hello',
        // our choice: the PUT response body (S3: empty).
        expect: { status: 200, body: '', headers: { ...COMMON, etag: '"5d41402abc4b2a76b9719d911017c592"' } },
      },
      {
        method: 'GET',
        url: `${P}/hello.txt`,
        expect: {
          status: 200,
          body: 'hello',
          headers: {
            ...COMMON,
            etag: '"5d41402abc4b2a76b9719d911017c592"',
            'content-length': '5',
            'last-modified': RFC1123,
            'accept-ranges': 'bytes',
          },
        },
      },
    ],
  },
  {
    name: 'PUT with an empty body stores an empty object (ETag = MD5 of nothing)',
    steps: [
      bucket('photos'),
      {
        method: 'PUT',
        url: `${P}/empty`,
        body: '',
        expect: { status: 200, headers: { etag: '"d41d8cd98f00b204e9800998ecf8427e"' } },
      },
      {
        method: 'GET',
        url: `${P}/empty`,
        expect: { status: 200, body: '', headers: { etag: '"d41d8cd98f00b204e9800998ecf8427e"', 'content-length': '0' } },
      },
      {
        method: 'HEAD',
        url: `${P}/empty`,
        expect: { status: 200, headers: { etag: '"d41d8cd98f00b204e9800998ecf8427e"', 'content-length': '0' } },
      },
    ],
  },
  {
    name: 'PUT without a body at all (no body, Content-Length 0) stores an empty object',
    steps: [
      bucket('photos'),
      { method: 'PUT', url: `${P}/nobody`, expect: { status: 200, headers: { etag: '"d41d8cd98f00b204e9800998ecf8427e"' } } },
      has('photos', 'nobody', ''),
    ],
  },
  {
    name: 'PUT with a matching base64 Content-MD5 → 200',
    steps: [
      bucket('photos'),
      put('photos', 'a.txt', 'digest me', { 'Content-MD5': md5b64('digest me') }),
      has('photos', 'a.txt', 'digest me'),
    ],
  },
  {
    name: 'PUT with a matching 32-hex Content-MD5 → 200',
    steps: [
      bucket('photos'),
      put('photos', 'a.txt', 'digest me', { 'Content-MD5': md5hex('digest me') }),
      has('photos', 'a.txt', 'digest me'),
    ],
  },
  {
    // docs/protocol.md, "ETags and Content-MD5": 32 hex characters; upper-case digits count.
    name: 'PUT with a matching upper-case 32-hex Content-MD5 → 200',
    steps: [
      bucket('photos'),
      put('photos', 'a.txt', 'digest me', { 'Content-MD5': md5hex('digest me').toUpperCase() }),
      has('photos', 'a.txt', 'digest me'),
    ],
  },
  {
    name: 'PUT with a mismatching base64 Content-MD5 → 400 BadDigest, nothing stored',
    steps: [
      bucket('photos'),
      {
        method: 'PUT',
        url: `${P}/a.txt`,
        body: 'digest me',
        headers: { 'Content-MD5': md5b64('something else') },
        expect: err(400, 'BadDigest'),
      },
      gone('photos', 'a.txt'),
    ],
  },
  {
    name: 'PUT with a mismatching 32-hex Content-MD5 → 400 BadDigest, the old object stays',
    steps: [
      bucket('photos'),
      put('photos', 'a.txt', 'original'),
      {
        method: 'PUT',
        url: `${P}/a.txt`,
        body: 'changed',
        headers: { 'Content-MD5': md5hex('something else') },
        expect: err(400, 'BadDigest'),
      },
      has('photos', 'a.txt', 'original'),
    ],
  },
  {
    name: 'PUT with a Content-MD5 in neither form → 400 InvalidDigest, nothing stored',
    steps: [
      bucket('photos'),
      {
        method: 'PUT',
        url: `${P}/a.txt`,
        body: 'digest me',
        headers: { 'Content-MD5': 'not-a-digest' },
        expect: err(400, 'InvalidDigest'),
      },
      gone('photos', 'a.txt'),
    ],
  },
  {
    name: 'PUT with a Content-MD5 that is base64 of 15 bytes (not a digest) → 400 InvalidDigest',
    steps: [
      bucket('photos'),
      {
        method: 'PUT',
        url: `${P}/a.txt`,
        body: 'digest me',
        headers: { 'Content-MD5': Buffer.alloc(15, 7).toString('base64') },
        expect: err(400, 'InvalidDigest'),
      },
      gone('photos', 'a.txt'),
    ],
  },
  {
    name: 'PUT with a 31-hex-char Content-MD5 → 400 InvalidDigest',
    steps: [
      bucket('photos'),
      {
        method: 'PUT',
        url: `${P}/a.txt`,
        body: 'digest me',
        headers: { 'Content-MD5': md5hex('digest me').slice(1) },
        expect: err(400, 'InvalidDigest'),
      },
      gone('photos', 'a.txt'),
    ],
  },
  {
    name: 'PUT without Content-Length → 411 MissingContentLength, nothing stored',
    nodeOnly: true,
    steps: [
      bucket('photos'),
      { method: 'PUT', url: `${P}/a.txt`, body: 'hello', contentLength: 'omit', expect: err(411, 'MissingContentLength') },
      gone('photos', 'a.txt'),
    ],
  },
  {
    name: 'PUT with no body and no Content-Length → 411 MissingContentLength',
    nodeOnly: true,
    steps: [
      bucket('photos'),
      { method: 'PUT', url: `${P}/a.txt`, contentLength: 'omit', expect: err(411, 'MissingContentLength') },
      gone('photos', 'a.txt'),
    ],
  },
  {
    name: 'PUT with Content-Length larger than the body → 400 IncompleteBody, nothing stored',
    nodeOnly: true,
    steps: [
      bucket('photos'),
      { method: 'PUT', url: `${P}/a.txt`, body: 'hello', contentLength: 10, expect: err(400, 'IncompleteBody') },
      gone('photos', 'a.txt'),
    ],
  },
  {
    name: 'PUT with Content-Length smaller than the body → 400 IncompleteBody, the old object stays',
    nodeOnly: true,
    steps: [
      bucket('photos'),
      put('photos', 'a.txt', 'original'),
      { method: 'PUT', url: `${P}/a.txt`, body: 'hello', contentLength: 3, expect: err(400, 'IncompleteBody') },
      has('photos', 'a.txt', 'original'),
    ],
  },
  {
    name: 'PUT to a missing bucket → 404 NoSuchBucket',
    steps: [
      bucket('photos'),
      { method: 'PUT', url: `${host('no-such-bucket')}/a.txt`, body: 'x', expect: err(404, 'NoSuchBucket') },
      { method: 'GET', url: `${host('no-such-bucket')}/a.txt`, expect: err(404, 'NoSuchBucket') },
    ],
  },
  {
    name: 'overwriting a key replaces body, ETag, user metadata and standard headers',
    steps: [
      bucket('photos'),
      put('photos', 'a.txt', 'one', {
        'Content-Type': 'text/plain',
        'Cache-Control': 'max-age=60',
        'x-svc-meta-first': '1',
      }),
      put('photos', 'a.txt', 'second body', { 'x-svc-meta-second': '2' }),
      {
        method: 'GET',
        url: `${P}/a.txt`,
        expect: {
          status: 200,
          body: 'second body',
          headers: {
            etag: etagOf('second body'),
            'content-length': '11',
            'x-svc-meta-first': null,
            'x-svc-meta-second': '2',
            'cache-control': null,
            // our choice: PUT without Content-Type stores application/octet-stream (as the
            // metadata operation's default; S3 uses a binary/octet-stream default too).
            'content-type': 'application/octet-stream',
          },
        },
      },
    ],
  },
  {
    name: 'PUT stores the standard headers and returns them on GET and HEAD',
    steps: [
      bucket('photos'),
      put('photos', 'doc.txt', 'document', {
        'Content-Type': 'text/plain; charset=utf-8',
        'Content-Encoding': 'identity',
        'Cache-Control': 'public, max-age=3600',
        Expires: 'Thu, 01 Dec 2094 16:00:00 GMT',
        'Content-Disposition': 'attachment; filename="stored.bin"',
        'Content-Language': 'de-DE',
      }),
      ...(['GET', 'HEAD'] as const).map(
        (method): Step => ({
          method,
          url: `${P}/doc.txt`,
          expect: {
            status: 200,
            headers: {
              'content-type': 'text/plain; charset=utf-8',
              'content-encoding': 'identity',
              'cache-control': 'public, max-age=3600',
              expires: 'Thu, 01 Dec 2094 16:00:00 GMT',
              'content-disposition': 'attachment; filename="stored.bin"',
              'content-language': 'de-DE',
              etag: etagOf('document'),
              'content-length': '8',
            },
          },
        }),
      ),
    ],
  },
  // --- key length (docs/protocol.md, "Object keys": UTF-8 bytes, max 1000) ---
  {
    name: 'PUT key of exactly 1000 ASCII bytes → 200',
    steps: [bucket('photos'), put('photos', 'k'.repeat(1000), 'long'), has('photos', 'k'.repeat(1000), 'long')],
  },
  {
    name: 'PUT key of 1001 ASCII bytes → 400 InvalidArgument, nothing stored',
    steps: [
      bucket('photos'),
      { method: 'PUT', url: `${P}/${'k'.repeat(1001)}`, body: 'long', expect: err(400, 'InvalidArgument') },
      emptyListing('photos'),
    ],
  },
  {
    name: 'PUT key of 500 two-byte chars (1000 bytes) → 200',
    steps: [bucket('photos'), put('photos', enc('é'.repeat(500)), 'e'), has('photos', enc('é'.repeat(500)), 'e')],
  },
  {
    name: 'PUT key of 501 chars but 1001 bytes (é × 500 + a) → 400 InvalidArgument',
    steps: [
      bucket('photos'),
      { method: 'PUT', url: `${P}/${enc('é'.repeat(500) + 'a')}`, body: 'e', expect: err(400, 'InvalidArgument') },
      emptyListing('photos'),
    ],
  },
  {
    name: 'PUT key of 333 three-byte chars + 1 (1000 bytes) → 200',
    steps: [bucket('photos'), put('photos', enc('€'.repeat(333) + 'a'), 'x'), has('photos', enc('€'.repeat(333) + 'a'), 'x')],
  },
  {
    name: 'PUT key of 335 chars but 1001 bytes (€ × 333 + ab) → 400 InvalidArgument',
    steps: [
      bucket('photos'),
      { method: 'PUT', url: `${P}/${enc('€'.repeat(333) + 'ab')}`, body: 'x', expect: err(400, 'InvalidArgument') },
      emptyListing('photos'),
    ],
  },
  {
    name: 'PUT key of 250 emoji (1000 bytes, 500 UTF-16 units) → 200',
    steps: [bucket('photos'), put('photos', enc('😀'.repeat(250)), 'x'), has('photos', enc('😀'.repeat(250)), 'x')],
  },
  // --- user metadata (docs/protocol.md, "User metadata") ---
  {
    name: 'user metadata is stored with lower-cased names and returned on GET and HEAD',
    steps: [
      bucket('photos'),
      put('photos', 'cat.jpg', 'meow', {
        'X-Svc-Meta-Camera-Model': 'Fuji X100 V',
        'x-svc-meta-COLOR': 'Red',
        'x-svc-meta-n': '42',
      }),
      ...(['GET', 'HEAD'] as const).map(
        (method): Step => ({
          method,
          url: `${P}/cat.jpg`,
          expect: {
            status: 200,
            headers: { 'x-svc-meta-camera-model': 'Fuji X100 V', 'x-svc-meta-color': 'Red', 'x-svc-meta-n': '42' },
          },
        }),
      ),
    ],
  },
  {
    name: 'user metadata names+values of exactly 2048 bytes (two pairs) → 200 and stored',
    steps: [
      bucket('photos'),
      // 'a' + 1023 + 'b' + 1023 = 2048 (names counted without the x-svc-meta- prefix).
      put('photos', 'm.txt', 'm', { 'x-svc-meta-a': 'v'.repeat(1023), 'x-svc-meta-b': 'w'.repeat(1023) }),
      {
        method: 'HEAD',
        url: `${P}/m.txt`,
        expect: { status: 200, headers: { 'x-svc-meta-a': 'v'.repeat(1023), 'x-svc-meta-b': 'w'.repeat(1023) } },
      },
    ],
  },
  {
    name: 'user metadata names+values of exactly 2048 bytes (one pair) → 200',
    steps: [
      bucket('photos'),
      put('photos', 'm.txt', 'm', { 'x-svc-meta-note': 'n'.repeat(2044) }),
      has('photos', 'm.txt', 'm', { 'x-svc-meta-note': 'n'.repeat(2044) }),
    ],
  },
  {
    name: 'user metadata of 2049 bytes → 400 InvalidArgument and the object is not created',
    steps: [
      bucket('photos'),
      {
        method: 'PUT',
        url: `${P}/m.txt`,
        body: 'm',
        headers: { 'x-svc-meta-a': 'v'.repeat(1023), 'x-svc-meta-b': 'w'.repeat(1024) },
        expect: err(400, 'InvalidArgument'),
      },
      gone('photos', 'm.txt'),
    ],
  },
  {
    name: 'user metadata of 2049 bytes on an existing key → 400 InvalidArgument, the old object stays',
    steps: [
      bucket('photos'),
      put('photos', 'm.txt', 'old', { 'x-svc-meta-v': '1' }),
      {
        method: 'PUT',
        url: `${P}/m.txt`,
        body: 'new',
        headers: { 'x-svc-meta-note': 'n'.repeat(2045) },
        expect: err(400, 'InvalidArgument'),
      },
      has('photos', 'm.txt', 'old', { 'x-svc-meta-v': '1', 'x-svc-meta-note': null }),
    ],
  },
  {
    name: 'metadata names __proto__, constructor, hasOwnProperty are stored as data and do not leak',
    steps: [
      bucket('photos'),
      put('photos', 'proto.txt', 'p', {
        'x-svc-meta-__proto__': 'polluted',
        'x-svc-meta-constructor': 'ctor',
        'x-svc-meta-hasownproperty': 'own',
        'x-svc-meta-tostring': 'str',
      }),
      put('photos', 'plain.txt', 'q'),
      has('photos', 'proto.txt', 'p', {
        'x-svc-meta-__proto__': 'polluted',
        'x-svc-meta-constructor': 'ctor',
        'x-svc-meta-hasownproperty': 'own',
        'x-svc-meta-tostring': 'str',
      }),
      has('photos', 'plain.txt', 'q', {
        'x-svc-meta-__proto__': null,
        'x-svc-meta-constructor': null,
        'x-svc-meta-hasownproperty': null,
        'x-svc-meta-tostring': null,
      }),
    ],
  },
  // --- access (docs/protocol.md, "Who may do what" and "Accounts") ---
  {
    name: 'anonymous PUT → 403 AccessDenied, also into a public-read bucket',
    steps: [
      bucket('photos'),
      bucket('public', 'public-read'),
      { method: 'PUT', url: `${P}/a.txt`, body: 'x', auth: 'anon', expect: err(403, 'AccessDenied') },
      { method: 'PUT', url: `${host('public')}/a.txt`, body: 'x', auth: 'anon', expect: err(403, 'AccessDenied') },
      gone('photos', 'a.txt'),
      gone('public', 'a.txt'),
    ],
  },
  {
    name: 'another account may not PUT, GET, HEAD or DELETE in root\'s bucket (403 AccessDenied)',
    steps: [
      bucket('photos'),
      account('alice', ALICE.secret),
      put('photos', 'a.txt', 'root data'),
      { method: 'PUT', url: `${P}/b.txt`, body: 'x', auth: ALICE, expect: err(403, 'AccessDenied') },
      { method: 'PUT', url: `${P}/a.txt`, body: 'x', auth: ALICE, expect: err(403, 'AccessDenied') },
      { method: 'GET', url: `${P}/a.txt`, auth: ALICE, expect: err(403, 'AccessDenied') },
      { method: 'HEAD', url: `${P}/a.txt`, auth: ALICE, expect: { status: 403 } },
      { method: 'DELETE', url: `${P}/a.txt`, auth: ALICE, expect: err(403, 'AccessDenied') },
      has('photos', 'a.txt', 'root data'),
      gone('photos', 'b.txt'),
    ],
  },
  {
    name: 'anonymous GET/HEAD: allowed in a public-read bucket, 403 AccessDenied in a private one; anonymous DELETE always 403',
    steps: [
      bucket('photos'),
      bucket('public', 'public-read'),
      put('photos', 'a.txt', 'private'),
      put('public', 'a.txt', 'public'),
      { method: 'GET', url: `${P}/a.txt`, auth: 'anon', expect: err(403, 'AccessDenied') },
      { method: 'HEAD', url: `${P}/a.txt`, auth: 'anon', expect: { status: 403 } },
      {
        method: 'GET',
        url: `${host('public')}/a.txt`,
        auth: 'anon',
        expect: { status: 200, body: 'public', headers: { etag: etagOf('public') } },
      },
      { method: 'HEAD', url: `${host('public')}/a.txt`, auth: 'anon', expect: { status: 200, headers: { etag: etagOf('public') } } },
      { method: 'GET', url: `${host('public')}/missing.txt`, auth: 'anon', expect: err(404, 'NoSuchKey') },
      { method: 'DELETE', url: `${host('public')}/a.txt`, auth: 'anon', expect: err(403, 'AccessDenied') },
      has('public', 'a.txt', 'public'),
    ],
  },
  {
    name: 'PUT beyond the owner\'s quota → 403 QuotaExceeded and nothing written; deleting frees the space',
    steps: [
      account('alice', ALICE.secret, 10),
      { ...bucket('alice-bkt'), auth: ALICE },
      { ...put('alice-bkt', 'a', 'aaaaaa'), auth: ALICE },
      { ...put('alice-bkt', 'b', 'bbbb'), auth: ALICE }, // exactly 10 bytes: not past the quota
      { method: 'PUT', url: `${host('alice-bkt')}/c`, body: 'c', auth: ALICE, expect: err(403, 'QuotaExceeded') },
      { method: 'GET', url: `${host('alice-bkt')}/c`, auth: ALICE, expect: err(404, 'NoSuchKey') },
      { method: 'DELETE', url: `${host('alice-bkt')}/a`, auth: ALICE, expect: { status: 200 } },
      { ...put('alice-bkt', 'c', 'c'), auth: ALICE },
      { method: 'GET', url: `${host('alice-bkt')}/c`, auth: ALICE, expect: { status: 200, body: 'c' } },
    ],
  },
  {
    // docs/protocol.md, "Accounts": the stored bytes may not pass the quota; after replacing an
    // unversioned object the stored bytes are the new size only.
    name: 'overwriting an object counts only the new size against the quota',
    steps: [
      account('alice', ALICE.secret, 10),
      { ...bucket('alice-bkt'), auth: ALICE },
      { ...put('alice-bkt', 'a', '12345678'), auth: ALICE },
      { ...put('alice-bkt', 'a', '1234567890'), auth: ALICE },
      { method: 'GET', url: `${host('alice-bkt')}/a`, auth: ALICE, expect: { status: 200, body: '1234567890' } },
      { method: 'PUT', url: `${host('alice-bkt')}/a`, body: '12345678901', auth: ALICE, expect: err(403, 'QuotaExceeded') },
      { method: 'GET', url: `${host('alice-bkt')}/a`, auth: ALICE, expect: { status: 200, body: '1234567890' } },
    ],
  },
  {
    name: 'path-style URL on the service host addresses the same object (docs/protocol.md, "Addressing")',
    steps: [
      bucket('photos'),
      put('photos', 'dir/a%20b.txt', 'path style'),
      {
        method: 'GET',
        url: 'http://svc.localhost/photos/dir/a%20b.txt',
        expect: { status: 200, body: 'path style', headers: { etag: etagOf('path style') } },
      },
      { method: 'PUT', url: 'http://svc.localhost/photos/other.txt', body: 'other', expect: { status: 200 } },
      has('photos', 'other.txt', 'other'),
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// Key encodings (docs/protocol.md, "Object keys": the path is percent-decoded exactly once as UTF-8;
// + is a literal plus)
// ---------------------------------------------------------------------------------------------

const keyCases: Case[] = [
  {
    name: 'key with a space (%20) round-trips and is listed decoded',
    steps: [
      bucket('photos'),
      put('photos', 'my%20photo.jpg', 'space'),
      has('photos', 'my%20photo.jpg', 'space'),
      { method: 'GET', url: `${P}/`, expect: { status: 200, bodyIncludes: ['<Key>my photo.jpg</Key>'] } },
    ],
  },
  {
    name: 'a literal + in a key stays a plus (not a space); %2B is the same key',
    steps: [
      bucket('photos'),
      put('photos', 'a+b.txt', 'plus'),
      has('photos', 'a+b.txt', 'plus'),
      has('photos', 'a%2Bb.txt', 'plus'),
      gone('photos', 'a%20b.txt'),
      { method: 'GET', url: `${P}/`, expect: { status: 200, bodyIncludes: ['<Key>a+b.txt</Key>'] } },
    ],
  },
  {
    name: '%25 is a literal percent sign, decoded exactly once',
    steps: [
      bucket('photos'),
      put('photos', '100%25.txt', 'percent'),
      has('photos', '100%25.txt', 'percent'),
      gone('photos', '100%2525.txt'), // that is the key "100%25.txt"
      put('photos', '100%2525.txt', 'double'),
      has('photos', '100%2525.txt', 'double'),
      has('photos', '100%25.txt', 'percent'),
    ],
  },
  {
    name: '%2F in the path is a slash: a%2Fb and a/b are the same key',
    steps: [
      bucket('photos'),
      put('photos', 'a%2Fb.txt', 'first'),
      has('photos', 'a/b.txt', 'first'),
      put('photos', 'a/b.txt', 'second'),
      has('photos', 'a%2Fb.txt', 'second'),
      { method: 'DELETE', url: `${P}/a%2fb.txt`, expect: { status: 200 } },
      gone('photos', 'a/b.txt'),
    ],
  },
  {
    name: 'lower- and upper-case percent escapes name the same key',
    steps: [
      bucket('photos'),
      put('photos', 'caf%c3%a9.txt', 'cafe'),
      has('photos', 'caf%C3%A9.txt', 'cafe'),
      has('photos', enc('café.txt'), 'cafe'),
    ],
  },
  {
    name: 'emoji and CJK keys round-trip (raw Unicode URL and percent-encoded URL are the same key)',
    steps: [
      bucket('photos'),
      put('photos', enc('📷/猫 写真.jpg'), 'emoji'),
      has('photos', enc('📷/猫 写真.jpg'), 'emoji'),
      { method: 'GET', url: `${P}/📷/猫 写真.jpg`, expect: { status: 200, body: 'emoji' } },
      { method: 'GET', url: `${P}/`, expect: { status: 200, bodyIncludes: ['<Key>📷/猫 写真.jpg</Key>'] } },
    ],
  },
  {
    name: 'non-ASCII Latin and Cyrillic keys round-trip',
    steps: [
      bucket('photos'),
      put('photos', enc('Ünïcödé/Привет мир.txt'), 'cyr'),
      has('photos', enc('Ünïcödé/Привет мир.txt'), 'cyr'),
      gone('photos', enc('Unicode/Привет мир.txt')),
    ],
  },
  {
    name: 'reserved characters in a key round-trip (? and # encoded, others literal)',
    steps: [
      bucket('photos'),
      put('photos', "a=b&c;d@e:f,g!h'i(j)k*l~m$n", 'reserved'),
      has('photos', "a=b&c;d@e:f,g!h'i(j)k*l~m$n", 'reserved'),
      put('photos', 'what%3F%23.txt', 'qhash'),
      has('photos', 'what%3F%23.txt', 'qhash'),
      gone('photos', 'what'),
    ],
  },
  {
    name: 'a key ending in a slash and a key with a double slash are distinct keys',
    steps: [
      bucket('photos'),
      put('photos', 'folder/', ''),
      put('photos', 'a//b', 'double'),
      has('photos', 'folder/', ''),
      has('photos', 'a//b', 'double'),
      gone('photos', 'folder'),
      gone('photos', 'a/b'),
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// GET ranges (docs/protocol.md, "Ranges") on the 10-byte object 0123456789
// ---------------------------------------------------------------------------------------------

function range206(range: string, a: number, b: number): Case {
  const body = TEN.slice(a, b + 1);
  return {
    name: `GET Range: ${range} → 206 bytes ${a}-${b}/10`,
    steps: [
      bucket('photos'),
      put('photos', 'ten.txt', TEN),
      {
        method: 'GET',
        url: `${P}/ten.txt`,
        headers: { Range: range },
        expect: {
          status: 206,
          body,
          headers: {
            ...COMMON,
            'content-range': `bytes ${a}-${b}/10`,
            'content-length': String(body.length),
            'accept-ranges': 'bytes',
            etag: etagOf(TEN),
            'last-modified': RFC1123,
          },
        },
      },
    ],
  };
}

function range416(range: string, object = TEN, why = ''): Case {
  return {
    name: `GET Range: ${JSON.stringify(range)} on a ${object.length}-byte object → 416 InvalidRange${why}`,
    steps: [
      bucket('photos'),
      put('photos', 'obj', object),
      {
        method: 'GET',
        url: `${P}/obj`,
        headers: { Range: range },
        expect: err(416, 'InvalidRange', { 'content-range': `bytes */${object.length}` }),
      },
      // the object is untouched and a plain GET still works
      has('photos', 'obj', object),
    ],
  };
}

const rangeCases: Case[] = [
  {
    name: 'GET without Range → 200, whole body, Accept-Ranges: bytes, Content-Length, no Content-Range',
    steps: [
      bucket('photos'),
      put('photos', 'ten.txt', TEN),
      {
        method: 'GET',
        url: `${P}/ten.txt`,
        expect: {
          status: 200,
          body: TEN,
          headers: { 'accept-ranges': 'bytes', 'content-length': '10', 'content-range': null, etag: etagOf(TEN) },
        },
      },
    ],
  },
  range206('bytes=0-4', 0, 4),
  range206('bytes=2-2', 2, 2),
  range206('bytes=0-0', 0, 0),
  range206('bytes=0-9', 0, 9),
  range206('bytes=5-', 5, 9),
  range206('bytes=0-', 0, 9),
  range206('bytes=-3', 7, 9),
  range206('bytes=-1', 9, 9),
  range206('bytes=-10', 0, 9),
  range206('bytes=-100', 0, 9), // n past the size: the whole object
  range206('bytes=0-100', 0, 9), // b past the end: clamped
  range206('bytes=3-99999999999999999999', 3, 9), // clamped, beyond 2^53
  range206('bytes=9-9', 9, 9),
  range206('bytes=9-', 9, 9),
  range206('bytes=9-10', 9, 9),
  range416('bytes=10-', TEN, ' (start at the end)'),
  range416('bytes=10-12', TEN, ' (start past the end)'),
  range416('bytes=11-11', TEN),
  range416('bytes=5-3', TEN, ' (a > b)'),
  range416('bytes=-0', TEN, ' (n = 0)'),
  range416('bytes=0-1,3-4', TEN, ' (multiple ranges)'),
  range416('bytes=0-1,', TEN, ' (trailing comma)'),
  range416('bytes=abc', TEN),
  range416('bytes=a-b', TEN),
  range416('bytes=', TEN),
  range416('bytes=-', TEN),
  range416('bytes=5', TEN),
  range416('bytes=1-2-3', TEN),
  range416('bytes=-1-2', TEN),
  range416('bytes=1.5-3', TEN),
  range416('bytes=+1-3', TEN),
  range416('items=0-1', TEN, ' (other unit)'),
  // docs/protocol.md, "Ranges": only bytes=a-b, bytes=a-, bytes=-n; anything else → 416, and
  // whitespace inside is none of those forms.
  range416('bytes= 0-1', TEN, ' (space after =)'),
  range416('bytes=0 -1', TEN, ' (space inside)'),
  range416('0-1', TEN, ' (no unit)'),
  range416('bytes=0-0', '', ' (empty object)'),
  range416('bytes=0-', '', ' (empty object)'),
  range416('bytes=-1', '', ' (empty object)'),
  range416('bytes=-5', '', ' (empty object)'),
];

// ---------------------------------------------------------------------------------------------
// If-Modified-Since (docs/protocol.md, "Conditional reads"). The exact-second cases need Last-Modified: test/unit/objects.test.ts.
// ---------------------------------------------------------------------------------------------

function imsCase(method: 'GET' | 'HEAD', ims: string, why: string): Case {
  return {
    name: `${method} If-Modified-Since ${JSON.stringify(ims)} (${why}) → 200`,
    steps: [
      bucket('photos'),
      put('photos', 'a.txt', 'fresh'),
      {
        method,
        url: `${P}/a.txt`,
        headers: { 'If-Modified-Since': ims },
        expect: {
          status: 200,
          ...(method === 'GET' ? { body: 'fresh' } : {}),
          headers: { etag: etagOf('fresh'), 'content-length': '5', 'last-modified': RFC1123 },
        },
      },
    ],
  };
}

const imsCases: Case[] = [
  imsCase('GET', 'Mon, 01 Jan 2001 00:00:00 GMT', 'long before Last-Modified'),
  imsCase('HEAD', 'Mon, 01 Jan 2001 00:00:00 GMT', 'long before Last-Modified'),
  imsCase('GET', 'Fri, 01 Jan 2100 00:00:00 GMT', 'in the future: ignored'),
  imsCase('HEAD', 'Fri, 01 Jan 2100 00:00:00 GMT', 'in the future: ignored'),
  imsCase('GET', 'not a date', 'unparsable: ignored'),
  imsCase('HEAD', 'yesterday', 'unparsable: ignored'),
];

// ---------------------------------------------------------------------------------------------
// download= and the default Content-Disposition (docs/protocol.md, "Content-Disposition and download")
// ---------------------------------------------------------------------------------------------

const name256 = 'a'.repeat(252) + '.txt';
const dispositionCases: Case[] = [
  {
    name: 'GET ?download=name.txt → Content-Disposition: attachment; filename="name.txt"',
    steps: [
      bucket('photos'),
      put('photos', 'dir/object.bin', 'payload'),
      {
        method: 'GET',
        url: `${P}/dir/object.bin?download=name.txt`,
        expect: { status: 200, body: 'payload', headers: { 'content-disposition': 'attachment; filename="name.txt"' } },
      },
    ],
  },
  {
    name: 'GET ?download= with a URL-encoded name is decoded',
    steps: [
      bucket('photos'),
      put('photos', 'x.bin', 'payload'),
      {
        method: 'GET',
        url: `${P}/x.bin?download=my%20report%20(final).txt`,
        expect: { status: 200, headers: { 'content-disposition': 'attachment; filename="my report (final).txt"' } },
      },
    ],
  },
  {
    name: 'GET ?download= with a 256-byte name → 200',
    steps: [
      bucket('photos'),
      put('photos', 'x.bin', 'payload'),
      {
        method: 'GET',
        url: `${P}/x.bin?download=${name256}`,
        expect: { status: 200, body: 'payload', headers: { 'content-disposition': `attachment; filename="${name256}"` } },
      },
    ],
  },
  {
    name: 'GET ?download= with a 257-byte name → 400 InvalidArgument',
    steps: [
      bucket('photos'),
      put('photos', 'x.bin', 'payload'),
      { method: 'GET', url: `${P}/x.bin?download=${'a' + name256}`, expect: err(400, 'InvalidArgument') },
    ],
  },
  {
    name: 'GET ?download= with 128 two-byte chars (256 bytes) → 200 with filename*',
    steps: [
      bucket('photos'),
      put('photos', 'x.bin', 'payload'),
      {
        method: 'GET',
        url: `${P}/x.bin?download=${encodeURIComponent('é'.repeat(128))}`,
        expect: {
          status: 200,
          headers: {
            'content-disposition': new RegExp(`^attachment; filename="[^"]*"; filename\\*=UTF-8''(%C3%A9){128}$`, 'i'),
          },
        },
      },
    ],
  },
  {
    name: 'GET ?download= with 129 chars but 257 bytes → 400 InvalidArgument',
    steps: [
      bucket('photos'),
      put('photos', 'x.bin', 'payload'),
      {
        method: 'GET',
        url: `${P}/x.bin?download=${encodeURIComponent('é'.repeat(128) + 'a')}`,
        expect: err(400, 'InvalidArgument'),
      },
    ],
  },
  {
    name: 'GET ?download= with a non-ASCII name adds filename*=UTF-8\'\'…',
    steps: [
      bucket('photos'),
      put('photos', 'x.bin', 'payload'),
      {
        method: 'GET',
        url: `${P}/x.bin?download=${encodeURIComponent('résumé.pdf')}`,
        expect: {
          status: 200,
          body: 'payload',
          headers: { 'content-disposition': /^attachment; filename="[^"]*"; filename\*=UTF-8''r%C3%A9sum%C3%A9\.pdf$/i },
        },
      },
    ],
  },
  {
    name: 'GET without download → Content-Disposition: inline; filename="{last key segment}"',
    steps: [
      bucket('photos'),
      put('photos', 'docs/2024/report.pdf', 'pdf'),
      {
        method: 'GET',
        url: `${P}/docs/2024/report.pdf`,
        expect: { status: 200, headers: { 'content-disposition': 'inline; filename="report.pdf"' } },
      },
    ],
  },
  {
    name: 'default Content-Disposition of a key with a space uses the decoded name',
    steps: [
      bucket('photos'),
      put('photos', 'docs/my%20file.txt', 'x'),
      {
        method: 'GET',
        url: `${P}/docs/my%20file.txt`,
        expect: { status: 200, headers: { 'content-disposition': 'inline; filename="my file.txt"' } },
      },
    ],
  },
  {
    name: 'default Content-Disposition of a non-ASCII key adds filename*',
    steps: [
      bucket('photos'),
      put('photos', enc('fotos/café.jpg'), 'x'),
      {
        method: 'GET',
        url: objUrlFor('fotos/café.jpg'),
        expect: { status: 200, headers: { 'content-disposition': /^inline; filename="[^"]*"; filename\*=UTF-8''caf%C3%A9\.jpg$/i } },
      },
    ],
  },
  {
    name: 'a stored Content-Disposition wins over the default',
    steps: [
      bucket('photos'),
      put('photos', 'docs/report.pdf', 'pdf', { 'Content-Disposition': 'attachment; filename="stored.pdf"' }),
      {
        method: 'GET',
        url: `${P}/docs/report.pdf`,
        expect: { status: 200, headers: { 'content-disposition': 'attachment; filename="stored.pdf"' } },
      },
    ],
  },
  {
    // our choice: download= (an explicit request) wins over a stored Content-Disposition,
    // as S3's response-content-disposition does.
    name: 'download= wins over a stored Content-Disposition',
    steps: [
      bucket('photos'),
      put('photos', 'docs/report.pdf', 'pdf', { 'Content-Disposition': 'inline; filename="stored.pdf"' }),
      {
        method: 'GET',
        url: `${P}/docs/report.pdf?download=mine.pdf`,
        expect: { status: 200, headers: { 'content-disposition': 'attachment; filename="mine.pdf"' } },
      },
    ],
  },
];

function objUrlFor(key: string): string {
  return `${P}/${enc(key)}`;
}

// ---------------------------------------------------------------------------------------------
// ifNotFound (docs/protocol.md, "ifNotFound")
// ---------------------------------------------------------------------------------------------

const ifNotFoundCases: Case[] = [
  {
    name: 'GET missing key ?ifNotFound=existing → 404 with the fallback\'s body and headers',
    steps: [
      bucket('photos'),
      put('photos', '404.html', '<h1>not here</h1>', { 'Content-Type': 'text/html', 'x-svc-meta-kind': 'fallback' }),
      {
        method: 'GET',
        url: `${P}/missing.html?ifNotFound=404.html`,
        expect: {
          status: 404,
          body: '<h1>not here</h1>',
          headers: {
            ...COMMON,
            'content-type': 'text/html',
            etag: etagOf('<h1>not here</h1>'),
            'x-svc-meta-kind': 'fallback',
          },
        },
      },
      gone('photos', 'missing.html'),
    ],
  },
  {
    name: 'ifNotFound names a URL-encoded key with a slash and space',
    steps: [
      bucket('photos'),
      put('photos', 'errors/404%20page.html', 'custom 404'),
      {
        method: 'GET',
        url: `${P}/nope?ifNotFound=errors%2F404%20page.html`,
        expect: { status: 404, body: 'custom 404' },
      },
    ],
  },
  {
    name: 'GET missing key ?ifNotFound=missing-too → 404 NoSuchKey',
    steps: [
      bucket('photos'),
      { method: 'GET', url: `${P}/missing.html?ifNotFound=404.html`, expect: err(404, 'NoSuchKey') },
    ],
  },
  {
    name: 'GET existing key ?ifNotFound=… → the key itself with 200',
    steps: [
      bucket('photos'),
      put('photos', '404.html', 'fallback'),
      put('photos', 'index.html', 'index'),
      {
        method: 'GET',
        url: `${P}/index.html?ifNotFound=404.html`,
        expect: { status: 200, body: 'index', headers: { etag: etagOf('index') } },
      },
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// HEAD
// ---------------------------------------------------------------------------------------------

const headCases: Case[] = [
  {
    name: 'HEAD → 200 with ETag, Content-Type, Last-Modified, Content-Length and common headers',
    steps: [
      bucket('photos'),
      put('photos', 'a.txt', 'headers only', { 'Content-Type': 'text/plain' }),
      {
        method: 'HEAD',
        url: `${P}/a.txt`,
        expect: {
          status: 200,
          headers: {
            ...COMMON,
            etag: etagOf('headers only'),
            'content-type': 'text/plain',
            'last-modified': RFC1123,
            'content-length': '12',
          },
        },
      },
    ],
  },
  {
    name: 'HEAD of a missing key → 404 (no body); of a missing bucket → 404',
    steps: [
      bucket('photos'),
      { method: 'HEAD', url: `${P}/missing.txt`, expect: { status: 404, headers: { ...COMMON } } },
      { method: 'HEAD', url: `${host('no-such-bucket')}/a.txt`, expect: { status: 404, headers: { ...COMMON } } },
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// DELETE
// ---------------------------------------------------------------------------------------------

const deleteCases: Case[] = [
  {
    name: 'DELETE → 200 with no body; GET afterwards → 404 NoSuchKey; DELETE again → 404 NoSuchKey',
    steps: [
      bucket('photos'),
      put('photos', 'a.txt', 'bye'),
      put('photos', 'b.txt', 'stays'),
      {
        method: 'DELETE',
        url: `${P}/a.txt`,
        // DELETE Object: 200, no body, no headers beyond the common ones
        expect: { status: 200, body: '', headers: { ...COMMON, etag: null } },
      },
      gone('photos', 'a.txt'),
      { method: 'HEAD', url: `${P}/a.txt`, expect: { status: 404 } },
      { method: 'DELETE', url: `${P}/a.txt`, expect: err(404, 'NoSuchKey') },
      has('photos', 'b.txt', 'stays'),
    ],
  },
  {
    name: 'DELETE of a never-existing key → 404 NoSuchKey',
    steps: [bucket('photos'), { method: 'DELETE', url: `${P}/never`, expect: err(404, 'NoSuchKey') }],
  },
  {
    name: 'DELETE in a missing bucket → 404 NoSuchBucket',
    steps: [bucket('photos'), { method: 'DELETE', url: `${host('no-such-bucket')}/a`, expect: err(404, 'NoSuchBucket') }],
  },
  {
    name: 'DELETE of an encoded key removes exactly that key',
    steps: [
      bucket('photos'),
      put('photos', 'a%20b.txt', 'space'),
      put('photos', 'a+b.txt', 'plus'),
      { method: 'DELETE', url: `${P}/a+b.txt`, expect: { status: 200 } },
      gone('photos', 'a+b.txt'),
      has('photos', 'a%20b.txt', 'space'),
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// Error documents and common headers (docs/protocol.md, "Errors" and "Every response")
// ---------------------------------------------------------------------------------------------

const errorCases: Case[] = [
  {
    name: 'GET of a missing key → 404 NoSuchKey as an application/xml Error document with common headers',
    steps: [bucket('photos'), gone('photos', 'missing.txt')],
  },
  {
    name: 'GET in a missing bucket → 404 NoSuchBucket as an XML Error document',
    steps: [bucket('photos'), { method: 'GET', url: `${host('no-such-bucket')}/a.txt`, expect: err(404, 'NoSuchBucket') }],
  },
];

export const cases: Case[] = [
  ...putCases,
  ...keyCases,
  ...rangeCases,
  ...imsCases,
  ...dispositionCases,
  ...ifNotFoundCases,
  ...headCases,
  ...deleteCases,
  ...errorCases,
];
