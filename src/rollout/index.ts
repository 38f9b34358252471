export { FINGERPRINT_ANNOTATION, RESTARTED_AT_ANNOTATION, restartPatch } from './surge-strategy.js';
export type { Finding, NodeRoom, RolloutCheck, Verdict } from './eligibility.js';
export { RESERVATION_ANNOTATION, onlyCapacityShortage } from './capacity-fallback.js';
export { rolloutApi, type RolloutApi } from './rollout-api.js';
export { inspect, type RolloutOptions, type RolloutOutcome, runRollout } from './run-rollout.js';
export { describeRef, parseWorkloadRef, type WorkloadRef } from './workload-ref.js';
