export { FINGERPRINT_ANNOTATION, restartPatch } from './surge-strategy.js';
export { rolloutApi } from './rollout-api.js';
export { readWorkloadOrMissing, type RolloutOutcome, runRollout } from './run-rollout.js';
export { describeRef, parseWorkloadRef, type WorkloadRef } from './workload-ref.js';
export type { NodeProgress } from './rollout-status.js';
export { assessLeftover, type LeftoverReport, leftoverReport } from './strategy-record.js';
