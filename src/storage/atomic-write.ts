import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { StorageError } from '../errors.js';
import { failpoint } from '../failpoint.js';

// Crash-safe replacement of a small secret file: temp file in the same directory (0600, O_EXCL),
// fsync, previous content kept as <name>.bak, rename over the live file, fsync the directory.
// At any crash point the live path holds either the old or the new complete content.

const TEMP_MARK = '.tmp-';

export interface WriteResult {
  path: string;
  backupPath?: string;
  warnings: string[];
}

function tempName(path: string, suffix = ''): string {
  return join(dirname(path), `.${basename(path)}${suffix}${TEMP_MARK}${process.pid}-${randomBytes(4).toString('hex')}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes temp files a crashed earlier run left behind (their pid is gone); returns their names. */
export async function removeStaleTemps(path: string): Promise<string[]> {
  const prefix = `.${basename(path)}`;
  let names: string[];
  try {
    names = await readdir(dirname(path));
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.includes(TEMP_MARK)) continue;
    const pid = Number(/\.tmp-(\d+)-/.exec(name)?.[1]);
    if (Number.isInteger(pid) && pid !== process.pid && alive(pid)) continue;
    await unlink(join(dirname(path), name)).catch(() => undefined);
    removed.push(name);
  }
  return removed;
}

async function writeSynced(path: string, content: Buffer | string, owner?: { uid: number; gid: number }, warnings: string[] = []): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600);
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

async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function storageFailure(err: unknown, path: string): StorageError {
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

/**
 * Replaces `path` with `content`. When `path` exists its exact bytes are first kept as `<path>.bak`
 * (0600). Owner and group of the old file are kept.
 */
export async function replaceFileAtomically(path: string, content: string, options: { keepBackup: boolean }): Promise<WriteResult> {
  const warnings: string[] = [];
  await removeStaleTemps(path);
  const old = await stat(path).catch(() => undefined);
  const owner = old ? { uid: old.uid, gid: old.gid } : undefined;
  const temp = tempName(path);
  const backupTemp = tempName(path, '.bak');
  let backupPath: string | undefined;
  try {
    await writeSynced(temp, content, owner, warnings);
    failpoint('after-temp-write');
    if (old && options.keepBackup) {
      const { readFile } = await import('node:fs/promises');
      await writeSynced(backupTemp, await readFile(path), owner, warnings);
      backupPath = `${path}.bak`;
      await rename(backupTemp, backupPath);
      failpoint('after-backup');
    }
    await rename(temp, path);
    failpoint('after-rename');
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    await unlink(backupTemp).catch(() => undefined);
    throw storageFailure(err, path);
  }
  await fsyncDirectory(dirname(path)).catch((err: NodeJS.ErrnoException) => {
    warnings.push(`directory fsync failed (${err.code}); the new file is in place but may not survive a power loss`);
  });
  failpoint('after-dir-fsync');
  return { path, ...(backupPath ? { backupPath } : {}), warnings };
}
