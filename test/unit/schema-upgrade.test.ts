// A database written by the previous schema (version 1: buckets known by their name only) keeps
// working after the upgrade to bucket identities (sw/store/idb.ts, UPGRADES): every bucket gets an
// id, every upload in progress its bucket's id, and its objects and uploads stay usable. A database
// at version 2 gets the `usage-exact` markers (step 3): every account's stored usage figure is
// exact then, and is kept, not recomputed.
import { describe, it, expect } from 'vitest';
import { IDBFactory } from 'fake-indexeddb';
import { createHandler } from '../../sw/core/handler.ts';
import { openIdbStore } from '../../sw/store/idb.ts';
import { send } from '../support/service.ts';

const NAME = 'swbucket-v1';
const B = 'http://old.svc.localhost';

function request<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

/** A version-1 database as the previous release left it: one bucket, one object, one upload with a part. */
async function versionOneDatabase(factory: IDBFactory): Promise<void> {
  const open = factory.open(NAME, 1);
  open.onupgradeneeded = () => {
    const db = open.result;
    db.createObjectStore('accounts', { keyPath: 'accessKeyId' })
      .add({ accessKeyId: 'svcadmin', secret: 'svcadmin-secret', displayName: 'svcadmin', usedBytes: 9, root: true });
    db.createObjectStore('buckets', { keyPath: 'name' })
      .add({ name: 'old', owner: 'svcadmin', acl: 'private', created: 1_700_000_000_000, nextVersionId: 1 });
    db.createObjectStore('objects', { keyPath: ['bucket', 'key'] }).add({
      bucket: 'old', key: 'kept.txt', size: 5, etag: '5d41402abc4b2a76b9719d911017c592', lastModified: 1_700_000_000_000,
      chunks: [{ id: 'body-1', size: 5 }], contentType: 'text/plain', headers: {}, meta: [],
    });
    db.createObjectStore('versions', { keyPath: ['bucket', 'key', 'versionId'] });
    db.createObjectStore('bodies', { keyPath: 'id' }).add({ id: 'body-1', blob: new Blob(['hello']) });
    const uploads = db.createObjectStore('uploads', { keyPath: 'uploadId' });
    uploads.createIndex('byBucketKey', ['bucket', 'key', 'uploadId']);
    uploads.add({ uploadId: 'u00000000aoldupload', bucket: 'old', key: 'big', initiated: 1_700_000_000_000, contentType: 'application/octet-stream', headers: {}, meta: [] });
    db.createObjectStore('parts', { keyPath: ['uploadId', 'partNumber'] })
      .add({ uploadId: 'u00000000aoldupload', partNumber: 1, etag: '9f4ad4b0e2d9a6e0e0b5b2d1b0f1a6c3', size: 4, lastModified: 1_700_000_000_000, bodyId: 'body-2' });
    open.transaction!.objectStore('bodies').add({ id: 'body-2', blob: new Blob(['part']) });
  };
  const db = await request(open);
  db.close();
}

describe('upgrading a version-1 database to bucket identities', () => {
  it('gives the bucket an id and the upload its bucket\'s; objects, uploads and writes keep working', async () => {
    const factory = new IDBFactory();
    await versionOneDatabase(factory);
    const store = await openIdbStore({ indexedDB: factory, name: NAME });
    const db = await (store as unknown as { db(): Promise<IDBDatabase & { version: number }> }).db();
    expect(db.version).toBe(8); // every step, through the replicas' stores

    const bucket = await store.getBucket('old');
    expect(bucket?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await store.getUpload('u00000000aoldupload'))?.bucketId).toBe(bucket!.id);

    const handle = createHandler({ store });
    expect((await send(handle, 'GET', `${B}/kept.txt`)).text).toBe('hello');
    // The upload begun before the upgrade continues and completes in its bucket.
    const part2 = await send(handle, 'PUT', `${B}/big?partNumber=2&uploadId=u00000000aoldupload`, { body: 'more' });
    expect(part2.status, part2.text).toBe(200);
    const list = await send(handle, 'GET', `${B}/big?uploadId=u00000000aoldupload`);
    expect(list.text).toMatch(/<PartNumber>1<\/PartNumber>[\s\S]*<PartNumber>2<\/PartNumber>/);
    const abort = await send(handle, 'DELETE', `${B}/big?uploadId=u00000000aoldupload`);
    expect(abort.status, abort.text).toBe(204);
    expect((await send(handle, 'PUT', `${B}/new.txt`, { body: 'new' })).status).toBe(200);
    expect((await send(handle, 'PUT', `${B}/?acl`, { headers: { 'x-svc-acl': 'public-read' } })).status).toBe(200);

    // Re-created under the same name, it is another bucket.
    for (const key of ['kept.txt', 'new.txt']) expect((await send(handle, 'DELETE', `${B}/${key}`)).status).toBe(200);
    expect((await send(handle, 'DELETE', `${B}/`)).status).toBe(200);
    expect((await send(handle, 'PUT', `${B}/`)).status).toBe(200);
    const again = await store.getBucket('old');
    expect(again?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(again?.id).not.toBe(bucket!.id);
    store.close();
  });
});

/** A version-2 database: bucket identities, no `usage-exact` store; two accounts with their figures. */
async function versionTwoDatabase(factory: IDBFactory, name: string): Promise<void> {
  const open = factory.open(name, 2);
  open.onupgradeneeded = () => {
    const db = open.result;
    const accounts = db.createObjectStore('accounts', { keyPath: 'accessKeyId' });
    accounts.add({ accessKeyId: 'svcadmin', secret: 'svcadmin-secret', displayName: 'svcadmin', usedBytes: 0, root: true });
    accounts.add({ accessKeyId: 'alice', secret: 'alice-secret', displayName: 'alice', usedBytes: 5, quotaBytes: 8 });
    db.createObjectStore('buckets', { keyPath: 'name' })
      .add({ name: 'old', id: '00000000-0000-4000-8000-000000000001', owner: 'alice', acl: 'private', created: 1_700_000_000_000, nextVersionId: 1 });
    db.createObjectStore('objects', { keyPath: ['bucket', 'key'] }).add({
      bucket: 'old', key: 'kept.txt', size: 5, etag: '5d41402abc4b2a76b9719d911017c592', lastModified: 1_700_000_000_000,
      chunks: [{ id: 'body-1', size: 5 }], contentType: 'text/plain', headers: {}, meta: [],
    });
    db.createObjectStore('versions', { keyPath: ['bucket', 'key', 'versionId'] });
    db.createObjectStore('bodies', { keyPath: 'id' }).add({ id: 'body-1', blob: new Blob(['hello']) });
    db.createObjectStore('uploads', { keyPath: 'uploadId' }).createIndex('byBucketKey', ['bucket', 'key', 'uploadId']);
    db.createObjectStore('parts', { keyPath: ['uploadId', 'partNumber'] });
  };
  const db = await request(open);
  db.close();
}

describe('upgrading a version-2 database to usage markers', () => {
  it('marks every account\'s stored figure exact; the figures and quota checks go on from them', async () => {
    const factory = new IDBFactory();
    const name = 'swbucket-v2';
    await versionTwoDatabase(factory, name);
    const store = await openIdbStore({ indexedDB: factory, name });
    const db = await (store as unknown as { db(): Promise<import('idb').IDBPDatabase> }).db();
    expect(db.version).toBe(8); // every step, through the replicas' stores
    expect([...db.objectStoreNames]).toContain('usage-exact');
    expect((await db.getAllKeys('usage-exact')).sort()).toEqual(['alice', 'svcadmin']);

    const accounts = await store.listAccounts();
    expect(Object.fromEntries(accounts.map((a) => [a.accessKeyId, a.usedBytes]))).toEqual({ svcadmin: 0, alice: 5 });
    const handle = createHandler({ store });
    const alice = { accessKeyId: 'alice', secret: 'alice-secret' };
    const b = 'http://old.svc.localhost';
    // 5 of 8 used: 3 bytes fit, a 4th does not.
    expect((await send(handle, 'PUT', `${b}/four`, { auth: alice, body: 'four' })).status).toBe(403);
    expect((await send(handle, 'PUT', `${b}/three`, { auth: alice, body: 'abc' })).status).toBe(200);
    expect(((await db.get('accounts', 'alice')) as { usedBytes: number }).usedBytes).toBe(8);
    // A new account gets its marker when created.
    const made = await send(handle, 'PUT', 'http://svc.localhost/?account=carol', {
      body: '<Account><SecretAccessKey>carol-secret</SecretAccessKey><DisplayName>carol</DisplayName></Account>',
    });
    expect(made.status, made.text).toBe(200);
    expect(await db.get('usage-exact', 'carol')).toEqual({ accessKeyId: 'carol' });
    store.close();
  });
});
