import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY, startEnrollmentEmulator } from '../../emulators/enrollment/index.js';
import type { KubeEmulator, KubeObject } from '../../emulators/kube/index.js';
import { parseIdentityFile } from '../../src/identity/identity-record.js';
import { FINGERPRINT_ANNOTATION } from '../../src/rollout/index.js';
import { acquireIdentityLock } from '../../src/storage/index.js';
import { lockTries } from '../fixtures/lock-tries.js';
import { type ClusterFixture, clusterFixture, SECRET } from './cluster-fixture.js';
import { interruptAt } from './interrupt-at.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';
import { startCli } from './run-cli.js';
import { clusterWithRunner } from './runner-cluster.js';

// SIGINT/SIGTERM end a run truthfully (issue 23, "Bounded in time, truthful when interrupted"): the
// run is stopped by SIGSTOP at a named boundary (PAR_IDENTITY_FAILPOINT=<point>:stop), the test sends
// the signal to the stopped child and resumes it, so the signal is pending exactly there. The run then
// stops at that safe point: INTERRUPTED on stderr saying what is in place, one JSON document with
// --json, exit 130 (SIGINT) or 143 (SIGTERM), its lock released, no temporary file left.

/** Exactly one JSON document on stdout: the error envelope. */
function oneDocument(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  expect(lines, stdout).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe('rotate-identity and rollback (identity file) stopped by a signal', () => {
  let fx: LocalFixture;
  afterEach(async () => {
    await fx.close();
  });

  async function seeded(): Promise<string> {
    fx = await localFixture();
    const first = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
    expect(first.code, first.stderr).toBe(0);
    return fx.read();
  }
  const rotate = () => ['rotate-identity', '-c', fx.dir, '--json'];
  /** The lock is gone and no temporary file is left: only the identity, its backup, the verified mark, the config. */
  async function clean(): Promise<void> {
    const files = await fx.files();
    expect(files.filter((f) => f.includes('.lock') || f.includes('.tmp-'))).toEqual([]);
  }

  it('SIGINT before the enrollment: nothing enrolled or changed, exit 130, one JSON document', async () => {
    const before = await seeded();
    const enrollsBefore = fx.emulator.requests.filter((r) => r.route === 'enroll').length;
    const run = await interruptAt(rotate(), fx.env, 'before-enroll', ['SIGINT']);
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toContain(
      'error[INTERRUPTED]: stopped by SIGINT before step "enroll the new key": nothing was enrolled or changed: identity file',
    );
    expect(run.stderr).toContain('untouched');
    expect(oneDocument(run.stdout)).toMatchObject({
      status: 'error',
      command: 'rotate-identity',
      code: 'INTERRUPTED',
      exitCode: 130,
      details: { step: 'enroll', phase: 'before', signal: 'SIGINT' },
    });
    expect(await fx.read()).toBe(before);
    expect(fx.emulator.requests.filter((r) => r.route === 'enroll')).toHaveLength(enrollsBefore);
    await clean();
  });

  it('SIGTERM after the enrollment, before the verification: names the runner, whose key stays pending with its URN, exit 143, file untouched; the next run verifies that key and writes it without enrolling', async () => {
    const before = await seeded();
    const run = await interruptAt(rotate(), fx.env, 'after-enroll', ['SIGTERM']);
    expect(run.code, run.stderr).toBe(143);
    const doc = oneDocument(run.stdout);
    expect(doc).toMatchObject({
      status: 'error',
      code: 'INTERRUPTED',
      exitCode: 143,
      details: { step: 'verify', phase: 'before', signal: 'SIGTERM' },
    });
    expect(doc.message).toMatch(
      /^stopped by SIGTERM before step "verify online \(signed health check\)": runner urn:dd:apps:on-prem-runner:\S+ was enrolled with Datadog and not yet verified \(key fingerprint \S+\); nothing was written: its private key is kept pending in \S+\.pending, not in service: identity file \S+ otherwise untouched/,
    );
    expect(doc.hint).toContain(
      'The next rotate-identity verifies that same key again and writes it if Datadog accepts it, without enrolling another runner',
    );
    const enrolled = fx.emulator.runners.at(-1)!;
    expect(JSON.parse(await fx.read(`${IDENTITY}.pending`))).toMatchObject({
      runner_name: enrolled.name,
      urn: expect.stringContaining(enrolled.runnerId),
    });
    expect(run.stderr).toContain('error[INTERRUPTED]: stopped by SIGTERM');
    expect(await fx.read()).toBe(before);
    await clean();

    const enrolls = fx.emulator.requests.filter((r) => r.route === 'enroll').length;
    const next = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(parseIdentityFile(await fx.read()).urn).toContain(enrolled.runnerId);
    expect(fx.emulator.requests.filter((r) => r.route === 'enroll')).toHaveLength(enrolls);
    expect((await fx.files()).filter((f) => f.includes('.pending'))).toEqual([]);
  });

  it('SIGINT after the verification, before the write: nothing written, the proven key pending; the next run writes it without enrolling', async () => {
    const before = await seeded();
    const run = await interruptAt(rotate(), fx.env, 'before-write', ['SIGINT']);
    expect(run.code, run.stderr).toBe(130);
    expect(await fx.read()).toBe(before);
    const enrolled = fx.emulator.runners.at(-1)!;
    const doc = oneDocument(run.stdout);
    expect(doc).toMatchObject({ details: { step: 'write', phase: 'before' } });
    expect(doc.message).toContain(`was enrolled with Datadog and the health check accepted it`);
    expect(doc.message).toContain(`nothing was written: its private key is kept pending in ${join(fx.dir, IDENTITY)}.pending`);
    await clean();

    const enrolls = fx.emulator.requests.filter((r) => r.route === 'enroll').length;
    const next = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain('this run verifies that key again and writes it if Datadog accepts it, without enrolling another runner');
    expect(parseIdentityFile(await fx.read()).urn).toContain(enrolled.runnerId);
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(before);
    expect(fx.emulator.requests.filter((r) => r.route === 'enroll')).toHaveLength(enrolls);
  });

  it('SIGINT while the enrollment request is under way: the request is aborted at once, and the message says it was cut off', async () => {
    const before = await seeded();
    // The emulator holds the answer for ten minutes: only an aborted request ends the run in time.
    fx.emulator.script('enroll', { delayMs: 600_000, passThrough: true });
    const run = startCli(rotate(), { env: fx.env });
    run.child.stdin.end();
    const enrolls = () => fx.emulator.requests.filter((r) => r.route === 'enroll').length;
    const seen = enrolls();
    while (enrolls() === seen) await new Promise((resolve) => setTimeout(resolve, 5));
    run.child.kill('SIGINT');
    const exit = await run.exit;
    expect(exit.code, run.stderr()).toBe(130);
    expect(oneDocument(run.stdout()).message).toMatch(
      /during step "enroll the new key": the enrollment request was cut off, so Datadog may or may not have registered a runner/,
    );
    expect(await fx.read()).toBe(before);
    await clean();
  });

  it('a second signal while the run ends: it ends at once with that signal status, one JSON document, lock gone', async () => {
    await seeded();
    const run = await interruptAt(rotate(), fx.env, 'before-enroll', ['SIGINT', 'SIGTERM']);
    expect(run.code, run.stderr).toBe(143);
    expect(oneDocument(run.stdout)).toMatchObject({ code: 'INTERRUPTED', exitCode: 143, details: { signal: 'SIGTERM' } });
    expect(run.stderr).toContain('then SIGTERM while the run was ending');
    await clean();
  });

  it('SIGINT while --wait-lock waits for another run: the wait ends at once, nothing enrolled, the holder keeps its lock (exit 130)', async () => {
    const before = await seeded();
    const enrollsBefore = fx.emulator.requests.filter((r) => r.route === 'enroll').length;
    const held = await acquireIdentityLock(fx.identityPath);
    try {
      // Waiting: its first try was refused and it tried again, which only --wait-lock makes it do (test/fixtures/lock-tries.ts).
      const tries = lockTries(fx.dir, `${IDENTITY}.lock`);
      const run = startCli([...rotate(), '--wait-lock', '10m'], { env: fx.env });
      run.child.stdin.end();
      const first = await Promise.race([tries.seen(2).then(() => 'waiting' as const), run.exit.then(() => 'exited' as const)]);
      tries.close();
      expect(first, run.stderr()).toBe('waiting');
      run.child.kill('SIGINT');
      const exit = await run.exit;
      expect(exit.code, run.stderr()).toBe(130);
      const doc = oneDocument(run.stdout());
      expect(doc).toMatchObject({ code: 'INTERRUPTED', exitCode: 130, details: { step: 'lock', phase: 'during', signal: 'SIGINT' } });
      expect(doc.message).toContain('stopped by SIGINT during step "lock the target": nothing was enrolled or changed');
      expect(await fx.read()).toBe(before);
      expect(fx.emulator.requests.filter((r) => r.route === 'enroll')).toHaveLength(enrollsBefore);
      // The lock is still the holder's: the stopped run took nothing and removed nothing.
      expect(JSON.parse(await fx.read(`${IDENTITY}.lock`))).toMatchObject({ pid: process.pid, nonce: held.holder.nonce });
    } finally {
      await held.release();
    }
    await clean();
  });

  it('SIGTERM while the pre-flight reads the keys from stdin (--api-key-file -): the read ends at once, nothing enrolled (exit 143)', async () => {
    const before = await seeded();
    const enrollsBefore = fx.emulator.requests.filter((r) => r.route === 'enroll').length;
    const run = startCli([...rotate(), '--api-key-file', '-', '--app-key-file', '-'], { env: fx.env });
    // stdin stays open: the pre-flight's title is printed right before it reads the keys there.
    await new Promise<void>((resolve) => {
      const seen = () => run.stderr().includes('pre-flight');
      if (seen()) resolve();
      else run.child.stderr.on('data', () => seen() && resolve());
    });
    run.child.kill('SIGTERM');
    const exit = await run.exit;
    expect(exit.code, run.stderr()).toBe(143);
    expect(oneDocument(run.stdout())).toMatchObject({
      code: 'INTERRUPTED',
      exitCode: 143,
      details: { step: 'preflight', signal: 'SIGTERM' },
    });
    expect(run.stderr()).toContain('nothing was enrolled or changed');
    expect(await fx.read()).toBe(before);
    expect(fx.emulator.requests.filter((r) => r.route === 'enroll')).toHaveLength(enrollsBefore);
    await clean();
  });

  it('rollback stopped before the restore changes nothing (SIGTERM, exit 143)', async () => {
    await seeded();
    expect((await fx.run(['rotate-identity', '-c', fx.dir])).code).toBe(0);
    const live = await fx.read();
    const backup = await fx.read(`${IDENTITY}.bak`);
    const run = await interruptAt(['rollback', '-c', fx.dir], fx.env, 'before-restore', ['SIGTERM']);
    expect(run.code, run.stderr).toBe(143);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      'error[INTERRUPTED]: stopped by SIGTERM before step "restore the previous identity": nothing was enrolled or changed',
    );
    expect(await fx.read()).toBe(live);
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(backup);
    await clean();
  });
});

describe('rotate-par-identity (the cluster agent Secret) stopped by a signal', () => {
  let fx: ClusterFixture;
  afterEach(async () => {
    await fx.close();
  });

  const rotate = () => ['rotate-par-identity', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, '--json'];

  it('SIGINT after the enrollment, before the verification: the Secret keeps its identity, the key sent pending in it, exit 130', async () => {
    fx = await clusterFixture();
    expect((await fx.rotate()).code).toBe(0);
    const before = fx.secretData();
    const run = await interruptAt(rotate(), fx.env, 'after-enroll', ['SIGINT']);
    expect(run.code, run.stderr).toBe(130);
    const doc = oneDocument(run.stdout);
    expect(doc).toMatchObject({ command: 'rotate-par-identity', code: 'INTERRUPTED', exitCode: 130 });
    expect(doc.message).toContain(`its private key is kept pending in Secret`);
    expect(doc.message).toContain(`${SECRET} (data key pending_private_key), not in service`);
    const { pending_private_key: pending, ...after } = fx.secretData();
    expect(after).toEqual(before);
    expect(pending).toContain('"runner_name"');
  });

  it('SIGTERM after the verification, before the write: the Secret keeps its identity, the proven key pending with its URN, exit 143', async () => {
    fx = await clusterFixture();
    expect((await fx.rotate()).code).toBe(0);
    const before = fx.secretData();
    const run = await interruptAt(rotate(), fx.env, 'before-write', ['SIGTERM']);
    expect(run.code, run.stderr).toBe(143);
    const { pending_private_key: pending, ...after } = fx.secretData();
    expect(after).toEqual(before);
    const enrolled = fx.enrollment.runners.at(-1)!;
    expect(JSON.parse(pending!)).toMatchObject({ urn: expect.stringContaining(enrolled.runnerId) });
    const doc = oneDocument(run.stdout);
    expect(doc.message).toContain('and the health check accepted it');
    expect(doc.message).toContain('nothing was written');
  });

  it('SIGINT before the enrollment with the Secret missing: nothing is created', async () => {
    fx = await clusterFixture();
    const run = await interruptAt(rotate(), fx.env, 'before-enroll', ['SIGINT']);
    expect(run.code, run.stderr).toBe(130);
    expect(oneDocument(run.stdout).message).toContain('nothing was enrolled or changed');
    expect(fx.secret()).toBeUndefined();
  });
});

describe('a CLI --rollout stopped by a signal', () => {
  const NS = 'datadog';
  let kube: KubeEmulator;
  let dir: string;
  let env: Record<string, string>;
  let stopEnrollment: () => Promise<void>;
  const template = () =>
    (
      kube.getObject('apps/v1', 'Deployment', NS, 'par') as KubeObject & {
        spec: { template: { metadata: { annotations?: Record<string, string> } } };
      }
    ).spec.template.metadata.annotations ?? {};
  const secretData = () =>
    Object.fromEntries(
      Object.entries((kube.getObject('v1', 'Secret', NS, SECRET)?.data ?? {}) as Record<string, string>).map(([k, v]) => [
        k,
        Buffer.from(v, 'base64').toString(),
      ]),
    );
  const rotate = () => ['rotate-par-identity', '-c', dir, '--kubeconfig', join(dir, 'kubeconfig'), '--rollout', 'deployment/par', '--json'];

  afterEach(async () => {
    await Promise.all([kube.close(), stopEnrollment()]);
    await rm(dir, { recursive: true, force: true });
  });

  async function world(): Promise<void> {
    const enrollment = await startEnrollmentEmulator();
    // The cluster agent runs with the settings of the config below (the Helm layout): the -c agrees with it.
    kube = await clusterWithRunner([NS], NS, { enrollmentUrl: enrollment.url });
    stopEnrollment = () => enrollment.close();
    dir = await mkdtemp(join(tmpdir(), 'par-interrupt-rollout-'));
    await kube.writeKubeconfig(join(dir, 'kubeconfig'), { token: kube.adminToken, namespace: NS });
    const yaml = [
      `api_key: ${DEFAULT_API_KEY}`,
      `app_key: ${DEFAULT_APP_KEY}`,
      `dd_url: ${enrollment.url}`,
      'hostname: e2e-host',
      `kube_resources_namespace: ${NS}`,
      'private_action_runner:',
      '  enabled: true',
      '',
    ];
    await writeFile(join(dir, 'datadog-cluster.yaml'), yaml.join('\n'));
    env = {
      DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true',
      PAR_IDENTITY_RETRY_INITIAL_MS: '20',
      PAR_IDENTITY_ROLLOUT_POLL_MS: '30',
      NO_COLOR: '1',
      HOME: dir,
    };
  }

  it('SIGINT once the restart patch is under way: the restart is undone, the new identity stays written and verified, exit 130, one JSON document', async () => {
    await world();
    const before = template();
    const run = await interruptAt(rotate(), env, 'rollout-before-patch', ['SIGINT']);
    expect(run.code, run.stderr).toBe(130);
    const doc = oneDocument(run.stdout);
    const data = secretData();
    expect(doc).toMatchObject({
      command: 'rotate-par-identity',
      code: 'INTERRUPTED',
      exitCode: 130,
      details: { step: 'rollout', phase: 'during', signal: 'SIGINT' },
    });
    expect(doc.message).toContain(`the new identity ${data.urn} is written to`);
    expect(doc.message).toContain('and verified; the rollout was stopped: its restart was undone and the original strategy restored');
    expect(doc.message).toMatch(
      /restarted before the stop: \d+ new Pods? \((some Ready|none Ready yet)\), which the controller puts back onto the original template; not restarted: \d+ Pods? still running/,
    );
    expect(doc.hint).toContain(
      `Restart the workload when you want: \`par-identity rollout deployment/par -n ${NS} --kubeconfig ${join(dir, 'kubeconfig')}\``,
    );
    // The restart patch went out and was undone: the template is the original one again.
    expect(kube.requests.filter((r) => r.resource === 'deployments' && r.verb === 'patch' && r.query.dryRun !== 'All')).toHaveLength(2);
    expect(template()).toEqual(before);
    expect(template()[FINGERPRINT_ANNOTATION]).toBeUndefined();
  });

  it('SIGTERM between the verification and the rollout: written and verified, nothing restarted, exit 143; the hint is `par-identity rollout`', async () => {
    await world();
    const before = template();
    const run = await interruptAt(rotate(), env, 'before-rollout', ['SIGTERM']);
    expect(run.code, run.stderr).toBe(143);
    const doc = oneDocument(run.stdout);
    expect(doc).toMatchObject({ code: 'INTERRUPTED', exitCode: 143, details: { step: 'rollout', phase: 'before', signal: 'SIGTERM' } });
    expect(doc.message).toContain(`the new identity ${secretData().urn}`);
    expect(doc.message).toContain('and verified; the runner was not restarted');
    expect(doc.hint).toContain(
      `Restart deployment/par with \`par-identity rollout deployment/par -n ${NS} --kubeconfig ${join(dir, 'kubeconfig')}\``,
    );
    expect(doc.hint).not.toMatch(/kubectl rollout restart/);
    expect(template()).toEqual(before);
    expect(kube.requests.filter((r) => r.resource === 'deployments' && r.verb === 'patch' && r.query.dryRun !== 'All')).toHaveLength(0);
  });
});
