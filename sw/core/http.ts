// HTTP details implemented from RFC 9110 and docs/protocol.md ("Ranges", "Conditional reads"): dates, ranges, conditionals,
// Content-Disposition, ETags.
import { SvcError } from './errors.ts';
import type { WriteCondition } from '../store/types.ts';

/** RFC 1123 GMT, as HTTP dates are written. */
export const httpDate = (ms: number): string => new Date(ms).toUTCString();

/** ISO 8601 UTC with milliseconds, as XML dates are written. */
export const isoDate = (ms: number): string => new Date(ms).toISOString();

/** What a header value may hold (RFC 9110 field-value): visible characters, spaces and tabs, as bytes. */
export const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** A header name (RFC 9110 token), as header names are kept: lower case. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
/**
 * A value a request asks to be answered with (a `response-*` override, a form field): printable
 * ASCII, which every runtime sends as it is. A character beyond it would go out as a byte that is
 * not its UTF-8, and a CR, LF or NUL cannot be sent at all.
 */
export const ASCII_HEADER_VALUE = /^[\t\x20-\x7e]*$/;

const MONTHS = 'Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec';
const IMF_FIXDATE = new RegExp(`^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) (${MONTHS}) (\\d{4}) (\\d{2}):(\\d{2}):(\\d{2}) (\\S+)$`);
const RFC850_DATE = new RegExp(`^(Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, (\\d{2})-(${MONTHS})-(\\d{2}) (\\d{2}):(\\d{2}):(\\d{2}) (\\S+)$`);
const ASCTIME_DATE = new RegExp(`^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (${MONTHS}) ([ \\d]\\d) (\\d{2}):(\\d{2}):(\\d{2}) (\\d{4})$`);

/**
 * An HTTP date as RFC 9110 (5.6.7) has recipients read it — IMF-fixdate (RFC 1123's
 * `Sun, 06 Nov 1994 08:49:37 GMT`), or the obsolete RFC 850 and asctime forms — in ms; NaN for
 * anything else, never a guess (Date.parse reads a date without a zone in the machine's own time
 * zone, and rolls a 31 November into December). `zones`: the zone names taken, each with its
 * offset from GMT in minutes (NOS's `Asia/Shanghai` is +480).
 */
export function parseHttpDate(text: string, zones: Record<string, number> = { GMT: 0 }): number {
  let parts: [day: string, date: string, month: string, year: string, h: string, m: string, s: string, zone: string] | undefined;
  let m = IMF_FIXDATE.exec(text);
  if (m) parts = [m[1]!, m[2]!, m[3]!, m[4]!, m[5]!, m[6]!, m[7]!, m[8]!];
  else if ((m = RFC850_DATE.exec(text))) {
    // A two-digit year more than 50 years ahead is in the past century (RFC 9110).
    const yy = Number(m[4]);
    const thisYear = new Date().getUTCFullYear();
    const year = 2000 + yy > thisYear + 50 ? 1900 + yy : 2000 + yy;
    parts = [m[1]!.slice(0, 3), m[2]!, m[3]!, String(year), m[5]!, m[6]!, m[7]!, m[8]!];
  } else if ((m = ASCTIME_DATE.exec(text))) parts = [m[1]!, m[3]!.trim().padStart(2, '0'), m[2]!, m[7]!, m[4]!, m[5]!, m[6]!, 'GMT'];
  if (!parts) return NaN;
  const [day, date, month, year, h, min, sec, zone] = parts;
  const offset = zones[zone];
  if (offset === undefined) return NaN;
  const local = Date.UTC(Number(year), MONTHS.split('|').indexOf(month), Number(date), Number(h), Number(min), Number(sec));
  const d = new Date(local);
  // Each field as written (no 31 November, no 25th hour), and the day of the week that date has.
  if (d.getUTCDate() !== Number(date) || d.getUTCHours() !== Number(h) || d.getUTCMinutes() !== Number(min) || d.getUTCSeconds() !== Number(sec)
    || d.getUTCFullYear() !== Number(year) || 'SunMonTueWedThuFriSat'.indexOf(day) !== d.getUTCDay() * 3) return NaN;
  return local - offset * 60_000;
}

export const quoteEtag = (etag: string): string => `"${etag}"`;
export const unquoteEtag = (etag: string): string => etag.trim().replace(/^"(.*)"$/, '$1');

export type ByteRange = { start: number; end: number }; // inclusive

/**
 * The one range the protocol allows (docs/protocol.md, "Ranges"): `bytes=a-b`, `bytes=a-`, `bytes=-n`. Anything else, any range
 * on an empty object and a start at or past the end are InvalidRange (416).
 */
export function parseRange(header: string, size: number): ByteRange {
  const unsatisfiable = () => new SvcError('InvalidRange', undefined, { 'content-range': `bytes */${size}` });
  const m = /^bytes=(\d*)-(\d*)$/.exec(header);
  if (!m || (m[1] === '' && m[2] === '') || size === 0) throw unsatisfiable();
  const [, a = '', b = ''] = m;
  if (a === '') {
    const n = Number(b);
    if (n < 1) throw unsatisfiable();
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(a);
  if (start >= size) throw unsatisfiable();
  if (b === '') return { start, end: size - 1 };
  const end = Number(b);
  if (end < start) throw unsatisfiable();
  return { start, end: Math.min(end, size - 1) };
}

/**
 * If-Modified-Since at one-second resolution. An unparsable date, or one in the future, is ignored
 * (true: send the object).
 */
export function modifiedSince(header: string | null, lastModified: number, now: number): boolean {
  if (header === null) return true;
  const since = Date.parse(header);
  if (Number.isNaN(since) || since > now) return true;
  return Math.floor(lastModified / 1000) > Math.floor(since / 1000);
}

const UTF8 = new TextEncoder();
export const utf8Length = (s: string): number => UTF8.encode(s).length;

/** RFC 5987 value: UTF-8, every byte outside attr-char percent-encoded. */
function extValue(s: string): string {
  let out = '';
  for (const byte of UTF8.encode(s)) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9!#$&+\-.^_`|~]/.test(c) ? c : '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/**
 * `{type}; filename="…"`, plus `filename*=UTF-8''…` when the name is not printable ASCII. The quoted
 * form must stay a valid header value, so control and non-ASCII characters become `_` there.
 */
export function contentDisposition(type: 'inline' | 'attachment', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '\\$&');
  const plain = /^[\x20-\x7e]*$/.test(name);
  return `${type}; filename="${ascii}"` + (plain ? '' : `; filename*=UTF-8''${extValue(name)}`);
}

/** A `type/subtype` media type (parameters allowed), as PUT Object Meta requires. */
export function isMediaType(value: string): boolean {
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*(;.*)?$/.test(value.trim());
}

/** Whether an If-Match / If-None-Match list names this ETag (`*` names any). */
function etagListed(header: string, etag: string): boolean {
  return header.split(',').some((item) => {
    const tag = item.trim().replace(/^W\//, '');
    return tag === '*' || unquoteEtag(tag) === etag;
  });
}

/** Whether a time is after an HTTP date, at one-second resolution; undefined for a date that is not one. */
function after(header: string, time: number): boolean | undefined {
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.floor(time / 1000) > Math.floor(date / 1000);
}

/**
 * RFC 9110's preconditions over an object, as S3 evaluates them on a read (`prefix` '') or a copy's
 * source (`prefix` 'x-amz-copy-source-'): If-Match, else If-Unmodified-Since, failing is 'failed';
 * then If-None-Match, else If-Modified-Since, failing is 'notModified' ('failed' for a copy).
 * An unparsable date is ignored, as is an If-Modified-Since in the future.
 */
export function preconditions(h: Headers, o: { etag: string; lastModified: number }, now: number, prefix = ''): 'ok' | 'failed' | 'notModified' {
  const ifMatch = h.get(`${prefix}if-match`);
  if (ifMatch !== null) {
    if (!etagListed(ifMatch, o.etag)) return 'failed';
  } else {
    const since = h.get(`${prefix}if-unmodified-since`);
    if (since !== null && after(since, o.lastModified) === true) return 'failed';
  }
  const ifNoneMatch = h.get(`${prefix}if-none-match`);
  const notModified = prefix === '' ? 'notModified' : 'failed';
  if (ifNoneMatch !== null) return etagListed(ifNoneMatch, o.etag) ? notModified : 'ok';
  const modified = h.get(`${prefix}if-modified-since`);
  if (modified !== null && Date.parse(modified) <= now && after(modified, o.lastModified) === false) return notModified;
  return 'ok';
}

/**
 * S3's conditional write, from a PUT's, Copy's or Complete's If-Match and If-None-Match (they name
 * the object at the key being written; a copy's source has its own headers): If-Match needs an
 * object (404 NoSuchKey without one) that it lists (`*` lists any), If-None-Match needs none it
 * lists. Undefined when the request has neither header.
 */
export function writeCondition(h: Headers): WriteCondition | undefined {
  const ifMatch = h.get('if-match');
  const ifNoneMatch = h.get('if-none-match');
  if (ifMatch === null && ifNoneMatch === null) return undefined;
  return (current) => {
    if (ifMatch !== null && !current) return 'noSuchKey';
    if (ifMatch !== null && !etagListed(ifMatch, current!.etag)) return 'preconditionFailed';
    if (ifNoneMatch !== null && current && etagListed(ifNoneMatch, current.etag)) return 'preconditionFailed';
    return undefined;
  };
}
