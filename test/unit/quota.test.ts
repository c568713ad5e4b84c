// Quotas through handle() (docs/protocol.md, "Accounts"): an account's stored bytes — current objects,
// historical versions, uploaded parts — may not pass its QuotaBytes; the write that would pass it
// (PUT, Copy, Upload Part) gets 403 QuotaExceeded and changes nothing; exactly equal is allowed;
// Complete and Move never add bytes. When IndexedDB itself refuses a write (QuotaExceededError),
// the answer is 403 QuotaExceeded, nothing is half-written, and reads and deletes keep working.
// UsedBytes of GET /?accounts is checked against sizes summed from the database records.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createHash } from 'node:crypto';
import { IDBObjectStore as FakeObjectStore, IDBTransaction as FakeTransaction } from 'fake-indexeddb';
import { newService, send, errorCode, type SendOptions } from '../support/service.ts';
import { STORE_KINDS, contents, type StoreKind } from '../support/stores.ts';

type Svc = Awaited<ReturnType<typeof newService>>;
type Res = Awaited<ReturnType<typeof send>>;
type Creds = { accessKeyId: string; secret: string };

const SVC = 'http://svc.localhost';
const ALICE: Creds = { accessKeyId: 'alice', secret: 'alice-secret' };
const BOB: Creds = { accessKeyId: 'bob', secret: 'bob-secret-1' };
const host = (b: string): string => `http://${b}.svc.localhost`;
const md5 = (s: string | Uint8Array): string => createHash('md5').update(s).digest('hex');
const tag = (text: string, name: string): string | undefined => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];
const bytes = (n: number, fill = 'x'): string => fill.repeat(n);
const ENABLED = '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>';
const SUSPENDED = '<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>';

// ------------------------------------------------------------------------------------------------
// helpers

interface T {
  svc: Svc;
  call(method: string, url: string, o?: SendOptions): Promise<Res>;
  ok(method: string, url: string, o?: SendOptions): Promise<Res>;
}

async function service(): Promise<T> {
  const svc = await newService({ kind });
  const call = (method: string, url: string, o: SendOptions = {}) => send(svc.handle, method, url, o);
  const ok = async (method: string, url: string, o: SendOptions = {}) => {
    const r = await call(method, url, o);
    expect(r.status, `${method} ${url}: ${r.text}`).toBe(200);
    return r;
  };
  return { svc, call, ok };
}

async function createAccount(t: T, c: Creds, quota?: number): Promise<void> {
  await t.ok('PUT', `${SVC}/?account=${c.accessKeyId}`, {
    body:
      `<Account><SecretAccessKey>${c.secret}</SecretAccessKey><DisplayName>${c.accessKeyId}</DisplayName>` +
      (quota !== undefined ? `<QuotaBytes>${quota}</QuotaBytes>` : '') +
      '</Account>',
  });
}

/** An account with a quota and one bucket `b` (optionally versioned). */
async function withQuota(quota: number, versioning?: 'Enabled'): Promise<T & { B: string }> {
  const t = await service();
  await createAccount(t, ALICE, quota);
  await t.ok('PUT', `${host('abkt')}/`, { auth: ALICE });
  if (versioning) await t.ok('PUT', `${host('abkt')}/?versioning`, { auth: ALICE, body: ENABLED });
  return { ...t, B: host('abkt') };
}

/** UsedBytes of every account, from GET /?accounts. */
async function usedBytes(t: T): Promise<Record<string, number>> {
  const r = await t.ok('GET', `${SVC}/?accounts`);
  const out: Record<string, number> = {};
  for (const m of r.text.matchAll(/<Account>([\s\S]*?)<\/Account>/g)) {
    out[tag(m[1]!, 'AccessKeyId')!] = Number(tag(m[1]!, 'UsedBytes'));
  }
  return out;
}
async function used(t: T, id = 'alice'): Promise<number> {
  return (await usedBytes(t))[id]!;
}

type Db = import('idb').IDBPDatabase;
const dbOf = (svc: Svc): Promise<Db> => (svc.store as unknown as { db(): Promise<Db> }).db();

function sizeOf(v: unknown): number | undefined {
  if (v instanceof Blob) return v.size;
  if (v instanceof ArrayBuffer) return v.byteLength;
  if (ArrayBuffer.isView(v)) return v.byteLength;
  return undefined;
}
/** Every store; bodies by id and size. (LMDB: the same records, test/support/stores.ts.) */
async function snapshot(svc: Svc): Promise<Record<string, unknown[]>> {
  if (svc.kind !== 'idb') {
    const { exactUsage: _, ...records } = await contents(svc.store);
    return records as unknown as Record<string, unknown[]>;
  }
  const db = await dbOf(svc);
  const out: Record<string, unknown[]> = {};
  for (const name of Array.from(db.objectStoreNames).sort()) {
    const rows = (await db.getAll(name)) as Record<string, unknown>[];
    out[name] =
      name === 'bodies'
        ? rows.map((r) => ({ id: r.id, size: Object.values(r).map(sizeOf).find((n) => n !== undefined) }))
        : rows;
  }
  return out;
}

interface Usage {
  /** Bytes per account: object, version and part sizes of the buckets it owns. */
  byOwner: Record<string, number>;
  /** Sum of all body record sizes. */
  bodies: number;
}
/** Usage computed from the database records, independently of the accounts store. */
async function dbUsage(svc: Svc, owners: Record<string, string>): Promise<Usage> {
  const c = await contents(svc.store);
  const byOwner: Record<string, number> = {};
  const add = (bucket: string | undefined, size: number) => {
    const owner = owners[bucket ?? ''];
    expect(owner, `bucket ${bucket} has a known owner`).toBeDefined();
    byOwner[owner!] = (byOwner[owner!] ?? 0) + size;
  };
  for (const o of c.objects) add(o.bucket, o.size);
  for (const v of c.versions) add(v.bucket, v.size);
  const uploads = new Map(c.uploads.map((u) => [u.uploadId, u.bucket]));
  for (const p of c.parts) add(uploads.get(p.uploadId), p.size);
  return { byOwner, bodies: c.bodies.reduce((n, b) => n + b.size, 0) };
}

/** alice's (or `id`'s) `usage-exact` marker: present while the stored usage figure is exact. */
async function marker(svc: Svc, id: string): Promise<unknown> {
  return (await dbOf(svc)).get('usage-exact', id);
}

function expectQuotaExceeded(r: Res) {
  expect(r.status, r.text).toBe(403);
  expect(errorCode(r.text)).toBe('QuotaExceeded');
}

/** The request must be refused with QuotaExceeded and leave every store as it was. */
async function refused(t: T, method: string, url: string, o: SendOptions = {}): Promise<void> {
  const before = await snapshot(t.svc);
  expectQuotaExceeded(await t.call(method, url, { auth: ALICE, ...o }));
  expect(await snapshot(t.svc)).toEqual(before);
}

async function initiate(t: T, url: string, auth: Creds = ALICE): Promise<string> {
  const r = await t.ok('POST', `${url}?uploads`, { auth });
  return tag(r.text, 'UploadId')!;
}
const completeXml = (parts: [number, string][]): string =>
  '<CompleteMultipartUpload>' +
  parts.map(([n, body]) => `<Part><PartNumber>${n}</PartNumber><ETag>"${md5(body)}"</ETag></Part>`).join('') +
  '</CompleteMultipartUpload>';

/** The store the tests below run on: each describe.each round sets it before its tests. */
let kind: StoreKind = 'idb';

// Accounting, on both stores. The IndexedDB refusals further down are fake-indexeddb's alone.
describe.each(STORE_KINDS)('%s store', (storeKind) => {
  beforeAll(() => {
    kind = storeKind;
  });
  afterAll(() => {
    kind = 'idb';
  });

  // ------------------------------------------------------------------------------------------------
  describe('PUT Object at the quota boundary', () => {
    it('exactly the quota fits; one byte over is 403 QuotaExceeded and changes nothing', async () => {
      const t = await withQuota(10);
      await refused(t, 'PUT', `${t.B}/big`, { body: bytes(11) });
      expect(await used(t)).toBe(0);
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(4) });
      await t.ok('PUT', `${t.B}/b`, { auth: ALICE, body: bytes(6) }); // 10 = quota: allowed
      expect(await used(t)).toBe(10);
      await refused(t, 'PUT', `${t.B}/c`, { body: bytes(1) });
      expect((await t.call('GET', `${t.B}/c`, { auth: ALICE })).status).toBe(404);
      // an empty object adds nothing and still fits
      await t.ok('PUT', `${t.B}/empty`, { auth: ALICE, body: '' });
      expect(await used(t)).toBe(10);
    });

    it('a quota of 0 allows only empty objects', async () => {
      const t = await withQuota(0);
      await t.ok('PUT', `${t.B}/e`, { auth: ALICE, body: '' });
      await refused(t, 'PUT', `${t.B}/one`, { body: 'x' });
    });

    it('overwriting without versioning counts only the difference', async () => {
      const t = await withQuota(10);
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(8) });
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(10, 'y') }); // 8 → 10: fits exactly
      expect(await used(t)).toBe(10);
      await refused(t, 'PUT', `${t.B}/a`, { body: bytes(11) });
      expect((await t.call('GET', `${t.B}/a`, { auth: ALICE })).text).toBe(bytes(10, 'y'));
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(3) });
      expect(await used(t)).toBe(3);
    });

    it('with versioning Enabled the replaced version still counts', async () => {
      const t = await withQuota(10, 'Enabled');
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(6) });
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(4, 'y') }); // 6 + 4 = 10
      expect(await used(t)).toBe(10);
      await refused(t, 'PUT', `${t.B}/a`, { body: bytes(1) });
      await refused(t, 'PUT', `${t.B}/a`, { body: bytes(4) }); // would be 6 + 4 + 4
      // DELETE removes the current object; the history still counts
      await t.ok('DELETE', `${t.B}/a`, { auth: ALICE });
      expect(await used(t)).toBe(6);
      await refused(t, 'PUT', `${t.B}/b`, { body: bytes(5) });
      await t.ok('PUT', `${t.B}/b`, { auth: ALICE, body: bytes(4) });
      expect(await used(t)).toBe(10);
    });

    it('deleting a historical version (Delete Multiple VersionId) frees its bytes', async () => {
      const t = await withQuota(10, 'Enabled');
      const v1 = (await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(6) })).headers.get('x-svc-version-id');
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(4) });
      await refused(t, 'PUT', `${t.B}/b`, { body: bytes(1) });
      const d = await t.ok('POST', `${t.B}/?delete`, { auth: ALICE, body: `<Delete><Object><Key>a</Key><VersionId>${v1}</VersionId></Object></Delete>` });
      expect(d.text).toContain('<Deleted>');
      expect(await used(t)).toBe(4);
      await t.ok('PUT', `${t.B}/b`, { auth: ALICE, body: bytes(6) });
      expect(await used(t)).toBe(10);
    });

    it('Suspended: a replacing write frees the replaced bytes; the history still counts', async () => {
      const t = await withQuota(10, 'Enabled');
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(3) });
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(3, 'y') }); // history 3 + current 3
      await t.ok('PUT', `${t.B}/?versioning`, { auth: ALICE, body: SUSPENDED });
      await refused(t, 'PUT', `${t.B}/a`, { body: bytes(8) }); // 3 + 8 > 10
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(7, 'z') }); // 3 + 7 = 10
      expect(await used(t)).toBe(10);
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(2) }); // replaced bytes are gone
      expect(await used(t)).toBe(5);
    });

    it('deletes always work and free space, also when the quota was lowered below the usage', async () => {
      const t = await withQuota(100);
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(30) });
      await t.ok('PUT', `${t.B}/b`, { auth: ALICE, body: bytes(30) });
      // our choice: lowering a quota below the current usage is accepted (S3-like services
      // only refuse further growth)
      await createAccount(t, ALICE, 40);
      expect(await used(t)).toBe(60);
      await refused(t, 'PUT', `${t.B}/c`, { body: bytes(1) });
      await t.ok('DELETE', `${t.B}/a`, { auth: ALICE });
      expect(await used(t)).toBe(30);
      await t.ok('POST', `${t.B}/?delete`, { auth: ALICE, body: '<Delete><Object><Key>b</Key></Object></Delete>' });
      expect(await used(t)).toBe(0);
      await t.ok('PUT', `${t.B}/c`, { auth: ALICE, body: bytes(40) });
      await refused(t, 'PUT', `${t.B}/d`, { body: bytes(1) });
    });

    it('raising the quota or making it unlimited lets the next write through', async () => {
      const t = await withQuota(5);
      await refused(t, 'PUT', `${t.B}/a`, { body: bytes(6) });
      await createAccount(t, ALICE, 6);
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(6) });
      await refused(t, 'PUT', `${t.B}/b`, { body: bytes(1) });
      await createAccount(t, ALICE); // no QuotaBytes: unlimited
      await t.ok('PUT', `${t.B}/b`, { auth: ALICE, body: bytes(100_000) });
      expect(await used(t)).toBe(100_006);
    });

    it('the quota is per account: one account being full does not limit another', async () => {
      const t = await withQuota(5);
      await createAccount(t, BOB, 5);
      await t.ok('PUT', `${host('bbkt')}/`, { auth: BOB });
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(5) });
      await refused(t, 'PUT', `${t.B}/b`, { body: bytes(1) });
      await t.ok('PUT', `${host('bbkt')}/a`, { auth: BOB, body: bytes(5) });
      expect(await usedBytes(t)).toMatchObject({ alice: 5, bob: 5, svcadmin: 0 });
    });
  });

  describe('Copy at the quota boundary', () => {
    it('a copy that fits exactly is allowed; one byte over is refused and changes nothing', async () => {
      const t = await withQuota(10);
      await t.ok('PUT', `${t.B}/four`, { auth: ALICE, body: bytes(4) });
      await t.ok('PUT', `${t.B}/one`, { auth: ALICE, body: bytes(1) });
      await t.ok('PUT', `${t.B}/c`, { auth: ALICE, headers: { 'x-svc-copy-source': '/abkt/four' } }); // 9
      await refused(t, 'PUT', `${t.B}/d`, { headers: { 'x-svc-copy-source': '/abkt/four' } }); // 13
      await t.ok('PUT', `${t.B}/e`, { auth: ALICE, headers: { 'x-svc-copy-source': '/abkt/one' } }); // 10
      expect(await used(t)).toBe(10);
      await refused(t, 'PUT', `${t.B}/f`, { headers: { 'x-svc-copy-source': '/abkt/one' } }); // 11
      // a copy over an existing key of the same size adds nothing (no versioning)
      await t.ok('PUT', `${t.B}/c`, { auth: ALICE, headers: { 'x-svc-copy-source': '/abkt/four' } });
      expect(await used(t)).toBe(10);
    });

    it('with versioning Enabled a copy over an existing key keeps the old version, so it is counted', async () => {
      const t = await withQuota(10, 'Enabled');
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(4) });
      await t.ok('PUT', `${t.B}/b`, { auth: ALICE, body: bytes(2) });
      await t.ok('PUT', `${t.B}/b`, { auth: ALICE, headers: { 'x-svc-copy-source': '/abkt/a' } }); // 4 + 2 + 4 = 10
      expect(await used(t)).toBe(10);
      await refused(t, 'PUT', `${t.B}/a`, { headers: { 'x-svc-copy-source': '/abkt/a' } }); // copy onto itself: +4
    });

    it('a copy from another account\'s public-read bucket is charged to the destination owner only', async () => {
      const t = await withQuota(5);
      await createAccount(t, BOB);
      await t.ok('PUT', `${host('bpub')}/`, { auth: BOB, headers: { 'x-svc-acl': 'public-read' } });
      await t.ok('PUT', `${host('bpub')}/six`, { auth: BOB, body: bytes(6) });
      await t.ok('PUT', `${host('bpub')}/five`, { auth: BOB, body: bytes(5) });
      await refused(t, 'PUT', `${t.B}/x`, { headers: { 'x-svc-copy-source': '/bpub/six' } });
      await t.ok('PUT', `${t.B}/x`, { auth: ALICE, headers: { 'x-svc-copy-source': '/bpub/five' } });
      expect(await usedBytes(t)).toMatchObject({ alice: 5, bob: 11 });
    });
  });

  describe('multipart and the quota', () => {
    it('Upload Part: uploaded parts count; exactly the quota fits, one byte over is refused', async () => {
      const t = await withQuota(10);
      const id = await initiate(t, `${t.B}/big`);
      const part = (n: number) => `${t.B}/big?partNumber=${n}&uploadId=${id}`;
      await t.ok('PUT', part(1), { auth: ALICE, body: bytes(9) });
      expect(await used(t)).toBe(9);
      await refused(t, 'PUT', part(2), { body: bytes(2) });
      await t.ok('PUT', part(2), { auth: ALICE, body: bytes(1) });
      expect(await used(t)).toBe(10);
      // replacing a part counts only the difference
      await t.ok('PUT', part(1), { auth: ALICE, body: bytes(9, 'y') });
      await refused(t, 'PUT', part(1), { body: bytes(10) });
      await t.ok('PUT', part(1), { auth: ALICE, body: bytes(7) });
      expect(await used(t)).toBe(8);
      // parts and objects share the quota
      await refused(t, 'PUT', `${t.B}/obj`, { body: bytes(3) });
      await t.ok('PUT', `${t.B}/obj`, { auth: ALICE, body: bytes(2) });
      await refused(t, 'PUT', part(3), { body: bytes(1) });
    });

    it('Abort frees the parts\' bytes', async () => {
      const t = await withQuota(10);
      const id = await initiate(t, `${t.B}/big`);
      await t.ok('PUT', `${t.B}/big?partNumber=1&uploadId=${id}`, { auth: ALICE, body: bytes(10) });
      await refused(t, 'PUT', `${t.B}/x`, { body: bytes(1) });
      const r = await t.call('DELETE', `${t.B}/big?uploadId=${id}`, { auth: ALICE });
      expect(r.status).toBe(204);
      expect(await used(t)).toBe(0);
    });

    it('Complete is never refused at a full quota and adds nothing; unlisted parts are freed', async () => {
      const t = await withQuota(10);
      const id = await initiate(t, `${t.B}/big`);
      await t.ok('PUT', `${t.B}/big?partNumber=1&uploadId=${id}`, { auth: ALICE, body: bytes(6) });
      await t.ok('PUT', `${t.B}/big?partNumber=2&uploadId=${id}`, { auth: ALICE, body: bytes(4, 'y') });
      expect(await used(t)).toBe(10);
      // only part 2 listed (a lone part may be small): part 1 is deleted
      const r = await t.ok('POST', `${t.B}/big?uploadId=${id}`, { auth: ALICE, body: completeXml([[2, bytes(4, 'y')]]) });
      expect(tag(r.text, 'Key')).toBe('big');
      expect(await used(t)).toBe(4);
      expect((await t.call('GET', `${t.B}/big`, { auth: ALICE })).text).toBe(bytes(4, 'y'));
    });

    it('Complete at a full quota with every part listed → 200, usage unchanged', async () => {
      const t = await withQuota(10);
      const id = await initiate(t, `${t.B}/big`);
      await t.ok('PUT', `${t.B}/big?partNumber=1&uploadId=${id}`, { auth: ALICE, body: bytes(10) });
      await t.ok('POST', `${t.B}/big?uploadId=${id}`, { auth: ALICE, body: completeXml([[1, bytes(10)]]) });
      expect(await used(t)).toBe(10);
    });

    it('Complete over an existing key: without versioning the old bytes are freed; with versioning they stay counted but Complete is still allowed', async () => {
      const plain = await withQuota(10);
      await plain.ok('PUT', `${plain.B}/big`, { auth: ALICE, body: bytes(4) });
      const id1 = await initiate(plain, `${plain.B}/big`);
      await plain.ok('PUT', `${plain.B}/big?partNumber=1&uploadId=${id1}`, { auth: ALICE, body: bytes(6) });
      await plain.ok('POST', `${plain.B}/big?uploadId=${id1}`, { auth: ALICE, body: completeXml([[1, bytes(6)]]) });
      expect(await used(plain)).toBe(6);

      const versioned = await withQuota(10, 'Enabled');
      await versioned.ok('PUT', `${versioned.B}/big`, { auth: ALICE, body: bytes(4) });
      const id2 = await initiate(versioned, `${versioned.B}/big`);
      await versioned.ok('PUT', `${versioned.B}/big?partNumber=1&uploadId=${id2}`, { auth: ALICE, body: bytes(6) });
      const done = await versioned.call('POST', `${versioned.B}/big?uploadId=${id2}`, { auth: ALICE, body: completeXml([[1, bytes(6)]]) });
      expect(done.status, done.text).toBe(200);
      expect(await used(versioned)).toBe(10);
    });
  });

  describe('Move and the quota', () => {
    it('a move at a full quota is allowed and adds nothing', async () => {
      const t = await withQuota(10);
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(10) });
      await t.ok('PUT', `${t.B}/b`, { auth: ALICE, headers: { 'x-svc-move-source': '/abkt/a' } });
      expect(await used(t)).toBe(10);
      expect((await t.call('GET', `${t.B}/b`, { auth: ALICE })).text).toBe(bytes(10));
    });

    it('a move over an existing key frees the replaced object without versioning, keeps it counted with versioning', async () => {
      const t = await withQuota(10);
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(6) });
      await t.ok('PUT', `${t.B}/b`, { auth: ALICE, body: bytes(4) });
      await t.ok('PUT', `${t.B}/b`, { auth: ALICE, headers: { 'x-svc-move-source': '/abkt/a' } });
      expect(await used(t)).toBe(6);

      const v = await withQuota(10, 'Enabled');
      await v.ok('PUT', `${v.B}/a`, { auth: ALICE, body: bytes(6) });
      await v.ok('PUT', `${v.B}/b`, { auth: ALICE, body: bytes(4) });
      await v.ok('PUT', `${v.B}/b`, { auth: ALICE, headers: { 'x-svc-move-source': '/abkt/a' } });
      expect(await used(v)).toBe(10);
    });
  });

  describe('over the quota after lowering it: Complete and Move still work (they add no bytes)', () => {
    it('Complete and Move at usage above a lowered quota → 200', async () => {
      const t = await withQuota(100);
      await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(20) });
      const id = await initiate(t, `${t.B}/big`);
      await t.ok('PUT', `${t.B}/big?partNumber=1&uploadId=${id}`, { auth: ALICE, body: bytes(30) });
      await createAccount(t, ALICE, 5); // our choice: accepted, only growth is refused afterwards
      await refused(t, 'PUT', `${t.B}/b`, { body: bytes(1) });
      await refused(t, 'PUT', `${t.B}/big?partNumber=2&uploadId=${id}`, { body: bytes(1) });
      await t.ok('POST', `${t.B}/big?uploadId=${id}`, { auth: ALICE, body: completeXml([[1, bytes(30)]]) });
      await t.ok('PUT', `${t.B}/moved`, { auth: ALICE, headers: { 'x-svc-move-source': '/abkt/a' } });
      expect(await used(t)).toBe(50);
    });
  });

  describe('racing writes cannot pass the quota together', () => {
    it('parallel PUTs that each fit alone: the quota is never passed and usage matches the database', async () => {
      const t = await withQuota(10);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => t.call('PUT', `${t.B}/k${i}`, { auth: ALICE, body: bytes(6) })),
      );
      const okCount = results.filter((r) => r.status === 200).length;
      expect(okCount).toBe(1);
      for (const r of results.filter((r) => r.status !== 200)) expectQuotaExceeded(r);
      expect(await used(t)).toBe(6);
      expect((await dbUsage(t.svc, { abkt: 'alice' })).byOwner.alice).toBe(6);
    });

    it('parallel PUTs that fit exactly together all succeed', async () => {
      const t = await withQuota(10);
      const results = await Promise.all(Array.from({ length: 5 }, (_, i) => t.call('PUT', `${t.B}/k${i}`, { auth: ALICE, body: bytes(2) })));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(await used(t)).toBe(10);
    });

    it('parallel Upload Parts, copies and PUTs mixed: the quota is never passed', async () => {
      const t = await withQuota(50);
      await t.ok('PUT', `${t.B}/src`, { auth: ALICE, body: bytes(7) });
      const id = await initiate(t, `${t.B}/big`);
      const jobs: Promise<Res>[] = [];
      for (let i = 0; i < 6; i++) {
        jobs.push(t.call('PUT', `${t.B}/big?partNumber=${i + 1}&uploadId=${id}`, { auth: ALICE, body: bytes(7) }));
        jobs.push(t.call('PUT', `${t.B}/c${i}`, { auth: ALICE, headers: { 'x-svc-copy-source': '/abkt/src' } }));
        jobs.push(t.call('PUT', `${t.B}/p${i}`, { auth: ALICE, body: bytes(7) }));
      }
      const results = await Promise.all(jobs);
      for (const r of results) if (r.status !== 200) expectQuotaExceeded(r);
      // 7 + 6 more writes of 7 bytes fit in 50 (49): exactly 6 of the 18 succeed
      expect(results.filter((r) => r.status === 200).length).toBe(6);
      expect(await used(t)).toBe(49);
      expect((await dbUsage(t.svc, { abkt: 'alice' })).byOwner.alice).toBe(49);
    });
  });

  // ------------------------------------------------------------------------------------------------
  // A long random sequence: UsedBytes must equal what the database holds, every step.

  /** mulberry32: a small seeded generator, so a failure can be replayed. */
  function rng(seed: number): () => number {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  describe('UsedBytes equals the bytes in the database after a long random sequence', () => {
    for (const seed of [1, 2, 3]) {
      it(`seed ${seed}`, async () => {
        const t = await service();
        const QUOTA = 3000;
        await createAccount(t, ALICE, QUOTA);
        await createAccount(t, BOB);
        const owners: Record<string, string> = { aa1: 'alice', aa2: 'alice', bb1: 'bob' };
        const creds: Record<string, Creds> = { alice: ALICE, bob: BOB };
        const quota: Record<string, number | undefined> = { alice: QUOTA, bob: undefined };
        const enabled: Record<string, boolean> = { aa1: false, aa2: false, bb1: false };
        await t.ok('PUT', `${host('aa1')}/`, { auth: ALICE });
        await t.ok('PUT', `${host('aa2')}/`, { auth: ALICE });
        await t.ok('PUT', `${host('bb1')}/`, { auth: BOB, headers: { 'x-svc-acl': 'public-read' } });
        const uploads: { bucket: string; key: string; id: string }[] = [];

        const r = rng(seed);
        const pick = <X>(xs: X[]): X => xs[Math.floor(r() * xs.length)]!;
        const keys = ['k0', 'k1', 'k2', 'k3'];
        const currentSize = async (b: string, k: string) =>
          (await contents(t.svc.store)).objects.find((o) => o.bucket === b && o.key === k)?.size;
        const partSize = async (id: string, n: number) =>
          (await contents(t.svc.store)).parts.find((p) => p.uploadId === id && p.partNumber === n)?.size ?? 0;
        /** A size that fits exactly, is one byte over, or is random. */
        const sizeFor = (acct: string, usedBefore: number, freed: number) => {
          const q = quota[acct];
          const x = r();
          if (q !== undefined && x < 0.2) return Math.max(0, q - usedBefore + freed);
          if (q !== undefined && x < 0.35) return Math.max(0, q - usedBefore + freed + 1);
          return Math.floor(r() * 500);
        };
        /** Expect a quota refusal exactly when the write grows the account past its quota. */
        const check = async (res: Res, acct: string, delta: number, before: Record<string, unknown[]>, what: string) => {
          const q = quota[acct];
          const over = q !== undefined && delta > 0 && usedFrom(before, acct) + delta > q;
          if (over) {
            expect(res.status, `${what} should be refused: ${res.text}`).toBe(403);
            expect(errorCode(res.text)).toBe('QuotaExceeded');
            expect(await snapshot(t.svc), `${what} refused must change nothing`).toEqual(before);
          } else {
            expect(res.status, `${what}: ${res.text}`).toBe(200);
          }
          return over;
        };

        let refusals = 0;
        for (let step = 0; step < 220; step++) {
          const kind = r();
          const before = await snapshot(t.svc);
          if (kind < 0.3) {
            // PUT
            const b = pick(['aa1', 'aa2', 'bb1']);
            const k = pick(keys);
            const acct = owners[b]!;
            const old = (await currentSize(b, k)) ?? 0;
            const freed = enabled[b] ? 0 : old;
            const size = sizeFor(acct, usedFrom(before, acct), freed);
            const res = await t.call('PUT', `${host(b)}/${k}`, { auth: creds[acct], body: bytes(size) });
            if (await check(res, acct, size - freed, before, `step ${step}: PUT ${b}/${k} (${size})`)) refusals++;
          } else if (kind < 0.4) {
            // DELETE
            const b = pick(['aa1', 'aa2', 'bb1']);
            const k = pick(keys);
            const exists = (await currentSize(b, k)) !== undefined;
            const res = await t.call('DELETE', `${host(b)}/${k}`, { auth: creds[owners[b]!] });
            expect(res.status, `step ${step}: DELETE ${b}/${k}`).toBe(exists ? 200 : 404);
          } else if (kind < 0.52) {
            // Copy (alice may read bb1, bob may not read aa1/aa2)
            const src = pick(['aa1', 'aa2', 'bb1']);
            const dst = pick(['aa1', 'aa2', 'bb1']);
            const sk = pick(keys);
            const dk = pick(keys);
            const acct = owners[dst]!;
            const srcSize = await currentSize(src, sk);
            const res = await t.call('PUT', `${host(dst)}/${dk}`, { auth: creds[acct], headers: { 'x-svc-copy-source': `/${src}/${sk}` } });
            const what = `step ${step}: copy ${src}/${sk} → ${dst}/${dk}`;
            if (owners[src] !== acct && src !== 'bb1') {
              expect(res.status, what).toBe(403);
              expect(errorCode(res.text)).toBe('AccessDenied');
            } else if (srcSize === undefined) {
              expect(res.status, what).toBe(404);
            } else {
              const old = (await currentSize(dst, dk)) ?? 0;
              if (await check(res, acct, srcSize - (enabled[dst] ? 0 : old), before, what)) refusals++;
            }
          } else if (kind < 0.6) {
            // Move inside a bucket: never refused
            const b = pick(['aa1', 'aa2', 'bb1']);
            const from = pick(keys);
            const to = pick(keys);
            const exists = (await currentSize(b, from)) !== undefined;
            const res = await t.call('PUT', `${host(b)}/${to}`, { auth: creds[owners[b]!], headers: { 'x-svc-move-source': `/${b}/${from}` } });
            expect(res.status, `step ${step}: move ${b}/${from} → ${to}: ${res.text}`).toBe(from === to ? 400 : !exists ? 404 : 200);
          } else if (kind < 0.65) {
            // versioning on/off
            const b = pick(['aa1', 'bb1']);
            const on = r() < 0.6;
            await t.ok('PUT', `${host(b)}/?versioning`, { auth: creds[owners[b]!], body: on ? ENABLED : SUSPENDED });
            enabled[b] = on;
          } else if (kind < 0.72) {
            // Delete Multiple with version ids taken from the listing
            const b = pick(['aa1', 'bb1']);
            const list = await t.ok('GET', `${host(b)}/?versions`, { auth: creds[owners[b]!] });
            const versions = [...list.text.matchAll(/<Version>\s*<Key>([^<]*)<\/Key>\s*<VersionId>([^<]*)<\/VersionId>/g)].map((m) => [m[1]!, m[2]!]);
            const chosen = versions.filter(([, v]) => v !== 'null' && r() < 0.4);
            const body =
              '<Delete>' +
              chosen.map(([k, v]) => `<Object><Key>${k}</Key><VersionId>${v}</VersionId></Object>`).join('') +
              `<Object><Key>${pick(keys)}</Key></Object></Delete>`;
            const res = await t.ok('POST', `${host(b)}/?delete`, { auth: creds[owners[b]!], body });
            expect(res.text).not.toContain('<Error>');
          } else if (kind < 0.78) {
            // Initiate
            const b = pick(['aa1', 'aa2', 'bb1']);
            const k = pick(keys);
            uploads.push({ bucket: b, key: k, id: await initiate(t, `${host(b)}/${k}`, creds[owners[b]!]) });
          } else if (kind < 0.9 && uploads.length) {
            // Upload Part
            const u = pick(uploads);
            const n = 1 + Math.floor(r() * 3);
            const acct = owners[u.bucket]!;
            const freed = await partSize(u.id, n);
            const size = sizeFor(acct, usedFrom(before, acct), freed);
            const res = await t.call('PUT', `${host(u.bucket)}/${u.key}?partNumber=${n}&uploadId=${u.id}`, { auth: creds[acct], body: bytes(size, 'p') });
            if (await check(res, acct, size - freed, before, `step ${step}: part ${n} of ${u.bucket}/${u.key} (${size})`)) refusals++;
          } else if (kind < 0.96 && uploads.length) {
            // Complete with one listed part (a lone part may be small) — never refused
            const u = uploads.splice(Math.floor(r() * uploads.length), 1)[0]!;
            const parts = (await contents(t.svc.store)).parts;
            const mine = parts.filter((p) => p.uploadId === u.id);
            const res = await t.call('POST', `${host(u.bucket)}/${u.key}?uploadId=${u.id}`, {
              auth: creds[owners[u.bucket]!],
              body: mine.length
                ? `<CompleteMultipartUpload><Part><PartNumber>${mine.at(-1)!.partNumber}</PartNumber><ETag>${mine.at(-1)!.etag}</ETag></Part></CompleteMultipartUpload>`
                : completeXml([[1, 'never uploaded']]),
            });
            expect(res.status, `step ${step}: complete: ${res.text}`).toBe(mine.length ? 200 : 400);
            if (!mine.length) {
              expect(errorCode(res.text)).toBe('InvalidPart');
              uploads.push(u);
            }
          } else if (uploads.length) {
            // Abort
            const u = uploads.splice(Math.floor(r() * uploads.length), 1)[0]!;
            const res = await t.call('DELETE', `${host(u.bucket)}/${u.key}?uploadId=${u.id}`, { auth: creds[owners[u.bucket]!] });
            expect(res.status).toBe(204);
          }

          // invariants after every step
          const api = await usedBytes(t);
          const fromDb = await dbUsage(t.svc, owners);
          expect(api.alice, `step ${step}: alice`).toBe(fromDb.byOwner.alice ?? 0);
          expect(api.bob, `step ${step}: bob`).toBe(fromDb.byOwner.bob ?? 0);
          expect(api.svcadmin).toBe(0);
          expect(api.alice!).toBeLessThanOrEqual(QUOTA);
          // every stored byte is accounted for: bodies hold exactly what the accounts are charged
          expect(fromDb.bodies, `step ${step}: body bytes`).toBe((fromDb.byOwner.alice ?? 0) + (fromDb.byOwner.bob ?? 0));
        }
        // the sequence did reach the quota, both ways
        expect(refusals).toBeGreaterThan(0);
      });
    }
  });

  /** alice's (or bob's) bytes in a snapshot taken before a step: object, version and part sizes. */
  function usedFrom(snap: Record<string, unknown[]>, acct: string): number {
    const owners: Record<string, string> = { aa1: 'alice', aa2: 'alice', bb1: 'bob' };
    let sum = 0;
    for (const o of snap.objects as { bucket: string; size: number }[]) if (owners[o.bucket] === acct) sum += o.size;
    for (const v of snap.versions as { bucket: string; size: number }[]) if (owners[v.bucket] === acct) sum += v.size;
    const uploads = new Map((snap.uploads as { uploadId: string; bucket: string }[]).map((u) => [u.uploadId, u.bucket]));
    for (const p of snap.parts as { uploadId: string; size: number }[]) if (owners[uploads.get(p.uploadId) ?? ''] === acct) sum += p.size;
    return sum;
  }
});

// ------------------------------------------------------------------------------------------------
// IndexedDB refusing a write. Three ways a browser reports QuotaExceededError:
//  - sync:    IDBObjectStore.put/add throws at the call;
//  - request: the request fails (error event), which aborts the transaction;
//  - commit:  every request succeeds, then the transaction aborts at commit with tx.error set.
// sync and request are injected at the N-th write of the request, for every N the request reaches.

type Mode = 'sync' | 'request' | 'commit';

interface Fault {
  /** Writes (put/add) seen since arming. */
  writes: number;
  /** Whether the fault fired. */
  fired: boolean;
  restore(): void;
}

type FakeStore = InstanceType<typeof FakeObjectStore>;
const quotaError = (): DOMException => new DOMException('The quota has been exceeded.', 'QuotaExceededError');

/**
 * Arms a fault: `mode` at the `nth` write (sync/request), or on the commit of any transaction that
 * wrote (commit). `stores` limits which object stores count. Restore in finally.
 */
async function armFault(svc: Svc, mode: Mode, nth: number, stores?: string[]): Promise<Fault> {
  const db = await dbOf(svc);
  // The object store class behind the idb wrapper: fake-indexeddb's IDBObjectStore.
  const wrapped = db.transaction('accounts').objectStore('accounts');
  const proto = Object.getPrototypeOf(wrapped) as Record<string, unknown>;
  expect(proto).toBe(FakeObjectStore.prototype);
  const fault: Fault = { writes: 0, fired: false, restore: () => {} };
  const counts = (name: string) => !stores || stores.includes(name);
  const restores: (() => void)[] = [];

  for (const method of ['put', 'add'] as const) {
    const original = proto[method] as (this: FakeStore, ...a: unknown[]) => unknown;
    proto[method] = function (this: FakeStore & { _rawObjectStore: object }, ...args: unknown[]) {
      if (!counts(this.name)) return original.apply(this, args);
      fault.writes++;
      if (mode === 'sync' && fault.writes === nth) {
        fault.fired = true;
        throw quotaError();
      }
      if (mode === 'request' && fault.writes === nth) {
        // make this one request fail asynchronously, as a real store refusing the record would
        const raw = this._rawObjectStore as { storeRecord: (...a: unknown[]) => unknown };
        const store = raw.storeRecord;
        raw.storeRecord = () => {
          fault.fired = true;
          throw quotaError();
        };
        try {
          return original.apply(this, args);
        } finally {
          // the operation was bound at request creation: restore for later requests
          raw.storeRecord = store;
        }
      }
      if (mode === 'commit') (this.transaction as unknown as { __quotaAtCommit?: boolean }).__quotaAtCommit = true;
      return original.apply(this, args);
    };
    restores.push(() => {
      proto[method] = original;
    });
  }
  if (mode === 'commit') {
    const tproto = FakeTransaction.prototype as unknown as { dispatchEvent(e: Event): boolean; _abort(name: string): void };
    const own = Object.prototype.hasOwnProperty.call(tproto, 'dispatchEvent');
    const original = tproto.dispatchEvent;
    tproto.dispatchEvent = function (this: typeof tproto & { __quotaAtCommit?: boolean }, e: Event) {
      if (e.type === 'complete' && this.__quotaAtCommit) {
        fault.fired = true;
        this.__quotaAtCommit = false;
        this._abort('QuotaExceededError'); // rolls back, sets tx.error, fires abort
        return false;
      }
      return original.call(this, e);
    };
    restores.push(() => {
      if (own) tproto.dispatchEvent = original;
      else delete (tproto as { dispatchEvent?: unknown }).dispatchEvent;
    });
  }
  fault.restore = () => restores.forEach((f) => f());
  return fault;
}

/** A scene for the IndexedDB-refusal tests: alice's versioned bucket with history and an upload. */
async function faultScene() {
  const t = await withQuota(1_000_000, 'Enabled');
  await t.ok('PUT', `${t.B}/k`, { auth: ALICE, body: 'version one' });
  await t.ok('PUT', `${t.B}/k`, { auth: ALICE, body: 'version two' });
  await t.ok('PUT', `${t.B}/src`, { auth: ALICE, body: 'source bytes' });
  await t.ok('PUT', `${t.B}/mv`, { auth: ALICE, body: 'to be moved' });
  const id = await initiate(t, `${t.B}/big`);
  await t.ok('PUT', `${t.B}/big?partNumber=1&uploadId=${id}`, { auth: ALICE, body: 'part one' });
  await t.ok('PUT', `${t.B}/big?partNumber=2&uploadId=${id}`, { auth: ALICE, body: 'part two' });
  await t.ok('PUT', `${t.B}/big`, { auth: ALICE, body: 'old big' });
  return { ...t, uploadId: id };
}
type FaultScene = Awaited<ReturnType<typeof faultScene>>;

/**
 * `frees`: the write only frees bytes. Refused, it is retried once deleting alice's `usage-exact`
 * marker instead of putting her usage figure (deletes are never refused), so it succeeds.
 */
const faultOps: { name: string; method: string; url: (s: FaultScene) => string; o?: (s: FaultScene) => SendOptions; ok: number; frees?: true }[] = [
  { name: 'PUT Object (new key)', method: 'PUT', url: (s) => `${s.B}/new`, o: () => ({ body: 'new bytes' }), ok: 200 },
  { name: 'PUT Object (replacing, history kept)', method: 'PUT', url: (s) => `${s.B}/k`, o: () => ({ body: 'version three' }), ok: 200 },
  { name: 'Copy over an existing key', method: 'PUT', url: (s) => `${s.B}/k`, o: () => ({ headers: { 'x-svc-copy-source': '/abkt/src' } }), ok: 200 },
  { name: 'Move over an existing key', method: 'PUT', url: (s) => `${s.B}/k`, o: () => ({ headers: { 'x-svc-move-source': '/abkt/mv' } }), ok: 200 },
  { name: 'Upload Part', method: 'PUT', url: (s) => `${s.B}/big?partNumber=3&uploadId=${s.uploadId}`, o: () => ({ body: 'part three' }), ok: 200 },
  { name: 'Upload Part (replacing)', method: 'PUT', url: (s) => `${s.B}/big?partNumber=1&uploadId=${s.uploadId}`, o: () => ({ body: 'part one again' }), ok: 200 },
  {
    name: 'Complete (over an existing key, an unlisted part)',
    method: 'POST',
    url: (s) => `${s.B}/big?uploadId=${s.uploadId}`,
    o: () => ({ body: completeXml([[2, 'part two']]) }),
    ok: 200,
  },
  { name: 'Initiate', method: 'POST', url: (s) => `${s.B}/other?uploads`, ok: 200 },
  { name: 'PUT Object Meta', method: 'PUT', url: (s) => `${s.B}/k?meta`, o: () => ({ headers: { 'content-type': 'text/plain' } }), ok: 200 },
  { name: 'DELETE Object', method: 'DELETE', url: (s) => `${s.B}/src`, ok: 200, frees: true },
  {
    name: 'Delete Multiple',
    method: 'POST',
    url: (s) => `${s.B}/?delete`,
    o: () => ({ body: '<Delete><Object><Key>src</Key></Object><Object><Key>mv</Key></Object></Delete>' }),
    ok: 200,
    frees: true,
  },
  { name: 'Abort', method: 'DELETE', url: (s) => `${s.B}/big?uploadId=${s.uploadId}`, ok: 204, frees: true },
  { name: 'PUT bucket versioning', method: 'PUT', url: (s) => `${s.B}/?versioning`, o: () => ({ body: SUSPENDED }), ok: 200 },
  { name: 'PUT bucket', method: 'PUT', url: () => `${host('fresh')}/`, ok: 200 },
  {
    name: 'PUT /?account',
    method: 'PUT',
    url: () => `${SVC}/?account=carol`,
    o: () => ({ auth: 'root', body: '<Account><SecretAccessKey>carol-secret</SecretAccessKey><DisplayName>c</DisplayName></Account>' }),
    ok: 200,
  },
];

describe('IndexedDB throws QuotaExceededError → 403 QuotaExceeded (a freeing write: done), rolled back, the service keeps serving', () => {
  for (const mode of ['sync', 'request', 'commit'] as Mode[]) {
    describe(mode, () => {
      for (const op of faultOps) {
        it(op.name, async () => {
          const s = await faultScene();
          const opts = (): SendOptions => ({ auth: ALICE, ...(op.o?.(s) ?? {}) });
          let reached = 0;
          for (let nth = 1; nth <= 40; nth++) {
            const before = await snapshot(s.svc);
            const fault = await armFault(s.svc, mode, nth);
            let res: Res;
            try {
              res = await s.call(op.method, op.url(s), opts());
            } finally {
              fault.restore();
            }
            if (!fault.fired) {
              // the request made fewer than nth writes: it ran clean and must have succeeded
              expect(res.status, `${op.name} without a fault: ${res.text}`).toBe(op.ok);
              break;
            }
            reached = nth;
            if (op.frees) {
              // its one write is the usage figure: retried without it, deleting the marker
              expect(res.status, `${mode} fault at write ${nth}: ${res.text}`).toBe(op.ok);
              expect(await marker(s.svc, 'alice'), 'the marker is gone').toBeUndefined();
              break;
            }
            expect(res.status, `${mode} fault at write ${nth}: ${res.text}`).toBe(403);
            expect(errorCode(res.text), `${mode} fault at write ${nth}`).toBe('QuotaExceeded');
            expect(await snapshot(s.svc), `${mode} fault at write ${nth}: rolled back`).toEqual(before);
            if (mode === 'commit') {
              // one fault per request; now run it clean
              const clean = await s.call(op.method, op.url(s), opts());
              expect(clean.status, clean.text).toBe(op.ok);
              break;
            }
          }
          expect(reached, 'the fault was injected at least once').toBeGreaterThan(0);
          // and the service keeps serving reads and deletes
          const g = await s.call('GET', `${s.B}/?versions`, { auth: ALICE });
          expect(g.status).toBe(200);
          const h = await s.call('HEAD', `${s.B}/k`, { auth: ALICE });
          expect(h.status).toBe(200);
          await s.ok('DELETE', `${s.B}/k`, { auth: ALICE });
          expect((await s.call('GET', `${s.B}/k`, { auth: ALICE })).status).toBe(404);
          const u = await usedBytes(s);
          expect(u.alice).toBe((await dbUsage(s.svc, { abkt: 'alice', fresh: 'alice' })).byOwner.alice ?? 0);
        });
      }
    });
  }

  it('while IndexedDB refuses every new body: writes get 403 QuotaExceeded; GET, HEAD, list and DELETE work', async () => {
    const s = await faultScene();
    // every write to `bodies` fails, not just one
    const proto = FakeObjectStore.prototype as unknown as Record<'put' | 'add', (...a: unknown[]) => unknown>;
    const [put, add] = [proto.put, proto.add];
    proto.put = function (this: { name: string }, ...a: unknown[]) {
      if (this.name === 'bodies') throw quotaError();
      return put.apply(this, a);
    };
    proto.add = function (this: { name: string }, ...a: unknown[]) {
      if (this.name === 'bodies') throw quotaError();
      return add.apply(this, a);
    };
    try {
      const before = await snapshot(s.svc);
      for (const [method, url, o] of [
        ['PUT', `${s.B}/new`, { body: 'new bytes' }],
        ['PUT', `${s.B}/k`, { body: 'replacement' }],
        ['PUT', `${s.B}/big?partNumber=3&uploadId=${s.uploadId}`, { body: 'part' }],
      ] as [string, string, SendOptions][]) {
        const r = await s.call(method, url, { auth: ALICE, ...o });
        expectQuotaExceeded(r);
      }
      const copy = await s.call('PUT', `${s.B}/copied`, { auth: ALICE, headers: { 'x-svc-copy-source': '/abkt/src' } });
      expect([200, 403]).toContain(copy.status); // a copy may or may not need a new body record
      if (copy.status === 403) {
        expect(errorCode(copy.text)).toBe('QuotaExceeded');
        expect(await snapshot(s.svc)).toEqual(before);
      }
      const g = await s.call('GET', `${s.B}/k`, { auth: ALICE });
      expect(g.status).toBe(200);
      expect(g.text).toBe('version two');
      expect((await s.call('HEAD', `${s.B}/src`, { auth: ALICE })).status).toBe(200);
      expect((await s.call('GET', `${s.B}/`, { auth: ALICE })).status).toBe(200);
      await s.ok('DELETE', `${s.B}/src`, { auth: ALICE });
      await s.ok('POST', `${s.B}/?delete`, { auth: ALICE, body: '<Delete><Object><Key>mv</Key></Object></Delete>' });
      expect((await s.call('GET', `${s.B}/src`, { auth: ALICE })).status).toBe(404);
      expect((await s.call('DELETE', `${s.B}/big?uploadId=${s.uploadId}`, { auth: ALICE })).status).toBe(204);
    } finally {
      proto.put = put;
      proto.add = add;
    }
    // after the browser has room again, writes work
    await s.ok('PUT', `${s.B}/new`, { auth: ALICE, body: 'new bytes' });
    expect((await s.call('GET', `${s.B}/new`, { auth: ALICE })).text).toBe('new bytes');
  });
});

// ------------------------------------------------------------------------------------------------
// A full origin: the browser refuses every transaction that puts a record, and lets one that only
// deletes through. Deleting must still free room (sw/store/rules/store.ts, freeing): the retry drops
// the owner's `usage-exact` marker instead of putting the figure, and the next reader recomputes it.

describe('a full origin refuses every put: DELETE, Delete Multiple and Abort still free room', () => {
  /** Every put/add fails with QuotaExceededError (at the call), as a full origin does; deletes go through. */
  function refusePuts(): () => void {
    const proto = FakeObjectStore.prototype as unknown as Record<'put' | 'add', (...a: unknown[]) => unknown>;
    const [put, add] = [proto.put, proto.add];
    proto.put = () => {
      throw quotaError();
    };
    proto.add = () => {
      throw quotaError();
    };
    return () => {
      proto.put = put;
      proto.add = add;
    };
  }

  it('each answers as usual, removes the records and bodies, drops the marker; the next write and GET /?accounts recompute', async () => {
    const s = await faultScene();
    const owners = { abkt: 'alice' };
    expect(await marker(s.svc, 'alice')).toBeDefined();
    const before = await snapshot(s.svc);
    const bodyOf = (key: string) => (before.objects as { key: string; chunks: { id: string }[] }[]).find((o) => o.key === key)!.chunks.map((c) => c.id);
    const partBodies = (before.parts as { uploadId: string; bodyId: string }[]).filter((p) => p.uploadId === s.uploadId).map((p) => p.bodyId);
    const gone = [...bodyOf('src'), ...bodyOf('mv'), ...partBodies];
    expect(gone.length).toBe(4);
    const usedBefore = await used(s);

    const restore = refusePuts();
    try {
      // Still full: a write that adds bytes is refused, changing nothing.
      await refused(s, 'PUT', `${s.B}/new`, { body: 'new bytes' });
      const del = await s.call('DELETE', `${s.B}/src`, { auth: ALICE });
      expect(del.status, del.text).toBe(200);
      expect(await marker(s.svc, 'alice'), 'DELETE dropped the marker').toBeUndefined();
      const multi = await s.call('POST', `${s.B}/?delete`, { auth: ALICE, body: '<Delete><Object><Key>mv</Key></Object><Object><Key>none</Key></Object></Delete>' });
      expect(multi.status, multi.text).toBe(200);
      expect(multi.text).toContain('<Deleted><Key>mv</Key>');
      expect(multi.text).not.toContain('<Error>');
      const abort = await s.call('DELETE', `${s.B}/big?uploadId=${s.uploadId}`, { auth: ALICE });
      expect(abort.status, abort.text).toBe(204);
      // A key that is not there: answered as always, whether or not the write was retried.
      expect((await s.call('DELETE', `${s.B}/none`, { auth: ALICE })).status).toBe(404);

      const after = await snapshot(s.svc);
      const keys = (after.objects as { key: string }[]).map((o) => o.key).sort();
      expect(keys).toEqual(['big', 'k']);
      expect(after.uploads).toEqual([]);
      expect(after.parts).toEqual([]);
      const bodies = (after.bodies as { id: string }[]).map((b) => b.id);
      for (const id of gone) expect(bodies).not.toContain(id);
      expect(await marker(s.svc, 'alice')).toBeUndefined();
      // The stored figure is stale (it could not be written) ...
      const stored = ((await (await dbOf(s.svc)).get('accounts', 'alice')) as { usedBytes: number }).usedBytes;
      expect(stored).toBe(usedBefore);
      // ... but what is shown is the exact sum, computed read-only.
      const exact = (await dbUsage(s.svc, owners)).byOwner.alice!;
      expect(exact).toBeLessThan(usedBefore);
      expect(await used(s)).toBe(exact);
      expect(await marker(s.svc, 'alice'), 'a read stores nothing').toBeUndefined();
    } finally {
      restore();
    }

    // Room again: the next write charges the recomputed figure and stores it with its marker.
    await s.ok('PUT', `${s.B}/new`, { auth: ALICE, body: 'new bytes' });
    expect(await marker(s.svc, 'alice'), 'the next write put the marker back').toBeDefined();
    const fresh = (await dbUsage(s.svc, owners)).byOwner.alice!;
    const stored = ((await (await dbOf(s.svc)).get('accounts', 'alice')) as { usedBytes: number }).usedBytes;
    expect(stored).toBe(fresh);
    expect(await used(s)).toBe(fresh);
  });

  it('the quota checks right after (roomFor and charge) use the recomputed figure', async () => {
    const t = await withQuota(100);
    await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(60) });
    await t.ok('PUT', `${t.B}/b`, { auth: ALICE, body: bytes(30) });
    const restore = refusePuts();
    try {
      await t.ok('DELETE', `${t.B}/a`, { auth: ALICE });
    } finally {
      restore();
    }
    expect(await marker(t.svc, 'alice')).toBeUndefined();
    // The stored figure still says 90: 70 more bytes fit only by the recomputed 30.
    const ref = (await t.svc.store.getBucket('abkt'))!;
    expect(await t.svc.store.roomFor({ name: ref.name, id: ref.id }, { key: 'c' })).toBe(70);
    expect(await marker(t.svc, 'alice'), 'roomFor reads only').toBeUndefined();
    await t.ok('PUT', `${t.B}/c`, { auth: ALICE, body: bytes(70) });
    expect(await marker(t.svc, 'alice')).toBeDefined();
    expect(await used(t)).toBe(100);
    // and the restored figure is exact: one byte more is refused
    await refused(t, 'PUT', `${t.B}/d`, { body: 'x' });
  });

  it('the charge refuses on the recomputed figure when the stale one would let a write through', async () => {
    const t = await withQuota(100);
    await t.ok('PUT', `${t.B}/a`, { auth: ALICE, body: bytes(60) });
    // Make the stored figure stale low, without its marker: the sum (60) is what counts.
    const db = await dbOf(t.svc);
    const alice = (await db.get('accounts', 'alice')) as { usedBytes: number };
    await db.put('accounts', { ...alice, usedBytes: 0 });
    await db.delete('usage-exact', 'alice');
    await refused(t, 'PUT', `${t.B}/b`, { body: bytes(41) });
    await t.ok('PUT', `${t.B}/b`, { auth: ALICE, body: bytes(40) });
    expect(await used(t)).toBe(100);
    expect(((await db.get('accounts', 'alice')) as { usedBytes: number }).usedBytes).toBe(100);
  });
});
