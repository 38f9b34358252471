import type { Deadline } from '../time/index.js';
import { type AgentConfig, resolveEndpoint, resolveIdentityPath } from '../config/index.js';
import { readAgentApiKey } from '../config/credentials.js';
import { ConfigError, ParError } from '../errors.js';
import { resolveHost } from '../host/index.js';
import type { RunnerProcess } from '../host/runner-process.js';
import { apiKeyHash, regionFromSite } from '../identity/index.js';

// On a host where the runner's own process is visible, its DD_* values are the agent's settings
// (docs/configuration.md, "The running runner's environment"). What matters is the OUTCOME they
// lead to, compared with this shell's and -c's: the enrollment endpoint and the site's region, the
// API key the runner hashes, the hostname it compares, the identity file it reads. A different
// outcome stops a rotation before enrolling unless --env-from-runner (take the runner's values) or
// --override-agent-settings (keep the local ones, listed in the output); a difference that changes
// no outcome is an info line.

/** One outcome the two sides disagree on; values are descriptions (keys only by hash). */
interface OutcomeDifference {
  outcome: string;
  here: string;
  runner: string;
}

interface Sides {
  here: { config: AgentConfig; env: NodeJS.ProcessEnv };
  runner: { config: AgentConfig; env: NodeJS.ProcessEnv };
}

/** Config keys the hostname chain or the IPC lookup reads (docs/protocol.md §4): only when one differs are both hostnames resolved. */
const HOSTNAME_INPUTS = [
  'hostname',
  'hostname_file',
  'hostname_fqdn',
  'hostname_force_config_as_canonical',
  'hostname_trust_uts_namespace',
  'cluster_name',
  'kubernetes_node_label_as_cluster_name',
  'cloud_provider_metadata',
  'azure_hostname_style',
  'ec2_prioritize_instance_id_as_hostname',
  'ec2_use_windows_prefix_detection',
  'ec2_prefer_imdsv2',
  'cmd_host',
  'cmd_port',
  'auth_token_file_path',
  'private_action_runner.split_enabled',
];

/** An outcome: what is compared (`value`) and how it is shown, with where it came from (`text`). */
interface Outcome {
  value: string;
  text: string;
}

/** An outcome, or why it cannot be had (a setting that does not resolve is itself an outcome to show). */
function attempt(fn: () => Outcome): Outcome {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ParError) return { value: `error ${err.code}`, text: `unresolved (${err.code}: ${err.message})` };
    throw err;
  }
}

function endpointOf(config: AgentConfig, env: NodeJS.ProcessEnv): Outcome {
  return attempt(() => {
    const endpoint = resolveEndpoint(config, env);
    const region = regionFromSite(endpoint.site);
    const apiKeyOnly = config.getBool('private_action_runner.api_key_only_enrollment') ? ', API-key-only enrollment' : '';
    return {
      value: `${endpoint.baseUrl} ${region}${apiKeyOnly}`,
      text: `${endpoint.baseUrl}, site ${endpoint.site} (from ${endpoint.siteSource}), region ${region}${apiKeyOnly}`,
    };
  });
}

function apiKeyOf(config: AgentConfig): Outcome {
  return attempt(() => {
    const key = readAgentApiKey(config);
    if (!key) return { value: '', text: 'no API key in the environment or the config' };
    // The hash is what the identity stores (docs/protocol.md §4); its first 12 characters tell two keys apart.
    const hash = apiKeyHash(key.value);
    return { value: hash, text: `api_key_hash ${hash.slice(0, 12)}… (from ${key.source})` };
  });
}

function identityPathOf(config: AgentConfig): Outcome {
  return attempt(() => {
    const path = resolveIdentityPath(config);
    return { value: path.path, text: `${path.path} (${path.source})` };
  });
}

const same = (a: AgentConfig, b: AgentConfig, key: string) => JSON.stringify(a.get(key) ?? null) === JSON.stringify(b.get(key) ?? null);

/**
 * The outcomes that differ between this run's settings and the runner's. `explicit`: what a flag
 * fixes for this run (--hostname, --identity-file), which is not compared.
 */
export async function outcomeDifferences(
  sides: Sides,
  explicit: { hostname?: boolean; identityFile?: boolean; agentVersion?: string; deadline?: Deadline },
): Promise<OutcomeDifference[]> {
  const { here, runner } = sides;
  const out: OutcomeDifference[] = [];
  const push = (outcome: string, a: Outcome, b: Outcome) => {
    if (a.value !== b.value) out.push({ outcome, here: a.text, runner: b.text });
  };
  push('enrollment endpoint and site region', endpointOf(here.config, here.env), endpointOf(runner.config, runner.env));
  push('API key the runner hashes', apiKeyOf(here.config), apiKeyOf(runner.config));
  if (!explicit.identityFile) push('identity file', identityPathOf(here.config), identityPathOf(runner.config));
  if (!explicit.hostname && !HOSTNAME_INPUTS.every((key) => same(here.config, runner.config, key))) {
    const version = {
      ...(explicit.agentVersion === undefined ? {} : { agentVersion: explicit.agentVersion }),
      ...(explicit.deadline ? { deadline: explicit.deadline } : {}),
    };
    const resolve = async (side: Sides['here']): Promise<Outcome> => {
      try {
        const host = await resolveHost(side.config, { env: side.env, ...version });
        return { value: host.hostname, text: `${host.hostname} (${host.source})` };
      } catch (err) {
        if (err instanceof ParError) return { value: `error ${err.code}`, text: `unresolved (${err.code}: ${err.message})` };
        throw err;
      }
    };
    push('hostname (runner name and the stored hostname)', await resolve(here), await resolve(runner));
  }
  return out;
}

function describe(d: OutcomeDifference, pid: number): string {
  return `${d.outcome}: here ${d.here}; the runner (pid ${pid}) ${d.runner}`;
}

/**
 * What a run does with the differences: a rotation (`stop`) refuses unless overridden; status
 * reports them. Returns the warnings to print; throws AGENT_SETTINGS_MISMATCH.
 */
export function settleDifferences(
  differences: OutcomeDifference[],
  runner: RunnerProcess,
  how: { stop: boolean; override: boolean },
): string[] {
  if (!differences.length) return [];
  const lines = differences.map((d) => describe(d, runner.pid));
  if (how.override) return lines.map((line) => `--override-agent-settings: overriding the running runner's setting, ${line}`);
  if (!how.stop)
    return lines.map(
      (line) =>
        `the running runner reads other settings than this run, with another outcome: ${line}. ` +
        `A rotation stops on it (--env-from-runner takes the runner's, --override-agent-settings this run's)`,
    );
  throw new ConfigError(
    'AGENT_SETTINGS_MISMATCH',
    `the running runner (pid ${runner.pid}, ${runner.exe}) reads other DD_* settings than this run, and they lead elsewhere: ${lines.join('; ')}`,
    "Nothing was enrolled and nothing was changed. Take the runner's values with --env-from-runner, " +
      "or keep this shell's and -c's with --override-agent-settings (the output lists what it overrides); " +
      'or unset the DD_* variables here that the runner does not share.',
    { outcomes: differences.map((d) => d.outcome), pid: runner.pid },
  );
}
