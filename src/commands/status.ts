import type { Io } from '../io.js';
import type { CommandResult } from '../output.js';
import { type InspectOptions, runAllNamespacesStatus, runInspect, runPodsStatus, targetKindOf } from '../rotation/index.js';

export interface StatusOptions extends InspectOptions {
  /** The cluster agent's Secret instead of the file. */
  secret?: boolean;
  /** Every identity Secret the token can list, one row each. */
  allNamespaces?: boolean;
  /** Which Pod of the workload runs which identity (true: the cluster agent's Deployment). */
  pods?: string | true;
}

export function run(options: StatusOptions, io: Io): Promise<CommandResult> {
  if (options.allNamespaces) return runAllNamespacesStatus(options, io);
  if (options.pods) return runPodsStatus(targetKindOf(options), options.pods, options, io);
  return runInspect(targetKindOf(options), options, io);
}
