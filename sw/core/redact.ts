// What a log may keep of a request (docs/protocol.md, "Every response"): never a signature. The
// signature part of `Authorization` and every `Signature` query value (in the URL, in a Referer,
// in any header) become `…`; the access key id stays. One function, redactEntry(), used by every
// log path: the handler's onLog, the request log ring, the server's stdout line.
import type { LogEntry } from './handler.ts';

export const REDACTED = '…';

/** `SVC key:signature` → `SVC key:…`; anything else that is not empty → `…` (it may be a credential too). */
export function redactAuthorization(value: string): string {
  const m = /^(\s*SVC\s+[^:\s]*:)/i.exec(value);
  if (m) return m[1] + REDACTED;
  return value.trim() === '' ? value : REDACTED;
}

function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * Every `Signature=…` parameter in the query part (after the first `?`) of a URL, or of any header
 * value holding one, with its value replaced. The name is compared as the service reads it:
 * percent-decoded, and here also case-insensitively.
 */
export function redactSignatures(text: string): string {
  const q = text.indexOf('?');
  if (q < 0) return text;
  const hash = text.indexOf('#', q);
  const end = hash < 0 ? text.length : hash;
  const query = text.slice(q + 1, end).split('&').map((part) => {
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    if (decodedName(name).toLowerCase() !== 'signature') return part;
    return `${name}=${REDACTED}`;
  });
  return text.slice(0, q + 1) + query.join('&') + text.slice(end);
}

function redactHeaders(headers: [string, string][]): [string, string][] {
  return headers.map(([name, value]) => [
    name,
    name.toLowerCase() === 'authorization' || name.toLowerCase() === 'proxy-authorization'
      ? redactAuthorization(value)
      : redactSignatures(value),
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
