import { expect } from 'vitest';
import type { CliRun } from './run-cli.js';

// What the hostile-*.test.ts suites plant as text (issue 24, "Terminal injection"), and the check that
// none of it reaches the operator raw: not on stdout, not on stderr, not in any string of a --json
// document.

/** What must never reach the operator: C0 but tab and LF, DEL, C1, bidi and zero-width controls, line separators. */
const UNSAFE =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/u;
export const TAIL = 'Z'.repeat(5000);
/** Each kind of hostile character at once: CSI clear screen, OSC 52 clipboard, 8-bit CSI, RLO, LS. */
export const HOSTILE = `\u001b[2J\u001b]52;c;b3duZWQ=\u0007\u009b31mrotated\u202eok\u2028INFO done`;

function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) strings([k, v], out);
  return out;
}

/** No unsafe character in stdout or stderr, nor in any string of the --json document; the tail cut. */
export function expectClean(run: CliRun, json = false): void {
  for (const [name, text] of [
    ['stdout', run.stdout],
    ['stderr', run.stderr],
  ] as const) {
    expect(UNSAFE.exec(text)?.[0], `${name}: ${JSON.stringify(text.slice(0, 400))}`).toBeUndefined();
    expect(text).not.toContain('Z'.repeat(600));
  }
  if (json) {
    // The JSON text escapes C0 controls as \u001b: the values themselves must be clean.
    for (const s of strings(JSON.parse(run.stdout))) {
      expect(UNSAFE.exec(s)?.[0], JSON.stringify(s.slice(0, 200))).toBeUndefined();
      expect(s.length).toBeLessThan(2000);
    }
  }
}
