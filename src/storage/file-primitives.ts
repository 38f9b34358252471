import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, open, statfs } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { StorageError } from '../errors.js';

// The few file operations every crash-safe write here is built from.

export const TEMP_MARK = '.tmp-';

export type FileOwner = { uid: number; gid: number };

/** `.<name><suffix>.tmp-<pid>-<random>`: hidden, names the writer's pid so a sweep can tell it is dead. */
export function tempName(path: string, suffix = ''): string {
  return join(dirname(path), `.${basename(path)}${suffix}${TEMP_MARK}${process.pid}-${randomBytes(4).toString('hex')}`);
}

/** Creates `path` (O_EXCL, never following a link) as 0600 with `content`, fsynced. */
export async function writeSynced(path: string, content: Buffer | string, owner?: FileOwner, warnings: string[] = []): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600);
    // The umask can only narrow 0600; chmod makes it exact even under an odd umask.
    await handle.chmod(0o600);
    await handle.writeFile(content);
    if (owner && (owner.uid !== process.getuid?.() || owner.gid !== process.getgid?.())) {
      await handle.chown(owner.uid, owner.gid).catch((err: NodeJS.ErrnoException) => {
        warnings.push(`could not keep owner ${owner.uid}:${owner.gid} (${err.code}); the file belongs to the user running par-identity`);
      });
    }
    await handle.sync();
  } finally {
    await handle?.close();
  }
}

/** Reads a regular file without following a symbolic link; undefined when absent. */
export async function readNoFollow(path: string): Promise<Buffer | undefined> {
  return (await readOwnedNoFollow(path))?.content;
}

/** The same, with the owner of what was read (from the descriptor, so of these very bytes). */
export async function readOwnedNoFollow(path: string): Promise<{ content: Buffer; uid: number } | undefined> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const stats = await handle.stat();
    if (!stats.isFile()) return undefined;
    return { content: await handle.readFile(), uid: stats.uid };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP') return undefined;
    throw err;
  } finally {
    await handle?.close();
  }
}

export async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Full file system or quota: what the kernel says when there is no room (never a permission problem). */
export function isNoSpace(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** NO_SPACE for a write of `path` that found no room; `left` says what is in place (docs/safety.md). */
export function noSpaceError(err: unknown, path: string, what: string, left: string): StorageError {
  const code = (err as NodeJS.ErrnoException).code ?? 'ENOSPC';
  const why = code === 'EDQUOT' ? 'the disk quota of this user is reached (EDQUOT)' : 'no space left on the file system (ENOSPC)';
  return new StorageError(
    'NO_SPACE',
    `cannot write ${what ? `${what} ` : ''}${path}: ${why}`,
    `${left} Free space on the file system of ${dirname(path)} (\`df -h ${dirname(path)}\`), then run again.`,
    { path, errno: code },
    err,
  );
}

/**
 * What one rotation may have on disk at once beside the identity besides its lock (docs/safety.md):
 * the new file's temp, the backup's temp, the pending key, the verified record and the interrupted-run
 * recovery file; each well under 4 KiB, each taking at least one block.
 */
const FILES_WRITTEN = 5;
const FILE_BYTES = 4096;

/**
 * Refuses (NO_SPACE) when the file system of `dir` has fewer free blocks or inodes than a rotation
 * writes there; `left` says what is in place. A file system that reports no counts passes.
 */
export async function checkFreeSpace(dir: string, left: string): Promise<void> {
  const fs = await statfs(dir).catch(() => undefined);
  if (!fs || fs.bsize <= 0 || fs.blocks === 0) return;
  const perFile = Math.ceil(FILE_BYTES / fs.bsize) * fs.bsize;
  const need = FILES_WRITTEN * perFile;
  // root may use the blocks reserved for it (ext4 keeps 5 %); anyone else only the available ones.
  const free = (process.geteuid?.() === 0 ? fs.bfree : fs.bavail) * fs.bsize;
  const inodesShort = fs.files > 0 && fs.ffree < FILES_WRITTEN;
  if (free >= need && !inodesShort) return;
  const what = inodesShort
    ? `${fs.ffree} free inode(s), ${FILES_WRITTEN} needed`
    : `${Math.floor(free / 1024)} KiB free, ${need / 1024} KiB needed for the identity, its backup, the pending key and their temporary files`;
  throw new StorageError(
    'NO_SPACE',
    `the file system of ${dir} has no room for a rotation (${what})`,
    `${left} Free space on it (\`df -h ${dir}\`), then run again.`,
    { dir, freeBytes: free, neededBytes: need },
  );
}

export function storageFailure(err: unknown, path: string): StorageError {
  if (err instanceof StorageError) return err;
  if (isNoSpace(err)) return noSpaceError(err, path, '', 'The live file was not changed.');
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EBUSY' || code === 'EXDEV') {
    return new StorageError(
      'SINGLE_FILE_MOUNT',
      `${path} is a single-file mount (rename gave ${code}), so it cannot be replaced atomically`,
      'The live file was not changed. Mount the whole directory instead of the file (Kubernetes: no subPath), ' +
        'or write elsewhere with --identity-file and point the agent at it.',
      { path, errno: code },
      err,
    );
  }
  return new StorageError(
    'WRITE_FAILED',
    `could not write ${path}: ${code ?? (err as Error).message}`,
    'The live file was not changed. Check free space and permissions of the directory, then run again.',
    { path, errno: code ?? null },
    err,
  );
}
