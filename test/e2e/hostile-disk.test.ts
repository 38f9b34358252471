import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from './attacker.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';
import { eventually } from './watch-fixture.js';

// A full disk (issue 31, point 9): the identity's directory on a 64 KiB tmpfs. ENOSPC is named as
// such (NO_SPACE, exit 7), never "check permissions"; the pre-flight refuses before enrolling when
// the room for what a rotation writes is not there; and a runner enrolled before the disk filled up
// is named in --json (the error's details), not on stderr only. Mounting needs root: skipped with
// the reason otherwise, as the attacker suites are.

const CAN_MOUNT = ROOT && spawnSync('mount', ['--version']).status === 0;
const why = CAN_MOUNT ? '' : ' [SKIPPED: needs root to mount a small tmpfs]';

interface ErrorDoc {
  code: string;
  message: string;
  hint: string;
  details?: Record<string, unknown>;
}

/** Fills the file system of `dir` (one file, written in 4 KiB pieces until ENOSPC), leaving `leaveBlocks` of 4 KiB. */
function fill(dir: string, leaveBlocks = 0): void {
  const name = join(dir, `filler-${readdirSync(dir).length}`);
  const chunk = Buffer.alloc(4096, 1);
  let blocks = 0;
  try {
    for (;;) {
      writeFileSync(name, chunk, { flag: 'a' });
      blocks++;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
  if (leaveBlocks > 0) {
    // Rewritten shorter: exactly `leaveBlocks` free.
    writeFileSync(name, Buffer.alloc(Math.max(0, blocks - leaveBlocks) * 4096, 1));
  }
}

describe.skipIf(!CAN_MOUNT)(`the identity directory on a full file system${why}`, () => {
  let fx: LocalFixture;
  let mnt: string;
  let identity: string;
  beforeEach(async () => {
    fx = await localFixture();
    mnt = join(fx.dir, 'small');
    mkdirSync(mnt);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0755', 'tmpfs', mnt]);
    identity = join(mnt, IDENTITY);
    // An identity in service to begin with.
    const first = await fx.run(['rotate-identity', '-c', fx.dir, '--identity-file', identity, '--no-verify']);
    expect(first.code, first.stderr).toBe(0);
  });
  afterEach(async () => {
    spawnSync('umount', ['-l', mnt]);
    await fx.close();
  });

  const rotate = () => fx.run(['rotate-identity', '-c', fx.dir, '--identity-file', identity, '--no-verify', '--json']);
  const enrolled = () => fx.emulator.requests.filter((r) => r.route === 'enroll').length;

  it('no room for the lock: NO_SPACE naming ENOSPC and the lock, not "check permissions"; nothing enrolled', async () => {
    fill(mnt);
    const before = enrolled();
    const run = await rotate();
    expect(run.code, run.stderr).toBe(7);
    const doc = JSON.parse(run.stdout) as ErrorDoc;
    expect(doc.code).toBe('NO_SPACE');
    expect(doc.message).toContain(`cannot write the lock ${identity}.lock`);
    expect(doc.message).toContain('ENOSPC');
    expect(doc.hint).not.toMatch(/permission/i);
    expect(enrolled()).toBe(before);
    // No temp file of the lock left behind.
    expect(readdirSync(mnt).filter((n) => n.includes('.lock'))).toEqual([]);
  });

  it('room for the lock but not for what a rotation writes: refused before enrolling (NO_SPACE), the identity untouched', async () => {
    fill(mnt, 2);
    const before = enrolled();
    const run = await rotate();
    expect(run.code, run.stderr).toBe(7);
    const doc = JSON.parse(run.stdout) as ErrorDoc;
    expect(doc.code).toBe('NO_SPACE');
    expect(doc.message).toContain(`the file system of ${mnt} has no room for a rotation`);
    expect(doc.hint).toContain('Nothing was enrolled.');
    expect(enrolled()).toBe(before);
    expect(existsSync(`${identity}.pending`)).toBe(false);
  });

  it('the disk fills up while enrolling: NO_SPACE, and the enrolled runner and its pending key are in --json', async () => {
    fx.emulator.script('enroll', { delayMs: 4000 });
    const running = rotate();
    // The pending key is written just before the request leaves; the disk fills while Datadog answers.
    await eventually(() => expect(existsSync(`${identity}.pending`)).toBe(true), 30_000);
    fill(mnt);
    const run = await running;
    expect(run.code, run.stderr).toBe(7);
    const doc = JSON.parse(run.stdout) as ErrorDoc;
    expect(doc.code).toBe('NO_SPACE');
    expect(doc.message).toContain('ENOSPC');
    const runner = fx.emulator.runners.at(-1)!;
    expect(doc.details).toMatchObject({
      orphanedUrn: expect.stringContaining(runner.runnerId),
      orphanedFingerprint: runner.publicKeyThumbprint,
      pendingKey: `${identity}.pending`,
    });
  });
});
