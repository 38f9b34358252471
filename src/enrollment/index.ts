export { type ConnectionsOutcome, createConnections, effectiveAllowlist } from './connections.js';
export { enroll } from './enroll.js';
export { type AgentFlavor, type EnrollmentInput, enrollmentPath, runnerNameSuffix } from './enrollment-request.js';
export { type HealthCheckInput, healthCheckOnce, verifyOnline } from './health-check.js';
// Re-exported for the commands that build enrollment and verification inputs.
export { type RetryPolicy, retryPolicyFromEnv } from '../time/index.js';
export { detectPlatform } from './runner-headers.js';
export { validateApiKey, validateAppKey } from './validate-key.js';
