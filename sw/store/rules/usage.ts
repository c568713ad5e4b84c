// Usage and quotas: an account's usedBytes is what its buckets hold (current objects, historical
// versions, uploaded parts), and each write charges the bucket owner inside its own step, before
// it writes anything, so a write over the quota changes nothing.
//
// The figure is exact while the account's `usage-exact` marker exists. A full browser origin
// refuses any transaction that puts a record — even a delete's, for the new figure — so a write
// that only frees bytes and is refused runs once more "forgetting": it deletes the marker instead
// of putting the figure (store.ts, freeing()). Whoever reads a figure without its marker sums it
// afresh from the records (exactUsage), and the next charge stores it and the marker back.
import { all, getRead, range, rangeRead, type Read, type Writes } from '../engine/types.ts';
import { ACCOUNTS, BUCKETS, OBJECTS, PARTS, UPLOAD_KEYS, USAGE_EXACT, VERSIONS } from '../schema.ts';
import type { Account, BucketRecord } from '../types.ts';

/** A write step as the rules see it: its writes, and what the usage rules need to know. */
export interface WriteStep {
  w: Writes;
  /** This step runs again after the engine found no room: it drops markers instead of figures. */
  forgetting: boolean;
  /** The owner's account and marker, read with the bucket as the step began: used by the first charge. */
  ahead?: { owner: string; account: Account | undefined; exact: boolean };
}

/** An account's usage summed from the records, as the writes charge it. */
export function* exactUsage(owner: string): Generator<Read, number, unknown> {
  const buckets = (yield* range(BUCKETS, { prefix: [] })).filter((b) => b.owner === owner);
  let sum = 0;
  for (const bucket of buckets) {
    const [objects, versions, uploads] = yield* all(
      rangeRead(OBJECTS, { prefix: [bucket.name] }),
      rangeRead(VERSIONS, { prefix: [bucket.name] }),
      rangeRead(UPLOAD_KEYS, { prefix: [bucket.name] }),
    );
    for (const o of [...objects, ...versions]) sum += o.size;
    const parts = yield* all(...uploads.map((u) => rangeRead(PARTS, { prefix: [u.uploadId] })));
    for (const p of parts.flat()) sum += p.size;
  }
  return sum;
}

/** The account's usage: its stored figure when `exact` (its marker exists), else summed afresh. */
export function* usageOf(account: Account, exact: boolean): Generator<Read, number, unknown> {
  return exact ? account.usedBytes : yield* exactUsage(account.accessKeyId);
}

/**
 * Adds `delta` bytes to the bucket owner's usage. Refuses (before any write) a growth past the
 * quota; shrinking is always allowed. A figure without its marker is summed first, and stored
 * with its marker again.
 */
export function* charge(step: WriteStep, bucket: BucketRecord, delta: number): Generator<Read, boolean, unknown> {
  if (delta === 0) return true;
  if (step.forgetting) {
    if (delta > 0) throw new Error('a freeing write never grows usage');
    step.w.delete(USAGE_EXACT, [bucket.owner]);
    return true;
  }
  // The figure read ahead (with the bucket), or the one the step's last charge left.
  const ahead = step.ahead?.owner === bucket.owner ? step.ahead : undefined;
  step.ahead = undefined;
  let account: Account | undefined;
  let exact: boolean;
  if (ahead) ({ account, exact } = ahead);
  else {
    const [a, marker] = yield* all(getRead(ACCOUNTS, [bucket.owner]), getRead(USAGE_EXACT, [bucket.owner]));
    account = a;
    exact = marker !== undefined;
  }
  if (!account) return true;
  const used = (yield* usageOf(account, exact)) + delta;
  if (delta > 0 && account.quotaBytes !== undefined && used > account.quotaBytes) return false;
  const charged = { ...account, usedBytes: Math.max(0, used) };
  step.w.put(ACCOUNTS, charged);
  if (!exact) step.w.put(USAGE_EXACT, { accessKeyId: account.accessKeyId });
  // The step's next charge starts from this figure, as a read would find it, without the read.
  step.ahead = { owner: bucket.owner, account: charged, exact: true };
  return true;
}
