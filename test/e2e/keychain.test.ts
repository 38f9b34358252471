import { spawnSync } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY } from '../../src/emulators/enrollment/index.js';
import { expectNoSecrets, type LocalFixture, localFixture } from './local-fixture.js';

// Against a real Secret Service (GNOME Keyring over D-Bus): `scripts/with-test-keyring.sh npm test`
// provides one, and CI always runs it that way.

function keychainWorks(): string | undefined {
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) return 'no D-Bus session (run through scripts/with-test-keyring.sh)';
  const probe = spawnSync(process.execPath, ['-e', "const {Entry}=require('@napi-rs/keyring');const e=new Entry('par-identity-probe','p');e.setPassword('x');e.deletePassword()"], { encoding: 'utf8' });
  return probe.status === 0 ? undefined : `no usable Secret Service: ${probe.stderr.split('\n').find((l) => l.includes('Error')) ?? probe.stderr}`;
}

const missing = keychainWorks();
if (missing && process.env.CI === 'true') throw new Error(`keychain tests must run in CI: ${missing}`);
if (missing) console.warn(`skipping keychain tests: ${missing}`);

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else if ((await stat(path)).isFile()) out.push(path);
  }
  return out;
}

describe.skipIf(Boolean(missing))('credentials in the OS keychain (real Secret Service)', () => {
  let fx: LocalFixture;
  const profile = `e2e-${process.pid}`;
  beforeEach(async () => {
    fx = await localFixture();
    await fx.writeConfig('');
    // No key in the config file: the keychain is the only source.
    const yaml = (await fx.read('datadog.yaml')).split('\n').filter((l) => !l.startsWith('api_key') && !l.startsWith('app_key'));
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(fx.dir, 'datadog.yaml'), yaml.join('\n'));
  });
  afterEach(async () => {
    await fx.run(['credentials', 'delete', '--profile', profile]);
    await fx.close();
  });

  it('set → rotate with the keychain keys → delete; keys never printed nor written to files', async () => {
    const set = await fx.run(['credentials', 'set', '--profile', profile, '--site', 'datadoghq.eu'], { stdin: `${DEFAULT_API_KEY}\n${DEFAULT_APP_KEY}\n` });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain(`api_key: …${DEFAULT_API_KEY.slice(-4)}`);

    const show = await fx.run(['credentials', 'show', '--profile', profile, '-c', fx.dir, '--json']);
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ keychain: { api_key: `…${DEFAULT_API_KEY.slice(-4)}`, app_key: `…${DEFAULT_APP_KEY.slice(-4)}`, site: 'datadoghq.eu' } });

    const rotate = await fx.run(['rotate-identity', '-c', fx.dir, '--profile', profile]);
    expect(rotate.code, rotate.stderr).toBe(0);
    expect(rotate.stderr).toContain(`API key from keychain profile ${profile}`);
    expect(fx.emulator.requests.find((r) => r.route === 'enroll')?.headers['dd-api-key']).toBe(DEFAULT_API_KEY);

    for (const run of [set, show, rotate]) expectNoSecrets(run, [DEFAULT_API_KEY, DEFAULT_APP_KEY]);
    for (const file of await filesUnder(fx.dir)) {
      const text = await readFile(file, 'utf8');
      expect(text.includes(DEFAULT_API_KEY) || text.includes(DEFAULT_APP_KEY), file).toBe(false);
    }

    const del = await fx.run(['credentials', 'delete', '--profile', profile]);
    expect(del.code, del.stderr).toBe(0);
    expect(del.stdout).toContain('api_key, app_key, site');
    const after = await fx.run(['rotate-identity', '-c', fx.dir, '--profile', profile]);
    expect(after.code).toBe(3);
    expect(after.stderr).toContain('error[CREDENTIAL_MISSING]');
  });

  it('env and config keys take precedence over the keychain', async () => {
    await fx.run(['credentials', 'set', '--profile', profile], { stdin: 'keychain-key-000000000000000000000\n' });
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--profile', profile, '--no-verify'], { env: { DD_API_KEY: DEFAULT_API_KEY, DD_APP_KEY: DEFAULT_APP_KEY } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('API key from env DD_API_KEY');
  });
});

describe('credentials without a keychain', () => {
  it('a missing Secret Service is a clear message, not a crash', async () => {
    const run = spawnSync(process.execPath, [join(import.meta.dirname, '../../bin/par-identity.js'), 'credentials', 'set', '--profile', 'x'], {
      input: 'some-key-0000000000000000000\n',
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' },
    });
    expect(run.status).toBe(13);
    expect(run.stderr).toContain('error[KEYCHAIN_UNAVAILABLE]');
    expect(run.stderr).not.toContain('some-key');
  });
});
