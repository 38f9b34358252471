import type { NetworkSettings } from '../config/network-settings.js';
import type { DecodedIdentity } from '../identity/identity-record.js';
import { signRunnerJwt } from '../identity/runner-jwt.js';
import { classifyStatus } from './classify-status.js';
import { type AgentFlavor, setHeaders } from './enrollment-request.js';
import { describeNetworkError, exchange } from './http-exchange.js';
import { type Deadline, defaultRetryPolicy, parseRetryAfter, type RetryPolicy, retryUntil } from '../time/index.js';
import { type RunnerPlatform, runtimeHeaders } from './runner-headers.js';
import { tlsCertificateErrorCode } from './tls-errors.js';

// Proves online that the server accepts an identity: a signed-JWT health check (docs/protocol.md §7).

const HEALTH_CHECK_PATH = '/api/v2/on-prem-management-service/runner/health-check';

export interface HealthCheckInput {
  baseUrl: string;
  identity: DecodedIdentity;
  version: string;
  flavor: AgentFlavor;
  platform: RunnerPlatform;
  extraHeaders: Record<string, string>;
  /** Proxy and TLS from the agent config; default: direct, verified, TLS 1.2+. */
  network?: NetworkSettings;
}

interface HealthCheckResult {
  ok: boolean;
  /**
   * The server said no to this identity (401/403): a definite verdict on the key. Any other failure
   * (5xx and timeouts until the deadline, another status, TLS) proves nothing either way.
   */
  rejected: boolean;
  status?: number;
  /** Why it failed, for the operator; never contains the token. */
  reason?: string;
  attempts: number;
}

function healthCheckUrl(input: Pick<HealthCheckInput, 'baseUrl' | 'version' | 'flavor' | 'platform'>): string {
  const query = new URLSearchParams({
    runnerVersion: input.version,
    modes: 'pull',
    platform: input.platform.platform,
    architecture: input.platform.architecture,
    flavor: input.flavor,
    containerized: String(input.platform.containerized),
  });
  return `${input.baseUrl}${HEALTH_CHECK_PATH}?${query}`;
}

/** One signed call; callers that need to run many (the replica demo) use this directly. */
export async function healthCheckOnce(
  input: HealthCheckInput,
  now: Date,
  timeoutMs: number,
): Promise<{ status: number; body: string; retryAfter?: string }> {
  const jwt = await signRunnerJwt(input.identity.key.privateKey, input.identity.urn, now);
  const headers = setHeaders(setHeaders(runtimeHeaders(input.version, input.flavor, input.platform), input.extraHeaders), {
    'X-Datadog-OnPrem-JWT': jwt,
    Accept: 'application/json',
  });
  const res = await exchange('GET', healthCheckUrl(input), headers, undefined, timeoutMs, input.network);
  const retryAfter = res.headers['retry-after'];
  return { status: res.status, body: res.body, ...(retryAfter ? { retryAfter } : {}) };
}

/**
 * Retries transient failures within the deadline (the run's, its clock included); a 401/403 is a
 * definite "not accepted".
 */
export async function verifyOnline(
  input: HealthCheckInput,
  options: { deadline: Deadline; policy?: RetryPolicy },
): Promise<HealthCheckResult> {
  const { deadline } = options;
  const { clock } = deadline;
  // What was left when checking began: the time the failure reason names.
  const budgetMs = deadline.remainingMs();
  let lastStatus: number | undefined;
  const outcome = await retryUntil<HealthCheckResult>(
    async (n, remaining) => {
      try {
        const res = await healthCheckOnce(input, new Date(clock.now()), Math.min(remaining, 15_000));
        lastStatus = res.status;
        const kind = classifyStatus(res.status);
        if (kind === 'ok') return { done: true, value: { ok: true, rejected: false, status: res.status, attempts: n } };
        if (kind !== 'retry') {
          return {
            done: true,
            value: {
              ok: false,
              rejected: kind === 'credentials',
              status: res.status,
              reason: `health check answered HTTP ${res.status}`,
              attempts: n,
            },
          };
        }
        const retryAfterMs = parseRetryAfter(res.retryAfter, clock.now());
        return { done: false, reason: `HTTP ${res.status}`, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
      } catch (err) {
        // A certificate that is not trusted stays untrusted: not retried.
        const tls = tlsCertificateErrorCode(err);
        if (tls)
          return {
            done: true,
            value: {
              ok: false,
              rejected: false,
              reason: `TLS certificate not trusted (${tls}); extra CAs go in NODE_EXTRA_CA_CERTS`,
              attempts: n,
            },
          };
        return { done: false, reason: describeNetworkError(err) };
      }
    },
    { deadline, policy: options.policy ?? defaultRetryPolicy, signal: input.network?.signal },
  );
  if (outcome.value) return outcome.value;
  return {
    ok: false,
    rejected: false,
    ...(lastStatus === undefined ? {} : { status: lastStatus }),
    reason: `no successful health check within ${Math.round(budgetMs / 1000)} s (last: ${outcome.lastReason ?? 'none'})`,
    attempts: outcome.attempts,
  };
}
