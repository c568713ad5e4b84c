// swbucket/client when a new build of the worker takes over mid-request. Firefox and WebKit end the
// replaced worker with the requests it is answering (docs/browser.md, "Take control"): the page's
// fetch() fails with a TypeError as its controller changes. The client sends such a request once
// more when that is safe; everything else still fails. The page's service worker container is a
// stand-in here; test/browser/engine-lifecycle.test.ts does the same against real takeovers.
import { describe, it, expect, vi, afterEach } from 'vitest';
import { createClient } from '../../src/client/index.ts';

/** navigator.serviceWorker as a page sees it: a controller, and controllerchange when it changes. */
function stubContainer() {
  const container = Object.assign(new EventTarget(), { controller: { id: 'old build' } as unknown });
  vi.stubGlobal('navigator', { serviceWorker: container });
  return {
    takeOver() {
      container.controller = { id: 'new build' };
      container.dispatchEvent(new Event('controllerchange'));
    },
  };
}

/** A fetch whose first call is cut off (optionally with a takeover), the next answered 200. */
function cutOnce(onCut: () => void) {
  const calls: { method: string; url: string }[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ method: init?.method ?? 'GET', url: String(input) });
    if (calls.length === 1) {
      setTimeout(onCut, 5);
      throw new TypeError('NetworkError when attempting to fetch resource.');
    }
    return new Response('', { status: 200, headers: { etag: '"0cc175b9c0f1b6a831c399e269772661"' } });
  };
  return { fetch, calls };
}

const client = (fetch: typeof globalThis.fetch) =>
  createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret', fetch });

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('swbucket/client: a request cut off by a takeover', () => {
  it('is sent once more when it is a GET, HEAD, PUT or DELETE and the controller changed', async () => {
    for (const call of [
      (c: ReturnType<typeof client>) => c.putObject('b', 'k', 'a'),
      (c: ReturnType<typeof client>) => c.getObject('b', 'k'),
      (c: ReturnType<typeof client>) => c.headObject('b', 'k'),
      (c: ReturnType<typeof client>) => c.deleteObject('b', 'k'),
    ]) {
      const sw = stubContainer();
      const f = cutOnce(() => sw.takeOver());
      await call(client(f.fetch));
      expect(f.calls).toHaveLength(2);
      expect(f.calls[1]).toEqual(f.calls[0]);
    }
  });

  it('fails as it is when the controller does not change (an ordinary network error)', async () => {
    stubContainer();
    const f = cutOnce(() => {});
    await expect(client(f.fetch).putObject('b', 'k', 'a')).rejects.toThrow(TypeError);
    expect(f.calls).toHaveLength(1);
  });

  it('fails as it is outside a page controlled by a worker', async () => {
    const f = cutOnce(() => {});
    vi.stubGlobal('navigator', {});
    await expect(client(f.fetch).putObject('b', 'k', 'a')).rejects.toThrow(TypeError);
    expect(f.calls).toHaveLength(1);
  });

  it('is not sent again when that could do something twice: a POST (Complete, Initiate), a move', async () => {
    let sw = stubContainer();
    let f = cutOnce(() => sw.takeOver());
    await expect(client(f.fetch).moveObject('b', 'from', 'to')).rejects.toThrow(TypeError);
    expect(f.calls).toHaveLength(1);

    sw = stubContainer();
    f = cutOnce(() => sw.takeOver());
    await expect(client(f.fetch).completeMultipartUpload('b', 'k', 'upload-1', [{ partNumber: 1, etag: 'x' }])).rejects.toThrow(TypeError);
    expect(f.calls).toHaveLength(1);
  });
});
