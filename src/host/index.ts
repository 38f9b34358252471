export { type AgentVersionChoice, resolveAgentVersion } from './agent-version.js';
export { formatAgentVersion } from './agent-ipc.js';
export { type HostProbes, systemProbes } from './host-probes.js';
export { hostnameProblem } from './hostname-validation.js';
export { predictReenroll } from './reenroll-prediction.js';
export { type HostResolution, resolveHost } from './resolve-host.js';
