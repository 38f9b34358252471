import { hostname as osHostname } from 'node:os';
import type { AgentConfig } from './agent-config.js';

/** The hostname the agent resolves (config `hostname`, DD_HOSTNAME, else the OS): it must match the file or the agent re-enrolls. */
export function resolveHostname(config: AgentConfig): { hostname: string; source: string } {
  const configured = config.getString('hostname');
  if (configured) return { hostname: configured, source: config.sourceOf('hostname') };
  return { hostname: osHostname(), source: 'OS hostname' };
}
