// Requests signed as the AWS SDK signs them, with its own signer (@smithy/signature-v4), so that
// a bug in protocol/sigv4.ts cannot hide by being shared with the tests: SigV4 in the Authorization
// header, and presigned URLs.
import { createHash } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@aws-crypto/sha256-js';

export interface Creds {
  accessKeyId: string;
  secretAccessKey: string;
}

export const S3_ROOT: Creds = { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' };
const ROOT = S3_ROOT;
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
const hex256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A key as it goes in a path S3's signer signs as written: each segment encoded per RFC 3986 (`(`, `)`, `!`, `*`, `'` too), `/` kept. */
export const encodeS3Key = (key: string): string =>
  key.split('/').map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join('/');

export interface SignOptions {
  headers?: Record<string, string>;
  /** x-amz-content-sha256: by default the hex SHA-256 of the body (of nothing without one); null: not sent. */
  contentSha256?: string | null;
  creds?: Creds;
  service?: string;
  region?: string;
  date?: Date;
}

export const signer = (o: SignOptions = {}) => new SignatureV4({
  service: o.service ?? 's3', region: o.region ?? 'us-east-1', credentials: o.creds ?? ROOT, sha256: Sha256, uriEscapePath: false, applyChecksum: false,
});

export function queryRecord(u: URL): Record<string, string> {
  const q: Record<string, string> = {};
  for (const [name, value] of u.searchParams) q[name] = value;
  return q;
}

/** The headers of a request signed as the AWS SDK signs one (Authorization: AWS4-HMAC-SHA256 …). */
export async function signedHeaders(method: string, url: string, body: Uint8Array | undefined, o: SignOptions = {}): Promise<Headers> {
  const u = new URL(url);
  const headers: Record<string, string> = { host: u.host, ...(o.headers ?? {}) };
  if (!('content-length' in headers) && (body !== undefined || method === 'PUT' || method === 'POST')) {
    headers['content-length'] = String(body?.byteLength ?? 0);
  }
  if (o.contentSha256 !== null && !('x-amz-content-sha256' in headers)) headers['x-amz-content-sha256'] = o.contentSha256 ?? hex256(body ?? new Uint8Array());
  const signed = await signer(o).sign(
    { method, protocol: 'http:', hostname: u.hostname, path: u.pathname, query: queryRecord(u), headers },
    { signingDate: o.date ?? new Date() },
  );
  return new Headers(signed.headers as Record<string, string>);
}

export async function s3(method: string, url: string, body?: Uint8Array<ArrayBuffer>, o: SignOptions = {}): Promise<Request> {
  const headers = await signedHeaders(method, url, body, o);
  return new Request(url, { method, headers, ...(body !== undefined ? { body } : {}) });
}

/** A presigned URL as the AWS SDK makes it (SignatureV4.presign, the payload UNSIGNED-PAYLOAD). */
export async function presigned(method: string, url: string, expiresIn: number, date = new Date(), creds: Creds = ROOT): Promise<string> {
  const u = new URL(url);
  const p = await signer({ creds }).presign(
    { method, protocol: 'http:', hostname: u.hostname, path: u.pathname, query: queryRecord(u), headers: { host: u.host, 'x-amz-content-sha256': UNSIGNED_PAYLOAD } },
    { signingDate: date, expiresIn },
  );
  const out = new URL(url);
  out.search = new URLSearchParams(p.query as Record<string, string>).toString();
  return out.toString();
}
