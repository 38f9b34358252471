import type { RolloutCommandOptions } from '../cli/cluster-commands.js';
import { ExitCode, InterruptedError, ParError, stopSignalOf, stoppedBy } from '../errors.js';
import { type Io, ioClock } from '../io.js';
import { Deadline } from '../time/index.js';
import { type CommandResult, createReporter, resultJson } from '../output.js';
import type { RolloutOutcome } from '../rollout/run-rollout.js';
import { describeRef, parseWorkloadRef, type WorkloadRef } from '../rollout/workload-ref.js';
import { clusterAccess } from '../session/connection.js';
import { commandLine, kubeSelector } from '../command-line.js';
import { rolloutWorkload } from '../rollout/rollout-workload.js';
import { programName } from '../single-executable.js';

/**
 * The check's verdict and findings. A blocker blocks the create-before-delete restart only: `--check`
 * says BLOCKED (and exits 10, SURGE_BLOCKED); a restart that went ahead with the workload's own
 * strategy instead (no --surge) says why it did not surge, and what it did.
 */
/** What a restart that could not surge did instead, by the run's action. */
const WITHOUT_SURGE: Record<RolloutOutcome['action'], string> = {
  checked: '',
  'dry-run': "would restart with the workload's own strategy",
  unchanged: 'nothing to restart',
  'rolled-out': "restarted with the workload's own strategy",
};

/** "rolled out create-before-delete (surge); original strategy restored", and what became of the strategy. */
function rolledOutLine(outcome: RolloutOutcome): string {
  const how = outcome.surged ? 'create-before-delete (surge)' : "with the workload's own strategy";
  const strategy = outcome.strategyRestored
    ? '; original strategy restored'
    : outcome.strategyChangedMeanwhile
      ? '; strategy left as someone changed it meanwhile'
      : '';
  return `rolled out ${how}${strategy}`;
}

function renderCheck(outcome: RolloutOutcome): string[] {
  const c = outcome.check;
  const restartedAnyway = c.verdict === 'blocked' && outcome.action !== 'checked';
  return [
    restartedAnyway ? `${outcome.target}: a surge is not safe; ${WITHOUT_SURGE[outcome.action]}` : `${outcome.target}: ${c.verdict}`,
    ...c.findings.map(
      (f) => `  ${f.severity === 'blocker' ? (restartedAnyway ? 'no surge' : 'BLOCKED') : f.severity}: ${f.message} [${f.code}]`,
    ),
    `  identity: ${c.identity.ways.join('; ')}${c.identity.restartNeeded ? ' → a restart is needed' : ''}`,
    ...c.nodes.map((n) => `  node ${n.node}: ${n.verdict} (${n.reasons.join(', ')})`),
    ...leftoverLines(outcome),
  ];
}

/** What an earlier rollout left on the workload (its strategy record, docs/rollout.md) and what this run did about it. */
function leftoverLines(outcome: RolloutOutcome): string[] {
  const l = outcome.interruptedRollout;
  const lines: string[] = [];
  if (l) {
    const next =
      l.action === 'restored'
        ? 'restored first (original strategy back, record removed), then this rollout went on'
        : l.action === 'record-removed'
          ? 'their change left as it is, the record removed'
          : l.state === 'interrupted'
            ? 'the next `rollout` restores it first'
            : l.state === 'changed-since'
              ? 'the next `rollout` leaves the strategy and removes the record'
              : l.state === 'in-progress'
                ? 'a `rollout` now is refused until it ends'
                : 'not acted on';
    lines.push(`  strategy: ${l.message}: ${next}`);
  }
  if (outcome.strategyChangedMeanwhile)
    lines.push(`  strategy: changed by someone else during this rollout; left as they set it, not restored`);
  return lines;
}

/**
 * A rollout stopped by SIGINT/SIGTERM (src/cli/stop-signals.ts): INTERRUPTED saying what is in place
 * (src/rollout/run-rollout.ts words the restart's state) and how to resume, with the command's flags.
 * Before the restart began, whatever a cut request threw means only that nothing was changed.
 */
function stopped(options: RolloutCommandOptions, ref: WorkloadRef | undefined, restartBegan: boolean, cause: unknown): unknown {
  if (restartBegan && !(cause instanceof InterruptedError)) return cause;
  const again = commandLine([
    programName(),
    'rollout',
    options.target,
    ...(ref || options.namespace ? ['-n', ref?.namespace ?? options.namespace!] : []),
    ...kubeSelector(options),
  ]);
  const resume = `Resume with \`${again}\`: it restarts every Pod again${options.surge === false ? '' : ', create-before-delete'}.`;
  if (cause instanceof InterruptedError && cause.details?.phase === 'during') {
    return new InterruptedError('rollout', {
      message: cause.message,
      hint: resume,
      signal: stopSignalOf(options.signal),
      details: cause.details,
    });
  }
  const what = ref ? describeRef(ref) : options.target;
  return new InterruptedError('rollout', {
    message: `${stoppedBy(options.signal)} before the restart of ${what}: nothing was changed, no Pod restarted`,
    hint:
      options.checkOnly || options.dryRun
        ? 'Nothing to undo. Run it again when you want.'
        : `Nothing to undo. ${resume.replace(' again', '')}`,
    signal: stopSignalOf(options.signal),
    details: {
      step: 'rollout',
      phase: 'before',
      restartedPods: 0,
      ...(cause instanceof ParError && cause.code !== 'INTERRUPTED' ? { cut: cause.code } : {}),
    },
  });
}

export async function run(options: RolloutCommandOptions, io: Io): Promise<CommandResult> {
  const report = createReporter(io, options);
  // A malformed workload reference is a usage error before anything connects.
  parseWorkloadRef(options.target, options.namespace ?? 'default');
  // A stop cuts the reads until the restart begins; from then on the rollout stops itself at its next
  // poll and undoes its restart, whose requests must not be cut (src/rollout/run-rollout.ts).
  const reads = new AbortController();
  const deadline = Deadline.after(options.timeoutSeconds * 1000, ioClock(io));
  let restartBegan = false;
  const onStop = () => {
    if (!restartBegan) reads.abort(options.signal?.reason);
  };
  if (options.signal?.aborted) onStop();
  else options.signal?.addEventListener('abort', onStop, { once: true });
  let ref: WorkloadRef | undefined;
  let outcome: RolloutOutcome;
  try {
    // --timeout counts from the command's start; the rollout cuts its requests by it until its restart
    // begins, and none after (its undo must run to its end: src/rollout/rollout-workload.ts).
    const session = await clusterAccess({ ...options, signal: reads.signal, deadline }, {}, io, report)();
    ref = parseWorkloadRef(options.target, session.namespace);
    outcome = await rolloutWorkload(session, ref, { ...options, deadline, onRestartBegins: () => (restartBegan = true) }, io, report);
  } catch (err) {
    throw options.signal?.aborted ? stopped(options, ref, restartBegan, err) : err;
  } finally {
    options.signal?.removeEventListener('abort', onStop);
  }
  const summary = renderCheck(outcome);
  if (outcome.action === 'dry-run')
    summary.push(
      'dry run: the apiserver accepts the first patch (server-side dry run); would apply these patches:',
      ...outcome.patches.map((p) => `  ${JSON.stringify(p)}`),
    );
  if (outcome.action === 'unchanged') summary.push('unchanged: every Pod already runs this identity fingerprint');
  if (outcome.action === 'rolled-out') {
    summary.push(
      rolledOutLine(outcome),
      ...outcome.fallbackSteps.map(
        (s) =>
          `  fallback on ${s.node}: ${s.deletedPod ? `deleted old Pod ${s.deletedPod} first (best effort)` : `skipped (${s.skipped})`}`,
      ),
    );
  }
  // `--check` answers whether a restart can create before it deletes: BLOCKED is a no, with its exit status.
  const blocked = outcome.action === 'checked' && outcome.check.verdict === 'blocked';
  if (blocked)
    summary.push(
      `exit ${ExitCode.rolloutFailed} (SURGE_BLOCKED): a create-before-delete restart is not safe; fix the BLOCKED conditions, or ` +
        `restart with the workload's own strategy (--no-surge)`,
    );
  const exitCode = blocked ? ExitCode.rolloutFailed : ExitCode.ok;
  const json = {
    ...resultJson('rollout', outcome),
    ...(blocked ? { status: 'blocked' as const, code: 'SURGE_BLOCKED' as const } : {}),
    exitCode,
  };
  return { ...(blocked ? { exitCode } : {}), json, summary };
}
