// The one source of "now" and of waiting. Core code takes a Clock so tests drive time by hand.

/** setTimeout's largest delay; a longer one fires after 1 ms, which turns a wait into a busy loop. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A delay setTimeout handles as written: NaN and negatives wait 0, longer ones are cut to MAX_TIMER_MS. */
// exported for tests: the timer bounds (NaN, negative, overflow), checked alone
export function timerDelay(ms: number): number {
  if (!(ms > 0)) return 0;
  return Math.min(ms, MAX_TIMER_MS);
}

export interface Clock {
  now(): number;
  /** Rejects with the signal's reason when it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function sleepOnce(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    // The listener goes when the timer fires, so a long-lived signal does not collect them.
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, timerDelay(ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const systemClock: Clock = {
  now: () => Date.now(),
  // A wait longer than one timer allows is taken in pieces, so it lasts as long as asked.
  sleep: async (ms, signal) => {
    let left = Math.max(0, ms || 0);
    do {
      const piece = timerDelay(left);
      await sleepOnce(piece, signal);
      left -= piece;
    } while (left > 0);
  },
};
