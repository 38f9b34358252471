import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY, type EnrollmentEmulator, startEnrollmentEmulator } from '../../emulators/enrollment/index.js';
import { type CliRun, type RunOptions, runCli } from './run-cli.js';

// One agent config directory pointed at one enrollment emulator, for tests of the local commands.

export const IDENTITY = 'privateactionrunner_private_identity.json';

export interface LocalFixture {
  dir: string;
  identityPath: string;
  emulator: EnrollmentEmulator;
  env: Record<string, string>;
  run(args: string[], options?: RunOptions): Promise<CliRun>;
  writeConfig(extra?: string): Promise<void>;
  files(): Promise<string[]>;
  read(name?: string): Promise<string>;
  close(): Promise<void>;
}

export async function localFixture(): Promise<LocalFixture> {
  const emulator = await startEnrollmentEmulator();
  const dir = await mkdtemp(join(tmpdir(), 'par-e2e-'));
  await chmod(dir, 0o755);
  const env = { DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true', PAR_IDENTITY_RETRY_INITIAL_MS: '20', NO_COLOR: '1' };
  const fixture: LocalFixture = {
    dir,
    identityPath: join(dir, IDENTITY),
    emulator,
    env,
    run: (args, options = {}) => runCli(args, { ...options, env: { ...env, ...options.env } }),
    async writeConfig(extra = '') {
      const yaml = [
        `api_key: ${DEFAULT_API_KEY}`,
        `app_key: ${DEFAULT_APP_KEY}`,
        `dd_url: ${emulator.url}`,
        'hostname: e2e-host',
        'private_action_runner:',
        '  enabled: true',
        extra,
      ].join('\n');
      await writeFile(join(dir, 'datadog.yaml'), yaml, { mode: 0o644 });
    },
    files: async () => (await readdir(dir)).sort(),
    read: (name = IDENTITY) => readFile(join(dir, name), 'utf8'),
    async close() {
      await emulator.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  await fixture.writeConfig();
  return fixture;
}

/** Every secret a run could leak: keys from the config and the private key material of a file. */
export function secretsIn(identityText: string | undefined): string[] {
  const secrets = [DEFAULT_API_KEY, DEFAULT_APP_KEY];
  if (identityText) {
    const record = JSON.parse(identityText) as { private_key: string };
    secrets.push(record.private_key);
    const jwk = JSON.parse(Buffer.from(record.private_key, 'base64url').toString()) as { d: string };
    secrets.push(jwk.d);
  }
  return secrets;
}

export function expectNoSecrets(run: CliRun, secrets: string[]): void {
  for (const secret of secrets) {
    if (run.stdout.includes(secret) || run.stderr.includes(secret)) {
      throw new Error(`a secret (${secret.slice(0, 4)}…) appeared in the output`);
    }
  }
}
