import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import { type RunningCli, startCli } from './run-cli.js';

// A run stopped by a signal at a named boundary, deterministically: the run is stopped by SIGSTOP at
// its failpoint (PAR_IDENTITY_FAILPOINT=<point>:stop), the test sends the signals to the stopped
// child's main thread and resumes it, so they are pending exactly there.

/** Resolves once `pid` is stopped at its `:stop` failpoint (state T in /proc); rejects if it exits first. */
export async function stopped(run: RunningCli): Promise<void> {
  let exited = false;
  void run.exit.then(() => (exited = true));
  for (;;) {
    const stat = await readFile(`/proc/${run.child.pid}/stat`, 'utf8').catch(() => '');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('T')) return;
    if (exited) throw new Error(`the run exited before its failpoint: ${run.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Runs `args` to the failpoint, sends `signals` while it is stopped there, resumes it, and waits for its end. */
export async function interruptAt(args: string[], env: Record<string, string>, point: string, signals: NodeJS.Signals[]) {
  const run = startCli(args, { env: { ...env, PAR_IDENTITY_FAILPOINT: `${point}:stop` } });
  run.child.stdin.end();
  await stopped(run);
  // Each signal goes to the main thread (tgkill), not to the process: a process-directed signal may be
  // taken by any of Node's threads, and then reach the event loop after the step boundary it was sent
  // at. Sent to the main thread while it is stopped, it is handled as it resumes, before the boundary.
  for (const signal of signals) toMainThread(run.child.pid!, signal);
  run.child.kill('SIGCONT');
  const exit = await run.exit;
  return { ...exit, stdout: run.stdout(), stderr: run.stderr() };
}

/** tgkill(pid, pid, signal) through python3's ctypes (Node has no thread-directed kill). */
function toMainThread(pid: number, signal: NodeJS.Signals): void {
  const tgkill = process.arch === 'arm64' ? 131 : 234;
  const script =
    'import ctypes,sys\nlibc=ctypes.CDLL(None,use_errno=True)\nsys.exit(0 if libc.syscall(int(sys.argv[1]),int(sys.argv[2]),int(sys.argv[2]),int(sys.argv[3]))==0 else ctypes.get_errno() or 1)';
  execFileSync('python3', ['-c', script, String(tgkill), String(pid), String(osConstants.signals[signal])]);
}
