import { ExitCode, UsageError } from '../errors.js';
import { type Io, ioClock } from '../io.js';
import { Deadline } from '../time/index.js';
import { type CommandResult, createReporter, type OutputOptions, resultJson } from '../output.js';
import { describeRef, parseWorkloadRef } from '../rollout/index.js';
import type { AllNamespacesStatusResult, PodRow, PodsStatusResult, StatusFinding } from '../results/status.js';
import { describeAge } from '../rotation/age.js';
import { clusterAccess } from '../session/connection.js';
import { identitySecretsEverywhere, podsOfWorkload } from './fleet-view.js';
import type { TargetOptions } from '../command-options.js';
import { resolveTarget } from '../session/resolve-target.js';
import type { TargetKind } from '../rotation/target.js';

// `status --all-namespaces` and `status --pods [WORKLOAD]`: read-only views for an operator who looks
// after many runners, built on the same cluster connection rules as every other command.

const age = (seconds: number | null) => (seconds === null ? '?' : describeAge(seconds));

const IDENTITY_COLUMN: Record<PodRow['identity'], string> = { current: 'current ', previous: 'OTHER   ', unknown: 'UNKNOWN ' };

/** One Pod of `status --pods`: name, readiness, whose identity it runs, its fingerprint and age, where and which agent. */
function podLine(p: PodRow): string {
  const where = `${p.node ? `  node ${p.node}` : ''}${p.agentVersion ? `  agent ${p.agentVersion}` : ''}`;
  const fingerprint = p.fingerprint ?? '(no fingerprint annotation)';
  const ready = p.ready ? 'Ready   ' : 'NotReady';
  return `  ${p.name.padEnd(40)} ${ready} ${IDENTITY_COLUMN[p.identity]} ${fingerprint}  age ${age(p.ageSeconds)}${where}`;
}

/** --timeout bounds the whole view, as it bounds a run (docs/architecture.md §Deadlines). */
function commandDeadline(options: { timeoutSeconds: number }, io: Io): { deadline: Deadline } {
  return { deadline: Deadline.after(options.timeoutSeconds * 1000, ioClock(io)) };
}

export async function runAllNamespacesStatus(
  options: OutputOptions & TargetOptions & { timeoutSeconds: number },
  io: Io,
): Promise<CommandResult<AllNamespacesStatusResult>> {
  const report = createReporter(io, options);
  const session = await clusterAccess({ ...options, ...commandDeadline(options, io) }, {}, io, report)();
  const found = await identitySecretsEverywhere(session, io.now());
  for (const u of found.unreadable)
    report.warn(`namespace ${u.namespace}: Secrets not readable (${u.reason}); any identity there is not listed`);
  const header = ['NAMESPACE', 'NAME', 'LAYOUT', 'URN', 'FINGERPRINT', 'AGE'];
  const rows = found.rows.map((r) => [r.namespace, r.name, r.layout, r.urn ?? `(${r.problem})`, r.fingerprint ?? '-', age(r.ageSeconds)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return {
    json: resultJson('status', {
      exitCode: ExitCode.ok,
      findings: [],
      allNamespaces: true as const,
      secrets: found.rows,
      unreadableNamespaces: found.unreadable,
      how: found.how,
    }),
    summary: [
      line(header),
      ...rows.map(line),
      ...(found.rows.length ? [] : ['(no identity Secrets found)']),
      ...found.unreadable.map((u) => `not readable: namespace ${u.namespace} (${u.reason})`),
    ],
  };
}

export async function runPodsStatus(
  kind: TargetKind,
  workload: string | true,
  options: OutputOptions & TargetOptions & { timeoutSeconds: number },
  io: Io,
): Promise<CommandResult<PodsStatusResult>> {
  const report = createReporter(io, options);
  if (kind === 'file') kind = 'cluster-secret';
  const { target, cluster } = await resolveTarget(kind, options, io, report, {
    requireEnabled: false,
    readOnly: true,
    ...commandDeadline(options, io),
  });
  const current = await target.read();
  const fingerprint = current.identity?.key.kid ?? null;
  const session = await cluster();
  const namespace = typeof target.where.namespace === 'string' ? target.where.namespace : session.namespace;
  if (workload === true && kind === 'helm-secret')
    throw new UsageError('--pods needs the workload with --k8s-secret, e.g. --pods deployment/<name>');
  const ref = parseWorkloadRef(workload === true ? 'deployment/datadog-cluster-agent' : workload, namespace);
  const view = await podsOfWorkload(session, ref, fingerprint, io.now(), kind === 'helm-secret');
  // Pods still on another identity, or that may be (an agent version that may or may not reload, no
  // fingerprint recorded), need the previous runner: a runbook that would remove it must be able to stop
  // on this, so it has its own exit status. A Pod whose agent reloaded is current (docs/protocol.md §6d).
  const others = view.pods.filter((p) => p.identity !== 'current');
  const findings: (StatusFinding & { kind: 'pods-on-another-identity' })[] = others.length
    ? [{ kind: 'pods-on-another-identity', exitCode: ExitCode.podsOnOtherIdentity, message: view.reason }]
    : [];
  const exitCode = findings[0]?.exitCode ?? ExitCode.ok;
  const interrupted = view.interruptedRollout;
  const restores = interrupted?.state === 'interrupted' ? ': `par-identity rollout` restores it' : '';
  return {
    ...(exitCode === ExitCode.ok ? {} : { exitCode }),
    json: {
      ...resultJson('status', {
        exitCode,
        findings,
        ...target.where,
        workload: `${ref.kind}/${ref.name}`,
        fingerprint,
        urn: current.identity?.record.urn ?? null,
        pods: view.pods,
        previousRunnerRemovable: view.previousRemovable,
        reason: view.reason,
        ...(view.interruptedRollout ? { interruptedRollout: view.interruptedRollout } : {}),
      }),
      status: findings[0]?.kind ?? 'ok',
    },
    summary: [
      `identity in service: ${current.identity?.record.urn ?? '(none)'} fingerprint ${fingerprint ?? '-'} (${target.label})`,
      ...view.pods.map(podLine),
      view.reason,
      ...(interrupted ? [`${describeRef(ref)}: ${interrupted.message}${restores}`] : []),
    ],
  };
}
