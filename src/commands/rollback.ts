import type { Io } from '../io.js';
import type { CommandResult } from '../output.js';
import type { RollbackResult } from '../results/rollback.js';
import type { RollbackOptions } from '../cli/inspection-commands.js';
import { runRollback } from '../rotation/pipelines.js';
import { resolveTarget, targetKindOf } from '../session/resolve-target.js';

export function run(options: RollbackOptions, io: Io): Promise<CommandResult<RollbackResult>> {
  return runRollback(targetKindOf(options), options, io, resolveTarget);
}
