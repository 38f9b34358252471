import { UsageError } from '../errors.js';
import { parseListenAddress, parseSignalName, type SignalTarget } from '../reload/index.js';
import type { WatchOptions } from './watch-options.js';

// What `watch` is asked to do, checked as a whole before anything connects.

export interface WatchPlan {
  signal: NodeJS.Signals;
  signalTarget?: SignalTarget;
  listen?: string;
  relistIntervalMs: number;
  staleMs: number;
}

/** The flags checked together (what no single flag parser can see), and what they mean for the run. */
export function planWatch(options: WatchOptions): WatchPlan {
  const nonNegative = (value: number, flag: string) => {
    if (!Number.isFinite(value) || value < 0) throw new UsageError(`${flag} must be a non-negative number, got ${value}`);
    return value;
  };
  const relistIntervalMs = nonNegative(options.relistIntervalSeconds, '--relist-interval') * 1000;
  nonNegative(options.splayMs, '--splay');
  nonNegative(options.killTimeoutSeconds, '--kill-timeout');
  if (options.signalPid !== undefined && options.pidfile !== undefined)
    throw new UsageError('--signal and --pidfile name the same thing: give one of them');
  if (options.signalPid !== undefined && (!Number.isSafeInteger(options.signalPid) || options.signalPid <= 0))
    throw new UsageError(`--signal must be a process id, got ${options.signalPid}`);
  const signalsSomeone = options.signalPid !== undefined || options.pidfile !== undefined;
  if (signalsSomeone && !options.output)
    throw new UsageError('--signal/--pidfile tell a process that --output PATH changed: add --output PATH');
  if (options.onChange === 'signal' && options.command.length === 0)
    throw new UsageError('--on-change signal applies to a supervised command: add -- <command...>');
  if (options.listen) parseListenAddress(options.listen);
  const signal = parseSignalName(options.signalName);
  const staleMs =
    options.healthzStaleSeconds !== undefined
      ? nonNegative(options.healthzStaleSeconds, '--healthz-stale') * 1000
      : Math.max(2 * relistIntervalMs, 60_000);
  return {
    signal,
    ...(signalsSomeone
      ? { signalTarget: { signal, ...(options.signalPid !== undefined ? { pid: options.signalPid } : { pidfile: options.pidfile! }) } }
      : {}),
    ...(options.listen ? { listen: options.listen } : {}),
    relistIntervalMs,
    staleMs,
  };
}
