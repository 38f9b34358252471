export { type AgentConfig, loadAgentConfig, requireRunnerEnabled } from './agent-config.js';
export { CONFIG_KEYS, envNameOf } from './config-keys.js';
export { type Credential, type Credentials, type CredentialSources, resolveCredentials } from './credentials.js';
export { DEFAULT_SITE, type Endpoint, resolveEndpoint, siteFromHost } from './endpoint.js';
export { IDENTITY_FILE_NAME, type IdentityPath, resolveIdentityPath } from './identity-path.js';
