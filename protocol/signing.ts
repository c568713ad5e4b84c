// The signature's canonical forms (docs/protocol.md, "Signing"): pure functions over a request,
// the same for the service that checks a signature and the client that makes one.
import type { Target } from './address.ts';

/** The query parameters a signature covers (docs/protocol.md, "Signing"). */
export const SIGNED_SUBRESOURCES: ReadonlySet<string> = new Set([
  'acl', 'versioning', 'versions', 'versionId', 'uploadId', 'uploads', 'partNumber', 'delete', 'account', 'accounts',
  'export', 'import', 'bucket', 'conflict',
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

/** The signed headers: those with the dialect's prefix (`x-svc-`, or NOS's own `x-nos-`). */
export function canonicalHeaders(headers: Headers, prefix = 'x-svc-'): string {
  const lines: string[] = [];
  // Headers iterates names lower-cased and sorted, repeated values already joined.
  for (const [name, value] of headers) if (name.startsWith(prefix)) lines.push(`${name}:${value.trim()}\n`);
  return lines.join('');
}

export function stringToSign(method: string, headers: Headers, dateLine: string, resource: string, prefix = 'x-svc-'): string {
  return `${method}\n${headers.get('content-md5') ?? ''}\n${headers.get('content-type') ?? ''}\n${dateLine}\n`
    + canonicalHeaders(headers, prefix) + resource;
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
