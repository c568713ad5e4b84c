// Bodies kept as pieces, where IndexedDB refuses Blobs (WebKit's ephemeral storage): the store
// finds that out once as it opens, cuts bodies into pieces, reads only the pieces a range covers,
// and keeps working over a database that already holds Blob bodies. The whole conformance table,
// the store invariants and the archive round trip also run over this form ('idb-pieces' in
// test/support/stores.ts); here are the parts those cannot see.
import { afterEach, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { IDBFactory, IDBObjectStore } from 'fake-indexeddb';
import { openIdbStore } from '../../sw/store/idb.ts';
import { PieceBody, cutIntoPieces, type Segment } from '../../sw/store/pieces.ts';
import { createHandler } from '../../sw/core/handler.ts';
import { buildRequest, send } from '../support/service.ts';
import { SOUND, contents, integrity } from '../support/stores.ts';

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');
const B = 'http://photos.svc.localhost';

async function drain(body: { stream(): ReadableStream<Uint8Array> }): Promise<Uint8Array> {
  return new Uint8Array(await new Response(body.stream()).arrayBuffer());
}

describe('PieceBody reads only the pieces a range covers', () => {
  const piece = 10;
  const stored = new Uint8Array(randomBytes(95)); // pieces 0…9, the last 5 bytes
  const head = new Uint8Array(randomBytes(7));
  const reads: [number, number][] = [];
  const reader = async (id: string, first: number, last: number) => {
    expect(id).toBe('p');
    reads.push([first, last]);
    const out: Uint8Array[] = [];
    for (let i = first; i <= last; i++) out.push(stored.subarray(i * piece, Math.min(stored.length, (i + 1) * piece)));
    return out;
  };
  const segments: Segment[] = [{ size: head.length, bytes: new Blob([head]) }, { size: stored.length, id: 'p', pieceBytes: piece }];
  const all = new Uint8Array([...head, ...stored]);
  afterEach(() => {
    reads.length = 0;
  });

  it('whole, and every slice from each start to each end', async () => {
    const body = new PieceBody(segments, reader);
    expect(body.size).toBe(all.length);
    expect(await drain(body)).toEqual(all);
    for (let a = 0; a < all.length; a += 3) {
      for (let b = a; b <= all.length; b += 7) expect(await drain(body.slice(a, b))).toEqual(all.subarray(a, b));
    }
  });

  it('a range inside one piece reads that piece alone', async () => {
    const body = new PieceBody(segments, reader);
    // Bytes 30…33 of the stored body: piece 3.
    expect(await drain(body.slice(head.length + 30, head.length + 34))).toEqual(stored.subarray(30, 34));
    expect(reads).toEqual([[3, 3]]);
  });

  it('a range across two pieces reads those two, and the bytes in hand none', async () => {
    const body = new PieceBody(segments, reader);
    expect(await drain(body.slice(head.length + 58, head.length + 62))).toEqual(stored.subarray(58, 62));
    expect(reads).toEqual([[5, 6]]);
    reads.length = 0;
    expect(await drain(body.slice(0, 5))).toEqual(head.subarray(0, 5));
    expect(reads).toEqual([]);
  });

  it('a piece gone while it streams breaks the stream off instead of giving other bytes', async () => {
    const body = new PieceBody(segments, async (id, first, last) => (await reader(id, first, last)).slice(0, 1));
    await expect(drain(body)).rejects.toThrow(/deleted or replaced while it was being read/);
  });
});

describe('cutIntoPieces', () => {
  it('cuts bytes, Blobs and stored bodies into whole pieces with their own buffers', async () => {
    const bytes = randomBytes(2500);
    for (const source of [new Uint8Array(bytes), new Blob([bytes])]) {
      const pieces = await cutIntoPieces(source, 1000);
      expect(pieces.map((p) => p.byteLength)).toEqual([1000, 1000, 500]);
      expect(pieces.every((p) => p.byteOffset === 0 && p.buffer.byteLength === p.byteLength)).toBe(true);
      expect(new Uint8Array(Buffer.concat(pieces))).toEqual(new Uint8Array(bytes));
    }
  });
});

/** A fake-indexeddb that refuses Blob values as WebKit's ephemeral storage does. */
function refusingBlobs(how: 'unknown' | 'quota'): () => void {
  const put = IDBObjectStore.prototype.put;
  const add = IDBObjectStore.prototype.add;
  const holdsBlob = (v: unknown) => typeof v === 'object' && v !== null && Object.values(v).some((x) => x instanceof Blob);
  const refuse = (original: typeof put) => function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
    if (holdsBlob(value)) {
      throw how === 'quota'
        ? new DOMException('The quota has been exceeded.', 'QuotaExceededError')
        : new DOMException('Error preparing Blob/File data to be stored in object store', 'UnknownError');
    }
    return original.call(this, value, key);
  };
  IDBObjectStore.prototype.put = refuse(put);
  IDBObjectStore.prototype.add = refuse(add);
  return () => {
    IDBObjectStore.prototype.put = put;
    IDBObjectStore.prototype.add = add;
  };
}

describe('the store finds out once whether IndexedDB keeps Blobs', () => {
  it('keeps bodies as pieces where Blobs are refused, and every write and read works', async () => {
    const restore = refusingBlobs('unknown');
    try {
      const store = await openIdbStore({ indexedDB: new IDBFactory(), name: 'refuses' });
      expect(store.bodyForm).toBe('pieces');
      expect(store.blobsAreHandles).toBe(false);
      const handle = createHandler({ store });
      expect((await send(handle, 'PUT', `${B}/`)).status).toBe(200);
      const bytes = randomBytes(3 * 256 * 1024 + 17); // over a snapshot: it streams
      const put = await send(handle, 'PUT', `${B}/big`, { body: bytes });
      expect(put.status).toBe(200);
      expect(put.headers.get('etag')).toBe(`"${md5(bytes)}"`);
      const got = await handle(await buildRequest('GET', `${B}/big`));
      expect(new Uint8Array(await got.arrayBuffer())).toEqual(new Uint8Array(bytes));
      const range = await handle(await buildRequest('GET', `${B}/big`, { headers: { range: 'bytes=262140-262150' } }));
      expect(range.status).toBe(206);
      expect(new Uint8Array(await range.arrayBuffer())).toEqual(new Uint8Array(bytes.subarray(262140, 262151)));
      const c = await contents(store);
      expect(await (await store.db()).count('pieces')).toBe(4);
      expect(integrity(c)).toEqual(SOUND);
      expect((await send(handle, 'DELETE', `${B}/big`)).status).toBe(200);
      expect(await (await store.db()).count('pieces')).toBe(0);
    } finally {
      restore();
    }
  });

  it('a refusal for room is no answer: Blobs stay the form', async () => {
    const restore = refusingBlobs('quota');
    try {
      expect((await openIdbStore({ indexedDB: new IDBFactory(), name: 'full' })).bodyForm).toBe('blobs');
    } finally {
      restore();
    }
  });

  it('keeps Blobs where they are kept, and the probe leaves nothing behind', async () => {
    const store = await openIdbStore({ indexedDB: new IDBFactory(), name: 'keeps' });
    expect(store.bodyForm).toBe('blobs');
    expect(await (await store.db()).count('bodies')).toBe(0);
  });
});

describe('a database with Blob bodies opened where Blobs are refused', () => {
  it('reads, copies, completes and deletes the old bodies beside new pieces', async () => {
    const factory = new IDBFactory();
    const before = await openIdbStore({ indexedDB: factory, name: 'mixed', bodies: 'blobs' });
    const h1 = createHandler({ store: before });
    expect((await send(h1, 'PUT', `${B}/`)).status).toBe(200);
    const old = randomBytes(40_000);
    expect((await send(h1, 'PUT', `${B}/old`, { body: old })).status).toBe(200);
    const init = await send(h1, 'POST', `${B}/mp?uploads`);
    const uploadId = /<UploadId>([^<]+)</.exec(init.text)![1]!;
    const part1 = randomBytes(20_000);
    const e1 = (await send(h1, 'PUT', `${B}/mp?partNumber=1&uploadId=${uploadId}`, { body: part1 })).headers.get('etag')!;
    before.close();

    const after = await openIdbStore({ indexedDB: factory, name: 'mixed', bodies: 'pieces', sizes: { pieceBytes: 4096, snapshotBytes: 10_000 } });
    const h2 = createHandler({ store: after });
    expect(new Uint8Array(await (await h2(await buildRequest('GET', `${B}/old`))).arrayBuffer())).toEqual(new Uint8Array(old));
    // A part kept as pieces beside one kept as a Blob: Complete joins them without copying either.
    const part2 = randomBytes(30_000);
    const e2 = (await send(h2, 'PUT', `${B}/mp?partNumber=2&uploadId=${uploadId}`, { body: part2 })).headers.get('etag')!;
    const piecesBefore = await (await after.db()).count('pieces');
    const done = await send(h2, 'POST', `${B}/mp?uploadId=${uploadId}`, {
      body: `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${e1}</ETag></Part><Part><PartNumber>2</PartNumber><ETag>${e2}</ETag></Part></CompleteMultipartUpload>`,
    });
    expect(done.status).toBe(200);
    expect(await (await after.db()).count('pieces')).toBe(piecesBefore);
    const whole = new Uint8Array([...part1, ...part2]);
    expect(new Uint8Array(await (await h2(await buildRequest('GET', `${B}/mp`))).arrayBuffer())).toEqual(whole);
    const across = await h2(await buildRequest('GET', `${B}/mp`, { headers: { range: 'bytes=19990-20009' } }));
    expect(new Uint8Array(await across.arrayBuffer())).toEqual(whole.subarray(19990, 20010));
    // A copy of the Blob body is kept as pieces.
    expect((await send(h2, 'PUT', `${B}/copy`, { headers: { 'x-svc-copy-source': '/photos/old' } })).status).toBe(200);
    expect(new Uint8Array(await (await h2(await buildRequest('GET', `${B}/copy`))).arrayBuffer())).toEqual(new Uint8Array(old));
    expect(integrity(await contents(after))).toEqual(SOUND);
    for (const k of ['old', 'mp', 'copy']) expect((await send(h2, 'DELETE', `${B}/${k}`)).status).toBe(200);
    const c = await contents(after);
    expect(integrity(c)).toEqual(SOUND);
    expect(c.bodies).toEqual([]);
    expect(await (await after.db()).count('pieces')).toBe(0);
  });
});
