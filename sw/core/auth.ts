// Who is calling (contract section 2): a signed Authorization header, a presigned URL, or nobody.
// Signature = base64(HMAC-SHA256(secret, StringToSign)), checked with WebCrypto's verify, which
// compares in constant time.
import { SvcError } from './errors.ts';
import { limits } from './limits.ts';
import type { Target } from './address.ts';
import type { Account, Store } from '../store/types.ts';

const SIGNED_SUBRESOURCES = new Set([
  'acl', 'versioning', 'versions', 'versionId', 'uploadId', 'uploads', 'partNumber', 'delete', 'account', 'accounts',
]);

/** Every UTF-8 byte except A-Z a-z 0-9 - _ . * as %XX (upper-case hex), so `/` is %2F. */
export function encodeKeyForSigning(key: string): string {
  let out = '';
  for (const byte of new TextEncoder().encode(key)) {
    const unreserved = (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39)
      || byte === 0x2d || byte === 0x5f || byte === 0x2e || byte === 0x2a;
    out += unreserved ? String.fromCharCode(byte) : '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

export function canonicalResource(target: Target, query: URLSearchParams): string {
  let resource = target.kind === 'service' ? '/' : `/${target.bucket}/${encodeKeyForSigning(target.key)}`;
  const subs = [...query].filter(([name]) => SIGNED_SUBRESOURCES.has(name));
  if (subs.length > 0) {
    subs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    resource += '?' + subs.map(([name, value]) => (value === '' ? name : `${name}=${value}`)).join('&');
  }
  return resource;
}

export function canonicalHeaders(headers: Headers): string {
  const lines: string[] = [];
  // Headers iterates names lower-cased and sorted, repeated values already joined.
  for (const [name, value] of headers) if (name.startsWith('x-svc-')) lines.push(`${name}:${value.trim()}\n`);
  return lines.join('');
}

export function stringToSign(method: string, headers: Headers, dateLine: string, resource: string): string {
  return `${method}\n${headers.get('content-md5') ?? ''}\n${headers.get('content-type') ?? ''}\n${dateLine}\n`
    + canonicalHeaders(headers) + resource;
}

const denied = (message: string): never => {
  throw new SvcError('AccessDenied', message);
};

function base64ToBytes(text: string): Uint8Array | null {
  try {
    const bin = atob(text);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

const hmacKeys = new Map<string, Promise<CryptoKey>>();

/** The HMAC-SHA256 key of a secret, imported once per secret (every signed request needs it). */
export function hmacKey(secret: string): Promise<CryptoKey> {
  let key = hmacKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    hmacKeys.set(secret, key);
  }
  return key;
}

async function signatureMatches(secret: string, text: string, signature: string): Promise<boolean> {
  const given = base64ToBytes(signature);
  if (!given) return false;
  return crypto.subtle.verify('HMAC', await hmacKey(secret), given as Uint8Array<ArrayBuffer>, new TextEncoder().encode(text));
}

export interface AuthInput {
  method: string;
  headers: Headers;
  query: URLSearchParams;
  target: Target;
  store: Store;
  now: number;
}

/** The calling account, or null for an anonymous request. Failures are 403. */
export async function authenticate(i: AuthInput): Promise<Account | null> {
  const header = i.headers.get('authorization');
  const presigned = ['SVCAccessKeyId', 'Expires', 'Signature'].some((p) => i.query.has(p));
  if (header === null && !presigned) return null;

  let accessKeyId: string;
  let signature: string;
  let dateLine: string;
  if (header !== null) {
    const m = /^SVC ([^:\s]+):(\S+)$/.exec(header.trim());
    if (!m) return denied('The Authorization header must be "SVC {AccessKeyId}:{Signature}".');
    [, accessKeyId = '', signature = ''] = m;
    const svcDate = i.headers.get('x-svc-date');
    const date = svcDate ?? i.headers.get('date');
    if (date === null) return denied('A signed request needs a Date or x-svc-date header.');
    const when = Date.parse(date);
    if (Number.isNaN(when)) return denied(`The request date "${date}" is not an RFC 1123 date.`);
    dateLine = svcDate !== null ? '' : date;
    const account = await verify(i, accessKeyId, signature, dateLine);
    if (Math.abs(i.now - when) > limits.clockSkewMs) {
      throw new SvcError('RequestTimeTooSkewed', 'The difference between the request time and the service time is too large.');
    }
    return account;
  }
  accessKeyId = i.query.get('SVCAccessKeyId') ?? denied('A presigned URL needs SVCAccessKeyId.');
  // A `+` left unencoded in a query reads as a space; base64 has no spaces, so it was a plus.
  signature = (i.query.get('Signature') ?? denied('A presigned URL needs Signature.')).replace(/ /g, '+');
  const expires = i.query.get('Expires') ?? denied('A presigned URL needs Expires.');
  if (!/^\d{1,12}$/.test(expires)) return denied('Expires must be a time in unix seconds.');
  const account = await verify(i, accessKeyId, signature, expires);
  if (i.now > Number(expires) * 1000) return denied('Request has expired.');
  return account;
}

async function verify(i: AuthInput, accessKeyId: string, signature: string, dateLine: string): Promise<Account> {
  const account = await i.store.getAccount(accessKeyId);
  if (!account) return denied(`The AccessKeyId "${accessKeyId}" does not exist.`);
  const text = stringToSign(i.method, i.headers, dateLine, canonicalResource(i.target, i.query));
  if (!(await signatureMatches(account.secret, text, signature))) {
    return denied(`The request signature does not match. StringToSign: ${JSON.stringify(text)}`);
  }
  return account;
}
