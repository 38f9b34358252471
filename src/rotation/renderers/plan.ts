import type { PlanEntry } from '../runner.js';

/** A dry run's steps as numbered summary lines. */
export function planLines(plan: PlanEntry[]): string[] {
  return plan.map((p, i) => `  ${String(i + 1).padStart(2)}. ${p.step.padEnd(10)} ${p.action}`);
}
