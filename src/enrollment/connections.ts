import type { NetworkSettings } from '../config/network-settings.js';
import { describeNetworkError, exchange } from './http-exchange.js';
import { tlsCertificateErrorCode } from './tls-errors.js';
import type { ConnectionsOutcome } from '../results/rotation.js';

// The runner's connections, created after a successful enrollment as the agent does
// (pkg/privateactionrunner/autoconnections, docs/protocol.md §12): one POST /api/v2/actions/connections per bundle family
// the actions allowlist enables. Best effort: an outcome to report, never an exception.

const CONNECTIONS_PATH = '/api/v2/actions/connections';

interface ConnectionDefinition {
  fqnPrefix: string;
  integrationType: 'Kubernetes' | 'Script';
  credentials: Record<string, string>;
}

interface ConnectionsInput {
  baseUrl: string;
  apiKey: string;
  appKey?: string;
  apiKeyOnly: boolean;
  /** private_action_runner.skip_connection_creation */
  skip: boolean;
  /** private_action_runner.actions_allowlist, plus the agent's default actions when enabled (see effectiveAllowlist). */
  allowlist: string[];
  runnerId: string;
  runnerName: string;
  hostname: string;
  /** The agent's config directory (<confd>), where the Script bundle reads private-action-runner/script-config.yaml. */
  configDir: string;
  version: string;
  network?: NetworkSettings;
  timeoutMs: number;
}

export type { ConnectionsOutcome };

/** The agent's default actions (default_actions_enabled): Kubernetes reads on the cluster agent, rshell elsewhere. */
export function effectiveAllowlist(
  configured: string[],
  defaultActionsEnabled: boolean,
  flavor: 'private_action_runner' | 'cluster_agent',
): string[] {
  if (!defaultActionsEnabled) return configured;
  return [
    ...configured,
    ...(flavor === 'cluster_agent' ? ['com.datadoghq.kubernetes.core.getPod'] : ['com.datadoghq.remoteaction.rshell.runCommand']),
  ];
}

// exported for tests: the allowlist to connections rule, checked without a server
export function connectionsToCreate(allowlist: string[], configDir: string): ConnectionDefinition[] {
  const all: ConnectionDefinition[] = [
    { fqnPrefix: 'com.datadoghq.kubernetes', integrationType: 'Kubernetes', credentials: { type: 'KubernetesServiceAccount' } },
    {
      fqnPrefix: 'com.datadoghq.script',
      integrationType: 'Script',
      credentials: { configFileLocation: `${configDir.replace(/\/+$/, '')}/private-action-runner/script-config.yaml`, type: 'Script' },
    },
  ];
  return all.filter((d) => allowlist.some((fqn) => fqn.startsWith(d.fqnPrefix)));
}

/** The JSON:API body as the agent marshals it (client mode: no id; attribute order of the Go struct; map keys sorted). */
// exported for tests: the body compared byte for byte with the agent's
export function connectionBody(definition: ConnectionDefinition, runnerId: string, runnerName: string, tags: string[]): string {
  const credentials = Object.fromEntries(Object.entries(definition.credentials).sort(([a], [b]) => (a < b ? -1 : 1)));
  return JSON.stringify({
    data: {
      type: 'action_connection',
      attributes: {
        name: `${definition.integrationType} (${runnerName})`,
        runner_id: runnerId,
        tags,
        integration: { type: definition.integrationType, credentials },
      },
    },
  });
}

export async function createConnections(input: ConnectionsInput): Promise<ConnectionsOutcome> {
  const outcome: ConnectionsOutcome = { created: [], failed: [] };
  if (input.apiKeyOnly) return { ...outcome, skipped: 'API-key-only enrollment' };
  if (input.skip) return { ...outcome, skipped: 'private_action_runner.skip_connection_creation is true' };
  if (input.allowlist.length === 0) return { ...outcome, skipped: 'private_action_runner.actions_allowlist is empty' };
  const definitions = connectionsToCreate(input.allowlist, input.configDir);
  if (definitions.length === 0) return { ...outcome, skipped: 'no Kubernetes or Script action in the allowlist' };
  const tags = [`runner-id:${input.runnerId}`, `hostname:${input.hostname}`];
  const headers: Record<string, string> = {
    'DD-API-KEY': input.apiKey,
    'DD-APPLICATION-KEY': input.appKey ?? '',
    'Content-Type': 'application/vnd.api+json',
    'User-Agent': `datadog-agent/${input.version}`,
  };
  for (const definition of definitions) {
    try {
      const res = await exchange(
        'POST',
        `${input.baseUrl}${CONNECTIONS_PATH}`,
        headers,
        connectionBody(definition, input.runnerId, input.runnerName, tags),
        input.timeoutMs,
        input.network,
      );
      if (res.status >= 200 && res.status < 300) outcome.created.push(definition.integrationType);
      else outcome.failed.push({ integrationType: definition.integrationType, reason: `HTTP ${res.status}` });
    } catch (err) {
      const tls = tlsCertificateErrorCode(err);
      outcome.failed.push({
        integrationType: definition.integrationType,
        reason: tls ? `TLS certificate not trusted (${tls})` : describeNetworkError(err),
      });
    }
  }
  return outcome;
}
