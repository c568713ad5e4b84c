// AWS Signature Version 4 as S3 checks it (issue 24; docs/protocol.md will describe the S3 dialect):
// pure functions over a request, for the service that verifies a signature and for a client that
// makes one, on WebCrypto (a service worker and Node alike). Written from AWS's published
// description of SigV4; cross-checked in test/unit/sigv4.test.ts against the AWS SDK's own signer.
//
// Signature = hex(HMAC(signing key, StringToSign)), where
//   signing key  = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")
//   StringToSign = "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex(SHA-256(CanonicalRequest))
//   CanonicalRequest = method \n path \n query \n headers \n signed header names \n payload hash

import { createSha256 } from './checksums.ts';

export const SIGV4_ALGORITHM = 'AWS4-HMAC-SHA256';
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

/** The credential scope a signature names: `{accessKeyId}/{date}/{region}/{service}/aws4_request`. */
export interface Credential {
  accessKeyId: string;
  /** YYYYMMDD */
  date: string;
  region: string;
  service: string;
}

/** What an Authorization header or a presigned URL says of its signature. */
export interface SignedBy {
  credential: Credential;
  /** Lower-case names, in the order given (sorted, when the client is right). */
  signedHeaders: string[];
  signature: string;
  /** `x-amz-date` / `X-Amz-Date`: YYYYMMDD'T'HHMMSS'Z'. */
  amzDate: string;
  /** Seconds a presigned URL is valid for; absent for a header. */
  expires?: number;
}

const CREDENTIAL = /^([^/\s]+)\/(\d{8})\/([^/\s]+)\/([^/\s]+)\/aws4_request$/;
const AMZ_DATE = /^\d{8}T\d{6}Z$/;

/** A credential scope as written, `{accessKeyId}/{date}/{region}/{service}/aws4_request`; undefined when not one. */
export function credentialOf(text: string): Credential | undefined {
  const m = CREDENTIAL.exec(text);
  return m ? { accessKeyId: m[1]!, date: m[2]!, region: m[3]!, service: m[4]! } : undefined;
}

/**
 * An `Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…` header: what it
 * says, or 'malformed' when it is SigV4 but cannot be read; undefined when it is not SigV4.
 */
export function parseAuthorization(header: string, amzDate: string | null): SignedBy | 'malformed' | undefined {
  const text = header.trim();
  if (!text.startsWith(`${SIGV4_ALGORITHM} `)) return undefined;
  // Exactly the three fields, each once: two Authorization headers arrive joined by a comma
  // (`A, B`), and a second Credential or Signature must not quietly replace the first.
  const fields = new Map<string, string>();
  for (const part of text.slice(SIGV4_ALGORITHM.length).split(',')) {
    const at = part.indexOf('=');
    const name = part.slice(0, at).trim();
    if (at < 0 || !AUTHORIZATION_FIELDS.has(name) || fields.has(name)) return 'malformed';
    fields.set(name, part.slice(at + 1).trim());
  }
  const credential = credentialOf(fields.get('Credential') ?? '');
  const signedHeaders = signedHeaderNames(fields.get('SignedHeaders') ?? '');
  const signature = fields.get('Signature');
  if (!credential || !signedHeaders || !signature || !/^[0-9a-f]{64}$/.test(signature)) return 'malformed';
  if (amzDate === null || !isAmzDate(amzDate)) return 'malformed';
  return { credential, signedHeaders, signature, amzDate };
}

const AUTHORIZATION_FIELDS = new Set(['Credential', 'SignedHeaders', 'Signature']);
/** A header name as HTTP writes one (RFC 9110's token), lower-cased as SigV4 signs it. */
const HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;

/** `SignedHeaders`: names separated by `;`, each a header name written in lower case; undefined when not. */
function signedHeaderNames(text: string): string[] | undefined {
  const names = text.split(';');
  return names.every((n) => HEADER_NAME.test(n)) ? names : undefined;
}

/** A presigned URL's `X-Amz-*` parameters; 'malformed' when present but unreadable; undefined without them. */
export function parsePresigned(query: URLSearchParams): SignedBy | 'malformed' | undefined {
  if (query.get('X-Amz-Algorithm') === null) return undefined;
  if (query.get('X-Amz-Algorithm') !== SIGV4_ALGORITHM) return 'malformed';
  const credential = credentialOf(query.get('X-Amz-Credential') ?? '');
  const amzDate = query.get('X-Amz-Date') ?? '';
  // Seconds written in digits only, as S3 takes them (not `1e3`, ` 60` or `0x3c`).
  const expiresText = query.get('X-Amz-Expires') ?? '';
  const signedHeaders = signedHeaderNames(query.get('X-Amz-SignedHeaders') ?? '');
  const signature = query.get('X-Amz-Signature') ?? '';
  if (!credential || !isAmzDate(amzDate) || !/^\d{1,9}$/.test(expiresText) || !signedHeaders || !/^[0-9a-f]{64}$/.test(signature)) return 'malformed';
  return { credential, signedHeaders, signature, amzDate, expires: Number(expiresText) };
}

/** RFC 3986 encoding as SigV4 wants it: all but A-Z a-z 0-9 - _ . ~ as %XX (upper-case); `/` too unless `keepSlash`. */
export function uriEncode(text: string, keepSlash = false): string {
  let out: string;
  try {
    // encodeURIComponent leaves ! ' ( ) * as they are, which SigV4 encodes; it is native, where the
    // loop below cost a signed request a tenth of a millisecond (measured in a replica's pull).
    out = encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  } catch {
    // A lone surrogate (encodeURIComponent refuses it): as TextEncoder writes it, U+FFFD.
    out = '';
    for (const byte of new TextEncoder().encode(text)) {
      const c = String.fromCharCode(byte);
      out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return keepSlash ? out.replace(/%2F/g, '/') : out;
}

/**
 * The canonical path: each segment of the path as sent, decoded once and encoded again (S3 signs
 * the path encoded once). Undefined for a path whose escapes are not UTF-8.
 */
export function canonicalPath(rawPath: string): string | undefined {
  try {
    return rawPath.split('/').map((segment) => uriEncode(decodeURIComponent(segment))).join('/') || '/';
  } catch {
    return undefined;
  }
}

/**
 * The canonical query: every parameter, names and values encoded, sorted; for a presigned URL
 * every one but its own signature (a header-signed request signs an `X-Amz-Signature` it carries too).
 */
export function canonicalQuery(query: URLSearchParams, presigned = false): string {
  const pairs = [...query].filter(([name]) => !(presigned && name === 'X-Amz-Signature')).map(([n, v]) => [uriEncode(n), uriEncode(v)] as const);
  pairs.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  return pairs.map(([n, v]) => `${n}=${v}`).join('&');
}

/**
 * `name:value\n` for each signed header, the value trimmed and its runs of spaces made one; `host`
 * is always the `host` given, never a Host header of `headers`.
 */
export function canonicalHeaderLines(headers: Headers, signed: string[], host: string): string | undefined {
  let out = '';
  for (const name of signed) {
    const value = name === 'host' ? host : headers.get(name);
    if (value === null) return undefined; // signed, but not sent
    out += `${name}:${value.trim().replace(/\s+/g, ' ')}\n`;
  }
  return out;
}

export interface CanonicalInput {
  method: string;
  /** The path as sent, still percent-encoded. */
  rawPath: string;
  query: URLSearchParams;
  headers: Headers;
  /**
   * The host signed as `host` (`host[:port]`): the one the request is routed by, whatever Host
   * header it carries (a service worker sees none; an absolute-form target names its own).
   */
  host: string;
  signedHeaders: string[];
  /** `x-amz-content-sha256` (or for a presigned URL `UNSIGNED-PAYLOAD`). */
  payloadHash: string;
  /** A presigned URL's query, whose `X-Amz-Signature` is not itself signed. */
  presigned?: boolean;
}

/** The canonical request, or undefined when the request cannot match any signature (a signed header missing, a bad path). */
export function canonicalRequest(i: CanonicalInput): string | undefined {
  const path = canonicalPath(i.rawPath);
  const headers = canonicalHeaderLines(i.headers, i.signedHeaders, i.host);
  if (path === undefined || headers === undefined) return undefined;
  return [i.method, path, canonicalQuery(i.query, i.presigned), headers, i.signedHeaders.join(';'), i.payloadHash].join('\n');
}

const hex = (bytes: ArrayBuffer): string => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');

/**
 * Hex SHA-256, through hash-wasm's kept hashers (protocol/checksums.ts) rather than WebCrypto: a
 * signature check hashes a few hundred bytes, where a round trip to WebCrypto's thread costs more
 * than the hashing (WebCrypto where WebAssembly is refused).
 */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const h = await createSha256();
  h.update(typeof data === 'string' ? new TextEncoder().encode(data) : data);
  return h.digest();
}

export const scopeOf = (c: Credential): string => `${c.date}/${c.region}/${c.service}/aws4_request`;

/**
 * `as`: how the canonical request's characters become the bytes hashed. 'utf-8' (default), as a
 * client encodes the strings it signs; 'bytes', each character one byte, as a server holds header
 * values (an HTTP header is bytes; Node and the Fetch API show each byte as one character), which
 * is S3's reading of a client that sent UTF-8 in a header.
 */
export async function stringToSignV4(amzDate: string, credential: Credential, canonical: string, as: 'utf-8' | 'bytes' = 'utf-8'): Promise<string> {
  const data = as === 'bytes' ? Uint8Array.from(canonical, (c) => c.charCodeAt(0)) : canonical;
  return `${SIGV4_ALGORITHM}\n${amzDate}\n${scopeOf(credential)}\n${await sha256Hex(data)}`;
}

async function hmac(key: BufferSource, data: string): Promise<ArrayBuffer> {
  const k = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return crypto.subtle.sign('HMAC', k, new TextEncoder().encode(data));
}

/** Signing keys by secret and scope: one per account, day and region, as a client keeps them. */
const signingKeys = new Map<string, Promise<CryptoKey>>();
const SIGNING_KEYS_KEPT = 256;

/** The day's signing key for `secret` and the credential's scope, as an HMAC key. */
export function signingKey(secret: string, c: Credential): Promise<CryptoKey> {
  const id = `${scopeOf(c)}\n${secret}`;
  let key = signingKeys.get(id);
  if (!key) {
    if (signingKeys.size >= SIGNING_KEYS_KEPT) signingKeys.clear();
    key = (async () => {
      let k = await hmac(new TextEncoder().encode(`AWS4${secret}`), c.date);
      for (const part of [c.region, c.service, 'aws4_request']) k = await hmac(k, part);
      return crypto.subtle.importKey('raw', k, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    })();
    signingKeys.set(id, key);
  }
  return key;
}

/** The signature of `stringToSign`, hex. */
export async function signV4(secret: string, c: Credential, stringToSign: string): Promise<string> {
  return hex(await crypto.subtle.sign('HMAC', await signingKey(secret, c), new TextEncoder().encode(stringToSign)));
}

/** Whether `signature` (hex) signs `stringToSign`: compared by WebCrypto's verify, in constant time. */
export async function verifyV4(secret: string, c: Credential, stringToSign: string, signature: string): Promise<boolean> {
  if (!/^[0-9a-f]{64}$/.test(signature)) return false;
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = parseInt(signature.slice(2 * i, 2 * i + 2), 16);
  return crypto.subtle.verify('HMAC', await signingKey(secret, c), bytes, new TextEncoder().encode(stringToSign));
}

/** `x-amz-date`'s time, in ms; NaN when it is not one. */
export function amzDateMs(amzDate: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!m) return NaN;
  const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  // Date.UTC rolls a 25th hour or a 61st second over into the next day: such a date is none at all
  // (it would stretch a key scoped to one day over the days after).
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '') === amzDate ? ms : NaN;
}

/** `YYYYMMDDTHHMMSSZ`, naming a time that exists. */
export const isAmzDate = (text: string): boolean => AMZ_DATE.test(text) && !Number.isNaN(amzDateMs(text));

const hexOf = (bytes: ArrayBuffer): string => hex(bytes);

/** What signing one request took, step by step: for a client, and for the console to show. */
export interface V4Signed {
  /** `x-amz-date` */
  amzDate: string;
  /** `x-amz-content-sha256`: the body's hex SHA-256. */
  payloadHash: string;
  signedHeaders: string[];
  canonicalRequest: string;
  stringToSign: string;
  /** The signing key's derivation: kDate, kRegion, kService, kSigning, each hex (with `explain`; else empty). */
  keySteps: { name: string; input: string; hex: string }[];
  signature: string;
  authorization: string;
}

/**
 * Signs a request with SigV4 in the Authorization header, as an S3 client does: sets `x-amz-date`
 * and `x-amz-content-sha256` on `headers`, signs `host`, every `x-amz-*` header, Content-Type and
 * Content-MD5, and answers every step. The path is signed as the URL holds it (encoded once).
 */
export async function signRequestV4(i: {
  method: string; url: URL; headers: Headers; body?: Uint8Array; accessKeyId: string; secret: string; region: string; now?: Date;
  /** Sign `UNSIGNED-PAYLOAD` instead of the body's SHA-256 (a large body, hashed by its Content-MD5 or not at all). */
  unsignedPayload?: boolean;
  /** Also work out the signing key's steps (`keySteps`), for showing: four more HMACs a request, which only a reader needs. */
  explain?: boolean;
}): Promise<V4Signed> {
  const amzDate = (i.now ?? new Date()).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const payloadHash = i.unsignedPayload ? UNSIGNED_PAYLOAD : await sha256Hex(i.body ?? new Uint8Array(0));
  i.headers.set('x-amz-date', amzDate);
  i.headers.set('x-amz-content-sha256', payloadHash);
  const credential: Credential = { accessKeyId: i.accessKeyId, date: amzDate.slice(0, 8), region: i.region, service: 's3' };
  const signedHeaders = ['host', ...[...i.headers.keys()].filter((n) => n.startsWith('x-amz-') || n === 'content-type' || n === 'content-md5')].sort();
  const canonical = canonicalRequest({
    method: i.method, rawPath: i.url.pathname, query: i.url.searchParams, headers: i.headers, host: i.url.host, signedHeaders, payloadHash,
  });
  if (canonical === undefined) throw new TypeError(`${i.url.pathname} is not a path that can be signed (its escapes are not UTF-8).`);
  const stringToSign = await stringToSignV4(amzDate, credential, canonical);
  const keySteps: V4Signed['keySteps'] = [];
  let key: ArrayBuffer = new TextEncoder().encode(`AWS4${i.secret}`).buffer as ArrayBuffer;
  for (const [name, input] of i.explain ? [['kDate', credential.date], ['kRegion', credential.region], ['kService', credential.service], ['kSigning', 'aws4_request']] as const : []) {
    key = await hmac(key, input);
    keySteps.push({ name, input, hex: hexOf(key) });
  }
  const signature = await signV4(i.secret, credential, stringToSign);
  const authorization = `${SIGV4_ALGORITHM} Credential=${i.accessKeyId}/${scopeOf(credential)}, SignedHeaders=${signedHeaders.join(';')}, Signature=${signature}`;
  i.headers.set('authorization', authorization);
  return { amzDate, payloadHash, signedHeaders, canonicalRequest: canonical, stringToSign, keySteps, signature, authorization };
}

/**
 * Signs a request in its URL's query (a presigned request, as S3's presigned URLs are): the
 * `X-Amz-*` parameters are added to `url` (a session token as `X-Amz-Security-Token`), `host` the
 * only header signed, the payload `UNSIGNED-PAYLOAD`: the URL the AWS SDK's presigner makes. A
 * browser's GET or HEAD signed so carries no header of its own, so it needs no CORS preflight:
 * half the round trips of a header-signed one to another origin, whose every new URL is preflighted.
 */
export async function presignRequestV4(i: {
  method: string; url: URL; accessKeyId: string; secret: string; region: string; sessionToken?: string; expiresSeconds: number; now?: Date;
}): Promise<void> {
  const amzDate = (i.now ?? new Date()).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const credential: Credential = { accessKeyId: i.accessKeyId, date: amzDate.slice(0, 8), region: i.region, service: 's3' };
  const params: [string, string][] = [
    ['X-Amz-Algorithm', SIGV4_ALGORITHM], ['X-Amz-Credential', `${i.accessKeyId}/${scopeOf(credential)}`], ['X-Amz-Date', amzDate],
    ['X-Amz-Expires', String(i.expiresSeconds)], ['X-Amz-SignedHeaders', 'host'], ['X-Amz-Content-Sha256', UNSIGNED_PAYLOAD], ...(i.sessionToken ? [['X-Amz-Security-Token', i.sessionToken] as [string, string]] : []),
  ];
  // The whole query written again as SigV4 encodes it (URLSearchParams writes a space as '+', which a server may read as '+').
  const add = (pairs: [string, string][]) => {
    i.url.search = [...i.url.searchParams, ...pairs].map(([n, v]) => `${uriEncode(n)}=${uriEncode(v)}`).join('&');
  };
  add(params);
  const canonical = canonicalRequest({
    method: i.method, rawPath: i.url.pathname, query: i.url.searchParams, headers: new Headers(), host: i.url.host, signedHeaders: ['host'], payloadHash: UNSIGNED_PAYLOAD, presigned: true,
  });
  if (canonical === undefined) throw new TypeError(`${i.url.pathname} is not a path that can be signed (its escapes are not UTF-8).`);
  add([['X-Amz-Signature', await signV4(i.secret, credential, await stringToSignV4(amzDate, credential, canonical))]]);
}
