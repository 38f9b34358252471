import { stepFailpoint } from '../failpoint.js';
import type { PlanEntry } from '../results/rotation.js';
import { interruptedAt } from './interruption.js';
import type { RunOptions } from '../command-options.js';
import type { Run, Step } from './run.js';

// The one loop every pipeline runs through (rotations, rollback, status): the steps in order, each
// one's real form, or with --dry-run its plan; a step that throws stops the run; the lock is
// released on every path.
//
// The run's signal (the CLI's SIGINT/SIGTERM, the API caller's AbortSignal) is honoured between
// steps: the run stops there with INTERRUPTED saying what is in place (interruption.ts). While a
// step runs, it aborts that step's requests (r.requests: Kubernetes and Datadog), except in a step
// that changes the target (`atomic`: write, restore, rollout), which always runs to its end — the
// crash-safe write is never cut between its write and its rename, and a rollout undoes itself.

export type { PlanEntry };

/**
 * Past the next poll phase of the event loop, where a signal already delivered (libuv writes it to a
 * pipe) is handled: the first immediate runs in the current iteration's check phase, which may follow
 * the poll that is running now; the second one runs only after the next poll.
 */
const turn = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

export async function runSteps<O extends RunOptions>(steps: readonly Step<O>[], r: Run<O>): Promise<PlanEntry[]> {
  const { dryRun, signal } = r.spec.options;
  const plan: PlanEntry[] = [];
  const requests = new AbortController();
  r.requests = requests.signal;
  let inAtomic = false;
  const onAbort = () => {
    if (!inAtomic) requests.abort(signal?.reason);
  };
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (const step of steps) {
      stepFailpoint(step.name);
      if (signal) await turn();
      if (signal?.aborted) throw interruptedAt(r, step, 'before');
      inAtomic = step.atomic === true;
      r.report.step(dryRun ? `[dry run] ${step.title}` : step.title);
      try {
        if (dryRun) plan.push({ step: step.name, action: await step.plan(r) });
        else await step.run(r);
      } catch (err) {
        // Whatever an aborted request threw, what the operator needs is what is in place.
        if (signal?.aborted) throw interruptedAt(r, step, 'during', err);
        throw err;
      } finally {
        inAtomic = false;
        if (signal?.aborted) requests.abort(signal.reason);
      }
      if (r.skipped) break;
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await r.lock?.release();
  }
  return plan;
}
