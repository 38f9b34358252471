export { type Attempt, backoffDelay, defaultRetryPolicy, parseRetryAfter, type RetryOutcome, type RetryPolicy, retryPolicyFromEnv, retryUntil } from './backoff.js';
export { type Clock, MAX_TIMER_MS, systemClock, timerDelay } from './clock.js';
export { Deadline } from './deadline.js';
export { DAY_MS, type DurationFlag, durationMs, formatDuration, HOUR_MS, MAX_INTERVAL_MS, MINUTE_MS, parseDurationFlag, SECOND_MS } from './duration.js';
