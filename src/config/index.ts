export { type AgentConfig, loadAgentConfig, requireRunnerEnabled } from './agent-config.js';
export { type Credentials, resolveCredentials } from './credentials.js';
export { type Endpoint, resolveEndpoint } from './endpoint.js';
export { type IdentityPath, resolveIdentityPath } from './identity-path.js';
