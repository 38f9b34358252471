import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type AgentConfig, loadAgentConfig } from '../../src/config/agent-config.js';
import { type CredentialSources, resolveCredentials } from '../../src/config/credentials.js';
import { configError } from '../fixtures/expect-errors.js';

let dir: string;
let configFile: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-creds-'));
  configFile = join(dir, 'datadog.yaml');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function config(yaml: string | undefined, env: NodeJS.ProcessEnv = {}): Promise<AgentConfig> {
  if (yaml !== undefined) await writeFile(configFile, yaml);
  return loadAgentConfig({ cfgPath: dir, env });
}

async function keyFile(name: string, content: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

const noStdin = () => Promise.reject(new Error('stdin must not be read'));

describe('order: file flag > env > config file > keychain', () => {
  it('the --api-key-file flag wins; the agent key (env) is recorded separately', async () => {
    const cfg = await config('api_key: file-api\napp_key: file-app\n', { DD_API_KEY: 'env-api', DD_APP_KEY: 'env-app' });
    const apiPath = await keyFile('api', 'flag-api\n');
    const appPath = await keyFile('app', '  flag-app  \n');
    const keychain = vi.fn(async () => ({ apiKey: 'kc-api', appKey: 'kc-app', profile: 'p' }));
    const creds = await resolveCredentials(cfg, { apiKeyFile: apiPath, appKeyFile: appPath, readStdin: noStdin, keychain }, true);
    expect(creds).toEqual({
      apiKey: { value: 'flag-api', source: `file ${apiPath}` },
      appKey: { value: 'flag-app', source: `file ${appPath}` },
      agentApiKey: { value: 'env-api', source: 'env DD_API_KEY' },
    });
    expect(keychain).not.toHaveBeenCalled();
  });

  it('without flags, DD_API_KEY / DD_APP_KEY win over the config file', async () => {
    const cfg = await config('api_key: file-api\napp_key: file-app\n', { DD_API_KEY: 'env-api', DD_APP_KEY: 'env-app' });
    const creds = await resolveCredentials(cfg, { readStdin: noStdin }, true);
    expect(creds).toEqual({
      apiKey: { value: 'env-api', source: 'env DD_API_KEY' },
      appKey: { value: 'env-app', source: 'env DD_APP_KEY' },
      agentApiKey: { value: 'env-api', source: 'env DD_API_KEY' },
    });
  });

  it('without flags or env, the config file is used and named', async () => {
    const cfg = await config('api_key: file-api\napp_key: file-app\n');
    const creds = await resolveCredentials(cfg, { readStdin: noStdin }, true);
    expect(creds).toEqual({
      apiKey: { value: 'file-api', source: configFile },
      appKey: { value: 'file-app', source: configFile },
      agentApiKey: { value: 'file-api', source: configFile },
    });
  });

  it('the keychain is the last resort, and fills only what is missing', async () => {
    const cfg = await config('api_key: file-api\n');
    const keychain = vi.fn(async () => ({ apiKey: 'kc-api', appKey: 'kc-app', profile: 'work' }));
    const creds = await resolveCredentials(cfg, { readStdin: noStdin, keychain }, true);
    expect(keychain).toHaveBeenCalledTimes(1);
    expect(creds).toEqual({
      apiKey: { value: 'file-api', source: configFile },
      appKey: { value: 'kc-app', source: 'keychain profile work' },
      agentApiKey: { value: 'file-api', source: configFile },
    });
  });

  it('both keys from the keychain; no agent key is recorded then', async () => {
    const cfg = await config(undefined);
    const creds = await resolveCredentials(
      cfg,
      { readStdin: noStdin, keychain: async () => ({ apiKey: 'kc-api', appKey: 'kc-app', profile: 'default' }) },
      true,
    );
    expect(creds).toEqual({
      apiKey: { value: 'kc-api', source: 'keychain profile default' },
      appKey: { value: 'kc-app', source: 'keychain profile default' },
    });
  });

  it('the keychain is not consulted when nothing is missing', async () => {
    const cfg = await config(undefined, { DD_API_KEY: 'env-api' });
    const keychain = vi.fn(async () => undefined);
    const creds = await resolveCredentials(cfg, { readStdin: noStdin, keychain }, false);
    expect(keychain).not.toHaveBeenCalled();
    expect(creds.apiKey).toEqual({ value: 'env-api', source: 'env DD_API_KEY' });
  });
});

describe('key values from a program (the API): first of all sources', () => {
  it('apiKey/appKey win over files, env and config; the agent key is still recorded', async () => {
    const cfg = await config('api_key: file-api\napp_key: file-app\n', { DD_API_KEY: 'env-api', DD_APP_KEY: 'env-app' });
    const keychain = vi.fn(async () => ({ apiKey: 'kc-api', appKey: 'kc-app', profile: 'p' }));
    const creds = await resolveCredentials(cfg, { apiKey: ' value-api\n', appKey: 'value-app', readStdin: noStdin, keychain }, true);
    expect(creds).toEqual({
      apiKey: { value: 'value-api', source: 'the apiKey option' },
      appKey: { value: 'value-app', source: 'the appKey option' },
      agentApiKey: { value: 'env-api', source: 'env DD_API_KEY' },
    });
    expect(keychain).not.toHaveBeenCalled();
  });

  it('an empty value is CREDENTIAL_MISSING, and a value with inner whitespace CREDENTIAL_FORMAT, never echoed', async () => {
    const cfg = await config(undefined);
    expect((await configError(resolveCredentials(cfg, { apiKey: '  ', readStdin: noStdin }, false))).code).toBe('CREDENTIAL_MISSING');
    const err = await configError(resolveCredentials(cfg, { apiKey: 'abc def', readStdin: noStdin }, false));
    expect(err.code).toBe('CREDENTIAL_FORMAT');
    expect(`${err.message} ${err.hint}`).not.toContain('abc def');
  });
});

describe('"-" reads standard input', () => {
  it('a key file past 64 KiB is refused unread beyond that (CREDENTIAL_FORMAT), a key from a pipe is read', async () => {
    const cfg = await config(undefined);
    const big = await keyFile('big', `${'k'.repeat(64 * 1024)}\n`);
    const err = await configError(resolveCredentials(cfg, { apiKeyFile: big, readStdin: noStdin }, false));
    expect(err).toMatchObject({ code: 'CREDENTIAL_FORMAT', exitCode: 3 });
    expect(err.message).toBe(`the API key file ${big} is ${64 * 1024 + 1} bytes or more: a key file holds one key (at most 64 KiB read)`);
    // `--api-key-file <(pass show dd/api)`: a pipe, with no size and no offsets.
    const fifoDir = await mkdtemp(join(tmpdir(), 'par-fifo-'));
    const fifo = join(fifoDir, 'key');
    execFileSync('mkfifo', [fifo]);
    const writer = spawn('sh', ['-c', 'printf "piped-key\\n" > "$0"', fifo], { stdio: 'ignore' });
    try {
      const creds = await resolveCredentials(cfg, { apiKeyFile: fifo, readStdin: noStdin }, false);
      expect(creds.apiKey).toEqual({ value: 'piped-key', source: `file ${fifo}` });
    } finally {
      writer.kill();
      await rm(fifoDir, { recursive: true, force: true });
    }
  });

  it('one flag "-": the first line, trimmed (CRLF tolerated)', async () => {
    const cfg = await config(undefined, { DD_API_KEY: 'env-api' });
    const readStdin = vi.fn(async () => ' stdin-api \r\nignored\n');
    const creds = await resolveCredentials(cfg, { apiKeyFile: '-', readStdin }, false);
    expect(creds.apiKey).toEqual({ value: 'stdin-api', source: 'stdin' });
    expect(creds.agentApiKey).toEqual({ value: 'env-api', source: 'env DD_API_KEY' });
    expect(readStdin).toHaveBeenCalledTimes(1);
  });

  it('both flags "-": API key on line 1, application key on line 2, stdin read once', async () => {
    const cfg = await config(undefined);
    const readStdin = vi.fn(async () => 'stdin-api\nstdin-app\n');
    const creds = await resolveCredentials(cfg, { apiKeyFile: '-', appKeyFile: '-', readStdin }, true);
    expect(creds.apiKey).toEqual({ value: 'stdin-api', source: 'stdin' });
    expect(creds.appKey).toEqual({ value: 'stdin-app', source: 'stdin' });
    expect(readStdin).toHaveBeenCalledTimes(1);
  });

  it('only the application key from "-": it is line 1', async () => {
    const cfg = await config(undefined, { DD_API_KEY: 'env-api' });
    const creds = await resolveCredentials(cfg, { appKeyFile: '-', readStdin: async () => 'stdin-app\n' }, true);
    expect(creds.appKey).toEqual({ value: 'stdin-app', source: 'stdin' });
    expect(creds.apiKey).toEqual({ value: 'env-api', source: 'env DD_API_KEY' });
  });

  it.each([
    ['empty stdin', { apiKeyFile: '-' }, '', 'no API key on standard input'],
    ['blank first line', { apiKeyFile: '-' }, '\nkey\n', 'no API key on standard input'],
    ['both "-" but one line', { apiKeyFile: '-', appKeyFile: '-' }, 'only-one\n', 'no application key on standard input'],
  ])('%s → CREDENTIAL_MISSING', async (_name, flags, stdin, message) => {
    const cfg = await config(undefined);
    const err = await configError(resolveCredentials(cfg, { ...flags, readStdin: async () => stdin }, true));
    expect(err.code).toBe('CREDENTIAL_MISSING');
    expect(err.message).toBe(message);
  });
});

describe('credential files', () => {
  it('a missing file is CREDENTIAL_UNREADABLE giving the length of the value, never the value', async () => {
    const cfg = await config(undefined);
    const path = join(dir, 'absent');
    const err = await configError(resolveCredentials(cfg, { apiKeyFile: path, readStdin: noStdin }, false));
    expect(err.code).toBe('CREDENTIAL_UNREADABLE');
    expect(err.message).toBe(
      `the API key file given with --api-key-file does not exist (the value, ${path.length} characters long, is not printed in case it is the key itself): ENOENT`,
    );
    expect(err.details).toEqual({ flag: '--api-key-file', valueLength: path.length });
  });

  it.each([
    ['API key', 'apiKeyFile', '0123456789abcdef0123456789abcdef'],
    ['application key', 'appKeyFile', 'fedcba9876543210fedcba9876543210fedcba98'],
  ])('a key passed where the %s path belongs is not echoed', async (_label, flag, secret) => {
    const cfg = await config(undefined);
    const err = await configError(
      resolveCredentials(cfg, { apiKeyFile: await keyFile('api', 'k'), [flag]: secret, readStdin: noStdin }, true),
    );
    expect(err.code).toBe('CREDENTIAL_UNREADABLE');
    expect(JSON.stringify({ m: err.message, h: err.hint, d: err.details })).not.toContain(secret.slice(0, 8));
    expect(err.message).toContain(`${secret.length} characters long`);
  });

  it('an existing path that cannot be read is named (it is a path, not a key)', async () => {
    const cfg = await config(undefined);
    const err = await configError(resolveCredentials(cfg, { apiKeyFile: dir, readStdin: noStdin }, false));
    expect(err.message).toBe(`cannot read the API key file ${dir}: EISDIR`);
  });

  it('an empty file is CREDENTIAL_MISSING', async () => {
    const cfg = await config(undefined);
    const path = await keyFile('app', '\n \n');
    const err = await configError(
      resolveCredentials(cfg, { apiKeyFile: await keyFile('api', 'k'), appKeyFile: path, readStdin: noStdin }, true),
    );
    expect(err.code).toBe('CREDENTIAL_MISSING');
    expect(err.message).toBe(`the application key file ${path} is empty`);
  });

  it('a key with inner whitespace is CREDENTIAL_FORMAT, without echoing the key', async () => {
    const cfg = await config(undefined);
    const path = await keyFile('api', 'abcd1234 efgh5678\n');
    const err = await configError(resolveCredentials(cfg, { apiKeyFile: path, readStdin: noStdin }, false));
    expect(err.code).toBe('CREDENTIAL_FORMAT');
    expect(err.message).toBe(`api_key from file ${path} contains whitespace`);
    expect(`${err.message} ${err.hint}`).not.toContain('abcd1234');
  });
});

describe('ENC[...] secret handles are refused without revealing them', () => {
  const HANDLE = 'ENC[vault_prod:datadog/api#key-7f3a]';
  const CONTENT = 'vault_prod:datadog/api#key-7f3a';

  it.each<[string, string | undefined, NodeJS.ProcessEnv, Partial<CredentialSources>, string, () => string]>([
    [
      'api_key in the config file',
      `api_key: "${HANDLE}"\napp_key: a\n`,
      {},
      {},
      'api_key',
      () => `api_key from ${configFile} is an ENC[...] secret handle, which par-identity cannot resolve there`,
    ],
    [
      'DD_API_KEY',
      undefined,
      { DD_API_KEY: HANDLE, DD_APP_KEY: 'a' },
      {},
      'api_key',
      () => 'api_key from env DD_API_KEY is an ENC[...] secret handle, which par-identity cannot resolve there',
    ],
    [
      'app_key in the config file',
      `api_key: k\napp_key: "${HANDLE}"\n`,
      {},
      {},
      'app_key',
      () => `app_key from ${configFile} is an ENC[...] secret handle, which par-identity cannot resolve there`,
    ],
  ])('%s → SECRET_HANDLE_UNSUPPORTED', async (_name, yaml, env, sources, _field, message) => {
    const cfg = await config(yaml, env);
    const err = await configError(resolveCredentials(cfg, { readStdin: noStdin, ...sources }, true));
    expect(err.code).toBe('SECRET_HANDLE_UNSUPPORTED');
    expect(err.exitCode).toBe(3);
    expect(err.message).toBe(message());
    const everything = JSON.stringify({ message: err.message, hint: err.hint, details: err.details, stack: err.stack });
    expect(everything).not.toContain(CONTENT);
  });

  it('a handle in a --api-key-file is refused too', async () => {
    const cfg = await config(undefined);
    const path = await keyFile('api', `${HANDLE}\n`);
    const err = await configError(resolveCredentials(cfg, { apiKeyFile: path, readStdin: noStdin }, false));
    expect(err.code).toBe('SECRET_HANDLE_UNSUPPORTED');
    expect(err.message).not.toContain(CONTENT);
  });

  it('a handle as the agent key is not recorded when the enrollment key comes from a flag', async () => {
    const cfg = await config(`api_key: "${HANDLE}"\n`);
    const path = await keyFile('api', 'real-key\n');
    const creds = await resolveCredentials(cfg, { apiKeyFile: path, readStdin: noStdin }, false);
    expect(creds).toEqual({ apiKey: { value: 'real-key', source: `file ${path}` } });
  });

  it('an unused app_key handle does not matter for api-key-only enrollment', async () => {
    const cfg = await config(`api_key: k\napp_key: "${HANDLE}"\n`);
    const creds = await resolveCredentials(cfg, { readStdin: noStdin }, false);
    expect(creds).toEqual({ apiKey: { value: 'k', source: configFile }, agentApiKey: { value: 'k', source: configFile } });
  });
});

describe('missing keys', () => {
  it('no API key anywhere is CREDENTIAL_MISSING', async () => {
    const cfg = await config(undefined);
    const err = await configError(resolveCredentials(cfg, { readStdin: noStdin, keychain: async () => undefined }, false));
    expect(err.code).toBe('CREDENTIAL_MISSING');
    expect(err.message).toBe('no API key found');
  });

  it('the application key is required for owned enrollment only', async () => {
    const cfg = await config('api_key: k\n');
    const err = await configError(resolveCredentials(cfg, { readStdin: noStdin }, true));
    expect(err.code).toBe('CREDENTIAL_MISSING');
    expect(err.message).toBe('no application key found (owned enrollment needs one)');
    const creds = await resolveCredentials(cfg, { readStdin: noStdin }, false);
    expect(creds).toEqual({ apiKey: { value: 'k', source: configFile }, agentApiKey: { value: 'k', source: configFile } });
  });

  it('an application key that is present is not returned for api-key-only enrollment', async () => {
    const cfg = await config('api_key: k\napp_key: a\n');
    expect((await resolveCredentials(cfg, { readStdin: noStdin }, false)).appKey).toBeUndefined();
  });
});
