import type { Io } from '../io.js';
import type { CommandResult } from '../output.js';
import type { RotationResult } from '../results/rotation.js';
import type { RotateParIdentityOptions } from '../cli/rotation-commands.js';
import { runRotation } from '../rotation/pipelines.js';
import { resolveTarget } from '../session/resolve-target.js';

// Cluster agent: the shared identity Secret, guarded by its resourceVersion.

export function run(options: RotateParIdentityOptions, io: Io): Promise<CommandResult<RotationResult>> {
  return runRotation('rotate-par-identity', 'cluster-secret', options, io, resolveTarget);
}
