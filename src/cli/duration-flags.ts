import { UsageError } from '../errors.js';
import { DAY_MS, type DurationFlag, durationMs, durationSyntaxError, formatDuration, HOUR_MS, MAX_INTERVAL_MS } from '../time/index.js';
import { rejectedValue } from './value-parsers.js';

// The bounds of every duration flag, in one place (README "Durations" and the man page quote them).
// Deadlines: enrollment and verification at most 1 h (a longer wait hides a broken network),
// a rollout at most 24 h (a large DaemonSet can take hours). Intervals: at most 24 h. Grace before
// SIGKILL: at most 1 h.

export const DURATIONS = {
  timeout: { flag: '--timeout', unit: 's', maxMs: HOUR_MS },
  rolloutTimeout: { flag: '--rollout-timeout', unit: 's', maxMs: DAY_MS },
  rolloutCommandTimeout: { flag: '--timeout', unit: 's', maxMs: DAY_MS },
  pollInterval: { flag: '--poll-interval', unit: 'ms', minMs: 10, maxMs: MAX_INTERVAL_MS },
  relistInterval: { flag: '--relist-interval', unit: 's', minMs: 0, maxMs: MAX_INTERVAL_MS },
  killTimeout: { flag: '--kill-timeout', unit: 's', minMs: 0, maxMs: HOUR_MS },
  splay: { flag: '--splay', unit: 'ms', minMs: 0, maxMs: MAX_INTERVAL_MS },
  healthzStale: { flag: '--healthz-stale', unit: 's', maxMs: MAX_INTERVAL_MS },
  waitLock: { flag: '--wait-lock', unit: 's', minMs: 0, maxMs: DAY_MS },
  /** An age, not a timer: up to ten years (parsed by ageThreshold, which a timer's bound does not limit). */
  ifOlderThan: { flag: '--if-older-than', unit: 's', maxMs: 3650 * DAY_MS },
} as const satisfies Record<string, DurationFlag>;

/**
 * --if-older-than: an age, not a timer, so it may exceed what setTimeout can hold (90d, 1y…); the unit
 * is required (a bare 90 is not 90 days); bounded to ten years. Returns seconds.
 */
export function ageThreshold(value: string): number {
  const ms = durationMs(value);
  const shown = rejectedValue('--if-older-than', value);
  if (ms === undefined || ms === 'bare') throw durationSyntaxError('--if-older-than', ms, value, shown, 'like 90d, 12h or 30m', 'd');
  if (ms <= 0 || ms > DURATIONS.ifOlderThan.maxMs) {
    throw new UsageError(`--if-older-than must be an age more than 0 and at most 3650d, got ${shown}; for example: --if-older-than 90d`);
  }
  return ms / 1000;
}

/** A duration flag's default as the flag is written (`2m`, not 120): help and man page show what may be typed. */
export function shownDefault(flag: { default?: unknown; duration?: DurationFlag }): string {
  if (!flag.duration || typeof flag.default !== 'number') return String(flag.default);
  if (flag.default === 0) return '0';
  return formatDuration(flag.default * (flag.duration.unit === 's' ? 1000 : 1));
}
