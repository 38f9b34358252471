import { open } from 'node:fs/promises';
import { FileTooLargeError, formatBytes, readHandleAtMost } from '../bounded-file.js';
import { ConfigError } from '../errors.js';
import { holdSecret } from '../secrets-held.js';
import type { AgentConfig } from './agent-config.js';
import { secretHandle } from './secrets-backend.js';

// Credentials never come from a flag value (argv is world-readable in /proc). Order: explicit
// file/stdin flags, then DD_API_KEY/DD_APP_KEY, then the agent config file, then a keychain profile.
// ENC[handle] values from env or config are resolved through the agent's secrets backend, as the
// agent does; a handle anywhere else (a key file, the keychain) is refused.

/** A key is a few dozen characters; a file far larger is not a key file (docs/security.md, bounds). */
const MAX_KEY_FILE_BYTES = 64 * 1024;

interface Credential {
  value: string;
  source: string;
}

export interface Credentials {
  apiKey: Credential;
  appKey?: Credential;
  /** The API key the agent itself reads (env or config): its hash must go into the identity. */
  agentApiKey?: Credential;
}

// exported for tests: the tests build sources of this shape
export interface CredentialSources {
  /** Key values handed over by a program (the API's apiKey/appKey options); never from argv. */
  apiKey?: string;
  appKey?: string;
  apiKeyFile?: string;
  appKeyFile?: string;
  readStdin: () => Promise<string>;
  keychain?: () => Promise<{ apiKey?: string; appKey?: string; profile: string } | undefined>;
}

function checkNotHandle(name: string, cred: Credential): Credential {
  if (secretHandle(cred.value) !== undefined) {
    throw new ConfigError(
      'SECRET_HANDLE_UNSUPPORTED',
      `${name} from ${cred.source} is an ENC[...] secret handle, which par-identity cannot resolve there`,
      'Configure secret_backend_command as the agent has it (handles in the agent config or DD_* are then resolved), ' +
        `or provide the key itself through --${name.replace('_', '-')}-file PATH (or - for stdin) ` +
        `or ${name === 'api_key' ? 'DD_API_KEY' : 'DD_APP_KEY'}; the handle was not sent anywhere.`,
    );
  }
  if (/\s/.test(cred.value)) {
    throw new ConfigError(
      'CREDENTIAL_FORMAT',
      `${name} from ${cred.source} contains whitespace`,
      'Store the key alone, on one line, with no spaces.',
    );
  }
  return cred;
}

async function fromFlag(
  path: string | undefined,
  label: string,
  stdinLines: () => Promise<string[]>,
  index: number,
): Promise<Credential | undefined> {
  if (!path) return undefined;
  if (path === '-') {
    const lines = await stdinLines();
    const value = lines[index]?.trim();
    if (!value)
      throw new ConfigError('CREDENTIAL_MISSING', `no ${label} on standard input`, `Pipe the ${label} on its own line into par-identity.`);
    return { value, source: 'stdin' };
  }
  let text: string;
  try {
    const handle = await open(path, 'r');
    try {
      text = (await readHandleAtMost(handle, MAX_KEY_FILE_BYTES)).toString('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (err instanceof FileTooLargeError) {
      throw new ConfigError(
        'CREDENTIAL_FORMAT',
        `the ${label} file ${path} is ${err.size} bytes or more: a key file holds one key (at most ${formatBytes(MAX_KEY_FILE_BYTES)} read)`,
        `Nothing was read from it. Write the ${label} alone into ${path}.`,
      );
    }
    const code = (err as NodeJS.ErrnoException).code;
    const flag = label === 'API key' ? '--api-key-file' : '--app-key-file';
    if (code === 'ENOENT' || code === 'ENAMETOOLONG') {
      // A value that names no file may be the key itself, passed where the path belongs: never echo it.
      throw new ConfigError(
        'CREDENTIAL_UNREADABLE',
        `the ${label} file given with ${flag} does not exist (the value, ${path.length} characters long, is not printed in case it is the key itself): ${code}`,
        `Pass the path of a file holding the ${label}, or - to read it from stdin. ` +
          'If you passed the key itself, it is now in your shell history and process list: consider rotating it.',
        { flag, valueLength: path.length },
      );
    }
    throw new ConfigError(
      'CREDENTIAL_UNREADABLE',
      `cannot read the ${label} file ${path}: ${code ?? err}`,
      'Check the path and its permissions.',
    );
  }
  const value = text.trim();
  if (!value) throw new ConfigError('CREDENTIAL_MISSING', `the ${label} file ${path} is empty`, `Write the ${label} into ${path}.`);
  return { value, source: `file ${path}` };
}

function fromValue(value: string | undefined, label: string, option: string): Credential | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (!trimmed)
    throw new ConfigError(
      'CREDENTIAL_MISSING',
      `the ${option} option is empty`,
      `Pass the ${label} itself as ${option}, or leave ${option} out to use the other sources.`,
    );
  return { value: trimmed, source: `the ${option} option` };
}

function fromConfig(config: AgentConfig, key: 'api_key' | 'app_key'): Credential | undefined {
  const value = config.getString(key);
  return value ? { value, source: config.sourceOf(key) } : undefined;
}

/**
 * The agent's keys as the config resolved them (ENC[] handles in one backend run at load, agent-config.ts).
 * A handle still there means no backend is configured (refused where used), or the run failed (thrown here).
 */
function fromConfigResolved(config: AgentConfig, keys: ('api_key' | 'app_key')[]): Partial<Record<'api_key' | 'app_key', Credential>> {
  const found: Partial<Record<'api_key' | 'app_key', Credential>> = {};
  for (const key of keys) {
    const cred = fromConfig(config, key);
    if (!cred) continue;
    if (config.secretsFailure && secretHandle(cred.value) !== undefined) throw config.secretsFailure;
    found[key] = cred;
  }
  return found;
}

/** The API key the agent itself reads (env, else config), secrets resolved: what its api_key_hash is computed on. */
export function readAgentApiKey(config: AgentConfig): Credential | undefined {
  const cred = fromConfigResolved(config, ['api_key']).api_key;
  holdSecret('API key', cred?.value);
  return cred && secretHandle(cred.value) === undefined ? cred : undefined;
}

export async function resolveCredentials(config: AgentConfig, sources: CredentialSources, needAppKey: boolean): Promise<Credentials> {
  let stdinCache: string[] | undefined;
  const stdinLines = async () => {
    stdinCache ??= (await sources.readStdin()).split(/\r?\n/);
    return stdinCache;
  };
  const bothStdin = sources.apiKeyFile === '-' && sources.appKeyFile === '-';
  const fromAgent = fromConfigResolved(config, ['api_key', 'app_key']);
  const agentApiKey = fromAgent.api_key;
  let apiKey =
    fromValue(sources.apiKey, 'API key', 'apiKey') ?? (await fromFlag(sources.apiKeyFile, 'API key', stdinLines, 0)) ?? agentApiKey;
  let appKey =
    fromValue(sources.appKey, 'application key', 'appKey') ??
    (await fromFlag(sources.appKeyFile, 'application key', stdinLines, bothStdin ? 1 : 0)) ??
    fromAgent.app_key;
  if ((!apiKey || (needAppKey && !appKey)) && sources.keychain) {
    const stored = await sources.keychain();
    if (stored?.apiKey && !apiKey) apiKey = { value: stored.apiKey, source: `keychain profile ${stored.profile}` };
    if (stored?.appKey && !appKey) appKey = { value: stored.appKey, source: `keychain profile ${stored.profile}` };
  }
  if (!apiKey) {
    throw new ConfigError(
      'CREDENTIAL_MISSING',
      'no API key found',
      'Provide it with --api-key-file PATH (or - for stdin), DD_API_KEY, api_key in the agent config, or `par-identity credentials set`.',
    );
  }
  if (needAppKey && !appKey) {
    throw new ConfigError(
      'CREDENTIAL_MISSING',
      'no application key found (owned enrollment needs one)',
      'Provide it with --app-key-file PATH (or - for stdin), DD_APP_KEY or app_key in the agent config, ' +
        'or set private_action_runner.api_key_only_enrollment: true.',
    );
  }
  // Held from here on: a server repeating them in an answer gets them masked (docs/security.md).
  holdSecret('API key', apiKey.value);
  holdSecret('application key', appKey?.value);
  holdSecret('API key', agentApiKey?.value);
  const result: Credentials = { apiKey: checkNotHandle('api_key', apiKey) };
  if (needAppKey && appKey) result.appKey = checkNotHandle('app_key', appKey);
  if (agentApiKey && secretHandle(agentApiKey.value) === undefined) result.agentApiKey = agentApiKey;
  return result;
}
