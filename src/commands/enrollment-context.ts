import { type AgentConfig, type Credentials, type Endpoint, resolveCredentials, resolveEndpoint } from '../config/index.js';
import { type NetworkSettings, resolveNetworkSettings } from '../config/network-settings.js';
import { type AgentFlavor, detectPlatform, type EnrollmentInput, enroll, type HealthCheckInput, retryPolicyFromEnv } from '../enrollment/index.js';
import { failpoint } from '../failpoint.js';
import { apiKeyHash, buildUrn, type DecodedIdentity, generateIdentityKey, type PrivateIdentityKey, publicKeyPem, regionFromSite } from '../identity/index.js';
import type { Io } from '../io.js';
import type { Reporter } from '../output.js';
import { VERSION } from '../version.js';

// What every rotating command resolves before it touches the network: endpoint, credentials and
// the API key hash the agent will compare on its next start.

export interface CredentialFlags {
  apiKeyFile?: string;
  appKeyFile?: string;
  /** Keychain profile consulted last (default "default"). */
  profile?: string;
}

/** The keychain is the last source; where none exists (containers) it is skipped with a note. */
function keychainSource(profile: string, report: Reporter) {
  return async () => {
    const { readProfile, KeychainUnavailableError } = await import('../credentials/index.js');
    try {
      const stored = await readProfile(profile);
      return { ...(stored.api_key ? { apiKey: stored.api_key } : {}), ...(stored.app_key ? { appKey: stored.app_key } : {}), profile };
    } catch (err) {
      if (!(err instanceof KeychainUnavailableError)) throw err;
      report.info(`keychain not consulted: ${err.message}`);
      return undefined;
    }
  };
}

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
}

export async function resolveEnrollmentContext(config: AgentConfig, flags: CredentialFlags, io: Io, report: Reporter): Promise<EnrollmentContext> {
  const endpoint = resolveEndpoint(config, io.env);
  report.info(`enrollment API: ${endpoint.baseUrl} (${endpoint.how})`);
  const network = resolveNetworkSettings(config, io.env);
  report.info(network.summary);
  for (const warning of network.warnings) report.warn(warning);
  const apiKeyOnly = config.getBool('private_action_runner.api_key_only_enrollment');
  const credentials = await resolveCredentials(
    config,
    { ...flags, readStdin: io.readStdin, env: io.env, keychain: keychainSource(flags.profile ?? 'default', report) },
    !apiKeyOnly,
  );
  report.info(`API key from ${credentials.apiKey.source}${credentials.appKey ? `, application key from ${credentials.appKey.source}` : ' (API-key-only enrollment)'}`);
  const agentKey = credentials.agentApiKey ?? credentials.apiKey;
  if (credentials.agentApiKey && credentials.agentApiKey.value !== credentials.apiKey.value) {
    report.warn(
      `enrolling with the API key from ${credentials.apiKey.source}, but the agent reads a different one (${credentials.agentApiKey.source}); the identity records the agent's key hash so it does not re-enroll`,
    );
  }
  return { config, endpoint, credentials, apiKeyOnly, extraHeaders: config.getStringMap('private_action_runner.opms_extra_headers'), apiKeyHash: apiKeyHash(agentKey.value), network };
}

export function enrollmentInput(
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
    version: VERSION,
    extraHeaders: ctx.extraHeaders,
    now,
    ...naming,
  };
}

export function healthCheckInput(ctx: Pick<EnrollmentContext, 'endpoint' | 'extraHeaders'> & { network?: NetworkSettings }, identity: DecodedIdentity, flavor: AgentFlavor, io: Io): HealthCheckInput {
  return { baseUrl: ctx.endpoint.baseUrl, identity, version: VERSION, flavor, platform: detectPlatform(io.env), extraHeaders: ctx.extraHeaders, ...(ctx.network ? { network: ctx.network } : {}) };
}

/** Fresh key → enrollment (bounded retries, the same key every time) → URN. */
export async function enrollNewKey(
  ctx: EnrollmentContext,
  flavor: AgentFlavor,
  naming: { runnerNamePrefix: string; hostname?: string; clusterId?: string },
  timeoutSeconds: number,
  io: Io,
  report: Reporter,
): Promise<{ key: PrivateIdentityKey; urn: string }> {
  report.step('generate key and enroll');
  const key = generateIdentityKey();
  const enrolled = await enroll(enrollmentInput(ctx, key, flavor, naming, io.now()), {
    timeoutMs: timeoutSeconds * 1000,
    policy: retryPolicyFromEnv(io.env),
    network: ctx.network,
    onRetry: (n, reason, wait) => report.warn(`enrollment attempt ${n} failed (${reason}); retrying in ${(wait / 1000).toFixed(1)} s with the same key`),
  });
  failpoint('after-enroll');
  const urn = buildUrn({ region: regionFromSite(ctx.endpoint.site), orgId: enrolled.orgId, runnerId: enrolled.runnerId });
  report.info(`enrolled ${urn} (attempts: ${enrolled.attempts})`);
  return { key, urn };
}
