// The third adversarial pass (issue 37), its parsers and limits: requests within every size limit
// that still made the service read, hold or parse far more than they carry, or that changed what
// they were refused for. Through the handler over every store kind; requests signed with the AWS
// SDK's signer (test/support/s3-sign.ts). No timing is asserted: each test shows the request is
// answered from less than it would have read (a body that never ends, a count of bytes read).
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createHandler } from '../../sw/core/handler.ts';
import { openStore } from '../../sw/store/rules/store.ts';
import { PIECES } from '../../sw/store/schema.ts';
import type { Engine, Read } from '../../sw/store/engine/types.ts';
import { STORE_KINDS, SOUND, contents, integrity, openTestEngine, type StoreKind } from '../support/stores.ts';
import { s3, signedHeaders } from '../support/s3-sign.ts';

const te = new TextEncoder();
const MiB = 1024 * 1024;
const at = (key = '') => `http://lim.s3.localhost/${key}`;
const codeOf = (text: string) => /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

/** `inner`, counting the bytes its read steps take from PIECES (bodies kept as pieces). */
function countingPieces(inner: Engine): Engine & { pieceBytes: number } {
  const counted = {
    pieceBytes: 0,
    keepsBlobs: inner.keepsBlobs,
    close: () => inner.close(),
    write: inner.write.bind(inner),
    read: <R>(tables: Parameters<Engine['read']>[0], step: Parameters<Engine['read']>[1] & ((w: never) => Generator<Read, R, unknown>)) =>
      inner.read(tables, function* (w) {
        const g = step(w);
        let next = g.next();
        while (!next.done) {
          const answer: unknown = yield next.value;
          tally(next.value, answer);
          next = g.next(answer);
        }
        return next.value;
      }),
  };
  const tally = (read: Read, answer: unknown) => {
    if (read.op === 'all') read.reads.forEach((r, i) => tally(r, (answer as unknown[])[i]));
    else if (read.table === PIECES && read.op === 'range') for (const p of answer as Uint8Array[]) counted.pieceBytes += p.byteLength;
    else if (read.table === PIECES && read.op === 'get' && answer instanceof Uint8Array) counted.pieceBytes += answer.byteLength;
  };
  return counted as Engine & { pieceBytes: number };
}

async function service(kind: StoreKind) {
  const { engine, sizes } = await openTestEngine(kind);
  const counting = countingPieces(engine);
  const store = openStore(counting, { ...(sizes ? { sizes } : {}), mayHavePieces: !engine.keepsBlobs });
  const handle = createHandler({ store });
  const call = async (req: Request | Promise<Request>) => {
    const res = await handle(await req);
    const text = await res.text();
    return { status: res.status, code: codeOf(text), text, headers: res.headers };
  };
  const ok = async (req: Request | Promise<Request>) => {
    const r = await call(req);
    expect(r.status, r.text).toBeLessThan(300);
    return r;
  };
  await ok(s3('PUT', at()));
  /** A multipart object of these parts; its upload's id and the parts' ETags. */
  const multipart = async (key: string, parts: Uint8Array<ArrayBuffer>[]) => {
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec((await ok(s3('POST', `${at(key)}?uploads`))).text)![1]!;
    for (const [i, p] of parts.entries()) await ok(s3('PUT', `${at(key)}?partNumber=${i + 1}&uploadId=${uploadId}`, p));
    const list = parts.map((p, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>"${md5(p)}"</ETag></Part>`).join('');
    await ok(s3('POST', `${at(key)}?uploadId=${uploadId}`, te.encode(`<CompleteMultipartUpload>${list}</CompleteMultipartUpload>`)));
  };
  return { store, counting, call, ok, multipart };
}

/** A body that sends `head` and then nothing, ever: a request that waits for more of it never answers. */
function endless(head: string): ReadableStream<Uint8Array> {
  return new ReadableStream({ start: (c) => c.enqueue(te.encode(head)) });
}

describe.each(STORE_KINDS)('limits under attack (%s)', (kind) => {
  it('UploadPartCopy reads only the range it copies, and sizes it first; a whole source over a part is refused unread', async () => {
    const s = await service(kind);
    const part1 = new Uint8Array(5 * MiB).map((_, i) => i % 251);
    await s.multipart('src', [part1, te.encode('tail')]);
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec((await s.ok(s3('POST', `${at('dst')}?uploads`))).text)![1]!;
    s.counting.pieceBytes = 0;
    const copied = await s.call(s3('PUT', `${at('dst')}?partNumber=1&uploadId=${uploadId}`, undefined, { headers: { 'x-amz-copy-source': '/lim/src', 'x-amz-copy-source-range': 'bytes=0-0' } }));
    expect(copied.status, copied.text).toBe(200);
    expect(copied.text.replace(/&quot;/g, '"')).toContain(`"${md5(part1.subarray(0, 1))}"`);
    // Engines that keep Blobs read no pieces at all; those that keep pieces read the first one or two.
    expect(s.counting.pieceBytes).toBeLessThan(MiB);
    expect(integrity(await contents(s.store))).toEqual(SOUND);
  });

  it('a refused DeleteBucket keeps the uploads in progress; one whose only contents are uploads takes them with it (S3)', async () => {
    const s = await service(kind);
    await s.ok(s3('PUT', at('kept'), te.encode('an object')));
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec((await s.ok(s3('POST', `${at('big')}?uploads`))).text)![1]!;
    await s.ok(s3('PUT', `${at('big')}?partNumber=1&uploadId=${uploadId}`, te.encode('a part in progress')));
    const refused = await s.call(s3('DELETE', at()));
    expect([refused.status, refused.code]).toEqual([409, 'BucketNotEmpty']);
    const parts = await s.call(s3('GET', `${at('big')}?uploadId=${uploadId}`));
    expect([parts.status, parts.text.includes('<PartNumber>1</PartNumber>')]).toEqual([200, true]);
    await s.ok(s3('DELETE', at('kept')));
    expect((await s.call(s3('DELETE', at()))).status).toBe(204);
    expect((await s.call(s3('HEAD', at()))).status).toBe(404);
    expect(integrity(await contents(s.store))).toEqual(SOUND);
  });

  it('DeleteObjects deletes the key its XML names: CDATA is literal, character references with leading zeros are characters', async () => {
    const s = await service(kind);
    for (const key of ['a&amp;b', 'a&b', 'A', '&foo;', '&#00000000065;']) await s.ok(s3('PUT', at(encodeURIComponent(key)), te.encode(key)));
    const xml = '<Delete><Quiet>true</Quiet><Object><Key><![CDATA[a&amp;b]]></Key></Object><Object><Key>&#00000000065;</Key></Object>'
      + '<Object><Key><![CDATA[&foo;]]></Key></Object></Delete>';
    const r = await s.call(s3('POST', `${at()}?delete`, te.encode(xml), { headers: { 'content-md5': createHash('md5').update(xml).digest('base64') } }));
    expect(r.status, r.text).toBe(200);
    const listed = await s.ok(s3('GET', `${at()}?list-type=2`));
    expect([...listed.text.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!.replace(/&amp;/g, '&'))).toEqual(['&#00000000065;', 'a&b']);
    const hex = '<Delete><Object><Key>&#x0000061;&amp;b</Key></Object></Delete>';
    expect((await s.call(s3('POST', `${at()}?delete`, te.encode(hex), { headers: { 'content-md5': createHash('md5').update(hex).digest('base64') } }))).status).toBe(200);
    expect((await s.call(s3('HEAD', at('a%26b')))).status).toBe(404);
  });

  it('a signed aws-chunked chunk larger than the body may be is refused at its header, without waiting for its bytes', async () => {
    const s = await service(kind);
    const chunked = async (url: string, decoded: string | null) => {
      const headers = await signedHeaders('PUT', url, undefined, {
        contentSha256: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
        headers: { 'content-encoding': 'aws-chunked', ...(decoded !== null ? { 'x-amz-decoded-content-length': decoded } : {}), 'content-length': String(16 * MiB + 100) },
      });
      // 16 MiB announced, none of it ever sent: a service that reads the chunk first never answers.
      const body = endless(`1000000;chunk-signature=${'0'.repeat(64)}\r\n`);
      return s.call(new Request(url, { method: 'PUT', headers, body, duplex: 'half' } as RequestInit));
    };
    const put = await chunked(at('k'), '10');
    expect([put.status, put.code], put.text).toEqual([400, 'IncompleteBody']);
    const versioning = await chunked(`${at()}?versioning`, null);
    expect([versioning.status, versioning.code], versioning.text).toEqual([400, 'MalformedXML']);
    expect((await s.call(s3('HEAD', at('k')))).status).toBe(404);
  });

  it('a Complete or DeleteObjects body of a flood of elements within its size is refused before it is parsed', async () => {
    const s = await service(kind);
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec((await s.ok(s3('POST', `${at('m')}?uploads`))).text)![1]!;
    const flood = te.encode(`<CompleteMultipartUpload>${'<x/>'.repeat(1_000_000)}</CompleteMultipartUpload>`);
    const complete = await s.call(s3('POST', `${at('m')}?uploadId=${uploadId}`, flood));
    expect([complete.status, complete.code]).toEqual([400, 'MalformedXML']);
    expect(complete.text).toContain('tags');
    const many = `<Delete>${'<Object><Key>k</Key></Object>'.repeat(1000)}${'<x/>'.repeat(400_000)}</Delete>`;
    const deleted = await s.call(s3('POST', `${at()}?delete`, te.encode(many), { headers: { 'content-md5': createHash('md5').update(many).digest('base64') } }));
    expect([deleted.status, deleted.code]).toEqual([400, 'MalformedXML']);
    expect(deleted.text).toContain('tags');
    // The upload is as it was.
    expect((await s.call(s3('GET', `${at('m')}?uploadId=${uploadId}`))).status).toBe(200);
  });

  it('a CORS preflight asking for more than 100 headers is refused, whatever the rules allow', async () => {
    const s = await service(kind);
    const rules = '<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>*</AllowedHeader></CORSRule></CORSConfiguration>';
    await s.ok(s3('PUT', `${at()}?cors`, te.encode(rules)));
    const preflight = (n: number) => s.call(new Request(at('k'), {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': Array.from({ length: n }, (_, i) => `x-h${i}`).join(',') },
    }));
    expect((await preflight(100)).status).toBe(200);
    const many = await preflight(101);
    expect([many.status, many.code]).toEqual([403, 'AccessForbidden']);
  });
});

describe('CopyObject', () => {
  it('a source larger than a PUT may be is refused unread (S3\'s InvalidRequest; it copies in parts)', async () => {
    const s = await service('idb');
    await s.multipart('huge', [new Uint8Array(100 * MiB), te.encode('just past 100 MiB')]);
    const r = await s.call(s3('PUT', at('copy'), undefined, { headers: { 'x-amz-copy-source': '/lim/huge' } }));
    expect([r.status, r.code], r.text).toEqual([400, 'InvalidRequest']);
    expect(r.text).toContain('UploadPartCopy');
    expect((await s.call(s3('HEAD', at('copy')))).status).toBe(404);
  }, 120_000);
});
