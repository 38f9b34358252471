// Hot reload of the runner identity (docs/protocol.md §8): the watcher library and the ways to hand a
// loaded identity on. Used by `par-identity watch` and by runners written in TypeScript.

export { ApplyQueue, type ApplyStep } from './apply-queue.js';
export { type ChildExit, SupervisedChild } from './apply-child.js';
export { writeIdentityOutput } from './apply-output.js';
export { parseSignalName, type SignalTarget, sendSignal } from './apply-signal.js';
export { type HealthServer, parseListenAddress, startHealthServer } from './health-server.js';
export { eventToJson, type WatchEvent } from './watch-events.js';
export { type IdentityWatch, type WatchIdentityOptions, watchIdentity } from './watch-identity.js';
