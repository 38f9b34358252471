import { type AgentConfig, type IdentityPath, loadAgentConfig, resolveIdentityPath } from '../config/index.js';
import type { Io } from '../io.js';
import type { Reporter } from '../output.js';
import { sweepInterruptedWrites } from '../storage/index.js';

export interface LocalTargetOptions {
  cfgPath: string;
  extraCfg: string[];
  identityFile?: string;
}

/** Config plus the identity file it points at; also sweeps temp files a crashed run left behind. */
export async function resolveLocalTarget(options: LocalTargetOptions, io: Io, report: Reporter): Promise<{ config: AgentConfig; target: IdentityPath }> {
  const config = await loadAgentConfig({ cfgPath: options.cfgPath, extraFiles: options.extraCfg, env: io.env });
  report.info(config.file ? `config: ${config.files.join(', ')}` : `config: no datadog.yaml in ${options.cfgPath}; environment only`);
  const target = resolveIdentityPath(config, options.identityFile);
  report.info(`identity file: ${target.path} (${target.source})`);
  const swept = await sweepInterruptedWrites(target.path);
  if (swept.removed.length) report.warn(`removed ${swept.removed.length} temporary file(s) left by an interrupted run: ${swept.removed.join(', ')}`);
  for (const kept of swept.recovered) report.warn(`an interrupted run left an identity found nowhere else; kept as ${kept} (see \`par-identity status\`)`);
  return { config, target };
}
