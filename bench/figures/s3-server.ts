// Figure 12: `swbucket serve` in S3's dialect against s3rver, the AWS SDK v3 in this Node process
// the client of both (issue 24). The servers are figure 8's: each a process of its own on a free
// loopback port (swbucket in memory, as `swbucket serve` starts; s3rver with a data directory), the
// bucket `bench` made on each. The SDK is used as an app would, with its defaults (path style, as
// for any endpoint on an IP address): a Buffer body gets its SHA-256 as x-amz-content-sha256 and a
// CRC32 as x-amz-checksum-crc32, a GET asks for the checksum back (x-amz-checksum-mode). swbucket
// signs as root (svcadmin), s3rver as its own default account (S3RVER/S3RVER, whose signatures it
// checks). PUT and GET of 1 KiB (40 one after another per sample, and 320 with 16 in flight) and
// 1 MiB (4 per sample), and ListObjectsV2 of 1,000 objects. No browser.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { BUCKET, start, type Server } from './server.ts';
import { KiB, MiB, median, pairs, rounds, spread } from '../lib/stats.ts';
import { row, type Row } from '../lib/report.ts';

type Side = 'swbucket' | 's3rver';
const SIDES: readonly Side[] = ['swbucket', 's3rver'];

/** Requests in flight together in the concurrent row, as in figure 8. */
const CONNECTIONS = 16;
const N_SMALL = 40;
const N_BIG = 4;
const N_FLIGHT = 320;
const N_LIST = 1000;
/** Listings per sample. */
const LISTS = 3;

const CREDENTIALS: Record<Side, S3ClientConfig['credentials']> = {
  swbucket: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' },
  s3rver: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
};

async function put(s3: S3Client, key: string, body: Buffer): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
}

async function get(s3: S3Client, key: string, size: number): Promise<void> {
  const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  const got = (await out.Body!.transformToByteArray()).byteLength;
  if (got !== size) throw new Error(`GET ${key}: ${got} bytes, expected ${size}`);
}

/** ms for `n` steps, one after another. */
async function timeSeq(n: number, one: (i: number) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await one(i);
  return performance.now() - t0;
}

/** ms for `n` steps, CONNECTIONS of them in flight at a time. */
async function timeFlight(n: number, one: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (next < n) await one(next++);
  }));
  return performance.now() - t0;
}

/** Every key under `prefix` with ListObjectsV2, following continuation tokens; the count. */
async function listAll(s3: S3Client, prefix: string): Promise<number> {
  let count = 0;
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }));
    count += page.KeyCount ?? page.Contents?.length ?? 0;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return count;
}

type Op = 'put' | 'get' | 'bigPut' | 'bigGet' | 'flightPut' | 'flightGet' | 'list';

export async function s3ServerFigure(log: (line: string) => void): Promise<Row[]> {
  const dir = await mkdtemp(join(tmpdir(), 'swbucket-bench-s3-server-'));
  const servers: Partial<Record<Side, Server>> = {};
  const clients: Partial<Record<Side, S3Client>> = {};
  try {
    servers.swbucket = await start('memory', dir);
    servers.s3rver = await start('s3', dir);
    for (const side of SIDES) {
      clients[side] = new S3Client({
        endpoint: `http://127.0.0.1:${servers[side]!.port}`, region: 'us-east-1', forcePathStyle: true, credentials: CREDENTIALS[side],
      });
    }
    const small = Buffer.alloc(KiB, 0x5a);
    const big = Buffer.alloc(MiB, 0xa5);
    // The objects listed: 1,000 × 1 KiB under a prefix of their own, put once (not timed).
    for (const side of SIDES) {
      await timeFlight(N_LIST, (i) => put(clients[side]!, `list/${String(i).padStart(4, '0')}`, small));
      const count = await listAll(clients[side]!, 'list/');
      if (count !== N_LIST) throw new Error(`${side} listed ${count} of ${N_LIST}`);
    }

    const ms = Object.fromEntries(SIDES.map((s) => [s, { put: [], get: [], bigPut: [], bigGet: [], flightPut: [], flightGet: [], list: [] }])) as unknown as Record<Side, Record<Op, number[]>>;
    await rounds(SIDES, 9, async (side, keep) => {
      const s3 = clients[side]!;
      const sample: Record<Op, number> = {
        put: await timeSeq(N_SMALL, (i) => put(s3, `s/${i}`, small)) / N_SMALL,
        get: await timeSeq(N_SMALL, (i) => get(s3, `s/${i}`, KiB)) / N_SMALL,
        bigPut: await timeSeq(N_BIG, (i) => put(s3, `b/${i}`, big)) / N_BIG,
        bigGet: await timeSeq(N_BIG, (i) => get(s3, `b/${i}`, MiB)) / N_BIG,
        flightPut: await timeFlight(N_FLIGHT, (i) => put(s3, `c/${i}`, small)) / N_FLIGHT,
        flightGet: await timeFlight(N_FLIGHT, (i) => get(s3, `c/${i}`, KiB)) / N_FLIGHT,
        list: await timeSeq(LISTS, async () => {
          const count = await listAll(s3, 'list/');
          if (count !== N_LIST) throw new Error(`${side} listed ${count} of ${N_LIST}`);
        }) / LISTS,
      };
      if (keep) for (const op of Object.keys(sample) as Op[]) ms[side][op].push(sample[op]);
    }, { budgetMs: 60_000 });

    const m = (side: Side, op: Op) => median(ms[side][op]);
    const f = (x: number) => x.toFixed(2);
    log('  ' + SIDES.map((s) => `${s}: PUT 1 KiB ${f(m(s, 'put'))} ms, GET 1 KiB ${f(m(s, 'get'))} ms, PUT 1 MiB ${f(m(s, 'bigPut'))} ms, GET 1 MiB ${f(m(s, 'bigGet'))} ms, `
      + `${CONNECTIONS} in flight PUT/GET 1 KiB ${f(m(s, 'flightPut'))}/${f(m(s, 'flightGet'))} ms/op, list ${N_LIST} ${f(m(s, 'list'))} ms`).join(' | '));

    const ops = (x: number) => 1000 / x;
    const note = (op: Op, per: string) => `${per}; ${op === 'list' ? 'ms per listing' : 'ms/op'} swbucket ${spread(ms.swbucket[op], 2)}, s3rver ${spread(ms.s3rver[op], 2)}`;
    /** A rate row (ops/s, higher is better): per-round ratios s3rver's time ÷ swbucket's. */
    const rate = (name: string, op: Op, unit: string, per: string, scale = 1) =>
      row(12, name, scale * ops(m('swbucket', op)), scale * ops(m('s3rver', op)), unit, null, note(op, per), pairs(ms.s3rver[op], ms.swbucket[op]));
    /** A time row (ms, lower is better). */
    const time = (name: string, op: Op, per: string) =>
      row(12, name, m('swbucket', op), m('s3rver', op), 'ms', null, note(op, per), pairs(ms.swbucket[op], ms.s3rver[op]));
    return [
      rate('server S3 (AWS SDK): PUT 1 KiB vs s3rver', 'put', 'ops/s', `${N_SMALL} ops per sample, one after another`),
      rate('server S3 (AWS SDK): GET 1 KiB vs s3rver', 'get', 'ops/s', `${N_SMALL} ops per sample, one after another`),
      time('server S3 (AWS SDK): PUT 1 MiB vs s3rver', 'bigPut', `${N_BIG} ops per sample, one after another`),
      time('server S3 (AWS SDK): GET 1 MiB vs s3rver', 'bigGet', `${N_BIG} ops per sample, one after another`),
      rate(`server S3 (AWS SDK), ${CONNECTIONS} in flight: PUT 1 KiB vs s3rver`, 'flightPut', 'ops/s', `${N_FLIGHT} ops per sample, ms/op = wall ÷ ops`),
      rate(`server S3 (AWS SDK), ${CONNECTIONS} in flight: GET 1 KiB vs s3rver`, 'flightGet', 'ops/s', `${N_FLIGHT} ops per sample, ms/op = wall ÷ ops`),
      rate(`server S3 (AWS SDK): ListObjectsV2 of ${N_LIST.toLocaleString('en')} objects vs s3rver`, 'list', 'objects/s',
        `${LISTS} listings per sample, one page of 1,000 each`, N_LIST),
    ];
  } finally {
    for (const c of Object.values(clients)) c.destroy();
    for (const s of Object.values(servers)) {
      s.agent.destroy();
      s.pool.destroy();
      s.child.kill('SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
  }
}
