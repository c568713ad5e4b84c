// Firefox has no Request.prototype.body: the worker's request has no `body` property at all while
// blob() holds the bytes. Every conformance case runs here with requests like that, and the rules
// that depend on reading a body (the size limit, the quota, Content-MD5, XML bodies, archives) are
// checked on such requests directly. Without the fallback in sw/core/body.ts every upload was
// acknowledged with the MD5 of nothing and stored as zero bytes.
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../sw/core/handler.ts';
import { limits } from '../../sw/core/limits.ts';
import { buildRequest, newService, send, stepOptions } from '../support/service.ts';
import { checkStep, errorCode } from '../cases/check.ts';
import type { Case } from '../cases/types.ts';
import { openTestStore } from '../support/stores.ts';

const modules = import.meta.glob<{ cases: Case[] }>('../cases/*.cases.ts', { eager: true });

/** The request as Firefox hands it to a worker: no `body` property, every byte behind blob(). */
export function withoutBodyProperty(req: Request): Request {
  expect('body' in req).toBe(true); // the wrapper must hide something that is there
  return new Proxy(req, {
    has: (target, p) => (p === 'body' ? false : Reflect.has(target, p)),
    get: (target, p) => {
      if (p === 'body') return undefined;
      const v = Reflect.get(target, p, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

describe('conformance cases with requests that have no body property', () => {
  for (const [file, mod] of Object.entries(modules)) {
    describe(file.replace('../cases/', ''), () => {
      for (const c of mod.cases) {
        it(c.name, async () => {
          const { handle } = await newService();
          const firefoxLike = (r: Request) => handle(withoutBodyProperty(r));
          for (const [i, step] of c.steps.entries()) {
            const r = await send(firefoxLike, step.method, step.url, stepOptions(step));
            checkStep(step, { status: r.status, headers: Object.fromEntries(r.headers), text: r.text }, `step ${i + 1}: ${step.method} ${step.url}`);
          }
        });
      }
    });
  }
});

describe('bodies read through blob()', () => {
  async function service() {
    const { store } = await openTestStore('idb');
    // As in a browser: no Content-Length reaches the worker, the body's length stands in for it.
    const handle = createHandler({ store, contentLength: 'body' });
    const firefoxLike = (r: Request) => handle(withoutBodyProperty(r));
    await send(firefoxLike, 'PUT', 'http://bk1.svc.localhost/');
    return { firefoxLike, store };
  }

  it('stores every byte of a PUT and answers the MD5 of those bytes', async () => {
    const { firefoxLike } = await service();
    const bytes = new Uint8Array(3 * 1024 * 1024 + 7).map((_, i) => i * 31);
    const put = await send(firefoxLike, 'PUT', 'http://bk1.svc.localhost/k', { body: bytes, contentLength: 'omit' });
    expect(put.status).toBe(200);
    expect(put.headers.get('etag')).not.toBe('"d41d8cd98f00b204e9800998ecf8427e"');
    const got = await firefoxLike(await buildRequest('GET', 'http://bk1.svc.localhost/k'));
    expect(got.status).toBe(200);
    // Compared as one buffer: toEqual walks 3 MiB element by element (seconds).
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('refuses a body over the size limit, and a body over the quota, storing nothing', async () => {
    const { firefoxLike, store } = await service();
    const tooLarge = new Uint8Array(limits.putObjectBytes + 1);
    const big = await send(firefoxLike, 'PUT', 'http://bk1.svc.localhost/big', { body: tooLarge, contentLength: 'omit' });
    expect(errorCode(big.text)).toBe('EntityTooLarge');
    await send(firefoxLike, 'PUT', 'http://svc.localhost/?account=alice', {
      body: '<Account><SecretAccessKey>alice-secret-1</SecretAccessKey><DisplayName>a</DisplayName><QuotaBytes>1000</QuotaBytes></Account>',
    });
    const alice = { accessKeyId: 'alice', secret: 'alice-secret-1' };
    expect((await send(firefoxLike, 'PUT', 'http://alice1.svc.localhost/', { auth: alice })).status).toBe(200);
    const over = await send(firefoxLike, 'PUT', 'http://alice1.svc.localhost/k', { body: new Uint8Array(1001), auth: alice, contentLength: 'omit' });
    expect(errorCode(over.text)).toBe('QuotaExceeded');
    expect(await store.headObject((await store.getBucket("bk1"))!, 'big')).toBeUndefined();
    expect(await store.headObject((await store.getBucket('alice1'))!, 'k')).toBeUndefined();
  });
});
