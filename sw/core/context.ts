// What an operation gets: the request, where it points, who sent it, the dialect it speaks, and the store.
import { withNamespace, xmlResponse } from './xml.ts';
import type { Dialect } from './dialect.ts';
import type { Payload } from './payload.ts';
import type { Account, ObjectHeaders, Store } from '../store/types.ts';

export interface Context {
  req: Request;
  query: URLSearchParams;
  bucket: string;
  key: string;
  caller: Account | null;
  store: Store;
  /** Service clock, milliseconds. */
  now(): number;
  /** The dialect's service host (bucket hosts are `{bucket}.{endpoint}`). */
  endpoint: string;
  /** The dialect the request speaks: its header names, XML and rules (dialect.ts). */
  dialect: Dialect;
  /** What S3 says of the body beyond its bytes (payload.ts); absent in the other dialects. */
  payload?: Payload;
  /** The body, when the signature's check had to read it first (a Content-Length the browser withholds). */
  bodyRead?: Blob;
  /** 'header': Content-Length is delivered and required; 'body': the browser withholds it. */
  contentLength: 'header' | 'body';
  /** Request body bytes read, for the log. */
  bytesIn: number;
  /** A range of an object the cache mode only lists, read from its remote (HandlerOptions.readMissingRange). */
  readMissingRange?: ReadMissingRange;
}

/**
 * Bytes `start`–`end` of `key`, an object a replica in the `cache` mode only lists, read from its
 * remote while it is still `etag` there, with the object's headers; undefined when the remote
 * holds another object now (the whole is then fetched, as for any read).
 */
export type ReadMissingRange = (bucket: string, key: string, range: { start: number; end: number }, etag: string)
  => Promise<{ headers: ObjectHeaders; body: ReadableStream<Uint8Array> } | undefined>;

export type Operation = (ctx: Context) => Promise<Response>;

/** The dialect's name of one of its own headers: own(ctx, 'acl') is `x-svc-acl`, `x-nos-acl` or `x-amz-acl`. */
export const own = (ctx: Context, name: string): string => ctx.dialect.prefix + name;

/** An XML answer in the request's dialect (S3's carry its namespace). */
export function xmlAnswer(ctx: Context, root: Record<string, unknown>, status = 200, headers?: HeadersInit): Response {
  return xmlResponse(withNamespace(root, ctx.dialect.xmlns), status, headers);
}

/** Whether a listing page that more entries follow says so (an empty page as the dialect has it: Dialect.emptyPageTruncated). */
export const pageTruncated = (ctx: Context, more: boolean, listed: number): boolean => more && (listed > 0 || ctx.dialect.emptyPageTruncated);
