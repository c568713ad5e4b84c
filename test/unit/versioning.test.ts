// Versioning through handle(), where the version ids matter (docs/protocol.md, "Versioning" and
// "Buckets"): history on every replacing write (PUT, Copy, Move destination, Complete) with ids
// increasing per bucket, x-svc-version-id, GET/HEAD ?versionId, DELETE keeps history, VersionId in
// Delete Multiple, Suspended, and GET /?versions paging checked against a model built here from
// what the requests returned.
import { describe, it, expect, beforeAll } from 'vitest';
import { createHash } from 'node:crypto';
import { newService, send, errorCode, type SendOptions } from '../support/service.ts';
import { STORE_KINDS, contents, type StoreKind } from '../support/stores.ts';

type Svc = Awaited<ReturnType<typeof newService>>;
type Res = Awaited<ReturnType<typeof send>>;

const SVC = 'http://svc.localhost';
const host = (b: string): string => `http://${b}.svc.localhost`;
const B = host('photos');
const md5 = (s: string | Uint8Array): string => createHash('md5').update(s).digest('hex');
const tag = (text: string, name: string): string | undefined => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];
const ENABLED = '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>';
const SUSPENDED = '<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MIN_PART = 16 * 1024;

interface T {
  svc: Svc;
  call(method: string, url: string, o?: SendOptions): Promise<Res>;
  ok(method: string, url: string, o?: SendOptions): Promise<Res>;
  /** PUT that must succeed; returns its x-svc-version-id (null when absent). */
  put(key: string, body: string, b?: string, headers?: Record<string, string>): Promise<string | null>;
  versioning(status: 'Enabled' | 'Suspended', b?: string): Promise<void>;
}

async function service(buckets: string[] = ['photos'], enable = true): Promise<T> {
  const svc = await newService({ kind });
  const call = (method: string, url: string, o: SendOptions = {}) => send(svc.handle, method, url, o);
  const ok = async (method: string, url: string, o: SendOptions = {}) => {
    const r = await call(method, url, o);
    expect(r.status, `${method} ${url}: ${r.text}`).toBe(200);
    return r;
  };
  const t: T = {
    svc,
    call,
    ok,
    async put(key, body, b = 'photos', headers = {}) {
      return (await ok('PUT', `${host(b)}/${key}`, { body, headers })).headers.get('x-svc-version-id');
    },
    async versioning(status, b = 'photos') {
      await ok('PUT', `${host(b)}/?versioning`, { body: status === 'Enabled' ? ENABLED : SUSPENDED });
    },
  };
  for (const b of buckets) {
    await ok('PUT', `${host(b)}/`);
    if (enable) await t.versioning('Enabled', b);
  }
  return t;
}

interface Listed {
  key: string;
  id: string;
  latest: boolean;
  etag: string;
  size: number;
  lastModified: string;
}
const unescapeXml = (s: string | undefined): string | undefined =>
  s?.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
function parseVersions(text: string) {
  const entries: Listed[] = [...text.matchAll(/<Version>([\s\S]*?)<\/Version>/g)].map((m) => ({
    key: unescapeXml(tag(m[1]!, 'Key'))!,
    id: tag(m[1]!, 'VersionId')!,
    latest: tag(m[1]!, 'IsLatest') === 'true',
    etag: tag(m[1]!, 'ETag')!.replace(/&quot;/g, '"'),
    size: Number(tag(m[1]!, 'Size')),
    lastModified: tag(m[1]!, 'LastModified')!,
  }));
  return {
    entries,
    truncated: tag(text, 'IsTruncated') === 'true',
    nextMarker: unescapeXml(tag(text, 'NextMarker')),
    nextVersionIdMarker: tag(text, 'NextVersionIdMarker'),
  };
}
async function listAll(t: T, b = 'photos', query = ''): Promise<Listed[]> {
  const r = await t.ok('GET', `${host(b)}/?versions${query}`);
  const p = parseVersions(r.text);
  expect(p.truncated).toBe(false);
  return p.entries;
}
/** [key, id, latest] of every listed version, in order. */
const brief = (xs: Listed[]) => xs.map((x) => [x.key, x.id, x.latest] as const);

const num = (id: string | null | undefined): number => {
  expect(id ?? '').toMatch(/^\d+$/);
  return Number(id);
};

async function head(t: T, key: string, versionId?: string, b = 'photos') {
  return t.call('HEAD', `${host(b)}/${key}${versionId !== undefined ? `?versionId=${versionId}` : ''}`);
}
/** The current versionId of a key, from HEAD. */
async function currentId(t: T, key: string, b = 'photos'): Promise<number> {
  const h = await head(t, key, undefined, b);
  expect(h.status).toBe(200);
  return num(h.headers.get('x-svc-version-id'));
}
/** GET and HEAD ?versionId must both show exactly this version. */
async function expectVersion(t: T, key: string, id: string | number, body: string, etag = md5(body), b = 'photos') {
  const g = await t.call('GET', `${host(b)}/${key}?versionId=${id}`);
  expect(g.status, g.text).toBe(200);
  expect(g.text).toBe(body);
  expect(g.headers.get('etag')).toBe(`"${etag}"`);
  expect(g.headers.get('x-svc-version-id')).toBe(String(id));
  const h = await head(t, key, String(id), b);
  expect(h.status).toBe(200);
  expect(h.text).toBe('');
  expect(h.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
  expect(h.headers.get('etag')).toBe(`"${etag}"`);
  expect(h.headers.get('x-svc-version-id')).toBe(String(id));
}
async function expectNoVersion(t: T, key: string, id: string | number, b = 'photos') {
  const g = await t.call('GET', `${host(b)}/${key}?versionId=${id}`);
  expect(g.status, g.text).toBe(404);
  expect(errorCode(g.text)).toBe('NoSuchVersion');
  const h = await head(t, key, String(id), b);
  expect(h.status).toBe(404);
  expect(h.text).toBe('');
}
async function bodyCount(t: T): Promise<number> {
  return (await contents(t.svc.store)).bodies.length;
}
async function usedBytes(t: T, id = 'svcadmin'): Promise<number> {
  const r = await t.ok('GET', `${SVC}/?accounts`);
  const m = new RegExp(`<AccessKeyId>${id}</AccessKeyId>[\\s\\S]*?<UsedBytes>(\\d+)</UsedBytes>`).exec(r.text);
  return Number(m![1]);
}
/** Multipart upload of `parts` to key; returns the Complete response. */
async function multipart(t: T, key: string, parts: string[], b = 'photos'): Promise<Res> {
  const init = await t.ok('POST', `${host(b)}/${key}?uploads`);
  const id = tag(init.text, 'UploadId')!;
  for (const [i, p] of parts.entries()) await t.ok('PUT', `${host(b)}/${key}?partNumber=${i + 1}&uploadId=${id}`, { body: p });
  return t.ok('POST', `${host(b)}/${key}?uploadId=${id}`, {
    body:
      '<CompleteMultipartUpload>' +
      parts.map((p, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>"${md5(p)}"</ETag></Part>`).join('') +
      '</CompleteMultipartUpload>',
  });
}
/** docs/protocol.md, "ETags and Content-MD5": md5hex(e1 + "-" + … + eN + "-") + "-1". */
const multipartEtag = (parts: string[]): string => md5(parts.map((p) => `${md5(p)}-`).join('')) + '-1';

/** The store the tests below run on: each describe.each round sets it before its tests. */
let kind: StoreKind = 'idb';

describe.each(STORE_KINDS)('%s store', (storeKind) => {
  beforeAll(() => {
    kind = storeKind;
  });

  // ------------------------------------------------------------------------------------------------
  describe('every replacing write adds history with increasing ids', () => {
    it('PUT, Copy, Move destination and Complete each push the previous object into the history', async () => {
      const t = await service();
      const id1 = num(await t.put('k', 'first'));
      const id2 = num(await t.put('k', 'second!'));
      expect(id2).toBeGreaterThan(id1);
      await t.put('src', 'copied bytes');
      await t.ok('PUT', `${B}/k`, { headers: { 'x-svc-copy-source': '/photos/src' } });
      const id3 = await currentId(t, 'k');
      expect(id3).toBeGreaterThan(id2);
      await t.put('mv', 'moved bytes', 'photos', { 'x-svc-meta-origin': 'mv' });
      await t.ok('PUT', `${B}/k`, { headers: { 'x-svc-move-source': '/photos/mv' } });
      // our choice for the id a moved object gets: a write at the destination, so a new, higher id
      const id4 = await currentId(t, 'k');
      expect(id4).toBeGreaterThan(id3);
      const parts = ['p'.repeat(MIN_PART), 'last part'];
      const done = await multipart(t, 'k', parts);
      const id5 = num(done.headers.get('x-svc-version-id'));
      expect(id5).toBeGreaterThan(id4);
      expect(await currentId(t, 'k')).toBe(id5);

      const ks = (await listAll(t)).filter((v) => v.key === 'k');
      expect(brief(ks)).toEqual([
        ['k', String(id5), true],
        ['k', String(id4), false],
        ['k', String(id3), false],
        ['k', String(id2), false],
        ['k', String(id1), false],
      ]);
      expect(ks.map((v) => v.size)).toEqual([MIN_PART + 9, 11, 12, 7, 5]);
      expect(ks.map((v) => v.etag)).toEqual(
        [multipartEtag(parts), md5('moved bytes'), md5('copied bytes'), md5('second!'), md5('first')].map((e) => `"${e}"`),
      );
      for (const v of ks) expect(v.lastModified).toMatch(ISO_MS);

      // every historical version is readable by id with its own bytes, ETag and metadata
      await expectVersion(t, 'k', id1, 'first');
      await expectVersion(t, 'k', id2, 'second!');
      await expectVersion(t, 'k', id3, 'copied bytes');
      await expectVersion(t, 'k', id4, 'moved bytes');
      expect((await t.call('GET', `${B}/k?versionId=${id4}`)).headers.get('x-svc-meta-origin')).toBe('mv');
      await expectVersion(t, 'k', id5, parts.join(''), multipartEtag(parts));
      // the current object is the Complete's
      const cur = await t.ok('GET', `${B}/k`);
      expect(cur.text).toBe(parts.join(''));
      expect(cur.headers.get('x-svc-version-id')).toBe(String(id5));
    });

    it('the move source is gone and leaves no version of its own', async () => {
      const t = await service();
      await t.put('mv', 'moved bytes');
      await t.ok('PUT', `${B}/dst`, { headers: { 'x-svc-move-source': '/photos/mv' } });
      expect((await t.call('GET', `${B}/mv`)).status).toBe(404);
      expect(brief(await listAll(t)).map(([k]) => k)).toEqual(['dst']);
    });

    it('a history version can be read in part (Range) and its HEAD never has a body', async () => {
      const t = await service();
      const id1 = await t.put('k', '0123456789');
      await t.put('k', 'replacement');
      const r = await t.call('GET', `${B}/k?versionId=${id1}`, { headers: { range: 'bytes=2-5' } });
      expect(r.status).toBe(206);
      expect(r.text).toBe('2345');
      expect(r.headers.get('content-range')).toBe('bytes 2-5/10');
    });

    it('a version id of one key does not address another key', async () => {
      const t = await service();
      const idA = await t.put('a', 'aaa');
      await t.put('a', 'aaa2');
      await t.put('b', 'bbb');
      await expectNoVersion(t, 'b', idA!);
      await expectNoVersion(t, 'nokey', idA!);
    });

    it('ids increase per bucket, independently of writes to other buckets', async () => {
      // the same sequence of writes to bucket `one`, alone and interleaved with writes to `two`
      const alone = await service(['one', 'two']);
      const seqAlone: number[] = [];
      for (let i = 0; i < 5; i++) seqAlone.push(num(await alone.put('k', `v${i}`, 'one')));
      const mixed = await service(['one', 'two']);
      const seqMixed: number[] = [];
      const seqTwo: number[] = [];
      for (let i = 0; i < 5; i++) {
        seqTwo.push(num(await mixed.put(`x${i}`, 'y', 'two')));
        seqTwo.push(num(await mixed.put('k', `w${i}`, 'two')));
        seqMixed.push(num(await mixed.put('k', `v${i}`, 'one')));
      }
      for (const s of [seqAlone, seqMixed, seqTwo]) for (let i = 1; i < s.length; i++) expect(s[i]!).toBeGreaterThan(s[i - 1]!);
      // docs/protocol.md, "Versioning": ids increase per bucket; a bucket's numbering does not depend on other buckets
      expect(seqMixed).toEqual(seqAlone);
      // and the same id in two buckets addresses two different objects
      await expectVersion(mixed, 'k', seqMixed[0]!, 'v0', md5('v0'), 'one');
      const inTwo = await mixed.call('GET', `${host('two')}/k?versionId=${seqMixed[0]}`);
      expect(inTwo.text).not.toBe('v0');
    });

    it('ids are never reused: after deleting the newest versions, new writes get higher ids', async () => {
      const t = await service();
      const ids = [num(await t.put('k', 'a')), num(await t.put('k', 'b')), num(await t.put('k', 'c'))];
      await t.ok('POST', `${B}/?delete`, {
        body: `<Delete>${ids.map((i) => `<Object><Key>k</Key><VersionId>${i}</VersionId></Object>`).join('')}</Delete>`,
      });
      expect(await listAll(t)).toEqual([]);
      const next = num(await t.put('k', 'd'));
      expect(next).toBeGreaterThan(Math.max(...ids));
      await t.ok('DELETE', `${B}/k`);
      expect(num(await t.put('other', 'e'))).toBeGreaterThan(next);
    });
  });

  // ------------------------------------------------------------------------------------------------
  describe('x-svc-version-id', () => {
    it('is on PUT, GET, HEAD and Complete responses when versioning is Enabled, and matches the listing', async () => {
      const t = await service();
      const p = await t.ok('PUT', `${B}/k`, { body: 'one' });
      const id = p.headers.get('x-svc-version-id');
      num(id);
      expect((await t.ok('GET', `${B}/k`)).headers.get('x-svc-version-id')).toBe(id);
      expect((await head(t, 'k')).headers.get('x-svc-version-id')).toBe(id);
      const c = await multipart(t, 'mp', ['only part']);
      const cid = c.headers.get('x-svc-version-id');
      expect(num(cid)).toBeGreaterThan(num(id));
      expect((await t.ok('GET', `${B}/mp`)).headers.get('x-svc-version-id')).toBe(cid);
      expect(brief(await listAll(t))).toEqual([
        ['k', id, true],
        ['mp', cid, true],
      ]);
    });

    it('is absent on PUT, GET, HEAD and Complete in a bucket that never had versioning', async () => {
      const t = await service(['photos'], false);
      expect((await t.ok('PUT', `${B}/k`, { body: 'one' })).headers.get('x-svc-version-id')).toBeNull();
      expect((await t.ok('GET', `${B}/k`)).headers.get('x-svc-version-id')).toBeNull();
      expect((await head(t, 'k')).headers.get('x-svc-version-id')).toBeNull();
      expect((await multipart(t, 'mp', ['x'])).headers.get('x-svc-version-id')).toBeNull();
      // no history either
      await t.put('k', 'two');
      expect(brief(await listAll(t))).toEqual([
        ['k', 'null', true],
        ['mp', 'null', true],
      ]);
    });
  });

  // ------------------------------------------------------------------------------------------------
  describe('objects written before versioning was enabled', () => {
    it('are listed as VersionId null; when replaced they enter the history with the next number', async () => {
      const t = await service(['photos'], false);
      await t.put('old', 'pre-versioning');
      await t.put('keep', 'never replaced');
      await t.versioning('Enabled');
      expect(brief(await listAll(t))).toEqual([
        ['keep', 'null', true],
        ['old', 'null', true],
      ]);
      const idNew = num(await t.put('old', 'post-versioning'));
      // fact given: the null object gets the next number as it enters the history, then the new one
      const idOld = idNew - 1;
      expect(brief(await listAll(t))).toEqual([
        ['keep', 'null', true],
        ['old', String(idNew), true],
        ['old', String(idOld), false],
      ]);
      await expectVersion(t, 'old', idOld, 'pre-versioning');
      await expectVersion(t, 'old', idNew, 'post-versioning');
    });

    it('copy, move and Complete over a null object also give it a number', async () => {
      const t = await service(['photos'], false);
      for (const k of ['c', 'm', 'x']) await t.put(k, `old ${k}`);
      await t.put('src', 'source');
      await t.put('mvsrc', 'move source');
      await t.versioning('Enabled');
      await t.ok('PUT', `${B}/c`, { headers: { 'x-svc-copy-source': '/photos/src' } });
      await t.ok('PUT', `${B}/m`, { headers: { 'x-svc-move-source': '/photos/mvsrc' } });
      await multipart(t, 'x', ['multipart']);
      const listed = await listAll(t);
      for (const k of ['c', 'm', 'x']) {
        const vs = listed.filter((v) => v.key === k);
        expect(vs.length, k).toBe(2);
        expect(vs[0]!.latest).toBe(true);
        expect(vs[1]!.latest).toBe(false);
        expect(Number(vs[0]!.id)).toBeGreaterThan(num(vs[1]!.id));
        await expectVersion(t, k, vs[1]!.id, `old ${k}`);
      }
      expect(listed.find((v) => v.key === 'src')!.id).toBe('null'); // the copy source is untouched
    });
  });

  // ------------------------------------------------------------------------------------------------
  describe('DELETE keeps history', () => {
    it('DELETE removes only the current object; every older version stays readable and counted', async () => {
      const t = await service();
      const id1 = num(await t.put('k', 'one'));
      const id2 = num(await t.put('k', 'two!'));
      const id3 = num(await t.put('k', 'three'));
      expect(await usedBytes(t)).toBe(12);
      await t.ok('DELETE', `${B}/k`);
      expect(errorCode((await t.call('GET', `${B}/k`)).text)).toBe('NoSuchKey');
      expect((await head(t, 'k')).status).toBe(404);
      // the current version itself is gone
      await expectNoVersion(t, 'k', id3);
      await expectVersion(t, 'k', id2, 'two!');
      await expectVersion(t, 'k', id1, 'one');
      // our choice for IsLatest when no current object exists: none is the current one
      expect(brief(await listAll(t))).toEqual([
        ['k', String(id2), false],
        ['k', String(id1), false],
      ]);
      expect(await usedBytes(t)).toBe(7);
      expect(await bodyCount(t)).toBe(2);
      // a plain listing shows nothing
      expect((await t.ok('GET', `${B}/`)).text).not.toContain('<Contents>');
      // DELETE of the missing current again: NoSuchKey, history untouched
      expect(errorCode((await t.call('DELETE', `${B}/k`)).text)).toBe('NoSuchKey');
      expect((await listAll(t)).length).toBe(2);
      // a new PUT becomes current on top of the history
      const id4 = num(await t.put('k', 'four'));
      expect(id4).toBeGreaterThan(id3);
      expect(brief(await listAll(t))).toEqual([
        ['k', String(id4), true],
        ['k', String(id2), false],
        ['k', String(id1), false],
      ]);
    });

    it('a bucket holding only history cannot be deleted (409 BucketNotEmpty) until every version is deleted', async () => {
      const t = await service();
      const id1 = await t.put('k', 'one');
      const id2 = await t.put('k', 'two');
      await t.ok('DELETE', `${B}/k`);
      const r = await t.call('DELETE', `${B}/`);
      expect(r.status).toBe(409);
      expect(errorCode(r.text)).toBe('BucketNotEmpty');
      expect((await t.call('HEAD', `${B}/`)).status).toBe(200);
      await expectNoVersion(t, 'k', id2!);
      await expectVersion(t, 'k', id1!, 'one');
      await t.ok('POST', `${B}/?delete`, { body: `<Delete><Object><Key>k</Key><VersionId>${id1}</VersionId></Object></Delete>` });
      expect(await listAll(t)).toEqual([]);
      await t.ok('DELETE', `${B}/`);
      expect((await t.call('HEAD', `${B}/`)).status).toBe(404);
    });
  });

  // ------------------------------------------------------------------------------------------------
  describe('Delete Multiple with VersionId', () => {
    it('deletes a historical version: Deleted echoes Key and VersionId; its bytes and quota are freed', async () => {
      const t = await service();
      const id1 = num(await t.put('k', 'one'));
      const id2 = num(await t.put('k', 'two!'));
      const bodies = await bodyCount(t);
      const r = await t.ok('POST', `${B}/?delete`, { body: `<Delete><Object><Key>k</Key><VersionId>${id1}</VersionId></Object></Delete>` });
      expect(r.text).toMatch(new RegExp(`<Deleted>\\s*<Key>k</Key>\\s*<VersionId>${id1}</VersionId>\\s*</Deleted>`));
      expect(r.text).not.toContain('<Error>');
      await expectNoVersion(t, 'k', id1);
      expect(brief(await listAll(t))).toEqual([['k', String(id2), true]]);
      expect((await t.ok('GET', `${B}/k`)).text).toBe('two!');
      expect(await bodyCount(t)).toBe(bodies - 1);
      expect(await usedBytes(t)).toBe(4);
    });

    it('deleting the current version by id makes the newest historical version current again', async () => {
      const t = await service();
      const id1 = num(await t.put('k', 'one'));
      const id2 = num(await t.put('k', 'two!'));
      const id3 = num(await t.put('k', 'three'));
      const r = await t.ok('POST', `${B}/?delete`, { body: `<Delete><Object><Key>k</Key><VersionId>${id3}</VersionId></Object></Delete>` });
      expect(r.text).toMatch(new RegExp(`<Deleted>\\s*<Key>k</Key>\\s*<VersionId>${id3}</VersionId>`));
      const cur = await t.ok('GET', `${B}/k`);
      expect(cur.text).toBe('two!');
      expect(cur.headers.get('x-svc-version-id')).toBe(String(id2));
      expect(brief(await listAll(t))).toEqual([
        ['k', String(id2), true],
        ['k', String(id1), false],
      ]);
      await expectNoVersion(t, 'k', id3);
      // again: now id2 is current
      await t.ok('POST', `${B}/?delete`, { body: `<Delete><Object><Key>k</Key><VersionId>${id2}</VersionId></Object></Delete>` });
      expect((await t.ok('GET', `${B}/k`)).text).toBe('one');
      expect(await currentId(t, 'k')).toBe(id1);
      // and the last one: nothing is left
      await t.ok('POST', `${B}/?delete`, { body: `<Delete><Object><Key>k</Key><VersionId>${id1}</VersionId></Object></Delete>` });
      expect((await t.call('GET', `${B}/k`)).status).toBe(404);
      expect(await listAll(t)).toEqual([]);
      expect(await bodyCount(t)).toBe(0);
      expect(await usedBytes(t)).toBe(0);
      // a new write does not reuse an id
      expect(num(await t.put('k', 'again'))).toBeGreaterThan(id3);
    });

    it('a mix in one request: several versions, a plain key, a missing and a non-numeric VersionId', async () => {
      const t = await service();
      const a1 = num(await t.put('a', 'a1'));
      const a2 = num(await t.put('a', 'a22'));
      const a3 = num(await t.put('a', 'a333'));
      const b1 = num(await t.put('b', 'b1'));
      const b2 = num(await t.put('b', 'b22'));
      await t.put('c', 'c1');
      const body =
        '<Delete>' +
        `<Object><Key>a</Key><VersionId>${a1}</VersionId></Object>` +
        `<Object><Key>a</Key><VersionId>${a3}</VersionId></Object>` +
        '<Object><Key>c</Key></Object>' +
        `<Object><Key>b</Key><VersionId>${a2}</VersionId></Object>` + // an id of another key
        '<Object><Key>b</Key><VersionId>x1</VersionId></Object>' +
        '<Object><Key>b</Key><VersionId></VersionId></Object>' +
        '</Delete>';
      const r = await t.ok('POST', `${B}/?delete`, { body });
      const deleted = [...r.text.matchAll(/<Deleted>([\s\S]*?)<\/Deleted>/g)].map((m) => [tag(m[1]!, 'Key'), tag(m[1]!, 'VersionId') ?? null]);
      expect(deleted).toEqual([
        ['a', String(a1)],
        ['a', String(a3)],
        ['c', null],
      ]);
      const errors = [...r.text.matchAll(/<Error>([\s\S]*?)<\/Error>/g)].map((m) => [tag(m[1]!, 'Key'), tag(m[1]!, 'Code')]);
      expect(errors).toEqual([
        ['b', 'NoSuchVersion'],
        ['b', 'NoSuchVersion'],
        ['b', 'NoSuchVersion'],
      ]);
      expect(brief(await listAll(t)).map(([k, id, l]) => `${k}:${id}:${l}`)).toEqual([
        `a:${a2}:true`,
        `b:${b2}:true`,
        `b:${b1}:false`,
      ]);
      expect((await t.ok('GET', `${B}/a`)).text).toBe('a22');
    });

    it('quiet mode: success with VersionId gives an empty body; NoSuchVersion is still listed', async () => {
      const t = await service();
      const id1 = num(await t.put('k', 'one'));
      await t.put('k', 'two');
      const ok = await t.ok('POST', `${B}/?delete`, {
        body: `<Delete><Quiet>true</Quiet><Object><Key>k</Key><VersionId>${id1}</VersionId></Object></Delete>`,
      });
      expect(ok.text).toBe('');
      const bad = await t.ok('POST', `${B}/?delete`, {
        body: `<Delete><Quiet>true</Quiet><Object><Key>k</Key><VersionId>${id1}</VersionId></Object></Delete>`,
      });
      expect(bad.text).toMatch(/<Error>\s*<Key>k<\/Key>\s*<Code>NoSuchVersion<\/Code>/);
      expect(bad.text).not.toContain('<Deleted>');
    });

    it('without VersionId in a versioned bucket the current object goes and its history stays', async () => {
      const t = await service();
      const id1 = num(await t.put('k', 'one'));
      await t.put('k', 'two');
      await t.ok('POST', `${B}/?delete`, { body: '<Delete><Object><Key>k</Key></Object></Delete>' });
      expect((await t.call('GET', `${B}/k`)).status).toBe(404);
      expect(brief(await listAll(t))).toEqual([['k', String(id1), false]]);
    });
  });

  // ------------------------------------------------------------------------------------------------
  describe('Suspended stops new history', () => {
    it('writes get no id, replaced objects are deleted, old history stays; Enabled again continues the numbering', async () => {
      const t = await service();
      const id1 = num(await t.put('k', 'one'));
      const id2 = num(await t.put('k', 'two!'));
      await t.versioning('Suspended');
      expect((await t.ok('GET', `${B}/?versioning`)).text).toContain('<Status>Suspended</Status>');
      // the current (id2) is replaced: deleted, not kept
      expect(await t.put('k', 'three')).toBeNull();
      expect(await bodyCount(t)).toBe(2);
      await expectNoVersion(t, 'k', id2);
      await expectVersion(t, 'k', id1, 'one');
      expect((await t.ok('GET', `${B}/k`)).headers.get('x-svc-version-id')).toBeNull();
      expect(await t.put('k', 'four!!')).toBeNull();
      expect(await bodyCount(t)).toBe(2);
      expect(await usedBytes(t)).toBe(3 + 6);
      expect(brief(await listAll(t))).toEqual([
        ['k', 'null', true],
        ['k', String(id1), false],
      ]);
      // copy, move and Complete add no history either
      await t.put('src', 'src');
      await t.ok('PUT', `${B}/k`, { headers: { 'x-svc-copy-source': '/photos/src' } });
      await t.put('mv', 'mv');
      await t.ok('PUT', `${B}/k`, { headers: { 'x-svc-move-source': '/photos/mv' } });
      const c = await multipart(t, 'k', ['completed']);
      expect(c.headers.get('x-svc-version-id')).toBeNull();
      expect(brief((await listAll(t)).filter((v) => v.key === 'k'))).toEqual([
        ['k', 'null', true],
        ['k', String(id1), false],
      ]);
      expect(await usedBytes(t)).toBe(3 + 9 + 3);
      // DELETE under Suspended removes the current; history stays
      await t.ok('DELETE', `${B}/src`);
      // Enabled again: the null object gets a number as it enters the history, above every earlier id
      await t.versioning('Enabled');
      const id5 = num(await t.put('k', 'five'));
      expect(id5).toBeGreaterThan(id2);
      expect(brief((await listAll(t)).filter((v) => v.key === 'k'))).toEqual([
        ['k', String(id5), true],
        ['k', String(id5 - 1), false],
        ['k', String(id1), false],
      ]);
      await expectVersion(t, 'k', id5 - 1, 'completed', multipartEtag(['completed']));
    });

    it('a new key written under Suspended is listed as null and has no x-svc-version-id', async () => {
      const t = await service();
      await t.versioning('Suspended');
      const p = await t.ok('PUT', `${B}/n`, { body: 'new' });
      expect(p.headers.get('x-svc-version-id')).toBeNull();
      expect((await head(t, 'n')).headers.get('x-svc-version-id')).toBeNull();
      expect(brief(await listAll(t))).toEqual([['n', 'null', true]]);
    });
  });

  describe('racing versioned writes', () => {
    it('parallel PUTs to one key: every write gets its own id, all but the winner are history, the winner has the highest id', async () => {
      const t = await service();
      const bodies = Array.from({ length: 12 }, (_, i) => `racer ${i} ${'#'.repeat(i)}`);
      const results = await Promise.all(bodies.map((b) => t.call('PUT', `${B}/k`, { body: b })));
      expect(results.every((r) => r.status === 200)).toBe(true);
      const ids = results.map((r) => num(r.headers.get('x-svc-version-id')));
      expect(new Set(ids).size).toBe(ids.length);
      const listed = await listAll(t);
      expect(listed.map((v) => Number(v.id)).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
      // newest first: ids descending, the first is the current one
      expect(listed.map((v) => Number(v.id))).toEqual([...ids].sort((a, b) => b - a));
      expect(listed.map((v) => v.latest)).toEqual(listed.map((_, i) => i === 0));
      const cur = await t.ok('GET', `${B}/k`);
      expect(cur.headers.get('x-svc-version-id')).toBe(listed[0]!.id);
      // each id still reads the bytes its PUT sent
      for (const [i, id] of ids.entries()) await expectVersion(t, 'k', id, bodies[i]!);
    });

    it('parallel PUTs to different keys of one bucket get distinct ids', async () => {
      const t = await service();
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => t.call('PUT', `${B}/k${i}`, { body: `v${i}` })));
      const ids = results.map((r) => num(r.headers.get('x-svc-version-id')));
      expect(new Set(ids).size).toBe(10);
    });
  });

  // ------------------------------------------------------------------------------------------------
  // GET /?versions paging against a model built from what the writes returned.

  interface ModelVersion {
    key: string;
    id: string;
    latest: boolean;
    etag: string;
    size: number;
  }

  /** Builds a bucket with every shape of history and the model of its listing. */
  async function modelBucket(): Promise<{ t: T; model: ModelVersion[] }> {
    const t = await service(['photos'], false);
    const history = new Map<string, ModelVersion[]>(); // newest first
    const write = (key: string, id: string, body: string) => {
      const list = history.get(key) ?? [];
      for (const v of list) v.latest = false;
      list.unshift({ key, id, latest: true, etag: `"${md5(body)}"`, size: Buffer.byteLength(body) });
      history.set(key, list);
    };
    // before versioning: two stay null, one is replaced later
    await t.put('n1', 'null one');
    write('n1', 'null', 'null one');
    await t.put('b/old', 'old b');
    write('b/old', 'null', 'old b');
    await t.put('zz', 'zz null');
    write('zz', 'null', 'zz null');
    await t.versioning('Enabled');
    // zz: its null version is replaced, gets new id - 1
    {
      const id = num(await t.put('zz', 'zz new'));
      history.get('zz')![0]!.id = String(id - 1);
      write('zz', String(id), 'zz new');
    }
    const plan: [string, number][] = [
      ['a', 1],
      ['b', 3],
      ['b/x', 2],
      ['c', 2],
      ['d', 5],
      ['e', 1],
      ['é', 2],
      ['f&g', 2],
    ];
    // interleave the writes so that ids of one key are not consecutive
    for (let round = 0; round < 5; round++) {
      for (const [key, count] of plan) {
        if (round >= count) continue;
        const body = `${key} v${round} ${'.'.repeat(round)}`;
        const id = await t.put(encodeURIComponent(key), body);
        write(key, String(num(id)), body);
      }
    }
    // c: current deleted, history stays (no latest)
    await t.ok('DELETE', `${B}/c`);
    history.get('c')!.shift();
    // d: its second-newest version deleted by id
    const d = history.get('d')!;
    await t.ok('POST', `${B}/?delete`, { body: `<Delete><Object><Key>d</Key><VersionId>${d[1]!.id}</VersionId></Object></Delete>` });
    d.splice(1, 1);
    const model = [...history.keys()].sort().flatMap((k) => history.get(k)!);
    return { t, model };
  }

  const view = (xs: { key: string; id: string; latest: boolean; etag: string; size: number }[]) =>
    xs.map((x) => `${x.key}|${x.id}|${x.latest}|${x.etag}|${x.size}`);

  describe('GET /?versions pages exactly like a model', () => {
    it('the whole listing equals the model (keys ascending, newest first, IsLatest, ETag, Size)', async () => {
      const { t, model } = await modelBucket();
      expect(view(await listAll(t))).toEqual(view(model));
    });

    it('for every page size and prefix, following NextMarker and NextVersionIdMarker reaches every version once', async () => {
      const { t, model } = await modelBucket();
      for (const prefix of ['', 'b', 'b/', 'd', 'zz', 'nothing']) {
        const want = model.filter((v) => v.key.startsWith(prefix));
        for (const maxKeys of [1, 2, 3, 7, 1000]) {
          const seen: Listed[] = [];
          let marker = '';
          let vid = '';
          for (let page = 0; page < 100; page++) {
            const q = new URLSearchParams({ prefix, 'max-keys': String(maxKeys) });
            if (marker) q.set('marker', marker);
            if (vid) q.set('version-id-marker', vid);
            const r = await t.ok('GET', `${B}/?versions&${q}`);
            const p = parseVersions(r.text);
            const where = `prefix=${prefix} max=${maxKeys} page=${page}`;
            expect(tag(r.text, 'MaxKeys'), where).toBe(String(maxKeys));
            expect(tag(r.text, 'Name'), where).toBe('photos');
            expect(p.entries.length, where).toBeLessThanOrEqual(maxKeys);
            seen.push(...p.entries);
            if (!p.truncated) {
              expect(p.nextMarker, where).toBeUndefined();
              expect(p.nextVersionIdMarker, where).toBeUndefined();
              break;
            }
            expect(p.nextMarker, where).toBeDefined();
            expect(p.nextVersionIdMarker, where).toBeDefined();
            // a page is cut only when more versions follow
            expect(seen.length, where).toBeLessThan(want.length);
            marker = p.nextMarker!;
            vid = p.nextVersionIdMarker!;
          }
          expect(view(seen), `prefix=${prefix} max=${maxKeys}`).toEqual(view(want));
        }
      }
    });

    it('marker + version-id-marker of any listed version continues right after it', async () => {
      const { t, model } = await modelBucket();
      for (const [i, v] of model.entries()) {
        const q = new URLSearchParams({ marker: v.key, 'version-id-marker': v.id });
        const r = await t.ok('GET', `${B}/?versions&${q}`);
        expect(tag(r.text, 'Marker')).toBe(v.key.replace(/&/g, '&amp;'));
        expect(tag(r.text, 'VersionIdMarker')).toBe(v.id);
        expect(view(parseVersions(r.text).entries), `after ${v.key} ${v.id}`).toEqual(view(model.slice(i + 1)));
      }
    });

    it('marker alone continues after every version of that key', async () => {
      // our choice, as S3: a key-marker without a version-id-marker starts after the key
      const { t, model } = await modelBucket();
      for (const key of [...new Set(model.map((v) => v.key)), 'a0', 'b/', '']) {
        const r = await t.ok('GET', `${B}/?versions&marker=${encodeURIComponent(key)}`);
        expect(view(parseVersions(r.text).entries), `marker ${key}`).toEqual(view(model.filter((v) => v.key > key)));
      }
    });

    it('0, 1 and many versions; max-keys=0 lists none', async () => {
      const empty = await service();
      const r0 = parseVersions((await empty.ok('GET', `${B}/?versions&max-keys=1`)).text);
      expect(r0.entries).toEqual([]);
      expect(r0.truncated).toBe(false);

      const one = await service();
      const id = await one.put('only', 'x');
      const r1 = parseVersions((await one.ok('GET', `${B}/?versions&max-keys=1`)).text);
      expect(brief(r1.entries)).toEqual([['only', id, true]]);
      // exactly max-keys versions and nothing more: not cut
      expect(r1.truncated).toBe(false);

      const { t, model } = await modelBucket();
      const z = await t.ok('GET', `${B}/?versions&max-keys=0`);
      expect(tag(z.text, 'MaxKeys')).toBe('0');
      expect(parseVersions(z.text).entries).toEqual([]);
      expect(model.length).toBeGreaterThan(15);
    });

    it('max-keys outside 0–1000 or not a number → 400 InvalidArgument (as in listing)', async () => {
      const t = await service();
      for (const bad of ['-1', '1001', 'abc']) {
        // docs/protocol.md, "Buckets": List Versions pages like List Objects, max-keys 0–1000
        const r = await t.call('GET', `${B}/?versions&max-keys=${bad}`);
        const listing = await t.call('GET', `${B}/?max-keys=${bad}`);
        expect(r.status, bad).toBe(listing.status);
        expect(errorCode(r.text), bad).toBe(errorCode(listing.text));
        expect(r.status, bad).toBe(400);
      }
    });
  });
});
