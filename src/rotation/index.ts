export { type ClusterAccess, type ClusterFlags, type ClusterSession, clusterAccess } from './cluster-session.js';
export { commandLine, shellQuote } from './command-line.js';
export type { CredentialFlags } from './enrollment-context.js';
export { type InspectOptions, runInspect } from './inspect.js';
export { ROTATION_STEPS, type RotationOptions, type RotationSpec, runRotation } from './pipeline.js';
export { DEFAULT_CFGPATH, loadTargetConfig, locateClusterSecret, resolveTarget, type TargetOptions, targetKindOf } from './resolve-target.js';
export { type RestoreOptions, runRestore } from './restore.js';
export { precheckRollout, type RolloutRequest, rolloutWorkload } from './rollout-step.js';
export type { CurrentIdentity, IdentityTarget, TargetKind } from './target.js';
