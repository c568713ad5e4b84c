// swbucket/client in Node against the HTTP server, as a Node script or test would use it: the
// endpoint is an IP address, so buckets go path style; hashing runs in place (Node has no Worker).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createHash } from 'node:crypto';
import { startServer, type RunningServer } from '../../node/server.ts';
import { createClient, SvcClientError } from '../../src/client/index.ts';

let server: RunningServer;
const lines: string[] = [];
beforeAll(async () => {
  server = await startServer({ port: 0, log: (line) => lines.push(line) });
});
afterAll(async () => {
  await server?.close();
});

/** A root client whose requests are recorded as they leave (their URLs). */
function recordingClient() {
  const sent: string[] = [];
  const s3 = createClient({
    endpoint: server.url, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret',
    fetch: (input, init) => {
      sent.push(String(input));
      return fetch(input, init);
    },
  });
  return { s3, sent };
}

describe('swbucket/client in Node, against swbucket serve', () => {
  it('creates, writes with Content-MD5, reads, lists, presigns and deletes over path-style URLs', async () => {
    const s3 = createClient({ endpoint: server.url, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
    await s3.createBucket('node-client');
    const body = 'hello from node, with a key that needs encoding';
    const put = await s3.putObject('node-client', 'a b/c+d.txt', body, { contentType: 'text/plain', metadata: { who: 'node' } });
    expect(put.etag).toBe(createHash('md5').update(body).digest('hex'));

    const got = await s3.getObject('node-client', 'a b/c+d.txt', { range: { start: 0, end: 4 } });
    expect(got.status).toBe(206);
    expect(await got.response.text()).toBe('hello');
    expect((await s3.headObject('node-client', 'a b/c+d.txt')).metadata).toEqual({ who: 'node' });

    const page = await s3.listObjects('node-client', { delimiter: '/' });
    expect(page.commonPrefixes).toEqual(['a b/']);

    const link = await s3.presign('node-client', 'a b/c+d.txt', { expiresIn: 60 });
    expect(new URL(link).pathname).toBe('/node-client/a%20b/c%2Bd.txt');
    const linked = await fetch(link);
    expect(linked.status).toBe(200);
    expect(await linked.text()).toBe(body);

    await s3.deleteObject('node-client', 'a b/c+d.txt');
    const missing = await s3.getObject('node-client', 'a b/c+d.txt').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(SvcClientError);
    expect(missing).toMatchObject({ code: 'NoSuchKey', status: 404 });
    // Every request was path style on the service host, and signed as root.
    expect(lines.filter((l) => l.includes('/node-client')).every((l) => l.includes(`${new URL(server.url).host}/node-client`))).toBe(true);
  });

  it('addresses virtual hosts for a named endpoint, path style when asked', () => {
    const urlOf = async (o: { endpoint: string; pathStyle?: boolean }) =>
      new URL(await createClient({ ...o, accessKeyId: 'a', secretAccessKey: 'b' }).presign('bkt', 'k')).href.split('?')[0];
    return Promise.all([
      expect(urlOf({ endpoint: 'http://svc.localhost' })).resolves.toBe('http://bkt.svc.localhost/k'),
      expect(urlOf({ endpoint: 'http://localhost:9000' })).resolves.toBe('http://localhost:9000/bkt/k'),
      expect(urlOf({ endpoint: 'http://[::1]:9000' })).resolves.toBe('http://[::1]:9000/bkt/k'),
      expect(urlOf({ endpoint: 'http://store.example', pathStyle: true })).resolves.toBe('http://store.example/bkt/k'),
      expect(urlOf({ endpoint: 'http://127.0.0.1:9000' })).resolves.toBe('http://127.0.0.1:9000/bkt/k'),
      expect(urlOf({ endpoint: 'http://localhost:9000', pathStyle: false })).resolves.toBe('http://bkt.localhost:9000/k'),
    ]);
  });
  it('a typed Blob with no contentType is stored with its own type: what fetch sends is what is signed', async () => {
    const s3 = createClient({ endpoint: server.url, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
    await s3.createBucket('typed-blobs');
    const png = new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' });
    await s3.putObject('typed-blobs', 'a.png', png);
    expect((await s3.headObject('typed-blobs', 'a.png')).contentType).toBe('image/png');
    // A contentType given wins over the Blob's.
    await s3.putObject('typed-blobs', 'b.bin', png, { contentType: 'application/octet-stream' });
    expect((await s3.headObject('typed-blobs', 'b.bin')).contentType).toBe('application/octet-stream');
    // upload(): in one PUT below the part size, and in parts above it.
    await s3.upload('typed-blobs', 'small.png', png);
    expect((await s3.headObject('typed-blobs', 'small.png')).contentType).toBe('image/png');
    const big = new Blob([new Uint8Array(5 * 1024 * 1024 + 10)], { type: 'video/mp4' });
    const up = await s3.upload('typed-blobs', 'big.mp4', big, { partSize: 5 * 1024 * 1024 });
    expect(up.partsSent).toBe(2);
    const head = await s3.headObject('typed-blobs', 'big.mp4');
    expect([head.contentType, head.size]).toEqual(['video/mp4', big.size]);
  });

  it('a body that is not bytes or text is refused before anything is sent, saying what to pass', async () => {
    const { s3, sent } = recordingClient();
    for (const body of [{ a: 1 }, 42, null, new Map()]) {
      await expect(s3.putObject('typed-blobs', 'x.json', body as unknown as string)).rejects.toThrow(/a body must be a Blob, File, ArrayBuffer, typed array or string.*JSON\.stringify/);
    }
    expect(sent).toEqual([]);
  });

  it('ensureBucket creates once and then says it exists; another account\'s bucket of that name stays an error', async () => {
    const root = createClient({ endpoint: server.url, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
    expect(await root.ensureBucket('ensured', { acl: 'public-read' })).toEqual({ created: true });
    expect(await root.ensureBucket('ensured')).toEqual({ created: false });
    expect(await root.getBucketAcl('ensured')).toBe('public-read');
    // Two at once, as React StrictMode's doubled effect does: one creates, neither fails.
    const both = await Promise.all([root.ensureBucket('ensured-twice'), root.ensureBucket('ensured-twice')]);
    expect(both.map((r) => r.created).sort()).toEqual([false, true]);
    await root.putAccount('alice', { secretAccessKey: 'alice-secret' });
    const alice = createClient({ endpoint: server.url, accessKeyId: 'alice', secretAccessKey: 'alice-secret' });
    await expect(alice.ensureBucket('ensured')).rejects.toMatchObject({ code: 'BucketAlreadyExists', status: 409 });
  });

  it('a bucket name the service would refuse is refused before sending, with the rule (and the lower-case name to try)', async () => {
    const { s3, sent } = recordingClient();
    await expect(s3.createBucket('MyPhotos')).rejects.toMatchObject({
      code: 'InvalidBucketName',
      message: expect.stringMatching(/"MyPhotos" is not valid: bucket names are 3–63 characters of a-z, 0-9 and -.*try "myphotos"/),
    });
    await expect(s3.putObject('My_Photos', 'k', 'x')).rejects.toMatchObject({ code: 'InvalidBucketName', message: expect.stringContaining('3–63 characters') });
    await expect(s3.presign('ab', 'k')).rejects.toMatchObject({ code: 'InvalidBucketName' });
    expect(sent).toEqual([]);
  });

  it('errors say what to do: a wrong secret, no credentials, a HEAD of a missing key', async () => {
    const root = createClient({ endpoint: server.url, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
    await root.ensureBucket('messages');
    const wrong = createClient({ endpoint: server.url, accessKeyId: 'svcadmin', secretAccessKey: 'not-it' });
    await expect(wrong.listObjects('messages')).rejects.toMatchObject({ code: 'AccessDenied', message: expect.stringContaining('check the secretAccessKey of "svcadmin"') });
    const anonymous = createClient({ endpoint: server.url });
    await expect(anonymous.listObjects('messages')).rejects.toMatchObject({ code: 'AccessDenied', message: expect.stringContaining('created with { accessKeyId, secretAccessKey }') });
    const missing = await root.headObject('messages', 'nothing-here').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(SvcClientError);
    expect(missing).toMatchObject({ code: 'NotFound', status: 404 });
    expect((missing as Error).message).toMatch(/^Not found: the bucket or the key does not exist\. \(A HEAD answer has no body/);
  });
  it('listObjects gives up to 1,000 keys when not told (the service alone answers 100)', async () => {
    const s3 = createClient({ endpoint: server.url, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
    await s3.ensureBucket('many-keys');
    await Promise.all(Array.from({ length: 150 }, (_, i) => s3.putObject('many-keys', `k${String(i).padStart(3, '0')}`, '', { checksum: false })));
    const all = await s3.listObjects('many-keys');
    expect([all.objects.length, all.isTruncated]).toEqual([150, false]);
    const page = await s3.listObjects('many-keys', { maxKeys: 100 });
    expect([page.objects.length, page.isTruncated]).toEqual([100, true]);
  });
});

describe("swbucket/client with dialect: 'nos'", () => {
  it('signs NOS, sends and reads x-nos- headers, presigns with NOSAccessKeyId: the same objects as the SVC dialect', async () => {
    const sent: Headers[] = [];
    const nos = createClient({
      endpoint: server.url, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret', dialect: 'nos',
      fetch: (input, init) => {
        sent.push(new Headers(init?.headers));
        return fetch(input, init);
      },
    });
    await nos.createBucket('nos-client', { acl: 'public-read' });
    expect(await nos.getBucketAcl('nos-client')).toBe('public-read');
    const put = await nos.putObject('nos-client', 'n.txt', 'via NOS', { contentType: 'text/plain', metadata: { who: 'nos' } });
    expect(put.requestId).toMatch(/^[0-9A-F]{16}$/);
    const last = sent.at(-1)!;
    expect(last.get('authorization')).toMatch(/^NOS svcadmin:/);
    expect([last.get('x-nos-meta-who'), last.has('x-nos-date'), last.has('x-svc-date')]).toEqual(['nos', true, false]);
    const got = await nos.getObject('nos-client', 'n.txt');
    expect([await got.response.text(), got.metadata]).toEqual(['via NOS', { who: 'nos' }]);
    await nos.copyObject({ bucket: 'nos-client', key: 'n.txt' }, 'nos-client', 'copy.txt');
    const svc = createClient({ endpoint: server.url, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
    expect((await svc.headObject('nos-client', 'copy.txt')).metadata).toEqual({ who: 'nos' });
    const url = new URL(await nos.presign('nos-client', 'n.txt', { expiresIn: 60 }));
    expect([url.searchParams.has('NOSAccessKeyId'), url.searchParams.has('SVCAccessKeyId')]).toEqual([true, false]);
    expect(await (await fetch(url)).text()).toBe('via NOS');
    const missing = await nos.getObject('nos-client', 'nothing').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(SvcClientError);
    expect([(missing as SvcClientError).code, (missing as SvcClientError).requestId]).toEqual(['NoSuchKey', expect.stringMatching(/^[0-9A-F]{16}$/)]);
  });
});
