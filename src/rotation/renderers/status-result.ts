import { ExitCode } from '../../errors.js';
import type { CommandResult } from '../../output.js';
import type { IdentityStatusResult } from '../../results/status.js';
import { ageOf, describeAge } from '../age.js';
import { rollbackCommandOf } from '../command-line.js';
import { need, type Run } from '../run.js';
import { summaryOf } from '../target.js';
import { describeVerify } from '../verify-step.js';

/** status of one target: what is in service, what a rollback would restore, the target's facts, the online check. */
export function statusResult(r: Run): CommandResult<IdentityStatusResult> {
  const { target } = need(r.resolved, 'target');
  const current = need(r.current, 'current identity');
  const facts = need(r.facts, 'facts');
  const verify = r.verify ?? { performed: false };
  const now = summaryOf(need(r.inService, 'identity in service'));
  const age = ageOf(current.rotatedAt, r.io.now());
  // A runbook must be able to stop on a predicted re-enrollment: the prediction has its own exit status.
  const reEnroll = (facts.data as { agentWouldReEnroll?: boolean }).agentWouldReEnroll === true;
  return {
    ...(reEnroll ? { exitCode: ExitCode.reenrollPredicted } : {}),
    json: {
      schemaVersion: 1,
      status: 'ok',
      command: 'status',
      target: target.kind,
      ...target.where,
      ...now,
      current: now,
      rotatedAt: current.rotatedAt ?? null,
      ageSeconds: age,
      ...facts.data,
      rollbackCommand: rollbackCommandOf(target),
      verify,
    },
    summary: [
      `identity: ${now.urn}  (${target.label})`,
      `  org / runner: ${now.orgId} / ${now.runnerId} (region ${now.region})`,
      `  fingerprint:  ${now.fingerprint}`,
      `  written:      ${current.rotatedAt ? `${current.rotatedAt} (${describeAge(age ?? 0)} ago; from ${current.rotatedAtSource})` : 'unknown'}`,
      ...facts.lines,
      `  verified:     ${r.spec.options.verify ? describeVerify(verify) : 'not checked (add --verify)'}`,
    ],
  };
}
