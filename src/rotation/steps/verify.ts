import type { NetworkSettings } from '../../config/network-settings.js';
import { retryPolicyFromEnv } from '../../enrollment/index.js';
import { VerificationError } from '../../errors.js';
import { failpoint } from '../../failpoint.js';
import { type DecodedIdentity, decodeIdentity, encodePrivateJwk } from '../../identity/index.js';
import { commandLine, rollbackCommandOf } from '../../command-line.js';
import { programName } from '../../single-executable.js';
import { healthCheckInput } from '../enrollment-context.js';
import { need, type Run, type Step } from '../run.js';
import type { NewIdentity } from '../target.js';
import { verificationContext, verifyOnce } from '../verify-step.js';

/** A rollback's or status's check stops with the run, as a rotation's does (preflight). */
function withRequests<C extends { network: NetworkSettings }>(r: Run, ctx: C): C {
  return r.requests ? { ...ctx, network: { ...ctx.network, signal: r.requests } } : ctx;
}

/** The new identity as the runner will read it. */
function decodedNew(next: NewIdentity): DecodedIdentity {
  return decodeIdentity({
    privateKey: encodePrivateJwk(next.key),
    urn: next.urn,
    ...(next.hostname ? { hostname: next.hostname } : {}),
    apiKeyHash: next.apiKeyHash,
  });
}

/**
 * What the check proves: a rotation's new identity and a rollback's previous one BEFORE they are
 * written where a runner reads them (a rejected key is never written: nothing to roll back); for
 * status, the identity in service as read. Undefined: a rollback with no usable previous identity,
 * which its restore step refuses (NO_BACKUP, BACKUP_CORRUPT).
 */
function candidateOf(r: Run): { identity: DecodedIdentity; role: 'new' | 'previous' | 'in service' } | undefined {
  if (r.next) return { identity: decodedNew(r.next), role: 'new' };
  if (r.spec.access === 'write') return r.current?.previous ? { identity: r.current.previous, role: 'previous' } : undefined;
  return { identity: need(r.inService, 'identity in service'), role: 'in service' };
}

/** The signed health check (docs/protocol.md §7), retried within what is left of --timeout. */
export const verify: Step = {
  name: 'verify',
  title: 'verify online (signed health check)',
  async run(r) {
    const candidate = r.spec.options.verify ? candidateOf(r) : undefined;
    if (!candidate) {
      r.verify = { performed: false };
      return;
    }
    const { target, config } = need(r.resolved, 'target');
    const { identity } = candidate;
    const ctx = r.ctx ?? withRequests(r, await verificationContext(config, r.spec.options.profile, r.io, r.report));
    // --timeout bounds the whole command: the check gets what the steps before it left, on the run's clock.
    const result = await verifyOnce(healthCheckInput(ctx, identity, target.flavor, r.io), r.deadline, retryPolicyFromEnv(r.io.env));
    r.verify = result;
    // Killed here, the answer is lost: a rotation's pending record still names the runner, and the next run verifies it again.
    failpoint('after-verify');
    if (result.ok) {
      // The write records it as the last verified identity, with the identity itself (docs/identity-lifecycle.md §1).
      if (r.next) r.next.verifiedAt = r.io.now();
      return;
    }
    if (result.rejected && candidate.role === 'new') {
      // The record of the runner to remove: the next rotation sets it aside instead of verifying it again.
      await target.pending
        ?.amend({ verification: 'rejected' })
        .catch((err: unknown) =>
          r.report.warn(`could not mark the pending key as rejected: ${(err as Error).message}; the next rotation verifies it again`),
        );
    }
    throw verificationFailed(r, identity, candidate.role, result.rejected, result.reason ?? 'not accepted');
  },
  async plan(r) {
    if (!r.spec.options.verify) return 'skipped (--no-verify)';
    const { config } = need(r.resolved, 'target');
    const ctx = r.ctx ?? (await verificationContext(config, r.spec.options.profile, r.io, r.report));
    const what =
      r.spec.access === 'read'
        ? 'accepts the identity in service'
        : 'accepts the identity this run would put in service, before it is written';
    return `would prove with a signed health check at ${ctx.endpoint.baseUrl} that the server ${what}`;
  },
};

/**
 * The one VERIFICATION_FAILED (401/403: the server rejected the key) and VERIFY_UNAVAILABLE (no
 * verdict before --timeout): what was proven, what was written (nothing, for a rotation or a rollback)
 * and what to do.
 */
function verificationFailed(
  r: Run,
  identity: DecodedIdentity,
  role: 'new' | 'previous' | 'in service',
  rejected: boolean,
  reason: string,
): VerificationError {
  const { target } = need(r.resolved, 'target');
  const urn = identity.record.urn;
  const code = rejected ? 'VERIFICATION_FAILED' : 'VERIFY_UNAVAILABLE';
  // The agent's settings report is the run's output, not an error detail.
  const { clusterAgent: _, ...where } = target.where;
  const rollbackCommand = rollbackCommandOf(target);
  const rollout = r.rollout ? ' The rollout was not started.' : '';
  if (role === 'new') {
    const { pending } = target;
    const details = { urn, fingerprint: identity.key.kid, ...where, pendingKey: pending?.where ?? null };
    if (rejected) {
      const record = pending
        ? 'Datadog registered that runner but does not accept its key: ' +
          `the key stays pending in ${pending.where} as the record of the runner to remove. Remove ${urn} in Datadog; ` +
          `\`${commandLine([programName(), 'status', ...target.selector])}\` lists it as a possible orphan, ` +
          `and the next ${r.spec.command} sets the key aside.`
        : `Its key is held nowhere: remove ${urn} in Datadog.`;
      return new VerificationError(
        `the server rejected the new identity ${urn}: ${reason}; nothing was written to ${target.label}`,
        `The identity in service is unchanged: nothing to roll back, do not restart for this rotation.${rollout} ${record}`,
        details,
        code,
      );
    }
    const again = pending
      ? `Try again when Datadog answers: the next ${r.spec.command} verifies the same key again (kept pending in ${pending.where}) ` +
        'and writes it if Datadog accepts it, without enrolling another runner.'
      : `Its key is held nowhere (the Secret did not exist yet): remove ${urn} in Datadog, then try again.`;
    return new VerificationError(
      `the new identity ${urn} is not proven: ${reason}; nothing was written to ${target.label}`,
      `Not proven, nothing written: the identity in service is unchanged.${rollout} ${again}`,
      details,
      code,
    );
  }
  const details = { urn, fingerprint: identity.key.kid, ...where, rollbackCommand };
  if (role === 'previous') {
    return rejected
      ? new VerificationError(
          `the server rejected the previous identity ${urn}: ${reason}; ${target.label} was not changed`,
          'Nothing was written: the identity in service is unchanged. The previous runner may have been removed in Datadog; ' +
            'rotate anew rather than roll back to it.',
          details,
          code,
        )
      : new VerificationError(
          `the previous identity ${urn} is not proven: ${reason}; ${target.label} was not changed`,
          `Not proven, nothing written. Try again when Datadog answers, or restore it unproven with \`${rollbackCommand} --no-verify\`.`,
          details,
          code,
        );
  }
  return rejected
    ? new VerificationError(
        `the server did not accept ${urn}: ${reason}`,
        `Rotate again, or roll back with \`${rollbackCommand}\` if the previous identity is the one that works.`,
        details,
        code,
      )
    : new VerificationError(
        `${urn} is not proven: ${reason}`,
        'Nothing was changed. Run the check again when Datadog answers.',
        details,
        code,
      );
}
