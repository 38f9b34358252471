import type { AgentConfig } from '../config/agent-config.js';
import { ConfigError } from '../errors.js';
import { agentVersion, type IpcOptions, ipcSetup } from './agent-ipc.js';
import type { AgentVersionChoice } from '../results/rotation.js';
import { AGENT_VERSION_FORMAT } from './agent-version-format.js';

// The X-Datadog-OnPrem-Version the Go runner would send: the running agent's own version (asked on
// IPC), else what the operator says (--agent-version), else this tool's version. The server uses it
// to reason about runner capabilities, so the source is always reported.

export type { AgentVersionChoice };

export async function resolveAgentVersion(
  config: AgentConfig,
  options: { flag?: string; toolVersion: string; ipc?: IpcOptions },
): Promise<AgentVersionChoice> {
  if (options.flag !== undefined && !AGENT_VERSION_FORMAT.test(options.flag)) {
    throw new ConfigError(
      'AGENT_VERSION_INVALID',
      `--agent-version ${JSON.stringify(options.flag.slice(0, 64))} is not an agent version`,
      'Give it as the agent prints it, e.g. 7.66.0 or 7.66.0+commit.abc1234.',
    );
  }
  const setup = await ipcSetup(config);
  let note: string;
  if (setup.ok) {
    const asked = await agentVersion(setup.endpoint, options.ipc);
    if (asked.ok) return { version: asked.version, source: 'agent IPC' };
    note = `agent IPC: ${asked.reason}`;
  } else note = `agent IPC not asked: ${setup.reason}`;
  if (options.flag !== undefined) return { version: options.flag, source: '--agent-version', note };
  return { version: options.toolVersion, source: 'par-identity version', note };
}
