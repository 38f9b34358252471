import { randomBytes } from 'node:crypto';
import { constants, unlinkSync } from 'node:fs';
import { link, lstat, open, readdir, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { ParError } from '../errors.js';
import { type Clock, isoString, systemClock } from '../time/index.js';
import { pidAlive, procStartOf } from './pid.js';

// One writer per identity file: `<identity-file>.lock` holds the holder's pid, host and start time.
//
// Creation is exclusive and never half-visible: the JSON is written and fsynced into a private temp
// file which is then hard-linked to the lock name (link(2) fails with EEXIST exactly like
// O_CREAT|O_EXCL, and a reader never sees an empty lock).
//
// A lock is stale only when its host is this host and its pid is gone (kill(pid, 0) → ESRCH; EPERM
// means alive), or the pid now belongs to a process that started after the lock was taken (Linux
// /proc start time). A lock from another host is never stale automatically: we cannot see its pid.
//
// Takeover of a stale lock is race-free without any check-then-unlink window: every lock carries a
// random nonce, and removing the stale instance N requires creating `<lock>.takeover-<N>` exclusively.
// Exactly one taker wins that name for that instance; it re-reads the lock, unlinks it only if it still
// carries nonce N, and then competes like everyone else for the free name. The winner removes its
// takeover file as soon as instance N is gone from the lock name: a late taker that read N a moment
// ago may then win the takeover name too, but its re-read can no longer find N (nonces are random and
// never written twice), so it unlinks nothing and keeps losing (docs/locking.md §2). A taker that
// crashes while holding a takeover file leaves a file that is itself a stale lock, removed the same
// way; such leftovers older than an hour are also swept at the next lock, and `status` lists them.
//
// Every field is validated before use (docs/locking.md §1): the nonce becomes part of a file name, so a
// lock whose nonce is not exactly the hex form written here names no holder and is never acted on.

// exported for tests: the tests write holders of this shape
export interface LockHolder {
  pid: number;
  host: string;
  /** ISO 8601 UTC time the lock was taken. */
  since: string;
  /** Linux process start time (clock ticks since boot, /proc/<pid>/stat field 22), to detect pid reuse. */
  procStart?: number;
  nonce: string;
}

interface AcquireLockOptions {
  /** 0 = fail at once when held (default). */
  waitSeconds?: number;
  clock?: Clock;
  /** Poll interval before jitter, ms (default 100; each wait is 50 %…150 % of it). */
  pollMs?: number;
  random?: () => number;
  /**
   * false: a stale lock is left in place and reported as LOCKED (details.stale says why it is stale),
   * for a reading run (`status`), which never removes another run's files. Default true.
   */
  takeOver?: boolean;
  /** Ends a wait for the lock at once (a run stopped by SIGINT/SIGTERM); rejects with its reason. */
  signal?: AbortSignal;
}

interface IdentityLock {
  path: string;
  holder: LockHolder;
  /** Removes the lock if it is still ours. Safe to call more than once. */
  release(): Promise<void>;
}

export const TAKEOVER_MARK = '.takeover-';
const TAKEOVER_LITTER_MS = 60 * 60 * 1000;

export function lockPathOf(identityPath: string): string {
  return `${identityPath}.lock`;
}

/** Why this holder no longer holds the lock, or undefined when it may still hold it. */
export function staleReason(holder: Pick<LockHolder, 'pid' | 'host' | 'procStart'>, host = hostname()): string | undefined {
  if (holder.host !== host) return undefined;
  if (!Number.isSafeInteger(holder.pid) || holder.pid <= 0) return 'it names no valid pid';
  if (holder.pid === process.pid) return undefined;
  if (!pidAlive(holder.pid)) return `pid ${holder.pid} is gone`;
  const now = procStartOf(holder.pid);
  if (holder.procStart !== undefined && now !== undefined && now !== holder.procStart)
    return `pid ${holder.pid} now belongs to another process`;
  return undefined;
}

// Exactly the forms this tool writes. A lock file is writable by whoever can write the directory: its
// nonce becomes part of the takeover file's name and its host and time reach the terminal, so a field
// of any other form makes the whole lock "not one we wrote", reported and never acted on
// (docs/security.md §1).
const NONCE = /^[0-9a-f]{16}$/;
export const HOST_FIELD = /^[A-Za-z0-9._-]{1,255}$/;
const SINCE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

function parseHolder(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (
      Number.isSafeInteger(value.pid) &&
      typeof value.host === 'string' &&
      HOST_FIELD.test(value.host) &&
      typeof value.since === 'string' &&
      SINCE.test(value.since) &&
      typeof value.nonce === 'string' &&
      NONCE.test(value.nonce) &&
      (value.procStart === undefined || Number.isSafeInteger(value.procStart))
    )
      return value as LockHolder;
  } catch {
    // not a lock we wrote
  }
  return undefined;
}

/** Far more than any lock this tool writes; a bigger file is not one of ours and is not read whole. */
const MAX_LOCK_BYTES = 4096;

/**
 * The holder a lock (or takeover) file names. Whoever may write the directory may have put anything
 * at that name: a FIFO would block a plain open(2) forever and a huge file would be read whole, so it is
 * opened O_NONBLOCK and O_NOFOLLOW and read only when it is a regular file, and at most MAX_LOCK_BYTES.
 */
export async function readHolder(path: string): Promise<LockHolder | 'missing' | 'unreadable'> {
  try {
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      if (!(await handle.stat()).isFile()) return 'unreadable';
      const buffer = Buffer.alloc(MAX_LOCK_BYTES + 1);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      if (bytesRead > MAX_LOCK_BYTES) return 'unreadable';
      return parseHolder(buffer.subarray(0, bytesRead).toString('utf8')) ?? 'unreadable';
    } finally {
      await handle.close();
    }
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable';
  }
}

/** Creates `path` exclusively with the holder's JSON, complete from its first instant. */
async function createExclusive(path: string, holder: LockHolder): Promise<boolean> {
  const temp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const handle = await open(temp, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600);
  try {
    await handle.chmod(0o600);
    await handle.writeFile(`${JSON.stringify(holder)}\n`);
    await handle.sync();
  } catch (err) {
    // A full disk (ENOSPC) fails here: the empty temp file is not left behind.
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  await handle.close();
  try {
    await link(temp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/**
 * Removes the stale instance `stale` of `path` if we win its takeover file; false when another
 * process is taking it over (the caller polls again). Exported for the unit tests of a late taker.
 */
// exported for tests: the race of two runs removing one stale lock
export async function removeStale(path: string, stale: LockHolder, me: LockHolder, depth = 0): Promise<boolean> {
  const guard = `${path}${TAKEOVER_MARK}${stale.nonce}`;
  if (!(await createExclusive(guard, me))) {
    const guardHolder = await readHolder(guard);
    if (depth >= 8 || typeof guardHolder === 'string' || !staleReason(guardHolder)) return false;
    // The taker crashed mid-takeover: its takeover file is itself a stale lock.
    if (!(await removeStale(guard, guardHolder, me, depth + 1))) return false;
    if (!(await createExclusive(guard, me))) return false;
  }
  // We alone may remove instance `stale`; anyone else who read it loses on the takeover name.
  const current = await readHolder(path);
  if (typeof current !== 'string' && current.nonce === stale.nonce) await unlink(path).catch(() => undefined);
  // Instance `stale` is gone from `path` now (or was already) and its nonce never comes back: a late
  // taker winning the guard name after us finds nothing to remove (docs/locking.md §2). The guard is
  // removed only while it still carries our nonce (only a taker who saw us dead could replace it).
  const mine = await readHolder(guard);
  if (typeof mine !== 'string' && mine.nonce === me.nonce) await unlink(guard).catch(() => undefined);
  return true;
}

async function sweepTakeoverLitter(path: string, now: number): Promise<void> {
  const prefix = `${basename(path)}${TAKEOVER_MARK}`;
  const names = await readdir(dirname(path)).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix) || !NONCE.test(name.slice(prefix.length))) continue;
    const full = join(dirname(path), name);
    const stats = await lstat(full).catch(() => undefined);
    if (stats && now - stats.mtimeMs > TAKEOVER_LITTER_MS) await unlink(full).catch(() => undefined);
  }
}

function lockedError(
  identityPath: string,
  lockPath: string,
  holder: LockHolder | 'unreadable',
  waitSeconds: number,
  stale?: string,
): ParError {
  const waited = waitSeconds > 0 ? ` (waited ${waitSeconds} s)` : '';
  if (holder === 'unreadable') {
    return new ParError(
      'LOCKED',
      `${identityPath} is locked: ${lockPath} exists but does not name a holder${waited}`,
      `Nothing was changed: ${identityPath} and its backup are untouched. If no par-identity run is in progress, remove ${lockPath} and run again.`,
      { path: identityPath, lockPath },
    );
  }
  const sameHost = holder.host === hostname();
  const hint = sameHost
    ? `Nothing was changed: ${identityPath} and its backup are untouched. ` +
      `Wait for pid ${holder.pid} to finish (or pass --wait-lock with a duration, e.g. --wait-lock 2m); ` +
      `if that process is not a par-identity run, remove ${lockPath} and run again.`
    : `Nothing was changed: ${identityPath} and its backup are untouched. ` +
      `The lock was taken on host ${holder.host}, so its process cannot be checked from here ` +
      'and the lock is never treated as stale automatically. ' +
      `Make sure no par-identity run is active on ${holder.host}, then remove ${lockPath} and run again.`;
  return new ParError(
    'LOCKED',
    `${identityPath} is locked by pid ${holder.pid} on host ${holder.host} since ${holder.since}${waited}`,
    hint,
    {
      path: identityPath,
      lockPath,
      pid: holder.pid,
      host: holder.host,
      since: holder.since,
      ...(stale ? { stale } : {}),
    },
  );
}

const held = new Set<string>();
let exitHookInstalled = false;

/** A process that ends without unwinding (an uncaught error) still removes its locks. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const path of held) {
      try {
        unlinkSync(path);
      } catch {
        // already gone
      }
    }
  });
}

/**
 * Takes `<identityPath>.lock`, waiting up to `waitSeconds` while another live process holds it.
 * Throws ParError LOCKED (exit 11) naming the holder. The caller releases it in a finally block.
 */
export async function acquireIdentityLock(identityPath: string, options: AcquireLockOptions = {}): Promise<IdentityLock> {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const pollMs = options.pollMs ?? 100;
  const waitSeconds = options.waitSeconds ?? 0;
  const lockPath = lockPathOf(identityPath);
  const deadline = clock.now() + waitSeconds * 1000;
  if (options.takeOver !== false) await sweepTakeoverLitter(lockPath, clock.now());
  const procStart = procStartOf(process.pid);
  const me: LockHolder = {
    pid: process.pid,
    host: hostname(),
    since: isoString(clock.now()),
    ...(procStart === undefined ? {} : { procStart }),
    nonce: randomBytes(8).toString('hex'),
  };
  for (;;) {
    options.signal?.throwIfAborted();
    if (await createExclusive(lockPath, me)) break;
    const holder = await readHolder(lockPath);
    if (holder === 'missing') continue; // released between our attempt and our read
    const stale = holder === 'unreadable' ? undefined : staleReason(holder);
    if (stale && options.takeOver === false) throw lockedError(identityPath, lockPath, holder, 0, stale);
    if (stale && holder !== 'unreadable') {
      await removeStale(lockPath, holder, me);
      if (await createExclusive(lockPath, me)) break;
    }
    const remaining = deadline - clock.now();
    if (remaining <= 0) {
      const current = await readHolder(lockPath);
      if (current === 'missing') continue;
      throw lockedError(identityPath, lockPath, current, waitSeconds);
    }
    await clock.sleep(Math.min(remaining, pollMs * (0.5 + random())), options.signal);
  }
  held.add(lockPath);
  installExitHook();
  let released = false;
  return {
    path: lockPath,
    holder: me,
    async release() {
      if (released) return;
      released = true;
      held.delete(lockPath);
      // Only a taker who saw us dead could have replaced it, and we are alive: the check is exact.
      const current = await readHolder(lockPath);
      if (typeof current !== 'string' && current.nonce === me.nonce) await unlink(lockPath).catch(() => undefined);
    },
  };
}

/**
 * The lock's holder when it is a live process on this host other than this one (status reading while
 * a rotation holds the lock), else undefined. Read only.
 */
export async function liveLockHolder(identityPath: string): Promise<LockHolder | undefined> {
  const holder = await readHolder(lockPathOf(identityPath));
  if (typeof holder !== 'object' || holder.host !== hostname() || holder.pid === process.pid) return undefined;
  return staleReason(holder) === undefined ? holder : undefined;
}
