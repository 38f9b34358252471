import { describe, expect, it } from 'vitest';
import { isPrintable, sanitizeServerString } from '../../src/sanitize.js';

describe('sanitizeServerString', () => {
  it.each([
    ['plain text is unchanged', 'runner 3f2a: enrolled', 'runner 3f2a: enrolled'],
    ['CSI colour and cursor sequences', '\x1b[31mred\x1b[0m \x1b[2J\x1b[Hcleared', 'red cleared'],
    ['OSC title and hyperlink (BEL and ST terminated)', '\x1b]0;pwned\x07a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\', 'alink'],
    ['8-bit CSI and other C1 controls', '\u009b31mred\u0085x\u0090y', 'red xy'],
    ['newlines fold into one space (no forged log line)', 'denied\n2026-01-01 INFO rotated OK\r\nend', 'denied 2026-01-01 INFO rotated OK end'],
    ['C0 controls, DEL and backspace overwrite tricks', 'ab\x08\x08ok\x00\x07\x7f', 'abok'],
    ['bidirectional overrides (hidden text)', 'urn\u202egnp.exe\u202c', 'urngnp.exe'],
    ['Unicode line separators', 'a\u2028b\u2029c', 'a b c'],
    ['a trailing lone ESC', 'end\x1b', 'end'],
    ['non-strings are rendered', 404, '404'],
    ['undefined is empty', undefined, ''],
  ])('%s', (_, input, expected) => {
    expect(sanitizeServerString(input)).toBe(expected);
  });

  it('bounds length by code points, never splitting a surrogate pair, and says how much was cut', () => {
    expect(sanitizeServerString('x'.repeat(10), 4)).toBe('xxxx… (6 more characters)');
    expect(sanitizeServerString('😀😀😀', 2)).toBe('😀😀… (1 more characters)');
    expect(sanitizeServerString('y'.repeat(512))).toBe('y'.repeat(512));
    expect(sanitizeServerString('y'.repeat(100_000)).length).toBeLessThan(600);
  });

  it('isPrintable tells a clean identifier from one to reject', () => {
    expect(isPrintable('6f1d0c52-7a61-4b38-9d1c-0123456789ab')).toBe(true);
    expect(isPrintable('id\x1b[2J')).toBe(false);
    expect(isPrintable('id\nINFO')).toBe(false);
  });
});
