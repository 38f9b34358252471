import { resolveTarget } from '../resolve-target.js';
import { need, type Step } from '../run.js';

/** Options → the agent config, the one target, and the run's cluster access (connected when first needed). */
export const resolve: Step = {
  name: 'resolve',
  title: 'resolve config and target',
  async run(r) {
    r.resolved = await resolveTarget(r.spec.kind, r.spec.options, r.io, r.report, { requireEnabled: r.spec.requireEnabled, remainingMs: () => r.deadline.remainingMs() });
  },
  async plan(r) {
    await resolve.run(r);
    return `target: ${need(r.resolved, 'target').target.label}`;
  },
};
