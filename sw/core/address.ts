// Which bucket and key a URL names (docs/protocol.md, "Addressing"): virtual host `{bucket}.{endpoint}`, path
// style on the service host `{endpoint}/{bucket}/{key}`, and the page-origin mount `/svc/…`.
// Scheme and port never matter.
import { SvcError } from './errors.ts';
import { bucketNameProblem, isValidBucketName, type Target } from '../../protocol/address.ts';
import { DIALECT_NAMES, type DialectName, type Endpoints } from './dialect.ts';

export interface AddressOptions {
  /** Each dialect's service host. */
  endpoints: Endpoints;
  /** Path on the page's own origin that stands for the service host, e.g. `/svc/`. */
  mount: string;
  /** Treat a host that is neither the endpoint nor a bucket host as the service host (HTTP server). */
  anyHostIsService: boolean;
}

function decode(raw: string): string {
  try {
    return decodeURIComponent(raw); // exactly once, as UTF-8; `+` stays a plus
  } catch {
    throw new SvcError('InvalidArgument', 'The URL path is not valid percent-encoded UTF-8.');
  }
}

/**
 * A character no XML 1.0 document can carry: C0 controls but tab, LF and CR; U+FFFE, U+FFFF; a lone
 * surrogate. A key or list parameter holding one could never be listed or echoed in well-formed XML.
 */
const NOT_XML_TEXT = /[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function checkXmlText(text: string, what: string): string {
  const bad = NOT_XML_TEXT.exec(text);
  if (bad) {
    const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    throw new SvcError('InvalidArgument', `The ${what} holds U+${code}, a character XML cannot carry.`);
  }
  return text;
}

function bucketTarget(bucket: string, rawKey: string): Target {
  if (!isValidBucketName(bucket)) throw new SvcError('InvalidBucketName', bucketNameProblem(bucket));
  return rawKey === '' ? { kind: 'bucket', bucket, key: '' } : { kind: 'object', bucket, key: checkXmlText(decode(rawKey), 'key') };
}

/** The query parameters that listings echo in XML. */
const LISTING_PARAMS = new Set(['prefix', 'marker', 'delimiter', 'key-marker', 'start-after']);

/**
 * Refuses listing parameters that are not valid percent-encoded UTF-8 (URLSearchParams would turn
 * them into U+FFFD without a word) or that hold a character XML cannot carry.
 */
export function checkListingParams(url: URL): void {
  for (const pair of url.search.slice(1).split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (!LISTING_PARAMS.has(name) || eq < 0) continue;
    let value: string;
    try {
      value = decodeURIComponent(pair.slice(eq + 1).replace(/\+/g, ' '));
    } catch {
      throw new SvcError('InvalidArgument', `The ${name} parameter is not valid percent-encoded UTF-8.`);
    }
    checkXmlText(value, `${name} parameter`);
  }
}

/** `/{bucket}/{key}` on the service host. */
function pathStyle(path: string): Target {
  const rest = path.replace(/^\//, '');
  if (rest === '') return { kind: 'service', bucket: '', key: '' };
  const slash = rest.indexOf('/');
  const bucket = decode(slash < 0 ? rest : rest.slice(0, slash));
  return bucketTarget(bucket, slash < 0 ? '' : rest.slice(slash + 1));
}

/**
 * The dialect whose host (an endpoint, or a bucket host under it) a URL names. The longest endpoint
 * first: with an endpoint `s3.svc.localhost`, that host is S3's, not a bucket of SVC's.
 */
export function hostDialect(url: URL, endpoints: Endpoints): DialectName | undefined {
  const host = url.hostname.toLowerCase();
  const byLength = [...DIALECT_NAMES].sort((a, b) => endpoints[b].length - endpoints[a].length);
  return byLength.find((d) => host === endpoints[d] || host.endsWith('.' + endpoints[d]));
}

/** The target of a URL, or null when the URL is not the service's at all. */
export function resolveAddress(url: URL, o: AddressOptions): Target | null {
  const dialect = hostDialect(url, o.endpoints);
  if (dialect !== undefined) {
    const endpoint = o.endpoints[dialect];
    const host = url.hostname.toLowerCase();
    if (host === endpoint) return pathStyle(url.pathname);
    return bucketTarget(host.slice(0, -endpoint.length - 1), url.pathname.slice(1));
  }
  if (o.anyHostIsService) return pathStyle(url.pathname);
  const mountRoot = o.mount.replace(/\/$/, '');
  if (url.pathname === mountRoot || url.pathname.startsWith(mountRoot + '/')) {
    return pathStyle(url.pathname.slice(mountRoot.length));
  }
  return null;
}
