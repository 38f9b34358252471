import { chmod, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseIdentityFile } from '../../src/identity/identity-record.js';
import { expectNoSecrets, IDENTITY, type LocalFixture, localFixture, secretsIn } from './local-fixture.js';

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(async () => {
  await fx.close();
});

async function rotate(): Promise<string> {
  const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
  expect(run.code, run.stderr).toBe(0);
  return fx.read();
}

describe('status', () => {
  it('reports URN parts, fingerprint, file facts, backup and the re-enroll check as JSON', async () => {
    const first = await rotate();
    const second = await rotate();
    const run = await fx.run(['status', '-c', fx.dir, '--verify', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    const urn = parseIdentityFile(second).urn;
    expect(out).toMatchObject({
      schemaVersion: 1,
      command: 'status',
      urn,
      orgId: 1234567,
      region: 'us1',
      runnerId: urn.split(':')[6],
      identityFile: fx.identityPath,
      file: { mode: '0600', uid: process.getuid?.(), gid: process.getgid?.() },
      backup: { urn: parseIdentityFile(first).urn },
      agentWouldReEnroll: false,
      verify: { performed: true, ok: true },
    });
    expect(out.fingerprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expectNoSecrets(run, secretsIn(second));
  });

  it('warns that the agent would re-enroll when hostname or API key changed, and exits 14 so a runbook stops', async () => {
    await rotate();
    const kept = await fx.run(['status', '-c', fx.dir, '--json']);
    expect(kept.code, kept.stderr).toBe(0);
    const human = await fx.run(['status', '-c', fx.dir], { env: { DD_HOSTNAME: 'another-host' } });
    expect(human.code, human.stderr).toBe(14);
    const run = await fx.run(['status', '-c', fx.dir, '--json'], {
      env: { DD_HOSTNAME: 'another-host', DD_API_KEY: 'another-key-0000000000000000000000' },
    });
    expect(run.code, run.stderr).toBe(14);
    const out = JSON.parse(run.stdout) as { agentWouldReEnroll: boolean; reEnrollReasons: string[] };
    expect(out.agentWouldReEnroll).toBe(true);
    expect(out.reEnrollReasons).toHaveLength(2);
  });

  it('missing identity → exit 7 IDENTITY_MISSING; corrupt → exit 7 IDENTITY_CORRUPT', async () => {
    const missing = await fx.run(['status', '-c', fx.dir]);
    expect(missing.code).toBe(7);
    expect(missing.stderr).toContain('error[IDENTITY_MISSING]');
    await writeFile(fx.identityPath, '{"urn":"x"}');
    const corrupt = await fx.run(['status', '-c', fx.dir]);
    expect(corrupt.code).toBe(7);
    expect(corrupt.stderr).toContain('error[IDENTITY_CORRUPT]');
  });

  it('--verify against a revoked runner → exit 8', async () => {
    await rotate();
    fx.emulator.revoke(fx.emulator.runners.at(-1)!.runnerId);
    const run = await fx.run(['status', '-c', fx.dir, '--verify']);
    expect(run.code).toBe(8);
    expect(run.stderr).toContain('error[VERIFICATION_FAILED]');
  });

  it('flags a file mode other than 0600', async () => {
    await rotate();
    await chmod(fx.identityPath, 0o640);
    const run = await fx.run(['status', '-c', fx.dir]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('mode 0640');
  });
});

describe('rollback', () => {
  it('swaps the backup back in, keeps the rotated one as .bak, verifies it', async () => {
    const first = await rotate();
    const second = await rotate();
    const run = await fx.run(['rollback', '-c', fx.dir, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(await fx.read()).toBe(first);
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(second);
    expect(JSON.parse(run.stdout)).toMatchObject({
      command: 'rollback',
      urn: parseIdentityFile(first).urn,
      replacedUrn: parseIdentityFile(second).urn,
      verify: { performed: true, ok: true },
    });
    expect(run.stderr).not.toContain('warning');
    // Rolling back twice is a roll forward.
    const again = await fx.run(['rollback', '-c', fx.dir, '--no-verify']);
    expect(again.code, again.stderr).toBe(0);
    expect(await fx.read()).toBe(second);
  });

  it('refuses without a backup (exit 7 NO_BACKUP) and changes nothing', async () => {
    const only = await rotate();
    const run = await fx.run(['rollback', '-c', fx.dir]);
    expect(run.code).toBe(7);
    expect(run.stderr).toContain('error[NO_BACKUP]');
    expect(await fx.read()).toBe(only);
    expect(await fx.files()).toEqual(['datadog.yaml', IDENTITY]);
  });

  it('--dry-run runs the same steps as their plans: the files stay as they are, the plan names the swap', async () => {
    const first = await rotate();
    const second = await rotate();
    const before = await fx.files();
    const run = await fx.run(['rollback', '-c', fx.dir, '--dry-run', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { dryRun: boolean; urn: string; replacedUrn: string; plan: { step: string; action: string }[] };
    expect(out).toMatchObject({
      command: 'rollback',
      dryRun: true,
      urn: parseIdentityFile(first).urn,
      replacedUrn: parseIdentityFile(second).urn,
      identityFile: fx.identityPath,
    });
    expect(out.plan.map((p) => p.step)).toEqual(['resolve', 'lock', 'read', 'verify', 'restore']);
    expect(out.plan.find((p) => p.step === 'restore')!.action).toContain(
      `swap ${fx.identityPath}.bak (${parseIdentityFile(first).urn}) into ${fx.identityPath}`,
    );
    expect(run.stderr).toContain('[dry run] restore the previous identity');
    expect(await fx.read()).toBe(second);
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(first);
    expect(await fx.files()).toEqual(before);
  });

  it('--dry-run fails where the real run would: no backup → exit 7 NO_BACKUP', async () => {
    await rotate();
    const run = await fx.run(['rollback', '-c', fx.dir, '--dry-run']);
    expect(run.code, run.stderr).toBe(7);
    expect(run.stderr).toContain('error[NO_BACKUP]');
  });

  it('refuses a corrupt backup (exit 7 BACKUP_CORRUPT)', async () => {
    const only = await rotate();
    await writeFile(`${fx.identityPath}.bak`, 'garbage');
    const run = await fx.run(['rollback', '-c', fx.dir]);
    expect(run.code).toBe(7);
    expect(run.stderr).toContain('error[BACKUP_CORRUPT]');
    expect(await fx.read()).toBe(only);
  });
});
