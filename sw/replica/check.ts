// What a replica's remote lacks for a sync to work, said so a person can fix it: can it be reached
// with these credentials, does it honour conditional writes, does it show the ETag of what it
// stores, and — for a page's worker, whose requests are cross-origin — does its CORS configuration
// allow this origin what a sync sends and reads (docs/replicas.md, "The remote bucket's CORS").
import { RemoteError, type Remote } from './remote.ts';
import { RESERVED, probe, type Guarantees } from './sync.ts';

/** What check() found: `ok` when nothing is missing; else each problem, with what to do. */
export interface CheckResult {
  ok: boolean;
  problems: string[];
  guarantees?: Guarantees;
}

/** What a sync sends and reads from a page, as a CORS configuration must allow it. */
export const CORS_NEEDS = {
  methods: ['GET', 'PUT', 'POST', 'DELETE', 'HEAD'],
  headers: ['authorization', 'content-type', 'content-md5', 'x-amz-date', 'x-amz-content-sha256', 'x-amz-security-token', 'x-amz-copy-source', 'x-amz-copy-source-if-match', 'if-match', 'if-none-match', 'x-amz-meta-*'],
  expose: ['ETag', 'x-amz-version-id'],
};

/** `pattern` (with at most one `*`) matches `value`, case-insensitively for headers. */
function matches(pattern: string, value: string, caseless: boolean): boolean {
  const [p, v] = caseless ? [pattern.toLowerCase(), value.toLowerCase()] : [pattern, value];
  const star = p.indexOf('*');
  return star < 0 ? p === v : v.length >= p.length - 1 && v.startsWith(p.slice(0, star)) && v.endsWith(p.slice(star + 1));
}

/** What the remote bucket's CORS rules lack for `origin`, as sentences. */
export function corsProblems(rules: { allowedOrigins: string[]; allowedMethods: string[]; allowedHeaders: string[]; exposeHeaders: string[] }[], origin: string): string[] {
  const mine = rules.filter((r) => r.allowedOrigins.some((o) => matches(o, origin, false)));
  if (mine.length === 0) return [`The remote bucket's CORS configuration allows no rule for ${origin}: add one with AllowedOrigin ${origin}.`];
  const problems: string[] = [];
  const methods = CORS_NEEDS.methods.filter((m) => !mine.some((r) => r.allowedMethods.includes(m)));
  if (methods.length) problems.push(`Its CORS rule for ${origin} does not allow the methods ${methods.join(', ')}: add them as AllowedMethod.`);
  const headers = CORS_NEEDS.headers.filter((h) => !mine.some((r) => r.allowedHeaders.some((a) => matches(a, h.replace('*', 'x'), true))));
  if (headers.length) problems.push(`Its CORS rule for ${origin} does not allow the request headers ${headers.join(', ')}: add them as AllowedHeader (or AllowedHeader *).`);
  const expose = CORS_NEEDS.expose.filter((h) => !mine.some((r) => r.exposeHeaders.some((e) => e.toLowerCase() === h.toLowerCase())));
  if (expose.length) problems.push(`Its CORS rule for ${origin} does not expose ${expose.join(', ')}: add them as ExposeHeader, or the sync cannot read what the remote stored.`);
  return problems;
}

export async function checkRemote(remote: Remote, device: string, origin?: string): Promise<CheckResult> {
  const problems: string[] = [];
  const where = `${remote.where.bucket} at ${remote.where.endpoint}`;
  try {
    await remote.ping();
  } catch (e) {
    if (!(e instanceof RemoteError)) throw e;
    if (e.status === 0) {
      problems.push(`No answer from ${where}. Is it online and the endpoint right?${origin ? ` From a page, its CORS configuration must also allow ${origin}: `
        + `AllowedMethod ${CORS_NEEDS.methods.join(', ')}; AllowedHeader * (or ${CORS_NEEDS.headers.join(', ')}); ExposeHeader ${CORS_NEEDS.expose.join(', ')}.` : ''}`);
    } else problems.push(e.message);
    return { ok: false, problems };
  }
  let guarantees: Guarantees | undefined;
  try {
    guarantees = await probe(remote, device);
    if (!guarantees.ifNoneMatch || !guarantees.ifMatch) {
      problems.push(`${where} ignores ${!guarantees.ifNoneMatch ? 'If-None-Match' : 'If-Match'} on writes: a push could overwrite another device's write unseen. `
        + 'Use a remote that honours conditional writes (AWS S3, R2, Ceph RGW, MinIO), or allow it with allowUnconditional.');
    }
  } catch (e) {
    if (!(e instanceof RemoteError)) throw e;
    problems.push(`Writing a test object under ${RESERVED} failed: ${e.message}`);
  }
  if (origin) {
    try {
      const rules = await remote.cors();
      if (rules) problems.push(...corsProblems(rules, origin));
    } catch (e) {
      if (!(e instanceof RemoteError)) throw e;
      // Not every key may read the configuration (s3:GetBucketCORS); the requests above went through anyway.
    }
  }
  return { ok: problems.length === 0, problems, ...(guarantees ? { guarantees } : {}) };
}
