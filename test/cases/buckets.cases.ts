// Bucket operations (docs/protocol.md, "Buckets"), bucket names and addressing ("Addressing"),
// and what every response carries ("Every response"). Plain data: every case runs on a fresh service whose only account is
// root; steps are signed as root unless `auth` says otherwise.
import { bucket, put, type Case, type Step, PAGE_ORIGIN } from './types.ts';

const SVC = 'http://svc.localhost';
const P = 'http://photos.svc.localhost';
const MOUNT = `${PAGE_ORIGIN}/svc`;

const MD5_HELLO = '5d41402abc4b2a76b9719d911017c592'; // md5("hello"), the default body of put()
const ISO_MS = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z'; // docs/protocol.md, "Every response": ISO 8601 UTC with ms
const RFC1123 = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const XML_DECL = '<\\?xml version="1\\.0" encoding="UTF-8"\\?>';

function esc(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
/** XML fragments in this order, optional whitespace between tags (not required by the protocol). */
function seq(...parts: string[]): RegExp {
  return new RegExp(parts.join('\\s*'));
}
function el(name: string, value: string): string {
  return value === '' ? `(?:<${name}></${name}>|<${name}/>)` : `<${name}>${esc(value)}</${name}>`;
}
/** ETag element: quoted MD5, the quotes possibly written as &quot; (docs/protocol.md, "ETags and Content-MD5": written quoted). */
function etagEl(hex: string): string {
  return `<ETag>(?:"|&quot;)${hex}(?:"|&quot;)</ETag>`;
}
function contents(key: string, size = 5, hex = MD5_HELLO): RegExp {
  return seq(
    '<Contents>',
    el('Key', key),
    `<LastModified>${ISO_MS}</LastModified>`,
    etagEl(hex),
    el('Size', String(size)),
    // our choice for the StorageClass value of a listing: STANDARD, as S3 and List Parts say
    el('StorageClass', 'STANDARD'),
    '</Contents>',
  );
}
function commonPrefix(prefix: string): RegExp {
  return seq('<CommonPrefixes>', el('Prefix', prefix), '</CommonPrefixes>');
}
/** Each string must appear in the body after the previous one (order check). */
function inOrder(...keys: string[]): RegExp {
  return new RegExp(keys.map((k) => `<Key>${esc(k)}</Key>`).join('[\\s\\S]*'));
}

function get(url: string, expect: Step['expect'], extra: Partial<Step> = {}): Step {
  return { method: 'GET', url, expect, ...extra };
}
function head(url: string, status: number, extra: Partial<Step> = {}): Step {
  return { method: 'HEAD', url, expect: { status }, ...extra };
}
function createAt(url: string, expect: Step['expect'], headers: Record<string, string> = {}): Step {
  return { method: 'PUT', url, headers, expect };
}
/** The service-host bucket list must (not) name `name`. */
function listed(name: string, yes: boolean): Step {
  const tag = `<Name>${name}</Name>`;
  return get(`${SVC}/`, yes ? { status: 200, bodyIncludes: [tag] } : { status: 200, bodyExcludes: [tag] });
}

/** Five objects put in a scrambled order; listed they must come back ascending. */
const FIVE: Step[] = [bucket('photos'), put('photos', 'd'), put('photos', 'c/x/y'), put('photos', 'a/2'), put('photos', 'b'), put('photos', 'a/1')];

const name63 = 'a' + '0123456789'.repeat(6) + 'bz'; // 63 chars
const name64 = name63 + 'q';

export const cases: Case[] = [
  // ---------------------------------------------------------------- create
  {
    name: 'PUT / creates a private bucket by default',
    steps: [
      bucket('photos'),
      head(`${P}/`, 200),
      get(`${P}/?acl`, { status: 200, headers: { 'x-svc-acl': 'private' }, body: '' }),
      put('photos', 'k'),
      get(`${P}/k`, { status: 403, code: 'AccessDenied' }, { auth: 'anon' }),
      listed('photos', true),
    ],
  },
  {
    name: 'PUT / with x-svc-acl: private',
    steps: [
      createAt(`${P}/`, { status: 200 }, { 'x-svc-acl': 'private' }),
      get(`${P}/?acl`, { status: 200, headers: { 'x-svc-acl': 'private' }, body: '' }),
    ],
  },
  {
    name: 'PUT / with x-svc-acl: public-read allows anonymous reads',
    steps: [
      bucket('photos', 'public-read'),
      get(`${P}/?acl`, { status: 200, headers: { 'x-svc-acl': 'public-read' }, body: '' }),
      put('photos', 'k'),
      get(`${P}/k`, { status: 200, body: 'hello' }, { auth: 'anon' }),
    ],
  },
  {
    // our choice: only private|public-read exist; like S3 an unknown canned ACL is
    // 400 InvalidArgument, and the bucket is not created.
    name: 'PUT / with an invalid x-svc-acl is 400 InvalidArgument and creates nothing',
    steps: [
      createAt(`${P}/`, { status: 400, code: 'InvalidArgument' }, { 'x-svc-acl': 'public-read-write-everything' }),
      head(`${P}/`, 404),
      get(`${P}/`, { status: 404, code: 'NoSuchBucket' }),
      listed('photos', false),
    ],
  },
  {
    name: 'PUT / on an existing bucket is 409 BucketAlreadyExists and changes nothing',
    steps: [
      bucket('photos'),
      put('photos', 'k'),
      createAt(`${P}/`, { status: 409, code: 'BucketAlreadyExists' }),
      createAt(`${P}/`, { status: 409, code: 'BucketAlreadyExists' }, { 'x-svc-acl': 'public-read' }),
      get(`${P}/?acl`, { status: 200, headers: { 'x-svc-acl': 'private' } }),
      get(`${P}/k`, { status: 200, body: 'hello' }),
    ],
  },
  {
    name: 'bucket names of 3 and 63 characters are accepted',
    steps: [
      createAt(`http://abc.svc.localhost/`, { status: 200 }),
      createAt(`http://${name63}.svc.localhost/`, { status: 200 }),
      createAt(`http://0-9.svc.localhost/`, { status: 200 }),
      head('http://abc.svc.localhost/', 200),
      head(`http://${name63}.svc.localhost/`, 200),
      head('http://0-9.svc.localhost/', 200),
      listed('abc', true),
      listed(name63, true),
      listed('0-9', true),
    ],
  },
  {
    name: 'bucket name of 2 characters is 400 InvalidBucketName',
    steps: [
      createAt('http://ab.svc.localhost/', { status: 400, code: 'InvalidBucketName' }),
      createAt(`${SVC}/ab/`, { status: 400, code: 'InvalidBucketName' }),
      listed('ab', false),
    ],
  },
  {
    name: 'bucket name of 64 characters is 400 InvalidBucketName',
    steps: [
      createAt(`${SVC}/${name64}/`, { status: 400, code: 'InvalidBucketName' }),
      createAt(`http://${name64}.svc.localhost/`, { status: 400, code: 'InvalidBucketName' }),
      listed(name64, false),
    ],
  },
  {
    name: 'upper-case bucket name (path style) is 400 InvalidBucketName',
    steps: [
      createAt(`${SVC}/Bad/`, { status: 400, code: 'InvalidBucketName' }),
      createAt(`${SVC}/BAD/`, { status: 400, code: 'InvalidBucketName' }),
      listed('Bad', false),
      listed('bad', false),
    ],
  },
  {
    name: 'bucket name with a leading hyphen is 400 InvalidBucketName',
    steps: [
      createAt('http://-abc.svc.localhost/', { status: 400, code: 'InvalidBucketName' }),
      createAt(`${SVC}/-abc/`, { status: 400, code: 'InvalidBucketName' }),
      listed('-abc', false),
    ],
  },
  {
    name: 'bucket name with a trailing hyphen is 400 InvalidBucketName',
    steps: [
      createAt('http://abc-.svc.localhost/', { status: 400, code: 'InvalidBucketName' }),
      createAt(`${SVC}/abc-/`, { status: 400, code: 'InvalidBucketName' }),
      listed('abc-', false),
    ],
  },
  {
    name: 'bucket name with an underscore is 400 InvalidBucketName',
    steps: [
      createAt('http://a_b.svc.localhost/', { status: 400, code: 'InvalidBucketName' }),
      createAt(`${SVC}/a_b/`, { status: 400, code: 'InvalidBucketName' }),
      listed('a_b', false),
    ],
  },
  {
    name: 'bucket name with a dot is 400 InvalidBucketName',
    steps: [
      createAt('http://a.bc.svc.localhost/', { status: 400, code: 'InvalidBucketName' }),
      createAt(`${SVC}/a.bc/`, { status: 400, code: 'InvalidBucketName' }),
      listed('a.bc', false),
    ],
  },

  // ---------------------------------------------------------------- delete
  {
    name: 'DELETE / of an empty bucket is 200 and removes it',
    steps: [
      bucket('photos'),
      { method: 'DELETE', url: `${P}/`, expect: { status: 200 } },
      head(`${P}/`, 404),
      listed('photos', false),
      { method: 'DELETE', url: `${P}/`, expect: { status: 404, code: 'NoSuchBucket' } },
      bucket('photos'), // the name is free again
    ],
  },
  {
    name: 'DELETE / of a bucket holding an object is 409 BucketNotEmpty',
    steps: [
      bucket('photos'),
      put('photos', 'k'),
      { method: 'DELETE', url: `${P}/`, expect: { status: 409, code: 'BucketNotEmpty' } },
      head(`${P}/`, 200),
      get(`${P}/k`, { status: 200, body: 'hello' }),
      { method: 'DELETE', url: `${P}/k`, expect: { status: 200 } },
      { method: 'DELETE', url: `${P}/`, expect: { status: 200 } },
      head(`${P}/`, 404),
    ],
  },
  {
    name: 'DELETE / of a bucket holding only an in-progress upload is 409 BucketNotEmpty',
    steps: [
      bucket('photos'),
      { method: 'POST', url: `${P}/big?uploads`, expect: { status: 200, bodyIncludes: ['<UploadId>'] } },
      { method: 'DELETE', url: `${P}/`, expect: { status: 409, code: 'BucketNotEmpty' } },
      head(`${P}/`, 200),
    ],
  },
  {
    name: 'DELETE / of a bucket holding only historical versions is 409 BucketNotEmpty',
    steps: [
      bucket('photos'),
      {
        method: 'PUT',
        url: `${P}/?versioning`,
        body: '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>',
        expect: { status: 200 },
      },
      put('photos', 'k', 'one'),
      put('photos', 'k', 'two'),
      { method: 'DELETE', url: `${P}/k`, expect: { status: 200 } },
      get(`${P}/k`, { status: 404, code: 'NoSuchKey' }),
      { method: 'DELETE', url: `${P}/`, expect: { status: 409, code: 'BucketNotEmpty' } },
      head(`${P}/`, 200),
    ],
  },

  // ---------------------------------------------------------------- missing bucket
  {
    name: 'operations on a missing bucket are 404 NoSuchBucket',
    steps: [
      head(`${P}/`, 404),
      get(`${P}/`, { status: 404, code: 'NoSuchBucket' }),
      { method: 'DELETE', url: `${P}/`, expect: { status: 404, code: 'NoSuchBucket' } },
      get(`${P}/?acl`, { status: 404, code: 'NoSuchBucket' }),
      { method: 'PUT', url: `${P}/?acl`, headers: { 'x-svc-acl': 'public-read' }, expect: { status: 404, code: 'NoSuchBucket' } },
      { method: 'PUT', url: `${P}/k`, body: 'x', expect: { status: 404, code: 'NoSuchBucket' } },
      get(`${P}/k`, { status: 404, code: 'NoSuchBucket' }),
      head(`${P}/k`, 404),
      listed('photos', false),
    ],
  },
  {
    name: 'HEAD / answers 200 for an existing bucket and 404 for a missing one',
    steps: [
      head(`${P}/`, 404, {}),
      bucket('photos'),
      head(`${P}/`, 200),
      head('http://other.svc.localhost/', 404),
    ],
  },

  // ---------------------------------------------------------------- list buckets (service host)
  {
    name: 'GET / on the service host lists the caller\'s buckets (ListAllMyBucketsResult)',
    steps: [
      createAt('http://zeta.svc.localhost/', { status: 200 }),
      createAt('http://alpha.svc.localhost/', { status: 200 }),
      get(`${SVC}/`, {
        status: 200,
        headers: { 'content-type': /xml/ },
        body: new RegExp(`^${XML_DECL}\\s*<ListAllMyBucketsResult>`),
        bodyIncludes: ['<Owner>', '<ID>', '<DisplayName>', '</Owner>', '<Buckets>', '</ListAllMyBucketsResult>'],
        bodyExcludes: ['xmlns'],
      }),
      get(`${SVC}/`, {
        status: 200,
        body: seq('<Bucket>', el('Name', 'alpha'), `<CreationDate>${ISO_MS}</CreationDate>`, '</Bucket>'),
      }),
      get(`${SVC}/`, { status: 200, body: seq('<Owner>', '<ID>[^<]+</ID>', '<DisplayName>[^<]*</DisplayName>', '</Owner>') }),
      // our choice for the order of buckets: S3 lists them by name
      get(`${SVC}/`, { status: 200, body: /<Name>alpha<\/Name>[\s\S]*<Name>zeta<\/Name>/ }),
    ],
  },
  {
    name: 'GET / on the service host with no bucket lists none',
    steps: [get(`${SVC}/`, { status: 200, bodyIncludes: ['<ListAllMyBucketsResult>'], bodyExcludes: ['<Bucket>', '<Name>'] })],
  },

  // ---------------------------------------------------------------- list objects
  {
    name: 'GET / lists objects in ascending key order (ListBucketResult)',
    steps: [
      ...FIVE,
      get(`${P}/`, {
        status: 200,
        headers: { 'content-type': /xml/ },
        body: new RegExp(`^${XML_DECL}\\s*<ListBucketResult>`),
        bodyIncludes: ['<Name>photos</Name>', '<MaxKeys>100</MaxKeys>', '<IsTruncated>false</IsTruncated>', '</ListBucketResult>'],
        bodyExcludes: ['<NextMarker>', '<CommonPrefixes>', '<Delimiter>', 'xmlns'],
      }),
      get(`${P}/`, { status: 200, body: inOrder('a/1', 'a/2', 'b', 'c/x/y', 'd') }),
      get(`${P}/`, { status: 200, body: contents('b') }),
      get(`${P}/`, { status: 200, body: seq(el('Prefix', ''), el('Marker', '')) }),
    ],
  },
  {
    name: 'GET / of an empty bucket lists nothing',
    steps: [
      bucket('photos'),
      get(`${P}/`, {
        status: 200,
        bodyIncludes: ['<ListBucketResult>', '<Name>photos</Name>', '<IsTruncated>false</IsTruncated>'],
        bodyExcludes: ['<Contents>', '<NextMarker>'],
      }),
    ],
  },
  {
    name: 'list with prefix',
    steps: [
      ...FIVE,
      get(`${P}/?prefix=a/`, {
        status: 200,
        body: inOrder('a/1', 'a/2'),
        bodyIncludes: ['<Prefix>a/</Prefix>', '<IsTruncated>false</IsTruncated>'],
        bodyExcludes: ['<Key>b</Key>', '<Key>c/x/y</Key>', '<Key>d</Key>'],
      }),
      get(`${P}/?prefix=a%2F`, { status: 200, body: inOrder('a/1', 'a/2'), bodyExcludes: ['<Key>b</Key>'] }),
      get(`${P}/?prefix=zzz`, { status: 200, bodyIncludes: ['<Prefix>zzz</Prefix>'], bodyExcludes: ['<Contents>'] }),
    ],
  },
  {
    name: 'list with marker starts after the marker',
    steps: [
      ...FIVE,
      get(`${P}/?marker=b`, {
        status: 200,
        body: inOrder('c/x/y', 'd'),
        bodyIncludes: ['<Marker>b</Marker>', '<IsTruncated>false</IsTruncated>'],
        bodyExcludes: ['<Key>a/1</Key>', '<Key>a/2</Key>', '<Key>b</Key>', '<NextMarker>'],
      }),
      get(`${P}/?marker=bb`, { status: 200, body: inOrder('c/x/y', 'd'), bodyExcludes: ['<Key>b</Key>'] }),
      get(`${P}/?marker=d`, { status: 200, bodyExcludes: ['<Contents>'] }),
    ],
  },
  {
    name: 'list pages with max-keys, IsTruncated and NextMarker',
    steps: [
      ...FIVE,
      get(`${P}/?max-keys=2`, {
        status: 200,
        body: inOrder('a/1', 'a/2'),
        bodyIncludes: ['<MaxKeys>2</MaxKeys>', '<IsTruncated>true</IsTruncated>', '<NextMarker>a/2</NextMarker>'],
        bodyExcludes: ['<Key>b</Key>'],
      }),
      get(`${P}/?max-keys=2&marker=a/2`, {
        status: 200,
        body: inOrder('b', 'c/x/y'),
        bodyIncludes: ['<IsTruncated>true</IsTruncated>', '<NextMarker>c/x/y</NextMarker>'],
        bodyExcludes: ['<Key>a/2</Key>', '<Key>d</Key>'],
      }),
      get(`${P}/?max-keys=2&marker=c/x/y`, {
        status: 200,
        bodyIncludes: ['<Key>d</Key>', '<IsTruncated>false</IsTruncated>'],
        bodyExcludes: ['<NextMarker>', '<Key>c/x/y</Key>'],
      }),
      // exactly max-keys objects left: not truncated, no NextMarker
      get(`${P}/?max-keys=5`, { status: 200, bodyIncludes: ['<IsTruncated>false</IsTruncated>'], bodyExcludes: ['<NextMarker>'] }),
      get(`${P}/?max-keys=4`, { status: 200, bodyIncludes: ['<IsTruncated>true</IsTruncated>', '<NextMarker>c/x/y</NextMarker>'] }),
    ],
  },
  {
    name: 'max-keys=0 lists no object',
    steps: [...FIVE, get(`${P}/?max-keys=0`, { status: 200, bodyIncludes: ['<MaxKeys>0</MaxKeys>'], bodyExcludes: ['<Contents>', '<Key>'] })],
  },
  {
    name: 'max-keys=1000 is accepted',
    steps: [...FIVE, get(`${P}/?max-keys=1000`, { status: 200, body: inOrder('a/1', 'd'), bodyIncludes: ['<MaxKeys>1000</MaxKeys>'] })],
  },
  {
    name: 'max-keys outside 0–1000 or not an integer is 400 InvalidArgument',
    steps: [
      bucket('photos'),
      get(`${P}/?max-keys=1001`, { status: 400, code: 'InvalidArgument' }),
      get(`${P}/?max-keys=-1`, { status: 400, code: 'InvalidArgument' }),
      get(`${P}/?max-keys=abc`, { status: 400, code: 'InvalidArgument' }),
    ],
  },
  {
    name: 'max-keys defaults to 100',
    steps: [
      bucket('photos'),
      ...Array.from({ length: 101 }, (_, i) => put('photos', `k${String(i).padStart(3, '0')}`, 'x')),
      get(`${P}/`, {
        status: 200,
        body: inOrder('k000', 'k050', 'k099'),
        bodyIncludes: ['<MaxKeys>100</MaxKeys>', '<IsTruncated>true</IsTruncated>', '<NextMarker>k099</NextMarker>'],
        bodyExcludes: ['<Key>k100</Key>'],
      }),
      get(`${P}/?marker=k099`, { status: 200, bodyIncludes: ['<Key>k100</Key>', '<IsTruncated>false</IsTruncated>'], bodyExcludes: ['<Key>k099</Key>'] }),
    ],
  },
  {
    name: 'delimiter / rolls keys up into CommonPrefixes',
    steps: [
      ...FIVE,
      get(`${P}/?delimiter=/`, {
        status: 200,
        body: inOrder('b', 'd'),
        bodyIncludes: ['<Delimiter>/</Delimiter>', '<IsTruncated>false</IsTruncated>'],
        bodyExcludes: ['<Key>a/1</Key>', '<Key>a/2</Key>', '<Key>c/x/y</Key>', '<NextMarker>'],
      }),
      get(`${P}/?delimiter=/`, { status: 200, body: commonPrefix('a/') }),
      get(`${P}/?delimiter=/`, { status: 200, body: commonPrefix('c/') }),
      get(`${P}/?delimiter=/`, { status: 200, body: /<Prefix>a\/<\/Prefix>[\s\S]*<Prefix>c\/<\/Prefix>/ }),
      // with a prefix: the delimiter applies to the rest of the key
      get(`${P}/?prefix=c/&delimiter=/`, { status: 200, body: commonPrefix('c/x/'), bodyExcludes: ['<Contents>', '<Key>'] }),
    ],
  },
  {
    name: 'CommonPrefixes count toward max-keys; marker paging does not repeat a common prefix',
    steps: [
      ...FIVE,
      // entries in order: a/ (prefix), b, c/ (prefix), d
      get(`${P}/?delimiter=/&max-keys=2`, {
        status: 200,
        body: commonPrefix('a/'),
        bodyIncludes: ['<Key>b</Key>', '<IsTruncated>true</IsTruncated>', '<NextMarker>b</NextMarker>'],
        bodyExcludes: ['<Prefix>c/</Prefix>', '<Key>d</Key>'],
      }),
      // our choice for NextMarker when the last entry is a common prefix: S3 gives the prefix
      get(`${P}/?delimiter=/&max-keys=1`, {
        status: 200,
        body: commonPrefix('a/'),
        bodyIncludes: ['<IsTruncated>true</IsTruncated>', '<NextMarker>a/</NextMarker>'],
        bodyExcludes: ['<Contents>'],
      }),
      get(`${P}/?delimiter=/&max-keys=1&marker=a/`, {
        status: 200,
        bodyIncludes: ['<Key>b</Key>', '<IsTruncated>true</IsTruncated>', '<NextMarker>b</NextMarker>'],
        bodyExcludes: ['<CommonPrefixes>', '<Key>a/1</Key>', '<Key>a/2</Key>'],
      }),
      get(`${P}/?delimiter=/&max-keys=1&marker=b`, {
        status: 200,
        body: commonPrefix('c/'),
        bodyIncludes: ['<NextMarker>c/</NextMarker>'],
        bodyExcludes: ['<Contents>'],
      }),
      get(`${P}/?delimiter=/&max-keys=1&marker=c/`, {
        status: 200,
        bodyIncludes: ['<Key>d</Key>', '<IsTruncated>false</IsTruncated>'],
        bodyExcludes: ['<CommonPrefixes>', '<Key>c/x/y</Key>', '<NextMarker>'],
      }),
      // exactly max-keys entries in all: not truncated
      get(`${P}/?delimiter=/&max-keys=4`, { status: 200, bodyIncludes: ['<IsTruncated>false</IsTruncated>'], bodyExcludes: ['<NextMarker>'] }),
    ],
  },
  {
    name: 'listed keys are XML-escaped',
    steps: [
      bucket('photos'),
      put('photos', 'a%26b%3Cc%3E'),
      get(`${P}/`, { status: 200, bodyIncludes: ['<Key>a&amp;b&lt;c&gt;</Key>'] }),
    ],
  },

  // ---------------------------------------------------------------- acl
  {
    name: 'PUT /?acl changes the bucket ACL; GET /?acl returns it in x-svc-acl with no body',
    steps: [
      bucket('photos'),
      put('photos', 'k'),
      get(`${P}/k`, { status: 403, code: 'AccessDenied' }, { auth: 'anon' }),
      { method: 'PUT', url: `${P}/?acl`, headers: { 'x-svc-acl': 'public-read' }, expect: { status: 200 } },
      get(`${P}/?acl`, { status: 200, headers: { 'x-svc-acl': 'public-read' }, body: '' }),
      get(`${P}/k`, { status: 200, body: 'hello' }, { auth: 'anon' }),
      { method: 'PUT', url: `${P}/?acl`, headers: { 'x-svc-acl': 'private' }, expect: { status: 200 } },
      get(`${P}/?acl`, { status: 200, headers: { 'x-svc-acl': 'private' }, body: '' }),
      get(`${P}/k`, { status: 403, code: 'AccessDenied' }, { auth: 'anon' }),
      // the objects are untouched by ACL changes
      get(`${P}/k`, { status: 200, body: 'hello' }),
    ],
  },
  {
    // our choice: an unknown ACL value is 400 InvalidArgument (S3), and the ACL stays
    name: 'PUT /?acl with an invalid value is 400 InvalidArgument and keeps the ACL',
    steps: [
      bucket('photos', 'public-read'),
      { method: 'PUT', url: `${P}/?acl`, headers: { 'x-svc-acl': 'nonsense' }, expect: { status: 400, code: 'InvalidArgument' } },
      get(`${P}/?acl`, { status: 200, headers: { 'x-svc-acl': 'public-read' } }),
    ],
  },

  // ---------------------------------------------------------------- addressing
  {
    name: 'path style on the service host is the same as virtual-host style',
    steps: [
      createAt(`${SVC}/photos/`, { status: 200 }),
      head(`${P}/`, 200),
      { method: 'PUT', url: `${SVC}/photos/dir/key.txt`, body: 'via path', expect: { status: 200 } },
      get(`${P}/dir/key.txt`, { status: 200, body: 'via path' }),
      { method: 'PUT', url: `${P}/other`, body: 'via host', expect: { status: 200 } },
      get(`${SVC}/photos/other`, { status: 200, body: 'via host' }),
      head(`${SVC}/photos/other`, 200),
      get(`${SVC}/photos/?prefix=dir/`, { status: 200, bodyIncludes: ['<Name>photos</Name>', '<Key>dir/key.txt</Key>'], bodyExcludes: ['<Key>other</Key>'] }),
      get(`${SVC}/photos/?acl`, { status: 200, headers: { 'x-svc-acl': 'private' } }),
      { method: 'DELETE', url: `${SVC}/photos/other`, expect: { status: 200 } },
      get(`${P}/other`, { status: 404, code: 'NoSuchKey' }),
    ],
  },
  {
    name: 'the page mount /svc/{bucket}/{key} is the same as virtual-host style',
    steps: [
      createAt(`${MOUNT}/photos/`, { status: 200 }),
      head(`${P}/`, 200),
      { method: 'PUT', url: `${MOUNT}/photos/a/b.txt`, body: 'via mount', expect: { status: 200 } },
      get(`${P}/a/b.txt`, { status: 200, body: 'via mount' }),
      put('photos', 'k'),
      get(`${MOUNT}/photos/k`, { status: 200, body: 'hello' }),
      head(`${MOUNT}/photos/k`, 200),
      get(`${MOUNT}/photos/`, { status: 200, bodyIncludes: ['<ListBucketResult>', '<Key>a/b.txt</Key>', '<Key>k</Key>'] }),
      get(`${MOUNT}/`, { status: 200, bodyIncludes: ['<ListAllMyBucketsResult>', '<Name>photos</Name>'] }),
    ],
  },

  // ---------------------------------------------------------------- methods, CORS, common headers
  {
    name: 'unsupported method/sub-resource combinations are 405 MethodNotAllowed',
    steps: [
      bucket('photos'),
      put('photos', 'k'),
      { method: 'PATCH', url: `${P}/k`, body: 'x', expect: { status: 405, code: 'MethodNotAllowed' } },
      { method: 'PATCH', url: `${P}/`, expect: { status: 405, code: 'MethodNotAllowed' } },
      { method: 'POST', url: `${P}/`, body: '', expect: { status: 405, code: 'MethodNotAllowed' } },
      { method: 'POST', url: `${P}/k`, body: '', expect: { status: 405, code: 'MethodNotAllowed' } },
      get(`${P}/k`, { status: 200, body: 'hello' }),
    ],
  },
  {
    name: 'OPTIONS answers a CORS preflight with 200 and Access-Control-Allow-Origin: *',
    steps: [
      bucket('photos'),
      {
        method: 'OPTIONS',
        url: `${P}/k`,
        auth: 'anon',
        headers: { Origin: 'http://localhost:5173', 'Access-Control-Request-Method': 'PUT', 'Access-Control-Request-Headers': 'authorization,x-svc-date' },
        expect: { status: 200, headers: { 'access-control-allow-origin': '*' } },
      },
      // a page creating a bucket cross-origin needs the preflight before the bucket exists
      {
        method: 'OPTIONS',
        url: 'http://newbucket.svc.localhost/',
        auth: 'anon',
        headers: { Origin: 'http://localhost:5173', 'Access-Control-Request-Method': 'PUT' },
        expect: { status: 200, headers: { 'access-control-allow-origin': '*' } },
      },
      head('http://newbucket.svc.localhost/', 404),
    ],
  },
  {
    name: 'every response carries x-svc-request-id, Date, Connection, Server and the CORS headers',
    steps: ((): Step[] => {
      const common = {
        'x-svc-request-id': /\S/,
        date: RFC1123,
        connection: /\S/,
        server: 'swbucket',
        'access-control-allow-origin': '*',
        'access-control-expose-headers': /(?=.*\betag\b)(?=.*\bcontent-range\b)(?=.*\baccept-ranges\b)(?=.*\bcontent-disposition\b)(?=.*\bcontent-length\b)(?=.*\blast-modified\b)(?=.*\bx-svc-request-id\b)(?=.*\bx-svc-version-id\b)(?=.*\bx-svc-acl\b)/i,
      };
      return [
        { ...bucket('photos'), expect: { status: 200, headers: common } },
        { ...put('photos', 'k'), expect: { status: 200, headers: common } },
        get(`${P}/k`, { status: 200, headers: common }),
        head(`${P}/k`, 200, { expect: { status: 200, headers: common } }),
        get(`${P}/`, { status: 200, headers: common }),
        get(`${SVC}/`, { status: 200, headers: common }),
        get(`${P}/nope`, { status: 404, code: 'NoSuchKey', headers: common }),
        head(`${P}/nope`, 404, { expect: { status: 404, headers: common } }),
        get('http://missing.svc.localhost/', { status: 404, code: 'NoSuchBucket', headers: common }),
        get(`${P}/k`, { status: 403, code: 'AccessDenied', headers: common }, { auth: 'anon' }),
        { method: 'PATCH', url: `${P}/k`, expect: { status: 405, code: 'MethodNotAllowed', headers: common } },
        { method: 'OPTIONS', url: `${P}/k`, auth: 'anon', expect: { status: 200, headers: { 'x-svc-request-id': /\S/, date: RFC1123, server: 'swbucket' } } },
      ];
    })(),
  },
  {
    name: 'error bodies are the XML Error document of docs/protocol.md as application/xml',
    steps: [
      get('http://missing.svc.localhost/k', {
        status: 404,
        code: 'NoSuchBucket',
        headers: { 'content-type': /^application\/xml/ },
        body: new RegExp(
          `^${XML_DECL}\\s*<Error>\\s*<Code>NoSuchBucket</Code>\\s*(?:<Message>[^<]*</Message>|<Message/>)\\s*(?:<Resource>[^<]*</Resource>|<Resource/>)\\s*<RequestId>[^<]+</RequestId>\\s*</Error>\\s*$`,
        ),
      }),
      bucket('photos'),
      { method: 'PUT', url: `${P}/`, expect: { status: 409, code: 'BucketAlreadyExists', headers: { 'content-type': /^application\/xml/ }, bodyIncludes: ['<Error>', '<RequestId>'] } },
    ],
  },
];
