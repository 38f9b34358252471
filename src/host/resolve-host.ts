import type { AgentConfig } from '../config/agent-config.js';
import { ConfigError } from '../errors.js';
import type { Deadline } from '../time/index.js';
import { agentHostname, agentVersion, type IpcOptions, ipcSetup } from './agent-ipc.js';
import type { AgentVersionHint } from './cluster-name.js';
import type { ContainerLimits } from './container-hostname.js';
import { runHostnameChain } from './hostname-chain.js';
import { type HostProbes, systemProbes } from './host-probes.js';
import { hostnameProblem } from './hostname-validation.js';
import { underDeadline } from './lookup-scope.js';
import { metadataBaseUrl } from './metadata-http.js';

// The hostname the runner will compare with the identity at its next start (docs/protocol.md §4): an
// explicit override, else what the running agent answers on IPC, else the agent's own chain. In split
// mode the runner's bootstrap resolves the hostname with its own chain (docs/protocol.md §4, "Which
// hostname"), so the core agent's IPC answer is not the one compared.

export interface HostResolution {
  hostname: string;
  /** Human label: `--hostname`, `agent IPC`, `config hostname (…)`, `EC2 instance id`, … */
  source: string;
  /** Why earlier sources were not used (IPC unavailable, providers skipped); never secret. */
  notes: string[];
}

interface ResolveHostOptions {
  env: NodeJS.ProcessEnv;
  /** --hostname */
  override?: string;
  probes?: HostProbes;
  ipc?: IpcOptions;
  /** Deadlines of the docker and kubelet lookups (tests shorten them). */
  containerLimits?: ContainerLimits;
  /** --agent-version: chooses the chain's cluster_name rule when the agent does not say its version. */
  agentVersion?: string;
  /** The command's deadline (--timeout): every step of the lookup is cut to what is left of it (lookup-scope.ts). */
  deadline?: Deadline;
}

/** private_action_runner.enabled and .split_enabled (the agent's launch gate of par-control). */
function splitMode(config: AgentConfig): boolean {
  return config.getBool('private_action_runner.enabled') && config.getBool('private_action_runner.split_enabled');
}

export async function resolveHost(config: AgentConfig, options: ResolveHostOptions): Promise<HostResolution> {
  const { deadline } = options;
  if (options.override !== undefined || !deadline) return lookUp(config, options);
  const found = await underDeadline(deadline, () => lookUp(config, options));
  // A step cut by the deadline looks like a provider that did not answer, and the chain would go on to
  // the next one: a hostname found that way may not be the agent's. Past the deadline, none is taken.
  if (deadline.expired()) throw lookupOutOfTime(deadline, found);
  return found;
}

function lookupOutOfTime(deadline: Deadline, found: HostResolution): ConfigError {
  return new ConfigError(
    'HOSTNAME_UNRESOLVED',
    `the hostname lookup did not finish before --timeout (${deadline.describeLength()}): a step cut short could make it another hostname than the agent's`,
    'Nothing was enrolled or changed. Run again with a longer --timeout, or pass --hostname with what `datadog-agent hostname` prints.',
    { tried: found.notes },
  );
}

async function lookUp(config: AgentConfig, options: ResolveHostOptions): Promise<HostResolution> {
  if (options.override !== undefined) {
    const problem = hostnameProblem(options.override);
    if (problem) {
      throw new ConfigError(
        'HOSTNAME_INVALID',
        `--hostname is not a hostname the agent accepts: ${problem}`,
        'Give the hostname the agent reports (`datadog-agent hostname`), or drop --hostname to resolve it as the agent does.',
      );
    }
    return { hostname: options.override, source: '--hostname', notes: [] };
  }
  const notes: string[] = [];
  const split = splitMode(config);
  const setup = await ipcSetup(config);
  // The version that chooses the chain's cluster_name rule: the agent's own (IPC), else --agent-version, else none (the newest rule).
  let version: AgentVersionHint | undefined =
    options.agentVersion === undefined ? undefined : { version: options.agentVersion, source: '--agent-version' };
  if (split) {
    notes.push(
      "split mode (private_action_runner.split_enabled): the runner resolves the hostname with its own chain, not the core agent's IPC answer",
    );
    if (setup.ok) {
      const asked = await agentVersion(setup.endpoint, { ...options.ipc, tries: 1 });
      if (asked.ok) version = { version: asked.version, source: 'agent IPC' };
    }
  } else if (setup.ok) {
    const asked = await agentHostname(setup.endpoint, options.ipc);
    if (asked.ok) return { hostname: asked.hostname, source: 'agent IPC', notes };
    notes.push(`agent IPC on ${setup.endpoint.host}:${setup.endpoint.port}: ${asked.reason}`);
  } else notes.push(`agent IPC not asked: ${setup.reason}`);

  const chain = await runHostnameChain({
    config,
    env: options.env,
    probes: options.probes ?? systemProbes(options.env),
    metadataUrl: metadataBaseUrl(options.env),
    ...(options.containerLimits ? { containerLimits: options.containerLimits } : {}),
    ...(version ? { agentVersion: version } : {}),
  });
  notes.push(...chain.skipped);
  if ('failed' in chain) {
    throw new ConfigError(
      'HOSTNAME_UNRESOLVED',
      'the hostname the agent would use cannot be determined (agent not reachable on IPC, and no provider of its chain gave one)',
      'Nothing was changed. Set `hostname` in the agent config (or DD_HOSTNAME), or pass --hostname with what `datadog-agent hostname` prints.',
      { tried: notes },
    );
  }
  return { hostname: chain.hostname, source: split ? `${chain.source}; split mode: the runner's own chain` : chain.source, notes };
}
