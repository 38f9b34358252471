import type { Io } from '../io.js';
import type { CommandResult } from '../output.js';
import { type RotationOptions, runRotation } from '../rotation/pipeline.js';

// Cluster agent: the shared identity Secret, guarded by its resourceVersion.

export type RotateParIdentityOptions = RotationOptions;

export function run(options: RotateParIdentityOptions, io: Io): Promise<CommandResult> {
  return runRotation({ command: 'rotate-par-identity', kind: 'cluster-secret', options }, io);
}
