import { AsyncLocalStorage } from 'node:async_hooks';
import type { Deadline } from '../time/index.js';

// The command's deadline over one hostname lookup. The lookup is many small steps (agent IPC, cloud
// metadata, docker, kubelet, `hostname -f`, a socket probe), each with its own cap as the agent has
// it; inside resolveHost() every one of them is also cut to what is left of the command's --timeout.
// The deadline reaches them through the lookup's async context rather than through every provider's
// parameters: resolveHost() takes it explicitly and is the only place that opens the scope.

const scope = new AsyncLocalStorage<Deadline>();

/** Runs `lookup` with every host exchange inside it cut to what is left of `deadline`. */
export function underDeadline<T>(deadline: Deadline, lookup: () => Promise<T>): Promise<T> {
  return scope.run(deadline, lookup);
}

/** `capMs`, or what is left of the enclosing lookup's deadline when that is shorter (0 once it has passed). */
export function lookupBudget(capMs: number): number {
  const deadline = scope.getStore();
  return deadline ? Math.min(capMs, Math.floor(deadline.remainingMs())) : capMs;
}
