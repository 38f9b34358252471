import type { AgentSettingsRead } from '../agent/pod-template.js';
import { type AgentConfig, loadAgentConfig } from '../config/agent-config.js';
import { resolveEndpoint } from '../config/endpoint.js';
import { ConfigError } from '../errors.js';
import { apiKeyHash } from '../identity/api-key-hash.js';
import { regionFromSite } from '../identity/urn.js';
import { DEFAULT_SECRET_NAME } from '../kube/secret-target.js';
import type { AgentSettingReport } from '../results/identity.js';
import { sanitizeServerString } from '../sanitize.js';

// The running cluster agent decides (docs/configuration.md, "The running agent's settings"): what it
// runs with is the run's setting; a local one (-c, -E, DD_* in this shell) that leads to another
// outcome — the identity Secret, the site's region and enrollment endpoint, the cluster name, the API
// key — stops the run before anything is enrolled, unless --override-agent-settings. What the local
// side does not state is the agent's.

/** The keys the agent decides (the rest — proxy, TLS, kubeconfig, secrets backend — are this host's). */
const AGENT_DECIDES = (key: string) =>
  key.startsWith('private_action_runner.') ||
  ['site', 'dd_url', 'api_key', 'app_key', 'cluster_name', 'kube_resources_namespace'].includes(key);

/** The enrollment-endpoint switch the agent reads from its environment only (docs/protocol.md §3). */
const DD_URL_SWITCH = 'DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS';

export interface AgentSettings {
  read: AgentSettingsRead;
  /** The agent's own config: its files and env, nothing of this host. */
  config: AgentConfig;
  /** How it was found: `--agent deployment/x`, or by its labels. */
  how: string;
}

/** One compared outcome: both sides, printable (values sanitised, keys only by hash). */
type SettingComparison = AgentSettingReport;

interface AgentSettingsOutcome {
  /** The run's settings: the local value where it states one (same outcome, or overridden), else the agent's. */
  config: AgentConfig;
  /** This shell's environment with the agent's enrollment-endpoint switch when this shell does not set it. */
  env: NodeJS.ProcessEnv;
  compared: SettingComparison[];
  /** What could not be compared, and why (RBAC: which verb on which object). */
  notCompared: string[];
  overridden: SettingComparison[];
}

/** The agent's config from what its Pod template gives: its files, then its env over them; its secrets backend never runs here. */
export async function agentConfigOf(read: AgentSettingsRead): Promise<AgentConfig> {
  return loadAgentConfig({ layers: read.layers, env: read.env, envSource: (name) => read.envSources[name], secretsBackend: false });
}

/** A config whose every key comes from `local` when it states it, else (a key the agent decides) from `agent`. */
function layered(local: AgentConfig, agent: AgentConfig): AgentConfig {
  const pick = (key: string): AgentConfig =>
    local.sourceOf(key) !== 'default' || !AGENT_DECIDES(key) || agent.sourceOf(key) === 'default' ? local : agent;
  return {
    ...(local.file ? { file: local.file } : {}),
    files: [...local.files, ...agent.files],
    get: (key) => pick(key).get(key),
    getString: (key) => pick(key).getString(key),
    getBool: (key) => pick(key).getBool(key),
    getStringMap: (key) => pick(key).getStringMap(key),
    sourceOf: (key) => pick(key).sourceOf(key),
    ...(local.secretsFailure ? { secretsFailure: local.secretsFailure } : {}),
  };
}

const shown = (value: string) => sanitizeServerString(value, 300);
const stated = (config: AgentConfig, key: string) => config.sourceOf(key) !== 'default';

/** The env variables a setting's agent value may come from: one it could not read makes the setting not compared. */
const ENV_OF: Record<string, string[]> = {
  'identity Secret name': ['DD_PRIVATE_ACTION_RUNNER_IDENTITY_SECRET_NAME'],
  'identity Secret namespace': ['DD_KUBE_RESOURCES_NAMESPACE'],
  'site and enrollment endpoint': ['DD_SITE', 'DD_DD_URL', 'DD_URL', DD_URL_SWITCH],
  'cluster name (runner name)': ['DD_CLUSTER_NAME'],
  'API key (api_key_hash)': ['DD_API_KEY'],
};

interface Side {
  config: AgentConfig;
  env: NodeJS.ProcessEnv;
}

/** Each outcome the two sides lead to: [setting, local states it, local value+source, agent value+source]. */
function outcomes(
  local: Side,
  agent: Side,
  agentNamespace: string,
): { setting: string; localStates: boolean; local: () => [string, string]; agent: () => [string, string] }[] {
  const endpoint = (side: Side) => {
    const e = resolveEndpoint(side.config, side.env);
    const viaSwitch = side.env[DD_URL_SWITCH] === 'true' && side.config.getString('dd_url');
    return [
      `region ${regionFromSite(e.site)}, enrollment at ${e.baseUrl}`,
      viaSwitch ? `${e.siteSource}; dd_url (${side.config.sourceOf('dd_url')}) with ${DD_URL_SWITCH}` : e.siteSource,
    ] as [string, string];
  };
  const apiKey = (config: AgentConfig): [string, string] => {
    const key = config.getString('api_key');
    return [key ? `api_key_hash ${apiKeyHash(key).slice(0, 12)}…` : 'none', config.sourceOf('api_key')];
  };
  const settingOf = (config: AgentConfig, key: string, fallback: string): [string, string] => [
    config.getString(key) ?? fallback,
    config.sourceOf(key),
  ];
  return [
    {
      setting: 'identity Secret name',
      localStates: stated(local.config, 'private_action_runner.identity_secret_name'),
      local: () => settingOf(local.config, 'private_action_runner.identity_secret_name', DEFAULT_SECRET_NAME),
      agent: () => settingOf(agent.config, 'private_action_runner.identity_secret_name', DEFAULT_SECRET_NAME),
    },
    {
      setting: 'identity Secret namespace',
      localStates: stated(local.config, 'kube_resources_namespace'),
      local: () => settingOf(local.config, 'kube_resources_namespace', ''),
      agent: () =>
        agent.config.getString('kube_resources_namespace')
          ? settingOf(agent.config, 'kube_resources_namespace', '')
          : [agentNamespace, "the agent Pod's namespace (no kube_resources_namespace)"],
    },
    {
      setting: 'site and enrollment endpoint',
      // The switch alone states no endpoint: it only gives dd_url, which the local side then states.
      localStates: stated(local.config, 'site') || stated(local.config, 'dd_url'),
      local: () => endpoint(local),
      agent: () => endpoint(agent),
    },
    {
      setting: 'cluster name (runner name)',
      localStates: stated(local.config, 'cluster_name'),
      local: () => settingOf(local.config, 'cluster_name', ''),
      agent: () => settingOf(agent.config, 'cluster_name', "not set: the runner is named after the agent Pod's hostname"),
    },
    {
      setting: 'API key (api_key_hash)',
      localStates: stated(local.config, 'api_key'),
      local: () => apiKey(local.config),
      agent: () => apiKey(agent.config),
    },
  ];
}

function settingsMismatch(agentLabel: string, mismatches: SettingComparison[]): ConfigError {
  const each = mismatches.map((m) => `${m.setting}: here ${m.local} (${m.localSource}), the agent ${m.agent} (${m.agentSource})`);
  return new ConfigError(
    'AGENT_SETTINGS_MISMATCH',
    `local settings lead to another outcome than the running cluster agent's (${agentLabel}): ${each.join('; ')}`,
    `Nothing was enrolled and nothing was changed. Drop the local setting (the -c/-E file's key, ` +
      `or unset the DD_* variable in this shell) to use the agent's, correct it, ` +
      'or pass --override-agent-settings to go on with the local one.',
    {
      agent: agentLabel,
      mismatches: mismatches.map((m) => `${m.setting}: ${m.local} (${m.localSource}) vs ${m.agent} (${m.agentSource})`),
    },
  );
}

/**
 * The run's settings from the agent's and the local ones. `local`: the -c/-E files given and this
 * shell's DD_* (no file when no -c was given). Throws AGENT_SETTINGS_MISMATCH unless `override`.
 */
export function mergeAgentSettings(local: Side, agent: AgentSettings, override: boolean): AgentSettingsOutcome {
  const agentSide: Side = { config: agent.config, env: agent.read.env };
  const compared: SettingComparison[] = [];
  const notCompared: string[] = [];
  for (const o of outcomes(local, agentSide, agent.read.deployment.namespace)) {
    const [agentValue, agentSource] = o.agent();
    const unknown = (ENV_OF[o.setting] ?? []).map((name) => agent.read.envUnknown[name]).find(Boolean);
    if (unknown) {
      notCompared.push(`${o.setting}: ${unknown}`);
      continue;
    }
    if (!o.localStates) {
      compared.push({ setting: o.setting, agent: shown(agentValue), agentSource: shown(agentSource), outcome: 'agent' });
      continue;
    }
    const [localValue, localSource] = o.local();
    const same = localValue === agentValue;
    compared.push({
      setting: o.setting,
      agent: shown(agentValue),
      agentSource: shown(agentSource),
      local: shown(localValue),
      localSource: shown(localSource),
      outcome: same ? 'same' : override ? 'overridden' : 'mismatch',
    });
  }
  const mismatches = compared.filter((c) => c.outcome === 'mismatch');
  if (mismatches.length) throw settingsMismatch(agent.read.label, mismatches);
  const env =
    local.env[DD_URL_SWITCH] === undefined && agent.read.env[DD_URL_SWITCH] !== undefined
      ? { ...local.env, [DD_URL_SWITCH]: agent.read.env[DD_URL_SWITCH] }
      : local.env;
  return {
    config: layered(local.config, agent.config),
    env,
    compared,
    notCompared,
    overridden: compared.filter((c) => c.outcome === 'overridden'),
  };
}

/** One line a compared setting, for the run's report. */
export function describeComparison(c: SettingComparison): string {
  if (c.outcome === 'agent') return `${c.setting}: ${c.agent} (${c.agentSource})`;
  if (c.outcome === 'same') return `${c.setting}: ${c.agent} (${c.agentSource}; the same outcome as ${c.localSource})`;
  return `${c.setting}: OVERRIDDEN with ${c.local} (${c.localSource}); the agent has ${c.agent} (${c.agentSource})`;
}
