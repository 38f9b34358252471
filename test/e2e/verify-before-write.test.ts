import { chmod, chown } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeIdentity } from '../../src/identity/index.js';
import { parseIdentityFile } from '../../src/identity/identity-record.js';
import { NOBODY, ROOT, ROOT_ONLY } from './attacker.js';
import { type ClusterFixture, clusterFixture } from './cluster-fixture.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';
import { type RunningCli, startCli } from './run-cli.js';
import { eventually } from './watch-fixture.js';

// Proven before it is live (issue 31, "Verify, then write"): every target is enrolled, then proven
// with the signed health check, and only then written where a runner reads it. A rejected key (401)
// is never written: exit 8, the file and the Secret unchanged, `watch` replicas never load it. A
// health check unavailable until the deadline (503) is exit 16: nothing written, and the next run
// verifies the SAME pending key again and writes it, without a second enrollment. rollback proves the
// previous identity before it puts it back. A rotation names the runner it replaced, and says whether
// Datadog removes it by itself; no note when nothing was replaced.

const UNAUTHORIZED = { status: 401, body: '{"errors":["Unauthorized"]}' };
/** More 503s than a run with --timeout 6s can send (the retries start at 20 ms): unavailable until its deadline. */
const UNAVAILABLE = Array.from({ length: 400 }, () => ({ status: 503 }));

function oneDocument(stdout: string): Record<string, unknown> & { details: Record<string, unknown> } {
  const lines = stdout.trim().split('\n');
  expect(lines, stdout).toHaveLength(1);
  return JSON.parse(lines[0]!);
}

const kidOf = (text: string) => decodeIdentity(parseIdentityFile(text)).key.kid;

describe('the identity file: verify, then write', () => {
  let fx: LocalFixture;
  afterEach(async () => {
    await fx.close();
  });

  it('503 until the deadline: exit 16 VERIFY_UNAVAILABLE, nothing written; the next run writes the same pending key without enrolling again', async () => {
    fx = await localFixture();
    const seed = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(seed.code, seed.stderr).toBe(0);
    const before = await fx.read();
    const filesBefore = await fx.files();

    fx.emulator.script('health', ...UNAVAILABLE);
    const enrolledBefore = fx.emulator.runners.length;
    const down = await fx.run(['rotate-identity', '-c', fx.dir, '--timeout', '6s', '--json']);
    expect(down.code, down.stderr).toBe(16);
    const error = oneDocument(down.stdout);
    expect(error).toMatchObject({ code: 'VERIFY_UNAVAILABLE', exitCode: 16, details: { pendingKey: `${fx.identityPath}.pending` } });
    expect(error.message).toContain(`nothing was written to identity file ${fx.identityPath}`);
    expect(error.hint).toContain('verifies the same key again');
    expect(down.stderr).not.toContain('roll back');
    expect(fx.emulator.runners.length).toBe(enrolledBefore + 1);
    const pendingUrn = error.details.urn as string;
    expect(await fx.read()).toBe(before);
    expect(await fx.files()).toEqual([...filesBefore, `${IDENTITY}.pending`].sort());
    expect(JSON.parse(await fx.read(`${IDENTITY}.pending`))).toMatchObject({ urn: pendingUrn });
    expect(JSON.parse(await fx.read(`${IDENTITY}.pending`)).verification).toBeUndefined();

    // Datadog answers again: the next run proves and writes that same key, and enrolls nothing.
    fx.emulator.reset();
    const up = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
    expect(up.code, up.stderr).toBe(0);
    expect(fx.emulator.runners.length).toBe(enrolledBefore + 1);
    expect(fx.emulator.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
    expect(JSON.parse(up.stdout)).toMatchObject({
      urn: pendingUrn,
      fingerprint: error.details.fingerprint,
      verify: { performed: true, ok: true },
    });
    expect(parseIdentityFile(await fx.read()).urn).toBe(pendingUrn);
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(before);
    expect(await fx.files()).toEqual([...filesBefore, `${IDENTITY}.bak`].sort());
    // Written verified: the mark names it with the name it was enrolled with.
    expect(JSON.parse(await fx.read(`${IDENTITY}.verified`))).toMatchObject({
      urn: pendingUrn,
      fingerprint: kidOf(await fx.read()),
      runnerName: fx.emulator.runners.at(-1)!.name,
    });
  });

  it.runIf(ROOT)(
    `a pending key that belongs to uid ${NOBODY} in a sticky directory is never put in service: set aside, and a new runner enrolled${ROOT_ONLY}`,
    async () => {
      fx = await localFixture();
      expect((await fx.run(['rotate-identity', '-c', fx.dir])).code).toBe(0);
      fx.emulator.script('health', ...UNAVAILABLE);
      const down = await fx.run(['rotate-identity', '-c', fx.dir, '--timeout', '6s', '--json']);
      expect(down.code, down.stderr).toBe(16);
      const pendingUrn = oneDocument(down.stdout).details.urn;
      fx.emulator.reset();
      // As if planted by another user: its key would be one its planter holds.
      await chmod(fx.dir, 0o1777);
      await chown(join(fx.dir, `${IDENTITY}.pending`), NOBODY, NOBODY);
      const enrolled = fx.emulator.runners.length;
      const next = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
      expect(next.code, next.stderr).toBe(0);
      expect(fx.emulator.runners.length).toBe(enrolled + 1);
      expect(JSON.parse(next.stdout).urn).not.toBe(pendingUrn);
    },
  );

  it('a rejected key is the record of the runner to remove: status lists it by URN (exit 15); the next rotation sets it aside and enrolls anew', async () => {
    fx = await localFixture();
    expect((await fx.run(['rotate-identity', '-c', fx.dir])).code).toBe(0);
    fx.emulator.script('health', UNAUTHORIZED);
    const rejected = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
    expect(rejected.code, rejected.stderr).toBe(8);
    const error = oneDocument(rejected.stdout);
    expect(error).toMatchObject({ code: 'VERIFICATION_FAILED', details: { pendingKey: `${fx.identityPath}.pending` } });
    const urn = error.details.urn as string;

    const status = await fx.run(['status', '-c', fx.dir, '--json']);
    expect(status.code, status.stderr).toBe(15);
    expect(JSON.parse(status.stdout).possibleOrphans).toEqual([
      expect.objectContaining({ state: 'pending', urn, rejected: true, fingerprint: error.details.fingerprint }),
    ]);

    const enrolledBefore = fx.emulator.runners.length;
    const next = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(fx.emulator.runners.length).toBe(enrolledBefore + 1);
    expect(JSON.parse(next.stdout).urn).not.toBe(urn);
    expect(next.stderr).toContain(`a run whose new key the health check rejected left the key ${error.details.fingerprint as string}`);
    expect((await fx.files()).filter((f) => f.startsWith(`${IDENTITY}.pending-`))).toHaveLength(1);
  });

  it('rollback proves the previous identity first: rejected → exit 8 and nothing swapped; unavailable → exit 16 and nothing swapped', async () => {
    fx = await localFixture();
    expect((await fx.run(['rotate-identity', '-c', fx.dir])).code).toBe(0);
    expect((await fx.run(['rotate-identity', '-c', fx.dir])).code).toBe(0);
    const live = await fx.read();
    const backup = await fx.read(`${IDENTITY}.bak`);

    fx.emulator.script('health', ...UNAVAILABLE);
    const down = await fx.run(['rollback', '-c', fx.dir, '--timeout', '4s']);
    expect(down.code, down.stderr).toBe(16);
    expect(down.stderr).toContain('error[VERIFY_UNAVAILABLE]');
    expect([await fx.read(), await fx.read(`${IDENTITY}.bak`)]).toEqual([live, backup]);
    fx.emulator.reset();

    // The previous runner was removed in Datadog: its identity is rejected, and never put back.
    fx.emulator.revoke(decodeIdentity(parseIdentityFile(backup)).urn.runnerId);
    const rejected = await fx.run(['rollback', '-c', fx.dir]);
    expect(rejected.code, rejected.stderr).toBe(8);
    expect(rejected.stderr).toContain(`the server rejected the previous identity ${parseIdentityFile(backup).urn}`);
    expect([await fx.read(), await fx.read(`${IDENTITY}.bak`)]).toEqual([live, backup]);
  });

  it('the previous runner: none on a first rotation; named, with Datadog deleting an API-key-only node runner after 35 days', async () => {
    fx = await localFixture();
    const first = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).previousRunner).toBeNull();
    const firstText = await fx.run(['status', '-c', fx.dir]);
    expect(firstText.code).toBe(0);

    await fx.writeConfig('  api_key_only_enrollment: true');
    const before = parseIdentityFile(await fx.read()).urn;
    const name = fx.emulator.runners.at(-1)!.name;
    const second = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).previousRunner).toEqual({ urn: before, name, removedByDatadog: 'after-35-days-inactive' });
    const third = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(third.code, third.stderr).toBe(0);
    expect(third.stdout).toContain(`previous runner: ${JSON.parse(second.stdout).urn}`);
    expect(third.stdout).toContain('Datadog deletes it by itself after 35 days without contact');
  });

  it('no previous-runner note when nothing was replaced', async () => {
    fx = await localFixture();
    const first = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).not.toMatch(/previous runner/i);
  });
});

describe('the cluster agent Secret: verify, then write', () => {
  let fx: ClusterFixture;
  const watches: RunningCli[] = [];
  afterEach(async () => {
    for (const w of watches.splice(0)) w.child.kill('SIGKILL');
    await fx.close();
  });

  /** A `watch` replica writing what it loads to `output`; the fingerprints of what it wrote. */
  function replica(output: string): { run: RunningCli; written: () => string[] } {
    const run = startCli(['watch', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, '--output', output, '--json'], { env: fx.env });
    watches.push(run);
    const written = () =>
      run
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event?: string; fingerprint?: string })
        .filter((l) => l.event === 'written')
        .map((l) => l.fingerprint ?? '');
    return { run, written };
  }
  const kidOfSecret = (data: Record<string, string>) => decodeIdentity({ privateKey: data.private_key!, urn: data.urn! }).key.kid;

  it('401: exit 8, the Secret unchanged, and the watch replicas never load the rejected key', async () => {
    fx = await clusterFixture();
    expect((await fx.rotate()).code).toBe(0);
    const before = fx.secretData();
    const replicas = [replica(`${fx.dir}/a.json`), replica(`${fx.dir}/b.json`)];
    for (const r of replicas) await eventually(() => expect(r.written()).toEqual([kidOfSecret(before)]), 20_000);

    fx.enrollment.script('health', UNAUTHORIZED);
    const rejected = await fx.rotate(['--json']);
    expect(rejected.code, rejected.stderr).toBe(8);
    const error = oneDocument(rejected.stdout);
    expect(error.message).toContain(`nothing was written to Secret datadog/private-action-runner-identity`);
    const { pending_private_key: pending, ...after } = fx.secretData();
    expect(after).toEqual(before);
    expect(JSON.parse(pending!)).toMatchObject({ urn: error.details.urn, verification: 'rejected' });

    // A rotation that passes: each replica loads it next, and has loaded nothing in between.
    const good = await fx.rotate();
    expect(good.code, good.stderr).toBe(0);
    const now = kidOfSecret(fx.secretData());
    for (const r of replicas) await eventually(() => expect(r.written()).toEqual([kidOfSecret(before), now]), 20_000);
    for (const r of replicas) expect(r.written()).not.toContain(error.details.fingerprint);
  });

  it('503 until the deadline: exit 16, the Secret unchanged; the next run writes the same pending key without a second enrollment; the cluster agent runner is never removed by Datadog', async () => {
    fx = await clusterFixture();
    expect((await fx.rotate()).code).toBe(0);
    const before = fx.secretData();
    fx.enrollment.script('health', ...UNAVAILABLE);
    const down = await fx.rotate(['--timeout', '6s', '--json']);
    expect(down.code, down.stderr).toBe(16);
    const error = oneDocument(down.stdout);
    expect(error.code).toBe('VERIFY_UNAVAILABLE');
    const { pending_private_key: pending, ...after } = fx.secretData();
    expect(after).toEqual(before);
    expect(JSON.parse(pending!)).toMatchObject({ urn: error.details.urn });

    fx.enrollment.reset();
    const enrolled = fx.enrollment.runners.length;
    const up = await fx.rotate(['--json']);
    expect(up.code, up.stderr).toBe(0);
    expect(fx.enrollment.runners.length).toBe(enrolled);
    expect(fx.enrollment.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
    const out = JSON.parse(up.stdout);
    expect(out).toMatchObject({ urn: error.details.urn, previousRunner: { urn: before.urn, removedByDatadog: 'never' } });
    expect(fx.secretData()).toMatchObject({ urn: error.details.urn, previous_urn: before.urn });
    expect(fx.secretData().pending_private_key).toBeUndefined();
  });
});
