import type { V1Pod } from '@kubernetes/client-node';
import { InterruptedError, RolloutError } from '../errors.js';
import { Deadline, systemClock } from '../time/index.js';
import { type FallbackStep, fallbackStep } from './capacity-fallback.js';
import { checkRollout, type RolloutCheck } from './eligibility.js';
import type { RolloutApi } from './rollout-api.js';
import { isComplete, type NodeProgress, progressOf, revisionOf } from './rollout-status.js';
import { combine, FINGERPRINT_ANNOTATION, restartPatch, restorePatch, snapshotStrategy, surgePatch, undoRestartPatch } from './surge-strategy.js';
import { describeRef, type WorkloadRef } from './workload-ref.js';

// check → (dry run) → surge strategy + restart annotation in one patch → wait, with the capacity
// fallback when asked → restore the user's strategy whatever happened (success, failure, Ctrl-C).

export interface RolloutOptions {
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
  signal?: AbortSignal;
  now: () => Date;
  onProgress?: (rows: NodeProgress[], note?: string) => void;
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
}

export async function inspect(api: RolloutApi, options: Pick<RolloutOptions, 'ref' | 'identitySecretNames'>): Promise<{ check: RolloutCheck; workload: Awaited<ReturnType<RolloutApi['readWorkload']>> }> {
  const workload = await api.readWorkload(options.ref);
  const pods = await api.podsOf(options.ref, workload);
  const nodes = await api.nodes();
  const nodeNames = options.ref.kind === 'daemonset' ? [...new Set(pods.map((p) => p.spec?.nodeName).filter((n): n is string => Boolean(n)))] : nodes.map((n) => n.metadata?.name ?? '');
  const podsOnNodes = (await Promise.all(nodeNames.map((n) => api.podsOnNode(n)))).flat();
  const check = checkRollout({ kind: options.ref.kind, workload, pods, podsOnNodes, nodes, pdbNames: await api.pdbNames(options.ref), identitySecretNames: options.identitySecretNames });
  return { check, workload };
}

function decideSurge(check: RolloutCheck, options: RolloutOptions): boolean {
  const blockers = check.findings.filter((f) => f.severity === 'blocker');
  if (options.surge === false) return false;
  if (check.verdict === 'blocked') {
    if (options.surge === true) throw new RolloutError('SURGE_BLOCKED', `a create-before-delete restart is not safe: ${blockers.map((b) => b.message).join('; ')}`, 'Nothing was changed. Fix the listed conditions, or restart with the workload’s own strategy using --no-surge.');
    return false;
  }
  if (check.verdict === 'needs fallback' && !options.fallback) {
    const full = check.nodes.filter((n) => n.verdict === 'needs fallback').map((n) => `${n.node} (${n.reasons.join(', ')})`);
    throw new RolloutError(
      'NEEDS_FALLBACK',
      `some nodes have no room for a second Pod: ${full.join('; ')}`,
      'Nothing was changed. Add --fallback (delete-before-create on those nodes only, within the maxUnavailable budget), free capacity, or use --no-surge.',
    );
  }
  return true;
}

/** Default poll period when the caller's is not a positive finite number (a 0 or NaN period would spin). */
const DEFAULT_POLL_MS = 1_000;

export async function runRollout(api: RolloutApi, options: RolloutOptions): Promise<RolloutOutcome> {
  const started = options.now().getTime();
  const { check, workload } = await inspect(api, options);
  const base = { target: describeRef(options.ref), check, fallbackSteps: [] as FallbackStep[], noReadyObservations: 0, progress: [] as NodeProgress[] };
  const elapsed = () => options.now().getTime() - started;
  if (options.checkOnly) return { ...base, action: 'checked', surged: false, strategyRestored: false, patches: [], durationMs: elapsed() };

  const current = workload.spec?.template?.metadata?.annotations?.[FINGERPRINT_ANNOTATION];
  if (options.fingerprint && current === options.fingerprint && isComplete(options.ref.kind, workload)) {
    return { ...base, action: 'unchanged', surged: false, strategyRestored: false, patches: [], durationMs: elapsed() };
  }
  const surged = decideSurge(check, options);
  const original = snapshotStrategy(options.ref.kind, workload);
  const restart = restartPatch(options.now(), options.fingerprint);
  const first = surged ? combine(surgePatch(options.ref.kind, original, check.budget), restart) : restart;
  const patches = surged ? [first, restorePatch(original)] : [first];
  if (options.dryRun) return { ...base, action: 'dry-run', surged, strategyRestored: false, patches, durationMs: elapsed() };

  const oldRevisions = new Set((await api.podsOf(options.ref, workload)).map(revisionOf).filter(Boolean));
  const isNew = (p: V1Pod) => !oldRevisions.has(revisionOf(p));
  let strategyRestored = false;
  let completed = false;
  try {
    await api.patchWorkload(options.ref, first);
    // The deadline runs on the caller's clock (tests pin it); waits are real timers, capped by it.
    const deadline = Deadline.at(started + options.timeoutMs, { now: () => options.now().getTime(), sleep: systemClock.sleep });
    const pollMs = options.pollMs > 0 && Number.isFinite(options.pollMs) ? options.pollMs : DEFAULT_POLL_MS;
    for (;;) {
      if (options.signal?.aborted) throw new InterruptedError(`rollout of ${describeRef(options.ref)}`);
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
            note = step.deletedPod ? `fallback: deleted ${step.deletedPod} on ${step.node} to make room (best effort: another Pod could take the room)` : `fallback on ${step.node} skipped: ${step.skipped}`;
          }
        }
      }
      options.onProgress?.(base.progress, note);
      if (isComplete(options.ref.kind, live)) {
        completed = true;
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
  } finally {
    // On failure the restart is undone in the same patch that restores the strategy: with the
    // user's maxUnavailable back, the controller would otherwise replace old Pods delete-first.
    const undo = completed ? undefined : undoRestartPatch(workload.spec?.template?.metadata?.annotations);
    if (surged) {
      await api.patchWorkload(options.ref, undo ? combine(restorePatch(original), undo) : restorePatch(original));
      strategyRestored = true;
    } else if (undo) await api.patchWorkload(options.ref, undo);
  }
  return { ...base, action: 'rolled-out', surged, strategyRestored, patches, durationMs: elapsed() };
}
