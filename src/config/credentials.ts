import { readFile } from 'node:fs/promises';
import { ConfigError } from '../errors.js';
import type { AgentConfig } from './agent-config.js';

// Credentials never come from a flag value (argv is world-readable in /proc). Order: explicit
// file/stdin flags, then DD_API_KEY/DD_APP_KEY, then the agent config file, then a keychain profile.

export interface Credential {
  value: string;
  source: string;
}

export interface Credentials {
  apiKey: Credential;
  appKey?: Credential;
  /** The API key the agent itself reads (env or config): its hash must go into the identity. */
  agentApiKey?: Credential;
}

export interface CredentialSources {
  apiKeyFile?: string;
  appKeyFile?: string;
  readStdin: () => Promise<string>;
  keychain?: () => Promise<{ apiKey?: string; appKey?: string; profile: string } | undefined>;
}

const SECRET_HANDLE = /^ENC\[.*\]$/s;

function checkNotHandle(name: string, cred: Credential): Credential {
  if (SECRET_HANDLE.test(cred.value)) {
    throw new ConfigError(
      'SECRET_HANDLE_UNSUPPORTED',
      `${name} from ${cred.source} is an ENC[...] secret handle, which par-identity cannot resolve`,
      `Provide the key itself through --${name.replace('_', '-')}-file PATH (or - for stdin) or ${name === 'api_key' ? 'DD_API_KEY' : 'DD_APP_KEY'}; the handle was not sent anywhere.`,
    );
  }
  if (/\s/.test(cred.value)) {
    throw new ConfigError('CREDENTIAL_FORMAT', `${name} from ${cred.source} contains whitespace`, 'Store the key alone, on one line, with no spaces.');
  }
  return cred;
}

async function fromFlag(path: string | undefined, label: string, stdinLines: () => Promise<string[]>, index: number): Promise<Credential | undefined> {
  if (!path) return undefined;
  if (path === '-') {
    const lines = await stdinLines();
    const value = lines[index]?.trim();
    if (!value) throw new ConfigError('CREDENTIAL_MISSING', `no ${label} on standard input`, `Pipe the ${label} on its own line into par-identity.`);
    return { value, source: 'stdin' };
  }
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const flag = label === 'API key' ? '--api-key-file' : '--app-key-file';
    if (code === 'ENOENT' || code === 'ENAMETOOLONG') {
      // A value that names no file may be the key itself, passed where the path belongs: never echo it.
      throw new ConfigError(
        'CREDENTIAL_UNREADABLE',
        `the ${label} file given with ${flag} does not exist (the value, ${path.length} characters long, is not printed in case it is the key itself): ${code}`,
        `Pass the path of a file holding the ${label}, or - to read it from stdin. If you passed the key itself, it is now in your shell history and process list: consider rotating it.`,
        { flag, valueLength: path.length },
      );
    }
    throw new ConfigError('CREDENTIAL_UNREADABLE', `cannot read the ${label} file ${path}: ${code ?? err}`, 'Check the path and its permissions.');
  }
  const value = text.trim();
  if (!value) throw new ConfigError('CREDENTIAL_MISSING', `the ${label} file ${path} is empty`, `Write the ${label} into ${path}.`);
  return { value, source: `file ${path}` };
}

function fromConfig(config: AgentConfig, key: 'api_key' | 'app_key'): Credential | undefined {
  const value = config.getString(key);
  return value ? { value, source: config.sourceOf(key) } : undefined;
}

export async function resolveCredentials(config: AgentConfig, sources: CredentialSources, needAppKey: boolean): Promise<Credentials> {
  let stdinCache: string[] | undefined;
  const stdinLines = async () => {
    stdinCache ??= (await sources.readStdin()).split(/\r?\n/);
    return stdinCache;
  };
  const bothStdin = sources.apiKeyFile === '-' && sources.appKeyFile === '-';
  const agentApiKey = fromConfig(config, 'api_key');
  let apiKey = (await fromFlag(sources.apiKeyFile, 'API key', stdinLines, 0)) ?? agentApiKey;
  let appKey = (await fromFlag(sources.appKeyFile, 'application key', stdinLines, bothStdin ? 1 : 0)) ?? fromConfig(config, 'app_key');
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
      'Provide it with --app-key-file PATH (or - for stdin), DD_APP_KEY or app_key in the agent config, or set private_action_runner.api_key_only_enrollment: true.',
    );
  }
  const result: Credentials = { apiKey: checkNotHandle('api_key', apiKey) };
  if (needAppKey && appKey) result.appKey = checkNotHandle('app_key', appKey);
  if (agentApiKey && !SECRET_HANDLE.test(agentApiKey.value)) result.agentApiKey = agentApiKey;
  return result;
}
