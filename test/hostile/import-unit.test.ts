// Issue 23, F2/F4/F5: an import is one unit of work. Attacks, over every store: another account's
// write acknowledged while an import runs survives the import's failure (F2), in a versioned bucket
// too; a conflict=overwrite import that fails leaves nothing it would have made (F4); nothing of a
// running import can be read, listed or charged before it ends; a write racing an import meets
// the conflict mode at the import's commit (docs/protocol.md, "Archives"); two imports at once
// both land; what an import that stopped had stored is swept by the next one. And `serve --data`
// killed with SIGKILL in the middle of an import (F5): after a restart nothing of it is there,
// nothing of it is left on disk, and the same import with conflict=fail succeeds.
import { describe, it, expect } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { packTar } from 'modern-tar';
import { buildRequest, newService, send, errorCode, type SendOptions } from '../support/service.ts';
import { STORE_KINDS, contents, integrity, tempDir, SOUND } from '../support/stores.ts';
import { described } from '../support/described.ts';
import { signHeaders } from '../support/sign.ts';
import { freePort } from '../support/ports.ts';
import { rawRequest } from '../support/http.ts';
import { openLmdbStore } from '../../node/lmdb-store.ts';
import type { Store } from '../../sw/store/types.ts';

const S = 'http://svc.localhost';
const host = (b: string) => `http://${b}.svc.localhost`;
const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');
const ALICE = { accessKeyId: 'alice', secret: 'alice-secret' };
const ENABLED = '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Item { bucket: string; key: string; bytes: Uint8Array; versionId?: number; current?: boolean }

/** An archive as swbucket's export writes one: the manifest, then each stored version. */
function archive(o: { buckets: { name: string; owner?: string; versioning?: string }[]; items: Item[]; accounts?: { accessKeyId: string; secret: string }[] }): Promise<Uint8Array> {
  const files = o.items.map((it) => (it.current === false ? `versions/${it.bucket}/${it.versionId}/${it.key}` : `objects/${it.bucket}/${it.key}`));
  const manifest = {
    format: 'swbucket-archive', version: 1,
    ...(o.accounts ? { accounts: o.accounts.map((a) => ({ ...a, displayName: a.accessKeyId })) } : {}),
    buckets: o.buckets.map((b) => ({
      name: b.name, owner: b.owner ?? 'svcadmin', acl: 'private', created: 0,
      nextVersionId: 1 + Math.max(0, ...o.items.filter((i) => i.bucket === b.name).map((i) => i.versionId ?? 0)),
      ...(b.versioning ? { versioning: b.versioning } : {}),
    })),
    objects: o.items.map((it, i) => ({
      bucket: it.bucket, key: it.key, current: it.current !== false, ...(it.versionId !== undefined ? { versionId: it.versionId } : {}),
      file: files[i], size: it.bytes.byteLength, etag: md5(it.bytes), lastModified: 0, contentType: 'application/octet-stream', headers: {}, meta: [],
    })),
  };
  const text = JSON.stringify(manifest);
  return packTar([
    { header: { name: 'swbucket.json', size: Buffer.byteLength(text) }, body: text },
    ...o.items.map((it, i) => ({ header: { name: files[i]!, size: it.bytes.byteLength }, body: it.bytes })),
  ]);
}

/** Where entry `n` (0 = the manifest) ends in `tar`: its 512-byte header, its body, its padding. */
function endOfEntry(tar: Uint8Array, n: number): number {
  let at = 0;
  for (let i = 0; i <= n; i++) {
    const size = parseInt(new TextDecoder().decode(tar.subarray(at + 124, at + 136)).replace(/\0.*$/, '').trim(), 8);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return at;
}

/**
 * An import whose body the test hands over piece by piece: `give` sends bytes and waits until the
 * service asks for more (so it has done all it can with them), `end` closes the body, `answer` is
 * the import's response.
 */
async function streamedImport(handle: (r: Request) => Promise<Response>, query: string) {
  const signed = await buildRequest('POST', `${S}/?${query}`, { contentLength: 'omit' });
  let asked: () => void = () => {};
  let wanted = new Promise<void>((r) => { asked = r; });
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) { controller = c; },
    // Called when the service reads and nothing is queued: it has done all it can with what it got.
    pull() {
      asked();
    },
  }, { highWaterMark: 0 });
  const init: RequestInit & { duplex: 'half' } = { method: 'POST', headers: signed.headers, body, duplex: 'half' };
  const answer = handle(new Request(signed.url, init)).then(async (r) => ({ status: r.status, text: await r.text() }));
  return {
    answer,
    async give(bytes: Uint8Array) {
      wanted = new Promise<void>((r) => { asked = r; });
      controller.enqueue(bytes);
      // Either the service wants more, or it has already answered (a refusal).
      await Promise.race([wanted, answer]);
      await sleep(20); // and whatever it does with them before asking has run
    },
    end() {
      try {
        controller.close();
      } catch {
        // the service stopped reading (a refusal): nothing to end
      }
    },
  };
}

const call = (handle: (r: Request) => Promise<Response>, method: string, url: string, o: SendOptions = {}) => send(handle, method, url, o);

/** Until the running import has stored bodies (a batch is 4 MiB or 256 bodies: sw/core/ops/archive.ts). */
async function untilStaged(store: Store) {
  await expect.poll(async () => (await contents(store)).heldBodies.length, { timeout: 20_000 }).toBeGreaterThan(0);
}

async function expectClean(store: Store) {
  const c = await contents(store);
  expect(c.heldBodies, 'bodies of an import left behind').toEqual([]);
  expect(integrity(c)).toEqual(SOUND);
}

/** The service with alice, who may write to root's bucket `photos` (public-read buckets are readable only: she owns `alices`). */
async function withAlice(kind: (typeof STORE_KINDS)[number]) {
  const svc = await newService({ kind });
  const ok = async (method: string, url: string, o: SendOptions = {}) => {
    const r = await call(svc.handle, method, url, o);
    expect(r.status, `${method} ${url}: ${r.text}`).toBeLessThan(300);
    return r;
  };
  await ok('PUT', `${S}/?account=alice`, { body: '<Account><SecretAccessKey>alice-secret</SecretAccessKey></Account>' });
  await ok('PUT', `${host('alices')}/`, { auth: ALICE });
  return { ...svc, ok };
}

const items = (bucket: string, n: number, size = 3000): Item[] =>
  Array.from({ length: n }, (_, i) => ({ bucket, key: `k${i}`, bytes: randomBytes(size + i) }));

for (const kind of STORE_KINDS) {
  describe(`an import is one unit of work (${kind} store)`, () => {
    for (const versioning of ['unversioned', 'versioned'] as const) {
      it(`F2 (${versioning}): a failed import takes back nobody's write — alice's PUT during it stays, and nothing of the import does`, async () => {
        const { handle, store, ok } = await withAlice(kind);
        if (versioning === 'versioned') await ok('PUT', `${host('alices')}/?versioning`, { body: ENABLED, auth: ALICE });
        const tar = await archive({ buckets: [{ name: 'alices', owner: 'alice' }], items: items('alices', 6, 1_500_000) });
        const imp = await streamedImport(handle, 'import&conflict=skip');
        await imp.give(tar.subarray(0, endOfEntry(tar, 4)));
        await untilStaged(store); // k0…k2 stored, as the import once restored them before its end
        const hers = await ok('PUT', `${host('alices')}/k1`, { auth: ALICE, body: 'alice wrote this' });
        await imp.give(new Uint8Array(2048).fill(0x41)); // not a tar header: the archive is damaged
        imp.end();
        const r = await imp.answer;
        expect([r.status, errorCode(r.text)], r.text).toEqual([400, 'MalformedArchive']);
        expect(r.text).toContain('Nothing was imported.');
        expect((await ok('GET', `${host('alices')}/k1`, { auth: ALICE })).text).toBe('alice wrote this');
        const versions = (await ok('GET', `${host('alices')}/?versions`, { auth: ALICE })).text;
        expect([...versions.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1])).toEqual(['k1']);
        expect(versions).toContain(`<VersionId>${hers.headers.get('x-svc-version-id') ?? 'null'}</VersionId>`);
        await expectClean(store);
      });
    }

    it('F4: a conflict=overwrite import that fails leaves nothing it made or replaced: no account, bucket or object', async () => {
      const { handle, store, ok } = await withAlice(kind);
      await ok('PUT', `${host('alices')}/k0`, { auth: ALICE, body: 'old' });
      const before = await described(store);
      const tar = await archive({
        accounts: [{ accessKeyId: 'bob', secret: 'bob-secret' }],
        buckets: [{ name: 'alices', owner: 'alice' }, { name: 'fresh', owner: 'bob' }],
        items: [...items('alices', 3), ...items('fresh', 3)],
      });
      // Cut in the middle of the last object: every other one was read and stored first.
      const cut = tar.subarray(0, endOfEntry(tar, 5) + 700);
      const r = await call(handle, 'POST', `${S}/?import&conflict=overwrite`, { body: cut });
      expect([r.status, errorCode(r.text)], r.text).toEqual([400, 'MalformedArchive']);
      expect(await described(store)).toEqual(before);
      expect((await ok('GET', `${host('alices')}/k0`, { auth: ALICE })).text).toBe('old');
      await expectClean(store);
    });

    it('nothing of a running import can be read, listed or charged; at its end all of it can', async () => {
      const { handle, store, ok } = await withAlice(kind);
      const its = [...items('alices', 4, 1_500_000), ...items('fresh', 2)];
      const tar = await archive({ buckets: [{ name: 'alices', owner: 'alice' }, { name: 'fresh' }], items: its });
      const imp = await streamedImport(handle, 'import');
      await imp.give(tar.subarray(0, endOfEntry(tar, 5)));
      await untilStaged(store);
      expect((await call(handle, 'GET', `${host('alices')}/k0`, { auth: ALICE })).status).toBe(404);
      expect((await ok('GET', `${host('alices')}/`, { auth: ALICE })).text).not.toContain('<Key>');
      expect((await call(handle, 'GET', `${host('fresh')}/`)).status).toBe(404);
      expect((await ok('GET', `${S}/?accounts`)).text).toMatch(/<AccessKeyId>alice<\/AccessKeyId>.*?<UsedBytes>0<\/UsedBytes>/s);
      await imp.give(tar.subarray(endOfEntry(tar, 5)));
      imp.end();
      const r = await imp.answer;
      expect(r.status, r.text).toBe(200);
      for (const it of its) {
        const got = await call(handle, 'GET', `${host(it.bucket)}/${it.key}`, it.bucket === 'alices' ? { auth: ALICE } : {});
        expect([got.status, got.headers.get('etag')], it.key).toEqual([200, `"${md5(it.bytes)}"`]);
      }
      const used = its.filter((i) => i.bucket === 'alices').reduce((n, i) => n + i.bytes.byteLength, 0);
      expect((await ok('GET', `${S}/?accounts`)).text).toMatch(new RegExp(`<AccessKeyId>alice</AccessKeyId>.*?<UsedBytes>${used}</UsedBytes>`, 's'));
      await expectClean(store);
    });

    it('a write racing an import meets its conflict mode at the commit: skip keeps it, overwrite replaces it, fail refuses the whole import', async () => {
      for (const [mode, status, k1] of [['skip', 200, 'alice wrote this'], ['overwrite', 200, 'archive'], ['fail', 409, 'alice wrote this']] as const) {
        const { handle, store, ok } = await withAlice(kind);
        const tar = await archive({
          buckets: [{ name: 'alices', owner: 'alice' }],
          items: [{ bucket: 'alices', key: 'k0', bytes: new TextEncoder().encode('zero') }, { bucket: 'alices', key: 'k1', bytes: new TextEncoder().encode('archive') }],
        });
        const imp = await streamedImport(handle, `import&conflict=${mode}`);
        await imp.give(tar.subarray(0, endOfEntry(tar, 1)));
        await ok('PUT', `${host('alices')}/k1`, { auth: ALICE, body: 'alice wrote this' });
        await imp.give(tar.subarray(endOfEntry(tar, 1)));
        imp.end();
        const r = await imp.answer;
        expect(r.status, `${mode}: ${r.text}`).toBe(status);
        if (mode === 'fail') expect([errorCode(r.text), r.text]).toEqual(['ImportConflict', expect.stringContaining('Nothing was imported.')]);
        expect((await ok('GET', `${host('alices')}/k1`, { auth: ALICE })).text, mode).toBe(k1);
        expect((await call(handle, 'GET', `${host('alices')}/k0`, { auth: ALICE })).status, mode).toBe(mode === 'fail' ? 404 : 200);
        await expectClean(store);
      }
    });

    it('two imports at once both land; the second does not sweep the first', async () => {
      const { handle, store } = await withAlice(kind);
      const first = [...items('one', 300, 100)];
      const a = await archive({ buckets: [{ name: 'one' }], items: first });
      const imp = await streamedImport(handle, 'import');
      await imp.give(a.subarray(0, endOfEntry(a, 280))); // past the first batch of 256
      await untilStaged(store);
      const b = await call(handle, 'POST', `${S}/?import`, { body: await archive({ buckets: [{ name: 'two' }], items: items('two', 3) }) });
      expect(b.status, b.text).toBe(200);
      await imp.give(a.subarray(endOfEntry(a, 280)));
      imp.end();
      const r = await imp.answer;
      expect(r.status, r.text).toBe(200);
      expect(r.text).toContain('<ObjectsRestored>300</ObjectsRestored>');
      await expectClean(store);
    });

    it('what an import that stopped had stored is swept by the next import, and by nothing else', async () => {
      const { handle, store } = await withAlice(kind);
      // As a killed runtime leaves it: bodies recorded as an import's, never committed.
      await store.stageImportBodies('stopped-import', [{ bucketId: 'x', key: 'k', body: new Blob([randomBytes(100_000)]) }, { bucketId: 'x', key: 'j', body: new Blob(['small']) }]);
      expect(await store.listHolders()).toEqual(['stopped-import']);
      expect((await call(handle, 'PUT', `${host('alices')}/k`, { auth: ALICE, body: 'x' })).status).toBe(200);
      expect(await store.listHolders()).toEqual(['stopped-import']);
      const r = await call(handle, 'POST', `${S}/?import`, { body: await archive({ buckets: [{ name: 'fresh' }], items: items('fresh', 2) }) });
      expect(r.status, r.text).toBe(200);
      expect(await store.listHolders()).toEqual([]);
      await expectClean(store);
    });
  });
}

// ---- serve --data, killed in the middle of an import ----

const ROOT_DIR = new URL('../../', import.meta.url).pathname;

async function serve(dir: string): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'node/cli.ts', 'serve', '--data', dir, '--port', String(port)], { cwd: ROOT_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const until = Date.now() + 20_000;
  while (!out.includes('listening on')) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${out}`);
    if (Date.now() > until) throw new Error(`the server did not start:\n${out}`);
    await sleep(25);
  }
  return { port, child };
}

async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

function signed(port: number, method: string, path: string, length?: number, as?: { accessKeyId: string; secret: string }): Record<string, string> {
  const h = new Headers();
  if (length !== undefined) h.set('content-length', String(length));
  signHeaders(method, `http://127.0.0.1:${port}${path}`, h, as);
  return Object.fromEntries(h);
}

describe('F5: swbucket serve --data killed in the middle of an import', () => {
  it('after SIGKILL and a restart nothing of the import is there or left on disk, and the same import with conflict=fail succeeds', async () => {
    const dir = tempDir();
    const its = items('photos', 20, 600_000);
    const tar = Buffer.from(await archive({ accounts: [{ accessKeyId: 'bob', secret: 'bob-secret' }], buckets: [{ name: 'photos', owner: 'bob' }], items: its }));
    let s = await serve(dir);
    try {
      // Half the archive, then the server is killed while it waits for the rest.
      const path = '/?import&conflict=fail';
      const req = http.request({ host: '127.0.0.1', port: s.port, method: 'POST', path, headers: signed(s.port, 'POST', path, tar.length), agent: false });
      req.on('error', () => {});
      req.write(tar.subarray(0, endOfEntry(tar, 12)));
      await sleep(1500);
      await kill9(s.child);
      req.destroy();

      const seen = await openLmdbStore({ path: dir });
      try {
        const c = await contents(seen);
        // The kill came while the import had stored bodies: the attack hit the window it aims at.
        expect(c.heldBodies.length).toBeGreaterThan(0);
        expect(c.accounts.map((a) => a.accessKeyId)).toEqual(['svcadmin']);
        expect([c.buckets, c.objects, c.versions]).toEqual([[], [], []]);
        expect(integrity(c)).toEqual(SOUND);
      } finally {
        await seen.close();
      }

      s = await serve(dir); // sweeps what the stopped import stored
      await kill9(s.child);
      const swept = await openLmdbStore({ path: dir });
      try {
        const c = await contents(swept);
        expect([c.heldBodies, c.bodies]).toEqual([[], []]);
        expect(integrity(c)).toEqual(SOUND);
      } finally {
        await swept.close();
      }

      s = await serve(dir);
      const again = await rawRequest(s.port, { method: 'POST', path, headers: signed(s.port, 'POST', path, tar.length), body: tar });
      expect(again.status, again.text).toBe(200);
      expect(again.text).toContain('<ObjectsRestored>20</ObjectsRestored>');
      const got = await rawRequest(s.port, { method: 'GET', path: '/photos/k19', headers: signed(s.port, 'GET', '/photos/k19', undefined, { accessKeyId: 'bob', secret: 'bob-secret' }) });
      expect([got.status, md5(got.body)], got.text.slice(0, 300)).toEqual([200, md5(its[19]!.bytes)]);
    } finally {
      await kill9(s.child);
    }
  }, 60_000);
});
