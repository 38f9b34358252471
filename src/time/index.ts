export {
  type Attempt,
  backoffDelay,
  defaultRetryPolicy,
  parseRetryAfter,
  type RetryPolicy,
  retryPolicyFromEnv,
  retryUntil,
} from './backoff.js';
export { type Clock, systemClock } from './clock.js';
export { Deadline } from './deadline.js';
export { isoString, isRfc3339 } from './iso.js';
export {
  DAY_MS,
  type DurationFlag,
  durationMs,
  durationSyntaxError,
  formatDuration,
  HOUR_MS,
  MAX_INTERVAL_MS,
  parseDurationFlag,
} from './duration.js';
