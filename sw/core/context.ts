// What an operation gets: the request, where it points, who sent it, and the store.
import type { Account, Store } from '../store/types.ts';

export interface Context {
  req: Request;
  query: URLSearchParams;
  bucket: string;
  key: string;
  caller: Account | null;
  store: Store;
  /** Service clock, milliseconds. */
  now(): number;
  endpoint: string;
  /** 'header': Content-Length is delivered and required; 'body': the browser withholds it. */
  contentLength: 'header' | 'body';
  /** Request body bytes read, for the log. */
  bytesIn: number;
}

export type Operation = (ctx: Context) => Promise<Response>;
