import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildUrn, encodePrivateJwk, generateIdentityKey } from '../../src/identity/index.js';
import { parseIdentityFile } from '../../src/identity/identity-record.js';
import { type ClusterFixture, clusterFixture, NS, SECRET } from './cluster-fixture.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';

// Issue 30, points 2, 3 and 5 and the identity a newer agent wrote, against the built binary: a
// site that is a URL is refused before anything happens; a rotation that would move the runner to
// another region stops before enrolling; a config path that is not there says so; fields this tool
// does not know stop a rotation or rollback, and status shows them (docs/configuration.md).

interface ErrorJson {
  code: string;
  message: string;
  hint: string;
  details?: Record<string, unknown>;
}

const errorOf = (stdout: string) => JSON.parse(stdout.trim()) as ErrorJson;

describe('a local identity file', () => {
  let fx: LocalFixture;
  beforeEach(async () => {
    fx = await localFixture();
  });
  afterEach(async () => {
    await fx.close();
  });
  const enrolls = () => fx.emulator.requests.filter((r) => r.route === 'enroll').length;

  async function seed(): Promise<string> {
    const first = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
    expect(first.code, first.stderr).toBe(0);
    fx.emulator.reset();
    return fx.read();
  }

  describe('the site rule (issue 30 point 3)', () => {
    it('DD_SITE=https://app.datadoghq.eu is refused before anything happens, naming value and source, even with dd_url set', async () => {
      const before = await seed();
      for (const extra of [[], ['--dry-run']]) {
        const run = await fx.run(['rotate-identity', '-c', fx.dir, '--json', ...extra], { env: { DD_SITE: 'https://app.datadoghq.eu' } });
        expect(run.code, run.stderr).toBe(3);
        const error = errorOf(run.stdout);
        expect(error.code).toBe('SITE_INVALID');
        expect(error.message).toContain('site "https://app.datadoghq.eu" (from env DD_SITE) is not a Datadog site name: it is a URL');
        expect(error.hint).toContain('(datadoghq.eu for this value)');
        // Refused at the resolve step: no lock taken, nothing read, nothing sent.
        expect(run.stderr).not.toContain('→ lock the target');
      }
      expect(enrolls()).toBe(0);
      expect(fx.emulator.requests).toHaveLength(0);
      expect(await fx.read()).toBe(before);
      expect(await fx.files()).toEqual(['datadog.yaml', IDENTITY]);
    });

    it('status refuses it too, and a dd_url that is not an http(s) URL is refused the same way', async () => {
      await seed();
      const status = await fx.run(['status', '-c', fx.dir, '--json'], { env: { DD_SITE: 'datadoghq.eu:443' } });
      expect(status.code).toBe(3);
      expect(errorOf(status.stdout)).toMatchObject({ code: 'SITE_INVALID', message: expect.stringContaining('it contains a port') });
      const ddUrl = await fx.run(['rotate-identity', '-c', fx.dir, '--json'], { env: { DD_DD_URL: 'ftp://app.datadoghq.eu' } });
      expect(ddUrl.code).toBe(3);
      expect(errorOf(ddUrl.stdout)).toMatchObject({
        code: 'SITE_INVALID',
        message: 'dd_url "ftp://app.datadoghq.eu" (from env DD_DD_URL) is not an http or https URL',
      });
      expect(enrolls()).toBe(0);
    });

    it('credentials set --site refuses a URL before asking for any key', async () => {
      const run = await fx.run(['credentials', 'set', '--site', 'https://us5.datadoghq.com', '--json'], { stdin: 'not-read\n' });
      expect(run.code).toBe(3);
      expect(errorOf(run.stdout)).toMatchObject({
        code: 'SITE_INVALID',
        message: expect.stringContaining('(from --site)'),
        hint: expect.stringContaining('(us5.datadoghq.com for this value)'),
      });
    });
  });

  describe('the region (issue 30 point 2)', () => {
    it('a stray DD_SITE=datadoghq.eu stops the rotation of a us1 runner before enrolling, naming both regions and sources; --allow-region-change moves it', async () => {
      const before = await seed();
      const urn = parseIdentityFile(before).urn;
      for (const extra of [[], ['--dry-run']]) {
        const run = await fx.run(['rotate-identity', '-c', fx.dir, '--json', ...extra], { env: { DD_SITE: 'datadoghq.eu' } });
        expect(run.code, run.stderr).toBe(3);
        const error = errorOf(run.stdout);
        expect(error.code).toBe('REGION_CHANGE');
        expect(error.message).toBe(
          `the rotation would move the identity from region us1 to eu1: site datadoghq.eu (from env DD_SITE) is in region eu1, but the identity in service (${urn}) is in region us1`,
        );
        expect(error.hint).toContain('--allow-region-change');
      }
      expect(enrolls()).toBe(0);
      expect(await fx.read()).toBe(before);

      // status with the us1 config: no finding; with the stray variable: the finding, in --json too.
      const clean = await fx.run(['status', '-c', fx.dir, '--json']);
      expect(JSON.parse(clean.stdout)).toMatchObject({
        siteRegion: { site: 'datadoghq.com', source: 'default', region: 'us1', identityRegion: 'us1', matchesIdentity: true },
        unknownFields: [],
      });
      const stray = await fx.run(['status', '-c', fx.dir, '--json'], { env: { DD_SITE: 'datadoghq.eu' } });
      expect(stray.code, stray.stderr).toBe(0);
      expect(JSON.parse(stray.stdout)).toMatchObject({
        siteRegion: { site: 'datadoghq.eu', source: 'env DD_SITE', region: 'eu1', identityRegion: 'us1', matchesIdentity: false },
      });
      expect(stray.stderr).toContain(
        `warning: site datadoghq.eu (from env DD_SITE) is in region eu1, but the identity in service (${urn}) is in region us1`,
      );
      const human = await fx.run(['status', '-c', fx.dir], { env: { DD_SITE: 'datadoghq.eu' } });
      expect(human.stdout).toContain("  site:         datadoghq.eu (from env DD_SITE), region eu1: NOT the identity's region us1");

      const moved = await fx.run(['rotate-identity', '-c', fx.dir, '--json', '--allow-region-change'], {
        env: { DD_SITE: 'datadoghq.eu' },
      });
      expect(moved.code, moved.stderr).toBe(0);
      expect(JSON.parse(moved.stdout).urn).toMatch(/^urn:dd:apps:on-prem-runner:eu1:/);
      expect(moved.stderr).toContain('warning: --allow-region-change: site datadoghq.eu (from env DD_SITE) is in region eu1');
    });

    it('the same region under another site spelling goes on without a word', async () => {
      await seed();
      const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], { env: { DD_SITE: 'ddog-gov.com' } });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).not.toContain('region');
    });
  });

  describe('a config path that does not exist (issue 30 point 5)', () => {
    it('-c with a typo is CONFIG_NOT_FOUND naming the path, never RUNNER_DISABLED; a missing -E too', async () => {
      const typo = join(fx.dir, 'datadog-agnet');
      const run = await fx.run(['rotate-identity', '-c', typo, '--json']);
      expect(run.code).toBe(3);
      expect(errorOf(run.stdout)).toMatchObject({ code: 'CONFIG_NOT_FOUND', message: `config directory ${typo} does not exist` });
      const extra = await fx.run(['rotate-identity', '-c', fx.dir, '-E', join(fx.dir, 'extra.yaml'), '--json']);
      expect(extra.code).toBe(3);
      expect(errorOf(extra.stdout)).toMatchObject({
        code: 'CONFIG_NOT_FOUND',
        message: `extra config file ${join(fx.dir, 'extra.yaml')} does not exist`,
      });
      const status = await fx.run(['status', '-c', typo, '--json']);
      expect(errorOf(status.stdout).code).toBe('CONFIG_NOT_FOUND');
      expect(enrolls()).toBe(0);
    });

    it('a directory without datadog.yaml and nothing enabling the runner: no config found there, not RUNNER_DISABLED', async () => {
      const empty = join(fx.dir, 'empty');
      await import('node:fs/promises').then((fs) => fs.mkdir(empty));
      const run = await fx.run(['rotate-identity', '-c', empty, '--json']);
      expect(run.code).toBe(3);
      expect(errorOf(run.stdout)).toMatchObject({
        code: 'CONFIG_NOT_FOUND',
        message: expect.stringContaining(`(looked for datadog.yaml in ${empty})`),
      });
    });

    it.skipIf(existsSync('/etc/datadog-agent'))(
      'the default -c missing on this machine: environment only, and without DD_PRIVATE_ACTION_RUNNER_ENABLED no config found',
      async () => {
        const run = await fx.run(['rotate-identity', '--json']);
        expect(run.code).toBe(3);
        expect(errorOf(run.stdout)).toMatchObject({
          code: 'CONFIG_NOT_FOUND',
          message: expect.stringContaining('(looked for datadog.yaml in /etc/datadog-agent)'),
        });
      },
    );
  });

  describe('an identity a newer agent wrote (datadog-agent #56545 fields)', () => {
    const NEWER = {
      authorization_type: 'workload_identity',
      authorization_version: '3',
      provider: 'aws',
      intake_mapping_id: 'm-1',
      runner_name: 'r',
      pending: false,
    };

    it('status shows the unknown fields; rotation and rollback stop before enrolling or restoring; --override-agent-settings rewrites it', async () => {
      await seed();
      await seed(); // a backup exists for the rollback
      const record = JSON.parse(await fx.read()) as Record<string, unknown>;
      const newer = JSON.stringify({ ...record, ...NEWER });
      await writeFile(fx.identityPath, newer, { mode: 0o600 });
      const fields = Object.keys(NEWER).sort();

      const status = await fx.run(['status', '-c', fx.dir, '--json']);
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ unknownFields: fields });
      expect(status.stderr).toContain(`holds fields this tool does not know (a newer agent's): ${fields.join(', ')}`);

      for (const args of [['rotate-identity'], ['rotate-identity', '--dry-run'], ['rollback']]) {
        const run = await fx.run([...args, '-c', fx.dir, '--json']);
        expect(run.code, run.stderr).toBe(3);
        const error = errorOf(run.stdout);
        expect(error.code).toBe('IDENTITY_FIELDS_UNKNOWN');
        expect(error.message).toContain(`identity file ${fx.identityPath} holds fields this tool does not know: ${fields.join(', ')}`);
        expect(error.details).toMatchObject({ fields });
        expect(await fx.read()).toBe(newer);
      }
      expect(enrolls()).toBe(0);

      const forced = await fx.run(['rotate-identity', '-c', fx.dir, '--json', '--override-agent-settings']);
      expect(forced.code, forced.stderr).toBe(0);
      expect(forced.stderr).toContain(
        `warning: --override-agent-settings: identity file ${fx.identityPath} holds fields this tool does not know: ${fields.join(', ')}; the rotation writes the identity without them`,
      );
      expect(Object.keys(JSON.parse(await fx.read()) as object).sort()).toEqual(['api_key_hash', 'hostname', 'private_key', 'urn']);
      // The replaced file is the backup, byte for byte: its fields are not lost.
      expect(await fx.read(`${IDENTITY}.bak`)).toBe(newer);
    });
  });
});

describe("the cluster agent's Secret and a Helm runner's Secret", () => {
  let fx: ClusterFixture;
  beforeEach(async () => {
    fx = await clusterFixture();
  });
  afterEach(async () => {
    await fx.close();
  });
  const enrolls = () => fx.enrollment.requests.filter((r) => r.route === 'enroll').length;

  it('rotate-par-identity: a region change stops before enrolling; an extra data key a newer agent wrote stops too, status --secret shows it', async () => {
    const seeded = await fx.rotate(['--no-verify']);
    expect(seeded.code, seeded.stderr).toBe(0);
    const urn = fx.secretData().urn!;
    fx.enrollment.reset();

    // The running agent's site is us1: the local DD_SITE is taken over the agent's (else AGENT_SETTINGS_MISMATCH), and then the region check stops it.
    const region = await fx.rotate(['--json', '--override-agent-settings'], { env: { DD_SITE: 'us5.datadoghq.com' } });
    expect(region.code, region.stderr).toBe(3);
    expect(errorOf(region.stdout)).toMatchObject({
      code: 'REGION_CHANGE',
      message: `the rotation would move the identity from region us1 to us5: site us5.datadoghq.com (from env DD_SITE) is in region us5, but the identity in service (${urn}) is in region us1`,
    });
    expect(enrolls()).toBe(0);
    expect(fx.secretData().urn).toBe(urn);

    const secret = fx.secret()!;
    secret.data = { ...(secret.data as Record<string, string>), authorization_type: Buffer.from('workload_identity').toString('base64') };
    fx.kube.updateObject(secret);
    const status = await fx.run(['status', '--secret', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, '-n', NS, '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ unknownFields: ['authorization_type'], siteRegion: { matchesIdentity: true } });

    for (const args of [[], ['--dry-run']]) {
      const run = await fx.rotate(['--json', ...args]);
      expect(run.code, run.stderr).toBe(3);
      expect(errorOf(run.stdout)).toMatchObject({
        code: 'IDENTITY_FIELDS_UNKNOWN',
        message: expect.stringContaining(`Secret ${NS}/${SECRET} holds fields this tool does not know: authorization_type`),
      });
    }
    const rollback = await fx.run(['rollback', '--secret', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, '-n', NS, '--json']);
    expect(errorOf(rollback.stdout).code).toBe('IDENTITY_FIELDS_UNKNOWN');
    expect(enrolls()).toBe(0);
    expect(fx.secretData().authorization_type).toBe('workload_identity');

    const forced = await fx.rotate(['--json', '--override-agent-settings']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(fx.secretData()).not.toHaveProperty('authorization_type');
  });

  it('rotate-identity --k8s-secret: a region change stops before enrolling; its other keys are env vars, kept, and stop nothing', async () => {
    const key = generateIdentityKey();
    const values = {
      RUNNER_URN: buildUrn({ region: 'us1', orgId: 1234567, runnerId: 'seed-runner' }),
      RUNNER_PRIVATE_KEY: encodePrivateJwk(key),
      OTHER_SETTING: 'keep-me',
    };
    fx.kube.createObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'runner-identity', namespace: NS },
      type: 'Opaque',
      data: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    });
    const rotate = (env: Record<string, string>, ...args: string[]) =>
      fx.run(
        [
          'rotate-identity',
          '-c',
          `${fx.dir}/datadog-cluster.yaml`,
          '--k8s-secret',
          'runner-identity',
          '-n',
          NS,
          '--kubeconfig',
          fx.adminKubeconfig,
          '--json',
          '--no-verify',
          ...args,
        ],
        { env },
      );
    const refused = await rotate({ DD_SITE: 'ap1.datadoghq.com' });
    expect(refused.code, refused.stderr).toBe(3);
    expect(errorOf(refused.stdout)).toMatchObject({
      code: 'REGION_CHANGE',
      details: { siteRegion: 'ap1', identityRegion: 'us1', siteSource: 'env DD_SITE' },
    });
    expect(enrolls()).toBe(0);
    const ok = await rotate({});
    expect(ok.code, ok.stderr).toBe(0);
    expect(fx.secretData('runner-identity').OTHER_SETTING).toBe('keep-me');
  });
});
