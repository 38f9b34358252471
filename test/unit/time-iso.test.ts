import { describe, expect, it } from 'vitest';
import { isoString } from '../../src/time/index.js';

// isoString is Date.prototype.toISOString without the ICU time-zone lookup V8 makes while formatting.

describe('isoString', () => {
  it('is toISOString, to the millisecond, across the years', () => {
    const dates = [
      0,
      1,
      999,
      1741064767890,
      Date.UTC(2000, 1, 29, 23, 59, 59, 999),
      Date.UTC(1969, 11, 31, 23, 59, 59, 1),
      Date.UTC(0, 0, 1),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      -1,
    ];
    for (let i = 0; i < 500; i++) dates.push(Math.floor(Math.random() * 2 ** 44) - 2 ** 43);
    for (const ms of dates) {
      expect(isoString(ms), String(ms)).toBe(new Date(ms).toISOString());
      expect(isoString(new Date(ms)), String(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('keeps the expanded years and the RangeError of the built-in', () => {
    for (const ms of [Date.UTC(-1, 0, 1), Date.UTC(10000, 0, 1), 8.64e15, -8.64e15]) expect(isoString(ms)).toBe(new Date(ms).toISOString());
    expect(() => isoString(Number.NaN)).toThrow(RangeError);
    expect(() => isoString(new Date('not a date'))).toThrow(RangeError);
  });
});
