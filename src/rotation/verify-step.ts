import { type AgentConfig, resolveEndpoint } from '../config/index.js';
import { resolveNetworkSettings } from '../config/network-settings.js';
import { type AgentFlavor, type HealthCheckInput, type RetryPolicy, retryPolicyFromEnv, verifyOnline } from '../enrollment/index.js';
import type { DecodedIdentity } from '../identity/index.js';
import type { Io } from '../io.js';
import type { Reporter } from '../output.js';
import { type EnrollmentContext, healthCheckInput } from './enrollment-context.js';

export type VerifyReport = { performed: false } | { performed: true; ok: boolean; status?: number; reason?: string; attempts: number };

export async function verifyStep(input: HealthCheckInput, timeoutSeconds: number, policy: RetryPolicy): Promise<VerifyReport> {
  const result = await verifyOnline(input, { timeoutMs: timeoutSeconds * 1000, policy });
  return { performed: true, ...result };
}

/** Verification outside a rotation (status, rollback): the endpoint comes from the agent config. */
export async function verifyWithConfig(config: AgentConfig, identity: DecodedIdentity, flavor: AgentFlavor, io: Io, report: Reporter, timeoutSeconds: number): Promise<VerifyReport> {
  const endpoint = resolveEndpoint(config, io.env);
  const network = resolveNetworkSettings(config, io.env);
  for (const warning of network.warnings) report.warn(warning);
  const ctx = { endpoint, extraHeaders: config.getStringMap('private_action_runner.opms_extra_headers'), network };
  return verifyStep(healthCheckInput(ctx, identity, flavor, io), timeoutSeconds, retryPolicyFromEnv(io.env));
}

export function describeVerify(verify: VerifyReport): string {
  if (!verify.performed) return 'skipped (--no-verify)';
  return verify.ok ? `yes (health check HTTP ${verify.status})` : `NO (${verify.reason})`;
}

/** The online check right after a rotation, within what is left of the rotation's --timeout. */
export async function verifyAfterRotation(
  ctx: EnrollmentContext,
  identity: DecodedIdentity,
  flavor: AgentFlavor,
  options: { verify: boolean; timeoutSeconds: number },
  startedMs: number,
  io: Io,
): Promise<VerifyReport> {
  if (!options.verify) return { performed: false };
  const left = Math.max(10, options.timeoutSeconds - (io.now().getTime() - startedMs) / 1000);
  return verifyStep(healthCheckInput(ctx, identity, flavor, io), left, retryPolicyFromEnv(io.env));
}
