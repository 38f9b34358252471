export { AGENT_VERSION_FORMAT, type AgentVersionChoice, resolveAgentVersion } from './agent-version.js';
export { agentHostname, agentVersion, formatAgentVersion, type IpcEndpoint, type IpcSetup, ipcSetup } from './agent-ipc.js';
export { cloudProviderEnabled } from './cloud-metadata.js';
export { type HostProbes, systemProbes } from './host-probes.js';
export { runHostnameChain } from './hostname-chain.js';
export { hostnameProblem, isEc2DefaultHostname } from './hostname-validation.js';
export { DEFAULT_METADATA_URL, metadataBaseUrl } from './metadata-http.js';
export { predictReenroll, type StoredHostFacts } from './reenroll-prediction.js';
export { type HostResolution, type ResolveHostOptions, resolveHost } from './resolve-host.js';
