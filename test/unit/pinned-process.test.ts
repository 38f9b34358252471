import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { CAN_CHOOSE_PID, NEXT_PID_MISSING, spawnAtPid } from '../e2e/next-pid.js';
import { pinProcess, procStartOf, procUidOf, stillPinned, unpin } from '../../src/storage/pid.js';

// A process held by its /proc directory (watch --pidfile, docs/security.md §4): reads through the
// descriptor see that process or fail, never a later holder of its pid.

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

  it.runIf(CAN_CHOOSE_PID)(`its pid given to a new process: not pinned, though /proc/<pid> exists again${NEXT_PID_MISSING}`, async () => {
    const child = sleeper();
    const pid = child.pid!;
    const pinned = pinProcess(pid)!;
    await killed(child);
    const next = spawnAtPid(pid, sleeper);
    try {
      expect(next.pid).toBe(pid);
      expect(procStartOf(pid)).toBeDefined();
      expect(stillPinned(pinned)).toBe(false);
    } finally {
      unpin(pinned);
    }
  });
});
