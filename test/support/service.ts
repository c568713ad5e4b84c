// A fresh service per test: the real handler over a new store, by default a new in-memory
// IndexedDB (fake-indexeddb); `kind: 'lmdb'` is the Node server's store in a temporary directory
// (test/support/stores.ts).
import { createHandler, type HandlerOptions } from '../../sw/core/handler.ts';
import { openTestStore, type StoreKind } from './stores.ts';
import { signHeaders, ROOT } from './sign.ts';
import type { Auth, Body, Step } from '../cases/types.ts';
import { bodyText } from '../cases/types.ts';

export async function newService({ kind = 'idb', ...opts }: Partial<HandlerOptions> & { kind?: StoreKind } = {}) {
  const { store, factory } = await openTestStore(kind);
  const handle = createHandler({ store, ...opts });
  return { handle, store, factory, kind };
}

/**
 * Two services over one IndexedDB database (two runtimes: a worker and its successor, or two
 * tabs' workers), each with its own store instance and so its own caches.
 */
export async function twoRuntimes(name: string) {
  const { IDBFactory } = await import('fake-indexeddb');
  const { openIdbStore } = await import('../../sw/store/idb.ts');
  const factory = new IDBFactory();
  const open = async () => createHandler({ store: await openIdbStore({ indexedDB: factory, name }) });
  return { a: await open(), b: await open() };
}

export interface SendOptions {
  headers?: Record<string, string>;
  body?: Body | Uint8Array | Blob;
  auth?: Auth;
  contentLength?: number | 'omit';
  clockSkewSeconds?: number;
}

/** Builds the Request a well-behaved client would send (signed, with Content-Length) unless told otherwise. */
export async function buildRequest(method: string, url: string, o: SendOptions = {}): Promise<Request> {
  const headers = new Headers(o.headers ?? {});
  let body: Uint8Array | undefined;
  if (o.body instanceof Uint8Array) body = o.body;
  else if (o.body instanceof Blob) body = new Uint8Array(await o.body.arrayBuffer());
  else if (o.body !== undefined) body = new TextEncoder().encode(bodyText(o.body));
  const cl = o.contentLength;
  if (cl === undefined) {
    if (body !== undefined || method === 'PUT' || method === 'POST') headers.set('content-length', String(body?.byteLength ?? 0));
  } else if (cl !== 'omit') headers.set('content-length', String(cl));
  const auth = o.auth ?? 'root';
  if (auth !== 'anon') {
    if (typeof auth === 'object' && 'header' in auth) headers.set('authorization', auth.header);
    else {
      const creds = auth === 'root' ? ROOT : auth;
      const now = new Date(Date.now() + (o.clockSkewSeconds ?? 0) * 1000);
      signHeaders(method, url, headers, creds, now);
    }
  }
  const init: RequestInit & { duplex?: 'half' } = { method, headers };
  if (body !== undefined && method !== 'GET' && method !== 'HEAD') init.body = body as Uint8Array<ArrayBuffer>;
  return new Request(url, init);
}

export async function send(handle: (r: Request) => Promise<Response>, method: string, url: string, o: SendOptions = {}) {
  const res = await handle(await buildRequest(method, url, o));
  const text = method === 'HEAD' ? '' : await res.text();
  return { status: res.status, headers: res.headers, text, res };
}

export function stepOptions(step: Step): SendOptions {
  const o: SendOptions = {};
  if (step.headers) o.headers = step.headers;
  if (step.body !== undefined) o.body = step.body;
  if (step.auth) o.auth = step.auth;
  if (step.contentLength !== undefined) o.contentLength = step.contentLength;
  if (step.clockSkewSeconds !== undefined) o.clockSkewSeconds = step.clockSkewSeconds;
  return o;
}

export { errorCode } from '../cases/check.ts';
