import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:os';

// `watch -- <command...>`: a supervised child, as Vault Agent's process supervisor. Started once
// the first identity is in place, restarted (or signalled) on every change, and whatever ends it
// on its own ends the watch, with its exit status.

interface SupervisedChildOptions {
  command: string;
  args: string[];
  /** Send the child's stdout to our stderr (keeps stdout for `--json` lines). */
  stdoutToStderr: boolean;
  /** After SIGTERM, how long to wait before SIGKILL. */
  stopTimeoutMs: number;
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What a shell would report: the code, 128 + the signal number, or 127 when it could not start. */
  status: number;
  /** Set when the command could not be started. */
  error?: Error;
}

// exported for tests: the shell's 128 + signal rule, checked alone
export function exitStatusOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  return 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
}

export class SupervisedChild {
  private child: ChildProcess | undefined;
  private running: Promise<ChildExit> | undefined;
  /** Exits we cause to restart the child do not end the watch. */
  private restarting = false;
  /** After stop(), nothing is started again (a hand-over still in flight must not revive it). */
  private closed = false;
  private resolveExited!: (exit: ChildExit) => void;
  /** The child ended by itself, or after stop(). */
  readonly exited: Promise<ChildExit>;
  starts = 0;

  constructor(private readonly options: SupervisedChildOptions) {
    this.exited = new Promise((resolve) => {
      this.resolveExited = resolve;
    });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(env: NodeJS.ProcessEnv): void {
    if (this.closed) return;
    const child = spawn(this.options.command, this.options.args, {
      env,
      stdio: ['inherit', this.options.stdoutToStderr ? 2 : 'inherit', 'inherit'],
    });
    this.starts++;
    this.child = child;
    const running = new Promise<ChildExit>((resolve) => {
      child.once('error', (error) => resolve({ code: null, signal: null, status: 127, error }));
      child.once('exit', (code, signal) => resolve({ code, signal, status: exitStatusOf(code, signal) }));
    });
    this.running = running;
    // Last resort for an exit that skips the orderly stop (an uncaught error, process.exit): the
    // command must not outlive watch as an orphan holding an identity nobody updates.
    const killOnExit = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    process.once('exit', killOnExit);
    void running.then((exit) => {
      process.off('exit', killOnExit);
      if (this.child === child && !this.restarting) this.resolveExited(exit);
    });
  }

  /** Stops the running child (SIGTERM, then SIGKILL after the timeout) and starts it again with `env`. */
  async restart(env: NodeJS.ProcessEnv): Promise<void> {
    this.restarting = true;
    try {
      await this.terminate('SIGTERM');
    } finally {
      this.restarting = false;
    }
    this.start(env);
  }

  /** Sends a signal to the running child; false when there is none. */
  signal(signal: NodeJS.Signals): boolean {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return false;
    return child.kill(signal);
  }

  /** Forwards `signal` and waits for the child to end (SIGKILL after the timeout). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<ChildExit | undefined> {
    this.closed = true;
    return this.terminate(signal);
  }

  private async terminate(signal: NodeJS.Signals): Promise<ChildExit | undefined> {
    const running = this.running;
    if (!running) return undefined;
    if (!this.signal(signal)) return running;
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.signal('SIGKILL');
        resolve();
      }, this.options.stopTimeoutMs);
    });
    const exit = await Promise.race([running, killed.then(() => running)]);
    clearTimeout(timer);
    return exit;
  }
}
