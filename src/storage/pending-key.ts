import { link, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { decodePrivateJwk } from '../identity/index.js';
import type { PossibleOrphan } from '../results/status.js';
import { isoString } from '../time/index.js';
import { decodeHolder, encodeHolder, judgeHolder, type RunHolder } from './run-holder.js';
import { writePrivateFile } from './atomic-write.js';
import { fsyncDirectory, readNoFollow } from './file-primitives.js';
import { utcStamp } from './recovery-files.js';
import { shownPath } from './shown-name.js';

// `<identity>.pending`: the key a rotation is about to send for enrollment, kept durably before the
// request leaves (docs/identity-lifecycle.md §3), so a crash between a successful enrollment and the
// write never leaves a registered runner whose key nothing holds. Once the identity holding the key
// is written, or the server refused it outright, the file goes. A later run that finds it moves it
// to `<identity>.pending-<UTC stamp>` (never deleted by the tool) and reports it as a possible orphan;
// `status` lists both. The agent reads only its identity file by its exact name (docs/protocol.md §5).

/** What is kept: the key (encoded as in the identity file), and what names the runner it may have become in Datadog. */
interface PendingKeyRecord {
  privateKey: string;
  createdAt: string;
  runnerName: string;
  enrollmentUrl: string;
  /** The run that keeps it, until it writes or drops it (docs/identity-lifecycle.md §3); records of older versions have none. */
  holder?: RunHolder;
}

function pendingPathOf(identityPath: string): string {
  return `${identityPath}.pending`;
}

const ASIDE_MARK = '.pending-';

/** Written with the identity file's owner rule and atomic write (temp, fsync, rename, directory fsync). */
export async function writePendingKey(identityPath: string, record: PendingKeyRecord): Promise<void> {
  await writePrivateFile(pendingPathOf(identityPath), encodePendingRecord(record), 'the pending key', { ownerRule: true });
}

/** The record as kept, in a file or in a Secret's data key: JSON with the key encoded as in the identity file. */
export function encodePendingRecord(record: PendingKeyRecord): string {
  return JSON.stringify({
    private_key: record.privateKey,
    created_at: record.createdAt,
    runner_name: record.runnerName,
    enrollment_url: record.enrollmentUrl,
    ...(record.holder ? { holder: encodeHolder(record.holder) } : {}),
  });
}

export async function removePendingKey(identityPath: string): Promise<void> {
  await unlink(pendingPathOf(identityPath)).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  await fsyncDirectory(dirname(identityPath)).catch(() => undefined);
}

/** A pending or set-aside file, described without its key (under the name `shown`); a file that does not parse still counts. */
async function describePending(path: string, state: PossibleOrphan['state'], shown = path, nowMs = Date.now()): Promise<PossibleOrphan | undefined> {
  const content = await readNoFollow(path).catch(() => undefined);
  return content ? describePendingRecord(content.toString('utf8'), shown, state, nowMs) : undefined;
}

/**
 * One kept record (`path` names the file or the Secret's key), described without its key; one that
 * does not parse still counts. A `pending` record that names its holder says whether that run may
 * still be under way at `nowMs` (a set-aside one was judged interrupted by the run that moved it).
 */
export function describePendingRecord(text: string, path: string, state: PossibleOrphan['state'], nowMs = Date.now()): PossibleOrphan {
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const key = decodePrivateJwk(String(value.private_key));
    const createdAt = typeof value.created_at === 'string' && !Number.isNaN(Date.parse(value.created_at)) ? isoString(new Date(value.created_at)) : null;
    const runnerName = typeof value.runner_name === 'string' && /^[\w.:-]{1,200}$/.test(value.runner_name) ? value.runner_name : null;
    const holder = state === 'pending' ? decodeHolder(value.holder) : undefined;
    const judged = holder && judgeHolder(holder, nowMs);
    return {
      path,
      state,
      fingerprint: key.kid,
      createdAt,
      runnerName,
      decodes: true,
      ...(holder && judged ? { holder: { host: holder.host, pid: holder.pid, deadline: isoString(new Date(holder.deadlineMs)), lives: judged.lives, checkedBy: judged.checkedBy, why: judged.why } } : {}),
    };
  } catch {
    return { path, state, fingerprint: null, createdAt: null, runnerName: null, decodes: false };
  }
}

/**
 * Every possible orphan beside the identity: the pending file of an unfinished run (with its holder,
 * which may still be under way: the caller tells the two apart), then those set aside, oldest first.
 * A key `held` (the live file's or the backup's) is no orphan. Read only.
 */
export async function listPossibleOrphans(identityPath: string, held: readonly string[], nowMs = Date.now()): Promise<PossibleOrphan[]> {
  const dir = dirname(identityPath);
  const prefix = `${basename(identityPath)}${ASIDE_MARK}`;
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.startsWith(prefix)).sort();
  const found: PossibleOrphan[] = [];
  // The set-aside names are listed from a directory others may write: shown through the sanitizer.
  for (const [path, state, shown] of [[pendingPathOf(identityPath), 'pending', pendingPathOf(identityPath)] as const, ...names.map((n) => [join(dir, n), 'set aside', shownPath(dir, n)] as const)]) {
    const described = await describePending(path, state, shown, nowMs);
    if (described && !(described.fingerprint && held.includes(described.fingerprint))) found.push(described);
  }
  return found;
}

/**
 * Moves the pending file of an interrupted run to `<identity>.pending-<stamp>` (a new, exclusive name:
 * a hard link, then the old name removed; a rename where links are refused) and returns it as set aside.
 */
export async function setAsidePendingKey(identityPath: string, now: Date, held: readonly string[]): Promise<PossibleOrphan | undefined> {
  const pending = pendingPathOf(identityPath);
  const found = await describePending(pending, 'pending');
  if (!found) return undefined;
  // Interrupted after the write: the key is in service (or the backup), nothing is orphaned.
  if (found.fingerprint && held.includes(found.fingerprint)) {
    await removePendingKey(identityPath);
    return undefined;
  }
  const base = `${identityPath}${ASIDE_MARK}${utcStamp(now)}`;
  for (let n = 1; n < 1000; n++) {
    const candidate = n === 1 ? base : `${base}-${n}`;
    try {
      await link(pending, candidate);
      await unlink(pending);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
      if (await readNoFollow(candidate).catch(() => undefined)) continue;
      await rename(pending, candidate);
    }
    await fsyncDirectory(dirname(identityPath)).catch(() => undefined);
    return { ...found, path: candidate, state: 'set aside' };
  }
  return found;
}
