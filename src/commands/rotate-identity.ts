import type { Io } from '../io.js';
import type { CommandResult } from '../output.js';
import type { RotationResult } from '../results/rotation.js';
import type { RotateIdentityOptions } from '../cli/rotation-commands.js';
import { runRotation } from '../rotation/pipelines.js';
import { resolveTarget } from '../session/resolve-target.js';

// Standalone / node runner: the local identity file, or with --k8s-secret the Secret of a runner
// installed with the Helm chart. Same pipeline, different target.

export function run(options: RotateIdentityOptions, io: Io): Promise<CommandResult<RotationResult>> {
  return runRotation('rotate-identity', options.k8sSecret ? 'helm-secret' : 'file', options, io, resolveTarget);
}
