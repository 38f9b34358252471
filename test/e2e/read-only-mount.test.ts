import { spawn, spawnSync } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LocalFixture, localFixture } from './local-fixture.js';
import { BIN, type CliRun, cleanEnv } from './run-cli.js';

// A read-only file system (issue 23, "Checks that check"): the agent's directory on a read-only mount
// (a ConfigMap or Secret volume, a read-only root) is reported as that mount, named, not as a
// permission problem that sudo would fix; `status` still reads there. The run happens in a mount
// namespace of its own (unshare -m) where the fixture's directory is bind-mounted read-only onto
// itself: nothing outside the run sees the mount. That needs root (CAP_SYS_ADMIN) and unshare.

const canMount = process.geteuid?.() === 0 && spawnSync('unshare', ['-m', 'true']).status === 0;
const why = canMount ? '' : ' [SKIPPED: needs root and unshare(1) to make a read-only mount]';

/** `args` run by the built binary with `dir` read-only in its own mount namespace. */
function onReadOnly(dir: string, args: string[], env: Record<string, string>): Promise<CliRun> {
  const script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"';
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-m', 'sh', '-c', script, 'sh', dir, process.execPath, BIN, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(async () => {
  await fx.close();
});

describe('the identity directory on a read-only mount', () => {
  it.skipIf(!canMount)(`a rotation refuses before enrolling, naming the mount (not "not writable … sudo"); status reads there, exit 0${why}`, async () => {
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
  });
});
