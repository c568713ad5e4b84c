// The outbox of a replicated bucket (sw/store/rules/objects.ts, noteChange): every acknowledged
// write that changes a key's current object — PUT, POST form, copy, move, metadata, Complete,
// delete, Delete Multiple, import — records the key in the same store step as the write, one
// entry a key (the latest); a refused write records nothing; an unreplicated bucket records
// nothing; a write that fails at its commit leaves neither the object nor the entry.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createHandler } from '../../sw/core/handler.ts';
import { openStore } from '../../sw/store/rules/store.ts';
import { faultyEngine } from '../../sw/store/engine/faults.ts';
import { OUTBOX } from '../../sw/store/schema.ts';
import { newService, send, type SendOptions } from '../support/service.ts';
import { STORE_KINDS, SOUND, contents, integrity, openTestEngine, type StoreKind } from '../support/stores.ts';
import type { Store } from '../../sw/store/types.ts';

const B = 'http://rep.svc.localhost';
const md5 = (s: string) => createHash('md5').update(s).digest('hex');

async function outboxKeys(store: Store, bucket = 'rep'): Promise<string[]> {
  const ref = (await store.getBucket(bucket))!;
  const view = await store.replica.view(ref);
  if (view === 'noSuchBucket') throw new Error('gone');
  return [...view.outbox.keys()].sort();
}

async function replicated(kind: StoreKind) {
  const s = await newService({ kind });
  const call = (method: string, url: string, o: SendOptions = {}) => send(s.handle, method, url, o);
  const ok = async (method: string, url: string, o: SendOptions = {}) => {
    const r = await call(method, url, o);
    expect(r.status, `${method} ${url}: ${r.text}`).toBeLessThan(300);
    return r;
  };
  await ok('PUT', `${B}/`);
  await ok('PUT', `${B}/before.txt`, { body: 'there before the binding' });
  expect((await s.store.replica.bind((await s.store.getBucket('rep'))!, { bucket: 'rep' })).valueOf()).toBe('ok');
  return { ...s, call, ok };
}

describe.each(STORE_KINDS)('the outbox (%s)', (kind) => {
  it('several keys pulled in one step (pulledMany): each as a pull alone, a key changed since it was read refused alone, the usage counting each', async () => {
    const s = await replicated(kind);
    const ref = (await s.store.getBucket('rep'))!;
    const incoming = (key: string, text: string) => ({
      object: { key, size: text.length, etag: md5(text), lastModified: 1, contentType: 'text/plain', headers: {}, meta: [] }, body: new TextEncoder().encode(text),
    });
    const sync = (text: string) => ({ remoteEtag: md5(text), localEtag: md5(text), size: text.length, syncedAt: 1 });
    const none = { etag: null, change: null };
    // before.txt waits in the outbox (it was there when bound): a pull that saw it without that change is refused.
    const made = await s.store.replica.pulledMany(ref, [
      { key: 'a', seen: none, incoming: incoming('a', 'aaa'), sync: sync('aaa') },
      { key: 'before.txt', seen: { etag: md5('there before the binding'), change: null }, incoming: incoming('before.txt', 'remote'), sync: sync('remote') },
      { key: 'b', seen: none, incoming: incoming('b', 'bbbb'), sync: sync('bbbb') },
      { key: 'a', seen: { etag: md5('aaa'), change: null }, incoming: null, sync: null },
    ]);
    if (made === 'noSuchBucket') throw new Error('gone');
    expect(made.map((m) => (typeof m === 'object' ? m.etag : m))).toEqual([md5('aaa'), 'changed', md5('bbbb'), 'deleted']);
    expect((await s.call('GET', `${B}/a`)).status).toBe(404);
    expect((await s.call('GET', `${B}/b`)).text).toBe('bbbb');
    expect((await s.call('GET', `${B}/before.txt`)).text).toBe('there before the binding');
    expect(await outboxKeys(s.store)).toEqual(['before.txt']);
    expect(integrity(await contents(s.store))).toEqual(SOUND);
  });

  it('holds what the bucket had when bound, then every key each kind of write changes, once each', async () => {
    const s = await replicated(kind);
    expect(await outboxKeys(s.store)).toEqual(['before.txt']);
    await s.ok('PUT', `${B}/put.txt`, { body: 'a put' });
    await s.ok('PUT', `${B}/put.txt`, { body: 'a put, again' });
    await s.ok('PUT', `${B}/copy.txt`, { headers: { 'x-svc-copy-source': '/rep/put.txt' } });
    await s.ok('PUT', `${B}/moved.txt`, { headers: { 'x-svc-move-source': '/rep/copy.txt' } });
    await s.ok('PUT', `${B}/put.txt?meta`, { headers: { 'content-type': 'text/plain' } });
    const init = await s.ok('POST', `${B}/mp.bin?uploads`);
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(init.text)![1]!;
    await s.ok('PUT', `${B}/mp.bin?partNumber=1&uploadId=${uploadId}`, { body: 'only part' });
    expect(await outboxKeys(s.store)).not.toContain('mp.bin'); // a part is no change to the key
    await s.ok('POST', `${B}/mp.bin?uploadId=${uploadId}`, { body: `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${md5('only part')}</ETag></Part></CompleteMultipartUpload>` });
    await s.ok('DELETE', `${B}/before.txt`);
    await s.ok('PUT', `${B}/gone-1`, { body: '1' });
    await s.ok('PUT', `${B}/gone-2`, { body: '2' });
    await s.ok('POST', `${B}/?delete`, { body: '<Delete><Object><Key>gone-1</Key></Object><Object><Key>gone-2</Key></Object><Object><Key>never</Key></Object></Delete>' });
    expect(await outboxKeys(s.store)).toEqual(['before.txt', 'copy.txt', 'gone-1', 'gone-2', 'moved.txt', 'mp.bin', 'put.txt']);
  });

  it('records nothing for a refused write, a read, or a bucket that is not replicated', async () => {
    const s = await replicated(kind);
    await s.ok('PUT', `${B}/put.txt`, { body: 'a put' });
    const before = await outboxKeys(s.store);
    expect((await s.call('PUT', `${B}/refused.txt`, { body: 'x', headers: { 'content-md5': md5('other') } })).status).toBe(400);
    expect((await s.call('DELETE', `${B}/missing.txt`)).status).toBe(404);
    await s.ok('GET', `${B}/put.txt`);
    await s.ok('PUT', 'http://plain.svc.localhost/');
    await s.ok('PUT', 'http://plain.svc.localhost/k', { body: 'not replicated' });
    expect(await outboxKeys(s.store)).toEqual(before);
    expect(await outboxKeys(s.store, 'plain')).toEqual([]);
  });

  it('an import into a replicated bucket records what it restored', async () => {
    const s = await replicated(kind);
    await s.ok('PUT', `${B}/exported.txt`, { body: 'in the archive' });
    const res = await s.handle(await (await import('../support/service.ts')).buildRequest('GET', 'http://svc.localhost/?export&bucket=rep'));
    const archive = new Uint8Array(await res.arrayBuffer());
    const other = await replicated(kind);
    await other.ok('POST', 'http://svc.localhost/?import&conflict=overwrite', { body: archive });
    expect(await outboxKeys(other.store)).toEqual(['before.txt', 'exported.txt']);
  });

  it('a write whose commit fails leaves neither its object nor its outbox entry', async () => {
    const { engine, sizes } = await openTestEngine(kind);
    let fail = false;
    const faulty = faultyEngine(engine, { failWrite: () => (fail ? new Error('injected: the commit failed') : undefined) });
    const store = openStore(faulty, { ...(sizes ? { sizes } : {}), mayHavePieces: !engine.keepsBlobs });
    const handle = createHandler({ store });
    const ok = async (method: string, url: string, o: SendOptions = {}) => expect((await send(handle, method, url, o)).status).toBeLessThan(300);
    await ok('PUT', `${B}/`);
    await store.replica.bind((await store.getBucket('rep'))!, { bucket: 'rep' });
    fail = true;
    expect((await send(handle, 'PUT', `${B}/lost.txt`, { body: 'never acknowledged' })).status).toBe(500);
    fail = false;
    expect((await send(handle, 'GET', `${B}/lost.txt`)).status).toBe(404);
    expect(await outboxKeys(store)).toEqual([]);
    const entries = await engine.read([OUTBOX], function* () {
      return (yield { op: 'range', table: OUTBOX as never, range: { prefix: [] } }) as unknown[];
    });
    expect(entries).toEqual([]);
  });
});
