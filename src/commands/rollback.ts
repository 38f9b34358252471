import type { Io } from '../io.js';
import type { CommandResult } from '../output.js';
import { targetKindOf } from '../rotation/resolve-target.js';
import { type RestoreOptions, runRestore } from '../rotation/restore.js';

export interface RollbackOptions extends RestoreOptions {
  /** The cluster agent's Secret instead of the file. */
  secret?: boolean;
}

export function run(options: RollbackOptions, io: Io): Promise<CommandResult> {
  return runRestore(targetKindOf(options), options, io);
}
