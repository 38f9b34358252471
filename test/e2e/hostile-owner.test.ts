import { chmod, chown, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachLauncher } from './launchers.js';
import { asNobody, NOBODY, ROOT, ROOT_ONLY } from './attacker.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';

// The one owner rule (docs/security.md §2), played by an attacker: uid 65534 owning the directory (the
// agent's own user, legitimately) or planting a file in it (a foothold, refused). These need root, as
// the tool has in agent containers; elsewhere they are skipped and say so.

const OTHER = NOBODY;

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(async () => {
  await fx.close();
});

const enrolled = () => fx.emulator.requests.filter((r) => r.route === 'enroll').length;

describeEachLauncher('who owns what the tool writes', (launcher) => {
  it.runIf(ROOT)(`a first identity file in a directory owned by the agent's user is that user's${ROOT_ONLY}`, async () => {
    await chown(fx.dir, OTHER, OTHER);
    await chmod(fx.dir, 0o700);
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], launcher.options);
    expect(run.code, run.stderr).toBe(0);
    const file = await stat(fx.identityPath);
    expect([file.uid, file.gid, file.mode & 0o777]).toEqual([OTHER, OTHER, 0o600]);
  });

  it.runIf(ROOT)(`an identity file planted by another user is refused before enrolling, and not touched${ROOT_ONLY}`, async () => {
    const ok = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], launcher.options);
    expect(ok.code, ok.stderr).toBe(0);
    fx.emulator.reset();
    await chown(fx.identityPath, OTHER, OTHER);
    const before = await stat(fx.identityPath);
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], launcher.options);
    expect(run.code, run.stderr).toBe(7);
    expect(run.stderr).toContain('error[FILE_OWNER_REFUSED]');
    expect(run.stderr).toContain(`belongs to uid ${OTHER}`);
    expect(enrolled()).toBe(0);
    const after = await stat(fx.identityPath);
    expect([after.uid, after.mtimeMs]).toEqual([before.uid, before.mtimeMs]);
  });

  for (const planted of [IDENTITY, `${IDENTITY}.bak`]) {
    it.runIf(ROOT)(
      `uid ${OTHER} plants ${planted === IDENTITY ? 'the identity file' : 'the backup'} in a sticky 1777 directory before the first rotation: FILE_OWNER_REFUSED naming uid ${OTHER}, nothing enrolled, no file of that user holds a key${ROOT_ONLY}`,
      async () => {
        await chmod(fx.dir, 0o1777);
        asNobody(`umask 077; printf planted > '${join(fx.dir, planted)}'`);
        for (const json of [false, true]) {
          const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', ...(json ? ['--json'] : [])], launcher.options);
          expect(run.code, run.stderr).toBe(7);
          expect(json ? JSON.parse(run.stdout) : run.stderr).toMatchObject(
            json
              ? { code: 'FILE_OWNER_REFUSED' }
              : expect.stringContaining(`error[FILE_OWNER_REFUSED]: ${join(fx.dir, planted)} belongs to uid ${OTHER}`),
          );
        }
        expect(enrolled()).toBe(0);
        // Whatever belongs to that user here is what it planted, unchanged.
        for (const name of await readdir(fx.dir)) {
          const file = await stat(join(fx.dir, name));
          if (file.uid === OTHER) expect([name, await readFile(join(fx.dir, name), 'utf8')]).toEqual([planted, 'planted']);
        }
      },
    );
  }

  it('a directory other users may write without the sticky bit (world- or group-writable) is refused before enrolling', async () => {
    for (const mode of [0o777, 0o775]) {
      await chmod(fx.dir, mode);
      const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], launcher.options);
      expect(run.code, run.stderr).toBe(7);
      expect(JSON.parse(run.stdout)).toMatchObject({
        status: 'error',
        code: 'DIRECTORY_UNSAFE',
        message: expect.stringContaining(`(mode 0${mode.toString(8)})`),
      });
    }
    expect(enrolled()).toBe(0);
  });

  it('a sticky world-writable directory is accepted: the file is the running user’s, 0600', async () => {
    await chmod(fx.dir, 0o1777);
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], launcher.options);
    expect(run.code, run.stderr).toBe(0);
    const file = await stat(fx.identityPath);
    expect([file.uid, file.mode & 0o777]).toEqual([process.geteuid?.(), 0o600]);
  });
});
