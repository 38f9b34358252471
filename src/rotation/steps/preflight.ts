import { parseWorkloadRef } from '../../rollout/workload-ref.js';
import { resolveEnrollmentContext } from '../enrollment-context.js';
import { checkRegionChange } from '../region-check.js';
import type { RotationInput } from '../../command-options.js';
import { need, type Step } from '../run.js';

/**
 * Every check that would make a later step fail, before anything is enrolled, with no side effect:
 * the target's write checks (directory, server-side dry run of the Secret write), the runner's
 * naming, the credentials and endpoint, and with --rollout the workload and its restart patch.
 */
export const preflight: Step<RotationInput> = {
  name: 'preflight',
  title: 'pre-flight',
  async run(r) {
    const { target, config, cluster } = need(r.resolved, 'target');
    r.preflight = await target.preflight(need(r.current, 'current identity'));
    for (const note of r.preflight.notes) r.report.info(note);
    for (const warning of r.preflight.warnings) r.report.warn(warning);
    // Off-cluster, the cluster agent's version is its image tag (src/agent), not a host agent's IPC answer.
    const imageVersion = r.resolved?.agent?.version;
    const flags =
      imageVersion && r.spec.options.agentVersion === undefined
        ? { ...r.spec.options, agentVersion: imageVersion, agentVersionSource: 'cluster agent image' as const }
        : r.spec.options;
    const ctx = await resolveEnrollmentContext(config, flags, r.io, r.report, r.requests);
    // The new URN takes the site's region: another region than the URN replaced stops here, before enrolling.
    const regionChange = checkRegionChange(
      ctx.endpoint,
      need(r.current, 'current identity').identity,
      r.spec.options.allowRegionChange === true,
    );
    if (regionChange) r.report.warn(regionChange);
    // Every Datadog request of the run (key checks, enrollment, health check, connections) stops with it.
    r.ctx = r.requests ? { ...ctx, network: { ...ctx.network, signal: r.requests } } : ctx;
    // This tool's own version says nothing about what the agent does with the change.
    if (ctx.version.source !== 'par-identity version') target.noteAgentVersion?.(ctx.version.version, ctx.version.source);
    if (r.spec.options.rollout) {
      // The rollout runs on the run's one connection; a Secret target's workload lives beside it.
      const session = await cluster();
      const namespace = typeof target.where.namespace === 'string' ? target.where.namespace : session.namespace;
      const ref = parseWorkloadRef(r.spec.options.rollout, namespace);
      // The roll-out code (and the Kubernetes client it uses) is loaded only for --rollout.
      const { precheckRollout } = await import('../../rollout/rollout-workload.js');
      r.report.info(await precheckRollout(session, ref));
      r.rollout = { session, ref };
    }
  },
  async plan(r) {
    await preflight.run(r);
    const checks = ['write checks passed', 'credentials resolved'];
    if (r.rollout) checks.push(`rollout target ${r.rollout.ref.kind}/${r.rollout.ref.name} exists and may be patched`);
    return checks.join('; ');
  },
};
