import { type AgentConfig, type Credentials, type Endpoint, resolveCredentials } from '../config/index.js';
import { type NetworkSettings, resolveNetworkSettings } from '../config/network-settings.js';
import { type AgentVersionChoice, resolveAgentVersion } from '../host/index.js';
import { dirname } from 'node:path';
import {
  type AgentFlavor,
  type ConnectionsOutcome,
  createConnections,
  detectPlatform,
  effectiveAllowlist,
  type EnrollmentInput,
  enroll,
  type HealthCheckInput,
  retryPolicyFromEnv,
} from '../enrollment/index.js';
import { failpoint } from '../failpoint.js';
import { apiKeyHash, buildUrn, type DecodedIdentity, type PrivateIdentityKey, publicKeyPem, regionFromSite } from '../identity/index.js';
import type { Io } from '../io.js';
import type { Reporter } from '../output.js';
import type { Deadline } from '../time/index.js';
import { VERSION } from '../version.js';
import { keychainSource, resolveSite } from '../config/datadog-site.js';
import { type CredentialFlags, DEFAULT_PROFILE } from '../command-options.js';

// What every rotating command resolves before it touches the network: endpoint, credentials and
// the API key hash the agent will compare on its next start.

export interface EnrollmentContext {
  config: AgentConfig;
  endpoint: Endpoint;
  credentials: Credentials;
  apiKeyOnly: boolean;
  extraHeaders: Record<string, string>;
  /** Hash of the key the agent reads, so it does not re-enroll; falls back to the enrollment key. */
  apiKeyHash: string;
  /** Proxy and TLS settings of the agent config. */
  network: NetworkSettings;
  /** X-Datadog-OnPrem-Version and where it came from. */
  version: AgentVersionChoice;
}

/** `signal`: a stopped run ends a read of the keys from stdin (`--api-key-file -`) at once. */
export async function resolveEnrollmentContext(
  config: AgentConfig,
  flags: CredentialFlags & { agentVersionSource?: 'cluster agent image' },
  io: Io,
  report: Reporter,
  signal?: AbortSignal,
): Promise<EnrollmentContext> {
  const apiKeyOnly = config.getBool('private_action_runner.api_key_only_enrollment');
  const keychain = keychainSource(flags.profile ?? DEFAULT_PROFILE, report);
  const credentials = await resolveCredentials(config, { ...flags, readStdin: () => io.readStdin(signal), keychain }, !apiKeyOnly);
  // The site stored with the keys goes with them (docs/configuration.md, "Site"): only when the API key is the profile's.
  const endpoint = await resolveSite(config, io.env, credentials.apiKey.source, keychain);
  report.info(`enrollment API: ${endpoint.baseUrl} (${endpoint.how})`);
  const network = resolveNetworkSettings(config, io.env);
  report.info(network.summary);
  for (const warning of network.warnings) report.warn(warning);
  // The cluster agent's image tag, off-cluster: no host agent's IPC is asked for another agent's version.
  const version: AgentVersionChoice =
    flags.agentVersionSource && flags.agentVersion
      ? { version: flags.agentVersion, source: flags.agentVersionSource }
      : await resolveAgentVersion(config, {
          ...(flags.agentVersion === undefined ? {} : { flag: flags.agentVersion }),
          toolVersion: VERSION,
          ipc: { tries: 1 },
        });
  report.info(`X-Datadog-OnPrem-Version: ${version.version} (${version.source})`);
  report.info(
    `API key from ${credentials.apiKey.source}${credentials.appKey ? `, application key from ${credentials.appKey.source}` : ' (API-key-only enrollment)'}`,
  );
  const agentKey = credentials.agentApiKey ?? credentials.apiKey;
  if (credentials.agentApiKey && credentials.agentApiKey.value !== credentials.apiKey.value) {
    report.warn(
      `enrolling with the API key from ${credentials.apiKey.source}, but the agent reads a different one ` +
        `(${credentials.agentApiKey.source}); the identity records the agent's key hash so it does not re-enroll`,
    );
  }
  return {
    config,
    endpoint,
    credentials,
    apiKeyOnly,
    extraHeaders: config.getStringMap('private_action_runner.opms_extra_headers'),
    apiKeyHash: apiKeyHash(agentKey.value),
    network,
    version,
  };
}

function enrollmentInput(
  ctx: EnrollmentContext,
  key: PrivateIdentityKey,
  flavor: AgentFlavor,
  naming: { runnerNamePrefix: string; hostname?: string; clusterId?: string },
  now: Date,
): EnrollmentInput {
  return {
    baseUrl: ctx.endpoint.baseUrl,
    apiKey: ctx.credentials.apiKey.value,
    ...(ctx.credentials.appKey ? { appKey: ctx.credentials.appKey.value } : {}),
    apiKeyOnly: ctx.apiKeyOnly,
    flavor,
    publicKeyPem: publicKeyPem(key.publicKey),
    version: ctx.version.version,
    extraHeaders: ctx.extraHeaders,
    now,
    ...naming,
  };
}

export function healthCheckInput(
  ctx: Pick<EnrollmentContext, 'endpoint' | 'extraHeaders'> & { network?: NetworkSettings; version?: AgentVersionChoice },
  identity: DecodedIdentity,
  flavor: AgentFlavor,
  io: Io,
): HealthCheckInput {
  return {
    baseUrl: ctx.endpoint.baseUrl,
    identity,
    version: ctx.version?.version ?? VERSION,
    flavor,
    platform: detectPlatform(io.env),
    extraHeaders: ctx.extraHeaders,
    ...(ctx.network ? { network: ctx.network } : {}),
  };
}

/** Enrollment with bounded retries, the same key every time → the URN of the new runner. */
export async function enrollKey(
  ctx: EnrollmentContext,
  key: PrivateIdentityKey,
  naming: { flavor: AgentFlavor; runnerNamePrefix: string; hostname?: string; clusterId?: string },
  /** The run's deadline: what is left of --timeout, on the run's clock. */
  deadline: Deadline,
  io: Io,
  report: Reporter,
  /** The time the runner name is made of (the pending key records the same name), and a callback on each failed attempt. */
  at: { now?: Date; onAttemptFailed?: (outcome: 'unsent' | 'unknown') => void } = {},
): Promise<{ urn: string; runnerId: string; runnerName: string }> {
  const { flavor, ...names } = naming;
  const enrolled = await enroll(enrollmentInput(ctx, key, flavor, names, at.now ?? io.now()), {
    deadline,
    policy: retryPolicyFromEnv(io.env),
    network: ctx.network,
    ...(at.onAttemptFailed ? { onAttemptFailed: at.onAttemptFailed } : {}),
    onRetry: (n, reason, wait) => {
      report.warn(`enrollment attempt ${n} failed (${reason}); retrying in ${(wait / 1000).toFixed(1)} s with the same key`);
    },
  });
  failpoint('after-enroll');
  const urn = buildUrn({ region: regionFromSite(ctx.endpoint.site), orgId: enrolled.orgId, runnerId: enrolled.runnerId });
  report.info(`enrolled ${urn} (attempts: ${enrolled.attempts})`);
  return { urn, runnerId: enrolled.runnerId, runnerName: enrolled.runnerName };
}

/**
 * After a successful enrollment and write: the runner's connections, as the agent creates them.
 * Best effort: a failure is a warning and never changes the exit code.
 */
/** The longest one connection request may take, within the run's deadline. */
const CONNECTION_REQUEST_MS = 10_000;

export async function createRunnerConnections(
  ctx: EnrollmentContext,
  flavor: AgentFlavor,
  enrolled: { runnerId: string; runnerName: string },
  hostname: string,
  report: Reporter,
  /** The run's deadline: the requests are cut to what is left of --timeout, and none is sent once it has passed. */
  deadline: Deadline,
): Promise<ConnectionsOutcome> {
  if (deadline.expired()) {
    const skipped = "the command's --timeout had passed";
    report.info(`connections: not created (${skipped}); the identity is fine, create them in Datadog if needed`);
    return { skipped, created: [], failed: [] };
  }
  const config = ctx.config;
  const configured = configList(config, 'private_action_runner.actions_allowlist');
  const defaults =
    config.get('private_action_runner.default_actions_enabled') === undefined
      ? true
      : config.getBool('private_action_runner.default_actions_enabled');
  const outcome = await createConnections({
    baseUrl: ctx.endpoint.baseUrl,
    apiKey: ctx.credentials.apiKey.value,
    ...(ctx.credentials.appKey ? { appKey: ctx.credentials.appKey.value } : {}),
    apiKeyOnly: ctx.apiKeyOnly,
    skip: config.getBool('private_action_runner.skip_connection_creation'),
    allowlist: effectiveAllowlist(configured, defaults, flavor),
    runnerId: enrolled.runnerId,
    runnerName: enrolled.runnerName,
    hostname,
    configDir: config.file ? dirname(config.file) : '/etc/datadog-agent',
    version: ctx.version.version,
    network: ctx.network,
    timeoutMs: Math.min(CONNECTION_REQUEST_MS, Math.floor(deadline.remainingMs())),
  });
  if (outcome.skipped) report.info(`connections: not created (${outcome.skipped})`);
  for (const created of outcome.created) report.info(`connections: created ${created} (${enrolled.runnerName})`);
  for (const failed of outcome.failed)
    report.warn(
      `connections: ${failed.integrationType} not created (${failed.reason}); the identity is fine, create it in Datadog if needed`,
    );
  return outcome;
}

function configList(config: AgentConfig, key: string): string[] {
  const value = config.get(key);
  if (Array.isArray(value)) return value.map(String).filter(Boolean);
  if (typeof value === 'string') return value.split(/[\s,]+/).filter(Boolean);
  return [];
}
