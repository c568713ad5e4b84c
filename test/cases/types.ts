// One table of conformance cases, two runners: test/unit/conformance.test.ts calls the handler in
// Node; the browser runner (issue 5) replays the same steps with fetch() inside a page controlled by
// the real service worker. So a case is plain data: full virtual-host URLs, string bodies.

/**
 * The page's own origin in case URLs (for the `/svc/` mount). The Node runner uses it as is; the
 * browser runner replaces it with the origin of the page the worker controls.
 */
export const PAGE_ORIGIN = 'http://localhost:5173';

export type Auth =
  | 'root' // signed as svcadmin with x-svc-date (default)
  | 'anon' // no Authorization at all
  | { accessKeyId: string; secret: string } // signed with other credentials
  | { header: string }; // Authorization sent verbatim (forged, truncated, wrong scheme…)

export type Body = string | { repeat: string; times: number };

export interface Expect {
  status: number;
  /** Error code in the XML body (or, for HEAD, only the status is checked). */
  code?: string;
  /** Exact header values; null = header must be absent; RegExp = must match. */
  headers?: Record<string, string | RegExp | null>;
  /** Exact body text; '' = empty body. */
  body?: string | RegExp;
  /** Each string must appear in the body. */
  bodyIncludes?: string[];
  /** None of these strings may appear in the body. */
  bodyExcludes?: string[];
}

export interface Step {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: Body;
  auth?: Auth;
  /** Node only: send this Content-Length instead of the real one, or none at all. */
  contentLength?: number | 'omit';
  /** Seconds to shift the signing clock (skew tests). */
  clockSkewSeconds?: number;
  expect: Expect;
}

export interface Case {
  name: string;
  steps: Step[];
  /** Needs a runtime that delivers the real Content-Length / Date headers (not the browser). */
  nodeOnly?: boolean;
}

export function bodyText(body: Body | undefined): string {
  if (body === undefined) return '';
  return typeof body === 'string' ? body : body.repeat.repeat(body.times);
}

/** Steps most cases start with: create a bucket, optionally put objects. */
export function bucket(name: string, acl?: 'private' | 'public-read'): Step {
  return {
    method: 'PUT',
    url: `http://${name}.svc.localhost/`,
    headers: acl ? { 'x-svc-acl': acl } : {},
    expect: { status: 200 },
  };
}

export function put(bucketName: string, key: string, body: Body = 'hello', headers: Record<string, string> = {}): Step {
  return {
    method: 'PUT',
    url: `http://${bucketName}.svc.localhost/${key}`,
    headers,
    body,
    expect: { status: 200 },
  };
}
