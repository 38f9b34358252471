import { readFileSync } from 'node:fs';

// Whether a process still runs, for the two places that find another run's traces (a lock, temp
// files named with a pid): the one check both use.

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
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const value = Number(fields[19]);
    return Number.isSafeInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The real uid a Linux process runs as (/proc/<pid>/status, first field of `Uid:`); undefined when it cannot be read. */
export function procUidOf(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const value = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
    return Number.isSafeInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
