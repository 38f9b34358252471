import { Deadline } from '../../time/index.js';
import type { RotationInput } from '../../command-options.js';
import { need, type Step } from '../run.js';

/** After a verification that passed (or --no-verify): the --rollout workload restarted onto the new identity. */
export const rollout: Step<RotationInput> = {
  name: 'rollout',
  title: 'roll out',
  atomic: true,
  async run(r) {
    if (!r.rollout) return;
    const o = r.spec.options;
    const { rolloutWorkload } = await import('../../rollout/rollout-workload.js');
    // --timeout ends here: the rollout's wait has --rollout-timeout, from now on the run's clock, and
    // undoing its restart after a failure must not be cut short by a deadline already spent.
    const clock = r.deadline.clock;
    r.deadline = Deadline.never(clock);
    r.rolledOut = await rolloutWorkload(
      r.rollout.session,
      r.rollout.ref,
      {
        checkOnly: false,
        surge: 'auto',
        fallback: o.fallback,
        deadline: Deadline.after(o.rolloutTimeoutSeconds * 1000, clock),
        pollMs: Number(r.io.env.PAR_IDENTITY_ROLLOUT_POLL_MS ?? 1000),
        dryRun: false,
        fingerprint: need(r.next, 'new identity').key.kid,
        ...(o.signal ? { signal: o.signal } : {}),
      },
      r.io,
      r.report,
    );
  },
  async plan(r) {
    return r.rollout
      ? `would restart ${r.rollout.ref.kind}/${r.rollout.ref.name} in ${r.rollout.ref.namespace} create-before-delete once the verification passed`
      : `no --rollout: ${need(r.resolved, 'target').target.restartAdvice()}`;
  },
};
