// Shared, load-time helpers for the object conformance tables (objects, copy-move-meta,
// delete-multiple). Everything here produces plain data (strings, RegExps) at module load, so the
// cases stay replayable by the browser runner.
import { createHash } from 'node:crypto';
import type { Expect, Step } from './types.ts';

export const md5hex = (s: string | Uint8Array): string => createHash('md5').update(s).digest('hex');
export const md5b64 = (s: string | Uint8Array): string => createHash('md5').update(s).digest('base64');
/** The ETag header value of a single-request object with this content (docs/protocol.md, "ETags and Content-MD5": quoted lower-case hex). */
export const etagOf = (s: string): string => `"${md5hex(s)}"`;

/** `http://{bucket}.svc.localhost` */
export const host = (b: string): string => `http://${b}.svc.localhost`;
/** Virtual-host URL of a key, every path segment percent-encoded (slashes kept). */
export const objUrl = (b: string, key: string): string =>
  `${host(b)}/${key.split('/').map((s) => encodeURIComponent(s)).join('/')}`;
/** Path segment encoding of a key (slashes kept), for put(bucket, encodedKey, …). */
export const enc = (key: string): string => key.split('/').map((s) => encodeURIComponent(s)).join('/');

export const RFC1123 =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

const escRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\\/-]/g, '\\$&');

// docs/protocol.md, "Every response": Access-Control-Expose-Headers naming at least these.
export const EXPOSED = [
  'ETag', 'Content-Range', 'Accept-Ranges', 'Content-Disposition', 'Content-Length', 'Last-Modified',
  'x-svc-request-id', 'x-svc-version-id', 'x-svc-acl',
];
export const EXPOSE_RE = new RegExp(
  '^' + EXPOSED.map((n) => `(?=(?:.*[,\\s])?${escRe(n)}(?:[,\\s]|$))`).join('') + '.*$',
  'i',
);

/** docs/protocol.md, "Every response": headers every response carries (Connection is checked in objects.test.ts). */
export const COMMON: Record<string, string | RegExp | null> = {
  'x-svc-request-id': /\S/,
  date: RFC1123,
  server: 'swbucket',
  'access-control-allow-origin': '*',
  'access-control-expose-headers': EXPOSE_RE,
};

/** docs/protocol.md, "Errors": the XML error document, elements in this order. */
export const errorBodyRe = (code: string): RegExp =>
  new RegExp(
    '^<\\?xml version="1\\.0" encoding="UTF-8"\\?>\\s*<Error>\\s*' +
      `<Code>${escRe(code)}</Code>\\s*` +
      '<Message>[^<]*</Message>\\s*<Resource>[^<]*</Resource>\\s*<RequestId>[^<]+</RequestId>\\s*</Error>\\s*$',
  );

/** Expectation of an error response (not HEAD): status, code, XML body, application/xml, common headers. */
export function err(status: number, code: string, headers: Record<string, string | RegExp | null> = {}): Expect {
  return {
    status,
    code,
    body: errorBodyRe(code),
    headers: { ...COMMON, 'content-type': /^application\/xml/, ...headers },
  };
}

/** GET of a key that must not exist. */
export function gone(b: string, encodedKey: string): Step {
  return { method: 'GET', url: `${host(b)}/${encodedKey}`, expect: err(404, 'NoSuchKey') };
}

/** GET of a key that must hold exactly this body. */
export function has(b: string, encodedKey: string, body: string, headers: Record<string, string | RegExp | null> = {}): Step {
  return {
    method: 'GET',
    url: `${host(b)}/${encodedKey}`,
    expect: { status: 200, body, headers: { etag: etagOf(body), ...headers } },
  };
}

/** Bucket listing that must hold no object at all (docs/protocol.md, "Buckets"). */
export function emptyListing(b: string): Step {
  return {
    method: 'GET',
    url: `${host(b)}/`,
    expect: { status: 200, bodyIncludes: ['<ListBucketResult'], bodyExcludes: ['<Contents>'] },
  };
}

/** Root creates or updates an account (docs/protocol.md, "Accounts"). */
export function account(id: string, secret: string, quota?: number): Step {
  return {
    method: 'PUT',
    url: `http://svc.localhost/?account=${id}`,
    body:
      `<Account><SecretAccessKey>${secret}</SecretAccessKey><DisplayName>${id}</DisplayName>` +
      (quota !== undefined ? `<QuotaBytes>${quota}</QuotaBytes>` : '') +
      '</Account>',
    expect: { status: 200 },
  };
}

export const ALICE = { accessKeyId: 'alice', secret: 'alice-secret' };
