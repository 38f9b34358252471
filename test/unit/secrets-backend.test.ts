import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/config/agent-config.js';
import { readAgentApiKey, resolveCredentials } from '../../src/config/credentials.js';
import { secretHandle } from '../../src/config/secrets-backend.js';
import { apiKeyHash } from '../../src/identity/api-key-hash.js';
import { configError } from '../fixtures/expect-errors.js';

// Real executables in a temp dir, run exactly as the agent runs secret_backend_command.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-secrets-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const API_VALUE = 'resolved-api-key-0123456789abcdef';
const APP_VALUE = 'resolved-app-key-fedcba9876543210';
const noStdin = () => Promise.reject(new Error('stdin must not be read'));

/**
 * A backend that logs each run (payload and argv) and answers from `answers` (handle → entry).
 * `behaviour` scripts a failure: exit code, sleep, flood, or raw output.
 */
async function backend(
  answers: Record<string, unknown>,
  behaviour: { exit?: number; sleepMs?: number; raw?: string; flood?: number } = {},
  mode = 0o700,
): Promise<string> {
  const path = join(dir, 'backend');
  const log = join(dir, 'runs.log');
  const script = `#!${process.execPath}
const fs = require('node:fs');
let input = '';
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
  fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ input, argv: process.argv.slice(2) }) + '\\n');
  const b = ${JSON.stringify(behaviour)};
  const answer = () => {
    if (b.flood) { process.stdout.write('x'.repeat(b.flood)); return; }
    process.stderr.write('backend diagnostics mentioning ${API_VALUE}\\n');
    process.stdout.write(b.raw ?? JSON.stringify(${JSON.stringify(answers)}));
    if (b.exit) process.exitCode = b.exit;
  };
  if (b.sleepMs) setTimeout(answer, b.sleepMs); else answer();
});
`;
  await writeFile(path, script);
  await chmod(path, mode);
  return path;
}

async function runs(): Promise<{ input: string; argv: string[] }[]> {
  try {
    return (await readFile(join(dir, 'runs.log'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

async function credentials(yaml: string, env: NodeJS.ProcessEnv = {}, needAppKey = true) {
  await writeFile(join(dir, 'datadog.yaml'), yaml);
  const config = await loadAgentConfig({ cfgPath: dir, env });
  return resolveCredentials(config, { readStdin: noStdin }, needAppKey);
}

const both = { api: { value: API_VALUE }, app: { value: APP_VALUE } };

describe('ENC[] through secret_backend_command', () => {
  it('resolves every handle in one run, with the agent payload byte for byte', async () => {
    const cmd = await backend(both);
    const creds = await credentials(`secret_backend_command: ${cmd}\napi_key: ENC[api]\napp_key: "  ENC[app]\t"\n`);
    expect(creds.apiKey.value).toBe(API_VALUE);
    expect(creds.appKey!.value).toBe(APP_VALUE);
    expect(creds.agentApiKey!.value).toBe(API_VALUE);
    expect(creds.apiKey.source).toBe(`${join(dir, 'datadog.yaml')} (ENC[] resolved by secret_backend_command)`);
    const log = await runs();
    expect(log).toHaveLength(1);
    expect(log[0]!.input).toBe('{"secret_backend_timeout":30,"secrets":["api","app"],"version":"1.1"}');
  });

  it('env DD_API_KEY handles too; arguments, type and config are passed as the agent does', async () => {
    const cmd = await backend(both);
    await credentials(
      `secret_backend_command: ${cmd}\nsecret_backend_arguments: [--vault, prod]\nsecret_backend_timeout: 12\nsecret_backend_type: aws.secrets\nsecret_backend_config:\n  region: eu-west-1\napp_key: ENC[app]\n`,
      { DD_API_KEY: 'ENC[api]' },
    );
    const [run] = await runs();
    expect(run!.argv).toEqual(['--vault', 'prod']);
    expect(run!.input).toBe(
      '{"config":{"region":"eu-west-1"},"secret_backend_timeout":12,"secrets":["api","app"],"type":"aws.secrets","version":"1.1"}',
    );
  });

  it('api_key_hash is computed on the resolved, trimmed key', async () => {
    const cmd = await backend({ api: { value: `  ${API_VALUE}\n` } });
    await writeFile(join(dir, 'datadog.yaml'), `secret_backend_command: ${cmd}\napi_key: ENC[api]\n`);
    const config = await loadAgentConfig({ cfgPath: dir, env: {} });
    const key = readAgentApiKey(config);
    expect(key!.value).toBe(API_VALUE);
    expect(apiKeyHash(key!.value)).toBe(apiKeyHash(API_VALUE));
  });

  it('secret_backend_remove_trailing_line_break right-trims \\r\\n before the emptiness check', async () => {
    const cmd = await backend({ api: { value: '\r\n' } });
    const err = await configError(
      credentials(`secret_backend_command: ${cmd}\nsecret_backend_remove_trailing_line_break: true\napi_key: ENC[api]\n`, {}, false),
    );
    expect(err).toMatchObject({ code: 'SECRET_UNRESOLVED', exitCode: 3 });
    expect(err.message).toContain("resolved secret for 'api' is empty");
  });

  it('group read+exec is allowed only with secret_backend_command_allow_group_exec_perm', async () => {
    const cmd = await backend(both, {}, 0o750);
    const refused = await configError(credentials(`secret_backend_command: ${cmd}\napi_key: ENC[api]\n`, {}, false));
    expect(refused.code).toBe('SECRET_BACKEND_PERMISSIONS');
    expect(refused.message).toContain("'group' or 'others' have rights on it");
    const ok = await credentials(
      `secret_backend_command: ${cmd}\nsecret_backend_command_allow_group_exec_perm: true\napi_key: ENC[api]\n`,
      {},
      false,
    );
    expect(ok.apiKey.value).toBe(API_VALUE);
  });

  it.each<[string, number, boolean, RegExp]>([
    ['others may read', 0o704, false, /'group' or 'others' have rights on it/],
    ['group may write, even when group exec is allowed', 0o770, true, /'others' have rights on it or 'group' has write permissions/],
    ['others may exec, even when group exec is allowed', 0o751, true, /'others' have rights on it or 'group' has write permissions/],
    ['not executable', 0o600, false, /can't access it: EACCES/],
  ])('permissions: %s → SECRET_BACKEND_PERMISSIONS, never run', async (_name, mode, allowGroup, message) => {
    const cmd = await backend(both, {}, mode);
    const yaml = `secret_backend_command: ${cmd}\n${allowGroup ? 'secret_backend_command_allow_group_exec_perm: true\n' : ''}api_key: ENC[api]\n`;
    const err = await configError(credentials(yaml, {}, false));
    expect(err.code).toBe('SECRET_BACKEND_PERMISSIONS');
    expect(err.message).toMatch(message);
    expect(err.message).toContain('api_key from');
    expect(err.message).toContain('ENC[api]');
    expect(await runs()).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, Parameters<typeof backend>[1], string, string, RegExp]>([
    [
      'a missing handle',
      { app: { value: APP_VALUE } },
      {},
      '',
      'SECRET_UNRESOLVED',
      /secret handle 'api' was not resolved by the secret_backend_command/,
    ],
    [
      'an error for the handle',
      { api: { error: 'access denied by policy' } },
      {},
      '',
      'SECRET_UNRESOLVED',
      /an error occurred while resolving 'api' .*: access denied by policy/,
    ],
    ['an empty value', { api: { value: '' } }, {}, '', 'SECRET_UNRESOLVED', /resolved secret for 'api' is empty/],
    ['a non-zero exit', both, { exit: 3 }, '', 'SECRET_BACKEND_FAILED', /exit status 3 \(stderr: \d+ bytes, not shown\)/],
    [
      'output over secret_backend_output_max_size',
      both,
      { flood: 4096 },
      'secret_backend_output_max_size: 1024\n',
      'SECRET_BACKEND_FAILED',
      /command output was too long: exceeded 1024 bytes/,
    ],
    ['not JSON', both, { raw: 'api=secret' }, '', 'SECRET_BACKEND_FAILED', /could not unmarshal 'secret_backend_command' output/],
    ['a non-string value', { api: { value: 42 } }, {}, '', 'SECRET_BACKEND_FAILED', /non-string value/],
    [
      'a timeout (secret_backend_timeout)',
      both,
      { sleepMs: 5_000 },
      'secret_backend_timeout: 1\n',
      'SECRET_BACKEND_FAILED',
      /command timeout/,
    ],
  ])('%s → a config error naming the handle, never a value', async (_name, answers, behaviour, extra, code, message) => {
    const cmd = await backend(answers, behaviour);
    const err = await configError(credentials(`secret_backend_command: ${cmd}\n${extra}api_key: ENC[api]\n`, {}, false));
    expect(err.code).toBe(code);
    expect(err.exitCode).toBe(3);
    expect(err.message).toMatch(message);
    expect(err.message).toContain('api');
    const everything = JSON.stringify({ message: err.message, hint: err.hint, details: err.details });
    expect(everything).not.toContain(API_VALUE);
    expect(everything).not.toContain(APP_VALUE);
    expect(err.details.handles).toContain('api');
  });

  it('a command path that does not exist → SECRET_BACKEND_PERMISSIONS (cannot stat it)', async () => {
    const err = await configError(credentials(`secret_backend_command: ${join(dir, 'nope')}\napi_key: ENC[api]\n`, {}, false));
    expect(err.code).toBe('SECRET_BACKEND_PERMISSIONS');
    expect(err.message).toContain("can't stat it: ENOENT");
  });

  it('without a backend a handle is refused as before, naming where it came from', async () => {
    const err = await configError(credentials('api_key: ENC[api]\n', {}, false));
    expect(err.code).toBe('SECRET_HANDLE_UNSUPPORTED');
    expect(err.hint).toContain('secret_backend_command');
  });

  it('secretHandle trims spaces and tabs only, as upstream', () => {
    expect(secretHandle(' \tENC[a b]\t ')).toBe('a b');
    expect(secretHandle('ENC[]')).toBe('');
    expect(secretHandle('\nENC[a]')).toBeUndefined();
    expect(secretHandle('ENC[a')).toBeUndefined();
    expect(secretHandle('plain')).toBeUndefined();
  });
});
