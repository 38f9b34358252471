import { MAX_TIMER_MS } from './clock.js';
import type { Deadline } from './deadline.js';

// Bounded retries: the Go agent retries forever; we keep its classification and backoff shape
// (1 s doubling to 30 s, with jitter) but stop at a deadline and honour Retry-After within it.

export interface RetryPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  random: () => number;
}

export const defaultRetryPolicy: RetryPolicy = { initialDelayMs: 1_000, maxDelayMs: 30_000, random: Math.random };

/** PAR_IDENTITY_RETRY_INITIAL_MS shortens the first wait (tests, impatient labs); the cap stays. */
export function retryPolicyFromEnv(env: NodeJS.ProcessEnv): RetryPolicy {
  const initial = Number(env.PAR_IDENTITY_RETRY_INITIAL_MS);
  return Number.isFinite(initial) && initial > 0
    ? { ...defaultRetryPolicy, initialDelayMs: Math.min(initial, defaultRetryPolicy.maxDelayMs) }
    : defaultRetryPolicy;
}

/** Equal jitter: half fixed so retries never bunch at zero, half random so a fleet spreads out. */
export function backoffDelay(policy: RetryPolicy, attempt: number): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(base / 2 + (policy.random() * base) / 2);
}

/**
 * Retry-After as seconds or an HTTP date, in ms; undefined when absent or unparseable. A value no
 * timer can hold is cut to MAX_TIMER_MS: the caller's deadline decides what happens to it.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, MAX_TIMER_MS);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.min(Math.max(0, date - nowMs), MAX_TIMER_MS);
}

export type Attempt<T> = { done: true; value: T } | { done: false; reason: string; retryAfterMs?: number };

interface RetryOutcome<T> {
  value?: T;
  attempts: number;
  lastReason?: string;
  /** True when the deadline stopped the loop. */
  timedOut: boolean;
}

/**
 * Runs attempt() until it is done or the next wait would reach the deadline: a backoff or a
 * Retry-After longer than the time left ends the loop at once rather than sleeping into the deadline.
 * The deadline is the run's (its clock included), so every wait is on the run's clock: a test with a
 * fake clock drives the whole loop.
 */
export async function retryUntil<T>(
  attempt: (n: number, remainingMs: number) => Promise<Attempt<T>>,
  options: {
    deadline: Deadline;
    policy: RetryPolicy;
    onRetry?: (n: number, reason: string, waitMs: number) => void;
    signal?: AbortSignal | undefined;
  },
): Promise<RetryOutcome<T>> {
  const { policy, deadline } = options;
  let lastReason: string | undefined;
  for (let n = 1; ; n++) {
    options.signal?.throwIfAborted();
    if (deadline.expired()) return { attempts: n - 1, timedOut: true, ...(lastReason ? { lastReason } : {}) };
    const result = await attempt(n, deadline.remainingMs());
    // A stopped run neither retries nor waits: the abort's reason is what the caller sees.
    options.signal?.throwIfAborted();
    if (result.done) return { value: result.value, attempts: n, timedOut: false };
    lastReason = result.reason;
    const wait = Math.max(result.retryAfterMs ?? 0, backoffDelay(policy, n));
    if (!(wait < deadline.remainingMs())) return { attempts: n, timedOut: true, lastReason };
    options.onRetry?.(n, result.reason, wait);
    await deadline.sleep(wait, options.signal);
  }
}
