// Walking a bucket's records in key order for the listings: batches of records read by range, fed
// to the page rules (listing.ts), which say when a page is full and which keys fold into a common
// prefix — a whole group of them is skipped with a new range read from past it.
import { range, type Range, type Read, type Table } from '../engine/types.ts';
import { OBJECTS, VERSIONS } from '../schema.ts';
import { ObjectsPage, VersionsPage } from '../listing.ts';
import type { ListObjectsOptions, ListObjectsResult, ListObjectVersionsOptions, ObjectRecord, VersionEntry } from '../types.ts';

/** Records read per range read of a walk. */
const BATCH = 1000;

/** A cursor over a range that reads its records a batch at a time, in key order. */
class Walk<V> {
  private batch: V[] = [];
  private at = 0;
  private ended = false;

  constructor(private readonly table: Table<V>, private range: Range, private readonly size = BATCH) {}

  /** The next record, read when the batch in hand is used up; undefined at the end. */
  *peek(): Generator<Read, V | undefined, unknown> {
    if (this.at < this.batch.length) return this.batch[this.at];
    if (this.ended) return undefined;
    this.batch = yield* range(this.table, this.range, { limit: this.size });
    this.at = 0;
    this.ended = this.batch.length < this.size;
    const last = this.batch[this.batch.length - 1];
    if (last) this.range = { ...this.range, start: this.table.key!(last), startOpen: true };
    return this.batch[0];
  }

  next(): void {
    this.at++;
  }

  /** Goes on from `start` (a key past those in hand), dropping the rest of the batch. */
  seek(start: Range['start']): void {
    this.range = { ...this.range, start, startOpen: false };
    this.batch = [];
    this.at = 0;
    this.ended = false;
  }
}

export function* listObjects(bucket: string, o: ListObjectsOptions): Generator<Read, ListObjectsResult, unknown> {
  const page = new ObjectsPage(o);
  const walk = new Walk(OBJECTS, { prefix: [bucket], start: [bucket, page.from], startOpen: page.exclusive }, Math.min(BATCH, o.maxKeys + 1));
  for (;;) {
    const object = yield* walk.peek();
    if (!object) break;
    const step = page.add(object);
    if (step === 'done') break;
    walk.next();
    // Skip the rest of a common prefix's group: a new read from past it.
    const past = step && `${step.skipGroup}\uffff`;
    if (past && past > object.key) walk.seek([bucket, past]);
  }
  return page.result();
}

/** Every version, by key, newest first within a key: a key's current object and its history walked together. */
export function* listVersions(bucket: string, o: ListObjectVersionsOptions): Generator<Read, { versions: VersionEntry[]; truncated: boolean }, unknown> {
  const page = new VersionsPage(o);
  const { start, skipStart } = page;
  const objects = new Walk(OBJECTS, { prefix: [bucket], start: [bucket, start], startOpen: skipStart });
  // Past every version of `start` when it is skipped (versionIds are far below MAX_SAFE_INTEGER).
  const history = new Walk(VERSIONS, { prefix: [bucket], start: [bucket, start, skipStart ? Number.MAX_SAFE_INTEGER : 0], startOpen: skipStart });
  for (;;) {
    const [current, older] = [yield* objects.peek(), yield* history.peek()];
    const keys = [current?.key, older?.key].filter((k): k is string => k !== undefined);
    if (keys.length === 0) break;
    const key = keys.reduce((a, b) => (b < a ? b : a));
    if (page.past(key)) break;
    let latest: ObjectRecord | undefined;
    if (current?.key === key) {
      latest = current;
      objects.next();
    }
    const earlier: ObjectRecord[] = [];
    for (let v = older; v?.key === key; v = yield* history.peek()) {
      earlier.push(v);
      history.next();
    }
    if (page.addKey(key, latest, earlier)) break;
  }
  return page.result();
}
