// The one sanitizer for text that did not come from this tool (server messages, runner ids, URNs,
// Kubernetes status messages and object names, Event notes, config values shown back): it is printed
// to terminals and logs, and sent in Events. Before that it loses everything that could move the
// cursor, recolour or rewrite the screen, forge a log line or hide or reorder text: ANSI/VT escape
// sequences, C0 and C1 control characters, DEL, the line and paragraph separators, every Unicode
// bidirectional control, and the zero-width characters that hide text. It is also bounded. And every
// secret this process holds (secrets-held.ts) is masked in it, as sent and as it reads once cleaned
// (a key split by an escape sequence), before it is cut: a server repeating a key gets it masked.

import { maskHeldSecrets } from './secrets-held.js';

/** ESC-introduced sequences: CSI (ESC [ … final), OSC/DCS/SOS/PM/APC (… BEL or ESC \), two-byte escapes. */
const ESCAPE_SEQUENCE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -/]*[0-~]?)/g;
/** The 8-bit CSI (U+009B) form of the same. */
const C1_CSI_SEQUENCE = /\u009b[0-?]*[ -/]*[@-~]/g;
/**
 * Each becomes a space: C0 controls (tab, CR and LF included), DEL, C1 controls (NEL included),
 * U+2028/U+2029, the bidi controls (U+061C ALM, U+200E/U+200F LRM/RLM, U+202A–U+202E embeddings and
 * overrides, U+2066–U+2069 isolates), zero-width space, word joiner and invisible operators
 * (U+200B, U+2060–U+2064), U+FEFF, and the tag characters (U+E0000–U+E007F).
 */
/** The class past C0: DEL and C1, then the Unicode characters listed above. */
const BEYOND_C0 =
  '\\u007f-\\u009f\\u061c\\u200b\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff\\u{e0000}-\\u{e007f}';
const UNPRINTABLE = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]`, 'gu');
/** The same, LF excepted, for text where a line break is explicitly allowed. */
const UNPRINTABLE_BUT_LF = new RegExp(`[\\u0000-\\u0009\\u000b-\\u001f${BEYOND_C0}]`, 'gu');
/** One of them, anywhere. */
const ANY_UNPRINTABLE = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]`, 'u');

const DEFAULT_MAX_LENGTH = 512;

interface SanitizeOptions {
  /** Keep LF line breaks (each line is still cleaned); everything else that breaks a line becomes a space. */
  newlines?: boolean;
  /**
   * `maxLength` bounds the whole result in UTF-8 bytes, the mark of what was cut included (an
   * apiserver field limit, such as an Event note's 1024); otherwise it counts code points of text,
   * and the mark follows them.
   */
  fit?: boolean;
}

const cutMark = (cut: number) => `… (${cut} more characters)`;

/**
 * Printable text: escape sequences removed, every other unprintable character (above) turned into a
 * space, runs of spaces folded into one, trimmed; past `maxLength` cut, with `… (N more characters)`.
 * Anything not a string is rendered with String() first.
 */
export function sanitizeServerString(value: unknown, maxLength = DEFAULT_MAX_LENGTH, options: SanitizeOptions = {}): string {
  const spaced = maskHeldSecrets(
    maskHeldSecrets(String(value ?? ''), { cutOff: false })
      .replace(ESCAPE_SEQUENCE, '')
      .replace(C1_CSI_SEQUENCE, '')
      .replace(options.newlines ? UNPRINTABLE_BUT_LF : UNPRINTABLE, ' '),
  );
  const text = options.newlines
    ? spaced
        .split('\n')
        .map((line) => line.replace(/[^\S\n]+/g, ' ').trim())
        .join('\n')
        .trim()
    : spaced.replace(/\s+/g, ' ').trim();
  const points = Array.from(text);
  if (!options.fit)
    return points.length <= maxLength ? text : `${points.slice(0, maxLength).join('')}${cutMark(points.length - maxLength)}`;
  if (Buffer.byteLength(text) <= maxLength) return text;
  // The longest prefix that fits with the mark of what it leaves out (the mark shrinks as it grows).
  const markBytes = (cut: number) => Buffer.byteLength(cutMark(cut));
  if (markBytes(points.length) > maxLength) return '';
  let kept = 0;
  let bytes = 0;
  while (kept < points.length) {
    const next = Buffer.byteLength(points[kept]!);
    if (bytes + next + markBytes(points.length - kept - 1) > maxLength) break;
    bytes += next;
    kept++;
  }
  return `${points.slice(0, kept).join('')}${cutMark(points.length - kept)}`;
}

/** True when `value` holds a character the sanitizer would not print (for identifiers refused outright). */
export function hasUnprintable(value: string): boolean {
  return ANY_UNPRINTABLE.test(value);
}

/**
 * A value from outside shown back in a message (`kty is "…"`, `data.type is "…"`): JSON-quoted as
 * before, then through the sanitizer and a short cap. JSON.stringify escapes C0 controls but not C1
 * (U+009B is a CSI), bidi controls or U+2028, and bounds nothing.
 */
export function quotedServerValue(value: unknown, maxLength = 80): string {
  return sanitizeServerString(JSON.stringify(value) ?? String(value), maxLength);
}
