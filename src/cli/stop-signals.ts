import { ExitCode, InterruptedError, type StopSignal } from '../errors.js';

// SIGINT/SIGTERM during a command that changes something (rotate-identity, rotate-par-identity,
// rollback, rollout, credentials): the first one aborts the run's signal, which the command honours at
// its next safe point (src/rotation/runner.ts, src/rollout/run-rollout.ts, src/commands/credentials.ts)
// and turns into INTERRUPTED saying what is in place; the boundary renders it
// (exit 130 for SIGINT, 143 for SIGTERM: 128 + the signal's number, as shells count). A second signal
// while the run cleans up ends the process at once with that signal's status: `onSecond` renders its
// error first (so --json still prints one document) and the lock's exit hook removes the lock.
// Commands with their own stop handling (watch, emulator) do not use it.

const EXIT: Record<StopSignal, number> = { SIGINT: ExitCode.interrupted, SIGTERM: ExitCode.terminated };

interface SignalStop {
  /** Aborted by the first signal; its reason is an AbortError naming the signal (`stopSignal`). */
  signal: AbortSignal;
  /** The first signal received, if any. */
  received(): StopSignal | undefined;
  /** Removes the handlers (the result is rendered): the process's default behaviour is back. */
  close(): void;
}

export function stopOnSignals(
  onSecond: (err: InterruptedError) => void,
  target: Pick<NodeJS.Process, 'on' | 'off' | 'exit'> = process,
): SignalStop {
  const controller = new AbortController();
  let first: StopSignal | undefined;
  const handler = (name: StopSignal) => {
    if (!first) {
      first = name;
      controller.abort(Object.assign(new Error(`stopped by ${name}`), { name: 'AbortError', stopSignal: name }));
      return;
    }
    onSecond(
      new InterruptedError('cleanup', {
        message:
          `stopped by ${first}, then ${name} while the run was ending: it ended at once; what was in place at the first signal may not ` +
          `all be reported here`,
        hint:
          'The identity is never half-written (the write is atomic). Run `par-identity status` to see what is in place; a temporary ' +
          'file the run left is swept by the next rotation or rollback.',
        signal: name,
      }),
    );
    target.exit(EXIT[name]);
  };
  const onInt = () => handler('SIGINT');
  const onTerm = () => handler('SIGTERM');
  target.on('SIGINT', onInt);
  target.on('SIGTERM', onTerm);
  return {
    signal: controller.signal,
    received: () => first,
    close() {
      target.off('SIGINT', onInt);
      target.off('SIGTERM', onTerm);
    },
  };
}
