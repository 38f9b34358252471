import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/config/agent-config.js';
import { ConfigError } from '../../src/errors.js';
import { apiKeyHash } from '../../src/identity/index.js';
import { outcomeDifferences, settleDifferences } from '../../src/session/runner-settings.js';

// On a host the runner's DD_* values are the agent's: what counts is the outcome they lead to
// (docs/configuration.md, "The running runner's environment").

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-runner-settings-'));
  await writeFile(
    join(dir, 'datadog.yaml'),
    'api_key: key-from-the-file-0000000000000\nhostname: web-1\nprivate_action_runner:\n  enabled: true\n',
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function sides(here: NodeJS.ProcessEnv, runner: NodeJS.ProcessEnv) {
  return {
    here: { config: await loadAgentConfig({ cfgPath: dir, env: here }), env: here },
    runner: { config: await loadAgentConfig({ cfgPath: dir, env: runner }), env: runner },
  };
}

const RUNNER = { pid: 4242, exe: '/opt/datadog-agent/embedded/bin/privateactionrunner', env: {} };

describe('outcomeDifferences', () => {
  it('the same outcome through other variables is no difference (DD_LOG_LEVEL, a key equal to the file one)', async () => {
    expect(await outcomeDifferences(await sides({}, { DD_LOG_LEVEL: 'debug', DD_API_KEY: 'key-from-the-file-0000000000000' }), {})).toEqual(
      [],
    );
  });

  it('site, key and identity path: each outcome with both values and sources; the key only by hash', async () => {
    const found = await outcomeDifferences(
      await sides(
        {
          DD_SITE: 'datadoghq.eu',
          DD_API_KEY: 'shell-key-00000000000000000000',
          DD_PRIVATE_ACTION_RUNNER_IDENTITY_FILE_PATH: '/tmp/here.json',
        },
        {},
      ),
      {},
    );
    expect(found.map((d) => d.outcome)).toEqual(['enrollment endpoint and site region', 'API key the runner hashes', 'identity file']);
    expect(found[0]).toEqual({
      outcome: 'enrollment endpoint and site region',
      here: 'https://api.datadoghq.eu, site datadoghq.eu (from env DD_SITE), region eu1',
      runner: 'https://api.datadoghq.com, site datadoghq.com (from default), region us1',
    });
    expect(found[1]!.here).toBe(`api_key_hash ${apiKeyHash('shell-key-00000000000000000000').slice(0, 12)}… (from env DD_API_KEY)`);
    expect(JSON.stringify(found)).not.toContain('shell-key');
    expect(JSON.stringify(found)).not.toContain('key-from-the-file');
    expect(found[2]).toMatchObject({ here: '/tmp/here.json (env DD_PRIVATE_ACTION_RUNNER_IDENTITY_FILE_PATH)' });
  });

  it('what a flag fixes is not compared (--identity-file, --hostname)', async () => {
    const found = await outcomeDifferences(
      await sides({ DD_PRIVATE_ACTION_RUNNER_IDENTITY_FILE_PATH: '/tmp/here.json', DD_HOSTNAME: 'web-2' }, {}),
      { identityFile: true, hostname: true },
    );
    expect(found).toEqual([]);
  });

  it('a hostname setting that differs: both hostnames resolved and compared', async () => {
    const found = await outcomeDifferences(await sides({ DD_HOSTNAME: 'web-2' }, {}), {});
    expect(found).toEqual([
      {
        outcome: 'hostname (runner name and the stored hostname)',
        here: 'web-2 (config hostname (env DD_HOSTNAME))',
        runner: `web-1 (config hostname (${join(dir, 'datadog.yaml')}))`,
      },
    ]);
  });
});

describe('settleDifferences', () => {
  const one = [{ outcome: 'identity file', here: '/a (x)', runner: '/b (y)' }];
  it('a rotation stops with AGENT_SETTINGS_MISMATCH (exit 3); override lists what it overrides; status reports', () => {
    expect(settleDifferences([], RUNNER, { stop: true, override: false })).toEqual([]);
    expect(() => settleDifferences(one, RUNNER, { stop: true, override: false })).toThrow(ConfigError);
    try {
      settleDifferences(one, RUNNER, { stop: true, override: false });
    } catch (err) {
      expect(err).toMatchObject({ code: 'AGENT_SETTINGS_MISMATCH', exitCode: 3, details: { outcomes: ['identity file'], pid: 4242 } });
      expect((err as ConfigError).message).toContain('identity file: here /a (x); the runner (pid 4242) /b (y)');
    }
    expect(settleDifferences(one, RUNNER, { stop: true, override: true })).toEqual([
      "--override-agent-settings: overriding the running runner's setting, identity file: here /a (x); the runner (pid 4242) /b (y)",
    ]);
    expect(settleDifferences(one, RUNNER, { stop: false, override: false })[0]).toContain('A rotation stops on it');
  });
});
