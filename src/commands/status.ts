import type { Io } from '../io.js';
import type { CommandResult } from '../output.js';
import { type InspectOptions, runInspect, targetKindOf } from '../rotation/index.js';

export interface StatusOptions extends InspectOptions {
  /** The cluster agent's Secret instead of the file. */
  secret?: boolean;
}

export function run(options: StatusOptions, io: Io): Promise<CommandResult> {
  return runInspect(targetKindOf(options), options, io);
}
