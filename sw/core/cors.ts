// A bucket's CORS configuration (S3's PutBucketCors), read and enforced as S3 enforces it, so an
// app can try its production rules here first (docs/protocol.md, "Dialects"). Without one, every
// origin is answered (handler.ts, preflight() and finish()). With one, a preflight to the bucket is
// answered only when a rule allows its origin, method and headers, and an S3 answer to a request
// with an Origin carries CORS headers only when a rule allows it: the browser then refuses the rest.
import { SvcError, fail } from './errors.ts';
import { children, childText, parseXml } from './xml.ts';
import { HEADER_NAME } from './http.ts';
import type { CorsRule } from '../store/types.ts';

const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD'];
/** S3's limit on rules per configuration. */
const MAX_RULES = 100;

/** A pattern with at most one `*`, matched case-insensitively for headers, exactly for origins. */
function matches(pattern: string, value: string, caseless: boolean): boolean {
  const p = caseless ? pattern.toLowerCase() : pattern;
  const v = caseless ? value.toLowerCase() : value;
  const star = p.indexOf('*');
  if (star < 0) return p === v;
  const head = p.slice(0, star);
  const tail = p.slice(star + 1);
  return v.length >= head.length + tail.length && v.startsWith(head) && v.endsWith(tail);
}

const oneStar = (text: string) => text.split('*').length <= 2;

/** A CORSConfiguration document as rules; what S3 refuses is refused here with S3's codes. */
export function parseCorsConfiguration(xml: string): CorsRule[] {
  const doc = parseXml(xml, 'CORSConfiguration');
  const rules = children(doc, 'CORSRule');
  if (rules.length === 0) fail('MalformedXML', 'A CORSConfiguration needs at least one CORSRule.');
  if (rules.length > MAX_RULES) fail('MalformedXML', `A CORSConfiguration may hold at most ${MAX_RULES} rules.`);
  return rules.map((r) => {
    const texts = (name: string): string[] => {
      const v = r[name];
      const list = v === undefined ? [] : Array.isArray(v) ? v : [v];
      return list.map((item) => (typeof item === 'string' ? item : childText({ item }, 'item') ?? '').trim());
    };
    const allowedMethods = texts('AllowedMethod');
    const allowedOrigins = texts('AllowedOrigin');
    if (allowedMethods.length === 0 || allowedOrigins.length === 0) fail('MalformedXML', 'Every CORSRule needs an AllowedMethod and an AllowedOrigin.');
    const allowedHeaders = texts('AllowedHeader').map((h) => h.toLowerCase());
    const rule: CorsRule = { allowedMethods, allowedOrigins, allowedHeaders, exposeHeaders: texts('ExposeHeader') };
    const problem = corsRuleProblem(rule);
    if (problem) fail('InvalidRequest', problem);
    const id = childText(r, 'ID')?.trim();
    if (id) rule.id = id;
    const maxAge = childText(r, 'MaxAgeSeconds')?.trim();
    if (maxAge !== undefined) {
      if (!/^\d{1,9}$/.test(maxAge)) fail('MalformedXML', 'MaxAgeSeconds must be a non-negative integer.');
      rule.maxAgeSeconds = Number(maxAge);
    }
    return rule;
  });
}

/** An origin pattern: visible ASCII, no spaces (`https://*.example.com`, `*`). */
const ORIGIN = /^[\x21-\x7e]+$/;
/** A header-name pattern: a header name, with at most one `*` among its characters. */
const HEADER_PATTERN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/**
 * What is wrong with a rule, as S3 refuses it, or undefined. Its origins and headers become
 * response headers (the exposed ones) or are matched against request headers, so each must be
 * one a header can carry: an ExposeHeader holding a line break would break every answer it grants.
 */
export function corsRuleProblem(rule: CorsRule): string | undefined {
  const unsupported = rule.allowedMethods.find((m) => !METHODS.includes(m));
  if (unsupported !== undefined) return `Found unsupported HTTP method in CORS config. Unsupported method is ${unsupported}`;
  const badOrigin = rule.allowedOrigins.find((o) => !ORIGIN.test(o));
  if (badOrigin !== undefined) return `AllowedOrigin "${badOrigin}" is not an origin: visible ASCII characters without spaces, at most one "*".`;
  const badHeader = rule.allowedHeaders.find((h) => !HEADER_PATTERN.test(h));
  if (badHeader !== undefined) return `AllowedHeader "${badHeader}" is not a header name.`;
  const badExposed = rule.exposeHeaders.find((h) => !HEADER_NAME.test(h.toLowerCase()));
  if (badExposed !== undefined) return `ExposeHeader "${badExposed}" is not a header name.`;
  const stars = [...rule.allowedOrigins, ...rule.allowedHeaders].find((o) => !oneStar(o));
  if (stars !== undefined) return `"${stars}" can not have more than one wildcard.`;
  return undefined;
}

/** The configuration as S3 writes it back (GetBucketCors). */
export function corsDocument(rules: CorsRule[]): Record<string, unknown> {
  return {
    CORSConfiguration: {
      CORSRule: rules.map((r) => ({
        ...(r.id ? { ID: r.id } : {}),
        AllowedHeader: r.allowedHeaders,
        AllowedMethod: r.allowedMethods,
        AllowedOrigin: r.allowedOrigins,
        ExposeHeader: r.exposeHeaders,
        ...(r.maxAgeSeconds !== undefined ? { MaxAgeSeconds: r.maxAgeSeconds } : {}),
      })),
    },
  };
}

/**
 * The most headers a preflight may ask for: a page's request names a handful, and each is matched
 * against every allowed header of every rule (7,000 asked against a rule of 1,700 cost 350 ms).
 */
const MAX_ASKED_HEADERS = 100;

/** The first rule that allows this origin, method and every requested header. */
export function matchingRule(rules: CorsRule[], origin: string, method: string, headers: string[]): CorsRule | undefined {
  if (headers.length > MAX_ASKED_HEADERS) return undefined;
  return rules.find((r) => r.allowedMethods.includes(method)
    && r.allowedOrigins.some((o) => matches(o, origin, false))
    && headers.every((h) => r.allowedHeaders.some((a) => matches(a, h, true))));
}

/** What a matching rule grants, as response headers. */
function granted(rule: CorsRule, origin: string): Record<string, string> {
  const any = rule.allowedOrigins.includes('*');
  // Only names a header can carry: rules an earlier swbucket stored were not checked for it.
  const exposed = rule.exposeHeaders.filter((h) => HEADER_NAME.test(h.toLowerCase()));
  return {
    'access-control-allow-origin': any ? '*' : origin,
    'access-control-allow-methods': rule.allowedMethods.join(', '),
    ...(any ? {} : { 'access-control-allow-credentials': 'true' }),
    ...(exposed.length > 0 ? { 'access-control-expose-headers': exposed.join(', ') } : {}),
    ...(rule.maxAgeSeconds !== undefined ? { 'access-control-max-age': String(rule.maxAgeSeconds) } : {}),
    vary: 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method',
  };
}

/** The answer to a preflight to a bucket with rules: 200 with what a rule grants, else 403 AccessForbidden. */
export function corsPreflight(rules: CorsRule[], req: Request): Response {
  const origin = req.headers.get('origin');
  const method = req.headers.get('access-control-request-method');
  if (origin === null || method === null) {
    throw new SvcError('InvalidRequest', 'Insufficient information. Origin and Access-Control-Request-Method are needed for a CORS preflight.');
  }
  const asked = (req.headers.get('access-control-request-headers') ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
  const rule = matchingRule(rules, origin, method, asked);
  if (!rule) {
    throw new SvcError('AccessForbidden', 'CORSResponse: This CORS request is not allowed. This is usually because the evaluation of Origin, '
      + 'request method / Access-Control-Request-Method or Access-Control-Request-Headers are not allowed by the bucket\'s CORS configuration.');
  }
  const headers = granted(rule, origin);
  if (asked.length > 0) headers['access-control-allow-headers'] = asked.join(', ');
  return new Response(null, { status: 200, headers });
}

/** Headers a page may send without a preflight, or that the browser sets itself: no rule needs to name them. */
const UNGUARDED = new Set(['accept', 'accept-language', 'content-language', 'content-type', 'range', 'user-agent', 'referer', 'origin', 'accept-encoding', 'connection', 'host', 'content-length', 'cache-control', 'pragma']);

/** The headers of a request a browser would have asked a preflight for. */
export function guardedHeaders(h: Headers): string[] {
  return [...h.keys()].filter((n) => !UNGUARDED.has(n) && !n.startsWith('sec-'));
}

/**
 * An S3 answer to a request from `origin` to a bucket with rules: the CORS headers a rule grants
 * for its method, or none at all (the browser then keeps the answer from the page). `headers`:
 * what a preflight would have asked for, where no preflight was made (a service worker answers
 * the page's request itself); undefined where the preflight checked them.
 * Answers undefined when no rule allows the request.
 */
export function applyCors(res: Response, rules: CorsRule[], origin: string, method: string, headers: string[] = []): Response | undefined {
  const h = res.headers;
  for (const name of [...h.keys()]) if (name.startsWith('access-control-')) h.delete(name);
  const rule = matchingRule(rules, origin, method, headers);
  if (!rule) return undefined;
  const { 'access-control-max-age': _age, ...granting } = granted(rule, origin);
  for (const [name, value] of Object.entries(granting)) h.set(name, value);
  return res;
}
