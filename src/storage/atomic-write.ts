import { lstat, readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { failpoint } from '../failpoint.js';
import { decodeIdentity, parseIdentityFile } from '../identity/identity-record.js';
import { fsyncDirectory, readNoFollow, readOwnedNoFollow, storageFailure, TEMP_MARK, tempName, writeSynced } from './file-primitives.js';
import { ownerForFilesBeside, refuseForeignFile } from './file-owner.js';
import { refuseSymlink } from './identity-file.js';
import { pidAlive } from './pid.js';
import { isRecoveryName, keepAside, ownUids } from './recovery-files.js';

// Crash-safe replacement of a small secret file: temp file in the same directory (0600, O_EXCL),
// fsync, previous content kept as <name>.bak, rename over the live file, fsync the directory.
// At any instant a kill -9 can land, the live path holds either the old or the new complete content,
// and every identity the operation touches is complete under a name the next run finds (live, .bak,
// <name>.restore-*, or a temp file that the sweep turns into a .restore-* file instead of deleting).

export interface WriteResult {
  path: string;
  backupPath?: string;
  /** Where the replaced content was kept when it could not go onto .bak (a corrupt live file). */
  keptAsidePath?: string;
  warnings: string[];
}

interface SweepResult {
  /** Temp files removed: redundant copies (same bytes as the live file, the backup or a recovery file) or not an identity. */
  removed: string[];
  /** Temp files holding an identity found nowhere else, now kept as `<name>.restore-<stamp>`. */
  recovered: string[];
  /**
   * Temp-named files this user did not create (another owner, not a regular file, or one that changed
   * under us): never read into a kept copy, chmod'ed, chown'ed or removed, only reported.
   */
  leftAlone: LeftAlone[];
}

interface LeftAlone {
  /** The file name as found in the directory (anyone who can write there chose it). */
  name: string;
  why: string;
}

function decodes(content: Buffer): boolean {
  try {
    decodeIdentity(parseIdentityFile(content.toString('utf8')));
    return true;
  } catch {
    return false;
  }
}

/**
 * Deals with temp files crashed earlier runs left beside `path` (their pid is gone, or it is ours).
 * It never deletes the only copy of an identity: a temp is removed only when its bytes equal the live
 * file, the backup or a recovery file, or when it does not decode as an identity; any other temp is
 * an identity found nowhere else (an enrolled key whose write was interrupted) and is kept as
 * `<name>.restore-<stamp>` for `status` to report. Run it while holding the lock of `path`.
 */
export async function sweepInterruptedWrites(path: string, now = new Date()): Promise<SweepResult> {
  const dir = dirname(path);
  const prefix = `.${basename(path)}`;
  const result: SweepResult = { removed: [], recovered: [], leftAlone: [] };
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return result;
  }
  const temps = names.filter((name) => {
    if (!name.startsWith(prefix) || !name.includes(TEMP_MARK)) return false;
    const pid = Number(/\.tmp-(\d+)-/.exec(name)?.[1]);
    return !(Number.isInteger(pid) && pid !== process.pid && pidAlive(pid));
  });
  if (!temps.length) return result;
  const known: Buffer[] = [];
  for (const name of [basename(path), `${basename(path)}.bak`, ...names.filter((n) => isRecoveryName(path, n))]) {
    const content = await readNoFollow(join(dir, name)).catch(() => undefined);
    if (content) known.push(content);
  }
  // Ours are the running user's files and those the owner rule gave another user (docs/security.md §2);
  // in a directory the rule refuses, only the running user's.
  const ours = ownUids(await ownerForFilesBeside(path).catch(() => undefined));
  for (const name of temps) {
    const full = join(dir, name);
    const entry = await lstat(full).catch(() => undefined);
    if (!entry) continue;
    if (!entry.isFile() || !ours.has(entry.uid)) {
      result.leftAlone.push({ name, why: entry.isFile() ? `owned by uid ${entry.uid}` : 'not a regular file' });
      continue;
    }
    const read = await readOwnedNoFollow(full).catch(() => undefined);
    if (read && !ours.has(read.uid)) {
      result.leftAlone.push({ name, why: `owned by uid ${read.uid}` });
      continue;
    }
    const content = read?.content;
    if (content && decodes(content) && !known.some((k) => k.equals(content))) {
      let kept: string;
      try {
        kept = await keepAside(full, path, 'restore', now);
      } catch (err) {
        // Kept where it is: it may be the only copy of an identity.
        result.leftAlone.push({ name, why: `it changed while being kept aside (${(err as NodeJS.ErrnoException).code ?? 'error'})` });
        continue;
      }
      known.push(content);
      result.recovered.push(kept);
      failpoint('sweep-after-keep');
    } else {
      result.removed.push(name);
    }
    await unlink(full).catch(() => undefined);
  }
  return result;
}

/**
 * Replaces `path` with `content`. When `path` exists its exact bytes are first kept as `<path>.bak`
 * (0600) — or, with `keepBackup: 'aside'`, as `<path>.corrupt-<stamp>` leaving .bak untouched (a live
 * file that does not decode must never replace a good backup). Owner and group follow the owner rule
 * of src/storage/file-owner.ts.
 */
export async function replaceFileAtomically(
  path: string,
  content: string,
  options: { keepBackup: boolean | 'aside'; now?: Date },
): Promise<WriteResult> {
  const warnings: string[] = [];
  // Following a link would give the new key the owner of whatever the link points at.
  await refuseSymlink(path);
  if (options.keepBackup === true) await refuseSymlink(`${path}.bak`);
  await sweepInterruptedWrites(path, options.now);
  const old = await stat(path).catch(() => undefined);
  // The one owner rule (docs/security.md §2), never the old file's owner: that file may be planted.
  const owner = await ownerForFilesBeside(path);
  // Checked again here, not only before enrolling: a file can be planted in between (and watch
  // --output writes for as long as it runs).
  const untouched = 'The file was not touched and the new identity was not written there.';
  await refuseForeignFile(path, owner, untouched);
  if (options.keepBackup === true) await refuseForeignFile(`${path}.bak`, owner, untouched);
  const temp = tempName(path);
  const backupTemp = tempName(path, '.bak');
  let backupPath: string | undefined;
  let keptAsidePath: string | undefined;
  try {
    await writeSynced(temp, content, owner, warnings);
    failpoint('after-temp-write');
    if (old && options.keepBackup === 'aside') {
      keptAsidePath = await keepAside(path, path, 'corrupt', options.now ?? new Date(), owner);
      failpoint('after-keep-aside');
    } else if (old && options.keepBackup) {
      const previous = await readNoFollow(path);
      if (previous) {
        await writeSynced(backupTemp, previous, owner, warnings);
        failpoint('after-backup-temp-write');
        backupPath = `${path}.bak`;
        await rename(backupTemp, backupPath);
        failpoint('after-backup');
      }
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
  return { path, ...(backupPath ? { backupPath } : {}), ...(keptAsidePath ? { keptAsidePath } : {}), warnings };
}

/**
 * Writes a secret file that is not an identity (e.g. the emulator's admin kubeconfig) as the identity
 * file is written: refused when `path` is a link, a 0600 temp file (O_EXCL|O_NOFOLLOW, mode set on
 * the descriptor) renamed over `path`. An existing file is replaced, never written into: its mode,
 * owner and other names keep nothing of the new content. No backup, no owner carried over.
 */
export async function writePrivateFile(path: string, content: string, what: string, options: { ownerRule?: boolean } = {}): Promise<void> {
  await refuseSymlink(path, what);
  // Beside an identity (its pending key): the identity's owner rule (docs/security.md §2), and no failpoint of the identity's own write.
  const owner = options.ownerRule ? await ownerForFilesBeside(path) : undefined;
  if (options.ownerRule) await refuseForeignFile(path, owner);
  const temp = tempName(path);
  try {
    await writeSynced(temp, content, owner);
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw storageFailure(err, path);
  }
  await fsyncDirectory(dirname(path)).catch(() => undefined);
}

interface SwapOptions {
  /** The file whose content goes into service: `<path>.bak` (rollback) or a `.restore-*` file. */
  from?: string;
  /** The live file does not decode: keep it as `.corrupt-<stamp>` and leave .bak as it is. */
  liveCorrupt?: boolean;
  now?: Date;
}

/**
 * Puts the content of `from` (default `<path>.bak`) into service and keeps the identity it replaces
 * as the new `.bak`, so that a kill -9 at any instruction leaves both identities complete in files
 * the next run finds:
 *   1. temp ← copy of `from` (fsynced)              live = L, .bak = B
 *   2. hard link live → `<path>.restore-<stamp>` (K)  L also in K
 *   3. rename temp → live                          live = B, L only in K (a name no sweep deletes)
 *   4. rename K → .bak                             live = B, .bak = L
 *   5. fsync the directory
 * With `from` a recovery file, a distinct .bak is first kept aside too, and `from` is removed last
 * (it then equals the live file). A corrupt live file goes to `.corrupt-<stamp>` instead of .bak.
 */
export async function swapIntoService(path: string, options: SwapOptions = {}): Promise<WriteResult> {
  const warnings: string[] = [];
  const now = options.now ?? new Date();
  const backupPath = `${path}.bak`;
  const from = options.from ?? backupPath;
  for (const file of new Set([path, backupPath, from])) await refuseSymlink(file);
  await sweepInterruptedWrites(path, now);
  const source = await readNoFollow(from);
  if (!source) throw storageFailure(Object.assign(new Error('ENOENT'), { code: 'ENOENT' }), from);
  const old = await stat(path).catch(() => undefined);
  // The one owner rule (docs/security.md §2), never the old file's owner: that file may be planted.
  const owner = await ownerForFilesBeside(path);
  await refuseForeignFile(path, owner);
  const temp = tempName(path);
  let kept: string | undefined;
  let keptAsidePath: string | undefined;
  let finalBackup: string | undefined;
  try {
    await writeSynced(temp, source, owner, warnings);
    failpoint('swap-after-temp-write');
    if (from !== backupPath) {
      const backup = await readNoFollow(backupPath);
      const live = await readNoFollow(path);
      if (backup && !backup.equals(source) && !live?.equals(backup)) {
        await keepAside(backupPath, path, 'restore', now);
        failpoint('swap-after-keep-backup');
      }
    }
    if (old && options.liveCorrupt) {
      keptAsidePath = await keepAside(path, path, 'corrupt', now, owner);
    } else if (old) {
      kept = await keepAside(path, path, 'restore', now, owner);
    }
    failpoint('swap-after-keep-live');
    await rename(temp, path);
    failpoint('swap-after-rename');
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    if (kept) await unlink(kept).catch(() => undefined);
    throw storageFailure(err, path);
  }
  try {
    if (kept) {
      await rename(kept, backupPath);
      finalBackup = backupPath;
      failpoint('swap-after-backup');
    }
    if (from !== backupPath) {
      await unlink(from);
      failpoint('swap-after-remove-source');
    }
  } catch (err) {
    // The new identity is in service; the replaced one is still complete in `kept`.
    warnings.push(
      `could not finish (${(err as NodeJS.ErrnoException).code}): the replaced identity is kept as ${kept ?? 'its recovery file'}`,
    );
  }
  await fsyncDirectory(dirname(path)).catch((err: NodeJS.ErrnoException) => {
    warnings.push(`directory fsync failed (${err.code}); the restored file is in place but may not survive a power loss`);
  });
  failpoint('swap-after-dir-fsync');
  return { path, ...(finalBackup ? { backupPath: finalBackup } : {}), ...(keptAsidePath ? { keptAsidePath } : {}), warnings };
}
