import type { SupervisedChild } from '../reload/index.js';

// watch runs until SIGTERM/SIGINT; with a supervised command it forwards HUP/USR1/USR2 to it.

/** Where SIGTERM/SIGINT (and the signals forwarded to a child) come from: `process`, or an emitter in tests. */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];
const FORWARDED_SIGNALS: NodeJS.Signals[] = ['SIGHUP', 'SIGUSR1', 'SIGUSR2'];

/** Resolves with the name of the first stop signal; also forwards signals to the child once there is one. */
export function listenForSignals(signals: SignalSource, getChild: () => SupervisedChild | undefined, forward: boolean) {
  let onStop!: (signal: NodeJS.Signals) => void;
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    onStop = resolve;
  });
  const handlers = new Map<NodeJS.Signals, () => void>();
  for (const signal of STOP_SIGNALS) handlers.set(signal, () => onStop(signal));
  if (forward) for (const signal of FORWARDED_SIGNALS) handlers.set(signal, () => getChild()?.signal(signal));
  for (const [signal, handler] of handlers) signals.on(signal, handler);
  const detach = () => {
    for (const [signal, handler] of handlers) signals.off(signal, handler);
  };
  return { stopped, detach };
}
