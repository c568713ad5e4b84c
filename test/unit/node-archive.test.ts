// swbucket/node's archive helpers against real servers over HTTP (the CLI's export, import and
// --seed are these): a file written whole or not at all, a seed only into an empty store.
import { describe, it, expect, afterEach } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../../node/server.ts';
import { exportToFile, importFromFile, rootClient, seedIfEmpty } from '../../node/archive.ts';

const running: RunningServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function server(): Promise<RunningServer> {
  const s = await startServer({ port: 0, log: () => {} });
  running.push(s);
  return s;
}

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'swbucket-node-archive-'));
  dirs.push(d);
  return d;
}

describe('seedIfEmpty', () => {
  it('imports into an empty server, and leaves one with a bucket or an account alone', async () => {
    const a = await server();
    const first = await seedIfEmpty({ endpoint: a.url }, 'examples/vanilla/public/welcome.tar');
    expect(first).toMatchObject({ objectsRestored: 1, bucketsCreated: 1 });
    expect(await seedIfEmpty({ endpoint: a.url }, 'examples/vanilla/public/welcome.tar')).toBeNull();
    // An account of someone's own is data too.
    const b = await server();
    await rootClient({ endpoint: b.url }).putAccount('alice', { secretAccessKey: 'alice-secret' });
    expect(await seedIfEmpty({ endpoint: b.url }, 'examples/vanilla/public/welcome.tar')).toBeNull();
    expect((await rootClient({ endpoint: b.url }).listBuckets()).buckets).toEqual([]);
  });
});

describe('exportToFile / importFromFile', () => {
  it('round-trips between servers; a failed export leaves no file', async () => {
    const a = await server();
    const s3 = rootClient({ endpoint: a.url });
    await s3.createBucket('photos');
    const big = new Uint8Array(3 * 1024 * 1024).map((_, i) => i % 251);
    await s3.putObject('photos', 'big.bin', big, { metadata: { kind: 'test' } });
    const dir = tmp();
    let reported = 0;
    const out = await exportToFile({ endpoint: a.url }, (name) => join(dir, name), {}, (written) => (reported = written));
    expect(out.file).toMatch(/swbucket-\d{8}-\d{6}\.tar$/);
    expect(out.objects).toBe(1);
    expect(reported).toBe(out.bytes);
    const b = await server();
    expect(await importFromFile({ endpoint: b.url }, out.file)).toMatchObject({ objectsRestored: 1, bytesRestored: big.length });
    const got = await rootClient({ endpoint: b.url }).getObject('photos', 'big.bin');
    expect(Buffer.compare(Buffer.from(await got.response.arrayBuffer()), Buffer.from(big)), 'the same bytes').toBe(0);
    expect(got.metadata).toEqual({ kind: 'test' });

    // Asked for a bucket that does not exist: refused before any byte, and no file or .partial is left.
    await expect(exportToFile({ endpoint: a.url }, join(dir, 'x.tar'), { buckets: ['nope'] })).rejects.toMatchObject({ code: 'NoSuchBucket' });
    expect(existsSync(join(dir, 'x.tar'))).toBe(false);
    expect(readdirSync(dir).filter((f) => f.endsWith('.partial'))).toEqual([]);
  });
});
