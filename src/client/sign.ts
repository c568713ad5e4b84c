// Signing (docs/protocol.md, "Signing") with WebCrypto. The canonical forms are the ones the service
// checks against (protocol/signing.ts): pure functions, nothing emulator-only.
import { canonicalResource, hmacKey, stringToSign } from '../../protocol/signing.ts';
import { targetOf } from '../../protocol/address.ts';
import type { ClientDialect } from './types.ts';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export async function hmacBase64(secret: string, text: string): Promise<string> {
  const sig = new Uint8Array(await crypto.subtle.sign('HMAC', await hmacKey(secret), new TextEncoder().encode(text)));
  let bin = '';
  for (const b of sig) bin += String.fromCharCode(b);
  return btoa(bin);
}


const names = (dialect: ClientDialect) => (dialect === 'nos'
  ? { scheme: 'NOS', prefix: 'x-nos-', keyParam: 'NOSAccessKeyId' }
  : { scheme: 'SVC', prefix: 'x-svc-', keyParam: 'SVCAccessKeyId' });

/**
 * The StringToSign the service will compute for this request, and the Authorization header.
 * A page cannot set Date, so the date travels as x-svc-date (x-nos-date; then the Date line is empty).
 */
export async function signRequest(
  method: string,
  bucket: string,
  key: string,
  query: URLSearchParams,
  headers: Headers,
  creds: Credentials,
  dialect: ClientDialect = 'svc',
  now = new Date(),
): Promise<string> {
  const { scheme, prefix } = names(dialect);
  headers.set(`${prefix}date`, now.toUTCString());
  const text = stringToSign(method, headers, '', canonicalResource(targetOf(bucket, key), query), prefix);
  headers.set('authorization', `${scheme} ${creds.accessKeyId}:${await hmacBase64(creds.secretAccessKey, text)}`);
  return text;
}

/** Presigned query parameters: the Date line is the Expires value (unix seconds). */
export async function presignQuery(
  method: string,
  bucket: string,
  key: string,
  query: URLSearchParams,
  creds: Credentials,
  expires: number,
  dialect: ClientDialect = 'svc',
): Promise<URLSearchParams> {
  const text = stringToSign(method, new Headers(), String(expires), canonicalResource(targetOf(bucket, key), query));
  const signed = new URLSearchParams(query);
  signed.set(names(dialect).keyParam, creds.accessKeyId);
  signed.set('Expires', String(expires));
  signed.set('Signature', await hmacBase64(creds.secretAccessKey, text));
  return signed;
}
