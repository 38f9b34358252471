// Strings that come from servers (runner ids, URNs, error messages, Kubernetes status messages) are
// printed to terminals and logs. Before printing they lose everything that could move the cursor,
// recolour or rewrite the screen, forge a log line or hide text: ANSI/VT escape sequences, C0 and C1
// control characters, line and paragraph separators, bidirectional overrides. They are also bounded.

/** ESC-introduced sequences: CSI (ESC [ … final), OSC/DCS/SOS/PM/APC (… BEL or ESC \), two-byte escapes. */
const ESCAPE_SEQUENCE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -/]*[0-~]?)/g;
/** The 8-bit CSI (U+009B) form of the same. */
const C1_CSI_SEQUENCE = /\u009b[0-?]*[ -/]*[@-~]/g;
const LINE_BREAKS = /[\r\n\t\v\f\u0085\u2028\u2029]+/g;
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const DEFAULT_MAX_LENGTH = 512;

/**
 * One printable line: escapes and control characters removed, line breaks folded into one space,
 * at most `maxLength` code points (then `…` and how many were cut). Anything not a string is
 * rendered with String() first.
 */
export function sanitizeServerString(value: unknown, maxLength = DEFAULT_MAX_LENGTH): string {
  const text = String(value ?? '')
    .replace(ESCAPE_SEQUENCE, '')
    .replace(C1_CSI_SEQUENCE, '')
    .replace(LINE_BREAKS, ' ')
    .replace(CONTROL, '');
  const points = Array.from(text);
  if (points.length <= maxLength) return text;
  return `${points.slice(0, maxLength).join('')}… (${points.length - maxLength} more characters)`;
}

/** True when a string would be printed unchanged (useful to reject rather than clean an identifier). */
export function isPrintable(value: string, maxLength = DEFAULT_MAX_LENGTH): boolean {
  return sanitizeServerString(value, maxLength) === value;
}
