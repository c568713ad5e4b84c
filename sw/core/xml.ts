// XML in and out, through fast-xml-parser. Parsing is bounded: callers cap the body size before
// calling parseXml, any DOCTYPE is refused (so no entity can be declared, let alone expanded), and
// only XML's five predefined entities and numeric character references are decoded.
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

// Attributes are written only for S3's xmlns on a document's root (withNamespace()).
const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', processEntities: true, suppressEmptyNode: false });

/** Anything XML 1.0 cannot carry, even as a character reference. */
const NOT_XML_CHAR_GLOBAL = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/**
 * A whole XML document: declaration first, no namespace. Arrays become repeated elements. A CR is
 * written `&#13;` (a parser would read a literal one as LF), and a character XML cannot carry at
 * all, which the service refuses in keys but an old record or a message might still hold, as
 * U+FFFD: the document is well-formed whatever the data.
 */
export function xmlDocument(root: Record<string, unknown>): string {
  return DECLARATION + builder.build(root).replace(/\r/g, '&#13;').replace(NOT_XML_CHAR_GLOBAL, '\uFFFD');
}

/** The document with `xmlns` on its root element (S3's documents); as given without one. */
export function withNamespace(root: Record<string, unknown>, xmlns: string | undefined): Record<string, unknown> {
  if (xmlns === undefined) return root;
  const [name, value] = Object.entries(root)[0]!;
  const body = typeof value === 'object' && value !== null && !Array.isArray(value) ? value : value === '' ? {} : { '#text': value };
  return { [name]: { '@_xmlns': xmlns, ...body } };
}

/** An XML response with its Content-Length (the request log counts bytes out from it). */
export function xmlResponse(root: Record<string, unknown>, status = 200, headers?: HeadersInit): Response {
  const bytes = new TextEncoder().encode(xmlDocument(root));
  const h = new Headers(headers);
  h.set('content-type', 'application/xml');
  h.set('content-length', String(bytes.byteLength));
  return new Response(bytes, { status, headers: h });
}

/**
 * A request body that is not the XML asked for. It knows no HTTP: errors.ts answers it as
 * MalformedXML, with `detail` as the message when there is one.
 */
export class XmlError extends Error {
  override readonly name = 'XmlError';
  constructor(readonly detail?: string) {
    super(detail ?? 'The XML is not well-formed or is not the document expected.');
  }
}

/** Elements that may repeat; the parser returns them as arrays even when there is one. */
const REPEATED = new Set(['Object', 'Part', 'CORSRule', 'AllowedMethod', 'AllowedOrigin', 'AllowedHeader', 'ExposeHeader']);

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  processEntities: false,
  htmlEntities: false,
  parseTagValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  isArray: (name) => REPEATED.has(name),
  tagValueProcessor: (_name, value) => decodeEntities(value),
});

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' };

/** Characters XML 1.0 forbids anywhere in a document (its Char production), NUL among them. */
const NOT_XML_CHAR = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

const isXmlChar = (code: number): boolean =>
  code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff)
  || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);

function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&([^;&]*);/g, (_m, name: string) => {
    const predefined = PREDEFINED[name];
    if (predefined !== undefined) return predefined;
    // Any number of leading zeros (`&#00000000065;` is "A"); a number past U+10FFFF is no character.
    const code = /^#x0*[0-9a-fA-F]{1,6}$/.test(name) ? parseInt(name.slice(2), 16)
      : /^#0*[0-9]{1,7}$/.test(name) ? parseInt(name.slice(1), 10) : NaN;
    if (!isXmlChar(code)) {
      throw new XmlError(`Unknown or invalid entity &${name.slice(0, 20)};`);
    }
    return String.fromCodePoint(code);
  });
}

/**
 * CDATA sections as the escaped text they stand for: their content is literal (`a&amp;b` in one is
 * those seven characters), and the parser's text then goes through decodeEntities like any other.
 */
const escapeCdata = (text: string): string => text.includes('<![CDATA[')
  ? text.replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, (_m, inner: string) => inner.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'))
  : text;

export type XmlNode = Record<string, unknown>;

/**
 * Parses a request body whose root element must be `root`; anything else is an XmlError.
 * `maxTags`: the most tags (`<`) the document may hold, counted before it is parsed: a body within
 * its size limit made of a million empty elements costs the parser over a second, where the
 * document a client sends needs a known few per entry.
 */
export function parseXml(body: string, root: string, maxTags = Infinity): XmlNode {
  if (/<!DOCTYPE|<!ENTITY/i.test(body)) throw new XmlError('DTDs are not allowed.');
  if (NOT_XML_CHAR.test(body)) throw new XmlError('The body holds a character XML does not allow.');
  let tags = 0;
  for (let at = body.indexOf('<'); at >= 0; at = body.indexOf('<', at + 1)) {
    if (++tags > maxTags) throw new XmlError(`The document holds more than the ${maxTags} tags a ${root} may have.`);
  }
  const text = escapeCdata(body);
  if (XMLValidator.validate(text) !== true) throw new XmlError();
  let doc: unknown;
  try {
    doc = parser.parse(text);
  } catch (e) {
    if (e instanceof XmlError) throw e;
    throw new XmlError();
  }
  const node = (doc as XmlNode)[root];
  if (node === undefined) throw new XmlError(`The root element must be ${root}.`);
  // <Root/> parses as '' — an element with no children.
  return typeof node === 'object' && node !== null ? (node as XmlNode) : {};
}

/** Text of a leaf child, or undefined when absent; a container where text is expected is malformed. */
export function childText(node: XmlNode, name: string): string | undefined {
  const v = node[name];
  if (v === undefined) return undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) throw new XmlError(`<${name}> appears more than once.`);
  // An element with only whitespace and no children comes back as an object with '#text'.
  const text = (v as XmlNode)['#text'];
  if (Object.keys(v as XmlNode).every((k) => k === '#text')) return typeof text === 'string' ? text : '';
  throw new XmlError(`<${name}> must hold text.`);
}

/** Children that may repeat, as an array of element nodes. */
export function children(node: XmlNode, name: string): XmlNode[] {
  const v = node[name];
  if (v === undefined) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.map((item) => (typeof item === 'object' && item !== null ? (item as XmlNode) : {}));
}
