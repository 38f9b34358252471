import { InterruptedError, VerificationError } from '../errors.js';
import { generateIdentityKey, type DecodedIdentity, type PrivateIdentityKey } from '../identity/index.js';
import type { Io } from '../io.js';
import { type CommandResult, createReporter, type OutputOptions, type Reporter } from '../output.js';
import type { RolloutOutcome } from '../rollout/run-rollout.js';
import { parseWorkloadRef, type WorkloadRef } from '../rollout/workload-ref.js';
import type { ClusterSession } from './cluster-session.js';
import { commandLine } from './command-line.js';
import { createRunnerConnections, type CredentialFlags, type EnrollmentContext, enrollKey, resolveEnrollmentContext } from './enrollment-context.js';
import { type ResolvedTarget, resolveTarget, type TargetOptions } from './resolve-target.js';
import type { CurrentIdentity, NewIdentity, Preflight, TargetKind, TargetLock, WriteOutcome } from './target.js';
import { describeVerify, type VerifyReport, verifyAfterRotation } from './verify-step.js';
import { rotationDue } from './age.js';
import { type ConnectionsOutcome, enrollmentPath, validateApiKey } from '../enrollment/index.js';

// THE rotation: every rotate command runs these steps, in this order, through the target interface:
// resolve → read → pre-flight → generate → enroll → write → read back → verify → roll out → report.
// A step that fails stops the run. The roll-out step only runs after a verification that passed (or
// an explicit --no-verify). With --dry-run every step runs its own checks instead, with no side
// effect, and the result is the plan.

export interface RotationOptions extends OutputOptions, CredentialFlags, TargetOptions {
  timeoutSeconds: number;
  dryRun: boolean;
  verify: boolean;
  fallback?: boolean;
  rolloutTimeoutSeconds?: number;
  /** --if-older-than: rotate only when the identity in service is at least this old. */
  ifOlderThanSeconds?: number;
  /** false with --no-connections. */
  connections?: boolean;
  /** --wait-lock: how long to wait for another run's lock on the target (0: fail at once). */
  waitLockSeconds?: number;
  /**
   * The API caller's AbortSignal (the CLI has none: SIGINT ends the process, or the rollout undoes
   * itself on it). Honoured before each step up to enrolling, and by the rollout; once a key is
   * being enrolled the run goes on to store and verify it, so no enrolled runner is left stored nowhere.
   */
  signal?: AbortSignal;
}

export interface RotationSpec {
  command: 'rotate-identity' | 'rotate-par-identity';
  kind: TargetKind;
  options: RotationOptions;
}

/** What the steps pass each other. Each field is set by exactly one step. */
interface RotationRun {
  spec: RotationSpec;
  io: Io;
  report: Reporter;
  startedMs: number;
  resolved?: ResolvedTarget;
  lock?: TargetLock;
  current?: CurrentIdentity;
  preflight?: Preflight;
  ctx?: EnrollmentContext;
  rollout?: { session: ClusterSession; ref: WorkloadRef };
  key?: PrivateIdentityKey;
  next?: NewIdentity;
  enrolled?: { runnerId: string; runnerName: string };
  connections?: ConnectionsOutcome;
  written?: WriteOutcome;
  identity?: DecodedIdentity;
  verify?: VerifyReport;
  rolledOut?: RolloutOutcome;
  /** Set by the read step when --if-older-than finds nothing due: the run stops there, successfully. */
  skipped?: { reason: string; ageSeconds: number | null };
}

interface Step {
  name: string;
  title: string;
  run(r: RotationRun): Promise<void>;
  /** The dry-run form: the step's checks without side effects; returns what the real step would do. */
  plan(r: RotationRun): Promise<string>;
}

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`pipeline order: ${what} is not set yet`);
  return value;
}

function remainingMs(r: RotationRun): number {
  return Math.max(1_000, r.spec.options.timeoutSeconds * 1000 - (r.io.now().getTime() - r.startedMs));
}

function undoCommand(r: RotationRun): string {
  return commandLine(['par-identity', 'rollback', ...need(r.resolved, 'target').target.selector]);
}

function describeCurrent(current: CurrentIdentity): string {
  if (current.state === 'ok' && current.identity) return `current identity ${current.identity.record.urn} (fingerprint ${current.identity.key.kid})`;
  if (current.state === 'corrupt') return `current identity does not decode (${current.problem?.message ?? 'corrupt'}); it would be kept, not used`;
  return 'no identity yet: a first one would be enrolled';
}

const resolve: Step = {
  name: 'resolve',
  title: 'resolve config and target',
  async run(r) {
    r.resolved = await resolveTarget(r.spec.kind, r.spec.options, r.io, r.report, { requireEnabled: r.spec.kind !== 'helm-secret' });
  },
  async plan(r) {
    await resolve.run(r);
    return `target: ${need(r.resolved, 'target').target.label}`;
  },
};

const lock: Step = {
  name: 'lock',
  title: 'lock the target',
  async run(r) {
    r.lock = await need(r.resolved, 'target').target.lock(r.spec.options.waitLockSeconds ?? 0);
    for (const note of r.lock.notes) r.report.info(note);
    for (const warning of r.lock.warnings) r.report.warn(warning);
  },
  async plan(r) {
    // Taken and held like a real run, so the dry run fails (LOCKED) where the real run would.
    await lock.run(r);
    return `${need(r.lock, 'lock').notes.join('; ')} — free now; a real run holds it until it ends`;
  },
};

const read: Step = {
  name: 'read',
  title: 'read the current identity',
  async run(r) {
    r.current = await need(r.resolved, 'target').target.read();
    for (const note of r.current.notes) r.report.info(note);
    for (const warning of r.current.warnings) r.report.warn(warning);
    const threshold = r.spec.options.ifOlderThanSeconds;
    if (threshold !== undefined) {
      const due = rotationDue(r.current, threshold, r.io.now());
      r.report.info(`--if-older-than: ${due.due ? 'due' : 'not due'}: ${due.reason}`);
      if (!due.due) r.skipped = { reason: due.reason, ageSeconds: due.ageSeconds };
    }
  },
  async plan(r) {
    await read.run(r);
    return describeCurrent(need(r.current, 'current identity'));
  },
};

const preflight: Step = {
  name: 'preflight',
  title: 'pre-flight',
  async run(r) {
    const { target, config, cluster } = need(r.resolved, 'target');
    const current = need(r.current, 'current identity');
    r.preflight = await target.preflight(current, { dryRun: r.spec.options.dryRun });
    for (const note of r.preflight.notes) r.report.info(note);
    for (const warning of r.preflight.warnings) r.report.warn(warning);
    r.ctx = await resolveEnrollmentContext(config, r.spec.options, r.io, r.report);
    if (r.spec.options.rollout) {
      // The rollout runs on the run's one connection; a Secret target's workload lives beside it.
      const session = await cluster();
      const namespace = typeof target.where.namespace === 'string' ? target.where.namespace : session.namespace;
      const ref = parseWorkloadRef(r.spec.options.rollout, namespace);
      // The roll-out code (and the Kubernetes client it uses) is loaded only for --rollout.
      const { precheckRollout } = await import('./rollout-step.js');
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

const generate: Step = {
  name: 'generate',
  title: 'generate a key',
  async run(r) {
    r.key = generateIdentityKey();
  },
  async plan() {
    return 'would generate a fresh ECDSA P-256 key with node:crypto (kept in memory only)';
  },
};

const enrollStep: Step = {
  name: 'enroll',
  title: 'enroll the new key',
  async run(r) {
    const ctx = need(r.ctx, 'enrollment context');
    const key = need(r.key, 'key');
    const naming = need(r.preflight, 'pre-flight').naming;
    const { urn, ...enrolled } = await enrollKey(ctx, key, naming, remainingMs(r), r.io, r.report);
    r.enrolled = enrolled;
    r.next = { key, urn, apiKeyHash: ctx.apiKeyHash, ...(naming.hostname ? { hostname: naming.hostname } : {}) };
  },
  async plan(r) {
    const ctx = need(r.ctx, 'enrollment context');
    const naming = need(r.preflight, 'pre-flight').naming;
    const checked = await validateApiKey(ctx.endpoint.baseUrl, ctx.credentials.apiKey.value, ctx.extraHeaders, Math.min(remainingMs(r), 15_000), ctx.network);
    const keyNote = checked.transient ? `API key check answered ${checked.transient}` : 'API key accepted by /api/v1/validate';
    r.report.info(keyNote);
    return `${keyNote}; would POST ${ctx.endpoint.baseUrl}${enrollmentPath(ctx.apiKeyOnly)} (flavor ${naming.flavor}, runner name ${naming.runnerNamePrefix}-<UTC time>), retrying within --timeout with the same key`;
  },
};

const write: Step = {
  name: 'write',
  title: 'write the new identity',
  async run(r) {
    const { target } = need(r.resolved, 'target');
    r.written = await target.write(need(r.current, 'current identity'), need(r.next, 'new identity'));
    for (const warning of r.written.warnings) r.report.warn(warning);
  },
  async plan(r) {
    return `would ${need(r.resolved, 'target').target.describeWrite(need(r.current, 'current identity'))}`;
  },
};

const readBack: Step = {
  name: 'read-back',
  title: 'read back and decode',
  async run(r) {
    r.identity = await need(r.resolved, 'target').target.readBack(need(r.next, 'new identity'));
  },
  async plan(r) {
    return `would re-read ${need(r.resolved, 'target').target.label} and check it holds exactly the new identity`;
  },
};

const verify: Step = {
  name: 'verify',
  title: 'verify online (signed health check)',
  async run(r) {
    const { target } = need(r.resolved, 'target');
    const next = need(r.next, 'new identity');
    r.verify = await verifyAfterRotation(need(r.ctx, 'enrollment context'), need(r.identity, 'read-back identity'), target.flavor, r.spec.options, r.startedMs, r.io);
    if (r.verify.performed && !r.verify.ok) {
      const kept = need(r.written, 'write').previousKept;
      throw new VerificationError(
        `the new identity ${next.urn} was stored in ${target.label} but the server did not accept it: ${r.verify.reason}`,
        `${kept ? `The previous identity is kept; restore it with: ${undoCommand(r)}` : 'No previous identity was kept.'} Do not restart the runner${r.spec.options.rollout ? '; the rollout was not started' : ''}.`,
        { urn: next.urn, ...target.where, rollbackCommand: undoCommand(r) } as Record<string, string>,
      );
    }
  },
  async plan(r) {
    return r.spec.options.verify ? `would prove with a signed health check at ${need(r.ctx, 'enrollment context').endpoint.baseUrl} that the server accepts the new key` : 'skipped (--no-verify)';
  },
};

/** The runner's connections, as the agent creates them after enrolling: best effort, never fatal. */
const connections: Step = {
  name: 'connections',
  title: 'create connections',
  async run(r) {
    if (r.spec.options.connections === false) {
      r.connections = { skipped: '--no-connections', created: [], failed: [] };
      return r.report.info('connections: not created (--no-connections)');
    }
    const hostname = need(r.preflight, 'pre-flight').naming.hostname ?? '';
    r.connections = await createRunnerConnections(need(r.ctx, 'enrollment context'), need(r.resolved, 'target').target.flavor, need(r.enrolled, 'enrollment'), hostname, r.report);
  },
  async plan(r) {
    return r.spec.options.connections === false ? 'skipped (--no-connections)' : "would create the runner's connections the agent creates (per actions_allowlist; a failure is only a warning)";
  },
};

const rollout: Step = {
  name: 'rollout',
  title: 'roll out',
  async run(r) {
    if (!r.rollout) return;
    const o = r.spec.options;
    const { rolloutWorkload } = await import('./rollout-step.js');
    r.rolledOut = await rolloutWorkload(
      r.rollout.session,
      r.rollout.ref,
      {
        checkOnly: false,
        surge: 'auto',
        fallback: Boolean(o.fallback),
        timeoutSeconds: o.rolloutTimeoutSeconds ?? 600,
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

const report: Step = {
  name: 'report',
  title: 'report',
  async run() {},
  async plan() {
    return 'would print the new URN, its fingerprint, the previous URN and the undo command (never key material)';
  },
};

export const ROTATION_STEPS: readonly Step[] = [resolve, lock, read, preflight, generate, enrollStep, write, readBack, verify, connections, rollout, report];

const PREVIOUS_RUNNER_NOTE = 'note: The previous runner stays registered in Datadog (and keeps working) until you remove it there.';

function planResult(r: RotationRun, plan: { step: string; action: string }[]): CommandResult {
  const { target } = need(r.resolved, 'target');
  const current = need(r.current, 'current identity');
  const ctx = need(r.ctx, 'enrollment context');
  return {
    command: r.spec.command,
    data: {
      dryRun: true,
      ...target.where,
      previousUrn: current.identity?.record.urn ?? null,
      enrollmentUrl: ctx.endpoint.baseUrl,
      ...(r.preflight?.naming.hostname ? { hostname: r.preflight.naming.hostname, hostnameSource: r.preflight.naming.hostnameSource ?? null } : {}),
      ...(r.preflight?.naming.clusterId ? { clusterId: r.preflight.naming.clusterId } : {}),
      ...(target.kind !== 'file' ? { action: current.state === 'missing' ? 'create' : 'update' } : {}),
      plan,
      durationMs: r.io.now().getTime() - r.startedMs,
    },
    summary: [
      `dry run passed: ${r.spec.command} would enroll at ${ctx.endpoint.baseUrl} and ${target.describeWrite(current)}`,
      ...plan.map((p, i) => `  ${String(i + 1).padStart(2)}. ${p.step.padEnd(10)} ${p.action}`),
    ],
  };
}

function skippedResult(r: RotationRun): CommandResult {
  const { target } = need(r.resolved, 'target');
  const current = need(r.current, 'current identity');
  const skipped = need(r.skipped, 'skip');
  return {
    command: r.spec.command,
    status: 'skipped',
    data: { ...target.where, urn: current.identity?.record.urn ?? null, fingerprint: current.identity?.key.kid ?? null, rotatedAt: current.rotatedAt ?? null, ageSeconds: skipped.ageSeconds, reason: skipped.reason, durationMs: r.io.now().getTime() - r.startedMs },
    summary: [`skipped: ${skipped.reason}; nothing was enrolled or changed in ${target.label}`],
  };
}

function rolloutSummary(outcome: RolloutOutcome | undefined): { data: Record<string, unknown> | null; lines: string[] } {
  if (!outcome) return { data: null, lines: [PREVIOUS_RUNNER_NOTE] };
  const allNew = outcome.action === 'rolled-out' || outcome.action === 'unchanged';
  return {
    data: { target: outcome.target, action: outcome.action, surged: outcome.surged, strategyRestored: outcome.strategyRestored, fallbackSteps: outcome.fallbackSteps, previousRunnerSafeToRemove: allNew },
    lines: [
      `  rollout:      ${outcome.target} ${outcome.action}${outcome.surged ? ' (create-before-delete)' : ''}`,
      allNew ? 'every Pod runs the new identity: the previous runner is now safe to remove in Datadog.' : PREVIOUS_RUNNER_NOTE,
    ],
  };
}

function rotationResult(r: RotationRun): CommandResult {
  const { target } = need(r.resolved, 'target');
  const next = need(r.next, 'new identity');
  const written = need(r.written, 'write');
  const verifyReport = need(r.verify, 'verification');
  const previousUrn = need(r.current, 'current identity').identity?.record.urn ?? null;
  const rolled = rolloutSummary(r.rolledOut);
  return {
    command: r.spec.command,
    data: {
      urn: next.urn,
      previousUrn,
      fingerprint: next.key.kid,
      ...target.where,
      ...written.data,
      ...(r.preflight?.naming.hostname ? { hostname: r.preflight.naming.hostname, hostnameSource: r.preflight.naming.hostnameSource ?? null } : {}),
      ...(r.preflight?.naming.clusterId ? { clusterId: r.preflight.naming.clusterId } : {}),
      agentVersion: need(r.ctx, 'enrollment context').version,
      connections: r.connections ?? null,
      restartHint: target.restartCommand(),
      verify: verifyReport,
      rollout: rolled.data,
      rollbackCommand: undoCommand(r),
      durationMs: r.io.now().getTime() - r.startedMs,
    },
    summary: [
      `rotated: ${next.urn}`,
      `  fingerprint:  ${next.key.kid}`,
      `  previous:     ${previousUrn ?? '(none)'}`,
      ...written.lines,
      `  verified:     ${describeVerify(verifyReport)}`,
      ...(r.rolledOut ? [] : [`next: ${target.restartAdvice()}`]),
      ...rolled.lines,
      `undo: ${undoCommand(r)}`,
    ],
  };
}

export async function runRotation(spec: RotationSpec, io: Io): Promise<CommandResult> {
  const r: RotationRun = { spec, io, report: createReporter(io, spec.options), startedMs: io.now().getTime() };
  const plan: { step: string; action: string }[] = [];
  try {
    let enrolling = false;
    for (const step of ROTATION_STEPS) {
      if (step === report) break;
      enrolling ||= step === enrollStep;
      if (!enrolling && spec.options.signal?.aborted) throw new InterruptedError(`${step.title} (aborted by the caller before it started; nothing was enrolled or changed)`);
      r.report.step(spec.options.dryRun ? `[dry run] ${step.title}` : step.title);
      if (spec.options.dryRun) plan.push({ step: step.name, action: await step.plan(r) });
      else await step.run(r);
      if (r.skipped) return skippedResult(r);
    }
  } finally {
    await r.lock?.release();
  }
  r.verify ??= { performed: false };
  if (spec.options.dryRun) {
    plan.push({ step: report.name, action: await report.plan(r) });
    return planResult(r, plan);
  }
  return rotationResult(r);
}
