import type { CommandResult } from '../../output.js';
import type { RotationCommand, RotatedResult, RotationPlanResult, RotationSkippedResult, RolloutSummary, RunnerNaming } from '../../results/rotation.js';
import type { RolloutOutcome } from '../../rollout/run-rollout.js';
import { undoCommandOf } from '../command-line.js';
import type { RotationOptions } from '../options.js';
import { elapsedMs, need, type Run } from '../run.js';
import type { PlanEntry } from '../runner.js';
import { describeCredentialCheck } from '../steps/enroll.js';
import { describeVerify } from '../verify-step.js';
import { planLines } from './plan.js';
import { sanitizeServerString } from '../../sanitize.js';

// What a rotation reports: the rotation, its plan (--dry-run), or why it was skipped (--if-older-than).

type RotationRun = Run<RotationOptions>;

const PREVIOUS_RUNNER_NOTE = 'note: The previous runner stays registered in Datadog (and keeps working) until you remove it there.';

function naming(r: RotationRun): RunnerNaming {
  const n = r.preflight?.naming;
  return {
    ...(n?.hostname ? { hostname: n.hostname, hostnameSource: n.hostnameSource ?? null } : {}),
    ...(n?.clusterId ? { clusterId: sanitizeServerString(n.clusterId, 64) } : {}),
  };
}

export function rotationPlanResult(r: RotationRun, command: RotationCommand, plan: PlanEntry[]): CommandResult<RotationPlanResult> {
  const { target } = need(r.resolved, 'target');
  const current = need(r.current, 'current identity');
  const ctx = need(r.ctx, 'enrollment context');
  const credentials = need(r.credentialCheck, 'credential check');
  return {
    json: {
      schemaVersion: 1,
      status: 'ok',
      command,
      dryRun: true,
      ...target.where,
      previousUrn: current.identity?.record.urn ?? null,
      enrollmentUrl: ctx.endpoint.baseUrl,
      site: ctx.endpoint.site,
      siteSource: ctx.endpoint.siteSource,
      ...naming(r),
      ...(target.kind !== 'file' ? { action: current.state === 'missing' ? ('create' as const) : ('update' as const) } : {}),
      credentials,
      plan,
      durationMs: elapsedMs(r),
    },
    summary: [
      `dry run passed: ${command} would enroll at ${ctx.endpoint.baseUrl} and ${target.describeWrite(current)}`,
      `  site:         ${ctx.endpoint.site} (${ctx.endpoint.siteSource})`,
      `  proven:       ${describeCredentialCheck(credentials)}`,
      ...credentials.unproven.map((u) => `  not proven:   ${u}`),
      ...planLines(plan),
    ],
  };
}

export function skippedResult(r: RotationRun, command: RotationCommand): CommandResult<RotationSkippedResult> {
  const { target } = need(r.resolved, 'target');
  const current = need(r.current, 'current identity');
  const skipped = need(r.skipped, 'skip');
  return {
    json: {
      schemaVersion: 1,
      status: 'skipped',
      command,
      ...target.where,
      urn: current.identity?.record.urn ?? null,
      fingerprint: current.identity?.key.kid ?? null,
      rotatedAt: current.rotatedAt ?? null,
      ageSeconds: skipped.ageSeconds,
      reason: skipped.reason,
      durationMs: elapsedMs(r),
    },
    summary: [`skipped: ${skipped.reason}; nothing was enrolled or changed in ${target.label}`],
  };
}

function rolloutSummary(outcome: RolloutOutcome | undefined): { json: RolloutSummary | null; lines: string[] } {
  if (!outcome) return { json: null, lines: [PREVIOUS_RUNNER_NOTE] };
  const allNew = outcome.action === 'rolled-out' || outcome.action === 'unchanged';
  return {
    json: { target: outcome.target, action: outcome.action, surged: outcome.surged, strategyRestored: outcome.strategyRestored, fallbackSteps: outcome.fallbackSteps, previousRunnerSafeToRemove: allNew },
    lines: [
      `  rollout:      ${outcome.target} ${outcome.action}${outcome.surged ? ' (create-before-delete)' : ''}`,
      allNew ? 'every Pod runs the new identity: the previous runner is now safe to remove in Datadog.' : PREVIOUS_RUNNER_NOTE,
    ],
  };
}

export function rotationResult(r: RotationRun, command: RotationCommand): CommandResult<RotatedResult> {
  const { target } = need(r.resolved, 'target');
  const next = need(r.next, 'new identity');
  const written = need(r.written, 'write');
  const verify = r.verify ?? { performed: false };
  const previousUrn = need(r.current, 'current identity').identity?.record.urn ?? null;
  const rolled = rolloutSummary(r.rolledOut);
  // A created Secret has no previous identity: `rollback` would fail NO_BACKUP (docs/protocol.md §6c).
  const created = written.data.action === 'created' && target.undoCreation !== undefined;
  const undo = undoCommandOf(target, created);
  return {
    json: {
      schemaVersion: 1,
      status: 'ok',
      command,
      urn: next.urn,
      previousUrn,
      fingerprint: next.key.kid,
      ...target.where,
      ...written.data,
      ...naming(r),
      agentVersion: need(r.ctx, 'enrollment context').version,
      connections: r.connections ?? null,
      // A completed --rollout leaves nothing to restart, nor does an agent that reloads the change itself.
      restartHint: r.rolledOut || target.restartNeeded?.() === false ? '' : target.restartCommand(),
      ...(target.reload ? { agentReload: target.reload() } : {}),
      verify,
      rollout: rolled.json,
      rollbackCommand: undo,
      durationMs: elapsedMs(r),
    },
    summary: [
      `rotated: ${next.urn}`,
      `  fingerprint:  ${next.key.kid}`,
      `  previous:     ${previousUrn ?? '(none)'}`,
      ...written.lines,
      `  verified:     ${describeVerify(verify)}`,
      ...(r.rolledOut ? [] : [`next: ${target.restartAdvice()}`]),
      ...rolled.lines,
      created ? `undo: ${undo} (it was created by this run: nothing to roll back to; the runner ${next.urn} stays registered in Datadog until removed there)` : `undo: ${undo}`,
    ],
  };
}
