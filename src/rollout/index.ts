export { FINGERPRINT_ANNOTATION, RESTARTED_AT_ANNOTATION } from './surge-strategy.js';
export { type Finding, type NodeRoom, type RolloutCheck, type Verdict } from './eligibility.js';
export { RESERVATION_ANNOTATION, onlyCapacityShortage } from './capacity-fallback.js';
export { rolloutApi, type RolloutApi } from './rollout-api.js';
export { inspect, RolloutError, type RolloutOptions, type RolloutOutcome, runRollout } from './run-rollout.js';
export { describeRef, parseWorkloadRef, type WorkloadRef } from './workload-ref.js';
