import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
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

export function storageFailure(err: unknown, path: string): StorageError {
  if (err instanceof StorageError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EBUSY' || code === 'EXDEV') {
    return new StorageError(
      'SINGLE_FILE_MOUNT',
      `${path} is a single-file mount (rename gave ${code}), so it cannot be replaced atomically`,
      'The live file was not changed. Mount the whole directory instead of the file (Kubernetes: no subPath), or write elsewhere with --identity-file and point the agent at it.',
      { path, errno: code },
      err,
    );
  }
  return new StorageError('WRITE_FAILED', `could not write ${path}: ${code ?? (err as Error).message}`, 'The live file was not changed. Check free space and permissions of the directory, then run again.', { path, errno: code ?? null }, err);
}
