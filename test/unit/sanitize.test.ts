import { describe, expect, it } from 'vitest';
import { hasUnprintable, sanitizeServerString } from '../../src/sanitize.js';

// The one sanitizer of foreign text (server messages, Kubernetes errors and Event text, runner ids,
// config values shown back): every class it must neutralise, one row at least each.

describe('sanitizeServerString', () => {
  it.each([
    ['plain text is unchanged', 'runner 3f2a: enrolled', 'runner 3f2a: enrolled'],
    ['CSI colour and cursor sequences', '\x1b[31mred\x1b[0m \x1b[2J\x1b[Hcleared', 'red cleared'],
    ['OSC title and hyperlink (BEL and ST terminated)', '\x1b]0;pwned\x07a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\', 'alink'],
    ['two-byte escapes and a trailing lone ESC', 'a\x1bcb\x1b', 'ab'],
    ['8-bit CSI and other C1 controls', '\u009b31mred\u0085x\u0090y\u009fz', 'red x y z'],
    [
      'newlines fold into one space (no forged log line)',
      'denied\n2026-01-01 INFO rotated OK\r\nend',
      'denied 2026-01-01 INFO rotated OK end',
    ],
    ['C0 controls, DEL and backspace overwrite tricks', 'ab\x08\x08ok\x00\x07\x7f', 'ab ok'],
    ['tab, vertical tab, form feed', 'a\tb\vc\fd', 'a b c d'],
    ['Unicode line and paragraph separators', 'a\u2028b\u2029c', 'a b c'],
    ['right-to-left override and pop (hidden text)', 'urn\u202egnp.exe\u202c', 'urn gnp.exe'],
    ['left-to-right and right-to-left embeddings and overrides', 'a\u202ab\u202bc\u202dd', 'a b c d'],
    ['bidi isolates', 'a\u2066b\u2067c\u2068d\u2069', 'a b c d'],
    ['left-to-right and right-to-left marks', 'a\u200eb\u200fc', 'a b c'],
    ['Arabic letter mark', 'a\u061cb', 'a b'],
    ['zero-width space, word joiner, invisible operators, BOM', 'a\u200bb\u2060c\u2063d\ufeffe', 'a b c d e'],
    ['tag characters (invisible text)', `a${String.fromCodePoint(0xe0041, 0xe0042)}b`, 'a b'],
    ['runs of spaces fold, ends are trimmed', '  a   b  ', 'a b'],
    ['what people write is kept: accents, CJK, emoji with joiners', 'café 東京 👩‍💻', 'café 東京 👩‍💻'],
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
    // What is bounded is the clean text: escapes stripped first do not count.
    expect(sanitizeServerString(`${'\x1b[31m'.repeat(100)}ok`, 2)).toBe('ok');
  });

  it('fit: the whole result, the mark included, within a byte limit (an apiserver field)', () => {
    const cut = sanitizeServerString('x'.repeat(2000), 1024, { fit: true });
    expect(Buffer.byteLength(cut)).toBe(1024);
    expect(cut).toMatch(/^x+… \(\d+ more characters\)$/);
    expect(Number(/\((\d+) more/.exec(cut)![1]) + cut.indexOf('…')).toBe(2000);
    // Multi-byte text is cut on a code point, and still fits in bytes.
    const wide = sanitizeServerString('é'.repeat(1000), 128, { fit: true });
    expect(Buffer.byteLength(wide)).toBeLessThanOrEqual(128);
    expect(wide).toMatch(/^é+… \(\d+ more characters\)$/);
    expect(sanitizeServerString('short', 1024, { fit: true })).toBe('short');
    // A limit smaller than the mark leaves nothing rather than a broken mark.
    expect(sanitizeServerString('x'.repeat(50), 10, { fit: true })).toBe('');
  });

  it('newlines: LF kept where explicitly allowed, every other control still cleaned', () => {
    expect(sanitizeServerString('line 1\r\nline\u2028 2\x1b[2J\n\u202eline 3  ', 512, { newlines: true })).toBe('line 1\nline 2\nline 3');
    expect(sanitizeServerString('a\nb')).toBe('a b');
  });
});

describe('identifiers are refused, not cleaned', () => {
  it('hasUnprintable tells a clean identifier from one to reject', () => {
    expect(hasUnprintable('6f1d0c52-7a61-4b38-9d1c-0123456789ab')).toBe(false);
    expect(hasUnprintable('id\x1b[2J')).toBe(true);
    expect(hasUnprintable('id\nINFO')).toBe(true);
    expect(hasUnprintable('id\u200e')).toBe(true);
  });

  const refused = [
    0x0, 0x1b, 0x7f, 0x85, 0x9b, 0x2028, 0x2029, 0x61c, 0x200e, 0x200f, 0x202a, 0x202e, 0x2066, 0x2069, 0x200b, 0xfeff, 0xe0001,
  ];
  it.each(refused.map((cp) => [cp.toString(16).toUpperCase().padStart(4, '0'), String.fromCodePoint(cp)]))(
    'hasUnprintable finds U+%s',
    (_code, ch) => {
      expect(hasUnprintable(`runner${ch}id`)).toBe(true);
    },
  );

  it('hasUnprintable passes ordinary text', () => {
    expect(hasUnprintable('6f1d0c52-7a61-4b38-9d1c-0123456789ab')).toBe(false);
    expect(hasUnprintable('café 👩‍💻')).toBe(false);
  });
});
