import { readFile } from 'node:fs/promises';

// Waiting for child processes on a machine that may be loaded (2 cores shared with test runs): a fixed
// deadline says more about the load than about the processes. Here the wait ends when the condition
// holds, fails at once when `failed()` names a reason (a child exited), and otherwise fails only when
// nothing has moved for `stallMs`: no CPU time used by the processes waited for, no new line from them.

/** CPU time (user + system, in clock ticks) a process has used so far; 0 once it is gone. */
export async function cpuTicks(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // Fields after the command name (which may hold spaces), from field 3: utime is the 14th, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
}

/**
 * Resolves once `check()` is true. `progress()` returns anything that changes while the processes work
 * (their CPU ticks, lines read); the wait rejects when it stays the same for `stallMs`, or at once when
 * `failed()` returns a reason.
 */
export async function untilDone({ check, progress, failed = () => undefined, what, stallMs = 300_000, pollMs = 100 }) {
  let last = JSON.stringify(await progress());
  let movedAt = Date.now();
  for (;;) {
    if (check()) return;
    const reason = failed();
    if (reason) throw new Error(`${what}: ${reason}`);
    const now = JSON.stringify(await progress());
    if (now !== last) {
      last = now;
      movedAt = Date.now();
    } else if (Date.now() - movedAt > stallMs) {
      throw new Error(`${what}: nothing moved for ${Math.round(stallMs / 1000)} s (no CPU time used, no line written)`);
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
