// Export and import through handle() (docs/protocol.md, "Archives"): an archive of everything comes
// back byte for byte, with the same ETags, headers, metadata, dates and versions, in another
// service; conflicts are an explicit choice; a damaged archive is refused whole.
import { describe, it, expect } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packTar, unpackTar } from 'modern-tar';
import { buildRequest, newService as freshService, send, errorCode, type SendOptions } from '../support/service.ts';
import { createHandler } from '../../sw/core/handler.ts';

type Svc = Awaited<ReturnType<typeof freshService>>;

/**
 * The two ways an export is written: composed of the store's Blobs (IndexedDB, whose Blobs are
 * handles) and streamed one object at a time (stores whose reads copy, such as the server's lmdb).
 */
const MODES: [string, () => Promise<Svc>][] = [
  ['composed', freshService],
  ['streamed', async () => {
    const s = await freshService();
    const store = { ...s.store, blobsAreHandles: false };
    return { ...s, store, handle: createHandler({ store }) };
  }],
  // The server's --data store: its reads copy, so its export streams.
  ['lmdb', () => freshService({ kind: 'lmdb' })],
  // IndexedDB keeping bodies as pieces (where it refuses Blobs): its export streams them too.
  ['pieces', () => freshService({ kind: 'idb-pieces' })],
];

const S = 'http://svc.localhost';
const host = (b: string) => `http://${b}.svc.localhost`;
const enc = (key: string) => key.split('/').map((s) => encodeURIComponent(s)).join('/');
const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');
const tag = (text: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];

async function call(s: Svc, method: string, url: string, o: SendOptions = {}) {
  return send(s.handle, method, url, o);
}

async function ok(s: Svc, method: string, url: string, o: SendOptions = {}) {
  const r = await call(s, method, url, o);
  expect(r.status, `${method} ${url}: ${r.text}`).toBe(200);
  return r;
}

/** A service holding a bit of everything an archive must carry. */
async function populated(newService: () => Promise<Svc>): Promise<{ s: Svc; bytes: Record<string, Uint8Array> }> {
  const s = await newService();
  const bytes: Record<string, Uint8Array> = {};
  await ok(s, 'PUT', `${S}/?account=alice`, { body: '<Account><SecretAccessKey>alice-secret-1</SecretAccessKey><DisplayName>Alice</DisplayName><QuotaBytes>100000000</QuotaBytes></Account>' });
  await ok(s, 'PUT', `${host('photos')}/`);
  await ok(s, 'PUT', `${host('photos')}/?acl`, { headers: { 'x-svc-acl': 'public-read' } });
  await ok(s, 'PUT', `${host('docs')}/`, { auth: { accessKeyId: 'alice', secret: 'alice-secret-1' } });
  const put = async (bucket: string, key: string, body: Uint8Array, headers: Record<string, string> = {}, auth?: SendOptions['auth']) => {
    await ok(s, 'PUT', `${host(bucket)}/${enc(key)}`, { body, headers, ...(auth ? { auth } : {}) });
    bytes[`${bucket}/${key}`] = body;
  };
  await put('photos', 'cat.jpg', new Uint8Array(randomBytes(5000)), {
    'content-type': 'image/jpeg', 'cache-control': 'max-age=60', 'content-disposition': 'inline; filename="cat.jpg"',
    'x-svc-meta-camera': 'Pentax', 'x-svc-meta-__proto__': 'plain',
  });
  await put('photos', 'a', new TextEncoder().encode('file a'));
  await put('photos', 'a/b', new TextEncoder().encode('under a'));
  await put('photos', 'why?.txt', new TextEncoder().encode('dots'));
  await put('photos', 'emptyish/', new Uint8Array(0));
  await put('photos', 'ünïcode ✓/𝄞.txt', new TextEncoder().encode('music'));
  await put('docs', 'notes.txt', new TextEncoder().encode('v1'), { 'content-type': 'text/plain' }, { accessKeyId: 'alice', secret: 'alice-secret-1' });
  // Versions: history kept under versioning.
  await ok(s, 'PUT', `${host('photos')}/?versioning`, { body: '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>' });
  await put('photos', 'v.txt', new TextEncoder().encode('one'));
  await put('photos', 'v.txt', new TextEncoder().encode('two'));
  await put('photos', 'v.txt', new TextEncoder().encode('three'));
  // A multipart object: its ETag is not an MD5 of its bytes.
  const init = await ok(s, 'POST', `${host('photos')}/big.bin?uploads`, { headers: { 'content-type': 'application/x-big' } });
  const uploadId = tag(init.text, 'UploadId')!;
  const p1 = new Uint8Array(randomBytes(16 * 1024));
  const p2 = new Uint8Array(randomBytes(100));
  const e1 = (await ok(s, 'PUT', `${host('photos')}/big.bin?partNumber=1&uploadId=${uploadId}`, { body: p1 })).headers.get('etag')!;
  const e2 = (await ok(s, 'PUT', `${host('photos')}/big.bin?partNumber=2&uploadId=${uploadId}`, { body: p2 })).headers.get('etag')!;
  await ok(s, 'POST', `${host('photos')}/big.bin?uploadId=${uploadId}`, {
    body: `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${e1}</ETag></Part><Part><PartNumber>2</PartNumber><ETag>${e2}</ETag></Part></CompleteMultipartUpload>`,
  });
  bytes['photos/big.bin'] = new Uint8Array(Buffer.concat([p1, p2]));
  return { s, bytes };
}

/** The archive's bytes (read as bytes, not text). */
async function archiveOf(s: Svc, query = 'export&versions&accounts'): Promise<Uint8Array> {
  const res = await s.handle(await buildRequest('GET', `${S}/?${query}`));
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

async function importInto(s: Svc, archive: Uint8Array, query = 'import') {
  return call(s, 'POST', `${S}/?${query}`, { body: archive });
}

/** Everything a reader can see of a service: every version's bytes and headers, and the accounts. */
async function snapshot(s: Svc): Promise<unknown> {
  const buckets = [...(await ok(s, 'GET', `${S}/`)).text.matchAll(/<Name>([^<]*)<\/Name>/g)].map((m) => m[1]!);
  const out: Record<string, unknown> = {};
  for (const b of ['photos', 'docs']) {
    const acl = (await call(s, 'GET', `${host(b)}/?acl`)).text.replace(/<RequestId>.*<\/RequestId>/, '');
    const versions = (await call(s, 'GET', `${host(b)}/?versions`)).text;
    const entries = [...versions.matchAll(/<Version>([\s\S]*?)<\/Version>/g)].map((m) => ({
      key: tag(m[1]!, 'Key')!, versionId: tag(m[1]!, 'VersionId')!, latest: tag(m[1]!, 'IsLatest'),
    }));
    const objects: unknown[] = [];
    for (const e of entries) {
      const key = e.key.replace(/&amp;/g, '&').replace(/&lt;/g, '<');
      const q = e.versionId === 'null' ? '' : `?versionId=${e.versionId}`;
      const res = await s.handle(await buildRequest('GET', `${host(b)}/${enc(key)}${q}`, {}));
      const h = Object.fromEntries([...res.headers].filter(([n]) => !['x-svc-request-id', 'date'].includes(n)));
      objects.push({ ...e, status: res.status, md5: md5(new Uint8Array(await res.arrayBuffer())), headers: h });
    }
    out[b] = { acl, versioning: (await call(s, 'GET', `${host(b)}/?versioning`)).text.replace(/<RequestId>.*<\/RequestId>/, ''), objects };
  }
  const accounts = (await ok(s, 'GET', `${S}/?accounts`)).text;
  return { buckets, out, accounts };
}

for (const [mode, newService] of MODES) describe(`${mode} export`, () => {
describe('export → import into a fresh service', () => {
  it('brings back every version byte for byte, with ETags, headers, metadata, dates, ACLs, versioning and accounts', async () => {
    const { s } = await populated(newService);
    const before = await snapshot(s);
    const archive = await archiveOf(s);
    const fresh = await newService();
    const r = await importInto(fresh, archive);
    expect(r.status, r.text).toBe(200);
    expect(tag(r.text, 'ObjectsRestored')).toBe('11');
    expect(tag(r.text, 'BucketsCreated')).toBe('2');
    expect(tag(r.text, 'AccountsCreated')).toBe('1');
    expect(tag(r.text, 'AccountsSkipped')).toBe('1'); // root keeps its own credentials
    expect(await snapshot(fresh)).toEqual(before);
    // The imported account works with its secret, and owns its bucket.
    const alice = { accessKeyId: 'alice', secret: 'alice-secret-1' };
    expect((await call(fresh, 'GET', `${host('docs')}/notes.txt`, { auth: alice })).text).toBe('v1');
    // Writes after the import continue the versionIds.
    const w = await ok(fresh, 'PUT', `${host('photos')}/v.txt`, { body: 'four' });
    expect(Number(w.headers.get('x-svc-version-id'))).toBeGreaterThan(3);
  });

  it('is a tar a person can open: the manifest first, then files named after their keys', async () => {
    const { s, bytes } = await populated(newService);
    const archive = await archiveOf(s);
    const entries = await unpackTar(archive);
    expect(entries[0]!.header.name).toBe('swbucket.json');
    const manifest = JSON.parse(new TextDecoder().decode(entries[0]!.data));
    expect(manifest.format).toBe('swbucket-archive');
    const names = entries.map((e) => e.header.name);
    expect(names).toContain('objects/photos/cat.jpg');
    expect(names).toContain('objects/photos/a');
    expect(names).toContain('objects/photos/ünïcode ✓/𝄞.txt');
    expect(names).toContain('objects/docs/notes.txt');
    // `a/b` cannot sit under the file `a`, `?` is no file name on Windows, `emptyish/` has an empty segment.
    for (const key of ['a/b', 'why?.txt', 'emptyish/']) {
      const o = manifest.objects.find((x: { key: string }) => x.key === key);
      expect(o, `${key} in ${manifest.objects.map((x: { key: string }) => x.key)}`).toBeDefined();
      expect(o.file).toMatch(/^other\/\d+$/);
    }
    const dir = mkdtempSync(join(tmpdir(), 'swbucket-tar-'));
    try {
      writeFileSync(join(dir, 'a.tar'), archive);
      execFileSync('tar', ['-xf', 'a.tar'], { cwd: dir });
      expect(md5(readFileSync(join(dir, 'objects/photos/cat.jpg')))).toBe(md5(bytes['photos/cat.jpg']!));
      expect(md5(readFileSync(join(dir, 'objects/photos/big.bin')))).toBe(md5(bytes['photos/big.bin']!));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exports only the chosen buckets, only current objects unless asked, and accounts only when asked', async () => {
    const { s } = await populated(newService);
    const entries = await unpackTar(await archiveOf(s, 'export&bucket=docs'));
    const manifest = JSON.parse(new TextDecoder().decode(entries[0]!.data));
    expect(manifest.buckets.map((b: { name: string }) => b.name)).toEqual(['docs']);
    expect(manifest.accounts).toBeUndefined();
    // Two chosen: the signed sub-resource `bucket` named twice, as the console sends it.
    const two = JSON.parse(new TextDecoder().decode((await unpackTar(await archiveOf(s, 'export&bucket=docs&bucket=photos')))[0]!.data));
    expect(two.buckets.map((b: { name: string }) => b.name).sort()).toEqual(['docs', 'photos']);
    const current = JSON.parse(new TextDecoder().decode((await unpackTar(await archiveOf(s, 'export&bucket=photos')))[0]!.data));
    expect(current.objects.filter((o: { key: string }) => o.key === 'v.txt')).toHaveLength(1);
    const r = await call(s, 'GET', `${S}/?export&bucket=nope`);
    expect(r.status).toBe(404);
    expect(errorCode(r.text)).toBe('NoSuchBucket');
  });

  it('is root only, both ways', async () => {
    const { s } = await populated(newService);
    const alice = { accessKeyId: 'alice', secret: 'alice-secret-1' };
    expect((await call(s, 'GET', `${S}/?export`, { auth: alice })).status).toBe(403);
    expect((await call(s, 'GET', `${S}/?export`, { auth: 'anon' })).status).toBe(403);
    const archive = await archiveOf(s);
    const fresh = await newService();
    expect((await importInto(fresh, archive)).status).toBe(200);
    const other = await newService();
    await ok(other, 'PUT', `${S}/?account=alice`, { body: '<Account><SecretAccessKey>alice-secret-1</SecretAccessKey></Account>' });
    const r = await call(other, 'POST', `${S}/?import`, { body: archive, auth: alice });
    expect(r.status).toBe(403);
    expect(errorCode(r.text)).toBe('AccessDenied');
  });
});

describe('conflicts are a choice', () => {
  it('fail (the default) changes nothing; skip keeps what is there; overwrite takes the archive', async () => {
    const { s } = await populated(newService);
    const archive = await archiveOf(s);
    const target = await newService();
    await ok(target, 'PUT', `${host('photos')}/`);
    await ok(target, 'PUT', `${host('photos')}/cat.jpg`, { body: 'a different cat' });
    const before = await snapshot(target);

    const failed = await importInto(target, archive);
    expect(failed.status).toBe(409);
    expect(errorCode(failed.text)).toBe('ImportConflict');
    expect(failed.text).toContain('cat.jpg');
    expect(await snapshot(target)).toEqual(before);

    const skipped = await importInto(target, archive, 'import&conflict=skip');
    expect(skipped.status, skipped.text).toBe(200);
    expect(tag(skipped.text, 'ObjectsSkipped')).toBe('1');
    expect(tag(skipped.text, 'BucketsExisting')).toBe('1');
    expect((await call(target, 'GET', `${host('photos')}/cat.jpg`)).text).toBe('a different cat');
    expect((await call(target, 'GET', `${host('photos')}/a`)).text).toBe('file a');

    const over = await importInto(target, archive, 'import&conflict=overwrite');
    expect(over.status, over.text).toBe(200);
    expect(tag(over.text, 'ObjectsSkipped')).toBe('0');
    const cat = await call(target, 'GET', `${host('photos')}/cat.jpg`);
    expect(cat.headers.get('x-svc-meta-camera')).toBe('Pentax');

    const bad = await importInto(target, archive, 'import&conflict=merge');
    expect(bad.status).toBe(400);
    expect(errorCode(bad.text)).toBe('InvalidArgument');
  });
});

describe('a damaged archive is refused and changes nothing', () => {
  async function refused(archive: Uint8Array | string, code = 'MalformedArchive') {
    const target = await newService();
    await ok(target, 'PUT', `${host('keep')}/`);
    await ok(target, 'PUT', `${host('keep')}/k`, { body: 'kept' });
    const before = await snapshot(target);
    const r = await importInto(target, typeof archive === 'string' ? new TextEncoder().encode(archive) : archive, 'import&conflict=skip');
    expect(r.status, r.text).toBe(code === 'QuotaExceeded' ? 403 : 400);
    expect(errorCode(r.text)).toBe(code);
    expect(r.text).toContain('Nothing was imported');
    expect(await snapshot(target)).toEqual(before);
    expect((await ok(target, 'GET', `${S}/`)).text).not.toContain('<Name>photos</Name>');
    return r.text;
  }

  it('not a tar, an empty body, a tar without the manifest', async () => {
    await refused('this is not a tar file at all, just text that goes on and on'.repeat(20));
    await refused(new Uint8Array(0));
    await refused(await packTar([{ header: { name: 'hello.txt', size: 2 }, body: 'hi' }]));
  });

  it('cut short at any point after the first object', async () => {
    const { s } = await populated(newService);
    const archive = await archiveOf(s);
    for (const fraction of [0.3, 0.6, 0.9]) {
      const cut = archive.slice(0, Math.floor(archive.length * fraction / 512) * 512 + 100);
      const text = await refused(cut);
      expect(text).toMatch(/cut short|not a readable tar|bytes/);
    }
  });

  it('bytes that do not match their ETag, a size that does not match, an unlisted file', async () => {
    const { s } = await populated(newService);
    const entries = await unpackTar(await archiveOf(s));
    const manifest = JSON.parse(new TextDecoder().decode(entries[0]!.data));
    const rebuild = (change: (e: { header: { name: string; size: number }; data?: Uint8Array }) => void, extra: { header: { name: string; size: number }; body: string }[] = []) =>
      packTar([...entries.map((e) => {
        const copy = { header: { ...e.header }, data: e.data ? new Uint8Array(e.data) : new Uint8Array() };
        change(copy);
        return { header: copy.header, body: copy.data };
      }), ...extra]);
    // One flipped byte in the last object: everything restored before it is taken back.
    const lastFile = manifest.objects.at(-1).file;
    const flipped = await rebuild((e) => { if (e.header.name === lastFile && e.data && e.data.length > 0) e.data[0] = e.data[0]! ^ 1; });
    expect(await refused(flipped)).toMatch(/do not match/);
    const extra = await rebuild(() => {}, [{ header: { name: 'stray.txt', size: 1 }, body: 'x' }]);
    expect(await refused(extra)).toMatch(/does not list/);
  });

  it('a manifest with a field that could not be served again', async () => {
    const base = { format: 'swbucket-archive', version: 1, buckets: [{ name: 'photos', owner: 'svcadmin', acl: 'private', created: 0, nextVersionId: 1 }] };
    const obj = { bucket: 'photos', key: 'k', current: true, file: 'objects/photos/k', size: 1, etag: md5('x'), lastModified: 0, contentType: 'text/plain', headers: {}, meta: [] };
    const tar = (manifest: unknown) => packTar([
      { header: { name: 'swbucket.json', size: Buffer.byteLength(JSON.stringify(manifest)) }, body: JSON.stringify(manifest) },
      { header: { name: 'objects/photos/k', size: 1 }, body: 'x' },
    ]);
    // The well-formed one is accepted (so the refusals below are about the one field each changes).
    const good = await newService();
    expect((await importInto(good, await tar({ ...base, objects: [obj] }))).status).toBe(200);
    // A multipart object's parts (what S3's GET ?partNumber= reads): as many as its ETag counts,
    // numbered upwards, adding up to its size.
    const multipart = { ...obj, etag: `${md5('x')}-1`, parts: [{ partNumber: 4, size: 1 }] };
    expect((await importInto(await newService(), await tar({ ...base, objects: [multipart] }))).status).toBe(200);
    for (const bad of [
      { ...obj, parts: [{ partNumber: 1, size: 1 }] },
      { ...multipart, parts: [{ partNumber: 4, size: 2 }] },
      { ...multipart, parts: [{ partNumber: 0, size: 1 }] },
      { ...multipart, parts: [{ partNumber: 4, size: 1, more: 1 }] },
      { ...multipart, parts: 'all of it' },
      { ...multipart, etag: `${md5('x')}-2`, parts: [{ partNumber: 4, size: 1 }, { partNumber: 3, size: 0 }] },
      { ...obj, contentType: 'text/plain\r\nx-evil: 1' },
      { ...obj, meta: [['ok', 'line\nbreak']] },
      { ...obj, meta: [['Upper', 'v']] },
      { ...obj, headers: { 'set-cookie': 'a=b' } },
      { ...obj, key: 'bad\u0001key' },
      { ...obj, etag: 'nothex' },
      { ...obj, size: -1 },
      { ...obj, current: false },
      { ...obj, bucket: 'unlisted' },
    ]) {
      await refused(await tar({ ...base, objects: [bad] }));
    }
    await refused(await tar({ ...base, version: 2, objects: [obj] }));
    await refused(await tar({ ...base, buckets: [{ ...base.buckets[0], name: 'Bad_Name' }], objects: [] }));
  });

  it("over the owner's quota: refused whole", async () => {
    const { s } = await populated(newService);
    const archive = await archiveOf(s, 'export&bucket=photos');
    const target = await newService();
    await ok(target, 'PUT', `${S}/?account=small`, { body: '<Account><SecretAccessKey>small-secret</SecretAccessKey><QuotaBytes>6000</QuotaBytes></Account>' });
    await ok(target, 'PUT', `${host('photos')}/`, { auth: { accessKeyId: 'small', secret: 'small-secret' } });
    const r = await importInto(target, archive, 'import&conflict=skip');
    expect(r.status).toBe(403);
    expect(errorCode(r.text)).toBe('QuotaExceeded');
    const list = (await call(target, 'GET', `${host('photos')}/?versions`, { auth: { accessKeyId: 'small', secret: 'small-secret' } })).text;
    expect(list).not.toContain('<Key>');
    const accounts = (await ok(target, 'GET', `${S}/?accounts`)).text;
    expect(accounts).toMatch(/<AccessKeyId>small<\/AccessKeyId><DisplayName>small<\/DisplayName><QuotaBytes>6000<\/QuotaBytes><UsedBytes>0<\/UsedBytes>/);
  });
});
});
