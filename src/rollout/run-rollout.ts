import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { InterruptedError, ParError, RolloutError, stopSignalOf, stoppedBy } from '../errors.js';
import { failpoint } from '../failpoint.js';
import { EventReason, type EventReasonName, isNotFound } from '../kube/index.js';
import { Deadline, systemClock } from '../time/index.js';
import { type FallbackStep, fallbackStep } from './capacity-fallback.js';
import { checkRollout, type RolloutCheck } from './eligibility.js';
import type { RolloutApi } from './rollout-api.js';
import { isComplete, type NodeProgress, progressOf, revisionOf } from './rollout-status.js';
import { combine, deleteFirstPatch, FINGERPRINT_ANNOTATION, restartPatch, restorePatch, snapshotStrategy, surgePatch, undoRestartPatch } from './surge-strategy.js';
import { describeRef, type WorkloadRef } from './workload-ref.js';

// check → (server-side dry run) → surge strategy + restart annotation in one patch → wait, with the capacity
// fallback when asked → restore the user's strategy whatever happened (success, failure, Ctrl-C).

interface RolloutOptions {
  ref: WorkloadRef;
  checkOnly: boolean;
  /** true: require a surge; false: restart with the workload's own strategy; 'auto': surge when safe. */
  surge: boolean | 'auto';
  fallback: boolean;
  /** Non-secret identity fingerprint written on the Pod template; same fingerprint + complete = no-op. */
  fingerprint?: string;
  identitySecretNames: string[];
  timeoutMs: number;
  pollMs: number;
  dryRun: boolean;
  /** Stops the rollout: before the restart, nothing is changed; during its wait, the restart is undone (interruptedRollout). */
  signal?: AbortSignal;
  /** Called once, right before the first change (the restart patch): from then on the undo's requests must not be cut. */
  onRestartBegins?: () => void;
  now: () => Date;
  /** Every poll, with the time waited so far (the caller prints a heartbeat from it). */
  onProgress?: (rows: NodeProgress[], note: string | undefined, elapsedMs: number) => void;
  /** Warnings the caller prints (an audit Event that could not be recorded). */
  onWarning?: (message: string) => void;
  /** reportingInstance of the audit Events (the resolved hostname); the OS hostname when unset. */
  eventInstance?: string;
}

export interface RolloutOutcome {
  target: string;
  check: RolloutCheck;
  action: 'checked' | 'dry-run' | 'unchanged' | 'rolled-out';
  surged: boolean;
  strategyRestored: boolean;
  patches: object[];
  fallbackSteps: FallbackStep[];
  /** Polls at which some node (DaemonSet) or the Deployment had no Ready Pod. */
  noReadyObservations: number;
  progress: NodeProgress[];
  durationMs: number;
  /** Audit Events on the workload: reasons recorded, and warnings for those that could not be. */
  events: { recorded: EventReasonName[]; warnings: string[] };
}

/**
 * Nodes and every Pod on them (any namespace) need cluster-scoped reads. They are optional: without
 * them the per-node room is not computed and the check says so (the fallback then refuses to run).
 */
async function capacityView(api: RolloutApi, ref: WorkloadRef, pods: V1Pod[]): Promise<{ nodes: V1Node[]; podsOnNodes: V1Pod[]; unavailable?: string }> {
  try {
    const nodes = await api.nodes();
    const nodeNames = ref.kind === 'daemonset' ? [...new Set(pods.map((p) => p.spec?.nodeName).filter((n): n is string => Boolean(n)))] : nodes.map((n) => n.metadata?.name ?? '');
    const podsOnNodes = (await Promise.all(nodeNames.map((n) => api.podsOnNode(n)))).flat();
    return { nodes, podsOnNodes };
  } catch (err) {
    if (err instanceof ParError && err.code === 'KUBE_FORBIDDEN') {
      const what = /listing nodes/.test(err.message) ? 'no list on nodes' : 'no list on Pods in all namespaces';
      return { nodes: [], podsOnNodes: [], unavailable: `${what}: the token lacks this cluster-scoped right` };
    }
    throw err;
  }
}

/** A 404 on the workload is WORKLOAD_MISSING (exit 10, as the error table says), not a generic API error. */
export async function readWorkloadOrMissing(api: RolloutApi, ref: WorkloadRef, what: string, untouched: string): ReturnType<RolloutApi['readWorkload']> {
  try {
    return await api.readWorkload(ref);
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause ?? err;
    if (isNotFound(cause) || (err as { details?: { httpStatus?: number } }).details?.httpStatus === 404) {
      throw new RolloutError('WORKLOAD_MISSING', `${what} ${describeRef(ref)}, which does not exist`, `${untouched} Check the workload name and -n, then run again.`);
    }
    throw err;
  }
}

async function inspect(api: RolloutApi, options: Pick<RolloutOptions, 'ref' | 'identitySecretNames'>): Promise<{ check: RolloutCheck; workload: Awaited<ReturnType<RolloutApi['readWorkload']>> }> {
  const workload = await readWorkloadOrMissing(api, options.ref, 'rollout names', 'Nothing was changed.');
  const pods = await api.podsOf(options.ref, workload);
  const capacity = await capacityView(api, options.ref, pods);
  const check = checkRollout({
    kind: options.ref.kind,
    workload,
    pods,
    podsOnNodes: capacity.podsOnNodes,
    nodes: capacity.nodes,
    pdbNames: await api.pdbNames(options.ref),
    identitySecretNames: options.identitySecretNames,
    ...(capacity.unavailable ? { capacityUnavailable: capacity.unavailable } : {}),
  });
  return { check, workload };
}

type RestartMode = 'surge' | 'own' | 'delete-first';

function decideSurge(check: RolloutCheck, options: RolloutOptions): RestartMode {
  const blockers = check.findings.filter((f) => f.severity === 'blocker');
  if (options.surge === false) return 'own';
  // The check already knows that no node can take another replica: a restart would wait for its whole
  // deadline and then be undone. Refuse, or delete before create when --fallback allows it.
  if (check.verdict === 'blocked' && blockers.every((b) => b.code === 'NO_ROOM') && blockers.length > 0) {
    if (options.fallback) return 'delete-first';
    throw new RolloutError(
      'NEEDS_FALLBACK',
      `no node has room for another replica of ${describeRef(options.ref)}: ${check.nodes.map((n) => `${n.node} (${n.reasons.join(', ')})`).join('; ')}`,
      'Nothing was changed. Add --fallback (one old Pod deleted before its replacement, a short gap), free capacity, or scale the workload down first.',
    );
  }
  if (check.verdict === 'blocked') {
    if (options.surge === true) throw new RolloutError('SURGE_BLOCKED', `a create-before-delete restart is not safe: ${blockers.map((b) => b.message).join('; ')}`, 'Nothing was changed. Fix the listed conditions, or restart with the workload’s own strategy using --no-surge.');
    return 'own';
  }
  if (check.verdict === 'needs fallback' && !options.fallback) {
    const full = check.nodes.filter((n) => n.verdict === 'needs fallback').map((n) => `${n.node} (${n.reasons.join(', ')})`);
    throw new RolloutError(
      'NEEDS_FALLBACK',
      `some nodes have no room for a second Pod: ${full.join('; ')}`,
      'Nothing was changed. Add --fallback (delete-before-create on those nodes only, within the maxUnavailable budget), free capacity, or use --no-surge.',
    );
  }
  return 'surge';
}

/**
 * A rollout stopped by the run's signal (SIGINT/SIGTERM through the CLI, the API caller's abort): what
 * is in place. `phase` before: nothing was changed. During the wait: the restart is being undone in the
 * same step (the finally below), so the message states the state after it: which Pods were already
 * replaced (the controller puts them back onto the original template; every Pod that starts reads the
 * identity as it is now) and which were not restarted. The caller adds how to resume.
 */
function interruptedRollout(options: RolloutOptions, phase: 'before' | 'during', progress: NodeProgress[] = [], elapsedMs = 0): InterruptedError {
  const what = describeRef(options.ref);
  const make = (where: string, inPlace: string, details: Record<string, unknown>) =>
    new InterruptedError('rollout', {
      message: `${stoppedBy(options.signal)} ${where}: ${inPlace}`,
      hint: `Run the rollout of ${what} again when you want.`,
      signal: stopSignalOf(options.signal),
      details: { step: 'rollout', phase, inPlace, ...details },
    });
  if (phase === 'before') return make(`before the restart of ${what}`, `nothing was changed, no Pod of ${what} restarted`, { restartedPods: 0 });
  const replaced = progress.reduce((n, r) => n + (r.pods - r.oldPods), 0);
  const kept = progress.reduce((n, r) => n + r.oldPods, 0);
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const restarted =
    options.ref.kind === 'daemonset'
      ? `${plural(replaced, 'new Pod')}, ${progress.filter((r) => r.newReady).length} of ${plural(progress.length, 'node')} with a new Ready Pod (${progress.filter((r) => r.newReady).map((r) => r.node).join(', ') || 'none'})`
      : `${plural(replaced, 'new Pod')} (${progress.some((r) => r.newReady) ? 'some Ready' : 'none Ready yet'})`;
  return make(
    `during the rollout of ${what}, ${Math.round(elapsedMs / 1000)} s in`,
    `its restart was undone and the original strategy restored; restarted before the stop: ${restarted}, which the controller puts back onto the original template; not restarted: ${plural(kept, 'Pod')} still running as ${kept === 1 ? 'it was, with the identity it' : 'they were, with the identity they'} started with`,
    { restartedPods: replaced, notRestartedPods: kept, elapsedMs },
  );
}

/** Default poll period when the caller's is not a positive finite number (a 0 or NaN period would spin). */
const DEFAULT_POLL_MS = 1_000;

/** Records one audit Event on the workload; failures become warnings, never errors. */
function auditTrail(api: RolloutApi, options: RolloutOptions, workload: Awaited<ReturnType<RolloutApi['readWorkload']>>, events: RolloutOutcome['events']) {
  const regarding = {
    kind: options.ref.kind === 'deployment' ? 'Deployment' : 'DaemonSet',
    apiVersion: 'apps/v1',
    namespace: options.ref.namespace,
    name: options.ref.name,
    ...(workload.metadata?.uid ? { uid: workload.metadata.uid } : {}),
  };
  return async (reason: EventReasonName, type: 'Normal' | 'Warning', note: string): Promise<void> => {
    if (!api.recordEvent) return;
    const result = await api.recordEvent({ regarding, reason, note, type, action: reason === EventReason.RolloutFallback ? 'Fallback' : 'Rollout' }, options.eventInstance);
    if (result.recorded) events.recorded.push(reason);
    else {
      events.warnings.push(result.warning);
      options.onWarning?.(result.warning);
    }
  };
}

export async function runRollout(api: RolloutApi, options: RolloutOptions): Promise<RolloutOutcome> {
  const started = options.now().getTime();
  failpoint('rollout-before-check');
  const { check, workload } = await inspect(api, options);
  const events = { recorded: [] as EventReasonName[], warnings: [] as string[] };
  const base = { target: describeRef(options.ref), check, fallbackSteps: [] as FallbackStep[], noReadyObservations: 0, progress: [] as NodeProgress[], events };
  const audit = auditTrail(api, options, workload, events);
  const elapsed = () => options.now().getTime() - started;
  if (options.checkOnly) return { ...base, action: 'checked', surged: false, strategyRestored: false, patches: [], durationMs: elapsed() };

  const current = workload.spec?.template?.metadata?.annotations?.[FINGERPRINT_ANNOTATION];
  if (options.fingerprint && current === options.fingerprint && isComplete(options.ref.kind, workload)) {
    return { ...base, action: 'unchanged', surged: false, strategyRestored: false, patches: [], durationMs: elapsed() };
  }
  if (options.fallback && options.ref.kind === 'daemonset' && !check.capacityChecked) {
    throw new RolloutError(
      'FALLBACK_UNAVAILABLE',
      '--fallback needs to read nodes (allocatable, taints, conditions) and the Pods on them in all namespaces, and this token may not list them',
      'Nothing was changed. Bind the ClusterRole par-identity-rollout-capacity (deploy/rbac-rollout-capacity.yaml) to this service account, or run without --fallback.',
    );
  }
  const mode = decideSurge(check, options);
  const surged = mode === 'surge';
  const strategyChanged = mode !== 'own';
  const original = snapshotStrategy(options.ref.kind, workload);
  const restart = restartPatch(options.now(), options.fingerprint);
  const first = surged ? combine(surgePatch(options.ref.kind, original, check.budget), restart) : mode === 'delete-first' ? combine(deleteFirstPatch(options.ref.kind), restart) : restart;
  const patches = strategyChanged ? [first, restorePatch(original)] : [first];
  if (options.dryRun) {
    // As a rotation's pre-flight does: the apiserver judges the very first patch (RBAC, admission, validation) and stores nothing.
    await api.patchWorkload(options.ref, first, { dryRun: true });
    return { ...base, action: 'dry-run', surged, strategyRestored: false, patches, durationMs: elapsed() };
  }

  const before = await api.podsOf(options.ref, workload);
  const oldRevisions = new Set(before.map(revisionOf).filter(Boolean));
  const isNew = (p: V1Pod) => !oldRevisions.has(revisionOf(p));
  // Every Pod old: what a stop before the first poll reports.
  base.progress = progressOf(options.ref.kind, before, isNew);
  // The last moment a stop changes nothing; from the next line on, the restart is undone on every path.
  if (options.signal?.aborted) throw interruptedRollout(options, 'before');
  options.onRestartBegins?.();
  let strategyRestored = false;
  let completed = false;
  const how = surged ? 'create-before-delete (surge, original strategy restored afterwards)' : mode === 'delete-first' ? 'delete-before-create, one Pod at a time (--fallback: no node has room; original strategy restored afterwards)' : "the workload's own strategy";
  const identity = options.fingerprint ? `identity fingerprint ${options.fingerprint}` : 'identity fingerprint unknown';
  try {
    failpoint('rollout-before-patch');
    await api.patchWorkload(options.ref, first);
    await audit(EventReason.RolloutStarted, 'Normal', `restart with ${how}; ${identity}`);
    // The deadline runs on the caller's clock (tests pin it); waits are real timers, capped by it.
    const deadline = Deadline.at(started + options.timeoutMs, { now: () => options.now().getTime(), sleep: systemClock.sleep });
    const pollMs = options.pollMs > 0 && Number.isFinite(options.pollMs) ? options.pollMs : DEFAULT_POLL_MS;
    for (;;) {
      if (options.signal?.aborted) {
        // What is in place at the stop, not at the last poll (a read the stop does not cut: the restart began).
        const atStop = await api.podsOf(options.ref, workload).catch(() => undefined);
        throw interruptedRollout(options, 'during', atStop ? progressOf(options.ref.kind, atStop, isNew) : base.progress, elapsed());
      }
      const live = await api.readWorkload(options.ref);
      const pods = await api.podsOf(options.ref, live);
      base.progress = progressOf(options.ref.kind, pods, isNew);
      if (base.progress.some((row) => row.readyPods === 0)) base.noReadyObservations++;
      let note: string | undefined;
      if (options.fallback && surged && options.ref.kind === 'daemonset') {
        const newRevision = pods.map(revisionOf).find((r) => r && !oldRevisions.has(r));
        if (newRevision) {
          const step = await fallbackStep({ api, ref: options.ref, uid: workload.metadata?.uid ?? '', newRevision, budget: check.budget, now: options.now }, pods);
          if (step) {
            base.fallbackSteps.push(step);
            if (step.deletedPod) await audit(EventReason.RolloutFallback, 'Warning', `capacity fallback on node ${step.node}: deleted old Pod ${step.deletedPod} before its replacement could schedule (best effort); ${identity}`);
            note = step.deletedPod ? `fallback: deleted ${step.deletedPod} on ${step.node} to make room (best effort: another Pod could take the room)` : `fallback on ${step.node} skipped: ${step.skipped}`;
          }
        }
      }
      options.onProgress?.(base.progress, note, elapsed());
      if (isComplete(options.ref.kind, live)) {
        completed = true;
        await audit(EventReason.RolloutCompleted, 'Normal', `every Pod runs the new template (${how}); ${identity}`);
        break;
      }
      if (deadline.expired()) {
        throw new RolloutError(
          'ROLLOUT_TIMEOUT',
          `${describeRef(options.ref)} did not finish rolling out within ${Math.round(options.timeoutMs / 1000)} s (${base.progress.map((r) => `${r.node}: ${r.newReady ? 'new Ready' : 'waiting'}`).join(', ')})`,
          'The restart was undone and the original strategy restored: Pods not yet replaced keep running with the identity they have. Check why the new Pods are not Ready (kubectl describe pod), then run the rollout again.',
        );
      }
      // An abort ends the wait early; the loop's first line turns it into InterruptedError.
      await deadline.sleep(pollMs, options.signal).catch(() => undefined);
    }
  } catch (err) {
    const why = err instanceof ParError ? `${err.code}: ${err.message}` : String((err as Error)?.message ?? err);
    await audit(EventReason.RolloutFailed, 'Warning', `rollout did not complete (the restart is being undone and the original strategy restored): ${why}; ${identity}`);
    throw err;
  } finally {
    // On failure the restart is undone in the same patch that restores the strategy: with the
    // user's maxUnavailable back, the controller would otherwise replace old Pods delete-first.
    const undo = completed ? undefined : undoRestartPatch(workload.spec?.template?.metadata?.annotations);
    if (strategyChanged) {
      await api.patchWorkload(options.ref, undo ? combine(restorePatch(original), undo) : restorePatch(original));
      strategyRestored = true;
    } else if (undo) await api.patchWorkload(options.ref, undo);
  }
  return { ...base, action: 'rolled-out', surged, strategyRestored, patches, durationMs: elapsed() };
}
