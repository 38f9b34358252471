import { closeSync, constants, openSync, readFileSync } from 'node:fs';

// Whether a process still runs, for the two places that find another run's traces (a lock, temp
// files named with a pid): the one check both use. And the process a pidfile names, held while it is
// checked and signalled (watch --pidfile).

/**
 * kill(pid, 0): ESRCH → gone; EPERM → it runs, under another user (a root rotation seen by another
 * user, or the other way round), so it is alive; success → alive.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Linux process start time (clock ticks since boot, /proc/<pid>/stat field 22), to detect pid reuse. */
export function procStartOf(pid: number): number | undefined {
  try {
    return startOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The real uid a Linux process runs as (/proc/<pid>/status, first field of `Uid:`); undefined when it cannot be read. */
export function procUidOf(pid: number): number | undefined {
  try {
    return uidOfStatus(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * A process held by an open descriptor of its /proc/<pid> directory. That directory stays bound to
 * the very process it was opened for: once that process has exited, every read through it fails
 * (ESRCH), even after the pid number has gone to another process. Node cannot signal through a
 * descriptor (no pidfd_send_signal), so a signal still goes by pid number; stillPinned narrows the
 * window in which that number could name another process to the instant before kill(2)
 * (docs/security.md §4).
 */
interface PinnedProcess {
  pid: number;
  /** Real uid, read through the descriptor. */
  uid: number;
  /** Start time (clock ticks since boot), read through the descriptor. */
  start: number;
  fd: number;
}

function startOfStat(stat: string): number | undefined {
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  const value = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  return Number.isSafeInteger(value) ? value : undefined;
}

function uidOfStatus(status: string): number | undefined {
  const value = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Opens /proc/<pid> and reads uid and start time through it; undefined when no such process runs (or /proc cannot be read). */
export function pinProcess(pid: number): PinnedProcess | undefined {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}`, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const uid = uidOfStatus(readFileSync(`/proc/self/fd/${fd}/status`, 'utf8'));
    const start = startOfStat(readFileSync(`/proc/self/fd/${fd}/stat`, 'utf8'));
    if (uid !== undefined && start !== undefined) return { pid, uid, start, fd };
  } catch {
    // exited while being read
  }
  closeSync(fd);
  return undefined;
}

/**
 * Whether the pinned process still runs as the same user, and its pid still names it and no later
 * process: read through the descriptor (fails once it has exited) and by pid number (the start time of
 * whatever holds that pid now). Synchronous, so a caller can kill(2) in the same tick.
 */
export function stillPinned(pinned: PinnedProcess): boolean {
  try {
    const status = readFileSync(`/proc/self/fd/${pinned.fd}/status`, 'utf8');
    const stat = readFileSync(`/proc/self/fd/${pinned.fd}/stat`, 'utf8');
    return uidOfStatus(status) === pinned.uid && startOfStat(stat) === pinned.start && procStartOf(pinned.pid) === pinned.start;
  } catch {
    return false;
  }
}

export function unpin(pinned: PinnedProcess): void {
  closeSync(pinned.fd);
}
