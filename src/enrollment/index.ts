export { classifyStatus } from './classify-status.js';
export { type ConnectionsInput, type ConnectionsOutcome, CONNECTIONS_PATH, connectionBody, connectionsToCreate, createConnections, effectiveAllowlist } from './connections.js';
export { type EnrollOptions, type EnrollOutcome, enroll } from './enroll.js';
export { type AgentFlavor, buildEnrollmentRequest, type EnrollmentInput, enrollmentPath, runnerNameSuffix } from './enrollment-request.js';
export { parseEnrollmentResponse } from './enrollment-response.js';
export { HEALTH_CHECK_PATH, type HealthCheckInput, type HealthCheckResult, healthCheckOnce, healthCheckUrl, verifyOnline } from './health-check.js';
export { MAX_RESPONSE_BYTES } from './http-exchange.js';
// Re-exported for the commands that build enrollment and verification inputs.
export { type RetryPolicy, retryPolicyFromEnv } from '../time/index.js';
export { detectPlatform, type RunnerPlatform, runtimeHeaders } from './runner-headers.js';
export { type KeyValidation, VALIDATE_PATH, validateApiKey } from './validate-key.js';
