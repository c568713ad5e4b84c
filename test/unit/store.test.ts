// Store invariants seen through the handler, for each store (test/support/stores.ts): every stored
// body belongs to exactly one object, usage figures are exact, writes are whole or absent, reads
// are snapshots, listings page exactly (in IndexedDB's key order, UTF-16 code units, in both).
import { describe, it, expect } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { newService, send, twoRuntimes } from '../support/service.ts';
import { STORE_KINDS, SOUND, contents, integrity, type StoreKind } from '../support/stores.ts';

const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');
const B = 'http://photos.svc.localhost';

describe.each(STORE_KINDS)('%s store', (kind: StoreKind) => {
  async function service() {
    const s = await newService({ kind });
    expect((await send(s.handle, 'PUT', `${B}/`)).status).toBe(200);
    return s;
  }

  /** The invariants (test/support/stores.ts integrity()) and the number of bodies stored. */
  async function orphans(store: Awaited<ReturnType<typeof newService>>['store']) {
    const c = await contents(store);
    const i = integrity(c);
    expect(i).toEqual(SOUND);
    return { bodies: c.bodies.length, unreferenced: i.unreferenced, dangling: i.dangling };
  }

  describe('no orphaned bytes', () => {
    it('after overwrite, delete, bulk delete, copy, move onto an existing key and failed writes', async () => {
      const { handle, store } = await service();
      for (const k of ['a', 'b', 'c', 'd']) await send(handle, 'PUT', `${B}/${k}`, { body: k.repeat(10) });
      await send(handle, 'PUT', `${B}/a`, { body: 'new a' }); // overwrite
      await send(handle, 'DELETE', `${B}/b`);
      await send(handle, 'PUT', `${B}/e`, { headers: { 'x-svc-copy-source': '/photos/c' } });
      expect((await send(handle, 'PUT', `${B}/d`, { headers: { 'x-svc-move-source': '/photos/c' } })).status).toBe(200);
      await send(handle, 'POST', `${B}/?delete`, { body: '<Delete><Object><Key>e</Key></Object><Object><Key>zz</Key></Object></Delete>' });
      // Failed writes: bad digest, too long metadata, wrong length.
      expect((await send(handle, 'PUT', `${B}/f`, { body: 'x', headers: { 'content-md5': md5('y') } })).status).toBe(400);
      expect((await send(handle, 'PUT', `${B}/f`, { body: 'x', headers: { 'x-svc-meta-a': 'v'.repeat(3000) } })).status).toBe(400);
      expect((await send(handle, 'PUT', `${B}/f`, { body: 'xyz', contentLength: 2 })).status).toBe(400);
      const o = await orphans(store);
      expect(o.unreferenced).toEqual([]);
      expect(o.dangling).toEqual([]);
      expect(o.bodies).toBe(2); // a, d
      expect((await send(handle, 'GET', `${B}/d`)).text).toBe('cccccccccc');
      expect((await send(handle, 'GET', `${B}/f`)).status).toBe(404);
    });
  });

  describe('concurrency', () => {
    it('racing PUTs to one key: one whole body wins with its own ETag and metadata', async () => {
      const { handle, store } = await service();
      const bodies = Array.from({ length: 12 }, () => randomBytes(256 * 1024));
      const results = await Promise.all(bodies.map((b, i) =>
        send(handle, 'PUT', `${B}/race`, { body: b, headers: { 'x-svc-meta-writer': String(i) } })));
      expect(results.every((r) => r.status === 200)).toBe(true);
      const got = await handle(new Request(`${B}/race`, { headers: await signed('GET', `${B}/race`) }));
      const bytes = new Uint8Array(await got.arrayBuffer());
      const writer = Number(got.headers.get('x-svc-meta-writer'));
      expect(md5(bytes)).toBe(md5(bodies[writer]!));
      expect(got.headers.get('etag')).toBe(`"${md5(bodies[writer]!)}"`);
      expect((await orphans(store)).bodies).toBe(1);
    });

    it('reads racing writes see one whole version, never a mix', async () => {
      const { handle } = await service();
      const versions = Array.from({ length: 6 }, () => randomBytes(128 * 1024));
      await send(handle, 'PUT', `${B}/k`, { body: versions[0]! });
      const reads: Promise<Response>[] = [];
      const writes: Promise<unknown>[] = [];
      for (let i = 1; i < versions.length; i++) {
        writes.push(send(handle, 'PUT', `${B}/k`, { body: versions[i]! }));
        reads.push(signed('GET', `${B}/k`).then((h) => handle(new Request(`${B}/k`, { headers: h }))));
      }
      await Promise.all(writes);
      const known = new Set(versions.map((v) => md5(v)));
      let whole = 0;
      for (const r of await Promise.all(reads)) {
        // A body kept as pieces and larger than a snapshot streams after its record was read: when
        // it is replaced meanwhile, the read breaks off (as a server's would), never mixing bytes.
        const read = await r.arrayBuffer().then((b) => new Uint8Array(b), (e: Error) => e);
        if (read instanceof Error && kind === 'idb-pieces') {
          expect(read.message).toMatch(/deleted or replaced while it was being read/);
          continue;
        }
        if (read instanceof Error) throw read;
        whole++;
        expect(known.has(md5(read))).toBe(true);
        expect(r.headers.get('etag')).toBe(`"${md5(read)}"`);
      }
      if (kind !== 'idb-pieces') expect(whole).toBe(versions.length - 1);
    });
  });

  describe('versions and uploads list in UTF-16 order too, page by page', () => {
    // Astral characters (surrogate pairs) sort before U+E000–U+FFFD here, after them in UTF-8.
    const keys = ['a', 'a😀', 'a\ue000', 'a\ufffd', 'é', 'z', '😀', '𝄞x', '\ue000', '\ufffd'];
    const tagOf = (text: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];
    const q = (o: Record<string, string>) => new URLSearchParams(o).toString();

    it('List Versions: keys in order, each newest first, across pages of 3', async () => {
      const { handle } = await service();
      expect((await send(handle, 'PUT', `${B}/?versioning`, { body: '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>' })).status).toBe(200);
      const ids = new Map<string, string[]>();
      for (const k of [...keys].reverse()) {
        for (const n of [1, 2]) {
          const r = await send(handle, 'PUT', `${B}/${encodeURIComponent(k)}`, { body: `${k}${n}` });
          ids.set(k, [r.headers.get('x-svc-version-id')!, ...(ids.get(k) ?? [])]);
        }
      }
      const seen: [string, string][] = [];
      let marker = '';
      let idMarker = '';
      for (let page = 0; page < 20; page++) {
        const r = await send(handle, 'GET', `${B}/?versions&${q({ 'max-keys': '3', marker, 'version-id-marker': idMarker })}`);
        for (const m of r.text.matchAll(/<Version>([\s\S]*?)<\/Version>/g)) seen.push([tagOf(m[1]!, 'Key')!, tagOf(m[1]!, 'VersionId')!]);
        if (tagOf(r.text, 'IsTruncated') !== 'true') break;
        marker = tagOf(r.text, 'NextMarker')!;
        idMarker = tagOf(r.text, 'NextVersionIdMarker')!;
      }
      expect(seen).toEqual([...keys].sort().flatMap((k) => ids.get(k)!.map((id) => [k, id])));
    });

    it('List Multipart Uploads: by key, then upload id, across pages of 3', async () => {
      const { handle } = await service();
      const made: [string, string][] = [];
      for (const k of [...keys].reverse()) {
        for (let n = 0; n < 2; n++) {
          const r = await send(handle, 'POST', `${B}/${encodeURIComponent(k)}?uploads`);
          made.push([k, tagOf(r.text, 'UploadId')!]);
        }
      }
      const seen: [string, string][] = [];
      let keyMarker = '';
      let idMarker = '';
      for (let page = 0; page < 20; page++) {
        const r = await send(handle, 'GET', `${B}/?uploads&${q({ 'max-uploads': '3', 'key-marker': keyMarker, 'upload-id-marker': idMarker })}`);
        for (const m of r.text.matchAll(/<Upload>([\s\S]*?)<\/Upload>/g)) seen.push([tagOf(m[1]!, 'Key')!, tagOf(m[1]!, 'UploadId')!]);
        if (tagOf(r.text, 'IsTruncated') !== 'true') break;
        keyMarker = tagOf(r.text, 'NextKeyMarker')!;
        idMarker = tagOf(r.text, 'NextUploadIdMarker')!;
      }
      const byKeyThenId = (x: [string, string], y: [string, string]) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0);
      expect(seen).toEqual([...made].sort(byKeyThenId));
    });
  });

  async function signed(method: string, url: string): Promise<Headers> {
    const { signHeaders } = await import('../support/sign.ts');
    return signHeaders(method, url, new Headers());
  }

  describe('listing pages exactly like a naive model', () => {
    const keys = [
      'a', 'a/', 'a/b', 'a/b/c', 'a/c', 'a-b', 'a.b', 'ab', 'b/1', 'b/2', 'b/2/x', 'b//', 'c', 'photos/2024/x.jpg',
      'photos/2024/y.jpg', 'photos/2025/z.jpg', 'photos/readme', 'z', 'é', 'é/1', '😀/a', '😀/b', 'x y/1', 'x+y',
      // UTF-16 order puts astral characters (surrogates, D800–DFFF) before U+E000–U+FFFD; UTF-8 after.
      '\ue000', '\ue000/1', '\ufffd', '𝄞', '😀', 'a😀', 'a\ue000', 'a\ufffd', 'aÿ', 'a\u0100', 'a\u4000', 'a\u4100',
    ];

    /** Reference listing: everything S3 would return, in order, before paging. */
    function model(prefix: string, delimiter: string): string[] {
      const out: string[] = [];
      for (const k of [...keys].sort()) {
        if (!k.startsWith(prefix)) continue;
        const cut = delimiter ? k.indexOf(delimiter, prefix.length) : -1;
        const entry = cut >= 0 ? 'P:' + k.slice(0, cut + delimiter.length) : 'K:' + k;
        if (out.at(-1) !== entry) out.push(entry);
      }
      return out;
    }

    it('for every prefix, delimiter and page size', async () => {
      const { handle } = await service();
      for (const k of keys) expect((await send(handle, 'PUT', `${B}/${encodeURIComponent(k)}`, { body: k })).status).toBe(200);
      for (const prefix of ['', 'a', 'a/', 'b/', 'photos/', 'photos/2024/', 'é', '\ue000', '😀', 'nothing']) {
        for (const delimiter of ['', '/', '-']) {
          for (const maxKeys of [1, 2, 3, 1000]) {
            const seen: string[] = [];
            let marker = '';
            for (let page = 0; page < 50; page++) {
              const q = new URLSearchParams({ prefix, delimiter, 'max-keys': String(maxKeys), marker });
              const r = await send(handle, 'GET', `${B}/?${q}`);
              expect(r.status).toBe(200);
              const entries = [...r.text.matchAll(/<Contents><Key>([^<]*)<\/Key>|<CommonPrefixes><Prefix>([^<]*)<\/Prefix>/g)];
              // Keys and prefixes are grouped in the XML; the order of the page is by name.
              const pageEntries = entries.map((m) => (m[1] !== undefined ? 'K:' + m[1] : 'P:' + m[2]))
                .sort((x, y) => (x.slice(2) < y.slice(2) ? -1 : 1));
              expect(pageEntries.length).toBeLessThanOrEqual(maxKeys);
              seen.push(...pageEntries);
              const truncated = /<IsTruncated>true<\/IsTruncated>/.test(r.text);
              const next = /<NextMarker>([^<]*)<\/NextMarker>/.exec(r.text)?.[1];
              if (!truncated) {
                expect(next).toBeUndefined();
                break;
              }
              expect(next).toBeDefined();
              marker = next!;
            }
            expect(seen, `prefix=${prefix} delimiter=${delimiter} max=${maxKeys}`).toEqual(model(prefix, delimiter));
          }
        }
      }
    });
  });
});

// Delete Multiple reads the keys' span at once and range-deletes it when it holds only requested
// keys (sw/store/rules/objects.ts deleteMany): the keys around and between must never go with them.
describe.each(STORE_KINDS)('Delete Multiple leaves every key it was not given (%s store)', (kind: StoreKind) => {
  const deleteXml = (keys: string[]) => `<Delete><Quiet>true</Quiet>${keys.map((k) => `<Object><Key>${k}</Key></Object>`).join('')}</Delete>`;
  const listed = async (handle: (r: Request) => Promise<Response>) =>
    [...(await send(handle, 'GET', `${B}/?max-keys=1000`)).text.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]);

  const shapes: [string, string[], string[]][] = [
    // [what, stored keys, keys deleted]
    ['a whole folder, with keys before and after it', ['a', 'f/1', 'f/2', 'f/3', 'g'], ['f/1', 'f/2', 'f/3']],
    ['every other key of a span', ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'], ['k0', 'k2', 'k4']],
    ['two keys far apart, many between', ['a', ...Array.from({ length: 20 }, (_, i) => `m${String(i).padStart(2, '0')}`), 'z'], ['z', 'a']],
    ['keys that do not exist among ones that do', ['p1', 'p3'], ['p0', 'p1', 'p2', 'p3', 'p4']],
  ];
  for (const [what, stored, deleted] of shapes) {
    it(what, async () => {
      const { handle, store } = await newService({ kind });
      expect((await send(handle, 'PUT', `${B}/`)).status).toBe(200);
      for (const k of stored) expect((await send(handle, 'PUT', `${B}/${k}`, { body: `body of ${k}` })).status).toBe(200);
      const r = await send(handle, 'POST', `${B}/?delete`, { body: deleteXml(deleted) });
      expect(r.status, r.text).toBe(200);
      expect(await listed(handle)).toEqual(stored.filter((k) => !deleted.includes(k)));
      expect(integrity(await contents(store))).toEqual(SOUND);
    });
  }
});

// A body's id starts with its bucket and key (sw/store/rules/bodies.ts bodyId), so Delete Multiple can take
// a folder's bodies in one range delete; but a body keeps its id when its object moves, so the
// run of ids can hold a body of another object, which must stay.
describe('Delete Multiple takes bodies by range only when the run holds nothing else (IndexedDB store)', () => {
  const deleteXml = (keys: string[]) => `<Delete><Quiet>true</Quiet>${keys.map((k) => `<Object><Key>${k}</Key></Object>`).join('')}</Delete>`;

  /** Counts range deletes on the bodies store while `run` runs. */
  async function bodyRangeDeletes(run: () => Promise<void>): Promise<number> {
    const { IDBObjectStore, IDBKeyRange } = await import('fake-indexeddb');
    const original = IDBObjectStore.prototype.delete;
    let n = 0;
    IDBObjectStore.prototype.delete = function (this: IDBObjectStore, query: IDBValidKey | IDBKeyRange) {
      if (this.name === 'bodies' && query instanceof IDBKeyRange) n++;
      return original.call(this, query);
    };
    try {
      await run();
    } finally {
      IDBObjectStore.prototype.delete = original;
    }
    return n;
  }

  async function folder() {
    const s = await newService({ kind: 'idb' });
    expect((await send(s.handle, 'PUT', `${B}/`)).status).toBe(200);
    for (const k of ['a', 'f/1', 'f/2', 'f/3', 'f/4', 'f/5', 'z']) {
      expect((await send(s.handle, 'PUT', `${B}/${k}`, { body: `body of ${k}` })).status).toBe(200);
    }
    return s;
  }

  it('a whole folder: one range delete, and the keys around it keep their bodies', async () => {
    const { handle, store } = await folder();
    const ranges = await bodyRangeDeletes(async () => {
      const r = await send(handle, 'POST', `${B}/?delete`, { body: deleteXml(['f/1', 'f/2', 'f/3', 'f/4', 'f/5']) });
      expect(r.status, r.text).toBe(200);
    });
    expect(ranges).toBe(1);
    for (const k of ['a', 'z']) expect((await send(handle, 'GET', `${B}/${k}`)).text).toBe(`body of ${k}`);
    expect(integrity(await contents(store))).toEqual(SOUND);
  });

  it('a key moved out of the folder keeps its body when the rest of the folder goes', async () => {
    const { handle, store } = await folder();
    const moved = await send(handle, 'PUT', `${B}/moved`, { headers: { 'x-svc-move-source': '/photos/f%2F3' } });
    expect(moved.status, moved.text).toBe(200);
    const ranges = await bodyRangeDeletes(async () => {
      const r = await send(handle, 'POST', `${B}/?delete`, { body: deleteXml(['f/1', 'f/2', 'f/4', 'f/5']) });
      expect(r.status, r.text).toBe(200);
    });
    expect(ranges).toBe(0);
    expect((await send(handle, 'GET', `${B}/moved`)).text).toBe('body of f/3');
    expect(integrity(await contents(store))).toEqual(SOUND);
  });
});

// getObject reads the body a key had when last seen together with its record (sw/store/rules/store.ts,
// caches.ts, the body hints). Another runtime on the same database can have replaced it since: the answer must
// still be the current object's bytes.
describe('a GET after another runtime replaced the object answers the new bytes (IndexedDB store)', () => {
  async function started() {
    const { a, b } = await twoRuntimes('hints');
    expect((await send(a, 'PUT', `${B}/`)).status).toBe(200);
    return { a, b };
  }

  it('overwritten, deleted and written again, and an old version asked for by id', async () => {
    const { a, b } = await started();
    expect((await send(a, 'PUT', `${B}/k`, { body: 'first' })).status).toBe(200);
    expect((await send(a, 'GET', `${B}/k`)).text).toBe('first');
    expect((await send(b, 'PUT', `${B}/k`, { body: 'second' })).status).toBe(200);
    expect((await send(a, 'GET', `${B}/k`)).text).toBe('second');
    expect((await send(b, 'DELETE', `${B}/k`)).status).toBe(200);
    expect((await send(a, 'GET', `${B}/k`)).status).toBe(404);
    expect((await send(b, 'PUT', `${B}/k`, { body: 'third' })).status).toBe(200);
    expect((await send(a, 'GET', `${B}/k`)).text).toBe('third');

    expect((await send(b, 'PUT', `${B}/?versioning`, { body: '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>' })).status).toBe(200);
    const v1 = (await send(b, 'PUT', `${B}/v`, { body: 'one' })).headers.get('x-svc-version-id');
    expect((await send(a, 'GET', `${B}/v`)).text).toBe('one');
    expect((await send(b, 'PUT', `${B}/v`, { body: 'two' })).status).toBe(200);
    expect((await send(a, 'GET', `${B}/v`)).text).toBe('two');
    expect((await send(a, 'GET', `${B}/v?versionId=${v1}`)).text).toBe('one');
  });
});
