import type { ChildProcess } from 'node:child_process';
import { accessSync, constants, writeFileSync } from 'node:fs';

// A new process given a chosen pid, to play pid reuse (docs/security.md §4): Linux hands out the pid
// after /proc/sys/kernel/ns_last_pid next. Writing it needs root, and some containers mount it
// read-only; tests that need it skip otherwise and say why (NEXT_PID_MISSING).

const NS_LAST_PID = '/proc/sys/kernel/ns_last_pid';

export const CAN_CHOOSE_PID = (() => {
  try {
    accessSync(NS_LAST_PID, constants.W_OK);
    return true;
  } catch {
    return false;
  }
})();

export const NEXT_PID_MISSING = CAN_CHOOSE_PID
  ? ''
  : ` [SKIPPED: cannot choose the next pid (${NS_LAST_PID} is not writable here; needs root)]`;

/**
 * Starts processes until one gets `pid`: another process of the machine may take it first, then it is
 * tried again. The ones that missed are killed.
 */
export function spawnAtPid(pid: number, start: () => ChildProcess): ChildProcess {
  for (let attempt = 0; attempt < 200; attempt++) {
    writeFileSync(NS_LAST_PID, String(pid - 1));
    const child = start();
    if (child.pid === pid) return child;
    child.kill('SIGKILL');
  }
  throw new Error(`pid ${pid} was taken by another process 200 times in a row`);
}
