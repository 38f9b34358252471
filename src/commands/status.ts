import type { Io } from '../io.js';
import type { CommandResult } from '../output.js';
import type { AllNamespacesStatusResult, PodsStatusResult, StatusResult } from '../results/status.js';
import type { StatusOptions } from '../cli/inspection-commands.js';
import { runStatus } from '../rotation/pipelines.js';
import { resolveTarget, targetKindOf } from '../session/resolve-target.js';

export function run(options: StatusOptions, io: Io): Promise<CommandResult<StatusResult>> {
  if (options.allNamespaces || options.pods) return fleetStatus(options, io);
  return runStatus(targetKindOf(options), options, io, resolveTarget);
}

/** The fleet views list Secrets and Pods through the Kubernetes client: loaded for them only. */
async function fleetStatus(options: StatusOptions, io: Io): Promise<CommandResult<AllNamespacesStatusResult | PodsStatusResult>> {
  const { runAllNamespacesStatus, runPodsStatus } = await import('../status/fleet-status.js');
  if (options.allNamespaces) return runAllNamespacesStatus(options, io);
  return runPodsStatus(targetKindOf(options), options.pods!, options, io);
}
