import type { AgentConfig } from '../config/index.js';
import { resolveNetworkSettings } from '../config/network-settings.js';
import { type HealthCheckInput, type RetryPolicy, verifyOnline } from '../enrollment/index.js';
import type { Io } from '../io.js';
import type { Reporter } from '../output.js';
import type { VerifyReport } from '../results/identity.js';
import type { Deadline } from '../time/index.js';
import { keychainSource, resolveSite } from '../config/datadog-site.js';
import type { EnrollmentContext } from './enrollment-context.js';
import { DEFAULT_PROFILE } from '../command-options.js';

export type { VerifyReport };

/** One verification within the run's deadline (what the steps before it left of --timeout). */
export async function verifyOnce(
  input: HealthCheckInput,
  deadline: Deadline,
  policy: RetryPolicy,
): Promise<Extract<VerifyReport, { performed: true }>> {
  const result = await verifyOnline(input, { deadline, policy });
  return { performed: true, ...result };
}

/**
 * Where a run that enrolls nothing (status, rollback) sends its health check: the site a rotation with
 * the same config, environment and profile would use (src/config/datadog-site.ts), and the agent config's network.
 */
export async function verificationContext(
  config: AgentConfig,
  profile: string | undefined,
  io: Io,
  report: Reporter,
): Promise<Pick<EnrollmentContext, 'endpoint' | 'extraHeaders' | 'network'>> {
  const endpoint = await resolveSite(config, io.env, undefined, keychainSource(profile ?? DEFAULT_PROFILE, report));
  report.info(`health check API: ${endpoint.baseUrl} (${endpoint.how})`);
  const network = resolveNetworkSettings(config, io.env);
  for (const warning of network.warnings) report.warn(warning);
  return { endpoint, extraHeaders: config.getStringMap('private_action_runner.opms_extra_headers'), network };
}

export function describeVerify(verify: VerifyReport): string {
  if (!verify.performed) return 'skipped (--no-verify)';
  return verify.ok ? `yes (health check HTTP ${verify.status})` : `NO (${verify.reason})`;
}
