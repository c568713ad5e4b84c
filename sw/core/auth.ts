// Who is calling (docs/protocol.md, "Signing"): a signed Authorization header, a presigned URL, or nobody.
// SVC and NOS sign alike, each with its own names (`SVC`/`x-svc-`, `NOS`/`x-nos-`):
// Signature = base64(HMAC-SHA256(secret, StringToSign)), checked with WebCrypto's verify, which
// compares in constant time. S3's SigV4 is auth-s3.ts.
import { SvcError } from './errors.ts';
import { limits } from './limits.ts';
import { parseHttpDate } from './http.ts';

import { authenticateS3, s3AccessKeyId } from './auth-s3.ts';
import { SIGNED_SUBRESOURCES, canonicalResource, hmacKey, stringToSign } from '../../protocol/signing.ts';
import type { Dialect } from './dialect.ts';
import type { Payload } from './payload.ts';
import type { Target } from '../../protocol/address.ts';
import type { Account, Store } from '../store/types.ts';

/** The zones a NOS date may name: GMT, and the one NetEase's Python SDK writes its local time in. */
const NOS_ZONES = { GMT: 0, 'Asia/Shanghai': 480 };

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
  /** The URL as sent (SigV4 signs its path as sent, and its host). */
  url: URL;
  target: Target;
  store: Store;
  now: number;
  dialect: Dialect;
  /**
   * Where the runtime withholds Content-Length (a service worker): reads the body whole and
   * answers its length, for a signature that covers it (auth-s3.ts). The handler then hands the
   * operation the body read.
   */
  withheldLength?: () => Promise<number>;
}

/** Who signed, and for S3 what the signature says of the body. */
export interface Authenticated {
  caller: Account | null;
  payload?: Payload;
}

/** SVC's and NOS's names: the Authorization scheme, and the presigned URL's key parameter. */
const SCHEME = { svc: 'SVC', nos: 'NOS' } as const;

const PRESIGNING = { SVC: ['SVCAccessKeyId', 'Expires', 'Signature'], NOS: ['NOSAccessKeyId', 'Expires', 'Signature'] } as const;
const AUTHORIZATION = { SVC: /^SVC ([^:\s]+):(\S+)$/, NOS: /^NOS ([^:\s]+):(\S+)$/ } as const;

/**
 * The access key a request claims to sign with, checked or not (for the log, which names it also
 * on refused requests): the Authorization header's, else a presigned URL's; undefined when none.
 */
export function claimedAccessKeyId(headers: Headers, query: URLSearchParams): string | undefined {
  const s3 = s3AccessKeyId(headers, query);
  if (s3 !== undefined) return s3;
  const header = headers.get('authorization');
  if (header !== null) return /^(?:SVC|NOS) ([^:\s]+):/.exec(header.trim())?.[1];
  return (query.get('SVCAccessKeyId') ?? query.get('NOSAccessKeyId')) || undefined;
}

/**
 * Unsigned query parameters that would change what a presigned URL writes or reads: it grants
 * exactly what was signed, so they are refused on it (`download` only changes the presentation).
 */
const NOT_PRESIGNABLE = ['meta', 'ifNotFound'];

/** The calling account, or null for an anonymous request. Failures are 403 (S3's malformed signatures 400). */
export async function authenticate(i: AuthInput): Promise<Authenticated> {
  if (i.dialect.name === 's3') return authenticateS3(i);
  return { caller: await authenticateHmac(i, SCHEME[i.dialect.name]) };
}

async function authenticateHmac(i: AuthInput, scheme: 'SVC' | 'NOS'): Promise<Account | null> {
  const header = i.headers.get('authorization');
  const presigned = PRESIGNING[scheme].some((p) => i.query.has(p));
  if (header === null && !presigned) return null;
  const prefix = i.dialect.prefix;

  let accessKeyId: string;
  let signature: string;
  let dateLine: string;
  if (header !== null) {
    const m = AUTHORIZATION[scheme].exec(header.trim());
    if (!m) return denied(`The Authorization header must be "${scheme} {AccessKeyId}:{Signature}".`);
    [, accessKeyId = '', signature = ''] = m;
    const svcDate = i.headers.get(`${prefix}date`);
    const date = svcDate ?? i.headers.get('date');
    if (date === null) return denied(`A signed request needs a Date or ${prefix}date header.`);
    // NetEase's Python SDK writes its local time with the zone's name: `… 20:15:00 Asia/Shanghai`.
    const when = parseHttpDate(date, scheme === 'NOS' ? NOS_ZONES : undefined);
    if (Number.isNaN(when)) return denied(`The request date "${date}" is not an RFC 1123 date (Sun, 29 Nov 2026 08:00:00 GMT).`);
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
  accessKeyId = i.query.get(`${scheme}AccessKeyId`) ?? denied(`A presigned URL needs ${scheme}AccessKeyId.`);
  // A `+` left unencoded in a query reads as a space; base64 has no spaces, so it was a plus.
  signature = (i.query.get('Signature') ?? denied('A presigned URL needs Signature.')).replace(/ /g, '+');
  const expires = i.query.get('Expires') ?? denied('A presigned URL needs Expires.');
  if (!/^\d{1,12}$/.test(expires)) return denied('Expires must be a time in unix seconds.');
  const account = await verify(i, accessKeyId, signature, expires);
  if (i.now > Number(expires) * 1000) return denied('Request has expired.');
  return account;
}

/**
 * The sub-resources a signature covers are written decoded and joined by `&`, so a value that holds
 * one (`?partNumber=1%26uploadId%3DU`) would sign as two parameters: a signature for an Upload Part
 * would then also sign a PUT. Such a value is not signed at all. (A sub-resource named twice, as an
 * export's `bucket`, signs each value in the order sent: nothing reads it as anything else.)
 */
function checkSignedSubresources(query: URLSearchParams): void {
  for (const [name, value] of query) {
    if (SIGNED_SUBRESOURCES.has(name) && value.includes('&')) {
      denied(`The sub-resource "${name}" holds "&", which a signature cannot tell from a second parameter.`);
    }
  }
}

async function verify(i: AuthInput, accessKeyId: string, signature: string, dateLine: string): Promise<Account> {
  checkSignedSubresources(i.query);
  const account = await i.store.getAccount(accessKeyId);
  if (!account) return denied(`The AccessKeyId "${accessKeyId}" does not exist.`);
  const text = stringToSign(i.method, i.headers, dateLine, canonicalResource(i.target, i.query), i.dialect.prefix);
  if (!(await signatureMatches(account.secret, text, signature))) {
    return denied(`The request signature does not match: check the secretAccessKey of "${accessKeyId}", and that the request is sent as it was signed `
      + `(each header and sub-resource below). StringToSign: ${JSON.stringify(text)}`);
  }
  return account;
}
