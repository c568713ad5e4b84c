// Versioning (docs/protocol.md, "Versioning" and "Buckets"): PUT/GET /?versioning, GET /?versions,
// x-svc-version-id, ?versionId reads, VersionId in Delete Multiple, DELETE keeps history, Suspended.
// Plain data: version ids are not known in advance here, so they are matched by pattern; the exact
// numbering is checked in test/unit/versioning.test.ts. Signed as root unless `auth` says otherwise.
//
// Interface facts decided by the implementer (tested as given): GET /?versioning of a bucket never
// configured → <VersioningConfiguration></VersioningConfiguration>; invalid Status → 400
// MalformedXML; objects written before versioning show VersionId "null" until replaced; Suspended:
// new writes get no versionId and replacing writes add no history; GET/HEAD ?versionId=N of a
// missing version → 404 NoSuchVersion; Delete Multiple: non-numeric or absent VersionId → Error
// NoSuchVersion.
import { bucket, put, type Case, type Expect, type Step } from './types.ts';
import { ALICE, account, err, etagOf, host, md5hex } from './object-helpers.ts';

const P = host('photos');
const PUB = host('pub');
const XML_DECL = '^<\\?xml version="1\\.0" encoding="UTF-8"\\?>\\s*';
const ISO_MS = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z';
const NUM = /^\d+$/;

function esc(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
function seq(...parts: string[]): RegExp {
  return new RegExp(parts.join('\\s*'));
}
function el(name: string, value: string): string {
  return value === '' ? `(?:<${name}></${name}>|<${name}/>)` : `<${name}>${esc(value)}</${name}>`;
}
const versioningXml = (status: string): string =>
  `<VersioningConfiguration><Status>${status}</Status></VersioningConfiguration>`;

function setVersioning(b: string, status: string, expect: Expect = { status: 200 }, auth?: Step['auth']): Step {
  return { method: 'PUT', url: `${host(b)}/?versioning`, body: versioningXml(status), expect, ...(auth ? { auth } : {}) };
}
function getVersioning(b: string, status: string | null, auth?: Step['auth']): Step {
  const body =
    status === null
      ? new RegExp(XML_DECL + '(?:<VersioningConfiguration></VersioningConfiguration>|<VersioningConfiguration/>)\\s*$')
      : new RegExp(XML_DECL + `<VersioningConfiguration>\\s*<Status>${status}</Status>\\s*</VersioningConfiguration>\\s*$`);
  return {
    method: 'GET',
    url: `${host(b)}/?versioning`,
    expect: { status: 200, body, headers: { 'content-type': /^application\/xml/ } },
    ...(auth ? { auth } : {}),
  };
}
/** One <Version> entry; `id` is a literal ("null") or a pattern source (default: a number). */
function version(key: string, content: string, isLatest: boolean, id = '\\d+'): string {
  return [
    '<Version>',
    el('Key', key),
    `<VersionId>${id}</VersionId>`,
    el('IsLatest', String(isLatest)),
    `<LastModified>${ISO_MS}</LastModified>`,
    `<ETag>(?:"|&quot;)${md5hex(content)}(?:"|&quot;)</ETag>`,
    el('Size', String(new TextEncoder().encode(content).length)),
    '</Version>',
  ].join('\\s*');
}
/** GET /?versions whose Version entries are exactly these, in this order. */
function versions(b: string, entries: string[], query = ''): Step {
  return {
    method: 'GET',
    url: `${host(b)}/?versions${query}`,
    expect: {
      status: 200,
      body: new RegExp(
        '<IsTruncated>false</IsTruncated>\\s*' + (entries.length ? entries.join('\\s*') + '\\s*' : '') + '</ListVersionsResult>\\s*$',
      ),
    },
  };
}
function get(url: string, expect: Expect, extra: Partial<Step> = {}): Step {
  return { method: 'GET', url, expect, ...extra };
}
function del(objects: string, quiet = false): string {
  return `<Delete>${quiet ? '<Quiet>true</Quiet>' : ''}${objects}</Delete>`;
}

const ENABLE = setVersioning('photos', 'Enabled');

export const cases: Case[] = [
  // ---------------------------------------------------------------- configuration
  {
    name: 'GET /?versioning of a bucket never configured → a VersioningConfiguration without Status',
    steps: [bucket('photos'), getVersioning('photos', null)],
  },
  {
    name: 'PUT /?versioning Enabled then Suspended then Enabled; GET returns the same document',
    steps: [
      bucket('photos'),
      setVersioning('photos', 'Enabled', { status: 200 }),
      getVersioning('photos', 'Enabled'),
      setVersioning('photos', 'Suspended'),
      getVersioning('photos', 'Suspended'),
      setVersioning('photos', 'Enabled'),
      getVersioning('photos', 'Enabled'),
    ],
  },
  {
    name: 'versioning is per bucket',
    steps: [bucket('photos'), bucket('other'), ENABLE, getVersioning('photos', 'Enabled'), getVersioning('other', null)],
  },
  {
    name: 'an invalid Status → 400 MalformedXML, the configuration stays',
    steps: [
      bucket('photos'),
      ENABLE,
      setVersioning('photos', 'Disabled', err(400, 'MalformedXML')),
      setVersioning('photos', 'enabled', err(400, 'MalformedXML')),
      setVersioning('photos', '', err(400, 'MalformedXML')),
      { method: 'PUT', url: `${P}/?versioning`, body: '<VersioningConfiguration><Status>Suspended</Status>', expect: err(400, 'MalformedXML') },
      { method: 'PUT', url: `${P}/?versioning`, body: 'Suspended', expect: err(400, 'MalformedXML') },
      getVersioning('photos', 'Enabled'),
    ],
  },
  {
    name: 'versioning calls on a missing bucket → 404 NoSuchBucket',
    steps: [
      setVersioning('photos', 'Enabled', err(404, 'NoSuchBucket')),
      get(`${P}/?versioning`, err(404, 'NoSuchBucket')),
      get(`${P}/?versions`, err(404, 'NoSuchBucket')),
      { method: 'HEAD', url: `${P}/k?versionId=1`, expect: { status: 404 } },
      get(`${P}/k?versionId=1`, err(404, 'NoSuchBucket')),
    ],
  },

  // ---------------------------------------------------------------- x-svc-version-id
  {
    name: 'x-svc-version-id: absent before versioning, numeric on PUT/GET/HEAD once Enabled',
    steps: [
      bucket('photos'),
      { method: 'PUT', url: `${P}/before`, body: 'before', expect: { status: 200, headers: { 'x-svc-version-id': null } } },
      // our choice for the header of a "null" version: S3 sends "null"; here absence or "null" both pass
      get(`${P}/before`, { status: 200, body: 'before', headers: { 'x-svc-version-id': /^(null)?$/ } }),
      ENABLE,
      { method: 'PUT', url: `${P}/k`, body: 'one', expect: { status: 200, headers: { 'x-svc-version-id': NUM, etag: etagOf('one') } } },
      get(`${P}/k`, { status: 200, body: 'one', headers: { 'x-svc-version-id': NUM } }),
      { method: 'HEAD', url: `${P}/k`, expect: { status: 200, headers: { 'x-svc-version-id': NUM, 'content-length': '3' } } },
    ],
  },
  {
    name: 'Suspended: PUT gets no x-svc-version-id and adds no history',
    steps: [
      bucket('photos'),
      ENABLE,
      put('photos', 'k', 'v1'),
      setVersioning('photos', 'Suspended'),
      { method: 'PUT', url: `${P}/k`, body: 'v2-suspended', expect: { status: 200, headers: { 'x-svc-version-id': null } } },
      { method: 'PUT', url: `${P}/k`, body: 'v3-suspended', expect: { status: 200, headers: { 'x-svc-version-id': null } } },
      { method: 'PUT', url: `${P}/n`, body: 'new', expect: { status: 200, headers: { 'x-svc-version-id': null } } },
      get(`${P}/k`, { status: 200, body: 'v3-suspended' }),
      // v1 was current and is replaced under Suspended: its bytes are gone, no history at all
      versions('photos', [version('k', 'v3-suspended', true, 'null'), version('n', 'new', true, 'null')]),
    ],
  },
  {
    name: 'Suspended keeps the history written while Enabled',
    steps: [
      bucket('photos'),
      ENABLE,
      put('photos', 'k', 'v1'),
      put('photos', 'k', 'v2'),
      setVersioning('photos', 'Suspended'),
      put('photos', 'k', 'v3'),
      // v2 (current, replaced under Suspended) is deleted; v1 (history) stays
      versions('photos', [version('k', 'v3', true, 'null'), version('k', 'v1', false)]),
    ],
  },

  // ---------------------------------------------------------------- GET /?versions
  {
    name: 'GET /?versions of an empty bucket: ListVersionsResult with Name, Prefix, Marker, VersionIdMarker, MaxKeys, IsTruncated false',
    steps: [
      bucket('photos'),
      get(`${P}/?versions`, {
        status: 200,
        headers: { 'content-type': /^application\/xml/ },
        body: new RegExp(
          XML_DECL +
            seq(
              '<ListVersionsResult>',
              el('Name', 'photos'),
              el('Prefix', ''),
              el('Marker', ''),
              el('VersionIdMarker', ''),
              el('MaxKeys', '100'),
              el('IsTruncated', 'false'),
              '</ListVersionsResult>',
            ).source + '\\s*$',
        ),
        bodyExcludes: ['<Version>', 'NextMarker', 'xmlns'],
      }),
    ],
  },
  {
    name: 'an object written before versioning is listed with VersionId null and IsLatest true',
    steps: [
      bucket('photos'),
      put('photos', 'old', 'old-bytes'),
      ENABLE,
      versions('photos', [version('old', 'old-bytes', true, 'null')]),
      put('photos', 'old', 'new-bytes'),
      // replaced: the old object enters the history with a number
      versions('photos', [version('old', 'new-bytes', true), version('old', 'old-bytes', false)]),
      get(`${P}/?versions`, { status: 200, bodyExcludes: ['<VersionId>null</VersionId>'] }),
    ],
  },
  {
    name: 'GET /?versions: keys ascending, newest first within a key, IsLatest only on the current',
    steps: [
      bucket('photos'),
      ENABLE,
      put('photos', 'b', 'b1'),
      put('photos', 'a', 'a1'),
      put('photos', 'b', 'b22'),
      put('photos', 'a', 'a22'),
      put('photos', 'b', 'b333'),
      versions('photos', [
        version('a', 'a22', true),
        version('a', 'a1', false),
        version('b', 'b333', true),
        version('b', 'b22', false),
        version('b', 'b1', false),
      ]),
      versions('photos', [version('b', 'b333', true), version('b', 'b22', false), version('b', 'b1', false)], '&prefix=b'),
    ],
  },

  // ---------------------------------------------------------------- ?versionId reads
  {
    name: 'GET and HEAD ?versionId of a missing version → 404 NoSuchVersion (HEAD: no body)',
    steps: [
      bucket('photos'),
      ENABLE,
      put('photos', 'k', 'one'),
      get(`${P}/k?versionId=987654`, err(404, 'NoSuchVersion')),
      { method: 'HEAD', url: `${P}/k?versionId=987654`, expect: { status: 404, body: '' } },
      get(`${P}/missing?versionId=1`, err(404, 'NoSuchVersion')),
      { method: 'HEAD', url: `${P}/missing?versionId=1`, expect: { status: 404, body: '' } },
      get(`${P}/k`, { status: 200, body: 'one' }),
    ],
  },
  {
    name: 'GET ?versionId on a bucket that never had versioning → 404 NoSuchVersion',
    steps: [bucket('photos'), put('photos', 'k', 'one'), get(`${P}/k?versionId=1`, err(404, 'NoSuchVersion'))],
  },

  // ---------------------------------------------------------------- DELETE keeps history
  {
    name: 'DELETE of the current object removes it; the history stays listed and the bucket is not deletable',
    steps: [
      bucket('photos'),
      ENABLE,
      put('photos', 'k', 'one'),
      put('photos', 'k', 'two!'),
      { method: 'DELETE', url: `${P}/k`, expect: { status: 200 } },
      get(`${P}/k`, err(404, 'NoSuchKey')),
      { method: 'HEAD', url: `${P}/k`, expect: { status: 404 } },
      get(`${P}/`, { status: 200, bodyExcludes: ['<Contents>'] }),
      // our choice for IsLatest once the current is gone: no version is the current one
      versions('photos', [version('k', 'one', false)]),
      { method: 'DELETE', url: `${P}/`, expect: err(409, 'BucketNotEmpty') },
      { method: 'HEAD', url: `${P}/`, expect: { status: 200 } },
    ],
  },

  // ---------------------------------------------------------------- Delete Multiple with VersionId
  {
    name: 'Delete Multiple: a non-numeric or absent VersionId → Error NoSuchVersion; the others are deleted',
    steps: [
      bucket('photos'),
      ENABLE,
      put('photos', 'k', 'one'),
      put('photos', 'k', 'two'),
      put('photos', 'x', 'x'),
      {
        method: 'POST',
        url: `${P}/?delete`,
        body: del('<Object><Key>k</Key><VersionId>abc</VersionId></Object>' +
            '<Object><Key>k</Key><VersionId>987654</VersionId></Object>' +
            '<Object><Key>ghost</Key><VersionId>1</VersionId></Object>' +
            '<Object><Key>x</Key></Object>',
        ),
        expect: {
          status: 200,
          bodyIncludes: ['<DeleteResult>'],
          body: /<Error>\s*<Key>k<\/Key>\s*<Code>NoSuchVersion<\/Code>[\s\S]*<Error>\s*<Key>k<\/Key>\s*<Code>NoSuchVersion<\/Code>[\s\S]*<Error>\s*<Key>ghost<\/Key>\s*<Code>NoSuchVersion<\/Code>/,
        },
      },
      {
        method: 'POST',
        url: `${P}/?delete`,
        body: del('<Object><Key>k</Key><VersionId>abc</VersionId></Object>', true),
        expect: { status: 200, bodyIncludes: ['<Code>NoSuchVersion</Code>'], bodyExcludes: ['<Deleted>'] },
      },
      get(`${P}/x`, err(404, 'NoSuchKey')),
      get(`${P}/k`, { status: 200, body: 'two' }),
      versions('photos', [version('k', 'two', true), version('k', 'one', false)]),
    ],
  },
  {
    // fact given: a non-numeric VersionId is NoSuchVersion — also "null", the label the listing
    // shows for an object written before versioning
    name: 'Delete Multiple with VersionId null → Error NoSuchVersion; the pre-versioning object stays',
    steps: [
      bucket('photos'),
      put('photos', 'pre', 'pre-versioning'),
      ENABLE,
      {
        method: 'POST',
        url: `${P}/?delete`,
        body: del('<Object><Key>pre</Key><VersionId>null</VersionId></Object>'),
        expect: { status: 200, body: /<Error>\s*<Key>pre<\/Key>\s*<Code>NoSuchVersion<\/Code>/, bodyExcludes: ['<Deleted>'] },
      },
      get(`${P}/pre`, { status: 200, body: 'pre-versioning' }),
      versions('photos', [version('pre', 'pre-versioning', true, 'null')]),
    ],
  },
  {
    name: 'Delete Multiple without VersionId in a versioned bucket removes the current object; its history stays',
    steps: [
      bucket('photos'),
      ENABLE,
      put('photos', 'k', 'one'),
      put('photos', 'k', 'two'),
      {
        method: 'POST',
        url: `${P}/?delete`,
        body: del('<Object><Key>k</Key></Object>'),
        expect: { status: 200, body: /<Deleted>\s*<Key>k<\/Key>/ },
      },
      get(`${P}/k`, err(404, 'NoSuchKey')),
      versions('photos', [version('k', 'one', false)]),
    ],
  },

  // ---------------------------------------------------------------- access
  {
    name: 'anonymous on a public-read versioned bucket: object reads work; versioning and versions listing → 403',
    steps: [
      bucket('pub', 'public-read'),
      setVersioning('pub', 'Enabled'),
      put('pub', 'k', 'one'),
      get(`${PUB}/k`, { status: 200, body: 'one', headers: { 'x-svc-version-id': NUM } }, { auth: 'anon' }),
      get(`${PUB}/?versions`, err(403, 'AccessDenied'), { auth: 'anon' }),
      get(`${PUB}/?versioning`, err(403, 'AccessDenied'), { auth: 'anon' }),
      setVersioning('pub', 'Suspended', err(403, 'AccessDenied'), 'anon'),
      getVersioning('pub', 'Enabled'),
    ],
  },
  {
    name: 'another account: versioning and versions listing of root\'s bucket → 403, configuration unchanged',
    steps: [
      account('alice', ALICE.secret),
      bucket('photos'),
      ENABLE,
      put('photos', 'k', 'one'),
      setVersioning('photos', 'Suspended', err(403, 'AccessDenied'), ALICE),
      get(`${P}/?versioning`, err(403, 'AccessDenied'), { auth: ALICE }),
      get(`${P}/?versions`, err(403, 'AccessDenied'), { auth: ALICE }),
      get(`${P}/k?versionId=1`, err(403, 'AccessDenied'), { auth: ALICE }),
      getVersioning('photos', 'Enabled'),
    ],
  },
];
