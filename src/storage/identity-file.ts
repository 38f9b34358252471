import { constants, type Stats } from 'node:fs';
import { access, lstat, open, readlink, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { IdentityDecodeError, ParError, StorageError } from '../errors.js';
import { FileTooLargeError, formatBytes, readHandleAtMost } from '../bounded-file.js';
import { sanitizeServerString } from '../sanitize.js';
import { type DecodedIdentity, decodeIdentity, parseIdentityFile } from '../identity/identity-record.js';
import { checkFreeSpace, isNoSpace, noSpaceError, tempName } from './file-primitives.js';
import { findMountPoint, mountOf } from './mount-points.js';
import { ownerForFilesBeside, refuseForeignFile } from './file-owner.js';

// The local identity file as the Go agent reads it, plus the checks we make before any network
// call so that a rotation never enrolls a runner it then cannot store.

export type IdentityFileState =
  | { state: 'missing'; path: string }
  | { state: 'ok'; path: string; text: string; identity: DecodedIdentity; stats: Stats }
  | { state: 'corrupt'; path: string; text: string; error: ParError; stats: Stats };

/**
 * Refuses a symbolic link where an identity file belongs: following it would read, replace or chown
 * whatever it points at (another user's file, a file outside the agent's directory).
 */
export async function refuseSymlink(path: string, what = 'identity files'): Promise<void> {
  const stats = await lstat(path).catch(() => undefined);
  if (!stats?.isSymbolicLink()) return;
  const target = await readlink(path).catch(() => '(unreadable)');
  throw new StorageError(
    'SYMLINK_REFUSED',
    `${path} is a symbolic link to ${target}; ${what} are never followed through links`,
    what === 'identity files'
      ? `Nothing was changed. Replace the link by the file itself (or point --identity-file at ${target} if that is the real identity file), then run again.`
      : 'Nothing was changed. Remove the link or give the path of a regular file, then run again.',
    { path, target },
  );
}

/**
 * What the Go agent writes is under 1 KiB (a key of about 300 characters, a URN of at most 368, a
 * host name, a hash); 64 KiB is far above any of it and refuses, unread, a file nobody wrote as an
 * identity (docs/security.md, the bounds table).
 */
const MAX_IDENTITY_FILE_BYTES = 64 * 1024;

export async function readIdentityFile(path: string): Promise<IdentityFileState> {
  let text: string;
  let stats: Stats;
  try {
    await refuseSymlink(path);
    // O_NOFOLLOW closes the window between the lstat above and the open; O_NONBLOCK keeps a FIFO from hanging us.
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      stats = await handle.stat();
      if (!stats.isFile()) {
        throw new StorageError('NOT_A_FILE', `${path} exists but is not a regular file`, 'Point --identity-file at a file path.', { path });
      }
      try {
        text = (await readHandleAtMost(handle, MAX_IDENTITY_FILE_BYTES)).toString('utf8');
      } catch (err) {
        if (!(err instanceof FileTooLargeError)) throw err;
        // Not an identity: as corrupt as one that does not decode, and its content is never kept in memory.
        return {
          state: 'corrupt',
          path,
          text: '',
          error: new IdentityDecodeError(
            'file',
            `is ${err.size} bytes or more (an identity file is at most ${formatBytes(MAX_IDENTITY_FILE_BYTES)})`,
          ),
          stats,
        };
      }
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (err instanceof ParError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { state: 'missing', path };
    if (code === 'ELOOP') await refuseSymlink(path);
    throw new StorageError(
      'READ_FAILED',
      `cannot read ${path}: ${code}`,
      'Run par-identity as the user that owns the identity file (often root or dd-agent).',
      { path, errno: code ?? null },
    );
  }
  try {
    return { state: 'ok', path, text, identity: decodeIdentity(parseIdentityFile(text)), stats };
  } catch (err) {
    if (err instanceof IdentityDecodeError) return { state: 'corrupt', path, text, error: err, stats };
    throw err;
  }
}

export function backupPathOf(path: string): string {
  return `${path}.bak`;
}

/** EROFS: the mount is named (mount point, file system, source), so the operator sees which volume is read-only. */
async function readOnlyMount(dir: string): Promise<StorageError> {
  const mount = await mountOf(dir);
  // The mount table's strings are the kernel's copy of what someone mounted: shown sanitized.
  const named = mount
    ? ` (mount point ${sanitizeServerString(mount.mountPoint)}, ${sanitizeServerString(mount.fsType)} from ${sanitizeServerString(mount.source)})`
    : '';
  return new StorageError(
    'READ_ONLY_FILESYSTEM',
    `${dir} is on a read-only mount${named}: the identity file cannot be replaced there (no user can, sudo does not help)`,
    'Nothing was enrolled. Keep the identity on a writable volume (private_action_runner.identity_file_path, or --identity-file), ' +
      'or in a Secret for the cluster agent; `status` only reads and works here.',
    { dir, ...(mount ? { mountPoint: sanitizeServerString(mount.mountPoint) } : {}) },
  );
}

/** Everything that would make the write fail, checked before enrollment creates a runner. */
export async function preflightIdentityDirectory(path: string): Promise<{ warnings: string[] }> {
  const dir = dirname(path);
  const dirStats = await stat(dir).catch(() => undefined);
  if (!dirStats) {
    throw new StorageError(
      'DIRECTORY_MISSING',
      `directory ${dir} does not exist`,
      `Nothing was enrolled. Create ${dir} (owned by the agent's user) or choose another --identity-file, then run again.`,
      { dir },
    );
  }
  if (!dirStats.isDirectory())
    throw new StorageError('DIRECTORY_MISSING', `${dir} is not a directory`, 'Nothing was enrolled. Choose another --identity-file.', {
      dir,
    });
  try {
    await access(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EROFS') throw await readOnlyMount(dir);
    throw new StorageError(
      'DIRECTORY_NOT_WRITABLE',
      `directory ${dir} is not writable by this user`,
      'Nothing was enrolled. Run as the user that owns the agent files (often with sudo), then run again.',
      { dir },
    );
  }
  // access() says yes for root on a read-only mount; creating a file is the real test.
  // A random temp name like every other (a fixed one could be taken first by whoever may write the
  // directory), removed only when this run created it.
  const probe = tempName(path);
  let created = false;
  try {
    const handle = await open(probe, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600);
    created = true;
    await handle.close();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EROFS') throw await readOnlyMount(dir);
    if (isNoSpace(err)) throw noSpaceError(err, probe, 'a temporary file', 'Nothing was enrolled.');
    throw new StorageError(
      'DIRECTORY_NOT_WRITABLE',
      `cannot create a temporary file in ${dir}: ${code}`,
      'Nothing was enrolled. Make the directory writable (is it a read-only mount?), then run again.',
      { dir, errno: code ?? null },
    );
  } finally {
    if (created) await unlink(probe).catch(() => undefined);
  }
  // Room for everything the rotation writes here, before a runner is enrolled that could not be stored.
  await checkFreeSpace(dir, 'Nothing was enrolled.');
  await refuseSymlink(path);
  await refuseSymlink(backupPathOf(path));
  // Checked before enrolling: who the files will belong to, and no file of another user written to.
  const owner = await ownerForFilesBeside(path);
  await refuseForeignFile(path, owner);
  await refuseForeignFile(backupPathOf(path), owner);
  const warnings: string[] = [];
  const fileStats = await stat(path).catch(() => undefined);
  if (fileStats) {
    if ((fileStats.mode & 0o077) !== 0) {
      warnings.push(
        `${path} has mode ${(fileStats.mode & 0o777).toString(8).padStart(4, '0')}: other users could read the current key; the new file will be 0600`,
      );
    }
    if (fileStats.dev !== dirStats.dev || (await findMountPoint(path))) {
      throw new StorageError(
        'SINGLE_FILE_MOUNT',
        `${path} is a single-file mount, so it cannot be replaced atomically (rename would fail with EBUSY)`,
        'Nothing was enrolled. Mount the whole directory instead of the file (Kubernetes: no subPath), ' +
          'or write elsewhere with --identity-file and point the agent at it.',
        { path },
      );
    }
  }
  return { warnings };
}
