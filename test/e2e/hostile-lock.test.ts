import { type FSWatcher, watch } from 'node:fs';
import { chmod, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { asNobody, NOBODY, ROOT, ROOT_ONLY } from './attacker.js';
import { describeEachLauncher, type Launcher } from './launchers.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';

// The lock file as an attacker meets it (issue 24, "Lock-file content used as a path"): uid 65534,
// in a sticky 1777 directory, plants `<identity>.lock` naming a dead pid and a nonce that climbs out
// of the directory, and the directory `<identity>.lock.takeover-` that makes such a path resolve; a
// takeover built from that nonce would have root create a file in a directory of the attacker's
// choosing. Every field is validated (the nonce: 16 lowercase hex digits), so that lock names no holder
// and is reported, never acted on. And a FIFO planted at the lock or takeover name must not hang a run
// (reads are O_NONBLOCK, of regular files only). Playing uid 65534 needs root; elsewhere skipped and
// said so.

/** A pid above Linux's pid_max limit (2^22): never alive, so its lock is stale. */
const DEAD_PID = 2 ** 22 + 1;
const LOCK = `${IDENTITY}.lock`;

let fx: LocalFixture;
let victim: string;
let watcher: FSWatcher | undefined;
beforeEach(async () => {
  fx = await localFixture();
  // A directory of root's beside the identity's: the climbing nonce points into it.
  victim = await mkdtemp(join(fx.dir, '..', 'par-victim-'));
});
afterEach(async () => {
  watcher?.close();
  watcher = undefined;
  await fx.close();
  await rm(victim, { recursive: true, force: true });
});

/**
 * Every name created in `dir` from now on, in order (inotify). `settle()` resolves once a sentinel the
 * test itself creates is seen: every earlier event has been delivered by then, no waiting on time.
 */
function namesCreatedIn(dir: string): { names: string[]; settle(): Promise<void> } {
  const names: string[] = [];
  let sentinelSeen: (() => void) | undefined;
  watcher = watch(dir, (_event, name) => {
    if (name === '.sentinel') sentinelSeen?.();
    else if (name) names.push(name);
  });
  return {
    names,
    async settle() {
      const seen = new Promise<void>((resolve) => {
        sentinelSeen = resolve;
      });
      await writeFile(join(dir, '.sentinel'), '');
      await seen;
    },
  };
}

async function seed(launcher: Launcher): Promise<void> {
  const first = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], launcher.options);
  expect(first.code, first.stderr).toBe(0);
  await chmod(fx.dir, 0o1777);
  fx.emulator.reset();
}

const enrolled = () => fx.emulator.requests.filter((r) => r.route === 'enroll').length;

describeEachLauncher('a lock file is data, never a path', (launcher) => {
  it.runIf(ROOT)(
    `uid ${NOBODY} plants a stale lock whose nonce climbs into another directory, and the directory that makes it resolve: refused as naming no holder (exit 11), listed by status as an invalid lock, nothing created there, nothing enrolled${ROOT_ONLY}`,
    async () => {
      await seed(launcher);
      const nonce = `/../../${basename(victim)}/owned`;
      // This host's name: a lock of another host is never stale, so never taken over anyway.
      const lock = JSON.stringify({ pid: DEAD_PID, host: hostname(), since: '2026-01-01T00:00:00.000Z', nonce });
      asNobody(`umask 022; mkdir '${join(fx.dir, `${LOCK}.takeover-`)}' && cat > '${join(fx.dir, LOCK)}'`, lock);
      const before = (await readdir(fx.dir)).sort();
      const created = namesCreatedIn(victim);

      const rotate = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], launcher.options);
      const rollback = await fx.run(['rollback', '-c', fx.dir, '--no-verify'], launcher.options);
      const status = await fx.run(['status', '-c', fx.dir, '--json'], launcher.options);
      await created.settle();
      // A takeover from that nonce creates its temp file and `owned` there, as root.
      expect(created.names).toEqual([]);
      for (const run of [rotate, rollback]) {
        expect(run.code, run.stderr).toBe(11);
        expect(run.stderr).toContain(`${join(fx.dir, LOCK)} exists but does not name a holder`);
      }
      expect(status.code, status.stderr).toBe(0);
      expect(status.stderr).toContain('exists but does not name a holder: reading without the sweep');
      expect(JSON.parse(status.stdout).leftovers).toEqual([
        { path: join(fx.dir, LOCK), kind: 'invalid-lock', detail: 'names no holder in the form par-identity writes' },
        { path: join(fx.dir, `${LOCK}.takeover-`), kind: 'takeover', detail: 'names no holder' },
      ]);
      expect(enrolled()).toBe(0);
      expect((await readdir(fx.dir)).sort()).toEqual(before);
      expect((await stat(join(fx.dir, LOCK))).uid).toBe(NOBODY);
    },
  );

  it.runIf(ROOT)(
    `uid ${NOBODY} plants a FIFO as the lock, and another as a takeover file: status lists both and ends, rotate-identity and rollback end refusing the lock that names no holder (exit 11); nothing enrolled${ROOT_ONLY}`,
    async () => {
      await seed(launcher);
      const takeover = join(fx.dir, `${LOCK}.takeover-0123456789abcdef`);
      asNobody(`mkfifo '${join(fx.dir, LOCK)}' '${takeover}'`);
      // A blocking open(2) of a FIFO never returns: the run would be killed at the timeout.
      const status = await fx.run(['status', '-c', fx.dir, '--json'], { ...launcher.options, timeoutMs: 15_000 });
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout).leftovers.map((l: { path: string; kind: string }) => [l.path, l.kind])).toEqual([
        [join(fx.dir, LOCK), 'invalid-lock'],
        [takeover, 'takeover'],
      ]);
      for (const args of [
        ['rotate-identity', '-c', fx.dir, '--no-verify'],
        ['rollback', '-c', fx.dir, '--no-verify'],
      ]) {
        const run = await fx.run(args, { ...launcher.options, timeoutMs: 15_000 });
        expect(run.code, `${args[0]}: ${run.stderr}`).toBe(11);
        expect(run.stderr).toContain('exists but does not name a holder');
      }
      expect(enrolled()).toBe(0);
    },
  );

  it.runIf(ROOT)(
    `uid ${NOBODY} plants a FIFO as a dead taker's takeover file beside no lock: status lists it and ends; rotate-identity goes on${ROOT_ONLY}`,
    async () => {
      await seed(launcher);
      asNobody(`mkfifo '${join(fx.dir, `${LOCK}.takeover-0123456789abcdef`)}'`);
      const status = await fx.run(['status', '-c', fx.dir, '--json'], { ...launcher.options, timeoutMs: 15_000 });
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout).leftovers).toEqual([
        { path: join(fx.dir, `${LOCK}.takeover-0123456789abcdef`), kind: 'takeover', detail: 'names no holder' },
      ]);
      const rotate = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], { ...launcher.options, timeoutMs: 15_000 });
      expect(rotate.code, rotate.stderr).toBe(0);
    },
  );
});
