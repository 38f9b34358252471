export { type AgentVersionChoice, resolveAgentVersion } from './agent-version.js';
export { predictReenroll } from './reenroll-prediction.js';
export { type HostResolution, resolveHost } from './resolve-host.js';
