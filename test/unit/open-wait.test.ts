// A database the store cannot open because a deletion of it waits for another connection to close
// (another tab holding it open, as code of the app's own or an older swbucket might): the store's
// open gives up after openWaitMs with StoreUnavailableError, a request answers 503 saying what to
// close, and once the other connection closes the next request works — no request waits for ever.
// fake-indexeddb queues opens behind a blocked deletion as browsers do.
import { describe, it, expect } from 'vitest';
import { IDBFactory } from 'fake-indexeddb';
import { createHandler } from '../../sw/core/handler.ts';
import { openIdbStore } from '../../sw/store/idb.ts';
import { StoreUnavailableError } from '../../sw/store/errors.ts';
import { send } from '../support/service.ts';

/** A connection that, like code that opened the database itself, does not close when asked. */
function holdOpen(factory: IDBFactory, name: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const r = factory.open(name);
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

describe('opening the database behind a deletion held up by another connection', () => {
  it('the first open gives up after openWaitMs, saying what to close; once it closes, the store opens', async () => {
    const factory = new IDBFactory();
    const name = 'held-first';
    (await openIdbStore({ indexedDB: factory, name })).close();
    const holder = await holdOpen(factory, name);
    const deletion = factory.deleteDatabase(name); // blocked by the holder
    const t0 = performance.now();
    const refused = await openIdbStore({ indexedDB: factory, name, openWaitMs: 300 }).then(() => null, (e: unknown) => e);
    // It waited its time first (Node's timers may fire a fraction of a millisecond early).
    expect(performance.now() - t0).toBeGreaterThanOrEqual(295);
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect((refused as Error).message).toMatch(/could not be opened within 300 ms: a deletion or an upgrade of it is waiting for another connection to close .*Close the site's other tabs/);
    holder.close();
    await new Promise<void>((resolve) => (deletion.onsuccess = () => resolve()));
    const store = await openIdbStore({ indexedDB: factory, name, openWaitMs: 300 });
    expect(await store.listBuckets('svcadmin')).toEqual([]);
    store.close();
  });

  it('a request that needs the database reopened answers 503 ServiceUnavailable instead of waiting; the next one, once it is free, works', async () => {
    const factory = new IDBFactory();
    const name = 'held-reopen';
    const store = await openIdbStore({ indexedDB: factory, name, openWaitMs: 300 });
    const handle = createHandler({ store });
    expect((await send(handle, 'PUT', 'http://kept.svc.localhost/')).status).toBe(200);
    const holder = await holdOpen(factory, name);
    // The store's own connection closes on versionchange; the holder's does not: the deletion waits.
    const deletion = factory.deleteDatabase(name);
    const refused = await send(handle, 'GET', 'http://svc.localhost/');
    expect(refused.status).toBe(503);
    expect(refused.text).toMatch(/<Code>ServiceUnavailable<\/Code>/);
    expect(refused.text).toMatch(/could not be opened within 300 ms/);
    holder.close();
    await new Promise<void>((resolve) => (deletion.onsuccess = () => resolve()));
    // Deleted: the service starts again from an empty store.
    const again = await send(handle, 'GET', 'http://svc.localhost/');
    expect(again.status).toBe(200);
    expect(again.text).not.toMatch(/<Name>kept<\/Name>/);
  });
});
