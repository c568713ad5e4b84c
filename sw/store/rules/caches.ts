// What the store remembers between requests, so that a request's checks cost no read.
//
// Accounts and buckets are read on every request (who is calling, who owns the bucket), and what
// access depends on (secret, owner, ACL, versioning, existence) changes only through the writes
// that go through accessWrite() (store.ts), which drop these before and after they commit, as does
// the engine closing; `generation` keeps a read that raced one of them from refilling the cache.
// Other writes update only counters (usedBytes, nextVersionId), which they read inside their own
// step, never from here.
//
// Uploads in progress, by id, as Upload Part and Complete look them up before reading a body: a
// record never changes while the upload exists, and the write re-checks it in its step, so an
// entry that outlived its upload (ended by another runtime) answers nothing wrong; this runtime's
// Complete and Abort drop theirs.
//
// The body id each recently written or read key had: getObject() reads that body together with the
// object's record, and uses it only when the record still names it, so a stale entry costs one
// needless read, never a wrong answer.
import type { Account, BucketRecord, BucketRef, UploadRecord } from '../types.ts';

/** Entries a map holds before it is cleared (keys are up to 1 KiB). */
const MAX_ENTRIES = 1000;

export class Caches {
  readonly accounts = new Map<string, Account | undefined>();
  readonly buckets = new Map<string, BucketRecord | undefined>();
  private readonly uploads = new Map<string, UploadRecord>();
  private readonly bodies = new Map<string, string>();
  private generation = 0;

  drop(): void {
    this.generation++;
    this.accounts.clear();
    this.buckets.clear();
    this.uploads.clear();
  }

  account(accessKeyId: string, read: () => Promise<Account | undefined>): Promise<Account | undefined> {
    return this.cached(this.accounts, accessKeyId, read);
  }

  bucket(name: string, read: () => Promise<BucketRecord | undefined>): Promise<BucketRecord | undefined> {
    return this.cached(this.buckets, name, read);
  }

  /** An upload in progress; one not found is not remembered. */
  async upload(uploadId: string, read: () => Promise<UploadRecord | undefined>): Promise<UploadRecord | undefined> {
    const known = this.uploads.get(uploadId);
    if (known) return known;
    const at = this.generation;
    const upload = await read();
    if (upload && at === this.generation) this.put(this.uploads, uploadId, upload);
    return upload;
  }

  forgetUpload(uploadId: string): void {
    this.uploads.delete(uploadId);
  }

  hintOf(ref: BucketRef, key: string): string | undefined {
    return this.bodies.get(`${ref.id}\u0000${key}`);
  }

  hint(ref: BucketRef, key: string, bodyId: string): void {
    this.put(this.bodies, `${ref.id}\u0000${key}`, bodyId);
  }

  private put<V>(map: Map<string, V>, key: string, value: V): void {
    if (map.size >= MAX_ENTRIES) map.clear();
    map.set(key, value);
  }

  private async cached<T>(cache: Map<string, T>, key: string, read: () => Promise<T>): Promise<T> {
    if (cache.has(key)) return cache.get(key) as T;
    const at = this.generation;
    const value = await read();
    if (at === this.generation) this.put(cache, key, value);
    return value;
  }
}
