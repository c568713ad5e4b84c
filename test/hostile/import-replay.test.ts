// Issue 23 (noted): a captured root import request could be sent again with another archive for as
// long as its signature was valid, since the body was not covered. swbucket/client's
// importArchive() now sends Content-MD5, which the signature covers and the service checks: the
// same request with other bytes is 400 BadDigest and imports nothing; with a Content-MD5 made to
// fit the other bytes, the signature no longer matches (403). Against `swbucket serve`, as a
// script's client and an attacker on the wire would meet it.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createHash } from 'node:crypto';
import { packTar } from 'modern-tar';
import { startServer, type RunningServer } from '../../node/server.ts';
import { createClient } from '../../src/client/index.ts';
import { signHeaders } from '../support/sign.ts';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ port: 0, log: () => {} });
});
afterAll(async () => {
  await server?.close();
});

const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');

async function archive(bucket: string, key: string, body: string): Promise<Uint8Array<ArrayBuffer>> {
  const manifest = JSON.stringify({
    format: 'swbucket-archive', version: 1,
    buckets: [{ name: bucket, owner: 'svcadmin', acl: 'private', created: 0, nextVersionId: 1 }],
    objects: [{ bucket, key, current: true, file: `objects/${bucket}/${key}`, size: body.length, etag: md5(body), lastModified: 0, contentType: 'text/plain', headers: {}, meta: [] }],
  });
  return (await packTar([
    { header: { name: 'swbucket.json', size: Buffer.byteLength(manifest) }, body: manifest },
    { header: { name: `objects/${bucket}/${key}`, size: body.length }, body },
  ])) as Uint8Array<ArrayBuffer>;
}

describe("a captured import request sent again with another archive", () => {
  it('is refused: importArchive() signs a Content-MD5 and the service checks it', async () => {
    let captured: { url: string; headers: Headers } | undefined;
    const client = createClient({
      endpoint: server.url, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret',
      fetch: (input, init) => {
        if (String(input).includes('import')) captured = { url: String(input), headers: new Headers(init?.headers) };
        return fetch(input, init);
      },
    });
    const genuine = await archive('genuine', 'k', 'the real archive');
    expect((await client.importArchive(new Blob([genuine]))).objectsRestored).toBe(1);
    expect(captured?.headers.get('content-md5')).toBe(Buffer.from(md5(genuine), 'hex').toString('base64'));

    // The attacker's archive under the captured headers.
    const forged = await archive('forged', 'k', 'the attacker archive');
    const replay = await fetch(captured!.url, { method: 'POST', headers: captured!.headers, body: forged });
    const text = await replay.text();
    expect([replay.status, /<Code>([^<]*)</.exec(text)?.[1]], text).toEqual([400, 'BadDigest']);
    expect(text).toContain('Nothing was imported.');
    // A Content-MD5 made to fit: then the signature does not match.
    const refitted = new Headers(captured!.headers);
    refitted.set('content-md5', Buffer.from(md5(forged), 'hex').toString('base64'));
    const second = await fetch(captured!.url, { method: 'POST', headers: refitted, body: forged });
    expect(second.status, await second.text()).toBe(403);
    // Nothing of the forged archive is there.
    expect((await client.listBuckets()).buckets.map((b) => b.name)).toEqual(['genuine']);
  });

  it('the digest covers every byte sent: an archive padded to whole 10 KiB records, as tar tools write it, imports with its Content-MD5', async () => {
    const client = createClient({ endpoint: server.url, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
    const bare = await archive('padded', 'k', 'padded as GNU tar pads');
    const padded = new Uint8Array(Math.ceil((bare.byteLength + 1) / 10240) * 10240);
    padded.set(bare);
    expect((await client.importArchive(padded)).objectsRestored).toBe(1);
  });

  it('a signed Content-MD5 that is not one is 400 InvalidDigest, and imports nothing', async () => {
    const url = `${server.url}/?import`;
    const headers = signHeaders('POST', url, new Headers({ 'content-md5': 'not-a-digest', 'content-type': 'application/x-tar' }));
    const r = await fetch(url, { method: 'POST', headers, body: await archive('bad-digest', 'k', 'x') });
    const text = await r.text();
    expect([r.status, /<Code>([^<]*)</.exec(text)?.[1]], text).toEqual([400, 'InvalidDigest']);
    const client = createClient({ endpoint: server.url, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
    expect((await client.listBuckets()).buckets.map((b) => b.name)).not.toContain('bad-digest');
  });
});
