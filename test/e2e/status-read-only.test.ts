import { chmod, chown, readdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';
import { portableBin } from './portable-bin.js';

// `status` only reads (issue 23, "Checks that check"): a directory its user cannot write — a read-only
// mount, or the agent's directory seen by another user — must not stop it at the lock it takes only to
// clean up after a crashed run. Root writes anywhere, so the run is made as uid 65534; without root the
// test cannot make a directory its own user cannot write, and says so.

const NOBODY = 65534;
const isRoot = process.geteuid?.() === 0;
const asRoot = isRoot ? it : it.skip;
const rootOnly = isRoot ? '' : ' [SKIPPED: needs root to run the binary as uid 65534]';

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(async () => {
  await chmod(fx.dir, 0o755);
  await fx.close();
});

describe('status on a directory its user cannot write', () => {
  asRoot(`reads the identity, exits 0, and leaves the directory as it was${rootOnly}`, async () => {
    const seeded = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
    expect(seeded.code, seeded.stderr).toBe(0);
    const urn = (JSON.parse(seeded.stdout) as { urn: string }).urn;
    // The identity belongs to the user who runs status (as the agent's file belongs to dd-agent);
    // the directory is root's and 0555, so that user can create nothing there.
    await chown(fx.identityPath, NOBODY, NOBODY);
    await chmod(fx.dir, 0o555);
    const before = await readdir(fx.dir);
    const portable = await portableBin();
    const run = await fx
      .run(['status', '-c', fx.dir, '--json'], { uid: NOBODY, gid: NOBODY, bin: portable.bin })
      .finally(() => portable.remove());
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'ok', command: 'status', urn, identityFile: fx.identityPath });
    expect(run.stderr).toContain('no lock taken, reading only');
    expect(await readdir(fx.dir)).toEqual(before);
    expect(before).toContain(IDENTITY);

    const human = await portableBin().then((p) =>
      fx.run(['status', '-c', fx.dir], { uid: NOBODY, gid: NOBODY, bin: p.bin }).finally(() => p.remove()),
    );
    expect(human.code, human.stderr).toBe(0);
    expect(human.stderr).not.toContain('DIRECTORY_NOT_WRITABLE');
  });
});
