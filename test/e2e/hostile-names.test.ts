import { chmod, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { newIdentity } from '../fixtures/test-identities.js';
import { asNobody, NOBODY, ROOT, ROOT_ONLY } from './attacker.js';
import { expectClean, HOSTILE } from './hostile-text.js';
import { describeEachLauncher } from './launchers.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';

// Names of the files status and the sweep find by listing the identity's directory (issue 24,
// "Terminal injection", and the recovery-file names of its closing review): recovery files
// (`.restore-*`, `.corrupt-*`), set-aside pending keys (`.pending-*`), a dead writer's temp file and a
// dead taker's takeover file. Whoever may write the directory chooses them: uid 65534 plants each with
// escape sequences in a sticky 1777 directory, and they must reach stdout, stderr and --json only
// sanitized, while every planted file stays as it was. Playing uid 65534 needs root; elsewhere skipped
// and said so.

/** A pid above Linux's pid_max limit (2^22): never alive, so its temp file is a crashed run's. */
const DEAD_PID = 2 ** 22 + 1;

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(async () => {
  await fx.close();
});

/** The planted names, each with every kind of hostile character, and what each holds. */
function plantedFiles(): Record<string, string> {
  const other = newIdentity();
  return {
    // A complete identity of another runner: listed as recoverable, with its URN.
    [`${IDENTITY}.restore-${HOSTILE}`]: JSON.stringify({ private_key: other.privateKey, urn: other.urn }),
    [`${IDENTITY}.corrupt-${HOSTILE}`]: 'not an identity',
    [`${IDENTITY}.pending-${HOSTILE}`]: 'not a pending record',
    [`.${IDENTITY}${HOSTILE}.tmp-${DEAD_PID}-0badf00d`]: 'not an identity',
    [`${IDENTITY}.lock.takeover-${HOSTILE}`]: '{}',
  };
}

describeEachLauncher('names chosen by whoever may write the directory are shown sanitized', (launcher) => {
  it.runIf(ROOT)(
    `uid ${NOBODY} plants recovery, pending, temp and takeover files named with escape sequences: status and rotate-identity show them sanitized, in text and --json, and leave them as they were${ROOT_ONLY}`,
    async () => {
      const first = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], launcher.options);
      expect(first.code, first.stderr).toBe(0);
      await chmod(fx.dir, 0o1777);
      const planted = plantedFiles();
      for (const [name, content] of Object.entries(planted)) asNobody(`umask 022; cat > '${join(fx.dir, name)}'`, content);
      const before = new Map<string, number>();
      for (const name of Object.keys(planted)) before.set(name, (await stat(join(fx.dir, name))).ino);

      for (const json of [false, true]) {
        const status = await fx.run(['status', '-c', fx.dir, ...(json ? ['--json'] : [])], launcher.options);
        // A set-aside pending file is a possible orphan (exit 15).
        expect(status.code, status.stderr).toBe(15);
        expectClean(status, json);
        if (json) {
          const doc = JSON.parse(status.stdout) as {
            recoverable: Array<{ path: string; kind: string }>;
            leftovers: Array<{ path: string; kind: string }>;
            possibleOrphans: Array<{ path: string; state: string }>;
          };
          // Each planted name is listed (so each went through the sanitizer), the visible text kept.
          expect(doc.recoverable.map((r) => r.kind).sort()).toEqual(['corrupt', 'restore']);
          expect(doc.leftovers.map((l) => l.kind).sort()).toEqual(['takeover', 'temp']);
          expect(doc.possibleOrphans.map((o) => o.state)).toEqual(['set aside']);
          for (const { path } of [...doc.recoverable, ...doc.leftovers, ...doc.possibleOrphans])
            expect(path).toContain('rotated ok INFO done');
        } else {
          expect(status.stdout.match(/^ {2}recoverable: /gm)).toHaveLength(2);
          expect(status.stdout.match(/^ {2}leftover: /gm)).toHaveLength(2);
          expect(status.stdout).toContain('POSSIBLE ORPHAN (set aside)');
        }
      }

      for (const json of [false, true]) {
        const rotate = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', ...(json ? ['--json'] : [])], launcher.options);
        expect(rotate.code, rotate.stderr).toBe(0);
        expectClean(rotate, json);
        // The planted temp file is another user's: left alone and named (sanitized), never removed.
        expect(rotate.stderr).toContain(`left alone .${IDENTITY}`);
      }

      for (const [name, content] of Object.entries(planted)) {
        const after = await stat(join(fx.dir, name));
        expect([after.uid, after.ino, after.mode & 0o777], name).toEqual([NOBODY, before.get(name), 0o644]);
        expect(await readFile(join(fx.dir, name), 'utf8')).toBe(content);
      }
    },
  );
});
