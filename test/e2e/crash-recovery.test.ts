import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FAILPOINTS } from '../../src/failpoint.js';
import { decodeIdentity } from '../../src/identity/index.js';
import { parseIdentityFile } from '../../src/identity/identity-record.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';

// kill -9 at every failpoint of rotate-identity and rollback (the built binary): afterwards a complete
// identity is in service, and every identity the run touched is complete in the live file, the backup
// or a <name>.restore-* file that `status` reports — never only in a temp file a sweep deletes.

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

/** Content of every file a next run finds and keeps: live, .bak, .restore-*, .corrupt-*. */
async function stableCopies(): Promise<Map<string, string>> {
  const names = (await readdir(fx.dir)).filter(
    (n) => n === IDENTITY || n === `${IDENTITY}.bak` || n.startsWith(`${IDENTITY}.restore-`) || n.startsWith(`${IDENTITY}.corrupt-`),
  );
  return new Map(await Promise.all(names.map(async (n) => [n, await readFile(join(fx.dir, n), 'utf8')] as [string, string])));
}

async function statusAfterCrash(
  orphanPossible = false,
): Promise<{ recoverable: { path: string; urn?: string; sameAs: string | null }[]; urn: string }> {
  const status = await fx.run(['status', '-c', fx.dir, '--json']);
  // Killed after enrolling and before the write: the pending key is a possible orphan (exit 15).
  expect(status.code, status.stderr).toBe(orphanPossible ? 15 : 0);
  expect((await readdir(fx.dir)).filter((n) => n.includes('.tmp-'))).toEqual([]);
  return JSON.parse(status.stdout) as { recoverable: { path: string; urn?: string; sameAs: string | null }[]; urn: string };
}

const reachedByRotate = FAILPOINTS.replace.filter((p) => p !== 'after-keep-aside');

describe('rotate-identity killed at each failpoint', () => {
  it.each(['after-enroll', ...reachedByRotate])(
    '%s: the old identity stays complete, the enrolled one is in service or kept as .restore-*',
    async (point) => {
      await rotate();
      const before = await rotate();
      const previousBackup = await fx.read(`${IDENTITY}.bak`);
      const runnersBefore = fx.emulator.runners.length;
      const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], { env: { PAR_IDENTITY_FAILPOINT: point } });
      expect(run.signal).toBe('SIGKILL');
      const status = await statusAfterCrash(point === 'after-enroll');
      const copies = [...(await stableCopies()).values()];
      // The identity that was in service is still complete somewhere stable, and the live file decodes.
      expect(copies).toContain(before);
      expect(decodeIdentity(parseIdentityFile(await fx.read())).urn.orgId).toBe(1234567);
      expect([before, previousBackup]).toContain(await fx.read(`${IDENTITY}.bak`));
      if (point === 'after-enroll') {
        // Enrolled but never written: its key is the pending file status reports (docs/identity-lifecycle.md §3).
        expect(fx.emulator.runners.length).toBe(runnersBefore + 1);
        expect(await fx.read()).toBe(before);
        expect(await fx.files()).toContain(`${IDENTITY}.pending`);
        return;
      }
      const enrolled = fx.emulator.runners.at(-1)!;
      const holders = copies.filter((c) => parseIdentityFile(c).urn.endsWith(`:${enrolled.runnerId}`));
      expect(holders.length, `enrolled runner ${enrolled.runnerId} found in no stable file`).toBeGreaterThan(0);
      const live = parseIdentityFile(await fx.read()).urn;
      if (!live.endsWith(`:${enrolled.runnerId}`)) {
        expect(status.recoverable.map((r) => r.urn)).toContain(parseIdentityFile(holders[0]!).urn);
      }
    },
  );

  it('after-keep-aside (rotation over a corrupt live file): the good backup is untouched, the corrupt bytes are kept', async () => {
    await rotate();
    await rotate();
    const good = await fx.read(`${IDENTITY}.bak`);
    await writeFile(fx.identityPath, 'corrupt-bytes', { mode: 0o600 });
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], { env: { PAR_IDENTITY_FAILPOINT: 'after-keep-aside' } });
    expect(run.signal).toBe('SIGKILL');
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(good);
    // The live file is still the corrupt one: status says so (exit 7) and its sweep keeps the enrolled key.
    const status = await fx.run(['status', '-c', fx.dir]);
    expect(status.code).toBe(7);
    expect(status.stderr).toContain('error[IDENTITY_CORRUPT]');
    expect(status.stderr).toMatch(/kept as .*\.restore-/);
    const copies = await stableCopies();
    expect([...copies.entries()].filter(([n]) => n.includes('.corrupt-')).map(([, c]) => c)).toEqual(['corrupt-bytes']);
    const enrolled = fx.emulator.runners.at(-1)!;
    expect([...copies.values()].some((c) => c.includes(enrolled.runnerId))).toBe(true);
  });
});

const reachedByRollback = FAILPOINTS.swap.filter((p) => p !== 'swap-after-keep-backup' && p !== 'swap-after-remove-source');

describe('rollback killed at each failpoint', () => {
  it.each(reachedByRollback)('%s: both identities stay complete in files the next run finds and reports', async (point) => {
    const first = await rotate();
    const second = await rotate();
    const run = await fx.run(['rollback', '-c', fx.dir, '--no-verify'], { env: { PAR_IDENTITY_FAILPOINT: point } });
    expect(run.signal).toBe('SIGKILL');
    const status = await statusAfterCrash();
    const copies = await stableCopies();
    const values = [...copies.values()];
    expect(values).toContain(first);
    expect(values).toContain(second);
    const live = await fx.read();
    expect([first, second]).toContain(live);
    const backup = await fx.read(`${IDENTITY}.bak`);
    // Whichever identity is in neither the live file nor the backup is listed by status as recoverable.
    for (const [text, urn] of [first, second].map((t) => [t, parseIdentityFile(t).urn] as const)) {
      if (text !== live && text !== backup) expect(status.recoverable.filter((r) => r.sameAs === null).map((r) => r.urn)).toContain(urn);
    }
  });

  it('swap-after-rename: status names the recovery file that holds the replaced identity', async () => {
    await rotate();
    const second = await rotate();
    await fx.run(['rollback', '-c', fx.dir, '--no-verify'], { env: { PAR_IDENTITY_FAILPOINT: 'swap-after-rename' } });
    const status = await statusAfterCrash();
    const pending = status.recoverable.find((r) => r.sameAs === null)!;
    expect(await readFile(pending.path, 'utf8')).toBe(second);
    const human = await fx.run(['status', '-c', fx.dir]);
    expect(human.stdout).toContain(`recoverable:  ${pending.path} (${parseIdentityFile(second).urn})`);
  });
});
