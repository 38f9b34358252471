export { type ClusterAccess, type ClusterFlags, type ClusterSession, type ClusterTargetSession, clusterAccess, clusterTargetAccess } from './cluster-session.js';
export { commandLine, shellQuote } from './command-line.js';
export { DEFAULT_CFGPATH } from './options.js';
export { loadTargetConfig, locateClusterSecret, resolveTarget, targetKindOf } from './resolve-target.js';
export { precheckRollout, type RolloutRequest, rolloutWorkload } from './rollout-step.js';
export type { CurrentIdentity, IdentityTarget, TargetKind } from './target.js';
