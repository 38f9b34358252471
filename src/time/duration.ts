import { UsageError } from '../errors.js';
import { MAX_TIMER_MS } from './clock.js';

// One parser for every duration flag: `90d`, `12h`, `30m`, `45s`, `1500ms`, or a plain number in
// the flag's own unit. Bounds are part of the flag: intervals (poll, re-list, splay, staleness) are
// at most a day, deadlines as their flag says. Nothing larger than a timer can hold gets through,
// so no setTimeout ever overflows into a 1 ms busy loop. Errors give the value's length unless the
// caller says how to show it (the CLI: src/cli/value-parsers.ts).

type DurationUnit = 'ms' | 's';

export interface DurationFlag {
  flag: string;
  /** Unit of a plain number, and of the value returned. */
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

/** 86_400_000 → "24h", 1_500 → "1500ms": the largest unit that divides the value (days from 2 on). */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = UNIT_MS[unit]!;
    if (ms >= (unit === 'd' ? 2 * size : size) && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** Length in ms, or undefined when the text is not a duration (NaN, empty, negative, non-finite, 1e3…). */
export function durationMs(text: string, unit: DurationUnit): number | undefined {
  const match = SYNTAX.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] ?? unit]!;
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * The flag's value in its unit; a UsageError (exit 2) when it is not a duration within the bounds.
 * `shown` is how the message shows the text (the CLI passes its rule for rejected values).
 */
export function parseDurationFlag(text: string, spec: DurationFlag, shown = `a ${text.length}-character value`): number {
  const ms = durationMs(text, spec.unit);
  const plain = spec.unit === 's' ? 'seconds' : 'milliseconds';
  if (ms === undefined) {
    throw new UsageError(`${spec.flag} must be a duration like 30s, 5m or 1500ms (a plain number is ${plain}), got ${shown}`);
  }
  const maxMs = Math.min(spec.maxMs, MAX_TIMER_MS);
  const minMs = spec.minMs ?? 0;
  if (ms > maxMs) throw new UsageError(`${spec.flag} must be at most ${formatDuration(maxMs)}, got ${shown}`);
  if (spec.minMs === undefined ? ms <= 0 : ms < minMs) {
    throw new UsageError(`${spec.flag} must be ${spec.minMs === undefined ? 'more than 0' : `at least ${formatDuration(minMs)}`}, got ${shown}`);
  }
  return spec.unit === 's' ? ms / SECOND_MS : ms;
}
