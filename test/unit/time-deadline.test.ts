import { describe, expect, it, vi } from 'vitest';
import { type Clock, Deadline, systemClock } from '../../src/time/index.js';
import { MAX_TIMER_MS, timerDelay } from '../../src/time/clock.js';

/** Time moves only when the code under test sleeps or the test advances it. */
function fakeClock(start = 1_000_000): Clock & { sleeps: number[]; advance(ms: number): void } {
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

describe('timerDelay keeps every setTimeout delay within what a timer holds', () => {
  it.each([
    [0, 0],
    [1, 1],
    [-5, 0],
    [Number.NaN, 0],
    [MAX_TIMER_MS, MAX_TIMER_MS],
    [MAX_TIMER_MS + 1, MAX_TIMER_MS],
    [3_000_000_000_000, MAX_TIMER_MS],
    [Number.POSITIVE_INFINITY, MAX_TIMER_MS],
  ])('%d → %d', (ms, expected) => {
    expect(timerDelay(ms)).toBe(expected);
  });

  it('MAX_TIMER_MS is 2^31 - 1', () => {
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
  });
});

describe('Deadline', () => {
  it.each<[number, number, number, boolean]>([
    // length, elapsed, remaining, expired
    [10_000, 0, 10_000, false],
    [10_000, 9_999, 1, false],
    [10_000, 10_000, 0, true],
    [10_000, 50_000, 0, true],
    [0, 0, 0, true],
    [-1, 0, 0, true],
    [Number.NaN, 0, 0, true],
  ])('after(%d), %d ms later: %d ms remain, expired %s', (length, elapsed, remaining, expired) => {
    const clock = fakeClock();
    const deadline = Deadline.after(length, clock);
    clock.advance(elapsed);
    expect(deadline.remainingMs()).toBe(remaining);
    expect(deadline.expired()).toBe(expired);
  });

  it.each<[number, number, number]>([
    // deadline length, asked sleep, actual sleep
    [10_000, 1_000, 1_000],
    [10_000, 10_000, 10_000],
    [10_000, 60_000, 10_000],
    [10_000, Number.POSITIVE_INFINITY, 10_000],
    [10_000, Number.NaN, 0],
    [10_000, -3, 0],
    [0, 1_000, 0],
  ])('a deadline of %d ms: sleep(%d) sleeps %d ms', async (length, asked, slept) => {
    const clock = fakeClock();
    const deadline = Deadline.after(length, clock);
    await deadline.sleep(asked);
    expect(clock.sleeps).toEqual([slept]);
  });

  it('at() pins an absolute end', () => {
    const clock = fakeClock(5_000);
    expect(Deadline.at(7_000, clock).remainingMs()).toBe(2_000);
  });
});

describe('systemClock.sleep', () => {
  it('an aborted signal rejects at once with its reason', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(systemClock.sleep(MAX_TIMER_MS * 3, controller.signal)).rejects.toThrow('stop');
  });

  it('a wait longer than a timer holds does not fire early (no busy loop)', async () => {
    // An overflowing setTimeout (a delay over MAX_TIMER_MS) fires after 1 ms: the property is that no
    // timer is ever given such a delay, which the spy sees without waiting for anything.
    const timeout = vi.spyOn(globalThis, 'setTimeout');
    try {
      const controller = new AbortController();
      let settled = false;
      const wait = systemClock.sleep(MAX_TIMER_MS * 2, controller.signal).then(
        () => (settled = true),
        () => 'aborted',
      );
      const delays = timeout.mock.calls.map((call) => call[1]);
      expect(delays).toEqual([MAX_TIMER_MS]);
      expect(settled).toBe(false);
      controller.abort();
      expect(await wait).toBe('aborted');
    } finally {
      timeout.mockRestore();
    }
  });
});
