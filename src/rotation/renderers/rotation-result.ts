import type { CommandResult } from '../../output.js';
import type {
  PreviousRunner,
  RotationCommand,
  RotatedResult,
  RotationPlanResult,
  RotationSkippedResult,
  RolloutSummary,
  RunnerNaming,
} from '../../results/rotation.js';
import type { RolloutOutcome } from '../../rollout/run-rollout.js';
import { undoCommandOf } from '../../command-line.js';
import type { RotationInput } from '../../command-options.js';
import { elapsedMs, need, type Run } from '../run.js';
import type { PlanEntry } from '../runner.js';
import { describeCredentialCheck } from '../steps/enroll.js';
import { describeVerify } from '../verify-step.js';
import { planLines } from './plan.js';
import { sanitizeServerString } from '../../sanitize.js';

// What a rotation reports: the rotation, its plan (--dry-run), or why it was skipped (--if-older-than).

type RotationRun = Run<RotationInput>;

/**
 * The runner the rotation replaced (the identity in service before it), named by its URN and, when the
 * verified mark kept it, the name it was enrolled with; none when nothing decodable was replaced.
 * Whether Datadog removes it by itself (docs/protocol.md §14): only a node-agent runner enrolled
 * API-key-only (ownerless), after 35 days without contact; the agent enrolls the way its config says
 * (private_action_runner.api_key_only_enrollment), the config this run enrolled with.
 */
function previousRunnerOf(r: RotationRun): PreviousRunner | null {
  const current = need(r.current, 'current identity');
  const replaced = current.identity;
  if (!replaced) return null;
  const mark = current.lastVerified;
  const name = mark?.runnerName && mark.fingerprint === replaced.key.kid ? { name: mark.runnerName } : {};
  const ownerlessNodeRunner = need(r.resolved, 'target').target.kind === 'file' && need(r.ctx, 'enrollment context').apiKeyOnly;
  return { urn: replaced.record.urn, ...name, removedByDatadog: ownerlessNodeRunner ? 'after-35-days-inactive' : 'never' };
}

function describePreviousRunner(p: PreviousRunner, safeToRemove: boolean): string {
  const runner = `${p.urn}${p.name ? ` ("${p.name}")` : ''}`;
  const fate =
    p.removedByDatadog === 'after-35-days-inactive'
      ? 'Datadog deletes it by itself after 35 days without contact (a node-agent runner enrolled API-key-only)'
      : "Datadog never removes it by itself (an owned runner, or the cluster agent's)";
  if (safeToRemove) return `previous runner: ${runner}: every Pod runs the new identity, it is now safe to remove in Datadog; ${fate}.`;
  return (
    `previous runner: ${runner} stays registered in Datadog (and keeps working) ` +
    `until the runner restarts onto the new identity; ${fate}. Remove it there once nothing uses it.`
  );
}

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

function rolloutSummary(
  outcome: RolloutOutcome | undefined,
  previous: PreviousRunner | null,
): { json: RolloutSummary | null; lines: string[] } {
  const note = (safe: boolean) => (previous ? [describePreviousRunner(previous, safe)] : []);
  if (!outcome) return { json: null, lines: note(false) };
  const allNew = outcome.action === 'rolled-out' || outcome.action === 'unchanged';
  return {
    json: {
      target: outcome.target,
      action: outcome.action,
      surged: outcome.surged,
      strategyRestored: outcome.strategyRestored,
      fallbackSteps: outcome.fallbackSteps,
      previousRunnerSafeToRemove: allNew,
      ...(outcome.interruptedRollout ? { interruptedRollout: outcome.interruptedRollout } : {}),
      ...(outcome.strategyChangedMeanwhile ? { strategyChangedMeanwhile: outcome.strategyChangedMeanwhile } : {}),
    },
    lines: [`  rollout:      ${outcome.target} ${outcome.action}${outcome.surged ? ' (create-before-delete)' : ''}`, ...note(allNew)],
  };
}

export function rotationResult(r: RotationRun, command: RotationCommand): CommandResult<RotatedResult> {
  const { target } = need(r.resolved, 'target');
  const next = need(r.next, 'new identity');
  const written = need(r.written, 'write');
  const verify = r.verify ?? { performed: false };
  const previousUrn = need(r.current, 'current identity').identity?.record.urn ?? null;
  const previousRunner = previousRunnerOf(r);
  const rolled = rolloutSummary(r.rolledOut, previousRunner);
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
      previousRunner,
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
      created
        ? `undo: ${undo} (it was created by this run: nothing to roll back to; the runner ${next.urn} stays registered in Datadog until removed there)`
        : `undo: ${undo}`,
    ],
  };
}
