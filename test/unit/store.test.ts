// Store invariants seen through the handler: every stored body belongs to exactly one object,
// writes are whole or absent, reads are snapshots, listings page exactly.
import { describe, it, expect } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { newService, send } from '../support/service.ts';

const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');
const B = 'http://photos.svc.localhost';

async function service() {
  const s = await newService();
  expect((await send(s.handle, 'PUT', `${B}/`)).status).toBe(200);
  return s;
}

/** Body records that no object references, and references that point at no body. */
async function orphans(store: Awaited<ReturnType<typeof newService>>['store']) {
  const db = await (store as unknown as { db(): Promise<import('idb').IDBPDatabase> }).db();
  const bodyIds = new Set((await db.getAll('bodies')).map((b: { id: string }) => b.id));
  const referenced = (await db.getAll('objects')).flatMap((o: { chunks: { id: string }[] }) => o.chunks.map((c) => c.id));
  const unreferenced = [...bodyIds].filter((id) => !referenced.includes(id));
  const dangling = referenced.filter((id) => !bodyIds.has(id));
  return { bodies: bodyIds.size, unreferenced, dangling };
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
    for (const r of await Promise.all(reads)) {
      const body = new Uint8Array(await r.arrayBuffer());
      expect(known.has(md5(body))).toBe(true);
      expect(r.headers.get('etag')).toBe(`"${md5(body)}"`);
    }
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
    for (const prefix of ['', 'a', 'a/', 'b/', 'photos/', 'photos/2024/', 'é', 'nothing']) {
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
