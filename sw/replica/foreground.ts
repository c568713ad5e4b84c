// The app's own requests come first. A round shares the worker's thread, its IndexedDB (one writer,
// whose commits a PUT's acknowledgement waits behind) and the machine's cores with the requests
// the app is making; a round that went on beside a burst of writes doubled each one's
// acknowledgement (figure 13). So a round takes each next step (its listing, each key it moves,
// each record it writes) once the app's requests have been quiet for a moment, or after waiting
// at most `maxWaitMs`: a steady stream of requests slows a sync, never stops it.

export interface Foreground {
  /** A request of the app's begins; call the function returned when it has been answered. */
  begin(): () => void;
  /** Resolves once no request has been in flight for `quietMs`, or after `maxWaitMs` at most. */
  quiet(): Promise<void>;
}

export function foreground({ quietMs = 25, maxWaitMs = 1000 }: { quietMs?: number; maxWaitMs?: number } = {}): Foreground {
  let inFlight = 0;
  let lastEnd = -Infinity;
  let waiting: (() => void)[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const now = () => performance.now();
  const unref = (t: ReturnType<typeof setTimeout>) => (t as { unref?: () => void }).unref?.();

  /** Lets the waiting steps go once the requests have been quiet long enough. */
  const check = () => {
    clearTimeout(timer);
    timer = undefined;
    if (inFlight > 0 || waiting.length === 0) return;
    const left = lastEnd + quietMs - now();
    if (left > 0) {
      timer = setTimeout(check, left);
      unref(timer);
      return;
    }
    const go = waiting;
    waiting = [];
    for (const resolve of go) resolve();
  };

  return {
    begin() {
      inFlight++;
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        inFlight--;
        lastEnd = now();
        check();
      };
    },
    quiet() {
      if (inFlight === 0 && now() - lastEnd >= quietMs) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const limit = setTimeout(() => {
          waiting = waiting.filter((w) => w !== go);
          resolve();
        }, maxWaitMs);
        unref(limit);
        const go = () => {
          clearTimeout(limit);
          resolve();
        };
        waiting.push(go);
        check();
      });
    },
  };
}
