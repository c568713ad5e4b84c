// Issue 23, F6: version ids stay within what a request can name (15 digits). An archive may bring
// any state a bucket can reach — ids up to the largest, a counter one past it — and nothing
// beyond (400 MalformedArchive, nothing changed); a bucket whose counter is near the end hands out
// its last ids, readable and deletable, then refuses a write that needs another (400
// InvalidArgument, saying what to do) instead of making a version no request can reach; it can be
// emptied and deleted, and its export imports again. Over every store.
import { describe, it, expect } from 'vitest';
import { createHash } from 'node:crypto';
import { packTar } from 'modern-tar';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildRequest, newService, send, errorCode, type SendOptions } from '../support/service.ts';
import { STORE_KINDS, tempDir } from '../support/stores.ts';
import { limits } from '../../sw/core/limits.ts';

const S = 'http://svc.localhost';
const B = 'http://photos.svc.localhost';
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const SUSPENDED = '<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>';

function archive(nextVersionId: number, versionId: number): Promise<Uint8Array> {
  const manifest = {
    format: 'swbucket-archive', version: 1,
    buckets: [{ name: 'photos', owner: 'svcadmin', acl: 'private', created: 0, nextVersionId, versioning: 'Enabled' }],
    objects: [{ bucket: 'photos', key: 'k', current: true, versionId, file: 'objects/photos/k', size: 1, etag: md5('x'), lastModified: 0, contentType: 'text/plain', headers: {}, meta: [] }],
  };
  const text = JSON.stringify(manifest);
  return packTar([
    { header: { name: 'swbucket.json', size: Buffer.byteLength(text) }, body: text },
    { header: { name: 'objects/photos/k', size: 1 }, body: 'x' },
  ]);
}

const MAX = 10 ** limits.versionIdDigits - 1;

for (const kind of STORE_KINDS) {
  describe(`version ids at their limit (${kind} store)`, () => {
    it('an archive past any state a bucket can reach is refused whole, nothing changed', async () => {
      const { handle } = await newService({ kind });
      const call = (method: string, url: string, o: SendOptions = {}) => send(handle, method, url, o);
      for (const [next, version] of [[MAX + 2, 5], [2 ** 53, 5], [5, MAX + 1], [0, 5]]) {
        const r = await call('POST', `${S}/?import`, { body: await archive(next!, version!) });
        expect([r.status, errorCode(r.text)], `nextVersionId ${next}, versionId ${version}: ${r.text}`).toEqual([400, 'MalformedArchive']);
      }
      expect((await call('GET', `${S}/`)).text).not.toContain('<Name>photos</Name>');
    });

    it('a counter set near the end: the last id is readable and deletable, then writes that need an id are refused; the bucket empties, deletes, and its export imports again', async () => {
      const { handle } = await newService({ kind });
      const call = (method: string, url: string, o: SendOptions = {}) => send(handle, method, url, o);
      const imported = await call('POST', `${S}/?import`, { body: await archive(MAX, MAX - 1) });
      expect(imported.status, imported.text).toBe(200);
      const put = await call('PUT', `${B}/k`, { body: 'y' });
      expect(put.status, put.text).toBe(200);
      expect(put.headers.get('x-svc-version-id')).toBe(String(MAX));
      expect((await call('GET', `${B}/k?versionId=${MAX}`)).text).toBe('y');
      // Every id handed out: a write that needs one is refused, saying what to do, and changes nothing.
      const over = await call('PUT', `${B}/k`, { body: 'z' });
      expect([over.status, errorCode(over.text)], over.text).toEqual([400, 'InvalidArgument']);
      expect(over.text).toMatch(/suspend its versioning/);
      expect((await call('GET', `${B}/k`)).text).toBe('y');
      const exported = await handle(await buildRequest('GET', `${S}/?export&versions`));
      expect(exported.status).toBe(200);
      const tar = new Uint8Array(await exported.arrayBuffer());
      // Suspended, it writes on (no version id needed).
      await call('PUT', `${B}/?versioning`, { body: SUSPENDED });
      expect((await call('PUT', `${B}/other`, { body: 'o' })).status).toBe(200);
      // Versions are deleted by Delete Multiple with their VersionIds (docs/protocol.md, "Versioning").
      const del = await call('POST', `${B}/?delete`, { body: `<Delete><Object><Key>k</Key><VersionId>${MAX}</VersionId></Object><Object><Key>k</Key><VersionId>${MAX - 1}</VersionId></Object><Object><Key>other</Key></Object></Delete>` });
      expect(del.status, del.text).toBe(200);
      expect(del.text).not.toContain('<Error>');
      const gone = await call('DELETE', `${B}/`);
      expect(gone.status, gone.text).toBeLessThan(300);
      const again = await call('POST', `${S}/?import`, { body: tar });
      expect(again.status, again.text).toBe(200);
      expect((await call('GET', `${B}/k?versionId=${MAX}`)).text).toBe('y');
    });
  });
}

// Issue 23, F7: an export's file names fit what tar extracts into: a key segment over 255 bytes
// (NAME_MAX) — 100 CJK characters are 300 bytes — goes under other/N; one of exactly 255 bytes
// keeps its name. GNU tar extracts the whole archive, every file with its bytes.
describe('export names GNU tar extracts', () => {
  it('segments over 255 bytes go under other/, 255 bytes keep their name; tar -x succeeds', async () => {
    const { handle } = await newService();
    const call = (method: string, url: string, o: SendOptions = {}) => send(handle, method, url, o);
    await call('PUT', `${B}/`);
    const long = '文'.repeat(100); // 300 bytes
    const fits = '文'.repeat(85); // 255 bytes
    const keys = [`dir/${long}`, `${fits}/x`, `a${'b'.repeat(254)}`, `c${'d'.repeat(255)}`];
    for (const key of keys) {
      const r = await call('PUT', `${B}/${key.split('/').map(encodeURIComponent).join('/')}`, { body: key });
      expect(r.status, r.text).toBe(200);
    }
    const exported = await handle(await buildRequest('GET', `${S}/?export`));
    expect(exported.status).toBe(200);
    const dir = tempDir();
    writeFileSync(join(dir, 'a.tar'), new Uint8Array(await exported.arrayBuffer()));
    mkdirSync(join(dir, 'x'));
    execFileSync('tar', ['-xf', join(dir, 'a.tar'), '-C', join(dir, 'x')]);
    const manifest = JSON.parse(readFileSync(join(dir, 'x', 'swbucket.json'), 'utf8')) as { objects: { key: string; file: string }[] };
    const fileOf = (key: string) => manifest.objects.find((o) => o.key === key)!.file;
    expect(fileOf(`dir/${long}`)).toMatch(/^other\/\d+$/);
    expect(fileOf(`c${'d'.repeat(255)}`)).toMatch(/^other\/\d+$/);
    expect(fileOf(`${fits}/x`)).toBe(`objects/photos/${fits}/x`);
    expect(fileOf(`a${'b'.repeat(254)}`)).toBe(`objects/photos/a${'b'.repeat(254)}`);
    for (const key of keys) expect(readFileSync(join(dir, 'x', fileOf(key)), 'utf8')).toBe(key);
  });
});
