// PUT Object - Copy, PUT Object - Move and PUT Object Meta (docs/protocol.md, "Copy, move and
// metadata replacement"; access: "Who may do what").
import { bucket, put, type Case, type Step } from './types.ts';
import { ALICE, COMMON, RFC1123, account, enc, err, etagOf, gone, has, host } from './object-helpers.ts';

const P = host('photos');
const A = host('archive');

const STD = {
  'Content-Type': 'image/jpeg',
  'Content-Encoding': 'identity',
  'Cache-Control': 'max-age=86400',
  Expires: 'Thu, 01 Dec 2094 16:00:00 GMT',
  'Content-Disposition': 'attachment; filename="holiday.jpg"',
  'Content-Language': 'en-GB',
};
const STD_OUT = {
  'content-type': 'image/jpeg',
  'content-encoding': 'identity',
  'cache-control': 'max-age=86400',
  expires: 'Thu, 01 Dec 2094 16:00:00 GMT',
  'content-disposition': 'attachment; filename="holiday.jpg"',
  'content-language': 'en-GB',
};
const SRC_BODY = 'source bytes \u00e9';
const SRC_META = { 'x-svc-meta-color': 'red', 'x-svc-meta-camera': 'X100' };

function copyStep(destUrl: string, source: string, expect: Step['expect'] = { status: 200, body: '' }): Step {
  return { method: 'PUT', url: destUrl, headers: { 'x-svc-copy-source': source }, expect };
}
function moveStep(destUrl: string, source: string, expect: Step['expect'] = { status: 200, body: '' }): Step {
  return { method: 'PUT', url: destUrl, headers: { 'x-svc-move-source': source }, expect };
}

// ---------------------------------------------------------------------------------------------
// Copy
// ---------------------------------------------------------------------------------------------

const copyCases: Case[] = [
  {
    // Copy answers 200 with no body (docs/protocol.md, "Objects").
    name: 'copy in one bucket: 200 empty body; the copy has the bytes, Content-Type, standard headers, user metadata and MD5 ETag',
    steps: [
      bucket('photos'),
      put('photos', 'src.jpg', SRC_BODY, { ...STD, ...SRC_META }),
      copyStep(`${P}/dst.jpg`, '/photos/src.jpg', { status: 200, body: '', headers: { ...COMMON } }),
      has('photos', 'dst.jpg', SRC_BODY, { ...STD_OUT, 'x-svc-meta-color': 'red', 'x-svc-meta-camera': 'X100', 'last-modified': RFC1123 }),
      has('photos', 'src.jpg', SRC_BODY, { ...STD_OUT, 'x-svc-meta-color': 'red' }),
    ],
  },
  {
    name: 'copy across buckets',
    steps: [
      bucket('photos'),
      bucket('archive'),
      put('photos', 'src.jpg', SRC_BODY, { ...STD, ...SRC_META }),
      copyStep(`${A}/2024/src.jpg`, '/photos/src.jpg'),
      has('archive', '2024/src.jpg', SRC_BODY, { ...STD_OUT, 'x-svc-meta-color': 'red', 'x-svc-meta-camera': 'X100' }),
      has('photos', 'src.jpg', SRC_BODY),
    ],
  },
  {
    name: 'copy without a stored Content-Disposition: the copy\'s default is derived from its own key',
    steps: [
      bucket('photos'),
      put('photos', 'a/src.txt', 'text', { 'Content-Type': 'text/plain' }),
      copyStep(`${P}/b/copy.txt`, '/photos/a/src.txt'),
      has('photos', 'b/copy.txt', 'text', { 'content-type': 'text/plain', 'content-disposition': 'inline; filename="copy.txt"' }),
    ],
  },
  {
    name: 'copy source is URL-encoded (space, non-ASCII, plus as %2B)',
    steps: [
      bucket('photos'),
      put('photos', enc('my photos/café+1.jpg'), 'encoded source'),
      copyStep(`${P}/plain.jpg`, '/photos/my%20photos/caf%C3%A9%2B1.jpg'),
      has('photos', 'plain.jpg', 'encoded source'),
    ],
  },
  {
    name: 'copy to a destination key that needs encoding',
    steps: [
      bucket('photos'),
      put('photos', 'src', 'data'),
      copyStep(`${P}/${enc('ziel ü/a+b.txt')}`, '/photos/src'),
      has('photos', enc('ziel ü/a+b.txt'), 'data'),
      gone('photos', enc('ziel ü/a b.txt')),
    ],
  },
  {
    name: 'copy over an existing destination replaces body, ETag and metadata',
    steps: [
      bucket('photos'),
      put('photos', 'src', 'new data', { 'x-svc-meta-from': 'src' }),
      put('photos', 'dst', 'old data', { 'x-svc-meta-old': 'yes', 'Cache-Control': 'no-cache' }),
      copyStep(`${P}/dst`, '/photos/src'),
      has('photos', 'dst', 'new data', { 'x-svc-meta-from': 'src', 'x-svc-meta-old': null, 'cache-control': null }),
    ],
  },
  {
    // A copy is one read plus one write; copying an object onto itself therefore succeeds and
    // leaves it intact.
    name: 'copy of an object onto itself → 200, object intact',
    steps: [
      bucket('photos'),
      put('photos', 'self', 'myself', { 'x-svc-meta-k': 'v' }),
      copyStep(`${P}/self`, '/photos/self'),
      has('photos', 'self', 'myself', { 'x-svc-meta-k': 'v' }),
    ],
  },
  {
    name: 'copy of an empty object',
    steps: [
      bucket('photos'),
      put('photos', 'empty', ''),
      copyStep(`${P}/empty2`, '/photos/empty'),
      has('photos', 'empty2', '', { 'content-length': '0' }),
    ],
  },
  {
    name: 'copy of a missing source key → 404 NoSuchKey, no destination',
    steps: [
      bucket('photos'),
      copyStep(`${P}/dst`, '/photos/missing', err(404, 'NoSuchKey')),
      gone('photos', 'dst'),
    ],
  },
  {
    name: 'copy from a missing source bucket → 404 NoSuchBucket, no destination',
    steps: [
      bucket('photos'),
      copyStep(`${P}/dst`, '/no-such-bucket/src', err(404, 'NoSuchBucket')),
      gone('photos', 'dst'),
    ],
  },
  {
    name: 'copy into a missing destination bucket → 404 NoSuchBucket',
    steps: [
      bucket('photos'),
      put('photos', 'src', 'data'),
      copyStep(`${host('no-such-bucket')}/dst`, '/photos/src', err(404, 'NoSuchBucket')),
      has('photos', 'src', 'data'),
    ],
  },
  {
    name: 'anonymous copy → 403 AccessDenied (even from and to public-read buckets)',
    steps: [
      bucket('public', 'public-read'),
      put('public', 'src', 'data'),
      {
        method: 'PUT',
        url: `${host('public')}/dst`,
        headers: { 'x-svc-copy-source': '/public/src' },
        auth: 'anon',
        expect: err(403, 'AccessDenied'),
      },
      gone('public', 'dst'),
    ],
  },
  {
    name: 'copy needs read permission on the source: private source of another owner → 403, public-read → 200',
    steps: [
      bucket('photos'),
      bucket('public', 'public-read'),
      put('photos', 'secret', 'private data'),
      put('public', 'open', 'public data'),
      account('alice', ALICE.secret),
      { ...bucket('alice-bkt'), auth: ALICE },
      { ...copyStep(`${host('alice-bkt')}/stolen`, '/photos/secret', err(403, 'AccessDenied')), auth: ALICE },
      { method: 'GET', url: `${host('alice-bkt')}/stolen`, auth: ALICE, expect: err(404, 'NoSuchKey') },
      { ...copyStep(`${host('alice-bkt')}/mine`, '/public/open'), auth: ALICE },
      {
        method: 'GET',
        url: `${host('alice-bkt')}/mine`,
        auth: ALICE,
        expect: { status: 200, body: 'public data', headers: { etag: etagOf('public data') } },
      },
    ],
  },
  {
    // docs/protocol.md, "Accounts": every write that would pass the owner's quota gets 403
    // QuotaExceeded and changes nothing; a move copies no bytes, so it fits even when the account is full.
    name: 'copy past the destination owner\'s quota → 403 QuotaExceeded; a move still fits',
    steps: [
      account('alice', ALICE.secret, 10),
      { ...bucket('alice-bkt'), auth: ALICE },
      { ...put('alice-bkt', 'a', 'aaaaaa'), auth: ALICE },
      { ...copyStep(`${host('alice-bkt')}/b`, '/alice-bkt/a', err(403, 'QuotaExceeded')), auth: ALICE },
      { method: 'GET', url: `${host('alice-bkt')}/b`, auth: ALICE, expect: err(404, 'NoSuchKey') },
      { ...moveStep(`${host('alice-bkt')}/c`, '/alice-bkt/a'), auth: ALICE },
      { method: 'GET', url: `${host('alice-bkt')}/c`, auth: ALICE, expect: { status: 200, body: 'aaaaaa' } },
    ],
  },
  {
    name: 'copy needs ownership of the destination bucket → 403 AccessDenied',
    steps: [
      bucket('photos'),
      account('alice', ALICE.secret),
      { ...bucket('alice-bkt'), auth: ALICE },
      { ...put('alice-bkt', 'src', 'alice data'), auth: ALICE },
      { ...copyStep(`${P}/dst`, '/alice-bkt/src', err(403, 'AccessDenied')), auth: ALICE },
      gone('photos', 'dst'),
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// Move
// ---------------------------------------------------------------------------------------------

const moveCases: Case[] = [
  {
    name: 'move in one bucket: 200 empty body; destination has bytes, ETag and metadata; source is gone',
    steps: [
      bucket('photos'),
      put('photos', 'old/name.jpg', SRC_BODY, { ...STD, ...SRC_META }),
      moveStep(`${P}/new/name.jpg`, '/photos/old/name.jpg', { status: 200, body: '', headers: { ...COMMON } }),
      has('photos', 'new/name.jpg', SRC_BODY, { ...STD_OUT, 'x-svc-meta-color': 'red', 'x-svc-meta-camera': 'X100' }),
      gone('photos', 'old/name.jpg'),
      { method: 'HEAD', url: `${P}/old/name.jpg`, expect: { status: 404 } },
    ],
  },
  {
    name: 'move: default Content-Disposition follows the new key',
    steps: [
      bucket('photos'),
      put('photos', 'a/first.txt', 'text'),
      moveStep(`${P}/b/second.txt`, '/photos/a/first.txt'),
      has('photos', 'b/second.txt', 'text', { 'content-disposition': 'inline; filename="second.txt"' }),
    ],
  },
  {
    name: 'move with a URL-encoded source key',
    steps: [
      bucket('photos'),
      put('photos', enc('a b/ü+.txt'), 'moved'),
      moveStep(`${P}/target.txt`, '/photos/a%20b/%C3%BC%2B.txt'),
      has('photos', 'target.txt', 'moved'),
      gone('photos', enc('a b/ü+.txt')),
    ],
  },
  {
    name: 'move over an existing destination replaces it',
    steps: [
      bucket('photos'),
      put('photos', 'src', 'winner', { 'x-svc-meta-who': 'src' }),
      put('photos', 'dst', 'loser', { 'x-svc-meta-old': '1' }),
      moveStep(`${P}/dst`, '/photos/src'),
      has('photos', 'dst', 'winner', { 'x-svc-meta-who': 'src', 'x-svc-meta-old': null }),
      gone('photos', 'src'),
    ],
  },
  {
    name: 'move across buckets → 400 InvalidArgument; source stays, no destination',
    steps: [
      bucket('photos'),
      bucket('archive'),
      put('photos', 'src', 'data'),
      moveStep(`${A}/dst`, '/photos/src', err(400, 'InvalidArgument')),
      has('photos', 'src', 'data'),
      gone('archive', 'dst'),
    ],
  },
  {
    name: 'move with source equal to destination → 400 InvalidArgument and the object is still there',
    steps: [
      bucket('photos'),
      put('photos', 'same.txt', 'keep me', { 'x-svc-meta-k': 'v' }),
      moveStep(`${P}/same.txt`, '/photos/same.txt', err(400, 'InvalidArgument')),
      has('photos', 'same.txt', 'keep me', { 'x-svc-meta-k': 'v' }),
    ],
  },
  {
    name: 'move with source equal to destination written in another encoding → 400 InvalidArgument, object kept',
    steps: [
      bucket('photos'),
      put('photos', 'a%20b', 'keep me'),
      moveStep(`${P}/a%20b`, '/photos/a%20b', err(400, 'InvalidArgument')),
      has('photos', 'a%20b', 'keep me'),
    ],
  },
  {
    // A missing source is 404 NoSuchKey/NoSuchBucket (docs/protocol.md, "Objects"; a move is a copy plus a delete).
    name: 'move of a missing source key → 404 NoSuchKey, no destination',
    steps: [
      bucket('photos'),
      moveStep(`${P}/dst`, '/photos/missing', err(404, 'NoSuchKey')),
      gone('photos', 'dst'),
    ],
  },
  {
    name: 'move into a missing bucket → 404 NoSuchBucket',
    steps: [
      bucket('photos'),
      moveStep(`${host('no-such-bucket')}/dst`, '/no-such-bucket/src', err(404, 'NoSuchBucket')),
    ],
  },
  {
    name: 'anonymous move → 403 AccessDenied, source stays',
    steps: [
      bucket('public', 'public-read'),
      put('public', 'src', 'data'),
      { ...moveStep(`${host('public')}/dst`, '/public/src', err(403, 'AccessDenied')), auth: 'anon' },
      has('public', 'src', 'data'),
      gone('public', 'dst'),
    ],
  },
  {
    name: 'another account cannot move inside root\'s bucket → 403 AccessDenied, source stays',
    steps: [
      bucket('photos'),
      account('alice', ALICE.secret),
      put('photos', 'src', 'data'),
      { ...moveStep(`${P}/dst`, '/photos/src', err(403, 'AccessDenied')), auth: ALICE },
      has('photos', 'src', 'data'),
      gone('photos', 'dst'),
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// PUT Object Meta
// ---------------------------------------------------------------------------------------------

const metaPut = (key: string, headers: Record<string, string>, expect: Step['expect'] = { status: 200 }): Step => ({
  method: 'PUT',
  url: `${P}/${key}?meta`,
  headers,
  expect,
});

const metaCases: Case[] = [
  {
    name: '?meta replaces Content-Type, standard headers and all user metadata; bytes and ETag stay',
    steps: [
      bucket('photos'),
      put('photos', 'a.txt', 'data stays', {
        'Content-Type': 'text/plain',
        'Cache-Control': 'no-cache',
        'Content-Language': 'de',
        'x-svc-meta-a': '1',
        'x-svc-meta-b': '2',
      }),
      metaPut('a.txt', { ...STD, 'x-svc-meta-c': '3' }),
      has('photos', 'a.txt', 'data stays', {
        ...STD_OUT,
        'x-svc-meta-a': null,
        'x-svc-meta-b': null,
        'x-svc-meta-c': '3',
        'content-length': '10',
      }),
      {
        method: 'HEAD',
        url: `${P}/a.txt`,
        expect: { status: 200, headers: { ...STD_OUT, etag: etagOf('data stays'), 'x-svc-meta-c': '3', 'content-length': '10' } },
      },
    ],
  },
  {
    name: '?meta clears everything not given; Content-Type becomes application/octet-stream',
    steps: [
      bucket('photos'),
      put('photos', 'docs/a.txt', 'data', { ...STD, 'x-svc-meta-a': '1' }),
      metaPut('docs/a.txt', {}),
      has('photos', 'docs/a.txt', 'data', {
        'content-type': 'application/octet-stream',
        'content-encoding': null,
        'cache-control': null,
        expires: null,
        'content-language': null,
        'x-svc-meta-a': null,
        // cleared → the default derived from the name is used on read
        'content-disposition': 'inline; filename="a.txt"',
      }),
    ],
  },
  {
    name: '?meta with a Content-Type that is not type/subtype → application/octet-stream',
    steps: [
      bucket('photos'),
      put('photos', 'a', 'data', { 'Content-Type': 'text/plain' }),
      metaPut('a', { 'Content-Type': 'notatype' }),
      has('photos', 'a', 'data', { 'content-type': 'application/octet-stream' }),
      metaPut('a', { 'Content-Type': 'image/png' }),
      has('photos', 'a', 'data', { 'content-type': 'image/png' }),
      metaPut('a', { 'Content-Type': 'text/' }),
      has('photos', 'a', 'data', { 'content-type': 'application/octet-stream' }),
    ],
  },
  {
    name: '?meta keeps a valid Content-Type with parameters as given',
    steps: [
      bucket('photos'),
      put('photos', 'a', 'data'),
      metaPut('a', { 'Content-Type': 'text/html; charset=utf-8' }),
      has('photos', 'a', 'data', { 'content-type': 'text/html; charset=utf-8' }),
    ],
  },
  {
    name: '?meta on a key that needs encoding',
    steps: [
      bucket('photos'),
      put('photos', enc('ä b/c+d.txt'), 'enc'),
      metaPut(enc('ä b/c+d.txt'), { 'Content-Type': 'text/plain', 'x-svc-meta-x': 'y' }),
      has('photos', enc('ä b/c+d.txt'), 'enc', { 'content-type': 'text/plain', 'x-svc-meta-x': 'y' }),
    ],
  },
  {
    name: '?meta on a missing object → 404 with no body and no error code; nothing created',
    steps: [
      bucket('photos'),
      metaPut('missing', { 'Content-Type': 'text/plain' }, { status: 404, body: '', headers: { ...COMMON } }),
      gone('photos', 'missing'),
    ],
  },
  {
    // NoSuchBucket is 404 for every operation (docs/protocol.md, "Errors").
    name: '?meta in a missing bucket → 404 NoSuchBucket',
    steps: [
      bucket('photos'),
      { method: 'PUT', url: `${host('no-such-bucket')}/a?meta`, expect: err(404, 'NoSuchBucket') },
    ],
  },
  {
    name: '?meta anonymous → 403 AccessDenied, metadata unchanged',
    steps: [
      bucket('public', 'public-read'),
      put('public', 'a', 'data', { 'Content-Type': 'text/plain' }),
      {
        method: 'PUT',
        url: `${host('public')}/a?meta`,
        headers: { 'Content-Type': 'image/png' },
        auth: 'anon',
        expect: err(403, 'AccessDenied'),
      },
      has('public', 'a', 'data', { 'content-type': 'text/plain' }),
    ],
  },
  {
    name: '?meta by another account → 403 AccessDenied, metadata unchanged',
    steps: [
      bucket('photos'),
      account('alice', ALICE.secret),
      put('photos', 'a', 'data', { 'x-svc-meta-owner': 'root' }),
      { ...metaPut('a', { 'x-svc-meta-owner': 'alice' }, err(403, 'AccessDenied')), auth: ALICE },
      has('photos', 'a', 'data', { 'x-svc-meta-owner': 'root' }),
    ],
  },
  {
    // docs/protocol.md, "User metadata": over 2048 bytes → 400 InvalidArgument (not limited to PUT Object).
    name: '?meta with user metadata over 2048 bytes → 400 InvalidArgument, metadata unchanged',
    steps: [
      bucket('photos'),
      put('photos', 'a', 'data', { 'x-svc-meta-v': 'old' }),
      metaPut('a', { 'x-svc-meta-note': 'n'.repeat(2045) }, err(400, 'InvalidArgument')),
      has('photos', 'a', 'data', { 'x-svc-meta-v': 'old', 'x-svc-meta-note': null }),
    ],
  },
  {
    name: '?meta with user metadata of exactly 2048 bytes → 200',
    steps: [
      bucket('photos'),
      put('photos', 'a', 'data'),
      metaPut('a', { 'x-svc-meta-note': 'n'.repeat(2044) }),
      has('photos', 'a', 'data', { 'x-svc-meta-note': 'n'.repeat(2044) }),
    ],
  },
];

export const cases: Case[] = [...copyCases, ...moveCases, ...metaCases];
