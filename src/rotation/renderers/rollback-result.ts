import type { CommandResult } from '../../output.js';
import type { RollbackPlanResult, RolledBackResult } from '../../results/rollback.js';
import { rollbackCommandOf } from '../../command-line.js';
import { elapsedMs, need, type Run } from '../run.js';
import type { PlanEntry } from '../runner.js';
import { describeVerify } from '../verify-step.js';
import { planLines } from './plan.js';

// What a rollback reports: the identity put back in service, or with --dry-run the plan.

export function rollbackResult(r: Run): CommandResult<RolledBackResult> {
  const { target } = need(r.resolved, 'target');
  const outcome = need(r.restored, 'restore');
  const verify = r.verify ?? { performed: false };
  const urn = outcome.restored.record.urn;
  const again = rollbackCommandOf(target);
  return {
    json: {
      schemaVersion: 1,
      status: 'ok',
      command: 'rollback',
      urn,
      replacedUrn: outcome.replacedUrn,
      fingerprint: outcome.restored.key.kid,
      ...target.where,
      ...outcome.data,
      restartHint: target.restartNeeded?.() === false ? '' : target.restartCommand(),
      ...(target.reload ? { agentReload: target.reload() } : {}),
      rollbackCommand: again,
      verify,
    },
    summary: [
      `rolled back ${target.label} to: ${urn}`,
      `  fingerprint:  ${outcome.restored.key.kid}`,
      ...outcome.lines,
      `  verified:     ${describeVerify(verify)}`,
      `next: ${target.restartAdvice()}`,
      `undo: ${again}`,
    ],
  };
}

export function rollbackPlanResult(r: Run, plan: PlanEntry[]): CommandResult<RollbackPlanResult> {
  const { target } = need(r.resolved, 'target');
  const current = need(r.current, 'current identity');
  const urn = current.previous?.record.urn ?? null;
  return {
    json: {
      schemaVersion: 1,
      status: 'ok',
      command: 'rollback',
      dryRun: true,
      ...target.where,
      urn,
      replacedUrn: current.identity?.record.urn ?? null,
      plan,
      durationMs: elapsedMs(r),
    },
    summary: [`dry run passed: rollback would put ${urn} back in service in ${target.label}`, ...planLines(plan)],
  };
}
