import type { Io } from '../io.js';
import type { CommandResult } from '../output.js';
import { type RotationOptions, runRotation } from '../rotation/pipeline.js';

// Standalone / node runner: the local identity file, or with --k8s-secret the Secret of a runner
// installed with the Helm chart. Same pipeline, different target.

export type RotateIdentityOptions = RotationOptions;

export function run(options: RotateIdentityOptions, io: Io): Promise<CommandResult> {
  return runRotation({ command: 'rotate-identity', kind: options.k8sSecret ? 'helm-secret' : 'file', options }, io);
}
