import { link, readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { decodePrivateJwk } from '../identity/index.js';
import type { PossibleOrphan } from '../results/status.js';
import { isoString } from '../time/index.js';
import { decodeHolder, encodeHolder, judgeHolder, type RunHolder } from './run-holder.js';
import { writePrivateFile } from './atomic-write.js';
import { fsyncDirectory, readNoFollow, readOwnedNoFollow } from './file-primitives.js';
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

/**
 * What a run adds once it knows more (docs/identity-lifecycle.md §3): `urn`, the runner the enrollment
 * registered, before the signed health check; `verification: 'rejected'` once that check answered
 * 401/403. A record with a URN and no rejection is the one the next run verifies again and writes,
 * instead of enrolling another runner.
 */
export interface PendingAmendment {
  urn?: string;
  verification?: 'rejected';
}

/** The pending record as read back, key included (never printed): what a next run needs to resume it. */
export interface PendingKeyRead {
  privateKey: string;
  fingerprint: string;
  createdAt: string | null;
  runnerName: string | null;
  enrollmentUrl: string | null;
  urn: string | null;
  rejected: boolean;
}

const URN_SHAPE = /^urn:dd:apps:on-prem-runner:[A-Za-z0-9._:-]{1,200}$/;

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

/**
 * The record with `change` merged in; every other field is kept as it was (fields other runs write,
 * such as who holds the record, survive). Undefined when the text is not a record.
 */
export function amendPendingRecord(text: string, change: PendingAmendment): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return JSON.stringify({
    ...(value as Record<string, unknown>),
    ...(change.urn ? { urn: change.urn } : {}),
    ...(change.verification ? { verification: change.verification } : {}),
  });
}

/** The record with its key, or undefined when it does not decode. */
export function readPendingRecord(text: string): PendingKeyRead | undefined {
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const privateKey = String(value.private_key);
    const key = decodePrivateJwk(privateKey);
    const described = describePendingRecord(text, '', 'pending');
    return {
      privateKey,
      fingerprint: key.kid,
      createdAt: described.createdAt,
      runnerName: described.runnerName,
      enrollmentUrl: typeof value.enrollment_url === 'string' && value.enrollment_url.length <= 2048 ? value.enrollment_url : null,
      urn: typeof value.urn === 'string' && URN_SHAPE.test(value.urn) ? value.urn : null,
      rejected: value.verification === 'rejected',
    };
  } catch {
    return undefined;
  }
}

/**
 * The pending file's record with its key, or undefined (none, or it does not decode). A next run may
 * put this key in service (docs/identity-lifecycle.md §3), so a file that belongs to anyone but root,
 * this user or the directory's owner (who alone write it) is not taken: planted in a directory others
 * may write, it would have the runner load a key its planter holds. It stays listed as a possible orphan.
 */
export async function readPendingKey(identityPath: string): Promise<PendingKeyRead | undefined> {
  const read = await readOwnedNoFollow(pendingPathOf(identityPath)).catch(() => undefined);
  if (!read || read.content.length > 64 * 1024) return undefined;
  const dirOwner = (await stat(dirname(identityPath)).catch(() => undefined))?.uid;
  if (![0, process.geteuid?.() ?? 0, dirOwner].includes(read.uid)) return undefined;
  return readPendingRecord(read.content.toString('utf8'));
}

/** Merges `change` into the pending file (same owner rule and atomic write); nothing when there is no pending file. */
export async function amendPendingKey(identityPath: string, change: PendingAmendment): Promise<void> {
  const content = await readNoFollow(pendingPathOf(identityPath)).catch(() => undefined);
  const amended = content ? amendPendingRecord(content.toString('utf8'), change) : undefined;
  if (amended) await writePrivateFile(pendingPathOf(identityPath), amended, 'the pending key', { ownerRule: true });
}

export async function removePendingKey(identityPath: string): Promise<void> {
  await unlink(pendingPathOf(identityPath)).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  await fsyncDirectory(dirname(identityPath)).catch(() => undefined);
}

/** A pending or set-aside file, described without its key (under the name `shown`); a file that does not parse still counts. */
async function describePending(
  path: string,
  state: PossibleOrphan['state'],
  shown = path,
  nowMs = Date.now(),
): Promise<PossibleOrphan | undefined> {
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
    const createdAt =
      typeof value.created_at === 'string' && !Number.isNaN(Date.parse(value.created_at)) ? isoString(new Date(value.created_at)) : null;
    const runnerName = typeof value.runner_name === 'string' && /^[\w.:-]{1,200}$/.test(value.runner_name) ? value.runner_name : null;
    const urn = typeof value.urn === 'string' && URN_SHAPE.test(value.urn) ? value.urn : undefined;
    const holder = state === 'pending' ? decodeHolder(value.holder) : undefined;
    const judged = holder && judgeHolder(holder, nowMs);
    return {
      path,
      state,
      fingerprint: key.kid,
      createdAt,
      runnerName,
      ...(urn ? { urn } : {}),
      ...(value.verification === 'rejected' ? { rejected: true } : {}),
      decodes: true,
      ...(holder && judged
        ? {
            holder: {
              host: holder.host,
              pid: holder.pid,
              deadline: isoString(new Date(holder.deadlineMs)),
              lives: judged.lives,
              checkedBy: judged.checkedBy,
              why: judged.why,
            },
          }
        : {}),
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
  for (const [path, state, shown] of [
    [pendingPathOf(identityPath), 'pending', pendingPathOf(identityPath)] as const,
    ...names.map((n) => [join(dir, n), 'set aside', shownPath(dir, n)] as const),
  ]) {
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
