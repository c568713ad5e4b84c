// Figure 11: S3's dialect through the worker against SVC's (issue 24). The same PUTs and GETs of
// 1 KiB and 1 MiB objects, made from the built site's page to its worker and stored in the same
// bucket, signed three ways: SVC's (the page's typed client), S3's with aws4fetch (a fetch signed in
// the page: the S3 edge with next to no client cost of its own), and S3's with the AWS SDK v3
// bundled into the page as an app would (its own middleware, signing and checksums on top). N
// one after another, and some in flight; every side in the same rounds, the order rotated.
// Reported as S3's time per operation relative to SVC's; the target, ≤ 1.1×, is the service's S3
// edge's: the aws4fetch rows. Three more PUT sides take the SDK's requests apart: its default
// checksums (a CRC32 and the body's SHA-256, which the worker checks: sw/core/payload.ts) on a
// Blob body (aws4fetch sending them) and on the bytes body the SDK sends them with, and a signed
// Content-Length, which the browser withholds from the worker (aws4fetch signing it as the SDK
// does). Beside the rounds: the SDK's own time per call with no service behind it, signing alone
// in the page, and what the browser costs to hand a worker a body that is not a Blob (the floor
// worker, bytes against Blob).
import { bundle, call } from '../lib/env.ts';
import { KiB, MiB, median, pairs, rounds, sizeName, spread } from '../lib/stats.ts';
import { row, type Row, type Target } from '../lib/report.ts';
import type { Ctx } from '../lib/context.ts';
import type { Page } from 'playwright-core';
import type { S3Side } from '../browser/s3-page.ts';

const SIDES: readonly S3Side[] = ['svc', 'a4f', 'sdk', 'a4fSums', 'sdkBytes', 'a4fLen', 'svcReq'];
/** Sides that also GET (the others differ from these only in how a PUT is signed or checksummed). */
const GETS = new Set<S3Side>(['svc', 'a4f', 'sdk']);
/** Sides timed with requests in flight too. */
const FLIGHT = new Set<S3Side>(['svc', 'a4f', 'sdk']);

/** Per size: sequential operations per sample, requests per in-flight sample and how many at once, rounds. */
const PLAN = [
  { size: KiB, seq: 20, flight: 32, concurrency: 8, reps: 11, budgetMs: 45_000 },
  { size: MiB, seq: 4, flight: 16, concurrency: 4, reps: 9, budgetMs: 45_000 },
];

export const S3_LABEL: Record<S3Side, string> = {
  svc: 'SVC',
  a4f: 'aws4fetch',
  a4fLen: 'aws4fetch signing Content-Length',
  a4fSums: 'aws4fetch with SHA-256 + CRC32',
  sdk: 'AWS SDK, Blob',
  sdkBytes: 'AWS SDK defaults, bytes: CRC32 + SHA-256',
  svcReq: 'SVC, its body in a Request as aws4fetch sends it',
};

type Op = 'put' | 'get' | 'putFlight' | 'getFlight';

export interface S3EdgeResult {
  rows: Row[];
  /** Per size, side and operation: median ms per operation. */
  medians: Record<number, Partial<Record<S3Side, Partial<Record<Op, number>>>>>;
  /** The SDK's own ms per call with no service behind it, per size. */
  sdkAlone: Record<number, { putBlob: number; putBytes: number; get: number }>;
  /** Signing alone in the page, ms: aws4fetch's, the SVC client's, and one crypto.subtle.digest. */
  sign?: { a4f: number; svc: number; digest: number };
  /** 1 MiB PUTs to the floor worker, ms: the body given to fetch() as a Blob and as a Uint8Array. */
  bodyForms?: { blob: number; bytes: number };
  /** What each side's PUT sent (headers the page gave fetch(), and the signed header names). */
  sent: Record<string, Record<string, string>>;
}

const callS3 = <T>(page: Page, name: string, ...args: unknown[]): Promise<T> => page.evaluate(
  ([n, a]) => (window as unknown as { __benchS3: Record<string, (...x: unknown[]) => unknown> }).__benchS3[n as string]!(...(a as unknown[])),
  [name, args] as const,
) as Promise<T>;

export async function s3EdgeFigure({ env, log, bucket }: Ctx): Promise<S3EdgeResult> {
  const page = env.pages.sw;
  const t0 = Date.now();
  await page.addScriptTag({ content: await bundle('s3-page.ts') });
  log(`  the AWS SDK and aws4fetch bundled into the page in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  await call(page, 'ensureBucket', 'sw', bucket);

  const rows: Row[] = [];
  const result: S3EdgeResult = { rows, medians: {}, sdkAlone: {}, sent: {} };
  const keys: string[] = [];
  const f = (x: number) => x.toFixed(2);
  try {
    for (const { size, seq, flight, concurrency, reps, budgetMs } of PLAN) {
      const name = sizeName(size);
      const id = `s3e-${size}`;
      await callS3(page, 'makeBody', id, size, size & 0xffff);
      if (size === MiB) {
        result.sent = await callS3(page, 'sentHeaders', bucket, id);
        const h = (side: S3Side) => result.sent[side] ?? {};
        log('  what a 1 MiB PUT sent: ' + SIDES.map((s) => `${s}: payload ${h(s)['x-amz-content-sha256']?.slice(0, 16) ?? '(SVC: none)'}${h(s)['x-amz-checksum-crc32'] ? ', crc32' : ''}, signed ${h(s)['signed-headers']}`).join(' | '));
      }
      const ms = Object.fromEntries(SIDES.map((s) => [s, { put: [], get: [], putFlight: [], getFlight: [] }])) as unknown as Record<S3Side, Record<Op, number[]>>;
      const prefix = (side: S3Side, what: string) => `s3e-${name.replace(' ', '')}-${side}-${what}-`;
      for (const side of SIDES) {
        for (let i = 0; i < seq; i++) keys.push(`${prefix(side, 'seq')}${i}`);
        if (FLIGHT.has(side)) for (let i = 0; i < flight; i++) keys.push(`${prefix(side, 'flight')}${i}`);
      }
      await rounds(SIDES, reps, async (side, keep) => {
        // N PUTs one after another, then GETs of what was just written; then the same in flight.
        const put = await callS3<number>(page, 'put', side, bucket, prefix(side, 'seq'), id, seq);
        const get = GETS.has(side) ? await callS3<number>(page, 'get', side, bucket, prefix(side, 'seq'), size, seq) : NaN;
        const putFlight = FLIGHT.has(side) ? await callS3<number>(page, 'put', side, bucket, prefix(side, 'flight'), id, flight, concurrency) : NaN;
        const getFlight = FLIGHT.has(side) && GETS.has(side)
          ? await callS3<number>(page, 'get', side, bucket, prefix(side, 'flight'), size, flight, concurrency) : NaN;
        if (keep) {
          ms[side].put.push(put / seq);
          ms[side].get.push(get / seq);
          ms[side].putFlight.push(putFlight / flight);
          ms[side].getFlight.push(getFlight / flight);
        }
      }, { budgetMs });
      const alone = result.sdkAlone[size] = await callS3(page, 'sdkAlone', bucket, id, size === KiB ? 100 : 20);
      await callS3(page, 'dropBody', id);

      const m = (side: S3Side, op: Op) => median(ms[side][op]);
      result.medians[size] = Object.fromEntries(SIDES.map((s) => [s, {
        put: m(s, 'put'), ...(GETS.has(s) ? { get: m(s, 'get') } : {}),
        ...(FLIGHT.has(s) ? { putFlight: m(s, 'putFlight'), ...(GETS.has(s) ? { getFlight: m(s, 'getFlight') } : {}) } : {}),
      }]));
      log(`  ${name}, ms/op one after another: ` + SIDES.map((s) => `${s} PUT ${f(m(s, 'put'))}${GETS.has(s) ? ` GET ${f(m(s, 'get'))}` : ''}`).join(' | '));
      log(`  ${name}, ms/op (wall ÷ ops) ${concurrency} in flight: ` + [...FLIGHT].map((s) => `${s} PUT ${f(m(s, 'putFlight'))} GET ${f(m(s, 'getFlight'))}`).join(' | '));
      log(`  ${name}, the SDK alone (no service), ms/call: PutObject Blob ${f(alone.putBlob)}, bytes with default checksums ${f(alone.putBytes)}, GetObject ${f(alone.get)}`);

      // The service's S3 edge is held to 1.1× SVC's time; the SDK's rows carry its client's cost too.
      const edge: Target = { op: '<=', value: 1.1 };
      const add = (side: S3Side, op: Op, target: Target | null, extra = '') => {
        const verb = op.startsWith('put') ? 'PUT' : 'GET';
        const inFlight = op.endsWith('Flight');
        const per = inFlight ? `${flight} ops per sample, ${concurrency} in flight, ms/op = wall ÷ ops` : `${seq} ops per sample, one after another`;
        rows.push(row(11, `S3 ${verb} ${name}${inFlight ? `, ${concurrency} in flight` : ''} (${S3_LABEL[side]}) vs SVC`, m(side, op), m('svc', op), 'ms', target,
          `${per}; ms/op S3 ${spread(ms[side][op], 2)}, SVC ${spread(ms.svc[op], 2)}${extra}`, pairs(ms[side][op], ms.svc[op])));
      };
      const sdkNote = (op: Op) => op === 'get' ? `; the SDK alone (no service) ${f(alone.get)} ms per GetObject read with transformToByteArray()`
        : op === 'put' ? `; the SDK alone (no service) ${f(alone.putBlob)} ms per PutObject` : '';
      for (const op of ['put', 'get', 'putFlight', 'getFlight'] as const) add('a4f', op, edge);
      for (const op of ['put', 'get', 'putFlight', 'getFlight'] as const) add('sdk', op, null, sdkNote(op));
      add('a4fSums', 'put', null, '; checked in the worker as the body streams (sw/core/payload.ts)');
      add('sdkBytes', 'put', null, `; the SDK alone (no service) ${f(alone.putBytes)} ms per PutObject (its CRC32 and SHA-256 of the body)`);
      add('a4fLen', 'put', null, '; the worker reads the body whole before checking the signature (sw/core/handler.ts withheldLength)');
      add('svcReq', 'put', null, '; not S3 at all: SVC sent as aws4fetch sends a body, to tell the page\'s hand-off from the S3 edge');
    }
    const sign = result.sign = await callS3<NonNullable<S3EdgeResult['sign']>>(page, 'signAlone', bucket, 300);
    log(`  signing alone in the page, ms: aws4fetch ${sign.a4f.toFixed(3)}, SVC client ${sign.svc.toFixed(3)}; one crypto.subtle.digest of ~300 bytes ${sign.digest.toFixed(3)}`);
    const forms = result.bodyForms = await call<NonNullable<S3EdgeResult['bodyForms']>>(env.pages.floor, 'putBodyForms', `http://${bucket}.svc.localhost/s3e-forms-`, MiB, 9);
    log(`  1 MiB PUT to the floor worker, ms: body a Blob ${f(forms.blob)}, a Uint8Array ${f(forms.bytes)}`);
  } finally {
    await callS3(page, 'removeKeys', bucket, keys).catch((e: unknown) => log(`  clean-up: ${(e as Error).message}`));
  }
  return result;
}
