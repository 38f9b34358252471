import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/config/agent-config.js';
import { IDENTITY_FILE_NAME, resolveIdentityPath } from '../../src/config/identity-path.js';
import { ConfigError } from '../../src/errors.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-idpath-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function configWith(yaml: string | undefined, env: NodeJS.ProcessEnv = {}) {
  if (yaml !== undefined) await writeFile(join(dir, 'datadog.yaml'), yaml);
  return loadAgentConfig({ cfgPath: dir, env });
}

describe('resolveIdentityPath (docs/protocol.md §5 order)', () => {
  it('the file name is the one the Go agent uses', () => {
    expect(IDENTITY_FILE_NAME).toBe('privateactionrunner_private_identity.json');
  });

  it('1. an explicit --identity-file wins over everything', async () => {
    const config = await configWith(
      'auth_token_file_path: /etc/dd/auth_token\nprivate_action_runner:\n  identity_file_path: /cfg/id.json\n',
    );
    expect(resolveIdentityPath(config, '/explicit/id.json')).toEqual({ path: '/explicit/id.json', source: '--identity-file' });
  });

  it('2. private_action_runner.identity_file_path, as written (not joined with the file name)', async () => {
    const config = await configWith(
      'auth_token_file_path: /etc/dd/auth_token\nprivate_action_runner:\n  identity_file_path: /cfg/id.json\n',
    );
    expect(resolveIdentityPath(config)).toEqual({ path: '/cfg/id.json', source: join(dir, 'datadog.yaml') });
  });

  it('2. identity_file_path from the environment names the variable', async () => {
    const config = await configWith(undefined, {
      DD_PRIVATE_ACTION_RUNNER_IDENTITY_FILE_PATH: '/env/id.json',
      DD_AUTH_TOKEN_FILE_PATH: '/x/auth',
    });
    expect(resolveIdentityPath(config)).toEqual({ path: '/env/id.json', source: 'env DD_PRIVATE_ACTION_RUNNER_IDENTITY_FILE_PATH' });
  });

  it('3. else dirname(auth_token_file_path)/privateactionrunner_private_identity.json', async () => {
    const config = await configWith('auth_token_file_path: /opt/datadog-agent/run/auth_token\n');
    expect(resolveIdentityPath(config)).toEqual({
      path: '/opt/datadog-agent/run/privateactionrunner_private_identity.json',
      source: `next to auth_token_file_path (${join(dir, 'datadog.yaml')})`,
    });
  });

  it('4. else next to the loaded config file', async () => {
    const config = await configWith('site: datadoghq.com\n');
    expect(resolveIdentityPath(config)).toEqual({ path: join(dir, IDENTITY_FILE_NAME), source: `next to ${join(dir, 'datadog.yaml')}` });
  });

  it('an empty --identity-file or blank config value falls through to the next rule', async () => {
    const config = await configWith('private_action_runner:\n  identity_file_path: "  "\n');
    expect(resolveIdentityPath(config, '').path).toBe(join(dir, IDENTITY_FILE_NAME));
  });

  it('5. no config file and nothing configured: refuse with IDENTITY_PATH_UNRESOLVED (never the current directory)', async () => {
    const config = await configWith(undefined);
    let err: unknown;
    try {
      resolveIdentityPath(config);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('IDENTITY_PATH_UNRESOLVED');
    expect((err as ConfigError).exitCode).toBe(3);
    expect((err as ConfigError).message).toBe('no config file was loaded and no identity file path is configured');
  });
});
