// The programmatic API: `import { rotateIdentity, status, watchIdentity, ParError } from 'par-identity'`
// (package.json "exports" ".": dist/api.js, types in dist/types/api.d.ts). A thin layer beside the
// CLI (src/cli.ts): the options are checked here, then the same command modules the CLI runs do the
// work (src/api/commands.ts, src/api/watch.ts, loaded on first use). It never prints, never sets
// process.exitCode, never installs signal handlers and never changes process.env; it returns what
// `--json` prints and throws the error family of src/errors.ts. Core modules never import it.

import { checkOptions, SCHEMAS } from './api/options.js';
import type {
  AllNamespacesStatusResult,
  IdentityStatusResult,
  IdentityWatch,
  PodsStatusResult,
  RotateIdentityOptions,
  RotateParIdentityOptions,
  RotationResult,
  StatusOptions,
  StatusResult,
  WatchIdentityOptions,
} from './api/types.js';

export type * from './api/types.js';
export {
  ChildExitError,
  ConfigError,
  ConflictError,
  CredentialsRejectedError,
  ERROR_CODES,
  type ErrorCode,
  EnrollmentError,
  ExitCode,
  IdentityDecodeError,
  InterruptedError,
  KubernetesError,
  ParError,
  ReloadApplyError,
  RolloutError,
  StorageError,
  UsageError,
  VerificationError,
} from './errors.js';
export { VERSION } from './version.js';

/**
 * `par-identity rotate-identity`: enroll a new identity and replace the local identity file
 * atomically (or with `k8sSecret` the Secret of a runner installed with the Helm chart), verify it
 * online, optionally roll out. Resolves with the `--json` result; rejects with a ParError.
 */
export async function rotateIdentity(options: RotateIdentityOptions = {}): Promise<RotationResult> {
  const o = checkOptions('rotateIdentity', SCHEMAS.rotateIdentity, options);
  return (await import('./api/commands.js')).rotateIdentity(o);
}

/**
 * `par-identity rotate-par-identity`: enroll a new identity for the cluster agent and update its
 * identity Secret (resourceVersion-guarded, previous identity kept). Resolves with the `--json`
 * result; rejects with a ParError.
 */
export async function rotateParIdentity(options: RotateParIdentityOptions = {}): Promise<RotationResult> {
  const o = checkOptions('rotateParIdentity', SCHEMAS.rotateParIdentity, options);
  return (await import('./api/commands.js')).rotateParIdentity(o);
}

/**
 * `par-identity status`: where the identity is, what it is, whether the agent would keep it, and
 * with `verify` whether the server accepts it. Reads only. Resolves with the `--json` result;
 * rejects with a ParError (`IDENTITY_MISSING`, `SECRET_MISSING`, `VERIFICATION_FAILED`…).
 */
export async function status(options: StatusOptions & { allNamespaces: true }): Promise<AllNamespacesStatusResult>;
export async function status(options: StatusOptions & { pods: string | true }): Promise<PodsStatusResult>;
export async function status(options?: StatusOptions & { allNamespaces?: false; pods?: undefined }): Promise<IdentityStatusResult>;
export async function status(options?: StatusOptions): Promise<StatusResult>;
export async function status(options: StatusOptions = {}): Promise<StatusResult> {
  const o = checkOptions('status', SCHEMAS.status, options);
  return (await import('./api/commands.js')).status(o);
}

/**
 * `par-identity watch` as a library: follow the cluster agent's identity Secret and always have
 * the last valid identity at hand. Resolves once the config is read, the Secret located and the
 * watch started (rejects with a ParError when that fails); `ready` then resolves with the first
 * identity. Stop it with stop()/close(), the signal, or `await using`.
 */
export async function watchIdentity(options: WatchIdentityOptions = {}): Promise<IdentityWatch> {
  const o = checkOptions('watchIdentity', SCHEMAS.watchIdentity, options);
  return (await import('./api/watch.js')).startWatch(o);
}
