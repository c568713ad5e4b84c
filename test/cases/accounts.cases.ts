// Accounts and ownership (docs/protocol.md, "Accounts" and "Who may do what"): the root account, PUT/DELETE /?account=…,
// GET /?accounts on the service host (root only), secrets never returned, buckets owned by the
// account that created them. Plain data: every case runs on a fresh service (only root exists);
// steps are signed as root unless `auth` says otherwise.
//
// Facts decided by the implementer, now in docs/protocol.md, "Accounts" (tested as given):
// ID 3–64 chars of A-Za-z0-9._~- else 400 InvalidArgument; SecretAccessKey 8–128 printable ASCII
// without spaces, required on create, kept when omitted on update; QuotaBytes absent = unlimited,
// not a non-negative integer → 400 InvalidArgument; malformed XML → 400 MalformedXML; DELETE:
// unknown → 404 NoSuchAccount, root → 400 InvalidArgument, owns buckets → 409 AccountNotEmpty;
// ListAccountsResult/Account{AccessKeyId,DisplayName,QuotaBytes?,UsedBytes,Root}.
import { bucket, put, type Case, type Expect, type Step } from './types.ts';
import { ALICE, account, err, etagOf, host } from './object-helpers.ts';

const SVC = 'http://svc.localhost';
const P = host('photos');
const PUB = host('pub');
const AB = host('alice-bkt');
const BOB = { accessKeyId: 'bob', secret: 'bob-secret-1' };

const denied = err(403, 'AccessDenied');

function esc(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
/** XML fragments in this order, optional whitespace between tags. */
function seq(...parts: string[]): RegExp {
  return new RegExp(parts.join('\\s*'));
}
function el(name: string, value: string): string {
  return `<${name}>${esc(value)}</${name}>`;
}
/** One <Account> entry of ListAccountsResult, QuotaBytes only when set. */
function entry(id: string, name: string, used: number, root: boolean, quota?: number): RegExp {
  return seq(
    '<Account>',
    el('AccessKeyId', id),
    el('DisplayName', name),
    ...(quota !== undefined ? [el('QuotaBytes', String(quota))] : []),
    el('UsedBytes', String(used)),
    el('Root', String(root)),
    '</Account>',
  );
}

/** Raw PUT /?account=… with the body as given. */
function putAccount(id: string, body: string, expect: Expect, auth?: Step['auth']): Step {
  return { method: 'PUT', url: `${SVC}/?account=${id}`, body, expect, ...(auth ? { auth } : {}) };
}
function accountXml(o: { secret?: string; name?: string; quota?: string }): string {
  return (
    '<Account>' +
    (o.secret !== undefined ? `<SecretAccessKey>${o.secret}</SecretAccessKey>` : '') +
    (o.name !== undefined ? `<DisplayName>${o.name}</DisplayName>` : '') +
    (o.quota !== undefined ? `<QuotaBytes>${o.quota}</QuotaBytes>` : '') +
    '</Account>'
  );
}
function listAccounts(expect: Expect, auth?: Step['auth']): Step {
  return { method: 'GET', url: `${SVC}/?accounts`, expect, ...(auth ? { auth } : {}) };
}
/** GET /?accounts must not mention this id at all. */
function notListed(id: string): Step {
  return listAccounts({ status: 200, bodyExcludes: [`<AccessKeyId>${id}</AccessKeyId>`] });
}
/** GET /?accounts lists root and nobody else. */
function onlyRoot(): Step {
  return listAccounts({
    status: 200,
    body: /<ListAccountsResult>\s*<Account>(?:(?!<Account>)[\s\S])*<AccessKeyId>svcadmin<\/AccessKeyId>(?:(?!<Account>)[\s\S])*<\/Account>\s*<\/ListAccountsResult>/,
  });
}
function deleteAccount(id: string, expect: Expect, auth?: Step['auth']): Step {
  return { method: 'DELETE', url: `${SVC}/?account=${id}`, expect, ...(auth ? { auth } : {}) };
}
/** A signed request with these credentials that only succeeds when they are valid: list own buckets. */
function canSign(creds: { accessKeyId: string; secret: string }): Step {
  return { method: 'GET', url: `${SVC}/`, auth: creds, expect: { status: 200, bodyIncludes: ['<ListAllMyBucketsResult'] } };
}
function cannotSign(creds: { accessKeyId: string; secret: string }): Step {
  return { method: 'GET', url: `${SVC}/`, auth: creds, expect: denied };
}

const XML_DECL = '^<\\?xml version="1\\.0" encoding="UTF-8"\\?>\\s*';

export const cases: Case[] = [
  // ---------------------------------------------------------------- root account and listing
  {
    name: 'a new database has exactly one account: root svcadmin (Root true, UsedBytes 0, no QuotaBytes, no secret)',
    steps: [
      listAccounts({
        status: 200,
        headers: { 'content-type': /^application\/xml/ },
        body: new RegExp(XML_DECL + '<ListAccountsResult>\\s*<Account>[\\s\\S]*</Account>\\s*</ListAccountsResult>\\s*$'),
        bodyExcludes: ['svcadmin-secret', 'SecretAccessKey', '<QuotaBytes>', '<Root>false</Root>'],
      }),
      // svcadmin's DisplayName is not fixed by the protocol: match any.
      listAccounts({
        status: 200,
        body: seq('<Account>', el('AccessKeyId', 'svcadmin'), '<DisplayName>[^<]*</DisplayName>', el('UsedBytes', '0'), el('Root', 'true'), '</Account>'),
      }),
      // root's secret is the documented one
      canSign({ accessKeyId: 'svcadmin', secret: 'svcadmin-secret' }),
      cannotSign({ accessKeyId: 'svcadmin', secret: 'svcadmin-secreT' }),
    ],
  },
  {
    name: 'PUT /?account creates an account (200, empty body); GET /?accounts lists it without its secret',
    steps: [
      putAccount('alice', accountXml({ secret: ALICE.secret, name: 'Alice', quota: '1000' }), { status: 200, body: '' }),
      putAccount('bob', accountXml({ secret: BOB.secret, name: 'Bob' }), { status: 200, body: '' }),
      listAccounts({
        status: 200,
        body: entry('alice', 'Alice', 0, false, 1000),
        bodyExcludes: [ALICE.secret, BOB.secret, 'svcadmin-secret', 'SecretAccessKey', 'Secret'],
      }),
      listAccounts({ status: 200, body: entry('bob', 'Bob', 0, false) }),
      listAccounts({ status: 200, body: /<AccessKeyId>svcadmin<\/AccessKeyId>/ }),
      canSign(ALICE),
      canSign(BOB),
      cannotSign({ accessKeyId: 'alice', secret: BOB.secret }),
    ],
  },
  {
    name: 'UsedBytes in GET /?accounts follows the bytes the account stores',
    steps: [
      account('alice', ALICE.secret),
      { ...bucket('alice-bkt'), auth: ALICE },
      { ...put('alice-bkt', 'a', '12345'), auth: ALICE },
      { ...put('alice-bkt', 'b', '1234567'), auth: ALICE },
      listAccounts({ status: 200, body: entry('alice', 'alice', 12, false) }),
      { method: 'DELETE', url: `${AB}/a`, auth: ALICE, expect: { status: 200 } },
      listAccounts({ status: 200, body: entry('alice', 'alice', 7, false) }),
      // root stored nothing
      listAccounts({ status: 200, body: seq(el('AccessKeyId', 'svcadmin'), '<DisplayName>[^<]*</DisplayName>', el('UsedBytes', '0')) }),
    ],
  },
  {
    name: 'the DisplayName is XML-escaped in the listing',
    steps: [
      putAccount('tom', accountXml({ secret: 'tom-secret', name: 'Tom &amp; Jerry &lt;3' }), { status: 200 }),
      listAccounts({ status: 200, body: seq(el('AccessKeyId', 'tom'), '<DisplayName>Tom &amp; Jerry &lt;3</DisplayName>') }),
    ],
  },
  {
    name: 'a secret with XML entities and punctuation is stored decoded and signs',
    steps: [
      putAccount('punct', accountXml({ secret: 'p@ss/w:rd+=&lt;&amp;!', name: 'p' }), { status: 200 }),
      canSign({ accessKeyId: 'punct', secret: 'p@ss/w:rd+=<&!' }),
      cannotSign({ accessKeyId: 'punct', secret: 'p@ss/w:rd+=&lt;&amp;!' }),
      listAccounts({ status: 200, bodyExcludes: ['p@ss'] }),
    ],
  },

  // ---------------------------------------------------------------- update
  {
    name: 'root can update its own DisplayName (secret kept when omitted); it stays root',
    steps: [
      putAccount('svcadmin', accountXml({ name: 'The Admin' }), { status: 200 }),
      listAccounts({ status: 200, body: entry('svcadmin', 'The Admin', 0, true) }),
      canSign({ accessKeyId: 'svcadmin', secret: 'svcadmin-secret' }),
      deleteAccount('svcadmin', err(400, 'InvalidArgument')),
    ],
  },

  {
    name: 'updating without SecretAccessKey keeps the secret; DisplayName and QuotaBytes are replaced',
    steps: [
      account('alice', ALICE.secret, 10),
      listAccounts({ status: 200, body: entry('alice', 'alice', 0, false, 10) }),
      putAccount('alice', accountXml({ name: 'Alice Two', quota: '20' }), { status: 200, body: '' }),
      canSign(ALICE),
      listAccounts({ status: 200, body: entry('alice', 'Alice Two', 0, false, 20) }),
      // QuotaBytes absent = unlimited, also on update
      putAccount('alice', accountXml({ name: 'Alice Three' }), { status: 200 }),
      listAccounts({ status: 200, body: entry('alice', 'Alice Three', 0, false), bodyExcludes: ['<QuotaBytes>'] }),
      canSign(ALICE),
    ],
  },
  {
    name: 'updating with a new secret: the old secret stops working, the new one works',
    steps: [
      account('alice', ALICE.secret),
      canSign(ALICE),
      putAccount('alice', accountXml({ secret: 'alice-new-secret', name: 'alice' }), { status: 200 }),
      cannotSign(ALICE),
      canSign({ accessKeyId: 'alice', secret: 'alice-new-secret' }),
    ],
  },
  {
    name: 'updating an account keeps its UsedBytes and its buckets',
    steps: [
      account('alice', ALICE.secret, 100),
      { ...bucket('alice-bkt'), auth: ALICE },
      { ...put('alice-bkt', 'a', '123456'), auth: ALICE },
      putAccount('alice', accountXml({ name: 'Renamed', quota: '50' }), { status: 200 }),
      listAccounts({ status: 200, body: entry('alice', 'Renamed', 6, false, 50) }),
      { method: 'GET', url: `${AB}/a`, auth: ALICE, expect: { status: 200, body: '123456' } },
    ],
  },

  // ---------------------------------------------------------------- validation
  {
    name: 'account IDs: 3 and 64 chars of A-Za-z0-9._~- are accepted',
    steps: [
      putAccount('abc', accountXml({ secret: 'abc-secret' }), { status: 200 }),
      putAccount('A.b_c~d-9', accountXml({ secret: 'abc-secret' }), { status: 200 }),
      putAccount('x'.repeat(64), accountXml({ secret: 'abc-secret' }), { status: 200 }),
      listAccounts({
        status: 200,
        bodyIncludes: ['<AccessKeyId>abc</AccessKeyId>', '<AccessKeyId>A.b_c~d-9</AccessKeyId>', `<AccessKeyId>${'x'.repeat(64)}</AccessKeyId>`],
      }),
      canSign({ accessKeyId: 'A.b_c~d-9', secret: 'abc-secret' }),
      canSign({ accessKeyId: 'x'.repeat(64), secret: 'abc-secret' }),
    ],
  },
  {
    name: 'account IDs that are too short, too long or have other characters → 400 InvalidArgument, nothing created',
    steps: [
      putAccount('ab', accountXml({ secret: 'abc-secret' }), err(400, 'InvalidArgument')),
      putAccount('x'.repeat(65), accountXml({ secret: 'abc-secret' }), err(400, 'InvalidArgument')),
      putAccount('', accountXml({ secret: 'abc-secret' }), err(400, 'InvalidArgument')),
      putAccount('al%20ice', accountXml({ secret: 'abc-secret' }), err(400, 'InvalidArgument')),
      putAccount('al%2Fice', accountXml({ secret: 'abc-secret' }), err(400, 'InvalidArgument')),
      putAccount('alice!', accountXml({ secret: 'abc-secret' }), err(400, 'InvalidArgument')),
      putAccount('al%3Aice', accountXml({ secret: 'abc-secret' }), err(400, 'InvalidArgument')),
      putAccount('%C3%A9lan', accountXml({ secret: 'abc-secret' }), err(400, 'InvalidArgument')),
      putAccount('al%3Cice%3E', accountXml({ secret: 'abc-secret' }), err(400, 'InvalidArgument')),
      onlyRoot(),
    ],
  },
  {
    name: 'SecretAccessKey: 8 and 128 printable ASCII chars accepted',
    steps: [
      putAccount('eight', accountXml({ secret: 'abcdefgh' }), { status: 200 }),
      putAccount('long', accountXml({ secret: 's'.repeat(128) }), { status: 200 }),
      canSign({ accessKeyId: 'eight', secret: 'abcdefgh' }),
      canSign({ accessKeyId: 'long', secret: 's'.repeat(128) }),
    ],
  },
  {
    name: 'SecretAccessKey too short, too long, with a space, a tab or non-ASCII → 400 InvalidArgument, nothing created',
    steps: [
      putAccount('short', accountXml({ secret: 'abcdefg' }), err(400, 'InvalidArgument')),
      putAccount('toolong', accountXml({ secret: 's'.repeat(129) }), err(400, 'InvalidArgument')),
      putAccount('spaced', accountXml({ secret: 'abcd efgh' }), err(400, 'InvalidArgument')),
      putAccount('tabbed', accountXml({ secret: 'abcd\tefgh' }), err(400, 'InvalidArgument')),
      putAccount('accent', accountXml({ secret: 'sécret-123' }), err(400, 'InvalidArgument')),
      putAccount('empty', accountXml({ secret: '' }), err(400, 'InvalidArgument')),
      onlyRoot(),
    ],
  },
  {
    name: 'creating an account without SecretAccessKey → 400 InvalidArgument',
    steps: [
      putAccount('nosecret', accountXml({ name: 'n', quota: '10' }), err(400, 'InvalidArgument')),
      notListed('nosecret'),
    ],
  },
  {
    name: 'an invalid secret on update → 400 InvalidArgument, the old secret stays',
    steps: [
      account('alice', ALICE.secret),
      putAccount('alice', accountXml({ secret: 'short' }), err(400, 'InvalidArgument')),
      canSign(ALICE),
    ],
  },
  {
    name: 'QuotaBytes 0 is accepted (nothing but empty objects fit)',
    steps: [
      account('alice', ALICE.secret, 0),
      listAccounts({ status: 200, body: entry('alice', 'alice', 0, false, 0) }),
      { ...bucket('alice-bkt'), auth: ALICE },
      { ...put('alice-bkt', 'empty', ''), auth: ALICE },
      { method: 'PUT', url: `${AB}/one`, body: '1', auth: ALICE, expect: err(403, 'QuotaExceeded') },
    ],
  },
  {
    name: 'QuotaBytes that is not a non-negative integer → 400 InvalidArgument, nothing created or changed',
    steps: [
      putAccount('neg', accountXml({ secret: 'neg-secret', quota: '-1' }), err(400, 'InvalidArgument')),
      putAccount('frac', accountXml({ secret: 'frac-secret', quota: '1.5' }), err(400, 'InvalidArgument')),
      putAccount('word', accountXml({ secret: 'word-secret', quota: 'lots' }), err(400, 'InvalidArgument')),
      // present but empty is not a non-negative integer (absent would mean unlimited)
      putAccount('blank', accountXml({ secret: 'blank-secret', quota: '' }), err(400, 'InvalidArgument')),
      onlyRoot(),
      account('alice', ALICE.secret, 10),
      putAccount('alice', accountXml({ quota: '-5' }), err(400, 'InvalidArgument')),
      listAccounts({ status: 200, body: entry('alice', 'alice', 0, false, 10) }),
    ],
  },
  {
    name: 'malformed XML → 400 MalformedXML, nothing created',
    steps: [
      putAccount('broken', '<Account><SecretAccessKey>broken-secret</SecretAccessKey>', err(400, 'MalformedXML')),
      putAccount('broken', 'not xml at all', err(400, 'MalformedXML')),
      putAccount('broken', '<Account><SecretAccessKey>broken-secret</Account></SecretAccessKey>', err(400, 'MalformedXML')),
      notListed('broken'),
    ],
  },
  {
    name: 'an error response never echoes the secret that was sent',
    steps: [
      putAccount('leak', accountXml({ secret: 'leaky-secret-123', quota: 'bad' }), {
        ...err(400, 'InvalidArgument'),
        bodyExcludes: ['leaky-secret-123'],
      }),
      putAccount('x', accountXml({ secret: 'leaky-secret-123' }), { ...err(400, 'InvalidArgument'), bodyExcludes: ['leaky-secret-123'] }),
    ],
  },

  // ---------------------------------------------------------------- delete
  {
    name: 'DELETE /?account removes an account (200); its credentials stop working',
    steps: [
      account('alice', ALICE.secret),
      canSign(ALICE),
      deleteAccount('alice', { status: 200 }),
      notListed('alice'),
      cannotSign(ALICE),
      deleteAccount('alice', err(404, 'NoSuchAccount')),
    ],
  },
  {
    name: 'DELETE of an unknown account → 404 NoSuchAccount',
    steps: [deleteAccount('nobody', err(404, 'NoSuchAccount'))],
  },
  {
    name: 'DELETE of the root account → 400 InvalidArgument; root keeps working',
    steps: [
      deleteAccount('svcadmin', err(400, 'InvalidArgument')),
      listAccounts({ status: 200, body: seq(el('AccessKeyId', 'svcadmin'), '[\\s\\S]*', el('Root', 'true')) }),
      canSign({ accessKeyId: 'svcadmin', secret: 'svcadmin-secret' }),
    ],
  },
  {
    name: 'DELETE of an account that still owns a bucket (even an empty one) → 409 AccountNotEmpty; after the bucket is gone → 200',
    steps: [
      account('alice', ALICE.secret),
      { ...bucket('alice-bkt'), auth: ALICE },
      { ...put('alice-bkt', 'a', 'data'), auth: ALICE },
      deleteAccount('alice', err(409, 'AccountNotEmpty')),
      { method: 'GET', url: `${AB}/a`, auth: ALICE, expect: { status: 200, body: 'data' } },
      { method: 'DELETE', url: `${AB}/a`, auth: ALICE, expect: { status: 200 } },
      deleteAccount('alice', err(409, 'AccountNotEmpty')),
      { method: 'DELETE', url: `${AB}/`, auth: ALICE, expect: { status: 200 } },
      deleteAccount('alice', { status: 200 }),
      notListed('alice'),
    ],
  },
  {
    name: 'an account created again after deletion starts with UsedBytes 0 and the new secret',
    steps: [
      account('alice', ALICE.secret),
      { ...bucket('alice-bkt'), auth: ALICE },
      { ...put('alice-bkt', 'a', 'data'), auth: ALICE },
      { method: 'DELETE', url: `${AB}/a`, auth: ALICE, expect: { status: 200 } },
      { method: 'DELETE', url: `${AB}/`, auth: ALICE, expect: { status: 200 } },
      deleteAccount('alice', { status: 200 }),
      account('alice', 'second-secret'),
      listAccounts({ status: 200, body: entry('alice', 'alice', 0, false) }),
      cannotSign(ALICE),
      canSign({ accessKeyId: 'alice', secret: 'second-secret' }),
    ],
  },

  // ---------------------------------------------------------------- root only
  {
    name: 'a non-root account gets 403 AccessDenied on every account call, and nothing changes',
    steps: [
      account('alice', ALICE.secret, 10),
      account('bob', BOB.secret),
      putAccount('carol', accountXml({ secret: 'carol-secret' }), denied, ALICE),
      putAccount('alice', accountXml({ quota: '1000000' }), denied, ALICE), // raise her own quota
      putAccount('bob', accountXml({ secret: 'stolen-secret' }), denied, ALICE), // take over bob
      putAccount('svcadmin', accountXml({ secret: 'stolen-secret' }), denied, ALICE), // take over root
      listAccounts({ ...denied, bodyExcludes: ['<ListAccountsResult', 'svcadmin'] }, ALICE),
      deleteAccount('bob', denied, ALICE),
      deleteAccount('alice', denied, ALICE),
      deleteAccount('svcadmin', denied, ALICE),
      deleteAccount('nobody', denied, ALICE),
      // the caller is checked before the input: invalid input from a non-root caller is still 403
      putAccount('ab', 'not xml', denied, ALICE),
      putAccount('dave', accountXml({ secret: 'short' }), denied, ALICE),
      putAccount('dave', accountXml({ secret: 'dave-secret', quota: '-1' }), denied, 'anon'),
      notListed('carol'),
      listAccounts({ status: 200, body: entry('alice', 'alice', 0, false, 10) }),
      canSign(BOB),
      canSign({ accessKeyId: 'svcadmin', secret: 'svcadmin-secret' }),
    ],
  },
  {
    name: 'anonymous account calls → 403 AccessDenied, nothing changes',
    steps: [
      account('alice', ALICE.secret),
      putAccount('carol', accountXml({ secret: 'carol-secret' }), denied, 'anon'),
      listAccounts(denied, 'anon'),
      deleteAccount('alice', denied, 'anon'),
      notListed('carol'),
      canSign(ALICE),
    ],
  },
  {
    name: 'account calls with a forged root signature → 403 AccessDenied, nothing changes',
    steps: [
      putAccount('carol', accountXml({ secret: 'carol-secret' }), denied, { accessKeyId: 'svcadmin', secret: 'guessed-secret' }),
      putAccount('carol', accountXml({ secret: 'carol-secret' }), denied, { header: 'SVC svcadmin:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' }),
      listAccounts(denied, { accessKeyId: 'svcadmin', secret: 'guessed-secret' }),
      notListed('carol'),
    ],
  },

  // ---------------------------------------------------------------- ownership
  {
    name: 'buckets belong to their creator: each account lists only its own buckets',
    steps: [
      account('alice', ALICE.secret),
      bucket('photos'),
      { ...bucket('alice-bkt'), auth: ALICE },
      {
        method: 'GET',
        url: `${SVC}/`,
        auth: ALICE,
        expect: { status: 200, bodyIncludes: ['<Name>alice-bkt</Name>', '<ID>alice</ID>'], bodyExcludes: ['<Name>photos</Name>'] },
      },
      {
        method: 'GET',
        url: `${SVC}/`,
        expect: { status: 200, bodyIncludes: ['<Name>photos</Name>', '<ID>svcadmin</ID>'], bodyExcludes: ['<Name>alice-bkt</Name>'] },
      },
    ],
  },
  {
    name: 'a bucket name taken by another account → 409 BucketAlreadyExists; the bucket keeps its owner',
    steps: [
      account('alice', ALICE.secret),
      bucket('photos'),
      put('photos', 'k', 'root data'),
      { method: 'PUT', url: `${P}/`, auth: ALICE, expect: err(409, 'BucketAlreadyExists') },
      { method: 'GET', url: `${P}/k`, auth: ALICE, expect: denied },
      { method: 'GET', url: `${P}/k`, expect: { status: 200, body: 'root data' } },
      { method: 'GET', url: `${SVC}/`, auth: ALICE, expect: { status: 200, bodyExcludes: ['<Name>photos</Name>'] } },
    ],
  },
  {
    // docs/protocol.md, "Who may do what": only the bucket owner (the account that created it) may
    // act on it — root is not exempt.
    name: 'root is not the owner of another account\'s bucket: 403 AccessDenied',
    steps: [
      account('alice', ALICE.secret),
      { ...bucket('alice-bkt'), auth: ALICE },
      { ...put('alice-bkt', 'a', 'alice data'), auth: ALICE },
      { method: 'GET', url: `${AB}/a`, expect: denied },
      { method: 'PUT', url: `${AB}/a`, body: 'root was here', expect: denied },
      { method: 'DELETE', url: `${AB}/a`, expect: denied },
      { method: 'GET', url: `${AB}/`, expect: denied },
      { method: 'DELETE', url: `${AB}/`, expect: denied },
      { method: 'GET', url: `${AB}/a`, auth: ALICE, expect: { status: 200, body: 'alice data', headers: { etag: etagOf('alice data') } } },
    ],
  },
  {
    name: 'another account may read objects of a public-read bucket, and nothing else',
    steps: [
      account('alice', ALICE.secret),
      bucket('pub', 'public-read'),
      put('pub', 'k', 'public data'),
      { method: 'GET', url: `${PUB}/k`, auth: ALICE, expect: { status: 200, body: 'public data' } },
      { method: 'HEAD', url: `${PUB}/k`, auth: ALICE, expect: { status: 200, headers: { etag: etagOf('public data') } } },
      { method: 'PUT', url: `${PUB}/k`, body: 'x', auth: ALICE, expect: denied },
      { method: 'DELETE', url: `${PUB}/k`, auth: ALICE, expect: denied },
      { method: 'GET', url: `${PUB}/`, auth: ALICE, expect: denied },
      { method: 'PUT', url: `${PUB}/?acl`, headers: { 'x-svc-acl': 'private' }, auth: ALICE, expect: denied },
      { method: 'GET', url: `${PUB}/k`, expect: { status: 200, body: 'public data' } },
      { method: 'GET', url: `${PUB}/?acl`, expect: { status: 200, headers: { 'x-svc-acl': 'public-read' } } },
    ],
  },
  {
    name: 'copy checks read access on the source and ownership of the destination',
    steps: [
      account('alice', ALICE.secret),
      bucket('photos'),
      bucket('pub', 'public-read'),
      put('photos', 'secret', 'private data'),
      put('pub', 'open', 'public data'),
      { ...bucket('alice-bkt'), auth: ALICE },
      { ...put('alice-bkt', 'mine', 'alice data'), auth: ALICE },
      // readable source (public-read), own destination → 200
      { method: 'PUT', url: `${AB}/c1`, headers: { 'x-svc-copy-source': '/pub/open' }, auth: ALICE, expect: { status: 200 } },
      { method: 'GET', url: `${AB}/c1`, auth: ALICE, expect: { status: 200, body: 'public data', headers: { etag: etagOf('public data') } } },
      // unreadable source, own destination → 403
      { method: 'PUT', url: `${AB}/c2`, headers: { 'x-svc-copy-source': '/photos/secret' }, auth: ALICE, expect: denied },
      { method: 'GET', url: `${AB}/c2`, auth: ALICE, expect: err(404, 'NoSuchKey') },
      // own source, destination owned by root (even public-read) → 403
      { method: 'PUT', url: `${PUB}/c3`, headers: { 'x-svc-copy-source': '/alice-bkt/mine' }, auth: ALICE, expect: denied },
      { method: 'PUT', url: `${P}/c3`, headers: { 'x-svc-copy-source': '/alice-bkt/mine' }, auth: ALICE, expect: denied },
      { method: 'GET', url: `${PUB}/c3`, expect: err(404, 'NoSuchKey') },
      { method: 'GET', url: `${P}/c3`, expect: err(404, 'NoSuchKey') },
      // root cannot copy out of alice's private bucket either
      { method: 'PUT', url: `${P}/c4`, headers: { 'x-svc-copy-source': '/alice-bkt/mine' }, expect: denied },
      { method: 'GET', url: `${P}/c4`, expect: err(404, 'NoSuchKey') },
    ],
  },
  {
    name: 'move inside another account\'s public-read bucket → 403 AccessDenied, source stays',
    steps: [
      account('alice', ALICE.secret),
      bucket('pub', 'public-read'),
      put('pub', 'open', 'public data'),
      { method: 'PUT', url: `${PUB}/moved`, headers: { 'x-svc-move-source': '/pub/open' }, auth: ALICE, expect: denied },
      { method: 'GET', url: `${PUB}/open`, expect: { status: 200, body: 'public data' } },
      { method: 'GET', url: `${PUB}/moved`, expect: err(404, 'NoSuchKey') },
    ],
  },
];
