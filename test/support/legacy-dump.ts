// A database dumped by scripts/legacy-fixtures.ts (test/fixtures/legacy-idb-*.json.gz), made again
// as it was: its version, object stores, indexes and records, bytes and Blobs decoded from base64.
// One function for Node (fake-indexeddb, test/unit/legacy-data.test.ts) and for a page in every
// engine (test/browser/engine-legacy.test.ts sends its source): so it refers to nothing outside
// itself but what both have (atob, Blob, IndexedDB's objects).

export interface Dump {
  version: number;
  stores: { name: string; keyPath: string | string[] | null; indexes: { name: string; keyPath: string | string[] }[]; records: { key: unknown; value: unknown }[] }[];
}

export function restoreDump(factory: IDBFactory, name: string, dump: Dump): Promise<void> {
  const base64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  const decode = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(decode);
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.$blob === 'string') return new Blob([base64(o.$blob)]);
      if (typeof o.$bytes === 'string') return base64(o.$bytes);
      return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, decode(x)]));
    }
    return v;
  };
  return new Promise((resolve, reject) => {
    const req = factory.open(name, dump.version);
    req.onupgradeneeded = () => {
      for (const s of dump.stores) {
        const store = req.result.createObjectStore(s.name, s.keyPath === null ? {} : { keyPath: s.keyPath });
        for (const i of s.indexes) store.createIndex(i.name, i.keyPath);
        for (const r of s.records) {
          if (s.keyPath === null) store.put(decode(r.value), decode(r.key) as IDBValidKey);
          else store.put(decode(r.value));
        }
      }
    };
    req.onsuccess = () => {
      req.result.close();
      resolve();
    };
    req.onerror = () => reject(req.error);
  });
}
