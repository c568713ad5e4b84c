// Group commit in the IndexedDB store (sw/store/engine/idb.ts): strict writes that arrive while
// one is committing run together in one transaction. What must hold: each write's answer is its
// own (a refusal stays a refusal, for that write alone), a write that fails in the shared
// transaction fails alone (the others are run again and land), and the store stays sound.
import { describe, it, expect, vi, afterEach } from 'vitest';
import { IDBDatabase, IDBFactory, IDBObjectStore } from 'fake-indexeddb';
import { openIdbStore } from '../../sw/store/idb.ts';
import type { BucketRef, ObjectRecord, Store } from '../../sw/store/types.ts';
import { contents, integrity, SOUND } from '../support/stores.ts';
import { ROOT } from '../support/sign.ts';

const object = (key: string, size: number): Omit<ObjectRecord, 'bucket' | 'chunks' | 'versionId'> => ({
  key, size, etag: '0'.repeat(32), lastModified: 1_700_000_000_000, contentType: 'application/octet-stream', headers: {}, meta: [],
});
const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

async function storeWithBucket(name = 'grouped'): Promise<{ store: Store; ref: BucketRef }> {
  const store = await openIdbStore({ indexedDB: new IDBFactory(), name: 'group-commit' });
  expect(await store.createBucket({ name, owner: ROOT.accessKeyId, acl: 'private', created: 0, versioning: undefined, nextVersionId: 1 } as never)).toBe('ok');
  const bucket = (await store.getBucket(name))!;
  return { store, ref: { name: bucket.name, id: bucket.id } };
}

/** Counts the readwrite transactions the store opens. */
function countWriteTransactions(): { count: () => number } {
  const original = IDBDatabase.prototype.transaction;
  let n = 0;
  vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(function (this: IDBDatabase, ...args: Parameters<typeof original>) {
    if (args[1] === 'readwrite') n++;
    return original.apply(this, args);
  });
  return { count: () => n };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('group commit', () => {
  it('eight PUTs at once commit in fewer transactions than eight, each answered with its own object', async () => {
    const { store, ref } = await storeWithBucket();
    const tx = countWriteTransactions();
    const made = await Promise.all(Array.from({ length: 8 }, (_, i) => store.putObject(ref, object(`k${i}`, 100 + i), bytes(100 + i, i))));
    expect(made.map((m) => typeof m === 'object' && m.key)).toEqual(Array.from({ length: 8 }, (_, i) => `k${i}`));
    expect(tx.count()).toBeGreaterThan(0);
    expect(tx.count()).toBeLessThan(8);
    const c = await contents(store);
    expect(c.objects.map((o) => o.key).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `k${i}`));
    expect(integrity(c)).toEqual(SOUND);
  });

  it('one write over the quota in a group is refused alone; the others land', async () => {
    const { store, ref } = await storeWithBucket();
    await store.putAccount({ accessKeyId: ROOT.accessKeyId, secret: ROOT.secret, displayName: ROOT.accessKeyId, quotaBytes: 1000 });
    const sizes = [100, 100, 900, 100];
    const made = await Promise.all(sizes.map((n, i) => store.putObject(ref, object(`q${i}`, n), bytes(n, i))));
    // In arrival order: 100 + 100 fit, 900 more would pass 1000, the last 100 fits.
    expect(made.map((m) => (typeof m === 'object' ? 'ok' : m))).toEqual(['ok', 'ok', 'quotaExceeded', 'ok']);
    const c = await contents(store);
    expect(c.objects.map((o) => o.key).sort()).toEqual(['q0', 'q1', 'q3']);
    expect(c.accounts.find((a) => a.accessKeyId === ROOT.accessKeyId)?.usedBytes).toBe(300);
    expect(integrity(c)).toEqual(SOUND);
  });

  it('a write that fails inside the shared transaction fails alone; the others are run again and land', async () => {
    const { store, ref } = await storeWithBucket();
    // The body record of 'broken' (its bytes start with 0xee) is refused as IndexedDB refuses a
    // value it cannot store: that write must fail, and only that one.
    const put = IDBObjectStore.prototype.put;
    vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(function (this: IDBObjectStore, ...args: Parameters<typeof put>) {
      if ((args[0] as { bytes?: Uint8Array }).bytes?.[0] === 0xee) throw new DOMException('refused by the test', 'DataError');
      return put.apply(this, args);
    });
    const tx = countWriteTransactions();
    const results = await Promise.allSettled([
      store.putObject(ref, object('first', 10), bytes(10, 1)), // runs alone, opening the window
      store.putObject(ref, object('a', 10), bytes(10, 2)),
      store.putObject(ref, object('broken', 10), bytes(10, 0xee)),
      store.putObject(ref, object('b', 10), bytes(10, 3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[2] as PromiseRejectedResult).reason)).toMatch(/refused by the test/);
    // first alone, then the group of three (aborted), then each of the three again.
    expect(tx.count()).toBe(5);
    const c = await contents(store);
    expect(c.objects.map((o) => o.key).sort()).toEqual(['a', 'b', 'first']);
    expect(integrity(c)).toEqual(SOUND);
  });
});
