// Security through handle(): every route tried by an account that does not own the bucket and by
// anonymous callers (403 AccessDenied and a database that did not change at all, except object
// reads of a public-read bucket); broken Authorization headers; presigned URLs; signature
// comparison; metadata names and account ids that are also Object.prototype names.
// From docs/protocol.md ("Signing", "Who may do what", "Accounts", "User metadata").
import { describe, it, expect, afterEach } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { newService, send, errorCode, type SendOptions } from '../support/service.ts';
import { presign, signHeaders, hmac, stringToSign } from '../support/sign.ts';

type Svc = Awaited<ReturnType<typeof newService>>;
type Creds = { accessKeyId: string; secret: string };

const SVC = 'http://svc.localhost';
const MOUNT = 'http://localhost:5173/svc';
const ALICE: Creds = { accessKeyId: 'alice', secret: 'alice-secret' };
const BOB: Creds = { accessKeyId: 'bob', secret: 'bob-secret-1' };
const host = (b: string): string => `http://${b}.svc.localhost`;
const md5 = (s: string | Uint8Array): string => createHash('md5').update(s).digest('hex');
const tag = (text: string, name: string): string | undefined => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];
const exp = (seconds: number): number => Math.floor(Date.now() / 1000) + seconds;
const VERSIONING_ON = '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>';

// ------------------------------------------------------------------------------------------------
// Database snapshot: every store, bodies by id and size.

function sizeOf(v: unknown): number | undefined {
  if (v instanceof Blob) return v.size;
  if (v instanceof ArrayBuffer) return v.byteLength;
  if (ArrayBuffer.isView(v)) return v.byteLength;
  return undefined;
}
async function snapshot(store: Svc['store']): Promise<Record<string, unknown[]>> {
  const db = await (store as unknown as { db(): Promise<import('idb').IDBPDatabase> }).db();
  const names = Array.from(db.objectStoreNames).sort();
  expect(names).toEqual(expect.arrayContaining(['accounts', 'bodies', 'buckets', 'objects', 'parts', 'uploads', 'versions']));
  const out: Record<string, unknown[]> = {};
  for (const name of names) {
    const rows = (await db.getAll(name)) as Record<string, unknown>[];
    out[name] =
      name === 'bodies'
        ? rows.map((r) => ({ id: r.id, size: Object.values(r).map(sizeOf).find((n) => n !== undefined) }))
        : rows;
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// The scene: alice owns `victim` (private) and `vpub` (public-read), both versioned, each with
// k = two versions, an in-progress upload of `big` with one part, and metadata. bob owns `bob-bkt`.

interface Scene {
  svc: Svc;
  call: (method: string, url: string, o?: SendOptions) => ReturnType<typeof send>;
  /** versionId of the historical version of k in each bucket */
  v1: Record<string, string>;
  uploadId: Record<string, string>;
  partEtag: string;
}

const V1 = 'alice-private-version-one';
const V2 = 'alice-private-version-two!';
const PART = 'alice-part-data';

async function scene(): Promise<Scene> {
  const svc = await newService();
  const call = (method: string, url: string, o: SendOptions = {}) => send(svc.handle, method, url, o);
  const ok = async (method: string, url: string, o: SendOptions = {}) => {
    const r = await call(method, url, o);
    expect(r.status, `${method} ${url}: ${r.text}`).toBe(200);
    return r;
  };
  for (const c of [ALICE, BOB]) {
    await ok('PUT', `${SVC}/?account=${c.accessKeyId}`, {
      body: `<Account><SecretAccessKey>${c.secret}</SecretAccessKey><DisplayName>${c.accessKeyId}</DisplayName></Account>`,
    });
  }
  const v1: Record<string, string> = {};
  const uploadId: Record<string, string> = {};
  for (const [b, acl] of [['victim', 'private'], ['vpub', 'public-read']] as const) {
    const H = host(b);
    await ok('PUT', `${H}/`, { auth: ALICE, headers: { 'x-svc-acl': acl } });
    await ok('PUT', `${H}/?versioning`, { auth: ALICE, body: VERSIONING_ON });
    const first = await ok('PUT', `${H}/k`, { auth: ALICE, body: V1, headers: { 'x-svc-meta-owner': 'alice' } });
    v1[b] = first.headers.get('x-svc-version-id') ?? '';
    expect(v1[b]).toMatch(/^\d+$/);
    await ok('PUT', `${H}/k`, { auth: ALICE, body: V2, headers: { 'x-svc-meta-owner': 'alice', 'content-type': 'text/plain' } });
    const init = await ok('POST', `${H}/big?uploads`, { auth: ALICE });
    uploadId[b] = tag(init.text, 'UploadId')!;
    await ok('PUT', `${H}/big?partNumber=1&uploadId=${uploadId[b]}`, { auth: ALICE, body: PART });
  }
  await ok('PUT', `${host('bob-bkt')}/`, { auth: BOB });
  await ok('PUT', `${host('bob-bkt')}/own`, { auth: BOB, body: 'bob data' });
  return { svc, call, v1, uploadId, partEtag: md5(PART) };
}

// ------------------------------------------------------------------------------------------------
// Every route, aimed at bucket `b` of the scene.

interface Op {
  name: string;
  method: string;
  url: (b: string, s: Scene) => string;
  headers?: (b: string, s: Scene) => Record<string, string>;
  body?: (b: string, s: Scene) => string;
  /** A GET/HEAD of an object: allowed to anyone on a public-read bucket, with this status… */
  objectRead?: number;
  /** …and this body (GET). */
  want?: string;
}

const u = (path: string) => (b: string) => `${host(b)}${path}`;
const ops: Op[] = [
  { name: 'PUT Object (overwrite)', method: 'PUT', url: u('/k'), body: () => 'evil' },
  { name: 'PUT Object (new key)', method: 'PUT', url: u('/new'), body: () => 'evil' },
  { name: 'PUT Object (empty body)', method: 'PUT', url: u('/k'), body: () => '' },
  { name: 'GET Object', method: 'GET', url: u('/k'), objectRead: 200, want: V2 },
  { name: 'GET Object with Range', method: 'GET', url: u('/k'), headers: () => ({ range: 'bytes=6-12' }), objectRead: 206, want: V2.slice(6, 13) },
  { name: 'GET Object ?download', method: 'GET', url: u('/k?download=x.txt'), objectRead: 200, want: V2 },
  { name: 'GET Object ?ifNotFound', method: 'GET', url: u('/missing?ifNotFound=k'), objectRead: 404, want: V2 },
  { name: 'GET Object of a missing key', method: 'GET', url: u('/missing'), objectRead: 404 },
  { name: 'HEAD Object', method: 'HEAD', url: u('/k'), objectRead: 200 },
  { name: 'GET Object ?versionId', method: 'GET', url: (b, s) => `${host(b)}/k?versionId=${s.v1[b]}`, objectRead: 200, want: V1 },
  { name: 'HEAD Object ?versionId', method: 'HEAD', url: (b, s) => `${host(b)}/k?versionId=${s.v1[b]}`, objectRead: 200 },
  { name: 'GET Object path style', method: 'GET', url: (b) => `${SVC}/${b}/k`, objectRead: 200, want: V2 },
  { name: 'GET Object on the mount', method: 'GET', url: (b) => `${MOUNT}/${b}/k`, objectRead: 200, want: V2 },
  { name: 'DELETE Object', method: 'DELETE', url: u('/k') },
  { name: 'DELETE Object of a missing key', method: 'DELETE', url: u('/missing') },
  { name: 'Copy as destination (source: bob-bkt/own)', method: 'PUT', url: u('/copied'), headers: () => ({ 'x-svc-copy-source': '/bob-bkt/own' }) },
  { name: 'Copy as destination over an existing key', method: 'PUT', url: u('/k'), headers: () => ({ 'x-svc-copy-source': '/bob-bkt/own' }) },
  { name: 'Copy inside the bucket', method: 'PUT', url: u('/k2'), headers: (b) => ({ 'x-svc-copy-source': `/${b}/k` }) },
  { name: 'Move inside the bucket', method: 'PUT', url: u('/moved'), headers: (b) => ({ 'x-svc-move-source': `/${b}/k` }) },
  { name: 'PUT Object Meta', method: 'PUT', url: u('/k?meta'), headers: () => ({ 'content-type': 'text/evil', 'x-svc-meta-owner': 'eve' }) },
  { name: 'Delete Multiple', method: 'POST', url: u('/?delete'), body: () => '<Delete><Object><Key>k</Key></Object></Delete>' },
  {
    name: 'Delete Multiple with VersionId',
    method: 'POST',
    url: u('/?delete'),
    body: (b, s) => `<Delete><Object><Key>k</Key><VersionId>${s.v1[b]}</VersionId></Object></Delete>`,
  },
  { name: 'Initiate Multipart Upload', method: 'POST', url: u('/big2?uploads') },
  { name: 'Upload Part (new number)', method: 'PUT', url: (b, s) => `${host(b)}/big?partNumber=2&uploadId=${s.uploadId[b]}`, body: () => 'evil part' },
  { name: 'Upload Part (replace)', method: 'PUT', url: (b, s) => `${host(b)}/big?partNumber=1&uploadId=${s.uploadId[b]}`, body: () => 'evil part' },
  {
    name: 'Complete Multipart Upload',
    method: 'POST',
    url: (b, s) => `${host(b)}/big?uploadId=${s.uploadId[b]}`,
    body: (_b, s) => `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"${s.partEtag}"</ETag></Part></CompleteMultipartUpload>`,
  },
  { name: 'Abort Multipart Upload', method: 'DELETE', url: (b, s) => `${host(b)}/big?uploadId=${s.uploadId[b]}` },
  { name: 'List Parts', method: 'GET', url: (b, s) => `${host(b)}/big?uploadId=${s.uploadId[b]}` },
  { name: 'List Multipart Uploads', method: 'GET', url: u('/?uploads') },
  { name: 'DELETE bucket', method: 'DELETE', url: u('/') },
  { name: 'HEAD bucket', method: 'HEAD', url: u('/') },
  { name: 'GET bucket (list objects)', method: 'GET', url: u('/') },
  { name: 'GET bucket ACL', method: 'GET', url: u('/?acl') },
  { name: 'PUT bucket ACL', method: 'PUT', url: u('/?acl'), headers: () => ({ 'x-svc-acl': 'public-read' }) },
  { name: 'PUT bucket ACL private', method: 'PUT', url: u('/?acl'), headers: () => ({ 'x-svc-acl': 'private' }) },
  { name: 'GET bucket versioning', method: 'GET', url: u('/?versioning') },
  {
    name: 'PUT bucket versioning',
    method: 'PUT',
    url: u('/?versioning'),
    body: () => '<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>',
  },
  { name: 'GET bucket versions', method: 'GET', url: u('/?versions') },
];

function optionsOf(op: Op, b: string, s: Scene, auth: SendOptions['auth']): SendOptions {
  const o: SendOptions = { auth };
  if (op.headers) o.headers = op.headers(b, s);
  if (op.body) o.body = op.body(b, s);
  return o;
}

/** What a denied response may not show: the victim's bytes, metadata, ETags, version ids. */
function expectNothingLeaked(r: Awaited<ReturnType<typeof send>>, s: Scene) {
  for (const secret of [V1, V2, PART, md5(V1), md5(V2), md5(PART), s.uploadId.victim!, s.uploadId.vpub!]) {
    expect(r.text).not.toContain(secret);
  }
  expect(r.headers.get('etag')).toBeNull();
  expect(r.headers.get('x-svc-meta-owner')).toBeNull();
  expect(r.headers.get('x-svc-version-id')).toBeNull();
  expect(r.headers.get('x-svc-acl')).toBeNull();
}

async function expectDenied(r: Awaited<ReturnType<typeof send>>, method: string) {
  expect(r.status, r.text).toBe(403);
  if (method === 'HEAD') expect(r.text).toBe('');
  else expect(errorCode(r.text), r.text).toBe('AccessDenied');
}

const attackers: { name: string; auth: SendOptions['auth'] }[] = [
  { name: 'a second account (bob)', auth: BOB },
  { name: 'root (not the owner either)', auth: 'root' },
  { name: 'anonymous', auth: 'anon' },
];

describe('every route on a private bucket of another account → 403 AccessDenied, nothing changed', () => {
  for (const a of attackers) {
    describe(a.name, () => {
      for (const op of ops) {
        it(op.name, async () => {
          const s = await scene();
          const before = await snapshot(s.svc.store);
          const r = await s.call(op.method, op.url('victim', s), optionsOf(op, 'victim', s, a.auth));
          await expectDenied(r, op.method);
          expectNothingLeaked(r, s);
          expect(await snapshot(s.svc.store)).toEqual(before);
        });
      }
    });
  }
});

describe('every route on a public-read bucket of another account: only GET/HEAD of objects succeed', () => {
  for (const a of attackers) {
    describe(a.name, () => {
      for (const op of ops) {
        const allowed = op.objectRead !== undefined;
        it(`${op.name} → ${allowed ? op.objectRead : '403 AccessDenied'}`, async () => {
          const s = await scene();
          const before = await snapshot(s.svc.store);
          const r = await s.call(op.method, op.url('vpub', s), optionsOf(op, 'vpub', s, a.auth));
          if (allowed) {
            expect(r.status, r.text).toBe(op.objectRead);
            if (op.want !== undefined) expect(r.text).toBe(op.want);
            else if (op.method === 'GET') expect(errorCode(r.text)).toBe('NoSuchKey');
          } else {
            await expectDenied(r, op.method);
            expectNothingLeaked(r, s);
          }
          expect(await snapshot(s.svc.store)).toEqual(before);
        });
      }
    });
  }

  it('reads by another account return the right bytes: current and by versionId', async () => {
    const s = await scene();
    for (const auth of [BOB, 'anon'] as const) {
      const cur = await s.call('GET', `${host('vpub')}/k`, { auth });
      expect(cur.text).toBe(V2);
      expect(cur.headers.get('x-svc-meta-owner')).toBe('alice');
      const old = await s.call('GET', `${host('vpub')}/k?versionId=${s.v1.vpub}`, { auth });
      expect(old.status).toBe(200);
      expect(old.text).toBe(V1);
      const head = await s.call('HEAD', `${host('vpub')}/k?versionId=${s.v1.vpub}`, { auth });
      expect(head.headers.get('content-length')).toBe(String(V1.length));
      const ifNotFound = await s.call('GET', `${host('vpub')}/missing?ifNotFound=k`, { auth });
      expect(ifNotFound.status).toBe(404);
      expect(ifNotFound.text).toBe(V2);
    }
  });
});

describe('copy and move across accounts', () => {
  it('copy out of a private bucket into one\'s own bucket → 403, nothing changed', async () => {
    const s = await scene();
    const before = await snapshot(s.svc.store);
    const r = await s.call('PUT', `${host('bob-bkt')}/stolen`, { auth: BOB, headers: { 'x-svc-copy-source': '/victim/k' } });
    await expectDenied(r, 'PUT');
    expectNothingLeaked(r, s);
    expect(await snapshot(s.svc.store)).toEqual(before);
  });

  it('copy out of a public-read bucket into one\'s own bucket → 200, charged to the destination owner', async () => {
    const s = await scene();
    const r = await s.call('PUT', `${host('bob-bkt')}/copied`, { auth: BOB, headers: { 'x-svc-copy-source': '/vpub/k' } });
    expect(r.status, r.text).toBe(200);
    const g = await s.call('GET', `${host('bob-bkt')}/copied`, { auth: BOB });
    expect(g.text).toBe(V2);
    const list = (await s.call('GET', `${SVC}/?accounts`)).text;
    expect(list).toMatch(new RegExp(`<AccessKeyId>bob</AccessKeyId>[\\s\\S]*?<UsedBytes>${'bob data'.length + V2.length}</UsedBytes>`));
  });

  it('anonymous copy from a public-read bucket into any bucket → 403', async () => {
    const s = await scene();
    const before = await snapshot(s.svc.store);
    for (const dst of ['bob-bkt', 'vpub', 'victim']) {
      const r = await s.call('PUT', `${host(dst)}/anon-copy`, { auth: 'anon', headers: { 'x-svc-copy-source': '/vpub/k' } });
      await expectDenied(r, 'PUT');
    }
    expect(await snapshot(s.svc.store)).toEqual(before);
  });

  it('move from another account\'s bucket into one\'s own bucket → 4xx, nothing changed', async () => {
    // Two rules apply (no ownership, and a move across buckets is 400 InvalidArgument); their
    // order is not fixed by the protocol, so any 4xx passes; the state must not change.
    const s = await scene();
    const before = await snapshot(s.svc.store);
    for (const src of ['/victim/k', '/vpub/k']) {
      const r = await s.call('PUT', `${host('bob-bkt')}/moved`, { auth: BOB, headers: { 'x-svc-move-source': src } });
      expect([400, 403]).toContain(r.status);
      expectNothingLeaked(r, s);
    }
    expect(await snapshot(s.svc.store)).toEqual(before);
  });

  it('creating a bucket whose name another account owns → 409 BucketAlreadyExists, nothing changed', async () => {
    const s = await scene();
    const before = await snapshot(s.svc.store);
    for (const b of ['victim', 'vpub']) {
      const r = await s.call('PUT', `${host(b)}/`, { auth: BOB, headers: { 'x-svc-acl': 'public-read' } });
      expect(r.status, r.text).toBe(409);
      expect(errorCode(r.text)).toBe('BucketAlreadyExists');
    }
    expect(await snapshot(s.svc.store)).toEqual(before);
  });

  it('ListBuckets of another account does not show the victim\'s buckets', async () => {
    const s = await scene();
    const r = await s.call('GET', `${SVC}/`, { auth: BOB });
    expect(r.status).toBe(200);
    expect(r.text).toContain('<Name>bob-bkt</Name>');
    expect(r.text).not.toContain('victim');
    expect(r.text).not.toContain('vpub');
  });
});

describe('account deletion racing the account\'s own bucket creation', () => {
  // docs/protocol.md, "Accounts": an account that still owns buckets → 409 AccountNotEmpty. Either
  // the bucket is created first (then DELETE /?account is 409) or the account is gone first (then
  // PUT / is 403). Both succeeding leaves a bucket owned by no account, which no one may ever
  // act on or delete (docs/protocol.md, "Who may do what": only the owner may act on a bucket).
  it('never both succeed; no bucket is left owned by a missing account', async () => {
    const tick = async (n: number) => {
      for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
    };
    const outcomes: string[] = [];
    for (let delay = -4; delay <= 16; delay++) {
      const svc = await newService();
      const carol = { accessKeyId: 'carol', secret: 'carol-secret' };
      const created = await send(svc.handle, 'PUT', `${SVC}/?account=carol`, { body: '<Account><SecretAccessKey>carol-secret</SecretAccessKey></Account>' });
      expect(created.status).toBe(200);
      const [mk, del] = await Promise.all([
        tick(Math.max(0, delay)).then(() => send(svc.handle, 'PUT', `${host('carol-bkt')}/`, { auth: carol })),
        tick(Math.max(0, -delay)).then(() => send(svc.handle, 'DELETE', `${SVC}/?account=carol`)),
      ]);
      const db = await (svc.store as unknown as { db(): Promise<import('idb').IDBPDatabase> }).db();
      const accounts = new Set(((await db.getAll('accounts')) as { accessKeyId: string }[]).map((a) => a.accessKeyId));
      const orphans = ((await db.getAll('buckets')) as { name: string; owner: string }[]).filter((b) => !accounts.has(b.owner));
      outcomes.push(`delay ${delay}: PUT bucket ${mk.status}, DELETE account ${del.status}, orphaned buckets ${orphans.length}`);
    }
    const bad = outcomes.filter((o) => / 200, DELETE account 200/.test(o) || !/orphaned buckets 0$/.test(o));
    expect(bad, outcomes.join('\n')).toEqual([]);
  });
});

// ------------------------------------------------------------------------------------------------
// Broken Authorization headers. Each request is first built validly (signed as the owner alice with
// a fresh x-svc-date), then the Authorization value is replaced.

interface RawOpts {
  body?: string;
  headers?: Record<string, string>;
  creds?: Creds;
  date?: Date;
  /** Changes the signed headers before sending. */
  mutate?: (h: Headers) => void;
}
function rawRequest(method: string, url: string, o: RawOpts = {}): Request {
  const h = new Headers(o.headers ?? {});
  const body = o.body === undefined ? undefined : new TextEncoder().encode(o.body);
  if (body !== undefined || method === 'PUT' || method === 'POST') h.set('content-length', String(body?.byteLength ?? 0));
  signHeaders(method, url, h, o.creds ?? ALICE, o.date ?? new Date());
  o.mutate?.(h);
  const init: RequestInit = { method, headers: h };
  if (body !== undefined) init.body = body as Uint8Array<ArrayBuffer>;
  return new Request(url, init);
}
async function sendRaw(s: Scene, method: string, url: string, o: RawOpts = {}) {
  const res = await s.svc.handle(rawRequest(method, url, o));
  const text = method === 'HEAD' ? '' : await res.text();
  return { status: res.status, headers: res.headers, text, code: errorCode(text) };
}
const signatureOf = (h: Headers): string => h.get('authorization')!.replace(/^SVC [^:]*:/, '');
const withAuth = (value: string) => (h: Headers) => h.set('authorization', value);

/** Writes an attacker would like to get through, all on alice's private bucket or the account API. */
const writes: { name: string; method: string; url: string; body?: string; headers?: Record<string, string> }[] = [
  { name: 'PUT Object', method: 'PUT', url: `${host('victim')}/k`, body: 'evil' },
  { name: 'DELETE Object', method: 'DELETE', url: `${host('victim')}/k` },
  { name: 'Delete Multiple', method: 'POST', url: `${host('victim')}/?delete`, body: '<Delete><Object><Key>k</Key></Object></Delete>' },
  { name: 'PUT bucket ACL', method: 'PUT', url: `${host('victim')}/?acl`, headers: { 'x-svc-acl': 'public-read' } },
  { name: 'GET Object', method: 'GET', url: `${host('victim')}/k` },
];

describe('broken Authorization headers → 403, nothing changed', () => {
  const variants: { name: string; code: string; mutate?: (h: Headers) => void; date?: () => Date; creds?: Creds }[] = [
    { name: 'forged signature (random bytes)', code: 'AccessDenied', mutate: withAuth(`SVC alice:${randomBytes(32).toString('base64')}`) },
    { name: 'forged signature (empty)', code: 'AccessDenied', mutate: withAuth('SVC alice:') },
    { name: 'signature made with a wrong secret', code: 'AccessDenied', creds: { accessKeyId: 'alice', secret: 'alice-secreT' } },
    {
      name: 'valid signature under another access key (bob with alice\'s signature)',
      code: 'AccessDenied',
      mutate: (h) => h.set('authorization', `SVC bob:${signatureOf(h)}`),
    },
    { name: 'unknown access key', code: 'AccessDenied', mutate: (h) => h.set('authorization', `SVC mallory:${signatureOf(h)}`) },
    { name: 'replayed: signed 16 minutes ago', code: 'RequestTimeTooSkewed', date: () => new Date(Date.now() - 16 * 60_000) },
    { name: 'replayed: signed 1 hour ago', code: 'RequestTimeTooSkewed', date: () => new Date(Date.now() - 3600_000) },
    { name: 'dated 16 minutes in the future', code: 'RequestTimeTooSkewed', date: () => new Date(Date.now() + 16 * 60_000) },
    {
      name: 'replayed with a fresh date (the signature covers the date)',
      code: 'AccessDenied',
      date: () => new Date(Date.now() - 60_000),
      mutate: (h) => h.set('x-svc-date', new Date().toUTCString()),
    },
    // (the last character is the base64 padding "="; dropping it leaves the same bytes, so the last
    // character that carries data is dropped along with it)
    { name: 'truncated: signature missing its last data character', code: 'AccessDenied', mutate: (h) => h.set('authorization', h.get('authorization')!.slice(0, -2)) },
    { name: 'truncated: signature cut in half', code: 'AccessDenied', mutate: (h) => h.set('authorization', h.get('authorization')!.slice(0, 30)) },
    { name: 'truncated: no signature', code: 'AccessDenied', mutate: withAuth('SVC alice') },
    { name: 'truncated: scheme only', code: 'AccessDenied', mutate: withAuth('SVC') },
    { name: 'truncated: no access key', code: 'AccessDenied', mutate: (h) => h.set('authorization', `SVC :${signatureOf(h)}`) },
    { name: 'wrong scheme AWS with a valid signature', code: 'AccessDenied', mutate: (h) => h.set('authorization', `AWS alice:${signatureOf(h)}`) },
    { name: 'wrong scheme Bearer', code: 'AccessDenied', mutate: (h) => h.set('authorization', `Bearer ${signatureOf(h)}`) },
    { name: 'wrong scheme Basic', code: 'AccessDenied', mutate: withAuth(`Basic ${Buffer.from('alice:alice-secret').toString('base64')}`) },
    { name: 'signature with extra characters appended', code: 'AccessDenied', mutate: (h) => h.set('authorization', `${h.get('authorization')}AA`) },
  ];
  for (const v of variants) {
    it(v.name, async () => {
      const s = await scene();
      const before = await snapshot(s.svc.store);
      for (const w of writes) {
        const o: RawOpts = {};
        if (w.body !== undefined) o.body = w.body;
        if (w.headers) o.headers = w.headers;
        if (v.mutate) o.mutate = v.mutate;
        if (v.date) o.date = v.date();
        if (v.creds) o.creds = v.creds;
        const r = await sendRaw(s, w.method, w.url, o);
        expect(r.status, `${w.name}: ${r.text}`).toBe(403);
        expect(r.code, w.name).toBe(v.code);
        expect(r.text).not.toContain(V2);
        expect(r.text).not.toContain(ALICE.secret);
      }
      // on a public-read bucket a broken Authorization is not turned into an anonymous read
      const pub = await sendRaw(s, 'GET', `${host('vpub')}/k`, { ...(v.mutate ? { mutate: v.mutate } : {}), ...(v.date ? { date: v.date() } : {}), ...(v.creds ? { creds: v.creds } : {}) });
      expect(pub.status).toBe(403);
      expect(pub.code).toBe(v.code);
      expect(await snapshot(s.svc.store)).toEqual(before);
      // control: the same requests signed properly work
      const good = await sendRaw(s, 'GET', `${host('victim')}/k`);
      expect(good.status).toBe(200);
      expect(good.text).toBe(V2);
    });
  }

  it('a signature for one request replayed on another (other method, other key, other bucket) → 403', async () => {
    const s = await scene();
    const before = await snapshot(s.svc.store);
    const date = new Date();
    const getHeaders = rawRequest('GET', `${host('victim')}/k`, { date }).headers;
    const auth = getHeaders.get('authorization')!;
    const xdate = getHeaders.get('x-svc-date')!;
    const replay = (method: string, url: string, body?: string) =>
      sendRaw(s, method, url, { date, ...(body !== undefined ? { body } : {}), mutate: (h) => { h.set('authorization', auth); h.set('x-svc-date', xdate); } });
    for (const [method, url, body] of [
      ['DELETE', `${host('victim')}/k`],
      ['PUT', `${host('victim')}/k`, 'evil'],
      ['GET', `${host('victim')}/k2`],
      ['GET', `${host('vpub')}/k`],
      ['GET', `${host('victim')}/k?versionId=${s.v1.victim}`],
      ['GET', `${host('victim')}/?versions`],
    ] as [string, string, string?][]) {
      const r = await replay(method, url, body);
      expect(r.status, `${method} ${url}`).toBe(403);
      expect(r.code).toBe('AccessDenied');
    }
    expect(await snapshot(s.svc.store)).toEqual(before);
    // the original request itself is fine (within 15 minutes, no nonce required by the protocol)
    const r = await replay('GET', `${host('victim')}/k`);
    expect(r.status).toBe(200);
  });

  it('an x-svc-* header added after signing → 403 AccessDenied, nothing written', async () => {
    const s = await scene();
    const before = await snapshot(s.svc.store);
    const r = await sendRaw(s, 'PUT', `${host('victim')}/k`, { body: 'evil', mutate: (h) => h.set('x-svc-meta-owner', 'eve') });
    expect(r.status).toBe(403);
    expect(r.code).toBe('AccessDenied');
    const c = await sendRaw(s, 'PUT', `${host('victim')}/c`, { mutate: (h) => h.set('x-svc-copy-source', '/victim/k') });
    expect(c.status).toBe(403);
    expect(await snapshot(s.svc.store)).toEqual(before);
  });
});

describe('signature comparison', () => {
  /** The signature's bytes with byte `i` flipped, base64 again (so it differs in exactly that byte). */
  function flipByte(sig: string, i: number): string {
    const b = Buffer.from(sig, 'base64');
    expect(b.length).toBe(32);
    const idx = i < 0 ? b.length + i : i;
    b[idx] = b[idx]! ^ 0x01;
    return b.toString('base64');
  }

  it('a signature differing only in the first byte and one differing only in the last byte get the same answer', async () => {
    const s = await scene();
    const before = await snapshot(s.svc.store);
    const date = new Date();
    const url = `${host('victim')}/k`;
    const answers: { status: number; code: string | undefined; message: string | undefined }[] = [];
    for (const i of [0, -1, 15]) {
      const r = await sendRaw(s, 'PUT', url, {
        body: 'evil',
        date,
        mutate: (h) => h.set('authorization', `SVC alice:${flipByte(signatureOf(h), i)}`),
      });
      answers.push({ status: r.status, code: r.code, message: tag(r.text, 'Message') });
    }
    for (const a of answers) {
      expect(a.status).toBe(403);
      expect(a.code).toBe('AccessDenied');
    }
    // Where the difference is must not show: same status, code and message.
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect(await snapshot(s.svc.store)).toEqual(before);
    // control: unchanged, the same request works
    const ok = await sendRaw(s, 'PUT', url, { body: 'fine', date });
    expect(ok.status).toBe(200);
  });

  it('signatures of the wrong length (a prefix of the right one, or one byte longer) → 403 with the same message', async () => {
    const s = await scene();
    const date = new Date();
    const url = `${host('victim')}/k`;
    const messages: (string | undefined)[] = [];
    for (const change of [
      (sig: string) => Buffer.from(sig, 'base64').subarray(0, 31).toString('base64'),
      (sig: string) => Buffer.concat([Buffer.from(sig, 'base64'), Buffer.from([0])]).toString('base64'),
      (sig: string) => Buffer.from(sig, 'base64').subarray(0, 1).toString('base64'),
      (sig: string) => flipByte(sig, 0),
    ]) {
      const r = await sendRaw(s, 'GET', url, { date, mutate: (h) => h.set('authorization', `SVC alice:${change(signatureOf(h))}`) });
      expect(r.status).toBe(403);
      expect(r.code).toBe('AccessDenied');
      messages.push(tag(r.text, 'Message'));
    }
    expect(new Set(messages).size).toBe(1);
  });

  it('the signature is case-sensitive base64 (a case-swapped signature fails)', async () => {
    const s = await scene();
    const r = await sendRaw(s, 'GET', `${host('victim')}/k`, {
      mutate: (h) => {
        const sig = signatureOf(h);
        const swapped = sig.replace(/[a-zA-Z]/g, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()));
        h.set('authorization', `SVC alice:${swapped}`);
      },
    });
    expect(r.status).toBe(403);
    expect(r.code).toBe('AccessDenied');
  });
});

// ------------------------------------------------------------------------------------------------
describe('presigned URLs', () => {
  it('a presigned GET works as a plain link: no header at all, and with what an <img> sends', async () => {
    const s = await scene();
    const url = presign('GET', `${host('victim')}/k`, exp(300), ALICE);
    const plain = await s.svc.handle(new Request(url));
    expect(plain.status).toBe(200);
    expect(await plain.text()).toBe(V2);
    const img = await s.svc.handle(new Request(url, { headers: { accept: 'image/avif,image/webp,*/*', referer: 'http://localhost:5173/' } }));
    expect(img.status).toBe(200);
    expect(await img.text()).toBe(V2);
    // the page-origin mount, which is what a link in the page uses
    const mounted = await s.svc.handle(new Request(presign('GET', `${MOUNT}/victim/k`, exp(300), ALICE)));
    expect(mounted.status).toBe(200);
    expect(await mounted.text()).toBe(V2);
  });

  it('a presigned GET of a historical version reads that version', async () => {
    const s = await scene();
    const res = await s.svc.handle(new Request(presign('GET', `${host('victim')}/k?versionId=${s.v1.victim}`, exp(300), ALICE)));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(V1);
  });

  const bad: { name: string; url: (s: Scene) => string }[] = [
    { name: 'changed key', url: () => presign('GET', `${host('victim')}/other`, exp(300), ALICE).replace('/other?', '/k?') },
    { name: 'changed bucket', url: () => presign('GET', `${host('vpub')}/k`, exp(300), ALICE).replace('vpub.', 'victim.') },
    {
      name: 'changed Expires (later)',
      url: () => {
        const e = exp(300);
        return presign('GET', `${host('victim')}/k`, e, ALICE).replace(`Expires=${e}`, `Expires=${e + 3600}`);
      },
    },
    {
      name: 'changed Expires (earlier, still future)',
      url: () => {
        const e = exp(300);
        return presign('GET', `${host('victim')}/k`, e, ALICE).replace(`Expires=${e}`, `Expires=${e - 100}`);
      },
    },
    { name: 'past Expires', url: () => presign('GET', `${host('victim')}/k`, exp(-1), ALICE) },
    { name: 'past Expires by a day', url: () => presign('GET', `${host('victim')}/k`, exp(-86400), ALICE) },
    { name: 'added versionId (a signed sub-resource)', url: (s) => presign('GET', `${host('victim')}/k`, exp(300), ALICE) + `&versionId=${s.v1.victim}` },
    { name: 'signed by another account (bob)', url: () => presign('GET', `${host('victim')}/k`, exp(300), BOB) },
    { name: 'signed with a wrong secret', url: () => presign('GET', `${host('victim')}/k`, exp(300), { accessKeyId: 'alice', secret: 'nope-nope' }) },
    {
      name: 'access key swapped for another account',
      url: () => presign('GET', `${host('victim')}/k`, exp(300), ALICE).replace('SVCAccessKeyId=alice', 'SVCAccessKeyId=bob'),
    },
    { name: 'Signature removed', url: () => presign('GET', `${host('victim')}/k`, exp(300), ALICE).replace(/&?Signature=[^&]*/, '') },
    { name: 'Signature emptied', url: () => presign('GET', `${host('victim')}/k`, exp(300), ALICE).replace(/Signature=[^&]*/, 'Signature=') },
  ];
  for (const b of bad) {
    it(`${b.name} → 403 AccessDenied, no bytes`, async () => {
      const s = await scene();
      const res = await s.svc.handle(new Request(b.url(s)));
      const text = await res.text();
      expect(res.status, text).toBe(403);
      expect(errorCode(text)).toBe('AccessDenied');
      expect(text).not.toContain(V2);
      expect(text).not.toContain(V1);
    });
  }

  it('a presigned GET used for PUT or DELETE → 403, nothing changed', async () => {
    const s = await scene();
    const before = await snapshot(s.svc.store);
    const url = presign('GET', `${host('victim')}/k`, exp(300), ALICE);
    const put = await s.svc.handle(new Request(url, { method: 'PUT', body: 'evil', headers: { 'content-length': '4' } }));
    expect(put.status).toBe(403);
    expect(errorCode(await put.text())).toBe('AccessDenied');
    const del = await s.svc.handle(new Request(url, { method: 'DELETE' }));
    expect(del.status).toBe(403);
    expect(await snapshot(s.svc.store)).toEqual(before);
  });

  it('a presigned PUT with a changed key or past Expires → 403, nothing written', async () => {
    const s = await scene();
    const before = await snapshot(s.svc.store);
    for (const url of [
      presign('PUT', `${host('victim')}/allowed`, exp(300), ALICE).replace('/allowed?', '/k?'),
      presign('PUT', `${host('victim')}/k`, exp(-10), ALICE),
    ]) {
      const r = await s.svc.handle(new Request(url, { method: 'PUT', body: 'evil', headers: { 'content-length': '4' } }));
      expect(r.status).toBe(403);
      expect(errorCode(await r.text())).toBe('AccessDenied');
    }
    expect(await snapshot(s.svc.store)).toEqual(before);
  });

  it('a presigned URL works for a signed sub-resource on the service host: root lists accounts, alice cannot', async () => {
    const s = await scene();
    const root = await s.svc.handle(new Request(presign('GET', `${SVC}/?accounts`, exp(300))));
    const text = await root.text();
    expect(root.status, text).toBe(200);
    expect(text).toContain('<AccessKeyId>alice</AccessKeyId>');
    expect(text).not.toContain(ALICE.secret);
    const alice = await s.svc.handle(new Request(presign('GET', `${SVC}/?accounts`, exp(300), ALICE)));
    expect(alice.status).toBe(403);
    expect(errorCode(await alice.text())).toBe('AccessDenied');
  });

  it('presigned URLs of a deleted account stop working', async () => {
    const s = await scene();
    const carol = { accessKeyId: 'carol', secret: 'carol-secret' };
    expect((await s.call('PUT', `${SVC}/?account=carol`, { body: '<Account><SecretAccessKey>carol-secret</SecretAccessKey></Account>' })).status).toBe(200);
    expect((await s.call('PUT', `${host('carol-bkt')}/`, { auth: carol })).status).toBe(200);
    expect((await s.call('PUT', `${host('carol-bkt')}/k`, { auth: carol, body: 'carol data' })).status).toBe(200);
    const url = presign('GET', `${host('carol-bkt')}/k`, exp(300), carol);
    expect((await s.svc.handle(new Request(url))).status).toBe(200);
    expect((await s.call('DELETE', `${host('carol-bkt')}/k`, { auth: carol })).status).toBe(200);
    expect((await s.call('DELETE', `${host('carol-bkt')}/`, { auth: carol })).status).toBe(200);
    expect((await s.call('DELETE', `${SVC}/?account=carol`)).status).toBe(200);
    // the bucket name is free again; root takes it and stores an object at the same key
    expect((await s.call('PUT', `${host('carol-bkt')}/`)).status).toBe(200);
    expect((await s.call('PUT', `${host('carol-bkt')}/k`, { body: 'root data' })).status).toBe(200);
    const res = await s.svc.handle(new Request(url));
    const text = await res.text();
    expect(res.status).toBe(403);
    expect(errorCode(text)).toBe('AccessDenied');
    expect(text).not.toContain('root data');
  });

  it('the presigned signature is HMAC-SHA256 over METHOD\\n\\n\\nExpires\\n/bucket/key (checked by hand)', async () => {
    const s = await scene();
    const e = exp(300);
    const sig = hmac(ALICE.secret, `GET\n\n\n${e}\n/victim/k`);
    expect(stringToSign('GET', new URL(`${host('victim')}/k`), new Headers(), String(e))).toBe(`GET\n\n\n${e}\n/victim/k`);
    const res = await s.svc.handle(new Request(`${host('victim')}/k?SVCAccessKeyId=alice&Expires=${e}&Signature=${encodeURIComponent(sig)}`));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(V2);
  });
});

// ------------------------------------------------------------------------------------------------
describe('names that are also Object.prototype properties', () => {
  const protoNames = Object.getOwnPropertyNames(Object.prototype).sort();
  afterEach(() => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(protoNames);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  const META = {
    'x-svc-meta-__proto__': 'p-value',
    'x-svc-meta-constructor': 'c-value',
    'x-svc-meta-toString': 't-value',
    'x-svc-meta-hasOwnProperty': 'h-value',
    'x-svc-meta-valueOf': 'v-value',
  };
  // docs/protocol.md, "User metadata": names are lower-cased and stored as data
  const expected: [string, string][] = [
    ['x-svc-meta-__proto__', 'p-value'],
    ['x-svc-meta-constructor', 'c-value'],
    ['x-svc-meta-tostring', 't-value'],
    ['x-svc-meta-hasownproperty', 'h-value'],
    ['x-svc-meta-valueof', 'v-value'],
  ];
  const metaOf = (h: Headers): [string, string][] => [...h].filter(([n]) => n.startsWith('x-svc-meta-')).sort();

  it('metadata names __proto__, constructor, toString, hasOwnProperty, valueOf are stored and returned as data', async () => {
    const s = await scene();
    const P = host('victim');
    const put = await s.call('PUT', `${P}/proto`, { auth: ALICE, body: 'x', headers: META });
    expect(put.status, put.text).toBe(200);
    for (const method of ['GET', 'HEAD']) {
      const r = await s.call(method, `${P}/proto`, { auth: ALICE });
      expect(r.status).toBe(200);
      expect(metaOf(r.headers)).toEqual([...expected].sort());
    }
    // copy carries the metadata over
    expect((await s.call('PUT', `${P}/proto-copy`, { auth: ALICE, headers: { 'x-svc-copy-source': '/victim/proto' } })).status).toBe(200);
    expect(metaOf((await s.call('GET', `${P}/proto-copy`, { auth: ALICE })).headers)).toEqual([...expected].sort());
    // move too
    expect((await s.call('PUT', `${P}/proto-moved`, { auth: ALICE, headers: { 'x-svc-move-source': '/victim/proto-copy' } })).status).toBe(200);
    expect(metaOf((await s.call('GET', `${P}/proto-moved`, { auth: ALICE })).headers)).toEqual([...expected].sort());
    // ?meta replaces everything: only __proto__ is left
    expect((await s.call('PUT', `${P}/proto?meta`, { auth: ALICE, headers: { 'x-svc-meta-__proto__': 'only' } })).status).toBe(200);
    expect(metaOf((await s.call('GET', `${P}/proto`, { auth: ALICE })).headers)).toEqual([['x-svc-meta-__proto__', 'only']]);
    // an object without metadata has none (nothing leaked through a shared prototype)
    expect((await s.call('PUT', `${P}/plain`, { auth: ALICE, body: 'y' })).status).toBe(200);
    expect(metaOf((await s.call('GET', `${P}/plain`, { auth: ALICE })).headers)).toEqual([]);
  });

  it('metadata named __proto__ and constructor through a multipart upload', async () => {
    const s = await scene();
    const P = host('victim');
    const init = await s.call('POST', `${P}/mp?uploads`, { auth: ALICE, headers: { 'x-svc-meta-__proto__': 'from-initiate', 'x-svc-meta-constructor': 'ctor' } });
    const id = tag(init.text, 'UploadId')!;
    expect((await s.call('PUT', `${P}/mp?partNumber=1&uploadId=${id}`, { auth: ALICE, body: 'part' })).status).toBe(200);
    const done = await s.call('POST', `${P}/mp?uploadId=${id}`, {
      auth: ALICE,
      headers: { 'x-svc-meta-constructor': 'from-complete' },
      body: `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${md5('part')}</ETag></Part></CompleteMultipartUpload>`,
    });
    expect(done.status, done.text).toBe(200);
    const r = await s.call('GET', `${P}/mp`, { auth: ALICE });
    expect(r.headers.get('x-svc-meta-__proto__')).toBe('from-initiate');
    expect(r.headers.get('x-svc-meta-constructor')).toBe('from-complete');
  });

  it('metadata values that look like JSON or prototype paths stay plain strings', async () => {
    const s = await scene();
    const P = host('victim');
    const headers = { 'x-svc-meta-__proto__': '{"polluted":true}', 'x-svc-meta-prototype': 'constructor.prototype.polluted' };
    expect((await s.call('PUT', `${P}/json`, { auth: ALICE, body: 'x', headers })).status).toBe(200);
    const r = await s.call('HEAD', `${P}/json`, { auth: ALICE });
    expect(r.headers.get('x-svc-meta-__proto__')).toBe('{"polluted":true}');
    expect(r.headers.get('x-svc-meta-prototype')).toBe('constructor.prototype.polluted');
  });

  it('account ids __proto__, constructor and toString are ordinary accounts', async () => {
    const s = await scene();
    for (const id of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const r = await s.call('PUT', `${SVC}/?account=${id}`, {
        body: `<Account><SecretAccessKey>${id}-secret</SecretAccessKey><DisplayName>${id}</DisplayName><QuotaBytes>5</QuotaBytes></Account>`,
      });
      expect(r.status, `${id}: ${r.text}`).toBe(200);
      const creds = { accessKeyId: id, secret: `${id}-secret` };
      // it can sign, owns what it creates, and its quota applies
      const bucketName = `b-${id.replace(/_/g, '').toLowerCase()}`;
      expect((await s.call('PUT', `${host(bucketName)}/`, { auth: creds })).status).toBe(200);
      expect((await s.call('PUT', `${host(bucketName)}/a`, { auth: creds, body: '12345' })).status).toBe(200);
      const over = await s.call('PUT', `${host(bucketName)}/b`, { auth: creds, body: '1' });
      expect(over.status).toBe(403);
      expect(errorCode(over.text)).toBe('QuotaExceeded');
      // and it is not the owner of anything else
      expect((await s.call('GET', `${host('victim')}/k`, { auth: creds })).status).toBe(403);
      // a wrong secret is still wrong
      expect((await s.call('GET', `${SVC}/`, { auth: { accessKeyId: id, secret: 'wrong-secret' } })).status).toBe(403);
    }
    const list = await s.call('GET', `${SVC}/?accounts`);
    for (const id of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      expect(list.text).toMatch(new RegExp(`<AccessKeyId>${id}</AccessKeyId>\\s*<DisplayName>${id}</DisplayName>\\s*<QuotaBytes>5</QuotaBytes>\\s*<UsedBytes>5</UsedBytes>\\s*<Root>false</Root>`));
    }
    // an id that does not exist, named like a prototype property, is unknown
    const unknown = await s.call('GET', `${SVC}/`, { auth: { accessKeyId: 'isPrototypeOf', secret: 'isPrototypeOf' } });
    expect(unknown.status).toBe(403);
    expect(errorCode(unknown.text)).toBe('AccessDenied');
    const del = await s.call('DELETE', `${SVC}/?account=valueOf`);
    expect(del.status).toBe(404);
    expect(errorCode(del.text)).toBe('NoSuchAccount');
  });

  it('object keys __proto__ and constructor are ordinary keys', async () => {
    const s = await scene();
    const P = host('victim');
    for (const k of ['__proto__', 'constructor', 'toString']) {
      expect((await s.call('PUT', `${P}/${k}`, { auth: ALICE, body: `body of ${k}` })).status).toBe(200);
    }
    for (const k of ['__proto__', 'constructor', 'toString']) {
      const r = await s.call('GET', `${P}/${k}`, { auth: ALICE });
      expect(r.status).toBe(200);
      expect(r.text).toBe(`body of ${k}`);
    }
    const list = await s.call('GET', `${P}/?prefix=_`, { auth: ALICE });
    expect(list.text).toContain('<Key>__proto__</Key>');
    expect((await s.call('GET', `${P}/hasOwnProperty`, { auth: ALICE })).status).toBe(404);
    const del = await s.call('POST', `${P}/?delete`, {
      auth: ALICE,
      body: '<Delete><Object><Key>__proto__</Key></Object><Object><Key>constructor</Key></Object></Delete>',
    });
    expect(del.status).toBe(200);
    expect((await s.call('GET', `${P}/__proto__`, { auth: ALICE })).status).toBe(404);
    expect((await s.call('GET', `${P}/toString`, { auth: ALICE })).text).toBe('body of toString');
  });
});
