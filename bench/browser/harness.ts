// The in-page half of the benchmarks, bundled by esbuild and injected into every page as
// `window.__bench`. Each step times itself with performance.now() inside the page, so Playwright's
// round trip is never part of a figure. Steps throw on any unexpected status or size.
//
// Sides (which one a page can run depends on the page):
//   sw    — swbucket's worker, through the page's typed client (window.swbucket.client), signed as root
//   floor — the floor worker (bench/browser/floor-sw.ts) with plain fetch
//   store — the storage floor worker (bench/browser/storage-floor-sw.ts) with plain fetch
//   idb   — raw IndexedDB from a page no worker controls
//   s3    — s3rver over HTTP on loopback (CORS), unsigned, from a page no worker controls
import { fill } from './fill.ts';

type Side = 'sw' | 'floor' | 'store' | 'idb' | 's3';

interface SwClient {
  putObject(b: string, k: string, body: Blob, o?: { checksum?: boolean }): Promise<{ etag: string }>;
  getObject(b: string, k: string, o?: { range?: { start: number; end?: number } | { suffix: number } }): Promise<{ response: Response; status: number }>;
  createBucket(b: string): Promise<void>;
  headBucket(b: string): Promise<boolean>;
  listObjects(b: string, o?: { prefix?: string; marker?: string; maxKeys?: number }): Promise<{ objects: { key: string }[]; isTruncated: boolean; nextMarker?: string }>;
  deleteObjects(b: string, keys: string[], o?: { quiet?: boolean }): Promise<{ deleted: unknown[]; errors: unknown[] }>;
  moveObject(b: string, from: string, to: string): Promise<unknown>;
  createMultipartUpload(b: string, k: string): Promise<string>;
  uploadPart(b: string, k: string, id: string, n: number, body: Blob, o?: { checksum?: boolean }): Promise<{ etag: string }>;
  completeMultipartUpload(b: string, k: string, id: string, parts: { partNumber: number; etag: string }[]): Promise<{ etag: string }>;
  abortMultipartUpload(b: string, k: string, id: string): Promise<void>;
  listParts(b: string, k: string, id: string, o?: { partNumberMarker?: number; maxParts?: number }): Promise<{ parts: unknown[]; isTruncated: boolean; nextPartNumberMarker: number }>;
  exportArchive(o?: { buckets?: string[] }): Promise<{ body: ReadableStream<Uint8Array>; objects: number; objectBytes: number }>;
  importArchive(archive: Blob, o?: { conflict?: 'fail' | 'skip' | 'overwrite'; checksum?: boolean }): Promise<{ objectsRestored: number; bytesRestored: number }>;
}

const blobs = new Map<string, Blob>();
let s3Base = '';

const client = (): SwClient => (window as unknown as { swbucket: { client: SwClient } }).swbucket.client;
const svcUrl = (bucket: string, key: string) => `http://${bucket}.svc.localhost/${key}`;
const blob = (id: string): Blob => blobs.get(id) ?? fail(`no blob ${id}`);

function fail(message: string): never {
  throw new Error(message);
}

async function ok(r: Response, what: string): Promise<Response> {
  if (!r.ok) fail(`${what}: ${r.status} ${(await r.text()).slice(0, 300)}`);
  return r;
}

// ---- raw IndexedDB: one object store of { id, blob }, each write one strict readwrite transaction
// (the durability swbucket's writes use), each read one readonly transaction.

let rawDb: Promise<IDBDatabase> | null = null;
function idb(): Promise<IDBDatabase> {
  rawDb ??= new Promise((resolve, reject) => {
    const open = indexedDB.open('bench-raw', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('bodies', { keyPath: 'id' });
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  return rawDb;
}
function done(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error('aborted'));
  });
}
async function idbPut(key: string, body: Blob, durability: IDBTransactionDurability = 'strict'): Promise<void> {
  const tx = (await idb()).transaction('bodies', 'readwrite', { durability });
  tx.objectStore('bodies').put({ id: key, blob: body });
  await done(tx);
}
async function idbGet(key: string): Promise<Blob> {
  const tx = (await idb()).transaction('bodies', 'readonly');
  const req = tx.objectStore('bodies').get(key);
  await done(tx);
  return (req.result as { blob: Blob } | undefined)?.blob ?? fail(`idb: no ${key}`);
}

// ---- one PUT and one GET per side

async function putOnce(side: Side, bucket: string, key: string, body: Blob): Promise<void> {
  switch (side) {
    case 'sw':
      // No Content-MD5: that hash is the client's cost, not the worker's (the worker still hashes for the ETag).
      await client().putObject(bucket, key, body, { checksum: false });
      return;
    case 'floor':
    case 'store':
      await ok(await fetch(svcUrl(bucket, key), { method: 'PUT', body }), `${side} PUT`);
      return;
    case 'idb':
      await idbPut(`${bucket}/${key}`, body);
      return;
    case 's3':
      await (await ok(await fetch(`${s3Base}/${bucket}/${key}`, { method: 'PUT', body }), 's3 PUT')).arrayBuffer();
  }
}

/**
 * A GET ends with every byte of the object in the page: response.blob() for the HTTP sides (the
 * client's advice for large objects; the bytes are streamed out of the worker into a new Blob),
 * and for raw IndexedDB the stored Blob read whole with arrayBuffer() (a stored Blob is only a
 * file reference: handing it over, even as new Response(blob).blob(), reads no byte).
 */
async function getOnce(side: Side, bucket: string, key: string): Promise<number> {
  switch (side) {
    case 'sw':
      return (await (await client().getObject(bucket, key)).response.blob()).size;
    case 'floor':
    case 'store':
      return (await (await ok(await fetch(svcUrl(bucket, key)), `${side} GET`)).blob()).size;
    case 'idb':
      return (await (await idbGet(`${bucket}/${key}`)).arrayBuffer()).byteLength;
    case 's3':
      return (await (await ok(await fetch(`${s3Base}/${bucket}/${key}`), 's3 GET')).blob()).size;
  }
}

/** Runs `n` steps with at most `concurrency` in flight. */
async function pool(n: number, concurrency: number, step: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(n, concurrency) }, async () => {
    while (next < n) await step(next++);
  });
  await Promise.all(lanes);
}

const bench = {
  setS3Base(url: string) {
    s3Base = url;
  },

  makeBlob(id: string, size: number, seed: number): number {
    blobs.set(id, new Blob([fill(size, seed)]));
    return size;
  },
  dropBlob(id: string) {
    blobs.delete(id);
  },

  async ensureBucket(side: Side, bucket: string): Promise<void> {
    if (side === 'sw' && !(await client().headBucket(bucket))) await client().createBucket(bucket);
  },

  /** `n` PUTs of the blob to keys prefix0..prefix{n-1}, `concurrency` at a time; total ms. */
  async put(side: Side, bucket: string, prefix: string, blobId: string, n = 1, concurrency = 1): Promise<number> {
    const body = blob(blobId);
    const t0 = performance.now();
    await pool(n, concurrency, (i) => putOnce(side, bucket, `${prefix}${i}`, body));
    return performance.now() - t0;
  },

  /** `n` GETs of prefix0..prefix{n-1}, each checked for `size` bytes; total ms. */
  async get(side: Side, bucket: string, prefix: string, size: number, n = 1): Promise<number> {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const got = await getOnce(side, bucket, `${prefix}${i}`);
      if (got !== size) fail(`${side} GET ${prefix}${i}: ${got} bytes, expected ${size}`);
    }
    return performance.now() - t0;
  },

  /** One raw IndexedDB put of the blob with the given durability; ms (diagnostics). */
  async idbPutDurability(key: string, blobId: string, durability: IDBTransactionDurability): Promise<number> {
    const t0 = performance.now();
    await idbPut(key, blob(blobId), durability);
    return performance.now() - t0;
  },

  /**
   * One GET split in three (diagnostics): signing (swbucket only), until the response headers
   * arrive, and reading the body after them; ms each.
   */
  async getSplit(side: 'sw' | 'floor', bucket: string, key: string): Promise<{ sign: number; headers: number; body: number }> {
    let t = performance.now();
    let url = svcUrl(bucket, key);
    const headers: Record<string, string> = {};
    if (side === 'sw') {
      const signed = await (client() as unknown as { explainSignature(m: string, b: string, k: string): Promise<{ url: string; authorization: string; date: string }> })
        .explainSignature('GET', bucket, key);
      url = signed.url;
      headers.authorization = signed.authorization;
      headers['x-svc-date'] = signed.date;
    }
    const sign = performance.now() - t;
    t = performance.now();
    const r = await ok(await fetch(url, { headers }), 'getSplit');
    const head = performance.now() - t;
    t = performance.now();
    await r.blob();
    return { sign, headers: head, body: performance.now() - t };
  },

  /** One GET of exactly `key`, checked for `size` bytes; ms. */
  async getKey(side: Side, bucket: string, key: string, size: number): Promise<number> {
    const t0 = performance.now();
    const got = await getOnce(side, bucket, key);
    if (got !== size) fail(`${side} GET ${key}: ${got} bytes, expected ${size}`);
    return performance.now() - t0;
  },

  /** `n` GETs of bytes start..end (inclusive) of one object, each checked for length; total ms (figure 10). */
  async rangeN(bucket: string, key: string, start: number, end: number, n: number): Promise<number> {
    let ms = 0;
    for (let i = 0; i < n; i++) ms += await bench.range(bucket, key, start, end);
    return ms;
  },

  /**
   * A PUT of the blob to the worker's hello URL on this page's origin (/__swbucket), which
   * swbucket's worker answers with its hello without reading the body: what sending a body to a
   * service worker costs the browser by itself (figure 10, memory); ms.
   */
  async putUnread(blobId: string): Promise<number> {
    const t0 = performance.now();
    const r = await ok(await fetch(new URL('/__swbucket', location.href).href, { method: 'PUT', body: blob(blobId) }), 'PUT /__swbucket');
    const hello = (await r.json()) as { swbucket?: unknown };
    if (typeof hello.swbucket !== 'string') fail('PUT /__swbucket: not the worker\'s hello');
    return performance.now() - t0;
  },

  /**
   * PUTs of the same `size` bytes to `prefix{i}` given to fetch() as a Blob and as a Uint8Array,
   * `n` of each, alternating; median ms of each (figure 11, on the floor worker's page: what the
   * browser itself costs to hand a service worker a body that is not a Blob, as the AWS SDK sends
   * bytes and strings).
   */
  async putBodyForms(prefix: string, size: number, n: number): Promise<{ blob: number; bytes: number }> {
    const bytes = fill(size, 11);
    const forms = { blob: new Blob([bytes]), bytes } as const;
    const ms = { blob: [] as number[], bytes: [] as number[] };
    for (let i = 0; i < n; i++) {
      for (const form of ['blob', 'bytes'] as const) {
        const t0 = performance.now();
        await (await ok(await fetch(`${prefix}${form}-${i}`, { method: 'PUT', body: forms[form] }), `PUT ${form}`)).arrayBuffer();
        ms[form].push(performance.now() - t0);
      }
    }
    const med = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
    return { blob: med(ms.blob), bytes: med(ms.bytes) };
  },

  /** A PUT of the blob to any URL (figure 10, memory: a plain HTTP server, no worker); ms. */
  async putTo(url: string, blobId: string): Promise<number> {
    const t0 = performance.now();
    await (await ok(await fetch(url, { method: 'PUT', body: blob(blobId) }), `PUT ${url}`)).arrayBuffer();
    return performance.now() - t0;
  },

  /**
   * `n` signatures of a PUT by the page's client (HMAC-SHA256 through WebCrypto), one after another;
   * ms per signature (timed together: Firefox and WebKit give performance.now() in whole ms). Figure 10.
   */
  async signN(bucket: string, key: string, n: number): Promise<number> {
    const c = client() as unknown as { explainSignature(m: string, b: string, k: string): Promise<unknown> };
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await c.explainSignature('PUT', bucket, key);
    return (performance.now() - t0) / n;
  },

  /** How the page's swbucket worker keeps bodies ('blobs' or 'pieces'), and its script URL. */
  swInfo(): { bodies: string | null; scriptUrl: string } {
    const s = (window as unknown as { swbucket: { storage: { bodies: string | null }; scriptUrl: string } }).swbucket;
    return { bodies: s.storage.bodies, scriptUrl: s.scriptUrl };
  },

  /** How the storage floor worker controlling this page (at /storage-floor/…) keeps bodies: 'blob' or 'bytes'. */
  async floorForm(): Promise<string> {
    const r = await ok(await fetch(new URL('__form', location.href).href), 'floor form');
    return ((await r.json()) as { form: string }).form;
  },

  /** Deletes keys on the swbucket side (clean-up, not timed). */
  async removeKeys(bucket: string, keys: string[]): Promise<void> {
    const r = await client().deleteObjects(bucket, keys, { quiet: true });
    if (r.errors.length) fail(`remove: ${r.errors.length} errors`);
  },

  /** List every key under prefix (pages of 1000); ms and the count. */
  async list(side: Side, bucket: string, prefix: string): Promise<{ ms: number; count: number }> {
    const t0 = performance.now();
    let count = 0;
    if (side === 'sw') {
      let marker: string | undefined;
      for (;;) {
        const page = await client().listObjects(bucket, { prefix, maxKeys: 1000, ...(marker !== undefined ? { marker } : {}) });
        count += page.objects.length;
        if (!page.isTruncated) break;
        marker = page.nextMarker ?? page.objects.at(-1)?.key;
      }
    } else if (side === 's3') {
      let marker = '';
      for (;;) {
        const q = new URLSearchParams({ prefix, 'max-keys': '1000', marker });
        const text = await (await ok(await fetch(`${s3Base}/${bucket}?${q}`), 's3 list')).text();
        const keys = [...text.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!);
        count += keys.length;
        if (!text.includes('<IsTruncated>true</IsTruncated>') || keys.length === 0) break;
        marker = keys.at(-1)!;
      }
    } else fail(`list on ${side}`);
    return { ms: performance.now() - t0, count };
  },

  /** One Delete Multiple of prefix0..prefix{n-1} (quiet); ms. */
  async deleteMany(side: Side, bucket: string, prefix: string, n: number): Promise<number> {
    const keys = Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    const t0 = performance.now();
    if (side === 'sw') {
      const r = await client().deleteObjects(bucket, keys, { quiet: true });
      if (r.errors.length) fail(`sw delete: ${r.errors.length} errors`);
    } else if (side === 's3') {
      const body = `<?xml version="1.0" encoding="UTF-8"?><Delete><Quiet>true</Quiet>${keys.map((k) => `<Object><Key>${k}</Key></Object>`).join('')}</Delete>`;
      await (await ok(await fetch(`${s3Base}/${bucket}?delete`, { method: 'POST', body: new Blob([body]) }), 's3 delete')).text();
    } else fail(`deleteMany on ${side}`);
    return performance.now() - t0;
  },

  // ---- swbucket only: multipart, move, range

  /** Initiates an upload and sends the blob as parts of `partSize`, `concurrency` at a time. */
  async uploadParts(bucket: string, key: string, blobId: string, partSize: number, concurrency: number) {
    const body = blob(blobId);
    const uploadId = await client().createMultipartUpload(bucket, key);
    const count = Math.ceil(body.size / partSize);
    const etags: string[] = new Array(count);
    const t0 = performance.now();
    await pool(count, concurrency, async (i) => {
      const part = body.slice(i * partSize, Math.min(body.size, (i + 1) * partSize));
      etags[i] = (await client().uploadPart(bucket, key, uploadId, i + 1, part, { checksum: false })).etag;
    });
    return { uploadId, etags, ms: performance.now() - t0 };
  },

  /**
   * Initiates an upload (not timed), then sends the blob whole as each of parts 1..count,
   * `concurrency` at a time (the Upload Part twin of `put` with n and concurrency); ms for the parts.
   */
  async uploadPartsOf(bucket: string, key: string, blobId: string, count: number, concurrency: number): Promise<{ uploadId: string; ms: number }> {
    const body = blob(blobId);
    const uploadId = await client().createMultipartUpload(bucket, key);
    const t0 = performance.now();
    await pool(count, concurrency, async (i) => {
      await client().uploadPart(bucket, key, uploadId, i + 1, body, { checksum: false });
    });
    return { uploadId, ms: performance.now() - t0 };
  },

  /** Many tiny parts (one blob for each), for listing. */
  async uploadTinyParts(bucket: string, key: string, count: number, concurrency: number): Promise<string> {
    const uploadId = await client().createMultipartUpload(bucket, key);
    const body = new Blob(['x']);
    await pool(count, concurrency, async (i) => {
      await client().uploadPart(bucket, key, uploadId, i + 1, body, { checksum: false });
    });
    return uploadId;
  },

  async complete(bucket: string, key: string, uploadId: string, etags: string[]): Promise<number> {
    const parts = etags.map((etag, i) => ({ partNumber: i + 1, etag }));
    const t0 = performance.now();
    await client().completeMultipartUpload(bucket, key, uploadId, parts);
    return performance.now() - t0;
  },

  async abort(bucket: string, key: string, uploadId: string): Promise<void> {
    await client().abortMultipartUpload(bucket, key, uploadId);
  },

  /** Every part of an upload, following the part-number marker; ms and the count. */
  async listAllParts(bucket: string, key: string, uploadId: string, maxPages = Infinity): Promise<{ ms: number; count: number }> {
    const t0 = performance.now();
    let count = 0;
    let marker = 0;
    for (let pages = 0; pages < maxPages; pages++) {
      const page = await client().listParts(bucket, key, uploadId, { partNumberMarker: marker, maxParts: 1000 });
      count += page.parts.length;
      if (!page.isTruncated) break;
      marker = page.nextPartNumberMarker;
    }
    return { ms: performance.now() - t0, count };
  },

  async move(bucket: string, from: string, to: string): Promise<number> {
    const t0 = performance.now();
    await client().moveObject(bucket, from, to);
    return performance.now() - t0;
  },

  /** GET of bytes start..end (inclusive), checked for length; ms. */
  async range(bucket: string, key: string, start: number, end: number): Promise<number> {
    const t0 = performance.now();
    const g = await client().getObject(bucket, key, { range: { start, end } });
    const size = (await g.response.blob()).size;
    const ms = performance.now() - t0;
    if (g.status !== 206 || size !== end - start + 1) fail(`range ${key}: status ${g.status}, ${size} bytes`);
    return ms;
  },

  // ---- archives (swbucket only)

  /** Exports `bucket` into a Blob kept as `blobId` (as a download would: every byte read into the page); ms. */
  async exportBucket(bucket: string, blobId: string): Promise<{ ms: number; bytes: number; objectBytes: number }> {
    const t0 = performance.now();
    const archive = await client().exportArchive({ buckets: [bucket] });
    const file = await new Response(archive.body).blob();
    const ms = performance.now() - t0;
    blobs.set(blobId, file);
    return { ms, bytes: file.size, objectBytes: archive.objectBytes };
  },

  /** Imports the archive kept as `blobId`, replacing what it holds (with Content-MD5 unless `checksum` is false); ms. */
  async importBlob(blobId: string, expectedBytes: number, checksum = true): Promise<number> {
    const t0 = performance.now();
    const r = await client().importArchive(blob(blobId), { conflict: 'overwrite', checksum });
    const ms = performance.now() - t0;
    if (r.bytesRestored !== expectedBytes) fail(`import restored ${r.bytesRestored} bytes, expected ${expectedBytes}`);
    return ms;
  },

  // ---- MD5 in a dedicated worker (bench/browser/md5-worker.ts)

  md5Worker: null as Worker | null,
  md5(size: number, seed: number, chunk: number): Promise<{ ms: number; digest: string; engine: string }> {
    bench.md5Worker ??= new Worker('/md5-worker.js');
    const w = bench.md5Worker;
    return new Promise((resolve, reject) => {
      w.onmessage = (e) => (e.data.error ? reject(new Error(e.data.error)) : resolve(e.data));
      w.onerror = (e) => reject(new Error(e.message));
      w.postMessage({ size, seed, chunk });
    });
  },
};

(window as unknown as { __bench: typeof bench }).__bench = bench;
