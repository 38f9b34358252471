import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StorageError } from '../errors.js';
import { type FileOwner, storageFailure } from './file-primitives.js';

// The one owner rule for every file the tool writes beside the identity (the identity file, its
// backup, recovery and mark files): the runner must be able to read what we write, and no other user
// may be handed the new key (docs/security.md §2).
//
// - a directory writable by its owner alone: the files get the directory's owner and group (the
//   agent's /etc/datadog-agent belongs to dd-agent, and so must a first identity file written there
//   by root, or the runner cannot start);
// - a directory of root's, or sticky and world-writable (/tmp): the files are the running user's;
// - a directory other users may write without the sticky bit: refused, since any of them could
//   replace what we write.
// A file already in the directory is never a source of ownership: it may have been planted.

const STICKY = 0o1000;

/** The owner the files beside `path` get; `undefined` is the running user (no chown). */
export async function ownerForFilesBeside(path: string): Promise<FileOwner | undefined> {
  const dir = dirname(path);
  // A missing or unreadable directory is a write failure of the file itself, as rename would report it.
  const stats = await stat(dir).catch((err: unknown) => {
    throw storageFailure(err, path);
  });
  const othersMayWrite = (stats.mode & 0o022) !== 0;
  if (othersMayWrite) {
    const stickyWorldWritable = (stats.mode & STICKY) !== 0 && (stats.mode & 0o002) !== 0;
    if (stickyWorldWritable) return undefined;
    throw new StorageError(
      'DIRECTORY_UNSAFE',
      `directory ${dir} (mode ${(stats.mode & 0o7777).toString(8).padStart(4, '0')}) is writable by other users and has no sticky bit`,
      `Nothing was enrolled. Any of those users could replace the identity: make ${dir} writable by its owner alone (chmod go-w), then run again.`,
      { dir },
    );
  }
  if (stats.uid === 0) return undefined;
  return { uid: stats.uid, gid: stats.gid };
}

/**
 * Refuses an existing file at `path` that belongs to someone other than the owner the rule gives,
 * the running user or root: writing the new key there would give it to that user.
 */
export async function refuseForeignFile(
  path: string,
  owner: FileOwner | undefined,
  untouched = 'Nothing was enrolled and the file was not touched.',
): Promise<void> {
  const stats = await stat(path).catch(() => undefined);
  if (!stats) return;
  const allowed = new Set([0, process.geteuid?.() ?? 0, ...(owner ? [owner.uid] : [])]);
  if (allowed.has(stats.uid)) return;
  throw new StorageError(
    'FILE_OWNER_REFUSED',
    `${path} belongs to uid ${stats.uid}, not to the owner of its directory, root or this user`,
    `${untouched} A file owned by another user may have been planted to receive the new key: check it, remove it, then run again.`,
    { path, uid: stats.uid },
  );
}
