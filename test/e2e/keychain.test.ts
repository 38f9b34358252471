import { spawnSync } from 'node:child_process';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY } from '../../emulators/enrollment/index.js';
import { selfSignedCert } from '../../emulators/self-signed-cert.js';
import { startLoopbackProxy } from '../fixtures/loopback-proxy.js';
import { expectNoSecrets, type LocalFixture, localFixture } from './local-fixture.js';
import { startCli } from './run-cli.js';

// Against a real Secret Service (GNOME Keyring over D-Bus): `scripts/with-test-keyring.sh npm test`
// provides one, and CI always runs it that way.

function keychainWorks(): string | undefined {
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) return 'no D-Bus session (run through scripts/with-test-keyring.sh)';
  const probe = spawnSync(
    process.execPath,
    ['-e', "const {Entry}=require('@napi-rs/keyring');const e=new Entry('par-identity-probe','p');e.setPassword('x');e.deletePassword()"],
    { encoding: 'utf8' },
  );
  return probe.status === 0
    ? undefined
    : `no usable Secret Service: ${probe.stderr.split('\n').find((l) => l.includes('Error')) ?? probe.stderr}`;
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
    const set = await fx.run(['credentials', 'set', '--profile', profile, '--site', 'datadoghq.eu'], {
      stdin: `${DEFAULT_API_KEY}\n${DEFAULT_APP_KEY}\n`,
    });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain(`api_key: …${DEFAULT_API_KEY.slice(-4)}`);

    const show = await fx.run(['credentials', 'show', '--profile', profile, '-c', fx.dir, '--json']);
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({
      keychain: { api_key: `…${DEFAULT_API_KEY.slice(-4)}`, app_key: `…${DEFAULT_APP_KEY.slice(-4)}`, site: 'datadoghq.eu' },
    });

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

  it("the site stored with the keys is the rotation's, unless the environment or the config sets one", async () => {
    const set = await fx.run(['credentials', 'set', '--profile', profile, '--site', 'datadoghq.eu'], {
      stdin: `${DEFAULT_API_KEY}\n${DEFAULT_APP_KEY}\n`,
    });
    expect(set.code, set.stderr).toBe(0);
    const plan = await fx.run(['rotate-identity', '-c', fx.dir, '--profile', profile, '--dry-run', '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ dryRun: true, site: 'datadoghq.eu', siteSource: `keychain profile ${profile}` });
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--profile', profile, '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    // The URN carries the site's region: eu1 for datadoghq.eu (it was us1, the default, before).
    expect((JSON.parse(rotated.stdout) as { urn: string }).urn).toMatch(/^urn:dd:apps:on-prem-runner:eu1:/);
    expect(rotated.stderr).toContain(`site datadoghq.eu (keychain profile ${profile}) for the URN region`);

    // DD_SITE wins over the keychain's site; a site in another region than the identity in service
    // is refused before enrolling (issue 30), and moves the runner only when asked to.
    const refused = await fx.run(['rotate-identity', '-c', fx.dir, '--profile', profile, '--json'], {
      env: { DD_SITE: 'us5.datadoghq.com' },
    });
    expect(refused.code, refused.stderr).toBe(3);
    expect(JSON.parse(refused.stdout)).toMatchObject({ status: 'error', code: 'REGION_CHANGE', exitCode: 3 });
    const fromEnv = await fx.run(['rotate-identity', '-c', fx.dir, '--profile', profile, '--json', '--allow-region-change'], {
      env: { DD_SITE: 'us5.datadoghq.com' },
    });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect((JSON.parse(fromEnv.stdout) as { urn: string }).urn).toMatch(/^urn:dd:apps:on-prem-runner:us5:/);

    const show = await fx.run(['credentials', 'show', '--profile', profile, '-c', fx.dir, '--json']);
    expect(JSON.parse(show.stdout).effective).toContainEqual({
      field: 'site',
      source: `keychain profile ${profile}`,
      value: 'datadoghq.eu',
    });
  });

  it('status --verify and rollback check at the stored site too: the API host of datadoghq.eu, as the rotation that enrolled there', async () => {
    // The real host names: an HTTPS front with a certificate for api.datadoghq.eu (trusted through
    // NODE_EXTRA_CA_CERTS) passes the bytes on to the emulator, and the agent's proxy tunnels to that
    // front only. A request for any other site's host is refused by the proxy and recorded there.
    const cert = await selfSignedCert({ subject: '/CN=api.datadoghq.eu', extendedKeyUsage: 'serverAuth', dnsNames: ['api.datadoghq.eu'] });
    const emulatorPort = Number(new URL(fx.emulator.url).port);
    const front = createTlsServer({ cert: cert.cert, key: cert.key }, (socket) => {
      const upstream = connect(emulatorPort, '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    const proxy = await startLoopbackProxy({ routes: { 'api.datadoghq.eu:443': `127.0.0.1:${(front.address() as AddressInfo).port}` } });
    try {
      const caFile = join(fx.dir, 'front-ca.pem');
      await writeFile(caFile, cert.cert);
      // No site, no dd_url and no key in the config: the keychain profile gives the keys and their site.
      await writeFile(
        join(fx.dir, 'datadog.yaml'),
        ['hostname: e2e-host', 'private_action_runner:', '  enabled: true', 'proxy:', `  https: ${proxy.url}`, ''].join('\n'),
      );
      const env = { NODE_EXTRA_CA_CERTS: caFile };
      const set = await fx.run(['credentials', 'set', '--profile', profile, '--site', 'datadoghq.eu'], {
        stdin: `${DEFAULT_API_KEY}\n${DEFAULT_APP_KEY}\n`,
      });
      expect(set.code, set.stderr).toBe(0);
      for (let i = 0; i < 2; i++) {
        const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--profile', profile, '--json'], { env });
        expect(rotated.code, rotated.stderr).toBe(0);
        expect((JSON.parse(rotated.stdout) as { urn: string }).urn).toMatch(/^urn:dd:apps:on-prem-runner:eu1:/);
      }
      const checks = () => fx.emulator.requests.filter((r) => r.route === 'health').length;

      let before = checks();
      const status = await fx.run(['status', '-c', fx.dir, '--verify', '--profile', profile, '--json'], { env });
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ verify: { performed: true, ok: true } });
      expect(status.stderr).toContain(`health check API: https://api.datadoghq.eu (site datadoghq.eu (keychain profile ${profile}))`);
      expect(checks()).toBe(before + 1);

      before = checks();
      const rollback = await fx.run(['rollback', '-c', fx.dir, '--profile', profile, '--json'], { env });
      expect(rollback.code, rollback.stderr).toBe(0);
      expect(rollback.stderr).toContain(`health check API: https://api.datadoghq.eu (site datadoghq.eu (keychain profile ${profile}))`);
      expect(checks()).toBe(before + 1);

      // Every request went to the EU API host, none to another site's (before: status and rollback asked api.datadoghq.com).
      expect(proxy.seen.map((s) => `${s.method} ${s.target}`).filter((t) => t !== 'CONNECT api.datadoghq.eu:443')).toEqual([]);
      expect(fx.emulator.requests.map((r) => r.headers.host).filter((h) => h?.replace(/:443$/, '') !== 'api.datadoghq.eu')).toEqual([]);
      for (const run of [set, status, rollback]) expectNoSecrets(run, [DEFAULT_API_KEY, DEFAULT_APP_KEY]);

      // The environment's site still wins over the stored one, for the check as for a rotation.
      const fromEnv = await fx.run(['status', '-c', fx.dir, '--verify', '--profile', profile, '--timeout', '1s'], {
        env: { ...env, DD_SITE: 'us5.datadoghq.com' },
      });
      expect(fromEnv.stderr).toContain('health check API: https://api.us5.datadoghq.com (site us5.datadoghq.com (env DD_SITE))');
      expect(proxy.seen.at(-1)).toMatchObject({ method: 'CONNECT', target: 'api.us5.datadoghq.com:443' });
    } finally {
      await proxy.close();
      await new Promise<void>((resolve) => front.close(() => resolve()));
    }
  });

  it('credentials set stopped by SIGTERM while it reads the keys from stdin: nothing stored, the profile as it was, exit 143, one JSON document', async () => {
    const first = await fx.run(['credentials', 'set', '--profile', profile], { stdin: `${DEFAULT_API_KEY}\n${DEFAULT_APP_KEY}\n` });
    expect(first.code, first.stderr).toBe(0);
    const newKey = 'new-api-key-0000000000000000000000000';
    const run = startCli(['credentials', 'set', '--profile', profile, '--site', 'datadoghq.eu', '--json'], { env: fx.env });
    // Its progress line comes after the signal handlers are in place and right before it reads stdin,
    // which stays open: one line of keys written, no end.
    await new Promise<void>((resolve) => {
      const seen = () => run.stderr().includes(`OS keychain, profile ${profile}`);
      if (seen()) resolve();
      else run.child.stderr.on('data', () => seen() && resolve());
    });
    run.child.stdin.write(`${newKey}\n`);
    run.child.kill('SIGTERM');
    const exit = await run.exit;
    expect(exit.code, run.stderr()).toBe(143);
    const lines = run.stdout().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      command: 'credentials set',
      code: 'INTERRUPTED',
      exitCode: 143,
      message: `stopped by SIGTERM while the keys were read, before anything was stored: keychain profile ${profile} unchanged`,
    });
    const show = await fx.run(['credentials', 'show', '--profile', profile, '-c', fx.dir, '--json']);
    expect(JSON.parse(show.stdout)).toMatchObject({
      keychain: { api_key: `…${DEFAULT_API_KEY.slice(-4)}`, app_key: `…${DEFAULT_APP_KEY.slice(-4)}`, site: null },
    });
    expect(run.stdout() + run.stderr()).not.toContain(newKey);
  });

  it('env and config keys take precedence over the keychain', async () => {
    await fx.run(['credentials', 'set', '--profile', profile], { stdin: 'keychain-key-000000000000000000000\n' });
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--profile', profile, '--no-verify'], {
      env: { DD_API_KEY: DEFAULT_API_KEY, DD_APP_KEY: DEFAULT_APP_KEY },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('API key from env DD_API_KEY');
  });
});

describe('credentials without a keychain', () => {
  const NO_BUS = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' };

  it('show reports the keys of the config and the environment, masked, and says the keychain is unavailable (exit 0)', async () => {
    const fx = await localFixture();
    try {
      const appKey = 'a'.repeat(36) + 'wxyz';
      const run = await fx.run(['credentials', 'show', '-c', fx.dir, '--json'], { env: { ...NO_BUS, DD_APP_KEY: appKey } });
      expect(run.code, run.stderr).toBe(0);
      const out = JSON.parse(run.stdout);
      expect(out).toMatchObject({
        status: 'ok',
        keychain: null,
        keychainUnavailable: expect.stringContaining('the OS keychain is not available here'),
      });
      expect(out.effective).toEqual([
        { field: 'api_key', source: join(fx.dir, 'datadog.yaml'), value: `…${DEFAULT_API_KEY.slice(-4)}` },
        { field: 'app_key', source: 'env DD_APP_KEY', value: '…wxyz' },
        { field: 'site', source: 'default', value: 'datadoghq.com' },
      ]);
      const human = await fx.run(['credentials', 'show', '-c', fx.dir], { env: NO_BUS });
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toContain('keychain profile default: not read, the OS keychain is not available here');
      expect(human.stdout).toContain(`api_key  …${DEFAULT_API_KEY.slice(-4)}  (${join(fx.dir, 'datadog.yaml')})`);
      for (const r of [run, human]) expectNoSecrets(r, [DEFAULT_API_KEY, DEFAULT_APP_KEY, appKey]);
    } finally {
      await fx.close();
    }
  });

  it('a missing Secret Service is a clear message, not a crash', async () => {
    const run = spawnSync(
      process.execPath,
      [join(import.meta.dirname, '../../bin/par-identity.js'), 'credentials', 'set', '--profile', 'x'],
      {
        input: 'some-key-0000000000000000000\n',
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' },
      },
    );
    expect(run.status).toBe(13);
    expect(run.stderr).toContain('error[KEYCHAIN_UNAVAILABLE]');
    expect(run.stderr).not.toContain('some-key');
  });
});
