import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { DAY_MS, type DurationFlag, durationMs, formatDuration, HOUR_MS, parseDurationFlag } from '../../src/time/index.js';
import { MAX_TIMER_MS } from '../../src/time/clock.js';

const seconds: DurationFlag = { flag: '--timeout', unit: 's', maxMs: HOUR_MS };
const millis: DurationFlag = { flag: '--poll-interval', unit: 'ms', minMs: 10, maxMs: DAY_MS };
const zeroOk: DurationFlag = { flag: '--relist-interval', unit: 's', minMs: 0, maxMs: DAY_MS };

describe('durationMs: the accepted syntax', () => {
  it.each<[string, 'ms' | 's', number | 'bare' | undefined]>([
    ['90d', 's', 90 * DAY_MS],
    ['12h', 's', 12 * HOUR_MS],
    ['30m', 's', 30 * 60_000],
    ['45s', 'ms', 45_000],
    ['1500ms', 's', 1_500],
    ['2.5s', 'ms', 2_500],
    ['120', 's', 'bare'],
    ['120', 'ms', 'bare'],
    [' 7 ', 's', 'bare'],
    [' 7s ', 's', 7_000],
    ['0', 's', 0],
    ['0.0', 's', 0],
    ['', 's', undefined],
    ['   ', 's', undefined],
    ['NaN', 's', undefined],
    ['Infinity', 's', undefined],
    ['-5', 's', undefined],
    ['-5s', 's', undefined],
    ['1e3', 's', undefined],
    ['0x10', 's', undefined],
    ['5 s', 's', undefined],
    ['5S', 's', undefined],
    ['5w', 's', undefined],
    ['.5s', 's', undefined],
    [`${'9'.repeat(400)}s`, 's', undefined],
  ])('%j (flag unit %s) → %s', (text, _unit, expected) => {
    expect(durationMs(text)).toBe(expected);
  });
});

describe('parseDurationFlag: bounds, unit of the result, and no echo', () => {
  it.each<[string, DurationFlag, number]>([
    ['30s', seconds, 30],
    ['2m', seconds, 120],
    ['1500ms', seconds, 1.5],
    ['1h', seconds, 3_600],
    ['250ms', millis, 250],
    ['2s', millis, 2_000],
    ['10ms', millis, 10],
    ['24h', millis, DAY_MS],
    ['0', zeroOk, 0],
    ['24h', zeroOk, 86_400],
  ])('%j for %o → %d', (text, spec, expected) => {
    expect(parseDurationFlag(text, spec)).toBe(expected);
  });

  it.each<[string, DurationFlag, string]>([
    [
      'soon',
      seconds,
      '--timeout must be a duration with its unit, like 30s, 5m or 1500ms, got a 4-character value; for example: --timeout 30s',
    ],
    [
      'NaN',
      millis,
      '--poll-interval must be a duration with its unit, like 30s, 5m or 1500ms, got a 3-character value; for example: --poll-interval 30s',
    ],
    ['30', seconds, '--timeout must be a duration with its unit (ms, s, m, h or d), got a 2-character value; for example: --timeout 30s'],
    ['90', { ...seconds, flag: '--if-older-than' }, 'must be a duration with its unit'],
    ['', seconds, 'got a 0-character value'],
    ['-1', zeroOk, 'must be a duration'],
    ['Infinity', seconds, 'must be a duration'],
    ['0', seconds, '--timeout must be more than 0, got a 1-character value; for example: --timeout 1s'],
    ['0ms', seconds, '--timeout must be more than 0'],
    ['9ms', millis, '--poll-interval must be at least 10ms, got a 3-character value'],
    ['3601s', seconds, '--timeout must be at most 1h, got a 5-character value; for example: --timeout 1h'],
    ['61m', seconds, '--timeout must be at most 1h'],
    ['3000000s', zeroOk, '--relist-interval must be at most 24h, got a 8-character value'],
    ['25h', millis, '--poll-interval must be at most 24h'],
    ['9'.repeat(400), seconds, 'got a 400-character value'],
  ])('%j for %o is a usage error: %s', (text, spec, message) => {
    let caught: unknown;
    try {
      parseDurationFlag(text, spec);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(UsageError);
    expect(caught).toMatchObject({ code: 'USAGE', exitCode: 2, message: expect.stringContaining(message) });
    if (text.trim().length > 3) expect((caught as Error).message).not.toContain(text.trim());
    expect((caught as Error).message).not.toContain('<command>');
  });

  it('a bound above what a timer can hold is cut to the timer limit', () => {
    const huge: DurationFlag = { flag: '--x', unit: 'ms', maxMs: 90 * DAY_MS };
    expect(parseDurationFlag(`${MAX_TIMER_MS}ms`, huge)).toBe(MAX_TIMER_MS);
    expect(() => parseDurationFlag(`${MAX_TIMER_MS + 1}ms`, huge)).toThrow(/at most/);
  });
});

describe('formatDuration', () => {
  it.each([
    [DAY_MS, '24h'],
    [2 * DAY_MS, '2d'],
    [HOUR_MS, '1h'],
    [90_000, '90s'],
    [120_000, '2m'],
    [1_500, '1500ms'],
    [10, '10ms'],
  ])('%d → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
