// What an operation gets: the request, where it points, who sent it, and the store.
import type { Target } from '../../protocol/address.ts';
import type { Account, Store } from '../store/types.ts';
import type { Md5Engine } from '../../protocol/md5.ts';

export interface Context {
  req: Request;
  url: URL;
  query: URLSearchParams;
  target: Target;
  bucket: string;
  key: string;
  caller: Account | null;
  store: Store;
  requestId: string;
  /** Service clock, milliseconds. */
  now(): number;
  endpoint: string;
  /** 'header': Content-Length is delivered and required; 'body': the browser withholds it. */
  contentLength: 'header' | 'body';
  md5Engine?: Md5Engine;
  /** Request body bytes read, for the log. */
  bytesIn: number;
}

export type Operation = (ctx: Context) => Promise<Response>;
