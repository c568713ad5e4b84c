/// <reference lib="webworker" />
// A new build of the worker takes over only once the build it replaces has nothing in flight.
//
// The service worker spec activates a waiting worker only when the active one has no pending
// events, and Chromium does so. Firefox ESR 153 and WebKitGTK 2.50 do not: skipWaiting() ends the
// old worker at once, and every request it was still answering is sent to the network instead (a
// network error on the bucket host, now and then no answer at all in WebKit; a write cut off
// anywhere between its first byte and its commit). So the two builds agree between themselves:
// the new one, once installed, asks the old one to say when it is idle and only then skips
// waiting. A request to the service's hosts that reaches the old worker after it said so, in the
// milliseconds before the swap, gets a network error at once (swbucket/client sends it again to
// the new build) rather than an answer cut off, which WebKit sometimes leaves hanging for ever.
// docs/browser.md, "A new build takes over only when the old one is idle".

/** What a new build posts, with a MessagePort, to the active worker it is about to replace. */
export const HANDOVER_MESSAGE = 'swbucket:handover';

/** How long a new build waits for the old one to answer at all (an older build never does). */
const ANSWER_MS = 1_000;
/** How long it waits for the old one to be idle: traffic that never pauses does not hold an update back for ever. */
const IDLE_MS = 10_000;
/** How long a worker that said it was idle refuses new requests, waiting to be replaced (the swap takes milliseconds). */
const HANDED_OVER_MS = 3_000;

/** What the old worker answers on the port: at once, then again when nothing is in flight. */
type HandoverReply = { type: 'busy'; inFlight: number } | { type: 'idle'; at: number };

/** How the running worker took over, for the page to ask (TAKEOVER_QUERY). */
export interface Takeover {
  /**
   * `first`: there was no worker to replace. `idle`: the old one said it had nothing in flight.
   * `no-answer`: the old one did not answer (a build before this protocol); `busy`: it was still
   * busy after IDLE_MS. In the last two cases its requests in flight may have been cut off.
   */
  after: 'first' | 'idle' | 'no-answer' | 'busy';
  /** How long install waited for the old worker, in ms. */
  waited: number;
  /** How many answers the old worker was still giving when asked. */
  inFlight?: number;
  /** When the old worker had nothing in flight (performance.timeOrigin + performance.now(), ms), for `idle`. */
  idleAt?: number;
}

/** What a page posts, with a MessagePort, to learn how its worker took over (tests, diagnostics). */
export const TAKEOVER_QUERY = 'swbucket:takeover?';

const now = () => performance.timeOrigin + performance.now();

/**
 * Counts the answers this worker is giving, from the fetch event until the response is handed to
 * the browser, so that it can say when it has none. (Not until the body's last byte: wrapping every
 * body in a stream of the worker's to see its end made a 16 MiB GET four times slower in Chromium,
 * and the engines take a body from the worker as fast as it comes: an 8 MiB GET read partly before
 * the swap and the rest after it arrives whole, in test/browser/engine-lifecycle.test.ts.)
 */
export function createInFlight() {
  let count = 0;
  let handedOverUntil = 0;
  let waiting: (() => void)[] = [];
  const done = () => {
    if (--count > 0) return;
    for (const w of waiting) w();
    waiting = [];
  };
  return {
    get count() {
      return count;
    },
    /** Counts `answer` as in flight until it settles; answers the same promise. */
    track<T>(answer: Promise<T>): Promise<T> {
      count++;
      answer.then(done, done);
      return answer;
    },
    idle(): Promise<void> {
      return count === 0 ? Promise.resolve() : new Promise((resolve) => waiting.push(resolve));
    },
    /**
     * True from the moment this worker told a new build it was idle until the swap ends it (or, should
     * the swap not come, for HANDED_OVER_MS): a request reaching it now would be cut off mid-answer.
     */
    get handedOver() {
      return Date.now() < handedOverUntil;
    },
    handOver() {
      handedOverUntil = Date.now() + HANDED_OVER_MS;
    },
  };
}

/**
 * Installs the lifecycle: take over at once when replacing nothing, else when the old worker is
 * idle; claim open pages on activation; as the old worker, answer a new build's handover.
 */
export function installTakeover(self: ServiceWorkerGlobalScope, inFlight: ReturnType<typeof createInFlight>): void {
  let takeover: Takeover = { after: 'first', waited: 0 };

  self.addEventListener('install', (event) => event.waitUntil((async () => {
    takeover = await waitForOld(self.registration.active);
    await self.skipWaiting();
  })()));
  self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

  self.addEventListener('message', (event) => {
    const port = event.ports[0];
    if (!port) return;
    if (event.data === HANDOVER_MESSAGE) {
      port.postMessage({ type: 'busy', inFlight: inFlight.count } satisfies HandoverReply);
      event.waitUntil(inFlight.idle().then(() => {
        inFlight.handOver();
        port.postMessage({ type: 'idle', at: now() } satisfies HandoverReply);
      }));
    } else if (event.data === TAKEOVER_QUERY) {
      port.postMessage(takeover);
    }
  });
}

async function waitForOld(old: ServiceWorker | null): Promise<Takeover> {
  if (!old) return { after: 'first', waited: 0 };
  const start = now();
  const { port1, port2 } = new MessageChannel();
  const outcome = await new Promise<Omit<Takeover, 'waited'>>((resolve) => {
    let inFlight: number | undefined;
    const timer = (ms: number, after: Takeover['after']) => setTimeout(() => resolve({ after, ...(inFlight !== undefined ? { inFlight } : {}) }), ms);
    let giveUp = timer(ANSWER_MS, 'no-answer');
    port1.onmessage = (e: MessageEvent<HandoverReply>) => {
      if (e.data.type === 'idle') {
        clearTimeout(giveUp);
        return resolve({ after: 'idle', idleAt: e.data.at, inFlight: inFlight ?? 0 });
      }
      if (inFlight !== undefined) return;
      inFlight = e.data.inFlight;
      clearTimeout(giveUp);
      giveUp = timer(IDLE_MS, 'busy');
    };
    old.postMessage(HANDOVER_MESSAGE, [port2]);
  });
  port1.close();
  return { ...outcome, waited: Math.round(now() - start) };
}
