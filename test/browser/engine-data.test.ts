// Data through the built worker, in the project's engine (Chromium, Firefox, WebKit with ephemeral
// storage — bodies as 256 KiB pieces — or WebKit with storage on disk): what the service reports the
// engine lacks, checked against what the engine does; no write acknowledged whose bytes were not all
// stored (sizes on both sides of the store's boundaries: 16 KiB inline, 256 KiB pieces, 1 MiB read
// whole; a body changed on the way refused by its Content-MD5; a PUT aborted by the page absent or
// whole); a 32 MiB object read whole and by ranges on the bucket host and the mount; a multipart
// object of three parts; the client's upload() (concurrent, aborted, resumed); copy, move, delete,
// export and import leaving every body whole and none behind; the account quota; data across a
// reload and a new page; two pages writing the same keys; deleteAllData. Every MD5 and SHA-256 a
// check relies on is computed in Node from the same pattern the page made
// (support/engine-data-helpers.ts), never by the service's or the client's own MD5 code.
import { describe, it, expect, beforeAll } from 'vitest';
import type { EnginePage } from './support/engines.ts';
import { useServicePage } from './support/fixture.ts';
import { openServicePage } from './support/page.ts';
import { KiB, MiB, md5hex, multipartEtag, pattern, run, sha256hex, waitStarted, type ReadResult } from './support/engine-data-helpers.ts';

const service = useServicePage();
const { name, baseURL } = service;
/** The fixture's page, until a test closes it for a new one. */
let page: EnginePage;
beforeAll(() => {
  page = service.page;
});

/** Checks a read of bytes [start, end] of pattern(seed, total) answered 206. */
function expectRange(r: ReadResult, all: Uint8Array, start: number, end: number, what: string) {
  expect(r.status, what).toBe(206);
  expect(r.headers['content-range'], what).toBe(`bytes ${start}-${end}/${all.length}`);
  expect(r.headers['content-length'], what).toBe(String(end - start + 1));
  expect(r.size, what).toBe(end - start + 1);
  const want = all.subarray(start, end + 1);
  if (r.bytes) expect(r.bytes, what).toEqual(Array.from(want));
  expect(r.sha256, what).toBe(sha256hex(want));
}

/** Checks a whole read of `all` answered 200 with the ETag `etag`. */
function expectWhole(r: ReadResult, all: Uint8Array, etag: string, what: string) {
  expect(r.status, what).toBe(200);
  expect(r.headers['content-length'], what).toBe(String(all.length));
  expect(r.headers.etag, what).toBe(`"${etag}"`);
  expect(r.size, what).toBe(all.length);
  expect(r.sha256, what).toBe(sha256hex(all));
}

/** What each engine is expected to report in service.storage (measured: see the first test). */
const EXPECTED_STORAGE: Record<string, { bodies: 'blobs' | 'pieces'; canAskToPersist: boolean; streamedUploads: boolean; streamedRequestBodies: boolean }> = {
  chromium: { bodies: 'blobs', canAskToPersist: true, streamedUploads: true, streamedRequestBodies: true },
  firefox: { bodies: 'blobs', canAskToPersist: true, streamedUploads: false, streamedRequestBodies: false },
  webkit: { bodies: 'pieces', canAskToPersist: false, streamedUploads: false, streamedRequestBodies: true },
  'webkit-disk': { bodies: 'blobs', canAskToPersist: false, streamedUploads: false, streamedRequestBodies: true },
};

describe(`data through the worker in ${name}`, () => {
  it('service.storage reports what the engine lacks, as measured in the engine', async () => {
    const size = 300_000;
    const r = await run(page, async ({ sw, blob, pattern, sha256, read, thrown }, size) => {
      const { client } = sw;
      await client.createBucket('report');
      await client.putObject('report', 'body.bin', blob(7, size), { checksum: false });

      // How the store kept that body: read the service's own database (and close it at once).
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const open = indexedDB.open('swbucket');
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
      });
      const records = await new Promise<Record<string, unknown>[]>((resolve, reject) => {
        const all = db.transaction('bodies').objectStore('bodies').getAll();
        all.onsuccess = () => resolve(all.result as Record<string, unknown>[]);
        all.onerror = () => reject(all.error);
      });
      const pieces = await new Promise<number>((resolve, reject) => {
        const count = db.transaction('pieces').objectStore('pieces').count();
        count.onsuccess = () => resolve(count.result);
        count.onerror = () => reject(count.error);
      });
      db.close();
      const forms = { blob: 0, bytes: 0, pieces: 0 };
      for (const rec of records) {
        if (rec.blob instanceof Blob) forms.blob++;
        else if (typeof rec.pieces === 'number') forms.pieces++;
        else forms.bytes++;
      }

      // Can this page put a Blob in IndexedDB at all (a database of the test's own)?
      const blobStorable = await new Promise<boolean>((resolve) => {
        const open = indexedDB.open('engine-data-blob-probe', 1);
        open.onupgradeneeded = () => open.result.createObjectStore('s');
        open.onerror = () => resolve(false);
        open.onsuccess = () => {
          const tx = open.result.transaction('s', 'readwrite');
          try {
            tx.objectStore('s').put(new Blob(['probe']), 'k');
          } catch {
            open.result.close();
            resolve(false);
            return;
          }
          tx.oncomplete = () => {
            open.result.close();
            resolve(true);
          };
          tx.onabort = () => {
            open.result.close();
            resolve(false);
          };
        };
      });

      // Does a ReadableStream request body reach the worker whole? Sent through a client whose
      // fetch swaps the Blob body for a stream of the same bytes (the signature covers no body).
      const streamed = pattern(8, 100_000);
      const streamClient = sw.createClient({
        endpoint: client.endpoint, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret',
        fetch: (input, init) => fetch(input, {
          ...init,
          body: new ReadableStream<Uint8Array>({
            start(c) {
              c.enqueue(streamed.slice(0, 40_000));
              c.enqueue(streamed.slice(40_000));
              c.close();
            },
          }),
          duplex: 'half',
        } as RequestInit),
      });
      const streamPut = await thrown(streamClient.putObject('report', 'streamed.bin', new Blob([streamed]), { checksum: false }));
      const stored = await client.getObject('report', 'streamed.bin').then((g) => read(g.response), () => null);
      const streamStoredWhole = streamPut === null && stored !== null && stored.size === streamed.length && stored.sha256 === await sha256(streamed);

      return {
        storage: sw.storage,
        forms, pieces, blobStorable, streamStoredWhole, streamPut,
        canPersist: typeof navigator.storage?.persist === 'function',
        persistedNow: typeof navigator.storage?.persisted === 'function' ? await navigator.storage.persisted() : null,
        // The page's Request stands for the worker's (Firefox lacks Request.prototype.body in both).
        requestHasBody: 'body' in Request.prototype,
      };
    }, size);

    const s = r.storage;
    // Print what the engine reported and what was measured, for the record.
    console.info(`${name}: storage ${JSON.stringify(s)}; measured ${JSON.stringify({ ...r, storage: undefined })}`);

    // The report agrees with what the engine did.
    expect(s.bodies, 'bodies: the form the store wrote').toBe(r.forms.pieces > 0 ? 'pieces' : 'blobs');
    expect(r.forms.pieces > 0 && r.forms.blob > 0, 'one form only').toBe(false);
    expect(s.bodies === 'pieces', 'pieces exactly where a page cannot store a Blob').toBe(!r.blobStorable);
    if (s.bodies === 'pieces') expect(r.pieces, 'pieces of the 300000-byte body').toBeGreaterThanOrEqual(Math.ceil(size / (256 * KiB)));
    else expect(r.pieces).toBe(0);
    expect(s.canAskToPersist, 'canAskToPersist: navigator.storage.persist exists').toBe(r.canPersist);
    if (!r.canPersist) expect(s.persisted).toBeNull();
    else expect(typeof s.persisted).toBe('boolean');
    expect(s.streamedUploads, 'streamedUploads: a stream body reached the worker whole').toBe(r.streamStoredWhole);
    expect(s.streamedRequestBodies, 'streamedRequestBodies: requests have a body stream').toBe(r.requestHasBody);
    const lacks = Number(s.bodies === 'pieces') + Number(!s.canAskToPersist) + Number(!s.streamedUploads) + Number(s.streamedRequestBodies === false);
    expect(s.limits, 'a sentence for each thing lacked').toHaveLength(lacks);

    // And what it says for this engine.
    expect({ bodies: s.bodies, canAskToPersist: s.canAskToPersist, streamedUploads: s.streamedUploads, streamedRequestBodies: s.streamedRequestBodies })
      .toEqual(EXPECTED_STORAGE[name]);
  });

  it('no PUT is acknowledged whose bytes were not all stored: 0, 1, 16384, 16385, 300000 and 5 MiB + 3 bytes (and the sizes of the store\'s other boundaries), as a Blob and as bytes', async () => {
    // 16 KiB: the largest body kept inline; 64 KiB: bytes rather than Blobs on the way; 256 KiB: a
    // piece; 1 MiB: a body of pieces read whole in one transaction, above it streamed 4 MiB a read.
    const sizes = [0, 1, 16 * KiB, 16 * KiB + 1, 64 * KiB + 1, 256 * KiB, 256 * KiB + 1, 300_000, MiB + 1, 5 * MiB + 3];
    const r = await run(page, async ({ sw: { client, createClient }, blob, read, thrown }, sizes) => {
      // The same PUTs with the body as an ArrayBuffer rather than a Blob.
      const asBytes = createClient({
        endpoint: client.endpoint, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret',
        fetch: async (input, init) => fetch(input, init?.body instanceof Blob ? { ...init, body: await init.body.arrayBuffer() } : init),
      });
      await client.createBucket('sizes');
      const out = [];
      for (const [form, c] of [['blob', client], ['bytes', asBytes]] as const) {
        for (const [i, size] of sizes.entries()) {
          const key = `${form}/size-${size}.bin`;
          const put = await c.putObject('sizes', key, blob(100 + i, size), { checksum: false });
          const head = await client.headObject('sizes', key);
          const got = await read((await client.getObject('sizes', key)).response);
          out.push({ key, seed: 100 + i, size, put: put.etag, head: { size: head.size, etag: head.etag, length: head.headers.get('content-length') }, got });
        }
      }
      const listed = (await client.listObjects('sizes')).objects.map((o) => ({ key: o.key, size: o.size, etag: o.etag }));

      // With Content-MD5 (the client's checksum), a body that arrives other than it left — a byte
      // short, or a byte changed — is refused, and nothing is stored under its key.
      let alter: (b: Blob) => Promise<Blob> = async (b) => b;
      const altering = createClient({
        endpoint: client.endpoint, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret',
        fetch: async (input, init) => fetch(input, init?.body instanceof Blob ? { ...init, body: await alter(init.body) } : init),
      });
      const big = sizes[sizes.length - 1]!;
      alter = async (b) => b.slice(0, b.size - 1);
      const short = await thrown(altering.putObject('sizes', 'md5/short.bin', blob(200, big)));
      alter = async (b) => {
        const bytes = new Uint8Array(await b.arrayBuffer());
        const at = bytes.length >> 1;
        bytes[at] = bytes[at]! ^ 1;
        return new Blob([bytes]);
      };
      const changed = await thrown(altering.putObject('sizes', 'md5/changed.bin', blob(201, big)));
      alter = async (b) => b;
      const checked = await altering.putObject('sizes', 'md5/checked.bin', blob(202, big));
      const md5Keys = (await client.listObjects('sizes', { prefix: 'md5/' })).objects.map((o) => [o.key, o.size, o.etag]);
      return { out, listed, short, changed, checked: checked.etag, md5Keys };
    }, sizes);

    expect(r.out).toHaveLength(2 * sizes.length);
    for (const o of r.out) {
      const bytes = pattern(o.seed, o.size);
      const md5 = md5hex(bytes);
      expect(o.put, `${o.key}: the acknowledged ETag is the MD5 of what was sent`).toBe(md5);
      expect(o.head, `${o.key}: HEAD`).toEqual({ size: o.size, etag: md5, length: String(o.size) });
      expectWhole(o.got, bytes, md5, `${o.key}: GET`);
    }
    expect(r.listed).toEqual(r.out.map((o) => ({ key: o.key, size: o.size, etag: md5hex(pattern(o.seed, o.size)) }))
      .sort((a, b) => (a.key < b.key ? -1 : 1)));

    const big = sizes[sizes.length - 1]!;
    expect(r.short, 'a byte short of its Content-MD5').toMatchObject({ code: 'BadDigest', status: 400 });
    expect(r.changed, 'a byte changed').toMatchObject({ code: 'BadDigest', status: 400 });
    expect(r.checked).toBe(md5hex(pattern(202, big)));
    expect(r.md5Keys).toEqual([['md5/checked.bin', big, r.checked]]);
  });

  it('a 32 MiB object: PUT, GET whole, and ranges (first and last byte, across 256 KiB and 4 MiB boundaries, suffix) on the bucket host and on the mount, presigned and public-read', async () => {
    const SIZE = 32 * MiB;
    const SEED = 32;
    const all = pattern(SEED, SIZE);
    const ranges: [string, number, number][] = [
      ['bytes=0-0', 0, 0],
      [`bytes=${SIZE - 1}-${SIZE - 1}`, SIZE - 1, SIZE - 1],
      ['bytes=262140-262150', 262_140, 262_150],
      ['bytes=-5', SIZE - 5, SIZE - 1],
      ['bytes=4194300-4194310', 4 * MiB - 4, 4 * MiB + 6],
      ['bytes=1000-9000000', 1000, 9_000_000],
      [`bytes=${SIZE - 300_000}-`, SIZE - 300_000, SIZE - 1],
    ];
    const onMount = ranges.slice(0, 5);
    const r = await run(page, async ({ sw, blob, read, origin }, { SIZE, SEED, ranges, onMount }) => {
      const { client } = sw;
      await client.createBucket('large');
      const put = await client.putObject('large', 'blob32.bin', blob(SEED, SIZE), { checksum: false });
      const head = await client.headObject('large', 'blob32.bin');
      const whole = await read((await client.getObject('large', 'blob32.bin')).response);
      const host: ReadResult[] = [];
      for (const [range] of ranges) host.push(await read((await client.getObject('large', 'blob32.bin', { range })).response));

      // The mount, signed by a presigned URL (private bucket), then unsigned (public-read).
      const presigned = sw.mountUrl(await client.presign('large', 'blob32.bin'));
      const mountPresigned: ReadResult[] = [];
      for (const [range] of onMount) mountPresigned.push(await read(await fetch(presigned, { headers: { range } })));
      const unsignedPrivate = (await fetch(`${origin}/svc/large/blob32.bin`, { headers: { range: 'bytes=0-0' } })).status;
      await client.putBucketAcl('large', 'public-read');
      const mountPublic: ReadResult[] = [];
      for (const [range] of onMount) mountPublic.push(await read(await fetch(`${origin}/svc/large/blob32.bin`, { headers: { range } })));
      const mountWhole = await read(await fetch(`${origin}/svc/large/blob32.bin`));
      return { put: put.etag, head: { size: head.size, etag: head.etag }, whole, host, presigned, mountPresigned, unsignedPrivate, mountPublic, mountWhole };
    }, { SIZE, SEED, ranges, onMount });

    const md5 = md5hex(all);
    expect(r.put).toBe(md5);
    expect(r.head).toEqual({ size: SIZE, etag: md5 });
    expectWhole(r.whole, all, md5, 'GET whole on the bucket host');
    expect(r.whole.headers['accept-ranges']).toBe('bytes');
    ranges.forEach(([range, start, end], i) => expectRange(r.host[i]!, all, start, end, `bucket host ${range}`));
    expect(new URL(r.presigned).pathname).toBe('/svc/large/blob32.bin');
    onMount.forEach(([range, start, end], i) => expectRange(r.mountPresigned[i]!, all, start, end, `mount, presigned, ${range}`));
    expect(r.unsignedPrivate, 'unsigned on the mount while private').toBe(403);
    onMount.forEach(([range, start, end], i) => expectRange(r.mountPublic[i]!, all, start, end, `mount, public-read, ${range}`));
    expectWhole(r.mountWhole, all, md5, 'GET whole on the mount');
  });

  it('a multipart object of 3 parts (5 MiB, 5 MiB, 1 MiB + 7): part ETags, the multipart ETag, whole read, ranges across part boundaries', async () => {
    const sizes = [5 * MiB, 5 * MiB, MiB + 7];
    const total = sizes.reduce((a, b) => a + b, 0);
    const SEED = 33;
    const all = pattern(SEED, total);
    const b1 = sizes[0]!;
    const b2 = sizes[0]! + sizes[1]!;
    const ranges: [string, number, number][] = [
      [`bytes=${b1 - 5}-${b1 + 4}`, b1 - 5, b1 + 4], // across the first boundary
      [`bytes=${b2 - 1}-${b2}`, b2 - 1, b2], // the last byte of part 2 and the first of part 3
      [`bytes=${b1 - 1}-${b2}`, b1 - 1, b2], // all of part 2 and a byte either side
      [`bytes=${b2}-${b2}`, b2, b2],
      [`bytes=-${sizes[2]! + 10}`, total - sizes[2]! - 10, total - 1], // suffix: part 3 and a little before
      [`bytes=${total - 1}-`, total - 1, total - 1],
      ['bytes=100-11000000', 100, 11_000_000], // through all three parts
    ];
    const r = await run(page, async ({ sw, blob, read }, { sizes, total, SEED, ranges }) => {
      const { client } = sw;
      await client.createBucket('multi');
      const body = blob(SEED, total);
      const uploadId = await client.createMultipartUpload('multi', 'parts/joined.bin', { contentType: 'application/x-test' });
      const parts: { partNumber: number; etag: string }[] = [];
      let at = 0;
      for (const [i, size] of sizes.entries()) {
        const { etag } = await client.uploadPart('multi', 'parts/joined.bin', uploadId, i + 1, body.slice(at, at + size), { checksum: false });
        parts.push({ partNumber: i + 1, etag });
        at += size;
      }
      const done = await client.completeMultipartUpload('multi', 'parts/joined.bin', uploadId, parts);
      const head = await client.headObject('multi', 'parts/joined.bin');
      const whole = await read((await client.getObject('multi', 'parts/joined.bin')).response);
      const host: ReadResult[] = [];
      for (const [range] of ranges) host.push(await read((await client.getObject('multi', 'parts/joined.bin', { range })).response));
      const presigned = sw.mountUrl(await client.presign('multi', 'parts/joined.bin'));
      const mount: ReadResult[] = [];
      for (const [range] of ranges.slice(0, 3)) mount.push(await read(await fetch(presigned, { headers: { range } })));
      const uploadsLeft = (await client.listMultipartUploads('multi')).uploads.length;
      return { parts, done: done.etag, head: { size: head.size, etag: head.etag, contentType: head.contentType }, whole, host, mount, uploadsLeft };
    }, { sizes, total, SEED, ranges });

    const partEtags: string[] = [];
    let at = 0;
    for (const size of sizes) {
      partEtags.push(md5hex(all.subarray(at, at + size)));
      at += size;
    }
    expect(r.parts.map((p) => p.etag), 'each part acknowledged with its MD5').toEqual(partEtags);
    const etag = multipartEtag(partEtags);
    expect(r.done).toBe(etag);
    expect(r.head).toEqual({ size: total, etag, contentType: 'application/x-test' });
    expectWhole(r.whole, all, etag, 'GET whole');
    ranges.forEach(([range, start, end], i) => expectRange(r.host[i]!, all, start, end, `bucket host ${range}`));
    ranges.slice(0, 3).forEach(([range, start, end], i) => expectRange(r.mount[i]!, all, start, end, `mount ${range}`));
    expect(r.uploadsLeft).toBe(0);
  });

  describe("the client's upload()", () => {
    it('24 MiB in 8 MiB parts with concurrency 2: parts in parallel, progress to the total, the multipart ETag, the right bytes', async () => {
      const size = 24 * MiB;
      const partSize = 8 * MiB;
      const SEED = 40;
      const r = await run(page, async ({ sw: { client, createClient }, blob, read }, { size, partSize, SEED }) => {
        let inFlight = 0;
        let maxInFlight = 0;
        const counting = createClient({
          endpoint: client.endpoint, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret',
          fetch: async (input, init) => {
            const isPart = String(input).includes('partNumber=');
            if (isPart) maxInFlight = Math.max(maxInFlight, ++inFlight);
            try {
              return await fetch(input, init);
            } finally {
              if (isPart) inFlight--;
            }
          },
        });
        await client.createBucket('uploads');
        const progress: number[] = [];
        const result = await counting.upload('uploads', 'big.bin', blob(SEED, size), { partSize, concurrency: 2, onProgress: (p) => progress.push(p.loaded) });
        const got = await read((await client.getObject('uploads', 'big.bin')).response);
        const uploadsLeft = (await client.listMultipartUploads('uploads')).uploads.length;
        return { result, progress, maxInFlight, got, uploadsLeft };
      }, { size, partSize, SEED });

      const all = pattern(SEED, size);
      const etag = multipartEtag([0, 1, 2].map((i) => md5hex(all.subarray(i * partSize, (i + 1) * partSize))));
      expect(r.result).toMatchObject({ etag, partsSent: 3, partsSkipped: 0 });
      expectWhole(r.got, all, etag, 'GET after upload()');
      console.info(`${name}: upload() had at most ${r.maxInFlight} parts in flight`);
      expect(r.maxInFlight, 'parts in flight at once').toBeLessThanOrEqual(2);
      expect(r.maxInFlight, 'parts in flight at once').toBeGreaterThanOrEqual(2);
      for (let i = 1; i < r.progress.length; i++) expect(r.progress[i]!).toBeGreaterThanOrEqual(r.progress[i - 1]!);
      expect(r.progress.at(-1)).toBe(size);
      expect(r.uploadsLeft).toBe(0);
    });

    it('aborted half-way (AbortSignal): rejects with AbortError, and no upload and no object are left', async () => {
      const size = 16 * MiB;
      const r = await run(page, async ({ sw: { client }, blob, thrown, sleep }, size) => {
        await client.createBucket('aborted');
        const controller = new AbortController();
        const progress: number[] = [];
        const error = await thrown(client.upload('aborted', 'half.bin', blob(41, size), {
          partSize: 4 * 1024 * 1024, concurrency: 2, signal: controller.signal,
          onProgress: (p) => {
            progress.push(p.loaded);
            if (p.loaded >= size / 2) controller.abort();
          },
        }));
        const listed = (await client.listMultipartUploads('aborted')).uploads.map((u) => u.key);
        const object = await thrown(client.headObject('aborted', 'half.bin'));
        // Parts in flight at the abort are answered after it: still nothing is left.
        await sleep(1000);
        const listedLater = (await client.listMultipartUploads('aborted')).uploads.map((u) => u.key);
        const objects = (await client.listObjects('aborted')).objects.length;
        const bucketDeleted = await thrown(client.deleteBucket('aborted'));
        return { error, progress, listed, object, listedLater, objects, bucketDeleted };
      }, size);

      expect(r.error).toMatchObject({ name: 'AbortError' });
      expect(r.progress.at(-1)).toBeGreaterThanOrEqual(size / 2);
      expect(r.progress.at(-1)).toBeLessThan(size);
      expect(r.listed).toEqual([]);
      expect(r.object).toMatchObject({ status: 404 });
      expect(r.listedLater).toEqual([]);
      expect(r.objects).toBe(0);
      expect(r.bucketDeleted, 'the bucket is empty: no part of the aborted upload holds it').toBeNull();
    });

    it('resume after a stopped upload sends only the missing parts, and completes it with the right bytes', async () => {
      const partSize = MiB;
      const size = 6 * MiB + 100;
      const SEED = 42;
      const r = await run(page, async ({ sw: { client, createClient }, blob, read, thrown, sleep }, { size, partSize, SEED }) => {
        await client.createBucket('resumed');
        const body = blob(SEED, size);
        // Stopped after two parts, the upload kept on the service (abortOnCancel: false).
        const controller = new AbortController();
        const stopped = await thrown(client.upload('resumed', 'doc.bin', body, {
          partSize, concurrency: 1, signal: controller.signal, abortOnCancel: false,
          onProgress: (p) => {
            if (p.loaded >= 2 * partSize) controller.abort();
          },
        }));
        const uploads = (await client.listMultipartUploads('resumed')).uploads;
        const partsOf = async () => uploads.length === 1
          ? (await client.listParts('resumed', 'doc.bin', uploads[0]!.uploadId)).parts.map((p) => p.partNumber)
          : [];
        // Until what is there stops changing.
        let present = await partsOf();
        for (let i = 0; i < 20; i++) {
          await sleep(250);
          const now = await partsOf();
          if (now.join() === present.join()) break;
          present = now;
        }
        const sent: number[] = [];
        const counting = createClient({
          endpoint: client.endpoint, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret',
          fetch: (input, init) => {
            const n = new URL(String(input)).searchParams.get('partNumber');
            if (n) sent.push(Number(n));
            return fetch(input, init);
          },
        });
        const result = await counting.upload('resumed', 'doc.bin', body, { partSize, concurrency: 2, resume: true });
        const got = await read((await client.getObject('resumed', 'doc.bin')).response);
        const uploadsLeft = (await client.listMultipartUploads('resumed')).uploads.length;
        return { stopped, uploads: uploads.map((u) => u.uploadId), present, sent, result, got, uploadsLeft };
      }, { size, partSize, SEED });

      const all = pattern(SEED, size);
      const count = Math.ceil(size / partSize);
      const etag = multipartEtag(Array.from({ length: count }, (_, i) => md5hex(all.subarray(i * partSize, Math.min(size, (i + 1) * partSize)))));
      expect(r.stopped).toMatchObject({ name: 'AbortError' });
      expect(r.uploads).toHaveLength(1);
      expect(r.present.slice(0, 2)).toEqual([1, 2]);
      expect(r.present.length).toBeLessThanOrEqual(3);
      const missing = Array.from({ length: count }, (_, i) => i + 1).filter((n) => !r.present.includes(n));
      expect([...r.sent].sort((a, b) => a - b), 'parts sent by the resume').toEqual(missing);
      expect(r.result).toMatchObject({ etag, uploadId: r.uploads[0], partsSent: missing.length, partsSkipped: r.present.length });
      expectWhole(r.got, all, etag, 'GET after the resume');
      expect(r.uploadsLeft).toBe(0);
    });
  });

  it('a PUT the page aborts leaves its key absent or whole, never partial', async () => {
    const size = 8 * MiB;
    const delays = [0, 5, 20, 80];
    const r = await run(page, async ({ sw: { client }, blob, read, thrown, sleep }, { size, delays }) => {
      await client.createBucket('aborted-puts');
      const out = [];
      for (const [i, delay] of delays.entries()) {
        const controller = new AbortController();
        const put = client.putObject('aborted-puts', `k${i}.bin`, blob(80 + i, size), { checksum: false, signal: controller.signal });
        setTimeout(() => controller.abort(), delay);
        const error = await thrown(put);
        // Whatever reached the worker is answered meanwhile.
        await sleep(300);
        const head = await thrown(client.headObject('aborted-puts', `k${i}.bin`));
        const got = head ? null : await read((await client.getObject('aborted-puts', `k${i}.bin`)).response);
        out.push({ seed: 80 + i, delay, error: error?.name ?? null, head: head?.status ?? null, got });
      }
      const listed = (await client.listObjects('aborted-puts')).objects.map((o) => [o.key, o.size]);
      return { out, listed };
    }, { size, delays });

    console.info(`${name}: aborted PUTs ${JSON.stringify(r.out.map((o) => ({ delay: o.delay, error: o.error, stored: o.got ? 'whole' : o.head })))}`);
    for (const o of r.out) {
      if (o.got) expectWhole(o.got, pattern(o.seed, size), md5hex(pattern(o.seed, size)), `aborted after ${o.delay} ms, stored`);
      else expect(o.head, `aborted after ${o.delay} ms, absent`).toBe(404);
    }
    expect(r.listed).toEqual(r.out.flatMap((o, i) => (o.got ? [[`k${i}.bin`, size]] : [])));
  });

  it('copy, move, overwrite and delete keep every body whole and leave no body or piece behind; an export imports back whole', async () => {
    const SIZE = MiB + 1;
    const r = await run(page, async ({ sw: { client }, blob, read }, SIZE) => {
      /** Records in the service's bodies and pieces stores (the database is closed again at once). */
      const counts = async () => {
        const db = await new Promise<IDBDatabase>((resolve, reject) => {
          const open = indexedDB.open('swbucket');
          open.onsuccess = () => resolve(open.result);
          open.onerror = () => reject(open.error);
        });
        const out = await new Promise<{ bodies: number; pieces: number }>((resolve, reject) => {
          const tx = db.transaction(['bodies', 'pieces']);
          const bodies = tx.objectStore('bodies').count();
          const pieces = tx.objectStore('pieces').count();
          tx.oncomplete = () => resolve({ bodies: bodies.result, pieces: pieces.result });
          tx.onerror = () => reject(tx.error);
        });
        db.close();
        return out;
      };
      await client.createBucket('moves');
      const before = await counts();
      await client.putObject('moves', 'src.bin', blob(90, SIZE), { checksum: false });
      const copy = await client.copyObject({ bucket: 'moves', key: 'src.bin' }, 'moves', 'copy.bin');
      const moved = await client.moveObject('moves', 'copy.bin', 'moved.bin');
      await client.deleteObject('moves', 'src.bin');
      const movedWhole = await read((await client.getObject('moves', 'moved.bin')).response);
      const movedRange = await read((await client.getObject('moves', 'moved.bin', { range: 'bytes=262143-262145' })).response);
      // A copy of the multipart object of three parts: one body, with the plain MD5 as its ETag.
      const joined = await client.copyObject({ bucket: 'multi', key: 'parts/joined.bin' }, 'moves', 'joined.bin');
      const joinedWhole = await read((await client.getObject('moves', 'joined.bin')).response);
      await client.putObject('moves', 'moved.bin', blob(91, 300_000), { checksum: false });
      const overwritten = await read((await client.getObject('moves', 'moved.bin')).response);
      await client.deleteObjects('moves', ['moved.bin', 'joined.bin']);
      const after = await counts();

      // Export a bucket, delete it, import the archive: the objects come back whole.
      await client.putObject('moves', 'a.bin', blob(92, SIZE), { checksum: false });
      await client.putObject('moves', 'b.bin', blob(93, 300_000), { checksum: false });
      const download = await client.exportArchive({ buckets: ['moves'] });
      const archive = await new Response(download.body).blob();
      await client.deleteObjects('moves', ['a.bin', 'b.bin']);
      await client.deleteBucket('moves');
      const imported = await client.importArchive(archive);
      const a = await read((await client.getObject('moves', 'a.bin')).response);
      const b = await read((await client.getObject('moves', 'b.bin')).response);
      return { before, copy: copy.etag, moved: moved.etag, movedWhole, movedRange, joined: joined.etag, joinedWhole, overwritten, after, imported, a, b };
    }, SIZE);

    const src = pattern(90, SIZE);
    expect(r.copy).toBe(md5hex(src));
    expect(r.moved).toBe(md5hex(src));
    expectWhole(r.movedWhole, src, md5hex(src), 'moved copy, its source deleted');
    expectRange(r.movedRange, src, 262_143, 262_145, 'moved copy, across a piece boundary');
    const joined = pattern(33, 11 * MiB + 7);
    expect(r.joined, 'a copy of a multipart object has the plain MD5').toBe(md5hex(joined));
    expectWhole(r.joinedWhole, joined, md5hex(joined), 'copy of the multipart object');
    expectWhole(r.overwritten, pattern(91, 300_000), md5hex(pattern(91, 300_000)), 'overwritten');
    expect(r.after, 'no body and no piece left behind').toEqual(r.before);
    expect(r.imported).toMatchObject({ objectsRestored: 2, bytesRestored: SIZE + 300_000 });
    expectWhole(r.a, pattern(92, SIZE), md5hex(pattern(92, SIZE)), 'imported a.bin');
    expectWhole(r.b, pattern(93, 300_000), md5hex(pattern(93, 300_000)), 'imported b.bin');
  });

  it('account quota: QuotaBytes 100000 refuses a PUT of 100001 bytes (403 QuotaExceeded, nothing stored, usage unchanged) and takes PUTs up to the quota', async () => {
    const r = await run(page, async ({ sw: { client, createClient }, blob, read, thrown }) => {
      await client.putAccount('quota-user', { secretAccessKey: 'quota-user-secret', quotaBytes: 100_000 });
      const user = createClient({ endpoint: client.endpoint, accessKeyId: 'quota-user', secretAccessKey: 'quota-user-secret' });
      await user.createBucket('quota-bucket');
      const usage = async () => (await client.listAccounts()).find((a) => a.accessKeyId === 'quota-user')?.usedBytes;
      const keys = async () => (await user.listObjects('quota-bucket')).objects.map((o) => [o.key, o.size]);
      const before = await usage();
      const over = await thrown(user.putObject('quota-bucket', 'too-big.bin', blob(60, 100_001), { checksum: false }));
      const afterOver = { usage: await usage(), keys: await keys(), head: await thrown(user.headObject('quota-bucket', 'too-big.bin')) };
      const fits = await user.putObject('quota-bucket', 'fits.bin', blob(61, 60_000), { checksum: false });
      const afterFits = await usage();
      const over2 = await thrown(user.putObject('quota-bucket', 'second.bin', blob(62, 40_001), { checksum: false }));
      const afterOver2 = { usage: await usage(), keys: await keys() };
      const exact = await user.putObject('quota-bucket', 'second.bin', blob(63, 40_000), { checksum: false });
      const afterExact = { usage: await usage(), keys: await keys() };
      const got = await read((await user.getObject('quota-bucket', 'fits.bin')).response);
      const quota = (await client.listAccounts()).find((a) => a.accessKeyId === 'quota-user')?.quotaBytes;
      // Full: an Upload Part of one byte is refused too, and the upload holds nothing.
      const uploadId = await user.createMultipartUpload('quota-bucket', 'part.bin');
      const part = await thrown(user.uploadPart('quota-bucket', 'part.bin', uploadId, 1, blob(64, 1), { checksum: false }));
      const parts = (await user.listParts('quota-bucket', 'part.bin', uploadId)).parts.length;
      await user.abortMultipartUpload('quota-bucket', 'part.bin', uploadId);
      const afterPart = await usage();
      return { before, over, afterOver, fits: fits.etag, afterFits, over2, afterOver2, exact: exact.etag, afterExact, got, quota, part, parts, afterPart };
    });

    expect(r.quota).toBe(100_000);
    expect(r.before).toBe(0);
    expect(r.over).toMatchObject({ name: 'SvcClientError', code: 'QuotaExceeded', status: 403 });
    expect(r.afterOver).toMatchObject({ usage: 0, keys: [], head: { status: 404 } });
    expect(r.fits).toBe(md5hex(pattern(61, 60_000)));
    expect(r.afterFits).toBe(60_000);
    expect(r.over2).toMatchObject({ code: 'QuotaExceeded', status: 403 });
    expect(r.afterOver2).toEqual({ usage: 60_000, keys: [['fits.bin', 60_000]] });
    expect(r.exact).toBe(md5hex(pattern(63, 40_000)));
    expect(r.afterExact).toEqual({ usage: 100_000, keys: [['fits.bin', 60_000], ['second.bin', 40_000]] });
    expectWhole(r.got, pattern(61, 60_000), md5hex(pattern(61, 60_000)), 'GET fits.bin');
    expect(r.part, 'Upload Part past the quota').toMatchObject({ code: 'QuotaExceeded', status: 403 });
    expect(r.parts).toBe(0);
    expect(r.afterPart).toBe(100_000);
  });

  it('data survives a reload (the worker controls the reloaded page) and closing the page for a new one', async () => {
    const SIZE = 2 * MiB + 5;
    const wrote = await run(page, async ({ sw: { client }, blob }, SIZE) => {
      await client.createBucket('kept');
      const big = await client.putObject('kept', 'just-written.bin', blob(50, SIZE), { checksum: false });
      const small = await client.putObject('kept', 'small.txt', 'kept across reloads', { checksum: false });
      return { big: big.etag, small: small.etag };
    }, SIZE);
    // Reloaded at once after the acknowledgement.
    await page.reload();
    await waitStarted(page);

    const check = async (p: EnginePage, what: string) => {
      const r = await run(p, async ({ sw: { client }, read }) => ({
        controlled: Boolean(navigator.serviceWorker.controller),
        big: await read((await client.getObject('kept', 'just-written.bin')).response),
        small: await (await client.getObject('kept', 'small.txt')).response.text(),
        sizes: (await client.headObject('sizes', 'blob/size-5242883.bin')).size,
        large: await read((await client.getObject('large', 'blob32.bin', { range: 'bytes=262140-262150' })).response),
        multi: (await client.headObject('multi', 'parts/joined.bin')).etag,
        buckets: (await client.listBuckets()).buckets.map((b) => b.name),
      }));
      expect(r.controlled, what).toBe(true);
      const bytes = pattern(50, SIZE);
      expect(wrote.big).toBe(md5hex(bytes));
      expectWhole(r.big, bytes, wrote.big, `${what}: just-written.bin`);
      expect(r.small, what).toBe('kept across reloads');
      expect(r.sizes, what).toBe(5 * MiB + 3);
      expectRange(r.large, pattern(32, 32 * MiB), 262_140, 262_150, `${what}: blob32.bin`);
      expect(r.multi, what).toMatch(/^[0-9a-f]{32}-1$/);
      expect(r.buckets, what).toEqual(expect.arrayContaining(['kept', 'large', 'multi', 'sizes', 'uploads']));
    };
    await check(page, 'after a reload');

    // No page of the origin open in between: a blank page first (WebDriver needs a window), the
    // service's page closed, then the site in the blank page.
    const next = await service.engine.newPage();
    await page.close();
    await next.goto(baseURL + '/');
    await waitStarted(next);
    page = next;
    await check(page, 'in a new page after closing the old one');
  });

  it('two pages writing the same keys concurrently: every object ends whole, with an ETag one of them was acknowledged', async () => {
    const KEYS = ['shared/a.bin', 'shared/b.bin', 'shared/c.bin'];
    const PER_PAGE = 12;
    interface Write { page: number; key: string; seed: number; size: number }
    const plan = (p: number): Write[] => Array.from({ length: PER_PAGE }, (_, i) => {
      const seed = 1000 * (p + 1) + i;
      return { page: p, key: KEYS[(i + p) % KEYS.length]!, seed, size: 1 + ((seed * 48_271) % (600 * KiB)) };
    });
    const { page: second } = await openServicePage(service.engine, baseURL);
    try {
      const pages = [page, second];
      await run(page, async ({ sw: { client } }) => client.createBucket('two-pages'));
      // Start both pages' writes (each page all of its own at once), then collect: WebDriver runs
      // one script at a time, so a script that waited for its writes would hold up the other page.
      for (const [i, p] of pages.entries()) {
        await run(p, async ({ sw: { client }, blob }, writes) => {
          (window as unknown as { __writes: Promise<unknown> }).__writes = Promise.all(writes.map(async (w) => {
            try {
              const put = await client.putObject('two-pages', w.key, blob(w.seed, w.size), { checksum: false });
              return { ...w, status: 200, etag: put.etag as string | null, error: '' };
            } catch (e) {
              return { ...w, status: (e as { status?: number }).status ?? 0, etag: null, error: String(e) };
            }
          }));
          return true;
        }, plan(i));
      }
      const results = (await Promise.all(pages.map((p) => run(p, async () =>
        (window as unknown as { __writes: Promise<(Write & { status: number; etag: string | null; error: string })[]> }).__writes)))).flat();

      const md5Of = (w: Write) => md5hex(pattern(w.seed, w.size));
      expect(results.filter((w) => w.status !== 200 || w.etag !== md5Of(w)), 'every PUT acknowledged with the MD5 of what its page sent').toEqual([]);
      const acked = new Map<string, Map<string, Write>>(KEYS.map((k) => [k, new Map()]));
      for (const w of results) acked.get(w.key)!.set(w.etag!, w);

      const reads = await Promise.all(pages.map((p) => run(p, async ({ sw: { client }, read }, keys) => Promise.all(keys.map(async (key) =>
        ({ key, ...(await read((await client.getObject('two-pages', key)).response)) }))), KEYS)));
      const listed = await run(second, async ({ sw: { client } }) =>
        (await client.listObjects('two-pages')).objects.map((o) => ({ key: o.key, size: o.size, etag: o.etag })));
      for (const key of KEYS) {
        const [a, b] = reads.map((rs) => rs.find((x) => x.key === key)!);
        const same = (x: ReadResult) => ({ status: x.status, etag: x.headers.etag, size: x.size, sha256: x.sha256 });
        expect(same(b!), `${key}: both pages read the same object`).toEqual(same(a!));
        const etag = a!.headers.etag?.replace(/"/g, '') ?? '';
        const winner = acked.get(key)!.get(etag);
        expect(winner, `${key}: ${etag} is one of the acknowledged ETags ${[...acked.get(key)!.keys()].join(' ')}`).toBeDefined();
        expectWhole(a!, pattern(winner!.seed, winner!.size), etag, `${key}: the winner's bytes`);
        expect(listed.find((o) => o.key === key), `${key} listed`).toEqual({ key, size: winner!.size, etag });
      }
      expect(listed).toHaveLength(KEYS.length);
    } finally {
      await second.close();
    }
  });

  it('deleteAllData() empties the store; the service starts again empty, with root', { timeout: 90_000 }, async () => {
    // Each step noted in the page: in webkit-disk this test has run out of time with no word of
    // where (a clean-clone run, 2026-11-29); a step that never ends is now named.
    const deleting = run(page, async ({ sw, thrown }) => {
      const { client, createClient } = sw;
      const t0 = performance.now();
      const steps: string[] = ((window as unknown as { deleteSteps: string[] }).deleteSteps = []);
      const step = <T>(name: string, p: Promise<T>) => (steps.push(`${name} from ${Math.round(performance.now() - t0)} ms`), p.finally(() => steps.push(`${name} done at ${Math.round(performance.now() - t0)} ms`)));
      await step('putAccount', client.putAccount('doomed-user', { secretAccessKey: 'doomed-user-secret' }));
      const before = (await step('listBuckets', client.listBuckets())).buckets.length;
      await step('deleteAllData', sw.deleteAllData());
      const listed = (await step('listBuckets after', client.listBuckets())).buckets.map((b) => b.name);
      const user = createClient({ endpoint: client.endpoint, accessKeyId: 'doomed-user', secretAccessKey: 'doomed-user-secret' });
      const userGone = await step('the deleted user', thrown(user.listBuckets()));
      const oldObject = await step('an old object', thrown(client.getObject('sizes', 'blob/size-1.bin')));
      const accounts = (await step('listAccounts', client.listAccounts())).map((a) => a.accessKeyId);
      return { before, listed, userGone, oldObject, accounts };
    });
    const r = await Promise.race([deleting, new Promise<null>((resolve) => setTimeout(() => resolve(null), 25_000))]);
    if (r === null) {
      const steps = await Promise.race([
        page.evaluate(() => JSON.stringify((window as unknown as { deleteSteps?: string[] }).deleteSteps ?? null)),
        new Promise<string>((resolve) => setTimeout(() => resolve('(the page did not answer within 5 s)'), 5_000)),
      ]).catch((e: unknown) => `(the page could not be read: ${String(e)})`);
      throw new Error(`deleteAllData() and the requests after it did not finish within 25 s; the steps: ${steps}`);
    }
    expect(r.before).toBeGreaterThanOrEqual(8);
    expect(r.listed).toEqual([]);
    expect(r.userGone).toMatchObject({ code: 'AccessDenied', status: 403 });
    expect(r.oldObject).toMatchObject({ code: 'NoSuchBucket', status: 404 });
    expect(r.accounts).toEqual(['svcadmin']);

    // The page started again: the service runs, empty, and stores again. A reload that never
    // finishes is said as such (WebKitGTK on disk has hung at a navigation now and then in full
    // runs, here once too: docs/browser.md), not left to the test's timeout.
    const reloaded = await Promise.race([page.reload().then(() => 'done'), new Promise((r) => setTimeout(() => r('hung'), 30_000))]);
    expect(reloaded, 'the reload after deleteAllData() finished').toBe('done');
    await waitStarted(page);
    const again = await run(page, async ({ sw: { client }, blob, read }) => {
      const buckets = (await client.listBuckets()).buckets.length;
      await client.createBucket('fresh');
      const put = await client.putObject('fresh', 'again.bin', blob(70, 300_000), { checksum: false });
      const got = await read((await client.getObject('fresh', 'again.bin')).response);
      return { controlled: Boolean(navigator.serviceWorker.controller), buckets, put: put.etag, got };
    });
    expect(again.controlled).toBe(true);
    expect(again.buckets).toBe(0);
    const bytes = pattern(70, 300_000);
    expect(again.put).toBe(md5hex(bytes));
    expectWhole(again.got, bytes, again.put, 'GET after deleteAllData');
  });
});
