import { UsageError } from '../errors.js';
import { MAX_TIMER_MS } from './clock.js';

// One parser for every duration flag: `90d`, `12h`, `30m`, `45s`, `1500ms`; the unit is required
// (docs/commands.md, "Durations": a bare `90` was 90 seconds to --if-older-than, whose operator meant days,
// and 5000 meant 5 s to --splay but 83 min to --timeout), except a bare `0` where the flag allows zero.
// Bounds are part of the flag: intervals (poll, re-list, splay, staleness) are
// at most a day, deadlines as their flag says. Nothing larger than a timer can hold gets through,
// so no setTimeout ever overflows into a 1 ms busy loop. Errors give the value's length unless the
// caller says how to show it (the CLI: src/cli/value-parsers.ts).

type DurationUnit = 'ms' | 's';

export interface DurationFlag {
  flag: string;
  /** Unit of the value returned (and of the API's number for this flag). */
  unit: DurationUnit;
  /** Inclusive upper bound. */
  maxMs: number;
  /** Inclusive lower bound; 0 allows zero (which the flag documents as "off" or "none"). Default: more than 0. */
  minMs?: number;
}

const SECOND_MS = 1_000;
const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
/** Bound of every interval flag. */
export const MAX_INTERVAL_MS = DAY_MS;

const UNIT_MS: Record<string, number> = { ms: 1, s: SECOND_MS, m: MINUTE_MS, h: HOUR_MS, d: DAY_MS };
const SYNTAX = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/;
const EXAMPLES = 'like 30s, 5m or 1500ms';

/** 86_400_000 → "24h", 1_500 → "1500ms": the largest unit that divides the value (days from 2 on). */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = UNIT_MS[unit]!;
    if (ms >= (unit === 'd' ? 2 * size : size) && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * Length in ms, or undefined when the text is not a duration (NaN, empty, negative, non-finite, 1e3…);
 * `'bare'` for a number without its unit, other than 0.
 */
export function durationMs(text: string): number | 'bare' | undefined {
  const match = SYNTAX.exec(text.trim());
  if (!match) return undefined;
  if (match[2] === undefined) return Number(match[1]) === 0 ? 0 : 'bare';
  const ms = Number(match[1]) * UNIT_MS[match[2]]!;
  return Number.isFinite(ms) ? ms : undefined;
}

/** What a usage error says for a value that is not a duration: the rule, and an accepted value to copy. */
export function durationSyntaxError(
  flag: string,
  parsed: 'bare' | undefined,
  text: string,
  shown: string,
  examples = EXAMPLES,
  unit = 's',
): UsageError {
  // A bare number keeps its old meaning in the example, unless the value is shown by its length only.
  const example =
    parsed === 'bare' && shown.startsWith('"')
      ? `${flag} ${text.trim()}${unit}`
      : `${flag} ${examples.replace(/^like /, '').split(',')[0]}`;
  const rule = parsed === 'bare' ? 'with its unit (ms, s, m, h or d)' : `with its unit, ${examples}`;
  return new UsageError(`${flag} must be a duration ${rule}, got ${shown}; for example: ${example}`);
}

/**
 * The flag's value in its unit; a UsageError (exit 2) when it is not a duration within the bounds.
 * `shown` is how the message shows the text (the CLI passes its rule for rejected values).
 */
export function parseDurationFlag(text: string, spec: DurationFlag, shown = `a ${text.length}-character value`): number {
  const ms = durationMs(text);
  if (ms === undefined || ms === 'bare') throw durationSyntaxError(spec.flag, ms, text, shown, EXAMPLES, spec.unit);
  const maxMs = Math.min(spec.maxMs, MAX_TIMER_MS);
  const minMs = spec.minMs ?? 0;
  if (ms > maxMs)
    throw new UsageError(
      `${spec.flag} must be at most ${formatDuration(maxMs)}, got ${shown}; for example: ${spec.flag} ${formatDuration(maxMs)}`,
    );
  if (spec.minMs === undefined ? ms <= 0 : ms < minMs) {
    throw new UsageError(
      `${spec.flag} must be ${spec.minMs === undefined ? 'more than 0' : `at least ${formatDuration(minMs)}`}, got ${shown}; ` +
        `for example: ${spec.flag} ${formatDuration(Math.max(minMs, 1000))}`,
    );
  }
  return spec.unit === 's' ? ms / SECOND_MS : ms;
}
