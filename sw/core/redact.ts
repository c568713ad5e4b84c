// What a log may keep of a request (docs/protocol.md, "Every response"): never a signature or a
// session token, nor anything shaped like one, whether the service reads it or not. The signature
// part of `Authorization` (and of any header whose name holds "authorization", as a proxy's
// X-Forwarded-Authorization, "signature" or "token"), every `SVC key:signature` and
// `NOS key:signature` wherever it appears in a header, and every `Signature`, `X-Amz-Signature`
// and `X-Amz-Security-Token` parameter of a URL's query or fragment (also one whose name itself
// carries the value, `Signature%3D…`) become `…`; the access key id stays (SigV4's Credential
// and SignedHeaders too). One function,
// redactEntry(), used by every log path: the handler's onLog, the request log ring, the server's
// stdout line.
import type { LogEntry } from './handler.ts';

export const REDACTED = '…';

/**
 * `SVC key:signature` → `SVC key:…` (and NOS's alike); SigV4's `AWS4-HMAC-SHA256 Credential=…,
 * SignedHeaders=…, Signature=hex` keeps all but the signature; anything else that is not empty →
 * `…` (it may be a credential too).
 */
export function redactAuthorization(value: string): string {
  const m = /^(\s*(?:SVC|NOS)\s+[^:\s]*:)/i.exec(value);
  if (m) return m[1] + REDACTED;
  const v4 = /^(\s*AWS4-HMAC-SHA256\s+Credential=[^,\s]*,\s*SignedHeaders=[^,\s]*,\s*Signature=)[^,\s]*\s*$/i.exec(value);
  if (v4) return v4[1] + REDACTED;
  return value.trim() === '' ? value : REDACTED;
}

/** Query parameters that are secrets: a signature (SVC's and NOS's, SigV4's) or a session token. */
const SECRET_PARAMS = new Set(['signature', 'x-amz-signature', 'x-amz-security-token']);

function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/** One `&`-separated parameter list, every Signature parameter's value replaced. */
function redactParams(params: string): string {
  return params.split('&').map((part) => {
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    const decoded = decodedName(name).toLowerCase();
    if (SECRET_PARAMS.has(decoded)) return `${name}=${REDACTED}`;
    // A name that carries the value itself (`Signature%3D…`): the service reads no such parameter,
    // but it is a signature all the same.
    const carried = [...SECRET_PARAMS].find((p) => decoded.startsWith(`${p}=`));
    if (carried !== undefined) return `${name.slice(0, carried.length)}=${REDACTED}`;
    return part;
  }).join('&');
}

/**
 * Every `Signature=…` parameter in the query (after the first `?`) and the fragment (after the
 * first `#`) of a URL, or of any header value holding one, with its value replaced. The name is
 * compared as the service reads it: percent-decoded, and here also case-insensitively.
 */
export function redactSignatures(text: string): string {
  const hash = text.indexOf('#');
  const beforeHash = hash < 0 ? text : text.slice(0, hash);
  const q = beforeHash.indexOf('?');
  const head = q < 0 ? beforeHash : beforeHash.slice(0, q + 1) + redactParams(beforeHash.slice(q + 1));
  return hash < 0 ? head : `${head}#${redactParams(text.slice(hash + 1))}`;
}

/** `SVC key:signature` (or NOS's) anywhere in a value: the signature replaced, the key kept. */
const SVC_CREDENTIAL = /(\b(?:SVC|NOS)\s+[^:\s]*:)[^\s,;]+/gi;
/** SigV4's `Signature=hex` inside a value that is not an Authorization header. */
const V4_SIGNATURE = /(\bSignature=)[0-9a-f]{64}\b/gi;

function redactHeaders(headers: [string, string][]): [string, string][] {
  return headers.map(([name, value]) => [
    name,
    /authorization|signature|token/i.test(name)
      ? redactAuthorization(value)
      : redactSignatures(value).replace(SVC_CREDENTIAL, `$1${REDACTED}`).replace(V4_SIGNATURE, `$1${REDACTED}`),
  ]);
}

/** The entry as it may be logged. Idempotent: redacting twice changes nothing more. */
export function redactEntry(entry: LogEntry): LogEntry {
  return {
    ...entry,
    url: redactSignatures(entry.url),
    requestHeaders: redactHeaders(entry.requestHeaders),
    responseHeaders: redactHeaders(entry.responseHeaders),
  };
}
