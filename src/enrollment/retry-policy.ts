// Bounded retries: upstream retries forever; we keep its classification and backoff shape
// (1 s doubling to 30 s) but stop at a deadline and honour Retry-After.

export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      // The listener goes when the timer fires, so a long-lived signal does not collect them.
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

export interface RetryPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  random: () => number;
}

export const defaultRetryPolicy: RetryPolicy = { initialDelayMs: 1_000, maxDelayMs: 30_000, random: Math.random };

/** PAR_IDENTITY_RETRY_INITIAL_MS shortens the first wait (tests, impatient labs); the cap stays. */
export function retryPolicyFromEnv(env: NodeJS.ProcessEnv): RetryPolicy {
  const initial = Number(env.PAR_IDENTITY_RETRY_INITIAL_MS);
  return Number.isFinite(initial) && initial > 0 ? { ...defaultRetryPolicy, initialDelayMs: initial } : defaultRetryPolicy;
}

/** Equal jitter: half fixed so retries never bunch at zero, half random so a fleet spreads out. */
export function backoffDelay(policy: RetryPolicy, attempt: number): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(base / 2 + (policy.random() * base) / 2);
}

/** Retry-After as seconds or an HTTP date; undefined when absent or unparseable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

export type Attempt<T> = { done: true; value: T } | { done: false; reason: string; retryAfterMs?: number };

export interface RetryOutcome<T> {
  value?: T;
  attempts: number;
  lastReason?: string;
  /** True when the deadline stopped the loop. */
  timedOut: boolean;
}

/** Runs attempt() until it is done or the next wait would cross the deadline. */
export async function retryUntil<T>(
  attempt: (n: number, remainingMs: number) => Promise<Attempt<T>>,
  options: { deadlineMs: number; clock: Clock; policy: RetryPolicy; onRetry?: (n: number, reason: string, waitMs: number) => void },
): Promise<RetryOutcome<T>> {
  const { clock, policy } = options;
  let lastReason: string | undefined;
  for (let n = 1; ; n++) {
    const remaining = options.deadlineMs - clock.now();
    if (remaining <= 0) return { attempts: n - 1, timedOut: true, ...(lastReason ? { lastReason } : {}) };
    const result = await attempt(n, remaining);
    if (result.done) return { value: result.value, attempts: n, timedOut: false };
    lastReason = result.reason;
    const wait = Math.max(result.retryAfterMs ?? 0, backoffDelay(policy, n));
    if (clock.now() + wait >= options.deadlineMs) return { attempts: n, timedOut: true, lastReason };
    options.onRetry?.(n, result.reason, wait);
    await clock.sleep(wait);
  }
}
