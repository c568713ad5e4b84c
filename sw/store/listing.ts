// The listing rules both stores share (docs/protocol.md, "Listing" and "Versioning"): which records
// a page shows, where it starts after its markers, how keys fold into common prefixes, and when it
// is truncated. Each store walks its own records in key order and hands them here, so the rules
// are written once; only the walking (IndexedDB cursors, LMDB ranges) is the store's own.
import type { ListEntry, ListObjectsOptions, ListObjectsResult, ListObjectVersionsOptions, ObjectRecord, VersionEntry } from './types.ts';

/** A ListObjects page, built from the bucket's objects offered in key order. */
export class ObjectsPage {
  readonly entries: ListEntry[] = [];
  truncated = false;
  private lastPrefix: string | undefined;
  /** Where the walk starts: after the marker or at the prefix, whichever is later. */
  readonly from: string;
  readonly exclusive: boolean;

  constructor(private readonly o: ListObjectsOptions) {
    this.exclusive = o.marker >= o.prefix;
    this.from = this.exclusive ? o.marker : o.prefix;
  }

  /**
   * Takes the next object in key order. 'done': the page is complete (full, or past the prefix);
   * `{ skipGroup }`: the object belongs to a common prefix, and the walk may skip every other key
   * that starts with it; undefined: go on with the next key.
   */
  add(object: ObjectRecord): 'done' | { skipGroup: string } | undefined {
    const o = this.o;
    const key = object.key;
    if (key <= o.marker) return undefined; // at or before the marker: listed on an earlier page
    if (!key.startsWith(o.prefix)) return 'done'; // sorted: past every key with the prefix
    const cut = o.delimiter ? key.indexOf(o.delimiter, o.prefix.length) : -1;
    if (cut >= 0) {
      const common = key.slice(0, cut + o.delimiter.length);
      // A common prefix at or before the marker was listed on an earlier page.
      if (common !== this.lastPrefix && common > o.marker) {
        if (this.full()) return 'done';
        this.entries.push({ kind: 'prefix', prefix: common });
      }
      this.lastPrefix = common;
      return { skipGroup: common };
    }
    if (this.full()) return 'done';
    this.entries.push({ kind: 'object', object });
    return undefined;
  }

  result(): ListObjectsResult {
    return { entries: this.entries, truncated: this.truncated };
  }

  private full(): boolean {
    if (this.entries.length < this.o.maxKeys) return false;
    this.truncated = true;
    return true;
  }
}

/**
 * A ListObjectVersions page, built key by key: keys come from two record sets (a key may have
 * history and no current object), which the store walks together in key order.
 */
export class VersionsPage {
  readonly versions: VersionEntry[] = [];
  truncated = false;
  /** Where the walk starts, and whether records of that very key are skipped. */
  readonly start: string;
  readonly skipStart: boolean;

  constructor(private readonly o: ListObjectVersionsOptions) {
    this.start = o.marker >= o.prefix ? o.marker : o.prefix;
    this.skipStart = o.marker >= o.prefix && o.marker !== '' && o.versionIdMarker === '';
  }

  /** True when `key` is past every key with the prefix: the walk is over. */
  past(key: string): boolean {
    return !key.startsWith(this.o.prefix);
  }

  /**
   * Takes one key's records: its current object, if any, then its history in stored order (oldest
   * first). Lists the current object, then the history newest first, from the version marker on.
   * True when the page is full.
   */
  addKey(key: string, current: ObjectRecord | undefined, history: ObjectRecord[]): boolean {
    const o = this.o;
    let forKey: VersionEntry[] = [
      ...(current ? [{ object: current, isLatest: true }] : []),
      ...[...history].reverse().map((object) => ({ object, isLatest: false })),
    ];
    if (key === o.marker && o.versionIdMarker !== '') {
      const at = forKey.findIndex((v) => String(v.object.versionId ?? 'null') === o.versionIdMarker);
      forKey = at >= 0 ? forKey.slice(at + 1)
        : forKey.filter((v) => v.object.versionId !== undefined && v.object.versionId < Number(o.versionIdMarker));
    }
    for (const v of forKey) {
      if (this.versions.length === o.maxKeys) {
        this.truncated = true;
        return true;
      }
      this.versions.push(v);
    }
    return false;
  }

  result(): { versions: VersionEntry[]; truncated: boolean } {
    return { versions: this.versions, truncated: this.truncated };
  }
}
