// Hot reload of the runner identity (docs/protocol.md §8): the watcher library and the ways to hand a
// loaded identity on. Used by `par-identity watch` and by runners written in TypeScript.

export { ApplyQueue, type ApplyStep } from './apply-queue.js';
export { type ChildExit, SupervisedChild, type SupervisedChildOptions } from './apply-child.js';
export { writeIdentityOutput } from './apply-output.js';
export { parseSignalName, type SignalTarget, sendSignal } from './apply-signal.js';
export { type HealthServer, type HealthSource, parseListenAddress, startHealthServer } from './health-server.js';
export { changedFields, IdentityTracker, type TrackerDecision } from './identity-tracker.js';
export { DEFAULT_RELIST_INTERVAL_MS, InformerSupervisor, type SupervisorListener, type SupervisorOptions } from './informer-supervisor.js';
export { METRICS_CONTENT_TYPE, ReloadMetrics } from './reload-metrics.js';
export { fieldSelectorFor, type SecretInformer, type SecretInformerFactory, type SecretInformerHooks, secretInformerFactory } from './secret-informer.js';
export { type ChangedField, eventToJson, type ListReason, type WatchEvent, type WatchEventType } from './watch-events.js';
export { type IdentityWatch, type WatchEventMap, type WatchIdentityOptions, watchIdentity } from './watch-identity.js';
