// Delete Multiple Objects: POST /?delete (docs/protocol.md, "Delete Multiple Objects").
import { bucket, put, type Case, type Step } from './types.ts';
import { ALICE, COMMON, account, enc, err, gone, has, host, md5b64, md5hex } from './object-helpers.ts';

const P = host('photos');
const DEL = `${P}/?delete`;

const xmlEsc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const reEsc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\\/-]/g, '\\$&');

type Obj = string | { key: string; versionId: string };
function delXml(objs: Obj[], quiet?: boolean): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?><Delete>' +
    (quiet === undefined ? '' : `<Quiet>${quiet}</Quiet>`) +
    objs
      .map((o) =>
        typeof o === 'string'
          ? `<Object><Key>${xmlEsc(o)}</Key></Object>`
          : `<Object><Key>${xmlEsc(o.key)}</Key><VersionId>${o.versionId}</VersionId></Object>`,
      )
      .join('') +
    '</Delete>'
  );
}

/** A lookahead that requires a <Deleted> entry holding this (already XML-escaped, regex-escaped) key. */
const deletedLA = (keyRe: string): string => `(?=[\\s\\S]*<Deleted>(?:(?!</Deleted>)[\\s\\S])*<Key>${keyRe}</Key>)`;
/** A lookahead that requires an <Error> entry with this key and code and a Message. */
const errorLA = (keyRe: string, code: string): string =>
  `(?=[\\s\\S]*<Error>(?:(?!</Error>)[\\s\\S])*<Key>${keyRe}</Key>(?:(?!</Error>)[\\s\\S])*<Code>${code}</Code>)` +
  `(?=[\\s\\S]*<Error>(?:(?!</Error>)[\\s\\S])*<Message>)`;

/** Body regex: XML declaration, DeleteResult root, the given Deleted / Error entries. */
function resultRe(deleted: string[], errors: [string, string][] = [], deletedIsRe = false): RegExp {
  const k = (s: string): string => (deletedIsRe ? s : reEsc(xmlEsc(s)));
  return new RegExp(
    '^<\\?xml version="1\\.0" encoding="UTF-8"\\?>\\s*' +
      deleted.map((d) => deletedLA(k(d))).join('') +
      errors.map(([key, code]) => errorLA(reEsc(xmlEsc(key)), code)).join('') +
      '\\s*<DeleteResult>[\\s\\S]*</DeleteResult>\\s*$',
  );
}

function post(body: string, expect: Step['expect'], headers: Record<string, string> = {}): Step {
  return { method: 'POST', url: DEL, body, headers, expect };
}

const keys1000 = Array.from({ length: 1000 }, (_, i) => `k${String(i).padStart(4, '0')}`);
const keys1001 = [...keys1000, 'k1000'];

// over 2 MB (2 MiB + some) of valid XML holding a single Object
const hugeBody = `<?xml version="1.0" encoding="UTF-8"?><Delete>${' '.repeat(2 * 1024 * 1024 + 100)}<Object><Key>a</Key></Object></Delete>`;
// well under 2 MB but large: padding inside the document, still valid
const bigOkBody = `<?xml version="1.0" encoding="UTF-8"?><Delete>${' '.repeat(1_900_000)}<Object><Key>a</Key></Object></Delete>`;

const md5Body = delXml(['a']);

export const cases: Case[] = [
  {
    name: 'verbose: every key is reported Deleted, including missing keys; the objects are gone, others stay',
    steps: [
      bucket('photos'),
      put('photos', 'a.txt', 'a'),
      put('photos', 'dir/b.txt', 'b'),
      put('photos', 'c.txt', 'c'),
      post(delXml(['a.txt', 'dir/b.txt', 'never-existed'], false), {
        status: 200,
        headers: { ...COMMON, 'content-type': /^application\/xml/ },
        body: resultRe(['a.txt', 'dir/b.txt', 'never-existed']),
        bodyExcludes: ['<Error>', 'xmlns'],
      }),
      gone('photos', 'a.txt'),
      gone('photos', 'dir/b.txt'),
      has('photos', 'c.txt', 'c'),
    ],
  },
  {
    name: 'no Quiet element means verbose',
    steps: [
      bucket('photos'),
      put('photos', 'a', 'a'),
      post(delXml(['a']), { status: 200, body: resultRe(['a']) }),
      gone('photos', 'a'),
    ],
  },
  {
    name: 'quiet with no failure → 200 with an empty body',
    steps: [
      bucket('photos'),
      put('photos', 'a', 'a'),
      put('photos', 'b', 'b'),
      post(delXml(['a', 'b', 'missing'], true), { status: 200, body: '', headers: { ...COMMON } }),
      gone('photos', 'a'),
      gone('photos', 'b'),
    ],
  },
  {
    name: 'quiet lists only Error entries (NoSuchVersion for a version that does not exist)',
    steps: [
      bucket('photos'),
      put('photos', 'a', 'a'),
      put('photos', 'b', 'b'),
      post(delXml(['a', { key: 'b', versionId: '987654' }], true), {
        status: 200,
        body: resultRe([], [['b', 'NoSuchVersion']]),
        bodyExcludes: ['<Deleted>'],
      }),
      gone('photos', 'a'),
      // the failed entry deleted nothing
      has('photos', 'b', 'b'),
    ],
  },
  {
    name: 'verbose with a missing VersionId: Deleted for the others, Error NoSuchVersion for that one',
    steps: [
      bucket('photos'),
      put('photos', 'a', 'a'),
      put('photos', 'b', 'b'),
      post(delXml(['a', { key: 'b', versionId: '987654' }], false), {
        status: 200,
        body: resultRe(['a'], [['b', 'NoSuchVersion']]),
      }),
      gone('photos', 'a'),
      has('photos', 'b', 'b'),
    ],
  },
  {
    name: 'NoSuchVersion also for a VersionId of a key that does not exist at all',
    steps: [
      bucket('photos'),
      post(delXml([{ key: 'ghost', versionId: '1' }], true), {
        status: 200,
        body: resultRe([], [['ghost', 'NoSuchVersion']]),
      }),
    ],
  },
  {
    name: 'exactly 1000 objects → 200, all reported and deleted',
    steps: [
      bucket('photos'),
      put('photos', 'k0000', 'first'),
      put('photos', 'k0999', 'last'),
      put('photos', 'k1000', 'outside'),
      post(delXml(keys1000, false), { status: 200, body: resultRe(['k0000', 'k0500', 'k0999']), bodyExcludes: ['<Error>', 'k1000'] }),
      gone('photos', 'k0000'),
      gone('photos', 'k0999'),
      has('photos', 'k1000', 'outside'),
    ],
  },
  {
    name: '1001 objects → 400 MalformedXML and nothing deleted',
    steps: [
      bucket('photos'),
      put('photos', 'k0000', 'first'),
      put('photos', 'k1000', 'last'),
      post(delXml(keys1001, false), err(400, 'MalformedXML')),
      has('photos', 'k0000', 'first'),
      has('photos', 'k1000', 'last'),
    ],
  },
  {
    name: 'no Object element → 400 MalformedXML',
    steps: [
      bucket('photos'),
      post('<?xml version="1.0" encoding="UTF-8"?><Delete><Quiet>true</Quiet></Delete>', err(400, 'MalformedXML')),
      post('<Delete></Delete>', err(400, 'MalformedXML')),
      post('<Delete/>', err(400, 'MalformedXML')),
    ],
  },
  {
    name: 'unparsable body → 400 MalformedXML and nothing deleted',
    steps: [
      bucket('photos'),
      put('photos', 'a', 'a'),
      post('<Delete><Object><Key>a</Key></Object>', err(400, 'MalformedXML')),
      post('<Delete><Object><Key>a</Key></Object></Delete', err(400, 'MalformedXML')),
      post('<Delete><Object><Key>a</Kex></Object></Delete>', err(400, 'MalformedXML')),
      post('this is not xml', err(400, 'MalformedXML')),
      has('photos', 'a', 'a'),
    ],
  },
  {
    name: 'empty body → 400 MalformedXML',
    steps: [bucket('photos'), post('', err(400, 'MalformedXML'))],
  },
  {
    // our choice: a document whose root is not Delete is malformed for this operation (S3: MalformedXML).
    name: 'wrong root element → 400 MalformedXML, nothing deleted',
    steps: [
      bucket('photos'),
      put('photos', 'a', 'a'),
      post('<Remove><Object><Key>a</Key></Object></Remove>', err(400, 'MalformedXML')),
      has('photos', 'a', 'a'),
    ],
  },
  {
    name: 'body over 2 MB → 400 MalformedXML, nothing deleted',
    steps: [bucket('photos'), put('photos', 'a', 'a'), post(hugeBody, err(400, 'MalformedXML')), has('photos', 'a', 'a')],
  },
  {
    name: 'body of 1.9 MB (under the 2 MB limit) → 200',
    steps: [bucket('photos'), put('photos', 'a', 'a'), post(bigOkBody, { status: 200, body: resultRe(['a']) }), gone('photos', 'a')],
  },
  {
    name: 'keys with XML entities (&amp; &lt; &#233; &#xE9; &quot;) are decoded; the result escapes them',
    steps: [
      bucket('photos'),
      put('photos', enc('Tom & Jerry <é>.txt'), 'cartoon'),
      put('photos', enc('say "é"'), 'quote'),
      post(
        '<?xml version="1.0" encoding="UTF-8"?><Delete><Quiet>false</Quiet>' +
          '<Object><Key>Tom &amp; Jerry &lt;&#233;&gt;.txt</Key></Object>' +
          '<Object><Key>say &quot;&#xE9;&quot;</Key></Object>' +
          '</Delete>',
        {
          status: 200,
          body: resultRe(
            ['Tom &amp; Jerry &lt;(?:é|&#233;|&#xE9;)(?:>|&gt;)\\.txt', 'say (?:"|&quot;)(?:é|&#233;|&#xE9;)(?:"|&quot;)'],
            [],
            true,
          ),
          bodyExcludes: ['<Error>'],
        },
      ),
      gone('photos', enc('Tom & Jerry <é>.txt')),
      gone('photos', enc('say "é"')),
    ],
  },
  {
    name: 'keys in the XML are literal: + is not a space, %20 is not decoded',
    steps: [
      bucket('photos'),
      put('photos', enc('my photos/a+b.txt'), 'plus'),
      put('photos', enc('my photos/a b.txt'), 'space'),
      put('photos', enc('x%20y'), 'percent'),
      put('photos', enc('x y'), 'xy'),
      post(delXml(['my photos/a+b.txt', 'x%20y'], true), { status: 200, body: '' }),
      gone('photos', enc('my photos/a+b.txt')),
      has('photos', enc('my photos/a b.txt'), 'space'),
      gone('photos', enc('x%20y')),
      has('photos', enc('x y'), 'xy'),
    ],
  },
  {
    // our choice: a namespaced request document (what S3 clients send) is accepted.
    name: 'a request document with the S3 namespace is accepted',
    steps: [
      bucket('photos'),
      put('photos', 'a', 'a'),
      post(
        '<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Object><Key>a</Key></Object></Delete>',
        { status: 200, body: resultRe(['a']) },
      ),
      gone('photos', 'a'),
    ],
  },
  {
    name: 'missing Content-Length → 411 MissingContentLength, nothing deleted',
    nodeOnly: true,
    steps: [
      bucket('photos'),
      put('photos', 'a', 'a'),
      { ...post(delXml(['a']), err(411, 'MissingContentLength')), contentLength: 'omit' },
      has('photos', 'a', 'a'),
    ],
  },
  {
    name: 'matching Content-MD5 (base64 and hex) → 200',
    steps: [
      bucket('photos'),
      put('photos', 'a', 'a'),
      post(md5Body, { status: 200, body: resultRe(['a']) }, { 'Content-MD5': md5b64(md5Body) }),
      gone('photos', 'a'),
      put('photos', 'a', 'a'),
      post(md5Body, { status: 200, body: resultRe(['a']) }, { 'Content-MD5': md5hex(md5Body) }),
      gone('photos', 'a'),
    ],
  },
  {
    name: 'mismatching Content-MD5 → 400 BadDigest, nothing deleted',
    steps: [
      bucket('photos'),
      put('photos', 'a', 'a'),
      post(md5Body, err(400, 'BadDigest'), { 'Content-MD5': md5b64('other body') }),
      has('photos', 'a', 'a'),
    ],
  },
  {
    name: 'Content-MD5 in neither form → 400 InvalidDigest, nothing deleted',
    steps: [
      bucket('photos'),
      put('photos', 'a', 'a'),
      post(md5Body, err(400, 'InvalidDigest'), { 'Content-MD5': 'xyz' }),
      has('photos', 'a', 'a'),
    ],
  },
  {
    name: 'missing bucket → 404 NoSuchBucket',
    steps: [
      bucket('photos'),
      { method: 'POST', url: `${host('no-such-bucket')}/?delete`, body: delXml(['a']), expect: err(404, 'NoSuchBucket') },
    ],
  },
  {
    name: 'anonymous → 403 AccessDenied, also on a public-read bucket; nothing deleted',
    steps: [
      bucket('photos'),
      bucket('public', 'public-read'),
      put('photos', 'a', 'a'),
      put('public', 'a', 'a'),
      { ...post(delXml(['a']), err(403, 'AccessDenied')), auth: 'anon' },
      {
        method: 'POST',
        url: `${host('public')}/?delete`,
        body: delXml(['a']),
        auth: 'anon',
        expect: err(403, 'AccessDenied'),
      },
      has('photos', 'a', 'a'),
      has('public', 'a', 'a'),
    ],
  },
  {
    name: 'another account → 403 AccessDenied, nothing deleted',
    steps: [
      bucket('photos'),
      account('alice', ALICE.secret),
      put('photos', 'a', 'a'),
      { ...post(delXml(['a']), err(403, 'AccessDenied')), auth: ALICE },
      has('photos', 'a', 'a'),
    ],
  },
];
