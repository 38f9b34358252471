import { chmod, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { decodeIdentity } from '../../src/identity/index.js';
import { parseIdentityFile } from '../../src/identity/identity-record.js';
import { asNobody, NOBODY, ROOT, ROOT_ONLY } from './attacker.js';
import { type ClusterFixture, clusterFixture } from './cluster-fixture.js';
import { describeEachLauncher } from './launchers.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';

// The last verified identity is never lost (issue 24; docs/identity-lifecycle.md §2): identities put in
// service without a check (--no-verify; a rejected one is never written, issue 31) never push the
// identity that last passed verification out of the previous place (the backup file, the Secret's
// previous_*); status says which identity was last verified, and rollback restores it. Before, the
// second run put the first run's unverified identity in the backup, and the verified one was on disk
// nowhere. And the mark that says which identity passed is not taken from a stranger: one planted by
// uid 65534 in a sticky directory would otherwise make the next rotation drop the identity in service.

const kidOf = (text: string) => decodeIdentity(parseIdentityFile(text)).key.kid;
const urnOf = (text: string) => parseIdentityFile(text).urn;

describeEachLauncher('the last verified identity of a file is never lost', (launcher) => {
  let fx: LocalFixture;
  beforeEach(async () => {
    fx = await localFixture();
  });
  afterEach(async () => {
    await fx.close();
  });
  const run = (args: string[]) => fx.run(args, launcher.options);
  const reject = () => fx.emulator.script('health', { status: 401, body: '{"errors":["Unauthorized"]}' });

  it('a rejected rotation writes nothing; two unverified ones keep the verified identity as the backup; status names it; rollback restores it', async () => {
    const seed = await run(['rotate-identity', '-c', fx.dir]);
    expect(seed.code, seed.stderr).toBe(0);
    const verified = await fx.read();
    const mark = JSON.parse(await fx.read(`${IDENTITY}.verified`)) as Record<string, string>;
    expect(mark).toMatchObject({ fingerprint: kidOf(verified), urn: urnOf(verified) });
    expect((await stat(join(fx.dir, `${IDENTITY}.verified`))).mode & 0o777).toBe(0o600);

    reject();
    const rejected = await run(['rotate-identity', '-c', fx.dir]);
    expect(rejected.code, rejected.stderr).toBe(8);
    expect(rejected.stderr).toContain('nothing was written');
    expect(await fx.read()).toBe(verified);

    const first = await run(['rotate-identity', '-c', fx.dir, '--no-verify']);
    expect(first.code, first.stderr).toBe(0);
    const unverified = await fx.read();
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(verified);

    const between = await run(['status', '-c', fx.dir, '--json']);
    // The rejected run's key, set aside by the next rotation: the record of the runner to remove (exit 15).
    expect(between.code, between.stderr).toBe(15);
    expect(JSON.parse(between.stdout).possibleOrphans).toEqual([
      expect.objectContaining({ state: 'set aside', urn: expect.stringMatching(/^urn:dd:apps:on-prem-runner:/), rejected: true }),
    ]);
    expect(JSON.parse(between.stdout).lastVerified).toMatchObject({ fingerprint: kidOf(verified), urn: urnOf(verified), is: 'previous' });

    const second = await run(['rotate-identity', '-c', fx.dir, '--no-verify']);
    expect(second.code, second.stderr).toBe(0);
    // The old code put `unverified` here: the verified identity was then on disk nowhere.
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(verified);
    expect(second.stderr).toContain(`${urnOf(unverified)} (in service, never verified) is replaced and not kept`);

    const human = await run(['status', '-c', fx.dir]);
    expect(human.stdout).toContain(`last verified: ${urnOf(verified)} (fingerprint ${kidOf(verified)})`);
    expect(human.stdout).toContain('the PREVIOUS identity');

    const back = await run(['rollback', '-c', fx.dir]);
    expect(back.code, back.stderr).toBe(0);
    expect(await fx.read()).toBe(verified);
    const after = await run(['status', '-c', fx.dir, '--json']);
    expect(JSON.parse(after.stdout).lastVerified).toMatchObject({ fingerprint: kidOf(verified), is: 'current' });
  });

  it.runIf(ROOT)(
    `a mark planted by uid ${NOBODY} in a sticky 1777 directory, naming the backup verified and the live identity unverified: not believed; the live identity is kept as the backup${ROOT_ONLY}`,
    async () => {
      // Two rotations without a check: nothing was ever verified here, and there is no mark.
      expect((await run(['rotate-identity', '-c', fx.dir, '--no-verify'])).code).toBe(0);
      expect((await run(['rotate-identity', '-c', fx.dir, '--no-verify'])).code).toBe(0);
      const live = await fx.read();
      const backup = await fx.read(`${IDENTITY}.bak`);
      await chmod(fx.dir, 0o1777);
      const forged = { fingerprint: kidOf(backup), urn: urnOf(backup), verifiedAt: '2026-01-01T00:00:00.000Z', unverified: kidOf(live) };
      asNobody(`umask 022; cat > '${join(fx.dir, `${IDENTITY}.verified`)}'`, JSON.stringify(forged));

      const status = await run(['status', '-c', fx.dir, '--json']);
      const rotate = await run(['rotate-identity', '-c', fx.dir, '--no-verify']);
      expect(rotate.code, rotate.stderr).toBe(0);
      // Believed, the mark would have the identity in service replaced and not kept: on disk nowhere.
      expect(await fx.read(`${IDENTITY}.bak`)).toBe(live);
      expect(rotate.stderr).not.toContain('is replaced and not kept');
      expect(rotate.stderr).toContain(`${IDENTITY}.verified belongs to uid ${NOBODY}`);

      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout).lastVerified).toBeNull();
      expect(status.stderr).toContain(`${IDENTITY}.verified belongs to uid ${NOBODY}`);
    },
  );
});

describeEachLauncher('the last verified identity of a Secret is never lost', (launcher) => {
  let cx: ClusterFixture;
  beforeEach(async () => {
    cx = await clusterFixture();
  });
  afterEach(async () => {
    await cx.close();
  });
  const reject = () => cx.enrollment.script('health', { status: 401, body: '{"errors":["Unauthorized"]}' });

  it('rotate-par-identity: a rejected rotation writes nothing; two unverified ones keep the verified identity in previous_*; status --secret names it; rollback restores it', async () => {
    const seed = await cx.rotate([], launcher.options);
    expect(seed.code, seed.stderr).toBe(0);
    const verified = cx.secretData();
    const kid = decodeIdentity({ privateKey: verified.private_key!, urn: verified.urn! }).key.kid;

    reject();
    const rejected = await cx.rotate([], launcher.options);
    expect(rejected.code, rejected.stderr).toBe(8);
    expect([cx.secretData().urn, cx.secretData().private_key]).toEqual([verified.urn, verified.private_key]);

    const first = await cx.rotate(['--no-verify'], launcher.options);
    expect(first.code, first.stderr).toBe(0);
    const unverified = cx.secretData();
    expect(unverified.previous_urn).toBe(verified.urn);

    const second = await cx.rotate(['--no-verify'], launcher.options);
    expect(second.code, second.stderr).toBe(0);
    const after = cx.secretData();
    // The old code kept the first failed run's identity here.
    expect([after.previous_urn, after.previous_private_key]).toEqual([verified.urn, verified.private_key]);
    expect(second.stderr).toContain(`${unverified.urn} (in service, never verified) is replaced and not kept`);

    const status = await cx.run(['status', '--secret', '-c', cx.dir, '--kubeconfig', cx.adminKubeconfig, '--json'], launcher.options);
    // The rejected run's key, set aside by the next rotation: the record of the runner to remove (exit 15).
    expect(status.code, status.stderr).toBe(15);
    expect(JSON.parse(status.stdout).lastVerified).toMatchObject({ fingerprint: kid, urn: verified.urn, is: 'previous' });
    const back = await cx.run(['rollback', '--secret', '-c', cx.dir, '--kubeconfig', cx.adminKubeconfig], launcher.options);
    expect(back.code, back.stderr).toBe(0);
    expect(cx.secretData().urn).toBe(verified.urn);
  });
});
