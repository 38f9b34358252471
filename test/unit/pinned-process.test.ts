import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { pinProcess, procStartOf, procUidOf, stillPinned, unpin } from '../../src/storage/pid.js';

// A process held by its /proc directory (watch --pidfile, docs/security.md §4): reads through the
// descriptor see that process or fail, never a later holder of its pid.

const NS_LAST_PID = '/proc/sys/kernel/ns_last_pid';
const canChoosePid = (() => {
  try {
    accessSync(NS_LAST_PID, constants.W_OK);
    return true;
  } catch {
    return false;
  }
})();

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

function sleeper(): ChildProcess {
  const child = spawn('sleep', ['100'], { stdio: 'ignore' });
  children.push(child);
  return child;
}

async function killed(child: ChildProcess): Promise<void> {
  child.kill('SIGKILL');
  await once(child, 'exit');
}

describe('pinProcess', () => {
  it('reads the uid and start time of the process through its /proc directory; still pinned while it runs', () => {
    const child = sleeper();
    const pinned = pinProcess(child.pid!)!;
    try {
      expect(pinned).toMatchObject({ pid: child.pid, uid: procUidOf(child.pid!), start: procStartOf(child.pid!) });
      expect(stillPinned(pinned)).toBe(true);
    } finally {
      unpin(pinned);
    }
  });

  it('once the process has exited: no longer pinned; a pid that names no process pins nothing', async () => {
    const child = sleeper();
    const pinned = pinProcess(child.pid!)!;
    await killed(child);
    try {
      expect(stillPinned(pinned)).toBe(false);
    } finally {
      unpin(pinned);
    }
    expect(pinProcess(child.pid!)).toBeUndefined();
  });

  it.runIf(canChoosePid)(`its pid given to a new process: not pinned, though /proc/<pid> exists again${canChoosePid ? '' : ` [SKIPPED: cannot choose the next pid (${NS_LAST_PID} is not writable here; needs root)]`}`, async () => {
    const child = sleeper();
    const pid = child.pid!;
    const pinned = pinProcess(pid)!;
    await killed(child);
    let next: ChildProcess | undefined;
    for (let attempt = 0; attempt < 200 && next?.pid !== pid; attempt++) {
      next?.kill('SIGKILL');
      writeFileSync(NS_LAST_PID, String(pid - 1));
      next = sleeper();
    }
    try {
      expect(next?.pid).toBe(pid);
      expect(procStartOf(pid)).toBeDefined();
      expect(stillPinned(pinned)).toBe(false);
    } finally {
      unpin(pinned);
    }
  });
});
