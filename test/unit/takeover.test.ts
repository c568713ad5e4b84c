// sw/takeover.ts's count of answers in flight: a new build takes over only when it reaches zero, so
// it must count every answer until it settles, a failed one too, and answer each unchanged. The
// handover between two real workers runs in test/browser/engine-lifecycle.test.ts.
import { describe, it, expect } from 'vitest';
import { createInFlight } from '../../sw/takeover.ts';

const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
  return done;
};

describe('sw/takeover: answers in flight', () => {
  it('is idle only once every answer has settled, answered or failed', async () => {
    const inFlight = createInFlight();
    expect(await settled(inFlight.idle())).toBe(true);
    let answer!: (r: Response) => void;
    let fail!: (e: Error) => void;
    const res = new Response('body', { status: 201 });
    const a = inFlight.track(new Promise<Response>((r) => (answer = r)));
    const b = inFlight.track(new Promise<Response>((_, r) => (fail = r)));
    expect(inFlight.count).toBe(2);
    const idle = inFlight.idle();
    answer(res);
    expect(await a).toBe(res);
    expect([await settled(idle), inFlight.count]).toEqual([false, 1]);
    fail(new Error('no'));
    await expect(b).rejects.toThrow('no');
    expect([await settled(idle), inFlight.count]).toEqual([true, 0]);
  });

  it('counts again after being idle, and wakes every waiter', async () => {
    const inFlight = createInFlight();
    await inFlight.track(Promise.resolve(new Response()));
    let answer!: (r: Response) => void;
    void inFlight.track(new Promise<Response>((r) => (answer = r)));
    const waiters = [inFlight.idle(), inFlight.idle()];
    expect(await settled(Promise.race(waiters))).toBe(false);
    answer(new Response());
    expect(await settled(Promise.all(waiters))).toBe(true);
  });

  it('after handing over it says so for a few seconds, then answers again should no swap come', () => {
    let t = 1_000_000;
    const realNow = Date.now;
    Date.now = () => t;
    try {
      const inFlight = createInFlight();
      expect(inFlight.handedOver).toBe(false);
      inFlight.handOver();
      expect(inFlight.handedOver).toBe(true);
      t += 2_999;
      expect(inFlight.handedOver).toBe(true);
      t += 1;
      expect(inFlight.handedOver).toBe(false);
    } finally {
      Date.now = realNow;
    }
  });
});
