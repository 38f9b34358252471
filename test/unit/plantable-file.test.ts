import { execFileSync } from 'node:child_process';
import { chmod, chown, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readUnlessPlanted } from '../../src/storage/plantable-file.js';

// Files read for what they hold from a directory others may be able to write (the agent's IPC token
// and certificate beside the identity; docs/security.md §1).

const ROOT = process.geteuid?.() === 0;
const ROOT_ONLY = ROOT ? '' : ' [SKIPPED: needs root to own files as uid 65534]';
const NOBODY = 65534;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-plantable-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readUnlessPlanted', () => {
  it('reads a regular file; says missing for none; refuses a FIFO without blocking, and a file past the cap', async () => {
    await writeFile(join(dir, 'token'), 'abc');
    expect(await readUnlessPlanted(join(dir, 'token'), 16)).toEqual({ state: 'ok', content: Buffer.from('abc') });
    expect(await readUnlessPlanted(join(dir, 'none'), 16)).toEqual({ state: 'missing' });
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    expect(await readUnlessPlanted(join(dir, 'fifo'), 16)).toEqual({ state: 'refused', why: `${join(dir, 'fifo')} is not a regular file` });
    await writeFile(join(dir, 'big'), 'x'.repeat(17));
    expect(await readUnlessPlanted(join(dir, 'big'), 16)).toMatchObject({
      state: 'refused',
      why: `${join(dir, 'big')} is larger than 16 bytes`,
    });
  });

  it.runIf(ROOT)(
    `in a sticky 1777 directory: another user's file or link is refused, root's file (a link of root's included) is read${ROOT_ONLY}`,
    async () => {
      await chmod(dir, 0o1777);
      await writeFile(join(dir, 'secret'), 'root only', { mode: 0o600 });
      await writeFile(join(dir, 'theirs'), 'planted');
      await chown(join(dir, 'theirs'), NOBODY, NOBODY);
      expect(await readUnlessPlanted(join(dir, 'theirs'), 64)).toMatchObject({
        state: 'refused',
        why: expect.stringContaining(`belongs to uid ${NOBODY} in ${dir}, which other users may write`),
      });
      await symlink(join(dir, 'secret'), join(dir, 'their-link'));
      execFileSync('chown', ['-h', `${NOBODY}:${NOBODY}`, join(dir, 'their-link')]);
      expect(await readUnlessPlanted(join(dir, 'their-link'), 64)).toMatchObject({
        state: 'refused',
        why: expect.stringContaining(`is a symbolic link of uid ${NOBODY}`),
      });
      await symlink(join(dir, 'secret'), join(dir, 'our-link'));
      expect(await readUnlessPlanted(join(dir, 'our-link'), 64)).toEqual({ state: 'ok', content: Buffer.from('root only') });
    },
  );

  it.runIf(ROOT)(
    `in a directory only its owner may write, whatever is there was put there by root or that owner: read${ROOT_ONLY}`,
    async () => {
      await chmod(dir, 0o755);
      await writeFile(join(dir, 'agent-token'), 'the agent user wrote it');
      await chown(join(dir, 'agent-token'), NOBODY, NOBODY);
      expect(await readUnlessPlanted(join(dir, 'agent-token'), 64)).toEqual({
        state: 'ok',
        content: Buffer.from('the agent user wrote it'),
      });
    },
  );
});
