import { InterruptedError } from '../errors.js';
import type { PlanEntry } from '../results/rotation.js';
import type { RunOptions } from './options.js';
import type { Run, Step } from './run.js';

// The one loop every pipeline runs through (rotations, rollback, status): the steps in order, each
// one's real form, or with --dry-run its plan; a step that throws stops the run; the lock is
// released on every path.

export type { PlanEntry };

export async function runSteps<O extends RunOptions>(steps: readonly Step<O>[], r: Run<O>): Promise<PlanEntry[]> {
  const { dryRun, signal } = r.spec.options;
  const plan: PlanEntry[] = [];
  try {
    let committed = false;
    for (const step of steps) {
      committed ||= step.commits === true;
      if (!committed && signal?.aborted) throw new InterruptedError(`${step.title} (aborted by the caller before it started; nothing was enrolled or changed)`);
      r.report.step(dryRun ? `[dry run] ${step.title}` : step.title);
      if (dryRun) plan.push({ step: step.name, action: await step.plan(r) });
      else await step.run(r);
      if (r.skipped) break;
    }
  } finally {
    await r.lock?.release();
  }
  return plan;
}
