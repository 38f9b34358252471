import { DAY_MS, type DurationFlag, HOUR_MS, MAX_INTERVAL_MS, parseDurationFlag } from '../time/index.js';

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
} as const satisfies Record<string, DurationFlag>;

/** A commander argParser for one of the flags above. */
export const duration = (spec: DurationFlag) => (value: string) => parseDurationFlag(value, spec);
