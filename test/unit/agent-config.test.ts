import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AgentConfig, loadAgentConfig, requireRunnerEnabled } from '../../src/config/agent-config.js';
import { CONFIG_KEYS, envNameOf } from '../../src/config/config-keys.js';
import { ConfigError } from '../../src/errors.js';
import { configError } from '../fixtures/expect-errors.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-config-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

async function load(env: NodeJS.ProcessEnv = {}, extraFiles: string[] = [], fileNames?: string[]): Promise<AgentConfig> {
  return loadAgentConfig({ cfgPath: dir, env, extraFiles, ...(fileNames ? { fileNames } : {}) });
}

describe('envNameOf: DD_ + key upper-cased, "." → "_" (docs/protocol.md §9)', () => {
  it.each([
    ['api_key', 'DD_API_KEY'],
    ['site', 'DD_SITE'],
    ['private_action_runner.enabled', 'DD_PRIVATE_ACTION_RUNNER_ENABLED'],
    ['private_action_runner.opms_extra_headers', 'DD_PRIVATE_ACTION_RUNNER_OPMS_EXTRA_HEADERS'],
  ])('%s → %s', (key, env) => {
    expect(envNameOf(key)).toBe(env);
  });
});

describe('defaults (docs/protocol.md §9)', () => {
  it('without any file or env, every key has the documented default and source "default"', async () => {
    const config = await load();
    expect(config.file).toBeUndefined();
    expect(config.files).toEqual([]);
    expect(config.getString('site')).toBe('datadoghq.com');
    expect(config.getBool('private_action_runner.enabled')).toBe(false);
    expect(config.getBool('private_action_runner.identity_use_k8s_secret')).toBe(true);
    expect(config.getString('private_action_runner.identity_secret_name')).toBe('private-action-runner-identity');
    expect(config.getBool('private_action_runner.api_key_only_enrollment')).toBe(false);
    expect(config.getStringMap('private_action_runner.opms_extra_headers')).toEqual({});
    for (const key of [
      'api_key',
      'app_key',
      'dd_url',
      'hostname',
      'cluster_name',
      'kube_resources_namespace',
      'auth_token_file_path',
      'private_action_runner.identity_file_path',
    ]) {
      expect(config.get(key)).toBeUndefined();
      expect(config.getString(key)).toBeUndefined();
    }
    for (const { key } of CONFIG_KEYS) expect(config.sourceOf(key)).toBe('default');
  });

  it('the key table matches docs/protocol.md §9', () => {
    expect(Object.fromEntries(CONFIG_KEYS.map((k) => [k.key, k.default]))).toEqual({
      api_key: undefined,
      app_key: undefined,
      site: 'datadoghq.com',
      dd_url: undefined,
      hostname: undefined,
      cluster_name: undefined,
      kube_resources_namespace: undefined,
      kubernetes_kubeconfig_path: undefined,
      auth_token_file_path: undefined,
      'private_action_runner.enabled': false,
      'private_action_runner.split_enabled': false,
      'private_action_runner.identity_file_path': undefined,
      'private_action_runner.identity_use_k8s_secret': true,
      'private_action_runner.identity_secret_name': 'private-action-runner-identity',
      'private_action_runner.api_key_only_enrollment': false,
      'private_action_runner.opms_extra_headers': {},
    });
  });
});

describe('files: main file, then -E extra files merged over it (later wins)', () => {
  it('reads nested keys from datadog.yaml and records the file', async () => {
    const main = await write(
      'datadog.yaml',
      'site: datadoghq.eu\napi_key: k1\nprivate_action_runner:\n  enabled: true\n  identity_file_path: /var/lib/par/id.json\n',
    );
    const config = await load();
    expect(config.file).toBe(main);
    expect(config.files).toEqual([main]);
    expect(config.getString('site')).toBe('datadoghq.eu');
    expect(config.getBool('private_action_runner.enabled')).toBe(true);
    expect(config.getString('private_action_runner.identity_file_path')).toBe('/var/lib/par/id.json');
    expect(config.sourceOf('site')).toBe(main);
    expect(config.sourceOf('private_action_runner.enabled')).toBe(main);
    expect(config.sourceOf('app_key')).toBe('default');
  });

  it('merges -E files in order; a key missing from a later file keeps the earlier value', async () => {
    const main = await write('datadog.yaml', 'site: datadoghq.com\nhostname: from-main\napi_key: main-key\n');
    const e1 = await write('extra1.yaml', 'site: datadoghq.eu\nhostname: from-e1\ncluster_name: c1\n');
    const e2 = await write('extra2.yaml', 'site: us3.datadoghq.com\n');
    const config = await load({}, [e1, e2]);
    expect(config.file).toBe(main);
    expect(config.files).toEqual([main, e1, e2]);
    expect(config.getString('site')).toBe('us3.datadoghq.com');
    expect(config.sourceOf('site')).toBe(e2);
    expect(config.getString('hostname')).toBe('from-e1');
    expect(config.sourceOf('hostname')).toBe(e1);
    expect(config.getString('cluster_name')).toBe('c1');
    expect(config.getString('api_key')).toBe('main-key');
    expect(config.sourceOf('api_key')).toBe(main);
  });

  it('a null value in a later file does not hide the earlier value', async () => {
    const main = await write('datadog.yaml', 'site: datadoghq.eu\n');
    const e1 = await write('extra.yaml', 'site:\n');
    const config = await load({}, [e1]);
    expect(config.getString('site')).toBe('datadoghq.eu');
    expect(config.sourceOf('site')).toBe(main);
  });

  it('an empty main file is an empty mapping', async () => {
    const main = await write('datadog.yaml', '# only a comment\n');
    const config = await load();
    expect(config.file).toBe(main);
    expect(config.getString('site')).toBe('datadoghq.com');
  });

  it('a missing -E file is refused with CONFIG_NOT_FOUND naming it', async () => {
    await write('datadog.yaml', 'site: datadoghq.eu\n');
    const missing = join(dir, 'nope.yaml');
    const err = await configError(load({}, [missing]));
    expect(err.code).toBe('CONFIG_NOT_FOUND');
    expect(err.exitCode).toBe(3);
    expect(err.message).toBe(`extra config file ${missing} does not exist`);
    expect(err.details).toEqual({ file: missing });
  });

  it.each([
    ['an unclosed flow sequence', 'site: a\nprivate_action_runner:\n  enabled: [true\nx: 1\n', 4],
    ['an escape YAML 1.1 does not have', 'api_key: a\nhostname: "web\\/1"\n', 2],
    ['a tab used as indentation', 'private_action_runner:\n\tenabled: true\n', 2],
    // The parser only notices a missing quote where the input ends.
    ['an unterminated quote', 'site: datadoghq.com\nhostname: "web-1\napi_key: k\n', 4],
  ])('invalid YAML (%s) is CONFIG_YAML naming the file and the line', async (_name, text, line) => {
    const main = await write('datadog.yaml', text);
    const err = await configError(load());
    expect(err.code).toBe('CONFIG_YAML');
    expect(err.message.startsWith(`${main}:${line}: invalid YAML: `)).toBe(true);
    expect(err.details).toEqual({ file: main, line });
  });

  it('the YAML error message is exact: file:line: invalid YAML: first line of the parser message', async () => {
    const main = await write('datadog.yaml', 'api_key: a\nprivate_action_runner:\n  enabled: [true\n');
    const err = await configError(load());
    expect(err.message).toBe(`${main}:4: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]`);
  });

  it('invalid YAML in an -E file names that file', async () => {
    await write('datadog.yaml', 'site: datadoghq.eu\n');
    const extra = await write('extra.yaml', 'ok: 1\nbad: [\n');
    const err = await configError(load({}, [extra]));
    expect(err.code).toBe('CONFIG_YAML');
    expect(err.message.startsWith(`${extra}:`)).toBe(true);
    expect(err.details.file).toBe(extra);
  });

  it.each([
    ['a list', '- a\n- b\n'],
    ['a scalar', 'just text\n'],
  ])('a top level that is %s is CONFIG_YAML', async (_name, text) => {
    const main = await write('datadog.yaml', text);
    const err = await configError(load());
    expect(err.code).toBe('CONFIG_YAML');
    expect(err.message).toBe(`${main}: the top level is not a mapping`);
  });

  it('fileNames: datadog-cluster.yaml is preferred when present, datadog.yaml otherwise', async () => {
    const node = await write('datadog.yaml', 'cluster_name: from-node-file\n');
    const names = ['datadog-cluster.yaml', 'datadog.yaml'];
    const fallback = await load({}, [], names);
    expect(fallback.file).toBe(node);
    expect(fallback.getString('cluster_name')).toBe('from-node-file');
    const cluster = await write('datadog-cluster.yaml', 'cluster_name: from-cluster-file\n');
    const preferred = await load({}, [], names);
    expect(preferred.file).toBe(cluster);
    expect(preferred.files).toEqual([cluster]);
    expect(preferred.getString('cluster_name')).toBe('from-cluster-file');
    // The default list only knows datadog.yaml.
    expect((await load()).file).toBe(node);
  });

  it('-c pointing at a .yaml or .yml file reads that file, whatever its name', async () => {
    await write('datadog.yaml', 'site: ignored.example\n');
    await mkdir(join(dir, 'other'));
    const custom = join(dir, 'other', 'custom.yaml');
    await writeFile(custom, 'site: datadoghq.eu\n');
    const viaYaml = await loadAgentConfig({ cfgPath: custom, env: {} });
    expect(viaYaml.file).toBe(custom);
    expect(viaYaml.getString('site')).toBe('datadoghq.eu');
    const yml = join(dir, 'other', 'agent.yml');
    await writeFile(yml, 'site: us3.datadoghq.com\n');
    expect((await loadAgentConfig({ cfgPath: yml, env: {} })).getString('site')).toBe('us3.datadoghq.com');
  });

  it('-c pointing at a missing .yaml file is an error, not a silent fall back to defaults', async () => {
    await expect(loadAgentConfig({ cfgPath: join(dir, 'absent.yaml'), env: {} })).rejects.toMatchObject({ code: 'CONFIG_NOT_FOUND' });
  });

  it('-c naming a directory that does not exist is CONFIG_NOT_FOUND when given, environment only when it is the default (issue 30 point 5)', async () => {
    const typo = join(dir, 'datadog-agnet');
    await expect(loadAgentConfig({ cfgPath: typo, env: {}, given: true })).rejects.toMatchObject({
      code: 'CONFIG_NOT_FOUND',
      message: `config directory ${typo} does not exist`,
    });
    const envOnly = await loadAgentConfig({ cfgPath: typo, env: { DD_PRIVATE_ACTION_RUNNER_ENABLED: 'true' } });
    expect(envOnly.files).toEqual([]);
    // A directory that exists without datadog.yaml stays "environment only".
    expect((await loadAgentConfig({ cfgPath: dir, env: {}, given: true })).files).toEqual([]);
  });

  it('no config file and nothing enabling the runner: CONFIG_NOT_FOUND saying where, never RUNNER_DISABLED', async () => {
    const none = await loadAgentConfig({ cfgPath: join(dir, 'nowhere'), env: {} });
    expect(() => requireRunnerEnabled(none, 'datadog.yaml in /nowhere')).toThrow(
      expect.objectContaining({ code: 'CONFIG_NOT_FOUND', message: expect.stringContaining('(looked for datadog.yaml in /nowhere)') }),
    );
    const disabled = await loadAgentConfig({ cfgPath: join(dir, 'nowhere'), env: { DD_PRIVATE_ACTION_RUNNER_ENABLED: 'false' } });
    expect(() => requireRunnerEnabled(disabled, 'datadog.yaml in /nowhere')).toThrow(expect.objectContaining({ code: 'RUNNER_DISABLED' }));
  });
});

describe('environment: DD_<KEY> overrides the files', () => {
  it('DD_SITE and DD_PRIVATE_ACTION_RUNNER_* override the file and say so in sourceOf', async () => {
    await write('datadog.yaml', 'site: datadoghq.eu\nprivate_action_runner:\n  enabled: false\n  identity_file_path: /from/file\n');
    const config = await load({
      DD_SITE: 'us3.datadoghq.com',
      DD_PRIVATE_ACTION_RUNNER_ENABLED: 'true',
      DD_PRIVATE_ACTION_RUNNER_IDENTITY_FILE_PATH: '/from/env',
    });
    expect(config.getString('site')).toBe('us3.datadoghq.com');
    expect(config.sourceOf('site')).toBe('env DD_SITE');
    expect(config.getBool('private_action_runner.enabled')).toBe(true);
    expect(config.sourceOf('private_action_runner.enabled')).toBe('env DD_PRIVATE_ACTION_RUNNER_ENABLED');
    expect(config.getString('private_action_runner.identity_file_path')).toBe('/from/env');
  });

  it('env overrides -E files too', async () => {
    await write('datadog.yaml', 'hostname: a\n');
    const extra = await write('extra.yaml', 'hostname: b\n');
    const config = await load({ DD_HOSTNAME: 'c' }, [extra]);
    expect(config.getString('hostname')).toBe('c');
    expect(config.sourceOf('hostname')).toBe('env DD_HOSTNAME');
  });

  it('ignores unrelated and lower-case variables', async () => {
    await write('datadog.yaml', 'site: datadoghq.eu\n');
    const config = await load({ dd_site: 'x', SITE: 'y', DD_SITE_X: 'z' });
    expect(config.getString('site')).toBe('datadoghq.eu');
  });

  it('an empty DD_* variable is unset, as the Go agent treats it (the file value stays)', async () => {
    const main = await write(
      'datadog.yaml',
      'site: datadoghq.eu\nhostname: web-1\napi_key: file-key\nprivate_action_runner:\n  enabled: true\n',
    );
    const config = await load({ DD_SITE: '', DD_HOSTNAME: '', DD_API_KEY: '', DD_PRIVATE_ACTION_RUNNER_ENABLED: '' });
    expect(config.getString('site')).toBe('datadoghq.eu');
    expect(config.getString('hostname')).toBe('web-1');
    expect(config.getString('api_key')).toBe('file-key');
    expect(config.getBool('private_action_runner.enabled')).toBe(true);
    expect(config.sourceOf('hostname')).toBe(main);
  });

  it('DD_URL is an alias of dd_url; DD_DD_URL wins over it', async () => {
    await write('datadog.yaml', 'dd_url: https://app.datadoghq.com\n');
    const alias = await load({ DD_URL: 'https://app.datadoghq.eu' });
    expect(alias.getString('dd_url')).toBe('https://app.datadoghq.eu');
    expect(alias.sourceOf('dd_url')).toBe('env DD_URL');
    const both = await load({ DD_URL: 'https://app.datadoghq.eu', DD_DD_URL: 'https://us3.datadoghq.com' });
    expect(both.getString('dd_url')).toBe('https://us3.datadoghq.com');
    expect(both.sourceOf('dd_url')).toBe('env DD_DD_URL');
  });

  it.each([
    ['true', true],
    ['TRUE', true],
    ['True', true],
    ['1', true],
    ['t', true],
    // strconv.ParseBool, as the agent's GetBool: YAML's words are not booleans in DD_* (docs/config-yaml.md).
    ['yes', false],
    ['on', false],
    [' true ', false],
    ['false', false],
    ['FALSE', false],
    ['0', false],
    ['f', false],
    ['no', false],
    ['off', false],
  ])('boolean from env %j → %s', async (raw, value) => {
    const config = await load({ DD_PRIVATE_ACTION_RUNNER_API_KEY_ONLY_ENROLLMENT: raw });
    expect(config.getBool('private_action_runner.api_key_only_enrollment')).toBe(value);
  });

  it('a boolean env value that is not a boolean is false, as the agent reads it, and RUNNER_DISABLED shows it', async () => {
    const config = await load({ DD_PRIVATE_ACTION_RUNNER_ENABLED: 'maybe' });
    expect(config.getBool('private_action_runner.enabled')).toBe(false);
    expect(() => requireRunnerEnabled(config)).toThrow(
      'private_action_runner.enabled is "maybe", which the agent reads as false (from env DD_PRIVATE_ACTION_RUNNER_ENABLED)',
    );
  });

  it.each([
    ['enabled: true', true],
    ['enabled: "true"', true],
    ['enabled: 1', true],
    ['enabled: 0', false],
    ['enabled: no', false],
    ['enabled: "off"', false],
  ])('boolean from YAML %j → %s', async (line, value) => {
    await write('datadog.yaml', `private_action_runner:\n  ${line}\n`);
    expect((await load()).getBool('private_action_runner.enabled')).toBe(value);
  });
});

describe('getString and getStringMap', () => {
  it('getString trims and treats blank as unset; numbers become strings', async () => {
    await write('datadog.yaml', 'hostname: "  web-1  "\ncluster_name: "   "\nsite: 12\n');
    const config = await load();
    expect(config.getString('hostname')).toBe('web-1');
    expect(config.getString('cluster_name')).toBeUndefined();
    expect(config.getString('site')).toBe('12');
  });

  it('opms_extra_headers as a YAML map (values stringified, names kept as written)', async () => {
    const main = await write(
      'datadog.yaml',
      'private_action_runner:\n  opms_extra_headers:\n    X-Proxy-Auth: secret-token\n    X-Count: 2\n    x-lower: v\n',
    );
    const config = await load();
    expect(config.getStringMap('private_action_runner.opms_extra_headers')).toEqual({
      'X-Proxy-Auth': 'secret-token',
      'X-Count': '2',
      'x-lower': 'v',
    });
    expect(config.sourceOf('private_action_runner.opms_extra_headers')).toBe(main);
  });

  it('opms_extra_headers from env JSON overrides the YAML map', async () => {
    await write('datadog.yaml', 'private_action_runner:\n  opms_extra_headers:\n    X-File: f\n');
    const config = await load({ DD_PRIVATE_ACTION_RUNNER_OPMS_EXTRA_HEADERS: '{"X-Env":"e","X-N":3}' });
    expect(config.getStringMap('private_action_runner.opms_extra_headers')).toEqual({ 'X-Env': 'e', 'X-N': '3' });
  });

  it.each([['not json'], ['["X-A"]'], ['"str"'], ['null']])(
    'opms_extra_headers env %j that is not a JSON object is CONFIG_VALUE',
    async (raw) => {
      const config = await load({ DD_PRIVATE_ACTION_RUNNER_OPMS_EXTRA_HEADERS: raw });
      expect(() => config.getStringMap('private_action_runner.opms_extra_headers')).toThrow(ConfigError);
      try {
        config.getStringMap('private_action_runner.opms_extra_headers');
      } catch (err) {
        expect((err as ConfigError).code).toBe('CONFIG_VALUE');
        expect((err as ConfigError).message).toBe('env DD_PRIVATE_ACTION_RUNNER_OPMS_EXTRA_HEADERS is not a JSON object');
      }
    },
  );
});

describe('requireRunnerEnabled', () => {
  it('refuses with RUNNER_DISABLED naming where the value came from', async () => {
    const main = await write('datadog.yaml', 'private_action_runner:\n  enabled: false\n');
    const config = await load();
    expect(() => requireRunnerEnabled(config)).toThrow(ConfigError);
    try {
      requireRunnerEnabled(config);
    } catch (err) {
      expect((err as ConfigError).code).toBe('RUNNER_DISABLED');
      expect((err as ConfigError).exitCode).toBe(3);
      expect((err as ConfigError).message).toBe(`private_action_runner.enabled is false (from ${main})`);
    }
    expect(() => requireRunnerEnabled(config)).toThrow('(from ');
  });

  it('passes when enabled from env', async () => {
    const config = await load({ DD_PRIVATE_ACTION_RUNNER_ENABLED: 'true' });
    expect(() => requireRunnerEnabled(config)).not.toThrow();
  });

  it('no file and no env: not "disabled" but no config found (issue 30 point 5)', async () => {
    const config = await load();
    expect(() => requireRunnerEnabled(config, 'datadog.yaml in /etc/datadog-agent')).toThrow(
      expect.objectContaining({ code: 'CONFIG_NOT_FOUND' }),
    );
    // Settings read from a cluster agent's Deployment need no file: nothing enabling the runner there is RUNNER_DISABLED.
    expect(() => requireRunnerEnabled(config)).toThrow(expect.objectContaining({ code: 'RUNNER_DISABLED' }));
  });
});
