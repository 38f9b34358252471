import { chmod, chown, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import * as fsp from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { StorageError } from '../../src/errors.js';
import { replaceFileAtomically, sweepInterruptedWrites } from '../../src/storage/atomic-write.js';

// rename is wrapped so a test can make one specific rename fail; every other call is the real one.
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, rename: vi.fn(actual.rename) };
});

const NAME = 'privateactionrunner_private_identity.json';
/** Larger than any pid_max Linux allows (2^22): kill(pid, 0) always says ESRCH. */
const DEAD_PID = 2147483646;

let dir: string;
let path: string;
let savedFailpoint: string | undefined;

beforeAll(() => {
  // A set failpoint would SIGKILL the test worker.
  savedFailpoint = process.env.PAR_IDENTITY_FAILPOINT;
  delete process.env.PAR_IDENTITY_FAILPOINT;
});
afterAll(() => {
  if (savedFailpoint !== undefined) process.env.PAR_IDENTITY_FAILPOINT = savedFailpoint;
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-atomic-'));
  path = join(dir, NAME);
});
afterEach(async () => {
  vi.mocked(fsp.rename).mockRestore();
  await rm(dir, { recursive: true, force: true });
});

const mode = async (p: string) => (await stat(p)).mode & 0o777;
const listing = async () => (await readdir(dir)).sort();

async function withUmask<T>(mask: number, fn: () => Promise<T>): Promise<T> {
  const previous = process.umask(mask);
  try {
    return await fn();
  } finally {
    process.umask(previous);
  }
}

describe('replaceFileAtomically', () => {
  it.each([0o022, 0o077, 0o000, 0o277])(
    'a new file is mode 0600 under umask %o, with exact content and nothing else left',
    async (mask) => {
      const result = await withUmask(mask, () => replaceFileAtomically(path, '{"a":"b"}', { keepBackup: true }));
      expect(result).toEqual({ path, warnings: [] });
      expect(await readFile(path, 'utf8')).toBe('{"a":"b"}');
      expect(await mode(path)).toBe(0o600);
      expect(await listing()).toEqual([NAME]);
    },
  );

  it('replaces an existing 0644 file: new file 0600, .bak holds the exact previous bytes, mode 0600', async () => {
    const previous = Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0x0a, 0x7d]); // not even valid UTF-8
    await writeFile(path, previous);
    await chmod(path, 0o644);
    const result = await withUmask(0o022, () => replaceFileAtomically(path, 'new content', { keepBackup: true }));
    expect(result).toEqual({ path, backupPath: `${path}.bak`, warnings: [] });
    expect(await readFile(path, 'utf8')).toBe('new content');
    expect(await mode(path)).toBe(0o600);
    expect(await readFile(`${path}.bak`)).toEqual(previous);
    expect(await mode(`${path}.bak`)).toBe(0o600);
    expect(await listing()).toEqual([NAME, `${NAME}.bak`]);
  });

  it('a second replacement moves the backup one step: .bak is always the content just replaced', async () => {
    await replaceFileAtomically(path, 'one', { keepBackup: true });
    await replaceFileAtomically(path, 'two', { keepBackup: true });
    await replaceFileAtomically(path, 'three', { keepBackup: true });
    expect(await readFile(path, 'utf8')).toBe('three');
    expect(await readFile(`${path}.bak`, 'utf8')).toBe('two');
    expect(await listing()).toEqual([NAME, `${NAME}.bak`]);
  });

  it('keepBackup: false leaves an existing .bak untouched and writes none', async () => {
    await writeFile(path, 'old');
    await writeFile(`${path}.bak`, 'older');
    const result = await replaceFileAtomically(path, 'new', { keepBackup: false });
    expect(result).toEqual({ path, warnings: [] });
    expect(await readFile(path, 'utf8')).toBe('new');
    expect(await readFile(`${path}.bak`, 'utf8')).toBe('older');
    expect(await listing()).toEqual([NAME, `${NAME}.bak`]);
  });

  it.runIf(process.getuid?.() === 0)(
    'gives the files the owner and group of a directory only its owner can write (running as root)',
    async () => {
      await chown(dir, 1234, 5678);
      await chmod(dir, 0o755);
      await writeFile(path, 'old');
      await replaceFileAtomically(path, 'new', { keepBackup: true });
      for (const p of [path, `${path}.bak`]) {
        const s = await stat(p);
        expect([s.uid, s.gid]).toEqual([1234, 5678]);
      }
    },
  );

  it.runIf(process.getuid?.() === 0)('refuses a previous file of another user in a root directory, and leaves it as it was', async () => {
    await chown(dir, 0, 0);
    await chmod(dir, 0o755);
    await writeFile(path, 'old');
    await chown(path, 1234, 5678);
    const err = await replaceFileAtomically(path, 'new', { keepBackup: true }).catch((e: unknown) => e);
    expect((err as StorageError).code).toBe('FILE_OWNER_REFUSED');
    expect(await readFile(path, 'utf8')).toBe('old');
    expect(await listing()).toEqual([NAME]);
  });

  it.each([
    ['EBUSY', 'SINGLE_FILE_MOUNT'],
    ['EXDEV', 'SINGLE_FILE_MOUNT'],
    ['EACCES', 'WRITE_FAILED'],
  ])('a final rename failing with %s leaves the live file byte-identical and no temp file (%s)', async (errno, code) => {
    const previous = '{"private_key":"old","urn":"urn:dd:apps:on-prem-runner:us1:1:r"}';
    await writeFile(path, previous, { mode: 0o600 });
    const real = (await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises')).rename;
    vi.mocked(fsp.rename).mockImplementation(async (from, to) => {
      if (to === path) throw Object.assign(new Error(`${errno}: simulated`), { code: errno });
      return real(from, to);
    });
    const err = await replaceFileAtomically(path, 'new content', { keepBackup: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe(code);
    expect((err as StorageError).exitCode).toBe(7);
    expect((err as StorageError).details).toEqual({ path, errno });
    expect(await readFile(path, 'utf8')).toBe(previous);
    expect(await mode(path)).toBe(0o600);
    // The backup taken before the failed rename is the same previous content.
    expect(await readFile(`${path}.bak`, 'utf8')).toBe(previous);
    expect(await listing()).toEqual([NAME, `${NAME}.bak`]);
  });

  it('a failing backup rename leaves the live file and the directory as they were', async () => {
    await writeFile(path, 'old');
    const real = (await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises')).rename;
    vi.mocked(fsp.rename).mockImplementation(async (from, to) => {
      if (to === `${path}.bak`) throw Object.assign(new Error('ENOSPC: simulated'), { code: 'ENOSPC' });
      return real(from, to);
    });
    const err = await replaceFileAtomically(path, 'new', { keepBackup: true }).catch((e: unknown) => e);
    // ENOSPC is named as such (NO_SPACE), never a generic write failure (docs/safety.md).
    expect((err as StorageError).code).toBe('NO_SPACE');
    expect((err as StorageError).message).toBe(`cannot write ${path}: no space left on the file system (ENOSPC)`);
    expect(await readFile(path, 'utf8')).toBe('old');
    expect(await listing()).toEqual([NAME]);
  });

  it('a parent that is a file fails with WRITE_FAILED and creates nothing', async () => {
    const file = join(dir, 'not-a-dir');
    await writeFile(file, 'x');
    const target = join(file, NAME);
    const err = await replaceFileAtomically(target, 'new', { keepBackup: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe('WRITE_FAILED');
    expect((err as StorageError).message).toBe(`could not write ${target}: ENOTDIR`);
    expect(await listing()).toEqual(['not-a-dir']);
    expect(await readFile(file, 'utf8')).toBe('x');
  });

  it('a missing directory fails with WRITE_FAILED (ENOENT)', async () => {
    const target = join(dir, 'absent', NAME);
    const err = await replaceFileAtomically(target, 'new', { keepBackup: false }).catch((e: unknown) => e);
    expect((err as StorageError).code).toBe('WRITE_FAILED');
    expect((err as StorageError).details).toEqual({ path: target, errno: 'ENOENT' });
  });

  it('removes stale temps of a crashed run before writing', async () => {
    await writeFile(join(dir, `.${NAME}.tmp-${DEAD_PID}-0badc0de`), 'half');
    await replaceFileAtomically(path, 'new', { keepBackup: true });
    expect(await listing()).toEqual([NAME]);
  });
});

describe('sweepInterruptedWrites: the temps it removes', () => {
  it("removes temps of dead processes (and our own), keeps live processes' temps and unrelated files", async () => {
    const names = {
      deadTemp: `.${NAME}.tmp-${DEAD_PID}-abcd1234`,
      deadBackupTemp: `.${NAME}.bak.tmp-${DEAD_PID}-ffff0000`,
      ownTemp: `.${NAME}.tmp-${process.pid}-0000aaaa`,
      noPid: `.${NAME}.tmp-garbage`,
      liveTemp: `.${NAME}.tmp-${process.ppid}-bbbb1111`,
      initTemp: `.${NAME}.tmp-1-cccc2222`,
      live: NAME,
      backup: `${NAME}.bak`,
      otherFileTemp: `.other.json.tmp-${DEAD_PID}-dddd3333`,
      editorSwap: `.${NAME}.swp`,
    };
    for (const n of Object.values(names)) await writeFile(join(dir, n), n);
    const { removed } = await sweepInterruptedWrites(path);
    expect(removed.sort()).toEqual([names.deadTemp, names.deadBackupTemp, names.ownTemp, names.noPid].sort());
    expect(await listing()).toEqual(
      [names.liveTemp, names.initTemp, names.live, names.backup, names.otherFileTemp, names.editorSwap].sort(),
    );
  });

  it('a missing directory is nothing to clean', async () => {
    expect((await sweepInterruptedWrites(join(dir, 'absent', NAME))).removed).toEqual([]);
  });
});
