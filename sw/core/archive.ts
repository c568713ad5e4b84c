// The archive format of export and import (docs/protocol.md, "Archives"): a tar file whose first
// entry, swbucket.json, describes everything (accounts, buckets, and every stored version with its
// headers, metadata, ETag and dates), followed by one file per stored version, in the manifest's
// order. The files are named after their keys so that `tar -x` shows a person their data; the
// manifest, not the name, says what a file is.
import { SvcError } from './errors.ts';
import { limits } from './limits.ts';
import { checkXmlText } from './address.ts';
import { HEADER_NAME, HEADER_VALUE } from './http.ts';
import { corsRuleProblem } from './cors.ts';
import { checkMetadataSize } from './ops/objects.ts';
import { isValidBucketName } from '../../protocol/address.ts';
import {
  STANDARD_HEADERS, type Acl, type BucketRecord, type CorsRule, type ObjectChecksum, type ObjectPart, type ObjectRecord, type StandardHeader,
} from '../store/types.ts';

export const MANIFEST_NAME = 'swbucket.json';
export const ARCHIVE_FORMAT = 'swbucket-archive';
export const ARCHIVE_VERSION = 1;

export interface ArchiveAccount {
  accessKeyId: string;
  secret: string;
  displayName: string;
  quotaBytes?: number;
}

export type ArchiveBucket = Omit<BucketRecord, 'id'>;

/** One stored version: the current object at its key, or one of its history. */
export interface ArchiveObject extends Omit<ObjectRecord, 'chunks' | 'uploadId'> {
  current: boolean;
  /** The tar entry that holds its bytes. */
  file: string;
}

export interface Manifest {
  format: typeof ARCHIVE_FORMAT;
  version: typeof ARCHIVE_VERSION;
  /** ISO 8601. */
  created: string;
  /** What wrote it, e.g. `swbucket 0.1.0`. */
  generator: string;
  /** Present when the export included accounts. */
  accounts?: ArchiveAccount[];
  buckets: ArchiveBucket[];
  objects: ArchiveObject[];
}

// ---- names of the data files -------------------------------------------------------------------

/** A key segment that extracts as itself on POSIX and Windows file systems (its length aside). */
const PLAIN_SEGMENT = /^(?!\.{1,2}$)[^\x00-\x1f\x7f\\:*?"<>|]+$/u;
/** The longest file name a POSIX file system takes (NAME_MAX), in bytes: what tar extracts into. */
const NAME_MAX_BYTES = 255;
const utf8 = new TextEncoder();
const plainSegment = (s: string): boolean => PLAIN_SEGMENT.test(s) && utf8.encode(s).length <= NAME_MAX_BYTES;

/**
 * Gives each stored version a file name: `objects/{bucket}/{key}` for current objects and
 * `versions/{bucket}/{versionId}/{key}` for history, when the key reads as a path that extracts
 * cleanly and does not collide with one named before (a key `a` is a file, so `a/b` cannot be);
 * else `other/{n}`, a name no key produces.
 */
export function fileNamer(): (object: Omit<ArchiveObject, 'file'>) => string {
  const files = new Set<string>();
  const dirs = new Set<string>();
  let other = 0;
  return (o) => {
    const segments = o.key.split('/');
    const base = o.current ? ['objects', o.bucket] : ['versions', o.bucket, String(o.versionId)];
    const path = [...base, ...segments];
    const name = path.join('/');
    const parents = path.slice(0, -1).map((_, i) => path.slice(0, i + 1).join('/'));
    const clean = segments.every(plainSegment)
      && !files.has(name) && !dirs.has(name) && !parents.some((p) => files.has(p));
    if (!clean) return `other/${++other}`;
    files.add(name);
    for (const p of parents) dirs.add(p);
    return name;
  };
}

// ---- reading a manifest ----------------------------------------------------------------------

export const malformed = (message: string): never => {
  throw new SvcError('MalformedArchive', message);
};

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown, min: number, max: number): v is number => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;
const isString = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;
const ETAG = /^[0-9a-f]{32}(-[1-9]\d{0,4})?$/;
const MD5 = /^[0-9a-f]{32}$/;
const ACCESS_KEY_ID = /^[A-Za-z0-9._~-]{3,64}$/;

function field<T>(record: Json, name: string, ok: (v: unknown) => v is T, where: string, what: string): T {
  const v = record[name];
  if (!ok(v)) return malformed(`${where}: "${name}" must be ${what}.`);
  return v;
}

function readAccount(v: unknown, i: number): ArchiveAccount {
  const where = `accounts[${i}]`;
  if (!isObject(v)) return malformed(`${where} is not an object.`);
  const accessKeyId = field(v, 'accessKeyId', (x): x is string => typeof x === 'string' && ACCESS_KEY_ID.test(x), where, '3–64 characters of A-Z a-z 0-9 . _ ~ -');
  const secret = field(v, 'secret', (x): x is string => typeof x === 'string' && /^[\x21-\x7e]{8,128}$/.test(x), where, '8–128 printable ASCII characters');
  const displayName = field(v, 'displayName', (x): x is string => isString(x, 256), where, 'a string of at most 256 characters');
  const account: ArchiveAccount = { accessKeyId, secret, displayName };
  if (v.quotaBytes !== undefined) account.quotaBytes = field(v, 'quotaBytes', (x): x is number => isInt(x, 0, 1e15 - 1), where, 'a non-negative integer');
  return account;
}

const isStrings = (x: unknown, max: number): x is string[] => Array.isArray(x) && x.length <= max && x.every((s) => isString(s, 1024) && HEADER_VALUE.test(s));

/** A bucket's CORS rules as the store keeps them (sw/core/cors.ts makes them). */
function isCorsRules(x: unknown): x is CorsRule[] {
  return Array.isArray(x) && x.length >= 1 && x.length <= 100 && x.every((r) => isObject(r)
    && isStrings(r.allowedMethods, 5) && isStrings(r.allowedOrigins, 1000) && isStrings(r.allowedHeaders, 1000) && isStrings(r.exposeHeaders, 1000)
    && (r.id === undefined || isString(r.id, 255)) && (r.maxAgeSeconds === undefined || isInt(r.maxAgeSeconds, 0, 999_999_999))
    && Object.keys(r).every((k) => ['id', 'allowedMethods', 'allowedOrigins', 'allowedHeaders', 'exposeHeaders', 'maxAgeSeconds'].includes(k))
    && corsRuleProblem(r as unknown as CorsRule) === undefined);
}

function readBucket(v: unknown, i: number): ArchiveBucket {
  const where = `buckets[${i}]`;
  if (!isObject(v)) return malformed(`${where} is not an object.`);
  const name = field(v, 'name', (x): x is string => typeof x === 'string' && isValidBucketName(x), where, 'a valid bucket name');
  const owner = field(v, 'owner', (x): x is string => typeof x === 'string' && ACCESS_KEY_ID.test(x), where, 'an account id');
  const acl = field(v, 'acl', (x): x is Acl => x === 'private' || x === 'public-read', where, '"private" or "public-read"');
  const created = field(v, 'created', (x): x is number => isInt(x, 0, 8.64e15), where, 'milliseconds since the epoch');
  const nextVersionId = field(v, 'nextVersionId', (x): x is number => isInt(x, 1, 10 ** limits.versionIdDigits), where, `a positive integer up to ${10 ** limits.versionIdDigits}`);
  const bucket: ArchiveBucket = { name, owner, acl, created, nextVersionId };
  if (v.versioning !== undefined) {
    bucket.versioning = field(v, 'versioning', (x): x is 'Enabled' | 'Suspended' => x === 'Enabled' || x === 'Suspended', where, '"Enabled" or "Suspended"');
  }
  if (v.cors !== undefined) bucket.cors = field(v, 'cors', isCorsRules, where, 'a list of CORS rules (allowedMethods, allowedOrigins, allowedHeaders, exposeHeaders, id?, maxAgeSeconds?)');
  return bucket;
}

function readObject(v: unknown, i: number, buckets: Set<string>): ArchiveObject {
  const where = `objects[${i}]`;
  if (!isObject(v)) return malformed(`${where} is not an object.`);
  const bucket = field(v, 'bucket', (x): x is string => typeof x === 'string' && buckets.has(x), where, 'a bucket the manifest lists');
  const key = field(v, 'key', (x): x is string => typeof x === 'string' && x !== '' && new TextEncoder().encode(x).length <= limits.keyBytes, where, `a key of 1–${limits.keyBytes} bytes`);
  try {
    checkXmlText(key, 'key');
  } catch (e) {
    return malformed(`${where}: ${(e as Error).message}`);
  }
  const o: ArchiveObject = {
    bucket,
    key,
    current: field(v, 'current', (x): x is boolean => typeof x === 'boolean', where, 'true or false'),
    file: field(v, 'file', (x): x is string => isString(x, 4096) && x !== '' && x !== MANIFEST_NAME, where, 'the name of a file in the archive'),
    size: field(v, 'size', (x): x is number => isInt(x, 0, Number.MAX_SAFE_INTEGER), where, 'a byte count'),
    etag: field(v, 'etag', (x): x is string => typeof x === 'string' && ETAG.test(x), where, 'an unquoted lower-case MD5, with -N for a multipart object'),
    lastModified: field(v, 'lastModified', (x): x is number => isInt(x, 0, 8.64e15), where, 'milliseconds since the epoch'),
    contentType: field(v, 'contentType', (x): x is string => isString(x, 1024) && HEADER_VALUE.test(x), where, 'a header value'),
    headers: {},
    meta: [],
  };
  const headers = field(v, 'headers', isObject, where, 'an object');
  for (const [name, value] of Object.entries(headers)) {
    if (!(STANDARD_HEADERS as readonly string[]).includes(name)) return malformed(`${where}: "${name}" is not a header an object keeps.`);
    if (!isString(value, 8192) || !HEADER_VALUE.test(value)) return malformed(`${where}: the ${name} header is not a header value.`);
    o.headers[name as StandardHeader] = value;
  }
  const meta = field(v, 'meta', Array.isArray, where, 'a list of [name, value] pairs');
  for (const pair of meta) {
    const ok = Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && HEADER_NAME.test(pair[0])
      && typeof pair[1] === 'string' && HEADER_VALUE.test(pair[1]);
    if (!ok) return malformed(`${where}: "meta" holds something that is not a [lower-case name, header value] pair.`);
    o.meta.push([pair[0], pair[1]]);
  }
  try {
    checkMetadataSize(o.meta);
  } catch (e) {
    return malformed(`${where}: ${(e as Error).message}`);
  }
  if (v.objectMd5 !== undefined) o.objectMd5 = field(v, 'objectMd5', (x): x is string => typeof x === 'string' && MD5.test(x), where, 'a lower-case hex MD5');
  if (v.checksum !== undefined) {
    o.checksum = field(v, 'checksum', (x): x is ObjectChecksum => isObject(x) && Object.keys(x).length === 2
      && (x.algorithm === 'CRC32' || x.algorithm === 'CRC32C' || x.algorithm === 'SHA1' || x.algorithm === 'SHA256')
      && typeof x.value === 'string' && /^[A-Za-z0-9+/]{6,44}={0,2}$/.test(x.value), where, '{ algorithm: CRC32|CRC32C|SHA1|SHA256, value: base64 }');
  }
  if (v.parts !== undefined) {
    // A multipart object's parts: numbered upwards, adding up to its size, as many as an S3 ETag
    // counts (SVC's multipart ETags all end in -1).
    const count = Number(/-(\d+)$/.exec(o.etag)?.[1] ?? 0);
    o.parts = field(v, 'parts', (x): x is ObjectPart[] => Array.isArray(x) && count > 0 && x.length > 0 && (count === 1 || x.length === count)
      && x.every((p, n) => isObject(p)
      && Object.keys(p).length === 2 && isInt(p.partNumber, 1, limits.partNumberMax) && isInt(p.size, 0, Number.MAX_SAFE_INTEGER)
      && (n === 0 || p.partNumber > (x[n - 1] as ObjectPart).partNumber))
      && x.reduce((sum: number, p: ObjectPart) => sum + p.size, 0) === o.size,
    where, "a multipart object's parts ({ partNumber, size }, ascending, adding up to its size, as many as its ETag counts)");
  }
  if (v.versionId !== undefined) o.versionId = field(v, 'versionId', (x): x is number => isInt(x, 1, 10 ** limits.versionIdDigits - 1), where, `a positive integer of at most ${limits.versionIdDigits} digits`);
  else if (!o.current) malformed(`${where}: a version that is not current needs its versionId.`);
  return o;
}

/** The manifest, every field checked: what an import writes can always be served again. */
export function readManifest(text: string): Manifest {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return malformed(`${MANIFEST_NAME} is not valid JSON.`);
  }
  if (!isObject(doc) || doc.format !== ARCHIVE_FORMAT) return malformed(`${MANIFEST_NAME} does not describe a swbucket archive.`);
  if (doc.version !== ARCHIVE_VERSION) return malformed(`This archive has format version ${String(doc.version)}; this swbucket reads version ${ARCHIVE_VERSION}.`);
  const list = (name: string): unknown[] => (Array.isArray(doc[name]) ? doc[name] : malformed(`${MANIFEST_NAME}: "${name}" must be a list.`));
  const accounts = doc.accounts === undefined ? undefined : list('accounts').map(readAccount);
  const buckets = list('buckets').map(readBucket);
  const bucketNames = new Set(buckets.map((b) => b.name));
  if (bucketNames.size !== buckets.length) malformed(`${MANIFEST_NAME} lists a bucket twice.`);
  const objects = list('objects').map((o, i) => readObject(o, i, bucketNames));
  const files = new Set<string>();
  const stored = new Set<string>();
  for (const o of objects) {
    if (files.has(o.file)) malformed(`Two objects name the same file "${o.file}".`);
    files.add(o.file);
    const id = JSON.stringify([o.bucket, o.key, o.current ? 'current' : o.versionId]);
    if (stored.has(id)) malformed(`"${o.key}" in ${o.bucket} is listed twice.`);
    stored.add(id);
  }
  return {
    format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION,
    created: typeof doc.created === 'string' ? doc.created : '',
    generator: typeof doc.generator === 'string' ? doc.generator : '',
    ...(accounts ? { accounts } : {}),
    buckets,
    objects,
  };
}
