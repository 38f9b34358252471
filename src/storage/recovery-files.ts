import { constants } from 'node:fs';
import { type FileHandle, link, lstat, open, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { StorageError } from '../errors.js';
import { failpoint } from '../failpoint.js';
import { decodeIdentity, parseIdentityFile } from '../identity/identity-record.js';
import { type FileOwner, readNoFollow, tempName, writeSynced } from './file-primitives.js';
import { isoString } from '../time/index.js';
import { shownPath } from './shown-name.js';
import type { RecoverableIdentity } from '../results/status.js';

// Identities kept beside the live file under names no sweep ever deletes:
//   <name>.restore-<UTC stamp>  a complete identity an interrupted write or swap left outside the live
//                               file and the backup (an enrolled key, or the identity being replaced)
//   <name>.corrupt-<UTC stamp>  a live file that did not decode, kept aside instead of going onto .bak
// Both are 0600 and created exclusively (never overwriting one another). `status` lists them.
//
// What a kill -9 at each failpoint leaves (L = identity in service, B = .bak, N = newly enrolled,
// K = <name>.restore-*), and what the next run does ("sweep" = sweepInterruptedWrites):
//   rotate  after-enroll              L live, B .bak; N nowhere on disk (orphan runner in Datadog)
//           after-temp-write          L live, B .bak, N in a temp → sweep keeps it as K (status lists it)
//           after-backup-temp-write   L live, B .bak, L in a temp (sweep deletes: same as live), N → K
//           after-backup              L live and .bak, N → K
//           after-rename, -dir-fsync  N live, L .bak: done
//           after-keep-aside          corrupt live also in .corrupt-*, B .bak untouched, N → K
//   swap    swap-after-temp-write     nothing changed; the temp equals .bak (or K) and is deleted
//  (rollback) swap-after-keep-live    L live and K (K redundant: status says "same as the live file")
//           swap-after-rename         B live and .bak, L only in K: status lists it; adoptRecoveryAsBackup
//                                     (or `mv K <name>.bak`) finishes the rollback
//           swap-after-backup, -remove-source, -dir-fsync   B live, L .bak: done
//           swap-after-keep-backup    (from a K) the old .bak also kept as another K
//   sweep   sweep-after-keep          the temp and its K both exist; the next sweep deletes the temp

type RecoveryKind = RecoverableIdentity['kind'];

/** 20261203T090512Z: sortable, no characters a shell or a filesystem minds. */
export function utcStamp(date: Date): string {
  return isoString(date)
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

const KIND_MARK: Record<RecoveryKind, string> = { restore: '.restore-', corrupt: '.corrupt-' };

export function isRecoveryName(identityPath: string, name: string): RecoveryKind | undefined {
  const base = basename(identityPath);
  for (const kind of ['restore', 'corrupt'] as const) if (name.startsWith(`${base}${KIND_MARK[kind]}`)) return kind;
  return undefined;
}

const LINK_UNSUPPORTED = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK']);

/**
 * Gives the file at `source` a second, stable name `<identityPath>.<kind>-<stamp>` and returns it.
 * A hard link when the filesystem allows it (atomic, no copy); otherwise a fsynced 0600 temp copy
 * linked into place. Either way the new name holds the complete content from its first instant.
 */
export async function keepAside(source: string, identityPath: string, kind: RecoveryKind, now: Date, owner?: FileOwner): Promise<string> {
  const base = `${identityPath}${KIND_MARK[kind]}${utcStamp(now)}`;
  let copy: string | undefined;
  try {
    for (let n = 1; n < 1000; n++) {
      const candidate = n === 1 ? base : `${base}-${n}`;
      try {
        await link(copy ?? source, candidate);
        await makePrivate(candidate, source, owner);
        return candidate;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? '';
        if (code === 'EEXIST') continue;
        if (copy || !LINK_UNSUPPORTED.has(code)) throw err;
        const content = await readNoFollow(source);
        if (!content) throw err;
        copy = tempName(identityPath, `.${kind}`);
        await writeSynced(copy, content, owner);
        n--;
      }
    }
    throw new StorageError(
      'WRITE_FAILED',
      `no free name for ${base}`,
      `Remove old ${basename(base)}* files from ${dirname(identityPath)}.`,
      { path: base },
    );
  } finally {
    if (copy) await unlink(copy).catch(() => undefined);
  }
}

/** The users whose files beside the identity are ours: the running user and the owner the rule gives. */
export function ownUids(owner?: FileOwner): Set<number> {
  return new Set([process.geteuid?.() ?? 0, ...(owner ? [owner.uid] : [])]);
}

/**
 * Makes the new name `candidate` 0600 through a descriptor opened on it with O_NOFOLLOW and checked
 * (regular, ours): whoever owns the file could swap the name for a symbolic link between a check and a
 * change by path, and a chmod by path would then change the mode of the file the link points to
 * (docs/security.md §5). Afterwards the name must still be that very file, or the kept name would be
 * someone's link. A name that is no longer a regular file of ours is removed again and refused; the
 * file it was made from is left as it is.
 */
async function makePrivate(candidate: string, source: string, owner: FileOwner | undefined): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(candidate, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const stats = await handle.stat();
    if (!stats.isFile()) throw notOurs('SYMLINK_REFUSED', source, 'is not a regular file');
    if (!ownUids(owner).has(stats.uid)) throw notOurs('FILE_OWNER_REFUSED', source, `belongs to uid ${stats.uid}, not to this user`);
    // Between the check and the change of mode: where a change by path would follow a swapped-in link.
    failpoint('keep-aside-before-chmod');
    await handle.chmod(0o600);
    const now = await lstat(candidate).catch(() => undefined);
    if (!now?.isFile() || now.ino !== stats.ino || now.dev !== stats.dev)
      throw notOurs('SYMLINK_REFUSED', source, 'was replaced by another file while being kept aside');
  } catch (err) {
    await unlink(candidate).catch(() => undefined);
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw notOurs('SYMLINK_REFUSED', source, 'was replaced by a symbolic link');
    throw err;
  } finally {
    await handle?.close();
  }
}

function notOurs(code: 'SYMLINK_REFUSED' | 'FILE_OWNER_REFUSED', source: string, why: string): StorageError {
  return new StorageError(
    code,
    `${source} ${why}; its mode and owner are left as they are`,
    'Nothing was changed. Check who wrote that file, remove it if it is not yours, then run again.',
    { path: source },
  );
}

function describe(text: string): Pick<RecoverableIdentity, 'decodes' | 'urn' | 'fingerprint' | 'error'> {
  try {
    const identity = decodeIdentity(parseIdentityFile(text));
    return { decodes: true, urn: identity.record.urn, fingerprint: identity.key.kid };
  } catch (err) {
    return { decodes: false, error: (err as Error).message };
  }
}

/** Every `.restore-*` and `.corrupt-*` file beside `identityPath`, oldest first, described. */
export async function listRecoverableIdentities(identityPath: string): Promise<RecoverableIdentity[]> {
  const dir = dirname(identityPath);
  const names = (await readdir(dir).catch(() => [] as string[])).sort();
  const live = await readNoFollow(identityPath).catch(() => undefined);
  const backup = await readNoFollow(`${identityPath}.bak`).catch(() => undefined);
  const found: RecoverableIdentity[] = [];
  for (const name of names) {
    const kind = isRecoveryName(identityPath, name);
    if (!kind) continue;
    const path = join(dir, name);
    const content = await readNoFollow(path).catch(() => undefined);
    if (!content) continue;
    const sameAs = live?.equals(content) ? 'live' : backup?.equals(content) ? 'backup' : null;
    // Anyone who may write the directory can choose such a name.
    found.push({ path: shownPath(dir, name), kind, sameAs, ...describe(content.toString('utf8')) });
  }
  return found;
}

/**
 * Makes a recovery file the backup (finishes a rollback interrupted after its first rename). Refused
 * when the current backup is an identity found nowhere else, so nothing is ever lost by it.
 */
// exported for tests: a crash between its two renames, replayed
export async function adoptRecoveryAsBackup(identityPath: string, recoveryPath: string): Promise<void> {
  const backupPath = `${identityPath}.bak`;
  const stats = await lstat(recoveryPath).catch(() => undefined);
  if (!stats?.isFile() || !isRecoveryName(identityPath, basename(recoveryPath)) || dirname(recoveryPath) !== dirname(identityPath)) {
    throw new StorageError(
      'RECOVERY_NOT_FOUND',
      `${recoveryPath} is not a recovery file of ${identityPath}`,
      'Nothing was changed. List them with `par-identity status`.',
      { path: recoveryPath },
    );
  }
  const [live, backup] = [await readNoFollow(identityPath), await readNoFollow(backupPath)];
  const backupDecodes = backup ? describe(backup.toString('utf8')).decodes : false;
  if (backup && backupDecodes && !live?.equals(backup)) {
    throw new StorageError(
      'BACKUP_IN_USE',
      `${backupPath} holds an identity that exists nowhere else`,
      `Nothing was changed. Restore ${recoveryPath} by hand if you mean to discard the backup.`,
      { path: backupPath },
    );
  }
  await rename(recoveryPath, backupPath);
}
