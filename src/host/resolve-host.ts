import type { AgentConfig } from '../config/agent-config.js';
import { ConfigError } from '../errors.js';
import { agentHostname, type IpcOptions, ipcSetup } from './agent-ipc.js';
import type { ContainerLimits } from './container-hostname.js';
import { runHostnameChain } from './hostname-chain.js';
import { type HostProbes, systemProbes } from './host-probes.js';
import { hostnameProblem } from './hostname-validation.js';
import { metadataBaseUrl } from './metadata-http.js';

// The hostname the runner will compare with the identity at its next start (docs/protocol.md §4): an
// explicit override, else what the running agent answers on IPC, else the agent's own chain.

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
}

export async function resolveHost(config: AgentConfig, options: ResolveHostOptions): Promise<HostResolution> {
  if (options.override !== undefined) {
    const problem = hostnameProblem(options.override);
    if (problem) {
      throw new ConfigError('HOSTNAME_INVALID', `--hostname is not a hostname the agent accepts: ${problem}`, 'Give the hostname the agent reports (`datadog-agent hostname`), or drop --hostname to resolve it as the agent does.');
    }
    return { hostname: options.override, source: '--hostname', notes: [] };
  }
  const notes: string[] = [];
  const setup = await ipcSetup(config);
  if (setup.ok) {
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
  return { hostname: chain.hostname, source: chain.source, notes };
}
