// Faults injected at the engine layer (sw/store/engine/faults.ts), under the one store logic, over
// every engine (memory, IndexedDB with Blobs and with pieces, LMDB), through the handler: for each
// write a client can make, at each of its write steps,
// - a full disk (every put refused for room, deletes let through, as a full browser origin does)
//   → 403 QuotaExceeded and nothing changed; a write that only frees bytes still succeeds (it runs
//   again dropping the owner's usage marker instead of putting the figure);
// - a failed commit (any other error) → 500 InternalError and nothing changed;
// - a body refused as it is put (as WebKit's ephemeral storage refuses a Blob) → 500 and nothing
//   changed.
// Then the same request without the fault succeeds, and the store invariants hold throughout.
import { describe, it, expect } from 'vitest';
import { createHandler } from '../../sw/core/handler.ts';
import { diskFull, faultyEngine, type FaultPlan } from '../../sw/store/engine/faults.ts';
import { openStore } from '../../sw/store/rules/store.ts';
import { BODIES, PIECES } from '../../sw/store/schema.ts';
import type { Table } from '../../sw/store/engine/types.ts';
import { send, errorCode, type SendOptions } from '../support/service.ts';
import { contents, integrity, openTestEngine, SOUND, type StoreKind } from '../support/stores.ts';

const SVC = 'http://svc.localhost';
const B = 'http://abkt.svc.localhost';
const ALICE = { accessKeyId: 'alice', secret: 'alice-secret' };
const ENABLED = '<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>';
const complete = (parts: [number, string][]) =>
  `<CompleteMultipartUpload>${parts.map(([n, etag]) => `<Part><PartNumber>${n}</PartNumber><ETag>"${etag}"</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
const md5 = async (s: string) => (await import('node:crypto')).createHash('md5').update(s).digest('hex');

/** A service whose engine fails what `plan.current` says; alice's versioned bucket with history, an upload and a large object. */
async function scene(kind: StoreKind) {
  const { engine, sizes } = await openTestEngine(kind);
  const plan: { current: FaultPlan } = { current: {} };
  const faulty = faultyEngine(engine, {
    failWrite: (n) => plan.current.failWrite?.(n),
    refusePut: (t, v) => plan.current.refusePut?.(t, v),
  });
  const store = openStore(faulty, { ...(sizes ? { sizes } : {}), mayHavePieces: !engine.keepsBlobs });
  const handle = createHandler({ store });
  const call = (method: string, url: string, o: SendOptions = {}) => send(handle, method, url, { auth: ALICE, ...o });
  const ok = async (method: string, url: string, o: SendOptions = {}) => {
    const r = await call(method, url, o);
    expect(r.status, `${method} ${url}: ${r.text}`).toBeLessThan(300);
    return r;
  };
  await ok('PUT', `${SVC}/?account=alice`, { auth: 'root', body: '<Account><SecretAccessKey>alice-secret</SecretAccessKey><DisplayName>a</DisplayName><QuotaBytes>10000000</QuotaBytes></Account>' });
  await ok('PUT', `${B}/`);
  await ok('PUT', `${B}/?versioning`, { body: ENABLED });
  await ok('PUT', `${B}/k`, { body: 'version one' });
  await ok('PUT', `${B}/k`, { body: 'version two' });
  await ok('PUT', `${B}/src`, { body: 'source bytes' });
  await ok('PUT', `${B}/big`, { body: new Uint8Array(70_000).fill(5) });
  const init = await ok('POST', `${B}/mp?uploads`);
  const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(init.text)![1]!;
  await ok('PUT', `${B}/mp?partNumber=1&uploadId=${uploadId}`, { body: 'part one' });
  await ok('PUT', `${B}/mp?partNumber=2&uploadId=${uploadId}`, { body: 'part two' });
  return { store, faulty, plan, call, uploadId };
}
type Scene = Awaited<ReturnType<typeof scene>>;

const OPS: { name: string; method: string; url: (s: Scene) => string; o?: () => Promise<SendOptions> | SendOptions; frees?: true; body?: true }[] = [
  { name: 'PUT Object (history kept)', method: 'PUT', url: () => `${B}/k`, o: () => ({ body: 'version three' }), body: true },
  { name: 'PUT Object, large', method: 'PUT', url: () => `${B}/large`, o: () => ({ body: new Uint8Array(50_000).fill(9) }), body: true },
  { name: 'Copy', method: 'PUT', url: () => `${B}/copy`, o: () => ({ headers: { 'x-svc-copy-source': '/abkt/big' } }), body: true },
  { name: 'Move', method: 'PUT', url: () => `${B}/moved`, o: () => ({ headers: { 'x-svc-move-source': '/abkt/src' } }) },
  { name: 'PUT Object Meta', method: 'PUT', url: () => `${B}/k?meta`, o: () => ({ headers: { 'content-type': 'text/plain' } }) },
  { name: 'Upload Part (replacing)', method: 'PUT', url: (s) => `${B}/mp?partNumber=1&uploadId=${s.uploadId}`, o: () => ({ body: 'part one again' }), body: true },
  { name: 'Complete', method: 'POST', url: (s) => `${B}/mp?uploadId=${s.uploadId}`, o: async () => ({ body: complete([[2, await md5('part two')]]) }) },
  { name: 'Initiate', method: 'POST', url: () => `${B}/other?uploads` },
  { name: 'DELETE Object', method: 'DELETE', url: () => `${B}/src`, frees: true },
  { name: 'DELETE a version', method: 'DELETE', url: () => `${B}/k?versionId=1`, frees: true },
  { name: 'Delete Multiple', method: 'POST', url: () => `${B}/?delete`, o: () => ({ body: '<Delete><Object><Key>src</Key></Object><Object><Key>big</Key></Object></Delete>' }), frees: true },
  { name: 'Abort', method: 'DELETE', url: (s) => `${B}/mp?uploadId=${s.uploadId}`, frees: true },
  { name: 'PUT bucket ACL', method: 'PUT', url: () => `${B}/?acl`, o: () => ({ headers: { 'x-svc-acl': 'public-read' } }) },
];

const isBody = (t: Table<unknown>) => t === BODIES || t === PIECES;

for (const kind of ['memory', 'idb', 'idb-pieces', 'lmdb'] as const) {
  describe(`faults at the engine layer: ${kind}`, () => {
    for (const op of OPS) {
      it(op.name, async () => {
        const s = await scene(kind);
        const run = async () => s.call(op.method, op.url(s), (await op.o?.()) ?? {});
        const unchanged = async (what: string, before: unknown) => {
          expect(await contents(s.store), `${what}: nothing changed`).toEqual(before);
        };

        // A full disk: every put refused for room, deletes let through (as a full origin does).
        const before = await contents(s.store);
        s.plan.current = { refusePut: () => diskFull() };
        let r = await run();
        if (op.frees) {
          expect(r.status, `full disk: ${r.text}`).toBeLessThan(300); // freed anyway, by the retry
          expect((await contents(s.store)).exactUsage.has('alice'), 'the usage marker dropped').toBe(false);
          expect(integrity(await contents(s.store))).toEqual(SOUND);
          return;
        }
        expect([r.status, errorCode(r.text)], `full disk: ${r.text}`).toEqual([403, 'QuotaExceeded']);
        await unchanged('full disk', before);

        // Any other failure of the commit.
        s.plan.current = { failWrite: () => new Error('injected: the commit failed') };
        r = await run();
        expect([r.status, errorCode(r.text)], `failed commit: ${r.text}`).toEqual([500, 'InternalError']);
        await unchanged('failed commit', before);

        // A body refused as it is put.
        if (op.body) {
          s.plan.current = { refusePut: (t) => (isBody(t) ? new Error('injected: this body is refused') : undefined) };
          r = await run();
          expect([r.status, errorCode(r.text)], `refused body: ${r.text}`).toEqual([500, 'InternalError']);
          await unchanged('refused body', before);
        }

        // No fault: it lands, and the store is sound.
        s.plan.current = {};
        r = await run();
        expect(r.status, r.text).toBeLessThan(300);
        const after = await contents(s.store);
        expect(after).not.toEqual(before);
        expect(integrity(after)).toEqual(SOUND);
      });
    }
  });
}
