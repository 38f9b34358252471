import { readdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LocalFixture, localFixture } from './local-fixture.js';
import { CAN_UNSHARE_MOUNTS, runInMountNamespace } from './mount-namespace.js';

// A read-only file system (issue 23, "Checks that check"): the agent's directory on a read-only mount
// (a ConfigMap or Secret volume, a read-only root) is reported as that mount, named, not as a
// permission problem that sudo would fix; `status` still reads there. The run happens in a mount
// namespace of its own (unshare -m) where the fixture's directory is bind-mounted read-only onto
// itself: nothing outside the run sees the mount. That needs root (CAP_SYS_ADMIN) and unshare.

const why = CAN_UNSHARE_MOUNTS ? '' : ' [SKIPPED: needs root and unshare(1) to make a read-only mount]';

/** `args` run by the built binary with `dir` read-only in its own mount namespace. */
const onReadOnly = (dir: string, args: string[], env: Record<string, string>) =>
  runInMountNamespace('mount --bind "$1" "$1" && mount -o remount,ro,bind "$1"', [dir], args, env);

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(async () => {
  await fx.close();
});

describe('the identity directory on a read-only mount', () => {
  it.skipIf(!CAN_UNSHARE_MOUNTS)(
    `a rotation refuses before enrolling, naming the mount (not "not writable … sudo"); status reads there, exit 0${why}`,
    async () => {
      const seeded = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
      expect(seeded.code, seeded.stderr).toBe(0);
      const enrolls = () => fx.emulator.requests.filter((r) => r.route === 'enroll').length;
      const before = { enrolls: enrolls(), files: await readdir(fx.dir) };

      const run = await onReadOnly(fx.dir, ['rotate-identity', '-c', fx.dir, '--json'], fx.env);
      expect(run.code, run.stderr).toBe(7);
      const doc = JSON.parse(run.stdout) as { code: string; message: string; hint: string; details: { mountPoint?: string } };
      expect(doc.code).toBe('READ_ONLY_FILESYSTEM');
      expect(doc.message).toContain(`${fx.dir} is on a read-only mount (mount point ${fx.dir}, `);
      expect(doc.message).toContain('no user can, sudo does not help');
      expect(doc.message).not.toContain('not writable by this user');
      expect(doc.details.mountPoint).toBe(fx.dir);
      expect(doc.hint).toContain('Nothing was enrolled');
      expect(enrolls()).toBe(before.enrolls);

      const status = await onReadOnly(fx.dir, ['status', '-c', fx.dir, '--json'], fx.env);
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ status: 'ok', command: 'status', identityFile: fx.identityPath });
      expect(status.stderr).toContain('no lock taken, reading only');
      expect(await readdir(fx.dir)).toEqual(before.files);
    },
  );
});

// A file bind-mounted onto its own name (Docker -v file:file, a Kubernetes subPath) sits on the same
// device as its directory, so only the kernel's mount table (src/storage/mount-points.ts) shows it:
// rename(2) onto it would fail with EBUSY after enrolling, so the run refuses before.
describe('the identity file as a single-file mount', () => {
  it.skipIf(!CAN_UNSHARE_MOUNTS)(
    `refused before enrolling with SINGLE_FILE_MOUNT (exit 7), though on the directory's device${why}`,
    async () => {
      const seeded = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
      expect(seeded.code, seeded.stderr).toBe(0);
      const enrolls = () => fx.emulator.requests.filter((r) => r.route === 'enroll').length;
      const before = enrolls();

      const run = await runInMountNamespace(
        'mount --bind "$1" "$1"',
        [fx.identityPath],
        ['rotate-identity', '-c', fx.dir, '--json'],
        fx.env,
      );
      expect(run.code, run.stderr).toBe(7);
      const doc = JSON.parse(run.stdout) as { code: string; hint: string };
      expect(doc.code).toBe('SINGLE_FILE_MOUNT');
      expect(doc.hint).toContain('Nothing was enrolled');
      expect(enrolls()).toBe(before);
    },
  );
});
