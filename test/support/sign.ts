// The test suite's own signer, written from docs/protocol.md, "Signing", with node:crypto so that
// a bug in sw/core/auth.ts cannot hide by being shared with the tests.
import { createHmac } from 'node:crypto';

export const ROOT = { accessKeyId: 'svcadmin', secret: 'svcadmin-secret' } as const;
export const ENDPOINT = 'svc.localhost';

const SIGNED_SUBRESOURCES = new Set([
  'acl', 'versioning', 'versions', 'versionId', 'uploadId', 'uploads', 'partNumber', 'delete', 'account', 'accounts',
  'export', 'import', 'bucket', 'conflict',
]);

/** Every UTF-8 byte except A-Z a-z 0-9 - _ . * becomes %XX. */
export function encodeKey(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.*]/.test(c) ? c : '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** Bucket and key as the service should see them, from a virtual-host or path-style URL. */
export function addressOf(url: URL): { bucket: string; key: string } {
  const host = url.hostname;
  const raw = url.pathname;
  if (host.endsWith('.' + ENDPOINT)) {
    return { bucket: host.slice(0, -ENDPOINT.length - 1), key: decodeURIComponent(raw.slice(1)) };
  }
  const path = raw.startsWith('/svc/') ? raw.slice(4) : raw; // the page-origin mount
  const rest = path.slice(1);
  const slash = rest.indexOf('/');
  if (slash < 0) return { bucket: rest, key: '' };
  return { bucket: rest.slice(0, slash), key: decodeURIComponent(rest.slice(slash + 1)) };
}

export function canonicalResource(url: URL): string {
  const { bucket, key } = addressOf(url);
  let res = bucket === '' ? '/' : `/${bucket}/${encodeKey(key)}`;
  const subs: string[] = [];
  for (const [name, value] of new URLSearchParams(url.search)) {
    if (SIGNED_SUBRESOURCES.has(name)) subs.push(value === '' ? name : `${name}=${value}`);
  }
  subs.sort((a, b) => (a.split('=')[0]! < b.split('=')[0]! ? -1 : a.split('=')[0]! > b.split('=')[0]! ? 1 : 0));
  if (subs.length) res += '?' + subs.join('&');
  return res;
}

export function canonicalHeaders(headers: Headers): string {
  const names = [...headers.keys()].filter((n) => n.startsWith('x-svc-')).sort();
  return names.map((n) => `${n}:${headers.get(n)!.trim()}\n`).join('');
}

export function stringToSign(method: string, url: URL, headers: Headers, dateLine?: string): string {
  const date = dateLine ?? (headers.has('x-svc-date') ? '' : headers.get('date') ?? '');
  return [
    method,
    headers.get('content-md5') ?? '',
    headers.get('content-type') ?? '',
    date,
  ].join('\n') + '\n' + canonicalHeaders(headers) + canonicalResource(url);
}

export function hmac(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text, 'utf8').digest('base64');
}

/** Adds x-svc-date (when no Date/x-svc-date is set) and Authorization to `headers`, in place. */
export function signHeaders(
  method: string,
  url: string | URL,
  headers: Headers,
  creds: { accessKeyId: string; secret: string } = ROOT,
  now: Date = new Date(),
): Headers {
  if (!headers.has('date') && !headers.has('x-svc-date')) headers.set('x-svc-date', now.toUTCString());
  const sig = hmac(creds.secret, stringToSign(method, new URL(url), headers));
  headers.set('authorization', `SVC ${creds.accessKeyId}:${sig}`);
  return headers;
}

/** A presigned URL (docs/protocol.md, "Presigned URLs"): the Date line is the Expires value. */
export function presign(
  method: string,
  url: string,
  expires: number,
  creds: { accessKeyId: string; secret: string } = ROOT,
): string {
  const u = new URL(url);
  const sts = stringToSign(method, u, new Headers(), String(expires));
  const sig = hmac(creds.secret, sts);
  u.searchParams.set('SVCAccessKeyId', creds.accessKeyId);
  u.searchParams.set('Expires', String(expires));
  u.searchParams.set('Signature', sig);
  return u.toString();
}
