import { lstat, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachLauncher, type Launcher } from './launchers.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';

// Identity files that are symbolic links are refused before anything is enrolled or written: following
// one would read, replace or chown whatever it points at.

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(async () => {
  await fx.close();
});

async function rotate(launcher: Launcher): Promise<string> {
  const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], launcher.options);
  expect(run.code, run.stderr).toBe(0);
  return fx.read();
}

describeEachLauncher('symlinked identity files are refused, never followed', (launcher) => {
  it('rotate-identity with the live file a symlink: exit 7 SYMLINK_REFUSED naming link and target, nothing enrolled, target untouched', async () => {
    const target = join(fx.dir, 'elsewhere.json');
    await writeFile(target, 'not ours', { mode: 0o644 });
    await symlink(target, fx.identityPath);
    const before = await stat(target);
    const run = await fx.run(['rotate-identity', '-c', fx.dir], launcher.options);
    expect(run.code, run.stderr).toBe(7);
    expect(run.stderr).toContain('error[SYMLINK_REFUSED]');
    expect(run.stderr).toContain(`${fx.identityPath} is a symbolic link to ${target}`);
    expect(fx.emulator.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
    expect(await readFile(target, 'utf8')).toBe('not ours');
    const after = await stat(target);
    expect([after.mode, after.uid, after.gid, after.mtimeMs]).toEqual([before.mode, before.uid, before.gid, before.mtimeMs]);
    expect((await lstat(fx.identityPath)).isSymbolicLink()).toBe(true);
  });

  it('rotate-identity with the backup a symlink: refused before enrolling; the link and its target stay', async () => {
    const live = await rotate(launcher);
    const target = join(fx.dir, 'victim');
    await writeFile(target, 'victim content');
    await symlink(target, `${fx.identityPath}.bak`);
    fx.emulator.reset();
    const run = await fx.run(['rotate-identity', '-c', fx.dir], launcher.options);
    expect(run.code, run.stderr).toBe(7);
    expect(fx.emulator.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
    expect(run.stderr).toContain(`${fx.identityPath}.bak is a symbolic link to ${target}`);
    expect(await fx.read()).toBe(live);
    expect(await readFile(target, 'utf8')).toBe('victim content');
  });

  it('rollback and status refuse a symlinked backup or live file', async () => {
    await rotate(launcher);
    const target = join(fx.dir, 'victim');
    await writeFile(target, await fx.read());
    await symlink(target, `${fx.identityPath}.bak`);
    const rollback = await fx.run(['rollback', '-c', fx.dir, '--no-verify'], launcher.options);
    expect(rollback.code).toBe(7);
    expect(rollback.stderr).toContain('error[SYMLINK_REFUSED]');
    const status = await fx.run(['status', '-c', fx.dir], launcher.options);
    expect(status.code).toBe(7);
    expect(status.stderr).toContain(`${fx.identityPath}.bak is a symbolic link to ${target}`);
    expect((await fx.files()).filter((n) => n.startsWith(IDENTITY))).toEqual([IDENTITY, `${IDENTITY}.bak`]);
  });
});

describeEachLauncher('hostile server strings never reach the terminal raw', (launcher) => {
  it('an error body with ANSI escapes and a forged log line is printed as one clean line', async () => {
    fx.emulator.script('enroll', {
      status: 400,
      body: JSON.stringify({ errors: ['\u001b[2J\u001b[31mbad request\nINFO rotation complete\u0007'] }),
    });
    const run = await fx.run(['rotate-identity', '-c', fx.dir], launcher.options);
    expect(run.code).toBe(5);
    expect(run.stderr).toContain('bad request INFO rotation complete');
    expect(run.stderr + run.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(run.stderr.split('\n').some((line) => line.startsWith('INFO'))).toBe(false);
  });

  it('a runner id with an escape sequence is refused (exit 5) and not printed', async () => {
    const body = JSON.stringify({
      data: { type: 'createRunnerResponse', attributes: { org_id: 1234567, runner_id: 'abc\u001b]0;owned\u0007def' } },
    });
    fx.emulator.script('enroll', { status: 200, body });
    const run = await fx.run(['rotate-identity', '-c', fx.dir], launcher.options);
    expect(run.code, run.stderr).toBe(5);
    expect(run.stderr).toContain('error[ENROLL_BAD_RESPONSE]');
    expect(run.stderr).toContain('contains control or formatting characters');
    expect(run.stderr + run.stdout).not.toContain('owned');
    // No identity is written; the key sent stays pending, since a 200 may have registered a runner
    // (docs/identity-lifecycle.md §3).
    expect((await fx.files()).filter((n) => n.startsWith(IDENTITY))).toEqual([`${IDENTITY}.pending`]);
  });
});
