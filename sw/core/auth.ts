// Who is calling (docs/protocol.md, "Signing"): a signed Authorization header, a presigned URL, or nobody.
// Signature = base64(HMAC-SHA256(secret, StringToSign)), checked with WebCrypto's verify, which
// compares in constant time.
import { SvcError } from './errors.ts';
import { limits } from './limits.ts';
import { canonicalResource, hmacKey, stringToSign } from '../../protocol/signing.ts';
import type { Target } from '../../protocol/address.ts';
import type { Account, Store } from '../store/types.ts';

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

const PRESIGNING = ['SVCAccessKeyId', 'Expires', 'Signature'];
const AUTHORIZATION = /^SVC ([^:\s]+):(\S+)$/;

/**
 * The access key a request claims to sign with, checked or not (for the log, which names it also
 * on refused requests): the Authorization header's, else a presigned URL's; undefined when none.
 */
export function claimedAccessKeyId(headers: Headers, query: URLSearchParams): string | undefined {
  const header = headers.get('authorization');
  if (header !== null) return AUTHORIZATION.exec(header.trim())?.[1];
  return PRESIGNING.some((p) => query.has(p)) ? query.get('SVCAccessKeyId') || undefined : undefined;
}

/**
 * Unsigned query parameters that would change what a presigned URL writes or reads: it grants
 * exactly what was signed, so they are refused on it (`download` only changes the presentation).
 */
const NOT_PRESIGNABLE = ['meta', 'ifNotFound'];

/** The calling account, or null for an anonymous request. Failures are 403. */
export async function authenticate(i: AuthInput): Promise<Account | null> {
  const header = i.headers.get('authorization');
  const presigned = PRESIGNING.some((p) => i.query.has(p));
  if (header === null && !presigned) return null;

  let accessKeyId: string;
  let signature: string;
  let dateLine: string;
  if (header !== null) {
    const m = AUTHORIZATION.exec(header.trim());
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
  const unsigned = NOT_PRESIGNABLE.filter((p) => i.query.has(p));
  if (unsigned.length > 0) {
    const names = unsigned.map((p) => `"${p}"`).join(' and ');
    return denied(`A presigned URL grants exactly what was signed: ${names} ${unsigned.length > 1 ? 'are' : 'is'} not covered by the signature.`);
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
    return denied(`The request signature does not match: check the secretAccessKey of "${accessKeyId}", and that the request is sent as it was signed `
      + `(each header and sub-resource below). StringToSign: ${JSON.stringify(text)}`);
  }
  return account;
}
