import { readFileSync } from 'node:fs';
import { chmod, lstat, mkdtemp, readdir, readFile, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { newIdentity } from '../fixtures/test-identities.js';
import { asNobody, NOBODY, ROOT, ROOT_ONLY } from './attacker.js';
import { describeEachLauncher } from './launchers.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';
import { type RunningCli, startCli } from './run-cli.js';
import { eventually } from './watch-fixture.js';

// The sweep of temp files an interrupted run left (issue 24, "chmod through a swapped name"). It gives
// a kept identity a second name with link(2), checks that name is a regular file and then makes it
// 0600: by path (lstat, then chmod), that chmod followed a symbolic link the file's owner swapped in
// between, so any file on the system became 0600. Here the run stops at the failpoint between the check
// and the change of mode (keep-aside-before-chmod), the name is swapped, and the run goes on; with the
// old lstat-then-chmod both tests fail (the victim becomes 0600). The attacker is uid 65534 (setpriv) in
// a sticky 1777 directory; that needs root, elsewhere skipped and said so. The tool runs as the test's
// user (root in CI, as in agent containers).

/** A pid above Linux's pid_max limit (2^22): never alive, so its temp file is a crashed run's. */
const DEAD_PID = 2 ** 22 + 1;
const FAILPOINT = 'keep-aside-before-chmod:stop';

let fx: LocalFixture;
let outside: string;
beforeEach(async () => {
  fx = await localFixture();
  outside = await mkdtemp(join(tmpdir(), 'par-victim-'));
});
afterEach(async () => {
  await fx.close();
  await rm(outside, { recursive: true, force: true });
});

/** The identity file of another runner, as a temp file of a crashed run would hold it. */
function leftoverContent(): string {
  const id = newIdentity();
  return JSON.stringify({ private_key: id.privateKey, urn: id.urn });
}

function stopped(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
}

/** Waits until the run has stopped at the failpoint (true) or has ended without reaching it (false). */
async function stopsAtFailpoint(run: RunningCli): Promise<boolean> {
  let ended = false;
  void run.exit.then(() => {
    ended = true;
  });
  return eventually(() => {
    if (ended) return false;
    if (stopped(run.child.pid!)) return true;
    throw new Error('still running');
  }, 20_000);
}

async function keptNames(): Promise<string[]> {
  return (await readdir(fx.dir)).filter((n) => n.startsWith(`${IDENTITY}.restore-`));
}

describeEachLauncher('the temp-file sweep never changes a mode through a swapped name', (launcher) => {
  it.runIf(ROOT)(
    `uid ${NOBODY} plants a temp file in a sticky 1777 directory and swaps the kept name for a link: the link's target keeps its mode, the planted file is left alone and reported${ROOT_ONLY}`,
    async () => {
      const first = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], launcher.options);
      expect(first.code, first.stderr).toBe(0);
      await chmod(fx.dir, 0o1777);
      const victim = join(outside, 'victim');
      await writeFile(victim, 'any file on the system', { mode: 0o644 });
      await chmod(outside, 0o755);
      const planted = join(fx.dir, `.${IDENTITY}.tmp-${DEAD_PID}-0badf00d`);
      const content = leftoverContent();
      asNobody(`umask 022; cat > '${planted}'`, content);
      const before = await stat(planted);

      const run = startCli(['status', '-c', fx.dir], { env: { ...fx.env, PAR_IDENTITY_FAILPOINT: FAILPOINT }, ...launcher.options });
      run.child.stdin.end();
      // The old sweep, which kept another user's file too, stopped here, between its check and its chmod
      // by path, with the name the attacker's to swap (the inode is theirs, and the sticky bit lets its
      // owner remove it). Now that file is left alone: the failpoint is not reached.
      if (await stopsAtFailpoint(run)) {
        for (const name of await keptNames()) asNobody(`rm -f '${join(fx.dir, name)}' && ln -s '${victim}' '${join(fx.dir, name)}'`);
        process.kill(run.child.pid!, 'SIGCONT');
      }
      const exit = await run.exit;
      expect(exit.code, run.stderr()).toBe(0);

      expect((await stat(victim)).mode & 0o7777).toBe(0o644);
      const after = await stat(planted);
      expect([after.uid, after.mode, after.ino, after.mtimeMs]).toEqual([before.uid, before.mode, before.ino, before.mtimeMs]);
      expect(await readFile(planted, 'utf8')).toBe(content);
      expect(await keptNames()).toEqual([]);
      expect(run.stderr()).toContain(`left alone .${IDENTITY}.tmp-${DEAD_PID}-0badf00d beside the identity (owned by uid ${NOBODY})`);
    },
  );

  it('a leftover of this user whose kept name is swapped for a link before its mode is set: refused through the descriptor, the target keeps its mode, the leftover stays', async () => {
    const first = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], launcher.options);
    expect(first.code, first.stderr).toBe(0);
    const victim = join(outside, 'victim');
    await writeFile(victim, 'a file of the test', { mode: 0o644 });
    const leftover = join(fx.dir, `.${IDENTITY}.tmp-${DEAD_PID}-00c0ffee`);
    const content = leftoverContent();
    await writeFile(leftover, content, { mode: 0o600 });

    const run = startCli(['status', '-c', fx.dir], { env: { ...fx.env, PAR_IDENTITY_FAILPOINT: FAILPOINT }, ...launcher.options });
    run.child.stdin.end();
    expect(await stopsAtFailpoint(run), run.stderr()).toBe(true);
    const names = await keptNames();
    expect(names).toHaveLength(1);
    await unlink(join(fx.dir, names[0]!));
    await symlink(victim, join(fx.dir, names[0]!));
    process.kill(run.child.pid!, 'SIGCONT');
    const exit = await run.exit;
    expect(exit.code, run.stderr()).toBe(0);

    expect((await stat(victim)).mode & 0o7777).toBe(0o644);
    expect(await readFile(victim, 'utf8')).toBe('a file of the test');
    // The only copy of that identity: kept where it was, and the swapped name removed again.
    expect(await readFile(leftover, 'utf8')).toBe(content);
    expect(await keptNames()).toEqual([]);
    expect(run.stderr()).toContain('it changed while being kept aside (SYMLINK_REFUSED)');

    // Unhindered, the next sweep keeps it as a 0600 recovery file (the control).
    const again = await fx.run(['status', '-c', fx.dir], launcher.options);
    expect(again.code, again.stderr).toBe(0);
    const kept = await keptNames();
    expect(kept).toHaveLength(1);
    const keptStats = await lstat(join(fx.dir, kept[0]!));
    expect([keptStats.isFile(), keptStats.mode & 0o777]).toEqual([true, 0o600]);
  });
});
