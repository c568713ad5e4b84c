// swbucket/client when a new build of the worker takes over mid-request. Firefox and WebKit end the
// replaced worker with the requests it is answering (docs/browser.md, "Take control"): the page's
// fetch() fails with a TypeError as its controller changes. The client sends such a request once
// more when that is safe; everything else still fails. The page's service worker container is a
// stand-in here; test/browser/engine-lifecycle.test.ts does the same against real takeovers.
import { describe, it, expect, vi, afterEach } from 'vitest';
import { createClient } from '../../src/client/index.ts';
import { DROPPED_MS } from '../../src/client/engine.ts';

/**
 * navigator.serviceWorker as a page sees it: a controller, its registration, and controllerchange
 * when it changes. `coming`: a new build is installed and waiting to take over (as in every real
 * takeover, from before the old one is ended until the page's controller changes).
 */
function stubContainer(coming = true) {
  const old = { id: 'old build' };
  const next = { id: 'new build' };
  const container = Object.assign(new EventTarget(), {
    controller: old as unknown,
    getRegistration: async () => ({ active: container.controller, installing: null, waiting: coming && container.controller === old ? next : null }),
  });
  vi.stubGlobal('navigator', { serviceWorker: container });
  return {
    takeOver() {
      container.controller = next;
      container.dispatchEvent(new Event('controllerchange'));
    },
  };
}

/** A fetch whose first call is cut off (optionally with a takeover), the next answered 200. */
function cutOnce(onCut: () => void, afterMs = 5) {
  const calls: { method: string; url: string }[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ method: init?.method ?? 'GET', url: String(input) });
    if (calls.length === 1) {
      setTimeout(onCut, afterMs);
      throw new TypeError('NetworkError when attempting to fetch resource.');
    }
    return new Response('', { status: 200, headers: { etag: '"0cc175b9c0f1b6a831c399e269772661"' } });
  };
  return { fetch, calls };
}

const client = (fetch: typeof globalThis.fetch) =>
  createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret', fetch });

/** Lets real work (the request's signing, in WebCrypto) run until `done()`; the timers stay fake. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !done(); i++) await new Promise((r) => setImmediate(r));
  expect(done()).toBe(true);
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('swbucket/client: a request cut off by a takeover', () => {
  it('is sent once more when it is a GET, HEAD, PUT or DELETE and the controller changed', async () => {
    for (const call of [
      (c: ReturnType<typeof client>) => c.putObject('bkt', 'k', 'a'),
      (c: ReturnType<typeof client>) => c.getObject('bkt', 'k'),
      (c: ReturnType<typeof client>) => c.headObject('bkt', 'k'),
      (c: ReturnType<typeof client>) => c.deleteObject('bkt', 'k'),
    ]) {
      const sw = stubContainer();
      const f = cutOnce(() => sw.takeOver());
      await call(client(f.fetch));
      expect(f.calls).toHaveLength(2);
      expect(f.calls[1]).toEqual(f.calls[0]);
    }
  });

  it('is sent once more when the controller changes up to 3 s after the failure (a loaded machine swaps slowly)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const sw = stubContainer();
      const f = cutOnce(() => sw.takeOver(), 2_900);
      const put = client(f.fetch).putObject('bkt', 'k', 'a');
      await until(() => f.calls.length === 1);
      await vi.advanceTimersByTimeAsync(2_900);
      await until(() => f.calls.length === 2);
      await put;
    } finally {
      vi.useRealTimers();
    }
  });

  it('fails as it is when the controller does not change (an ordinary network error)', async () => {
    stubContainer();
    const f = cutOnce(() => {});
    await expect(client(f.fetch).putObject('bkt', 'k', 'a')).rejects.toThrow(TypeError);
    expect(f.calls).toHaveLength(1);
  });

  it('fails at once when no other worker is on its way (none installing, waiting or activating): no wait for a takeover', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      stubContainer(false);
      const f = cutOnce(() => {});
      let outcome: unknown;
      const put = client(f.fetch).putObject('bkt', 'k', 'a').then(() => 'answered', (e: unknown) => e);
      void put.then((o) => (outcome = o));
      // The fake clock never moves: a client waiting for a controller change would never settle.
      await until(() => outcome !== undefined);
      expect(outcome).toBeInstanceOf(TypeError);
      expect(f.calls).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('fails as it is outside a page controlled by a worker', async () => {
    const f = cutOnce(() => {});
    vi.stubGlobal('navigator', {});
    await expect(client(f.fetch).putObject('bkt', 'k', 'a')).rejects.toThrow(TypeError);
    expect(f.calls).toHaveLength(1);
  });

  it('is not sent again when that could do something twice: a POST (Complete, Initiate), a move', async () => {
    let sw = stubContainer();
    let f = cutOnce(() => sw.takeOver());
    await expect(client(f.fetch).moveObject('bkt', 'from', 'to')).rejects.toThrow(TypeError);
    expect(f.calls).toHaveLength(1);

    sw = stubContainer();
    f = cutOnce(() => sw.takeOver());
    await expect(client(f.fetch).completeMultipartUpload('bkt', 'k', 'upload-1', [{ partNumber: 1, etag: 'x' }])).rejects.toThrow(TypeError);
    expect(f.calls).toHaveLength(1);
  });
});

describe('swbucket/client: a request the browser drops in a takeover (no answer, no error)', () => {
  /** A fetch whose first call never settles unless aborted; the next answered 200. */
  function droppedOnce() {
    const calls: { method: string; url: string; aborted?: boolean }[] = [];
    const fetch = (input: RequestInfo | URL, init?: RequestInit) => {
      const call = { method: init?.method ?? 'GET', url: String(input) } as (typeof calls)[number];
      calls.push(call);
      if (calls.length > 1) return Promise.resolve(new Response('', { status: 200, headers: { etag: '"0cc175b9c0f1b6a831c399e269772661"' } }));
      return new Promise<Response>((_, reject) => {
        const abort = () => {
          call.aborted = true;
          reject(init?.signal?.reason ?? new DOMException('aborted', 'AbortError'));
        };
        if (init?.signal?.aborted) abort();
        else init?.signal?.addEventListener('abort', abort);
      });
    };
    return { fetch, calls };
  }

  it(`is given up ${DROPPED_MS / 1000} s after the controller changed, and sent once more when that is safe`, async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const sw = stubContainer();
      const f = droppedOnce();
      const got = client(f.fetch).getObject('bkt', 'k');
      await until(() => f.calls.length === 1);
      await vi.advanceTimersByTimeAsync(60_000); // no change of controller: it waits, as any request
      expect(f.calls).toHaveLength(1);
      sw.takeOver();
      await vi.advanceTimersByTimeAsync(DROPPED_MS - 1);
      expect(f.calls).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      await until(() => f.calls.length === 2);
      await got;
      expect(f.calls.map((c) => [c.method, c.aborted])).toEqual([['GET', true], ['GET', undefined]]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a body over 1 MiB to the worker is given up too, a second later per MiB (12 MiB: 17 s); to a server it waits', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const body = new Blob([new Uint8Array(12 * 1024 * 1024)]);
      const sw = stubContainer();
      const f = droppedOnce();
      const put = client(f.fetch).putObject('bkt', 'k', body);
      await until(() => f.calls.length === 1);
      sw.takeOver();
      await vi.advanceTimersByTimeAsync(DROPPED_MS + 12_000 - 1);
      expect(f.calls).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      await until(() => f.calls.length === 2);
      await put;
      expect(f.calls.map((c) => [c.method, c.aborted])).toEqual([['PUT', true], ['PUT', undefined]]);

      // A server's endpoint (a port): the body may still be on its way over a slow network.
      const sw2 = stubContainer();
      const g = droppedOnce();
      const server = createClient({ endpoint: 'http://svc.localhost:9000', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret', fetch: g.fetch });
      let settled = false;
      void server.putObject('bkt', 'k', body).finally(() => (settled = true)).catch(() => {});
      await until(() => g.calls.length === 1);
      sw2.takeOver();
      await vi.advanceTimersByTimeAsync(10 * 60_000);
      expect([settled, g.calls.length, g.calls[0]!.aborted]).toEqual([false, 1, undefined]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('fails with a TypeError that says so when sending again is not safe (a POST), instead of waiting for ever', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const sw = stubContainer();
      const f = droppedOnce();
      const done = client(f.fetch).completeMultipartUpload('bkt', 'k', 'upload-1', [{ partNumber: 1, etag: 'x' }]);
      const outcome = done.then(() => 'answered', (e: Error) => `${e.name}: ${e.message}`);
      await until(() => f.calls.length === 1);
      sw.takeOver();
      await vi.advanceTimersByTimeAsync(DROPPED_MS);
      expect(await outcome).toMatch(/^TypeError: swbucket: no answer within 5 s after the service worker was replaced/);
      expect(f.calls).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("the caller's own abort still aborts, with its reason", async () => {
    stubContainer();
    const f = droppedOnce();
    const stop = new AbortController();
    const got = client(f.fetch).getObject('bkt', 'k', { signal: stop.signal } as never);
    stop.abort(new Error('the user gave up'));
    await expect(got).rejects.toThrow('the user gave up');
  });
});

describe('swbucket/client: a request before startService() has a worker controlling the page', () => {
  /** A page (window) whose container has no controller yet. */
  function uncontrolledPage() {
    const container = Object.assign(new EventTarget(), { controller: null as unknown });
    vi.stubGlobal('navigator', { serviceWorker: container });
    vi.stubGlobal('window', {});
    return {
      takeControl() {
        container.controller = { id: 'swbucket' };
        container.dispatchEvent(new Event('controllerchange'));
      },
    };
  }
  const answering = () => {
    const calls: string[] = [];
    const fetch = async (input: RequestInfo | URL) => {
      calls.push(String(input));
      return new Response('', { status: 200, headers: { etag: '"x"' } });
    };
    return { fetch, calls };
  };

  it('waits until the worker controls the page, then sends', async () => {
    const page = uncontrolledPage();
    const f = answering();
    const put = client(f.fetch).putObject('bkt', 'k', 'a');
    await new Promise((r) => setTimeout(r, 30));
    expect(f.calls).toEqual([]);
    page.takeControl();
    await put;
    expect(f.calls).toEqual(['http://bkt.svc.localhost/k']);
  });

  it('gives up after 10 s without sending, saying to await startService()', async () => {
    // Only the timers are fake: hashing and signing come first and take real time.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      uncontrolledPage();
      const f = answering();
      let settled = false;
      const put = client(f.fetch).putObject('bkt', 'k', 'a').catch((e: unknown) => e).finally(() => (settled = true));
      const giveUp = Date.now() + 20_000;
      while (vi.getTimerCount() === 0 && Date.now() < giveUp) await new Promise((r) => setImmediate(r));
      expect(vi.getTimerCount(), 'the client waits on a timer').toBe(1);
      await vi.advanceTimersByTimeAsync(9_999);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const e = await put;
      expect(e).toBeInstanceOf(Error);
      expect((e as Error).message).toMatch(/no service worker controls this page, so a request to http:\/\/svc\.localhost would leave the browser\. Call startService\(\)/);
      expect(f.calls).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not wait for an endpoint a server answers (another host, or a port)', async () => {
    uncontrolledPage();
    for (const endpoint of ['http://localhost:4568', 'http://127.0.0.1:9000', 'http://svc.localhost:8080']) {
      const f = answering();
      await createClient({ endpoint, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret', fetch: f.fetch }).putObject('bkt', 'k', 'a');
      expect(f.calls).toHaveLength(1);
    }
  });
});
