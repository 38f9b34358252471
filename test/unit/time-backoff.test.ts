import { describe, expect, it, vi } from 'vitest';
import {
  type Attempt,
  backoffDelay,
  type Clock,
  Deadline,
  defaultRetryPolicy,
  parseRetryAfter,
  type RetryPolicy,
  retryPolicyFromEnv,
  retryUntil,
} from '../../src/time/index.js';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5);

/** Time moves only when the code under test sleeps (or an attempt says it took time). */
function fakeClock(start = T0): Clock & { sleeps: number[]; advance(ms: number): void } {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    advance(ms) {
      now += ms;
    },
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
  };
}

const policy = (random: number): RetryPolicy => ({ ...defaultRetryPolicy, random: () => random });

describe('backoffDelay: 1 s doubling to a 30 s cap, equal jitter', () => {
  it('the default policy is 1 s … 30 s', () => {
    expect(defaultRetryPolicy.initialDelayMs).toBe(1_000);
    expect(defaultRetryPolicy.maxDelayMs).toBe(30_000);
  });

  it.each([
    [1, 500, 1_000],
    [2, 1_000, 2_000],
    [3, 2_000, 4_000],
    [4, 4_000, 8_000],
    [5, 8_000, 16_000],
    [6, 15_000, 30_000],
    [7, 15_000, 30_000],
    [50, 15_000, 30_000],
  ])('attempt %i: %i ms with random = 0, %i ms with random = 1', (attempt, low, high) => {
    expect(backoffDelay(policy(0), attempt)).toBe(low);
    expect(backoffDelay(policy(1), attempt)).toBe(high);
    expect(backoffDelay(policy(0.5), attempt)).toBe(Math.round((low + high) / 2));
  });

  it('attempt 0 or below is treated as the first', () => {
    expect(backoffDelay(policy(1), 0)).toBe(1_000);
    expect(backoffDelay(policy(1), -3)).toBe(1_000);
  });

  it('retryPolicyFromEnv shortens only the first wait; the cap stays', () => {
    expect(retryPolicyFromEnv({})).toBe(defaultRetryPolicy);
    expect(retryPolicyFromEnv({ PAR_IDENTITY_RETRY_INITIAL_MS: 'abc' })).toBe(defaultRetryPolicy);
    expect(retryPolicyFromEnv({ PAR_IDENTITY_RETRY_INITIAL_MS: '0' })).toBe(defaultRetryPolicy);
    const fast = retryPolicyFromEnv({ PAR_IDENTITY_RETRY_INITIAL_MS: '10' });
    expect(fast.initialDelayMs).toBe(10);
    expect(fast.maxDelayMs).toBe(30_000);
  });
});

describe('parseRetryAfter', () => {
  it.each<[string | undefined, number | undefined]>([
    [undefined, undefined],
    ['0', 0],
    ['1', 1_000],
    ['120', 120_000],
    [' 7 ', 7_000],
    ['Thu, 02 Jan 2025 03:04:35 GMT', 30_000],
    ['Thu, 02 Jan 2025 03:04:05 GMT', 0],
    ['Wed, 01 Jan 2025 00:00:00 GMT', 0],
    ['soon', undefined],
    ['', undefined],
  ])('%j → %s ms', (value, ms) => {
    expect(parseRetryAfter(value, T0)).toBe(ms);
  });
});

describe('retryUntil with a fake clock (no real sleeping)', () => {
  const fail = (reason: string, retryAfterMs?: number): Attempt<string> => ({
    done: false,
    reason,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });

  it('returns the first success and counts attempts; waits follow the backoff', async () => {
    const clock = fakeClock();
    const onRetry = vi.fn();
    const seen: [number, number][] = [];
    const outcome = await retryUntil<string>(
      async (n, remaining) => {
        seen.push([n, remaining]);
        return n < 4 ? fail(`HTTP 50${n}`) : { done: true, value: 'ok' };
      },
      { deadline: Deadline.at(T0 + 60_000, clock), policy: policy(1), onRetry },
    );
    expect(outcome).toEqual({ value: 'ok', attempts: 4, timedOut: false });
    expect(clock.sleeps).toEqual([1_000, 2_000, 4_000]);
    expect(seen).toEqual([
      [1, 60_000],
      [2, 59_000],
      [3, 57_000],
      [4, 53_000],
    ]);
    expect(onRetry.mock.calls).toEqual([
      [1, 'HTTP 501', 1_000],
      [2, 'HTTP 502', 2_000],
      [3, 'HTTP 503', 4_000],
    ]);
  });

  it('a success on the first try never sleeps', async () => {
    const clock = fakeClock();
    const outcome = await retryUntil(async () => ({ done: true, value: 42 }), { deadline: Deadline.at(T0 + 1, clock), policy: policy(1) });
    expect(outcome).toEqual({ value: 42, attempts: 1, timedOut: false });
    expect(clock.sleeps).toEqual([]);
  });

  it('stops before a wait that would cross the deadline, reporting the last reason', async () => {
    const clock = fakeClock();
    // waits 1 s, 2 s, 4 s, 8 s = 15 s; the next (16 s) would end at 31 s > 30 s.
    const outcome = await retryUntil(async (n) => fail(`reason ${n}`), { deadline: Deadline.at(T0 + 30_000, clock), policy: policy(1) });
    expect(outcome).toEqual({ attempts: 5, timedOut: true, lastReason: 'reason 5' });
    expect(clock.sleeps).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(clock.now()).toBe(T0 + 15_000);
  });

  it('a wait that would end exactly at the deadline is not taken', async () => {
    const clock = fakeClock();
    const outcome = await retryUntil(async (n) => fail(`r${n}`), { deadline: Deadline.at(T0 + 3_000, clock), policy: policy(1) });
    // 1 s wait (ends at 1 s), then a 2 s wait would end at exactly 3 s: stop.
    expect(outcome).toEqual({ attempts: 2, timedOut: true, lastReason: 'r2' });
    expect(clock.sleeps).toEqual([1_000]);
  });

  it('never runs an attempt at or after the deadline', async () => {
    const clock = fakeClock();
    const attempt = vi.fn(async () => fail('x'));
    const outcome = await retryUntil(attempt, { deadline: Deadline.at(T0, clock), policy: policy(1) });
    expect(outcome).toEqual({ attempts: 0, timedOut: true });
    expect(attempt).not.toHaveBeenCalled();
  });

  it('an attempt that uses up the time ends the loop with the attempts made', async () => {
    const clock = fakeClock();
    const outcome = await retryUntil(
      async () => {
        clock.advance(10_000);
        return fail('slow');
      },
      { deadline: Deadline.at(T0 + 10_500, clock), policy: policy(0) },
    );
    expect(outcome).toEqual({ attempts: 1, timedOut: true, lastReason: 'slow' });
    expect(clock.sleeps).toEqual([]);
  });

  it('honours retryAfterMs when it is longer than the backoff, and the backoff when it is shorter', async () => {
    const clock = fakeClock();
    const outcome = await retryUntil<string>(
      async (n) => {
        if (n === 1) return fail('HTTP 429', 5_000);
        if (n === 2) return fail('HTTP 503', 10);
        return { done: true, value: 'ok' };
      },
      { deadline: Deadline.at(T0 + 60_000, clock), policy: policy(1) },
    );
    expect(outcome).toEqual({ value: 'ok', attempts: 3, timedOut: false });
    expect(clock.sleeps).toEqual([5_000, 2_000]);
  });

  it('a Retry-After beyond the deadline stops at once instead of waiting', async () => {
    const clock = fakeClock();
    const outcome = await retryUntil(async () => fail('HTTP 503', 120_000), {
      deadline: Deadline.at(T0 + 60_000, clock),
      policy: policy(0),
    });
    expect(outcome).toEqual({ attempts: 1, timedOut: true, lastReason: 'HTTP 503' });
    expect(clock.sleeps).toEqual([]);
  });

  it('jitter 0 gives half waits', async () => {
    const clock = fakeClock();
    await retryUntil(async (n) => (n < 4 ? fail('x') : { done: true, value: 'ok' }), {
      deadline: Deadline.at(T0 + 60_000, clock),
      policy: policy(0),
    });
    expect(clock.sleeps).toEqual([500, 1_000, 2_000]);
  });

  it('long runs reach the 30 s cap and stay there', async () => {
    const clock = fakeClock();
    const outcome = await retryUntil(async () => fail('down'), { deadline: Deadline.at(T0 + 200_000, clock), policy: policy(1) });
    expect(clock.sleeps).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000, 30_000]);
    expect(outcome).toEqual({ attempts: 11, timedOut: true, lastReason: 'down' });
  });
});

describe('Retry-After and the deadline', () => {
  it.each<[string, number]>([
    ['99999999999', 2 ** 31 - 1],
    ['9'.repeat(400), 2 ** 31 - 1],
    ['Fri, 31 Dec 9999 23:59:59 GMT', 2 ** 31 - 1],
  ])('a Retry-After of %j is cut to what a timer holds (%d ms)', (value, ms) => {
    expect(parseRetryAfter(value, T0)).toBe(ms);
  });

  it('a huge Retry-After within a long deadline is never slept on: the loop stops with the attempts made', async () => {
    const clock = fakeClock();
    const outcome = await retryUntil(
      async () => ({ done: false, reason: 'HTTP 429', retryAfterMs: parseRetryAfter('99999999999', clock.now()) }),
      {
        deadline: Deadline.at(T0 + 3_600_000, clock),
        policy: policy(0),
      },
    );
    expect(outcome).toEqual({ attempts: 1, timedOut: true, lastReason: 'HTTP 429' });
    expect(clock.sleeps).toEqual([]);
  });
});
