import { need, type Step } from '../run.js';

/** Options → the agent config, the one target, and the run's cluster access (connected when first needed). */
export const resolve: Step = {
  name: 'resolve',
  title: 'resolve config and target',
  async run(r) {
    const { spec } = r;
    r.resolved = await spec.resolveTarget(spec.kind, spec.options, r.io, r.report, {
      requireEnabled: spec.requireEnabled,
      deadline: r.deadline,
      ...(r.requests ? { signal: r.requests } : {}),
      ...(spec.access === 'read' ? { readOnly: true } : {}),
      ...(spec.createsMissing ? { create: { confirmed: (spec.options as { create?: boolean }).create === true } } : {}),
      // A rotation enrolls with what it resolves: a local setting leading elsewhere than the agent's stops it.
      agentSettings: spec.enrolls ? 'stop' : 'report',
      ...((spec.options as { overrideAgentSettings?: boolean }).overrideAgentSettings ? { overrideAgentSettings: true } : {}),
    });
    // The cluster agent's own environment switch (src/session): the later steps read the run's env.
    if (r.resolved.env) r.io = { ...r.io, env: r.resolved.env };
  },
  async plan(r) {
    await resolve.run(r);
    return `target: ${need(r.resolved, 'target').target.label}`;
  },
};
