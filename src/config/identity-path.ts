import { dirname, join } from 'node:path';
import { ConfigError } from '../errors.js';
import type { AgentConfig } from './agent-config.js';

// exported for tests: the test holds the name to the agent's
export const IDENTITY_FILE_NAME = 'privateactionrunner_private_identity.json';

export interface IdentityPath {
  path: string;
  source: string;
}

/** docs/protocol.md §5 order; unlike the Go agent we never fall back to the current directory. */
export function resolveIdentityPath(config: AgentConfig, explicit?: string): IdentityPath {
  if (explicit) return { path: explicit, source: '--identity-file' };
  const configured = config.getString('private_action_runner.identity_file_path');
  if (configured) return { path: configured, source: config.sourceOf('private_action_runner.identity_file_path') };
  const authToken = config.getString('auth_token_file_path');
  if (authToken)
    return {
      path: join(dirname(authToken), IDENTITY_FILE_NAME),
      source: `next to auth_token_file_path (${config.sourceOf('auth_token_file_path')})`,
    };
  if (config.file) return { path: join(dirname(config.file), IDENTITY_FILE_NAME), source: `next to ${config.file}` };
  throw new ConfigError(
    'IDENTITY_PATH_UNRESOLVED',
    'no config file was loaded and no identity file path is configured',
    'Pass --identity-file PATH (or -c DIR pointing at the agent config); par-identity never writes an identity into the current directory by accident.',
  );
}
