// `swbucket serve --data DIR` as a user runs it (node/cli.ts in its own process), killed with
// SIGKILL: no shutdown code runs, so only what LMDB committed survives. Every write the server
// acknowledged must be there after a restart, byte for byte with its ETag and metadata; a write
// in flight at the kill must be there whole or not at all; and the directory, opened by the store
// between kill and restart, must hold no orphaned body and exact usage figures. Also, in this
// process: startServer({ dataDir }) holds its directory until closed.
import { describe, it, expect } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { signHeaders } from '../support/sign.ts';
import { freePort } from '../support/ports.ts';
import { rawRequest, type RawResponse } from '../support/http.ts';
import { tempDir, contents, integrity, SOUND } from '../support/stores.ts';
import { openLmdbStore } from '../../node/lmdb-store.ts';
import { startServer } from '../../node/server.ts';

const ROOT_DIR = new URL('../../', import.meta.url).pathname;
const KiB = 1024;
const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');
const multipartEtag = (etags: string[]) => md5(etags.map((e) => `${e}-`).join('')) + '-1';
const tag = (text: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ALICE = { accessKeyId: 'alice', secret: 'alice-secret' };

interface Server {
  port: number;
  child: ChildProcess;
  output: () => string;
}

/** The CLI on `dir`, once its banner says it listens. */
async function serve(dir: string): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'node/cli.ts', 'serve', '--data', dir, '--port', String(port)], {
    cwd: ROOT_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-8000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const until = Date.now() + 20_000;
  while (!out.includes('listening on')) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${out}`);
    if (Date.now() > until) throw new Error(`the server did not start:\n${out}`);
    await sleep(25);
  }
  expect(out).toContain(`(data kept in ${dir})`);
  return { port, child, output: () => out };
}

async function kill9(s: Server): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGKILL');
  await exited;
}

type Res = RawResponse;

/** One signed request (as root unless `as`), path style, on a connection of its own. */
function call(port: number, method: string, path: string, o: { body?: Buffer | string; headers?: Record<string, string>; as?: typeof ALICE | 'anon' } = {}): Promise<Res> {
  const body = o.body === undefined ? undefined : Buffer.from(o.body);
  const h = new Headers(o.headers ?? {});
  if (body !== undefined || method === 'PUT' || method === 'POST') h.set('content-length', String(body?.length ?? 0));
  if (o.as !== 'anon') signHeaders(method, `http://127.0.0.1:${port}${path}`, h, o.as);
  return rawRequest(port, { method, path, headers: Object.fromEntries(h), ...(body !== undefined ? { body } : {}) });
}

async function ok(port: number, method: string, path: string, o: Parameters<typeof call>[3] = {}): Promise<Res> {
  const r = await call(port, method, path, o);
  expect(r.status, `${method} ${path}: ${r.text}`).toBeLessThan(300);
  return r;
}

/** The directory as the store sees it: no orphan, no dangling reference, exact usage. */
async function expectSound(dir: string): Promise<void> {
  const store = await openLmdbStore({ path: dir });
  try {
    expect(integrity(await contents(store))).toEqual(SOUND);
  } finally {
    await store.close();
  }
}

describe('a server that keeps its data (swbucket serve --data DIR)', () => {
  it('startServer({ dataDir }): one server per directory; close, or a failed listen, frees it; the data stays', async () => {
    const dir = tempDir();
    const quiet = { log: () => {} };
    const a = await startServer({ port: 0, dataDir: dir, ...quiet });
    expect(a.dataDir).toBe(dir);
    await expect(startServer({ port: 0, dataDir: dir, ...quiet })).rejects.toThrow(/in use/);
    // Its port taken: the server does not start, and lets go of its directory.
    await expect(startServer({ port: a.port, dataDir: join(dir, 'other'), ...quiet })).rejects.toThrow(/EADDRINUSE/);
    await (await openLmdbStore({ path: join(dir, 'other') })).close();
    await ok(a.port, 'PUT', '/kept/');
    await ok(a.port, 'PUT', '/kept/k', { body: 'kept' });
    await a.close();
    const b = await startServer({ port: 0, dataDir: dir, ...quiet });
    try {
      expect((await ok(b.port, 'GET', '/kept/k')).text).toBe('kept');
    } finally {
      await b.close();
    }
    const inMemory = await startServer({ port: 0, ...quiet });
    expect(inMemory.dataDir).toBeUndefined();
    await inMemory.close();
  });

  it('after SIGKILL and a restart: objects byte for byte, versions, accounts, buckets, ACLs, versioning, uploads', async () => {
    const dir = tempDir();
    let s = await serve(dir);
    try {
      const p = s.port;
      await ok(p, 'PUT', '/?account=alice', { body: '<Account><SecretAccessKey>alice-secret</SecretAccessKey><DisplayName>Alice</DisplayName><QuotaBytes>5000000</QuotaBytes></Account>' });
      await ok(p, 'PUT', '/keep/');
      await ok(p, 'PUT', '/keep/?versioning', { body: '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>' });
      await ok(p, 'PUT', '/shared/', { as: ALICE, headers: { 'x-svc-acl': 'public-read' } });

      const objects = new Map<string, { bytes: Buffer; type: string; meta: string }>();
      const sizes = [0, 1, 1000, 64 * KiB, 1024 * KiB];
      for (const [i, size] of sizes.entries()) {
        const key = `obj-${i}-${['é', '😀', '\ue000', 'a b', 'x'][i]}`;
        const bytes = randomBytes(size);
        const type = ['text/plain', 'image/png', 'application/octet-stream', 'text/html; charset=utf-8', 'application/json'][i]!;
        const r = await ok(p, 'PUT', `/keep/${encodeURIComponent(key)}`, { body: bytes, headers: { 'content-type': type, 'x-svc-meta-n': String(i) } });
        expect(r.headers.etag).toBe(`"${md5(bytes)}"`);
        objects.set(key, { bytes, type, meta: String(i) });
      }
      // A second version of one key; its first stays in the history.
      const v1 = (await ok(p, 'HEAD', '/keep/obj-2-%EE%80%80')).headers['x-svc-version-id'];
      const second = randomBytes(3000);
      const v2 = (await ok(p, 'PUT', '/keep/obj-2-%EE%80%80', { body: second })).headers['x-svc-version-id'];
      const first = objects.get('obj-2-\ue000')!;
      objects.set('obj-2-\ue000', { bytes: second, type: 'application/octet-stream', meta: '' });
      // A completed multipart object and an upload still in progress, in alice's public bucket.
      const partBytes = [randomBytes(20 * KiB), randomBytes(20 * KiB), randomBytes(5 * KiB)];
      const up = tag((await ok(p, 'POST', '/shared/big?uploads', { as: ALICE })).text, 'UploadId')!;
      for (const [i, b] of partBytes.entries()) await ok(p, 'PUT', `/shared/big?partNumber=${i + 1}&uploadId=${up}`, { as: ALICE, body: b });
      const done = await ok(p, 'POST', `/shared/big?uploadId=${up}`, {
        as: ALICE,
        body: `<CompleteMultipartUpload>${partBytes.map((b, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>"${md5(b)}"</ETag></Part>`).join('')}</CompleteMultipartUpload>`,
      });
      expect(tag(done.text, 'ETag')).toContain(multipartEtag(partBytes.map((b) => md5(b))));
      const pending = tag((await ok(p, 'POST', '/shared/later?uploads', { as: ALICE })).text, 'UploadId')!;
      const pendingPart = randomBytes(17 * KiB);
      await ok(p, 'PUT', `/shared/later?partNumber=1&uploadId=${pending}`, { as: ALICE, body: pendingPart });
      const accountsBefore = (await ok(p, 'GET', '/?accounts')).text;

      await kill9(s);
      await expectSound(dir);
      s = await serve(dir);
      const q = s.port;

      for (const [key, o] of objects) {
        const r = await ok(q, 'GET', `/keep/${encodeURIComponent(key)}`);
        expect(md5(r.body), key).toBe(md5(o.bytes));
        expect(r.body.length).toBe(o.bytes.length);
        expect(r.headers.etag).toBe(`"${md5(o.bytes)}"`);
        if (o.meta) {
          expect(r.headers['content-type']).toBe(o.type);
          expect(r.headers['x-svc-meta-n']).toBe(o.meta);
        }
      }
      const old = await ok(q, 'GET', `/keep/obj-2-%EE%80%80?versionId=${v1}`);
      expect(md5(old.body)).toBe(md5(first.bytes));
      const versions = (await ok(q, 'GET', '/keep/?versions&prefix=obj-2-')).text;
      expect([...versions.matchAll(/<VersionId>([^<]*)<\/VersionId>/g)].map((m) => m[1])).toEqual([v2, v1]);
      expect((await ok(q, 'GET', '/keep/?versioning')).text).toContain('<Status>Enabled</Status>');
      expect((await ok(q, 'GET', '/?accounts')).text).toBe(accountsBefore);
      // The public-read ACL still lets anyone read; alice's secret still signs.
      const big = await ok(q, 'GET', '/shared/big', { as: 'anon' });
      expect(md5(big.body)).toBe(md5(Buffer.concat(partBytes)));
      expect(big.headers.etag).toBe(`"${multipartEtag(partBytes.map((b) => md5(b)))}"`);
      const uploads = (await ok(q, 'GET', '/shared/?uploads', { as: ALICE })).text;
      expect(tag(uploads, 'UploadId')).toBe(pending);
      const parts = (await ok(q, 'GET', `/shared/later?uploadId=${pending}`, { as: ALICE })).text;
      expect(tag(parts, 'ETag')).toContain(md5(pendingPart));
      // And it goes on: the restarted server writes as before.
      await ok(q, 'PUT', '/keep/after', { body: 'after' });
    } finally {
      await kill9(s);
    }
  }, 60_000);

  it('kills in the middle of concurrent PUTs, Upload Parts and Completes: acknowledged writes stay, the rest is whole or absent', async () => {
    const dir = tempDir();
    const ROUNDS = 6;
    type Put = { key: string; md5: string; acked: boolean };
    type Part = { md5: string; acked: boolean };
    type Upload = { key: string; id: string; parts: Map<number, Part>; complete?: { etag: string; bytes: string; acked: boolean } };
    const puts: Put[] = [];
    /** Per writer, one key written again and again: what it holds, and the body in flight at the kill. */
    const hot = new Map<string, { held?: string; inFlight?: string }>();
    const uploads: Upload[] = [];
    let s = await serve(dir);
    await ok(s.port, 'PUT', '/loop/');
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const p = s.port;
        let stop = false;
        /** The answer, or undefined when the connection died (the kill): not acknowledged. */
        const attempt = (method: string, path: string, o: Parameters<typeof call>[3] = {}) => call(p, method, path, o).catch(() => undefined);
        const putter = async (w: number) => {
          const h = hot.get(`hot-${w}`) ?? {};
          hot.set(`hot-${w}`, h);
          for (let n = 0; !stop; n++) {
            const bytes = randomBytes(Math.floor(Math.random() * 200 * KiB));
            const put: Put = { key: `r${round}-w${w}-${n}`, md5: md5(bytes), acked: false };
            puts.push(put);
            const r = await attempt('PUT', `/loop/${put.key}`, { body: bytes });
            if (!r) return;
            expect(r.status, r.text).toBe(200);
            expect(r.headers.etag).toBe(`"${put.md5}"`);
            put.acked = true;
            const next = randomBytes(Math.floor(Math.random() * 64 * KiB) + 1);
            h.inFlight = md5(next);
            const o = await attempt('PUT', `/loop/hot-${w}`, { body: next });
            if (!o) return;
            expect(o.status, o.text).toBe(200);
            h.held = h.inFlight;
            delete h.inFlight;
          }
        };
        const multiparter = async (w: number) => {
          for (let n = 0; !stop; n++) {
            const key = `mp-r${round}-w${w}-${n}`;
            const init = await attempt('POST', `/loop/${key}?uploads`);
            if (!init) return;
            expect(init.status, init.text).toBe(200);
            const u: Upload = { key, id: tag(init.text, 'UploadId')!, parts: new Map() };
            uploads.push(u);
            const bodies = [randomBytes(20 * KiB), randomBytes(20 * KiB), randomBytes(Math.floor(Math.random() * 30 * KiB) + 1)];
            // The parts in parallel, as clients send them.
            const answers = await Promise.all(bodies.map(async (b, i) => {
              const part: Part = { md5: md5(b), acked: false };
              u.parts.set(i + 1, part);
              const r = await attempt('PUT', `/loop/${key}?partNumber=${i + 1}&uploadId=${u.id}`, { body: b });
              if (r) {
                expect(r.status, r.text).toBe(200);
                part.acked = true;
              }
              return r;
            }));
            if (answers.some((r) => !r)) return;
            u.complete = { etag: multipartEtag(bodies.map((b) => md5(b))), bytes: md5(Buffer.concat(bodies)), acked: false };
            const r = await attempt('POST', `/loop/${key}?uploadId=${u.id}`, {
              body: `<CompleteMultipartUpload>${bodies.map((b, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>"${md5(b)}"</ETag></Part>`).join('')}</CompleteMultipartUpload>`,
            });
            if (!r) return;
            expect(r.status, r.text).toBe(200);
            u.complete.acked = true;
          }
        };
        const writers = Promise.all([...[0, 1, 2, 3].map(putter), ...[0, 1].map(multiparter)]);
        await sleep(200 + Math.random() * 500);
        stop = true;
        await kill9(s);
        await writers;

        await expectSound(dir);
        s = await serve(dir);
        const q = s.port;

        // Every PUT so far: acknowledged → there, exact; not acknowledged → exact or absent.
        for (const put of puts) {
          const r = await call(q, 'GET', `/loop/${put.key}`);
          if (r.status === 404) {
            expect(put.acked, `acknowledged ${put.key} is gone`).toBe(false);
            continue;
          }
          expect(r.status).toBe(200);
          expect(md5(r.body), put.key).toBe(put.md5);
          expect(r.headers.etag).toBe(`"${put.md5}"`);
        }
        for (const [key, h] of hot) {
          const r = await call(q, 'GET', `/loop/${key}`);
          const found = r.status === 404 ? undefined : md5(r.body);
          if (found !== undefined) expect(r.headers.etag).toBe(`"${found}"`);
          expect([h.held, h.inFlight], key).toContain(found);
          h.held = found; // what the next round starts from
          delete h.inFlight;
        }
        // Every upload: its object whole after a Complete, or the upload with exactly its stored parts.
        const inProgress = (await ok(q, 'GET', '/loop/?uploads')).text;
        for (const u of uploads) {
          const object = await call(q, 'GET', `/loop/${u.key}`);
          const listed = inProgress.includes(`<UploadId>${u.id}</UploadId>`);
          if (object.status === 200) {
            expect(u.complete, `${u.key} exists only after a Complete`).toBeDefined();
            expect(md5(object.body)).toBe(u.complete!.bytes);
            expect(object.headers.etag).toBe(`"${u.complete!.etag}"`);
            expect(listed, `${u.key}: completed, its upload is gone`).toBe(false);
            continue;
          }
          expect(object.status).toBe(404);
          expect(u.complete?.acked ?? false, `acknowledged Complete of ${u.key} is gone`).toBe(false);
          expect(listed, `upload of ${u.key} is neither completed nor in progress`).toBe(true);
          const parts = (await ok(q, 'GET', `/loop/${u.key}?uploadId=${u.id}`)).text;
          const stored = new Map([...parts.matchAll(/<Part>([\s\S]*?)<\/Part>/g)]
            .map((m) => [Number(tag(m[1]!, 'PartNumber')), tag(m[1]!, 'ETag')!.replace(/&quot;|"/g, '')]));
          for (const [n, part] of u.parts) {
            if (part.acked) expect(stored.get(n), `acknowledged part ${n} of ${u.key}`).toBe(part.md5);
            else if (stored.has(n)) expect(stored.get(n)).toBe(part.md5);
          }
        }
      }
      // The rounds wrote, and were cut with writes in flight.
      const parts = uploads.flatMap((u) => [...u.parts.values()]);
      const counts = {
        puts: puts.filter((x) => x.acked).length, putsInFlight: puts.filter((x) => !x.acked).length,
        parts: parts.filter((x) => x.acked).length, partsInFlight: parts.filter((x) => !x.acked).length,
        completes: uploads.filter((u) => u.complete?.acked).length, completesInFlight: uploads.filter((u) => u.complete && !u.complete.acked).length,
      };
      expect(counts.puts, JSON.stringify(counts)).toBeGreaterThan(ROUNDS * 4);
      expect(counts.completes, JSON.stringify(counts)).toBeGreaterThan(0);
      expect(counts.putsInFlight + counts.partsInFlight + counts.completesInFlight, JSON.stringify(counts)).toBeGreaterThanOrEqual(ROUNDS);
      console.log(`durable-server: ${ROUNDS} kills; acknowledged and found: ${JSON.stringify(counts)}`);
    } finally {
      await kill9(s);
    }
  }, 90_000);
});
