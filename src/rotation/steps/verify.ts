import type { NetworkSettings } from '../../config/network-settings.js';
import { retryPolicyFromEnv } from '../../enrollment/index.js';
import { VerificationError } from '../../errors.js';
import type { DecodedIdentity } from '../../identity/index.js';
import { undoCommandOf } from '../command-line.js';
import { healthCheckInput } from '../enrollment-context.js';
import { need, type Run, type Step } from '../run.js';
import { verificationContext, verifyOnce } from '../verify-step.js';

/** A rollback's or status's check stops with the run, as a rotation's does (preflight). */
function withRequests<C extends { network: NetworkSettings }>(r: Run, ctx: C): C {
  return r.requests ? { ...ctx, network: { ...ctx.network, signal: r.requests } } : ctx;
}

/** The signed health check of the identity in service: after a rotation (read back), a rollback (restored), or for status (as read). */
export const verify: Step = {
  name: 'verify',
  title: 'verify online (signed health check)',
  async run(r) {
    if (!r.spec.options.verify) {
      r.verify = { performed: false };
      return;
    }
    const { target, config } = need(r.resolved, 'target');
    const identity = need(r.inService, 'identity in service');
    const ctx = r.ctx ?? withRequests(r, await verificationContext(config, r.spec.options.profile, r.io, r.report));
    // --timeout bounds the whole command: the check gets what the steps before it left.
    const timeoutSeconds = r.deadline.remainingMs() / 1000;
    r.verify = await verifyOnce(healthCheckInput(ctx, identity, target.flavor, r.io), timeoutSeconds, retryPolicyFromEnv(r.io.env));
    if (r.verify.performed && !r.verify.ok) throw verificationFailed(r, identity, r.verify.reason ?? 'rejected');
    // The durable mark that keeps this identity as the previous one until another passes (docs/identity-lifecycle.md §1).
    // status stays read-only; a failed mark costs only that protection, so it warns.
    if (r.verify.performed && r.spec.access === 'write') {
      try {
        const marked = await target.recordVerified(identity, r.io.now());
        // The result names the Secret as it now is, so a runbook's next guarded write starts from it.
        for (const data of [r.written?.data, r.restored?.data]) if (marked.resourceVersion && data && 'resourceVersion' in data) data.resourceVersion = marked.resourceVersion;
      } catch (err) {
        r.report.warn(`could not record ${identity.record.urn} as the last verified identity: ${(err as Error).message}`);
      }
    }
  },
  async plan(r) {
    if (!r.spec.options.verify) return 'skipped (--no-verify)';
    const { config } = need(r.resolved, 'target');
    const ctx = r.ctx ?? (await verificationContext(config, r.spec.options.profile, r.io, r.report));
    return `would prove with a signed health check at ${ctx.endpoint.baseUrl} that the server accepts the ${r.change === 'rolled back' ? 'restored' : 'new'} key`;
  },
};

/** The one VERIFICATION_FAILED: what is in service, what the run changed to put it there, and how to undo it. */
function verificationFailed(r: Run, identity: DecodedIdentity, reason: string): VerificationError {
  const { target } = need(r.resolved, 'target');
  const urn = identity.record.urn;
  const created = r.change === 'rotated' && r.written?.data.action === 'created';
  const rollbackCommand = undoCommandOf(target, created);
  const { clusterAgent: _, ...where } = target.where;
  const details = { urn, ...where, rollbackCommand };
  if (r.change === 'rotated') {
    const kept = need(r.written, 'write').previousKept;
    return new VerificationError(
      `the new identity ${urn} was stored in ${target.label} but the server did not accept it: ${reason}`,
      `${kept ? `The previous identity is kept; restore it with: ${rollbackCommand}` : created ? `It was created by this run; undo with: ${rollbackCommand}` : 'No previous identity was kept.'} Do not restart the runner${r.rollout ? '; the rollout was not started' : ''}.`,
      details,
    );
  }
  if (r.change === 'rolled back') {
    return new VerificationError(
      `rolled back ${target.label} to ${urn}, but the server did not accept it: ${reason}`,
      `The runner may have been removed in Datadog. Roll forward again with \`${rollbackCommand}\` or rotate anew.`,
      details,
    );
  }
  return new VerificationError(`the server did not accept ${urn}: ${reason}`, `Rotate again, or roll back with \`${rollbackCommand}\` if the previous identity is the one that works.`, details);
}
