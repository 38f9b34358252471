import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { ConflictError, InterruptedError, ParError, RolloutError, stopSignalOf, stoppedBy } from '../errors.js';
import { failpoint } from '../failpoint.js';
import { EventReason, type EventReasonName, isNotFound } from '../kube/index.js';
import type { Deadline } from '../time/index.js';
import { type FallbackStep, fallbackStep } from './capacity-fallback.js';
import { checkRollout, type RolloutCheck, type Workload } from './eligibility.js';
import type { RolloutApi } from './rollout-api.js';
import { isComplete, type NodeProgress, progressOf, revisionOf } from './rollout-status.js';
import {
  assessLeftover,
  describeStrategy,
  guarded,
  type Leftover,
  type LeftoverReport,
  leftoverReport,
  newRecord,
  ORIGINAL_STRATEGY_ANNOTATION,
  type StrategyFields,
  type StrategyRecord,
  sameStrategy,
  strategyOf,
  strategyOfPatch,
} from './strategy-record.js';
import {
  combine,
  deleteFirstPatch,
  FINGERPRINT_ANNOTATION,
  restartPatch,
  restorePatch,
  surgePatch,
  undoRestartPatch,
} from './surge-strategy.js';
import { describeRef, type WorkloadRef } from './workload-ref.js';

// check → restore what an interrupted rollout left (its record on the workload) → (server-side dry run) →
// surge strategy + restart annotation + the record of the original strategy in one patch → wait, with
// the capacity fallback when asked → restore the user's strategy and remove the record whatever happened
// (success, failure, Ctrl-C). A kill (SIGKILL) leaves the record: the next run restores from it
// (docs/rollout.md "What a killed rollout leaves").

interface RolloutOptions {
  ref: WorkloadRef;
  checkOnly: boolean;
  /** true: require a surge; false: restart with the workload's own strategy; 'auto': surge when safe. */
  surge: boolean | 'auto';
  fallback: boolean;
  /** Non-secret identity fingerprint written on the Pod template; same fingerprint + complete = no-op. */
  fingerprint?: string;
  identitySecretNames: string[];
  /**
   * When the rollout must be complete, on the run's clock (its now and its waits: a test's fake clock
   * drives both). The caller starts it: `rollout` at the command's start, a rotation at its roll-out step.
   */
  deadline: Deadline;
  pollMs: number;
  dryRun: boolean;
  /** Stops the rollout: before the restart, nothing is changed; during its wait, the restart is undone (interruptedRollout). */
  signal?: AbortSignal;
  /** Called once, right before the first change (the restart patch): from then on the undo's requests must not be cut. */
  onRestartBegins?: () => void;
  /** Every poll, with the time waited so far (the caller prints a heartbeat from it). */
  onProgress?: (rows: NodeProgress[], note: string | undefined, elapsedMs: number) => void;
  /** Warnings the caller prints (an audit Event that could not be recorded). */
  onWarning?: (message: string) => void;
  /** reportingInstance of the audit Events (the resolved hostname); the OS hostname when unset. */
  eventInstance?: string;
}

/** "now" on the rollout's clock (its deadline's): the restart annotation, the strategy record, the leftover's age. */
function nowOf(options: Pick<RolloutOptions, 'deadline'>): Date {
  return new Date(options.deadline.clock.now());
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
  /**
   * The strategy record an earlier rollout left on the workload, and what this run did about it: a
   * `rollout` restores the original first (or, when someone changed the strategy since, leaves their
   * change and removes the record), then goes on with its own restart. Absent when there was none.
   */
  interruptedRollout?: LeftoverReport;
  /** Someone changed the strategy while this run had it changed: their value, left as it is (strategyRestored false). */
  strategyChangedMeanwhile?: StrategyFields;
}

/**
 * Nodes and every Pod on them (any namespace) need cluster-scoped reads. They are optional: without
 * them the per-node room is not computed and the check says so (the fallback then refuses to run).
 */
async function capacityView(
  api: RolloutApi,
  ref: WorkloadRef,
  pods: V1Pod[],
): Promise<{ nodes: V1Node[]; podsOnNodes: V1Pod[]; unavailable?: string }> {
  try {
    const nodes = await api.nodes();
    const nodeNames =
      ref.kind === 'daemonset'
        ? [...new Set(pods.map((p) => p.spec?.nodeName).filter((n): n is string => Boolean(n)))]
        : nodes.map((n) => n.metadata?.name ?? '');
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
export async function readWorkloadOrMissing(
  api: RolloutApi,
  ref: WorkloadRef,
  what: string,
  untouched: string,
): ReturnType<RolloutApi['readWorkload']> {
  try {
    return await api.readWorkload(ref);
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause ?? err;
    if (isNotFound(cause) || (err as { details?: { httpStatus?: number } }).details?.httpStatus === 404) {
      throw new RolloutError(
        'WORKLOAD_MISSING',
        `${what} ${describeRef(ref)}, which does not exist`,
        `${untouched} Check the workload name and -n, then run again.`,
      );
    }
    throw err;
  }
}

/**
 * The check, judged on the workload's own strategy: where a rollout's record says the strategy now is
 * the one it set (interrupted, or still running), the check reads the recorded original instead, so
 * it never presents a surge strategy as the user's (docs/rollout.md §9).
 */
async function inspect(
  api: RolloutApi,
  options: Pick<RolloutOptions, 'ref' | 'identitySecretNames' | 'deadline'>,
): Promise<{ check: RolloutCheck; workload: Workload; leftover: Leftover }> {
  const workload = await readWorkloadOrMissing(api, options.ref, 'rollout names', 'Nothing was changed.');
  const leftover = assessLeftover(options.ref.kind, workload, { now: nowOf(options) });
  const pods = await api.podsOf(options.ref, workload);
  const capacity = await capacityView(api, options.ref, pods);
  const own =
    leftover.state === 'interrupted' || leftover.state === 'in-progress'
      ? withStrategy(options.ref.kind, workload, leftover.record.original)
      : workload;
  const check = checkRollout({
    kind: options.ref.kind,
    workload: own,
    pods,
    podsOnNodes: capacity.podsOnNodes,
    nodes: capacity.nodes,
    pdbNames: await api.pdbNames(options.ref),
    identitySecretNames: options.identitySecretNames,
    ...(capacity.unavailable ? { capacityUnavailable: capacity.unavailable } : {}),
  });
  return { check, workload, leftover };
}

/** `w` as it would be with `fields` as its strategy (for the check only; never written). */
function withStrategy(kind: WorkloadRef['kind'], w: Workload, fields: StrategyFields): Workload {
  const strategy = {
    type: fields.type ?? 'RollingUpdate',
    ...(fields.type && fields.type !== 'RollingUpdate'
      ? {}
      : {
          rollingUpdate: {
            ...(fields.maxSurge !== null ? { maxSurge: fields.maxSurge } : {}),
            ...(fields.maxUnavailable !== null ? { maxUnavailable: fields.maxUnavailable } : {}),
          },
        }),
  };
  return { ...w, spec: { ...w.spec, ...(kind === 'deployment' ? { strategy } : { updateStrategy: strategy }) } } as Workload;
}

type RestartMode = 'surge' | 'own' | 'delete-first';

/** How a restart went, as its audit Event says it. */
function restartHow(surged: boolean, mode: RestartMode): string {
  if (surged) return 'create-before-delete (surge, original strategy restored afterwards)';
  if (mode === 'delete-first')
    return 'delete-before-create, one Pod at a time (--fallback: no node has room; original strategy restored afterwards)';
  return "the workload's own strategy";
}

/** What this run did about an earlier rollout's leftover before going on. */
const LEFTOVER_DONE: Record<LeftoverReport['action'], string> = {
  restored: 'restored first: the original strategy is back and the record removed',
  'record-removed': 'its record removed',
  reported: 'nothing restored',
};

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
    if (options.surge === true)
      throw new RolloutError(
        'SURGE_BLOCKED',
        `a create-before-delete restart is not safe: ${blockers.map((b) => b.message).join('; ')}`,
        'Nothing was changed. Fix the listed conditions, or restart with the workload’s own strategy using --no-surge.',
      );
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
function interruptedRollout(
  options: RolloutOptions,
  phase: 'before' | 'during',
  progress: NodeProgress[] = [],
  elapsedMs = 0,
): InterruptedError {
  const what = describeRef(options.ref);
  const make = (where: string, inPlace: string, details: Record<string, unknown>) =>
    new InterruptedError('rollout', {
      message: `${stoppedBy(options.signal)} ${where}: ${inPlace}`,
      hint: `Run the rollout of ${what} again when you want.`,
      signal: stopSignalOf(options.signal),
      details: { step: 'rollout', phase, inPlace, ...details },
    });
  if (phase === 'before')
    return make(`before the restart of ${what}`, `nothing was changed, no Pod of ${what} restarted`, { restartedPods: 0 });
  const replaced = progress.reduce((n, r) => n + (r.pods - r.oldPods), 0);
  const kept = progress.reduce((n, r) => n + r.oldPods, 0);
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const restarted =
    options.ref.kind === 'daemonset'
      ? `${plural(replaced, 'new Pod')}, ${progress.filter((r) => r.newReady).length} of ${plural(progress.length, 'node')} with a new Ready Pod (${
          progress
            .filter((r) => r.newReady)
            .map((r) => r.node)
            .join(', ') || 'none'
        })`
      : `${plural(replaced, 'new Pod')} (${progress.some((r) => r.newReady) ? 'some Ready' : 'none Ready yet'})`;
  return make(
    `during the rollout of ${what}, ${Math.round(elapsedMs / 1000)} s in`,
    `its restart was undone and the original strategy restored; restarted before the stop: ${restarted}, ` +
      `which the controller puts back onto the original template; not restarted: ${notRestarted(kept)}`,
    { restartedPods: replaced, notRestartedPods: kept, elapsedMs },
  );
}

/** The Pods a stopped rollout did not restart: "2 Pods still running as they were, with the identity they started with". */
function notRestarted(kept: number): string {
  return kept === 1
    ? '1 Pod still running as it was, with the identity it started with'
    : `${kept} Pods still running as they were, with the identity they started with`;
}

/** Default poll period when the caller's is not a positive finite number (a 0 or NaN period would spin). */
const DEFAULT_POLL_MS = 1_000;

/** Records one audit Event on the workload; failures become warnings, never errors. */
function auditTrail(
  api: RolloutApi,
  options: RolloutOptions,
  workload: Awaited<ReturnType<RolloutApi['readWorkload']>>,
  events: RolloutOutcome['events'],
) {
  const regarding = {
    kind: options.ref.kind === 'deployment' ? 'Deployment' : 'DaemonSet',
    apiVersion: 'apps/v1',
    namespace: options.ref.namespace,
    name: options.ref.name,
    ...(workload.metadata?.uid ? { uid: workload.metadata.uid } : {}),
  };
  return async (reason: EventReasonName, type: 'Normal' | 'Warning', note: string): Promise<void> => {
    if (!api.recordEvent) return;
    const result = await api.recordEvent(
      { regarding, reason, note, type, action: reason === EventReason.RolloutFallback ? 'Fallback' : 'Rollout' },
      options.eventInstance,
    );
    if (result.recorded) events.recorded.push(reason);
    else {
      events.warnings.push(result.warning);
      options.onWarning?.(result.warning);
    }
  };
}

/** Conflicts (409) a guarded write re-reads and retries before giving up: the controllers write status meanwhile. */
const GUARDED_ATTEMPTS = 8;

function stillRunning(options: RolloutOptions, l: Extract<Leftover, { state: 'in-progress' }>): ParError {
  return new ParError(
    'LOCKED',
    `${describeRef(options.ref)}: ${l.message}`,
    `Nothing was changed. Wait until that rollout ends (at the latest ${l.record.until}), then run again; \`rollout --check\` shows its state.`,
    {
      host: l.record.host,
      pid: l.record.pid,
      since: l.record.at,
      until: l.record.until,
    },
  );
}

/**
 * What an earlier, interrupted rollout left: its strategy is put back to the recorded original and the
 * record removed, in one write guarded by the resourceVersion just read; when someone changed the
 * strategy since, their change stays and only the record goes. Returns what was done.
 */
async function recoverLeftover(
  api: RolloutApi,
  options: RolloutOptions,
  workload: Workload,
  found: Extract<Leftover, { state: 'interrupted' | 'changed-since' }>,
): Promise<LeftoverReport> {
  let w = workload;
  let l: Leftover = found;
  for (let attempt = 1; ; attempt++) {
    if (l.state === 'none') return leftoverReport(found, 'reported');
    if (l.state === 'in-progress') throw stillRunning(options, l);
    if (l.state === 'unreadable') return leftoverReport(l, 'reported');
    const drop = { [ORIGINAL_STRATEGY_ANNOTATION]: null };
    const patch =
      l.state === 'interrupted'
        ? guarded(restorePatch(options.ref.kind, l.record.original), w.metadata?.resourceVersion, drop)
        : guarded({}, w.metadata?.resourceVersion, drop);
    try {
      await api.patchWorkload(options.ref, patch);
      return leftoverReport(l, l.state === 'interrupted' ? 'restored' : 'record-removed');
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= GUARDED_ATTEMPTS) throw err;
    }
    w = await api.readWorkload(options.ref);
    l = assessLeftover(options.ref.kind, w, { now: nowOf(options) });
  }
}

/**
 * The first write: strategy, restart and record in one patch guarded by the resourceVersion read. A
 * conflict (a controller's status write, usually) is retried on a fresh read as long as neither the
 * strategy nor the record changed; otherwise nothing was changed and the run stops.
 */
async function applyFirst(
  api: RolloutApi,
  options: RolloutOptions,
  workload: Workload,
  original: StrategyFields,
  build: (resourceVersion: string | undefined) => object,
): Promise<void> {
  let rv = workload.metadata?.resourceVersion;
  for (let attempt = 1; ; attempt++) {
    try {
      await api.patchWorkload(options.ref, build(rv));
      return;
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= GUARDED_ATTEMPTS) throw err;
    }
    const live = await api.readWorkload(options.ref);
    const leftover = assessLeftover(options.ref.kind, live, { now: nowOf(options) });
    if (leftover.state === 'in-progress') throw stillRunning(options, leftover);
    if (leftover.state !== 'none' || !sameStrategy(strategyOf(options.ref.kind, live), original)) {
      throw new ConflictError(
        `${describeRef(options.ref)} changed while this rollout prepared its restart (strategy now ${describeStrategy(strategyOf(options.ref.kind, live))})`,
        'Nothing was changed. Run the rollout again.',
      );
    }
    rv = live.metadata?.resourceVersion;
  }
}

/**
 * The end of a run that changed the strategy: back to the original and the record removed, with the
 * restart undone when it did not complete (`undo`), guarded by the resourceVersion just read. If the
 * strategy is no longer what this run set, someone changed it meanwhile: it is left as they set it.
 * Nothing is written when the first patch never reached the workload (neither our record nor `applied`).
 */
async function restoreOwnChange(
  api: RolloutApi,
  options: RolloutOptions,
  record: StrategyRecord,
  recordText: string,
  applied: boolean,
  undo: object | undefined,
): Promise<{ restored: boolean; changedMeanwhile?: StrategyFields }> {
  for (let attempt = 1; ; attempt++) {
    const live = await api.readWorkload(options.ref);
    const ours = live.metadata?.annotations?.[ORIGINAL_STRATEGY_ANNOTATION] === recordText;
    if (!ours && !applied) return { restored: false };
    const current = strategyOf(options.ref.kind, live);
    const keep = !sameStrategy(current, record.changed);
    const spec = keep
      ? undo
      : undo
        ? combine(restorePatch(options.ref.kind, record.original), undo)
        : restorePatch(options.ref.kind, record.original);
    if (!spec && !ours) return { restored: false, changedMeanwhile: current };
    try {
      await api.patchWorkload(
        options.ref,
        guarded(spec ?? {}, live.metadata?.resourceVersion, ours ? { [ORIGINAL_STRATEGY_ANNOTATION]: null } : {}),
      );
      return keep ? { restored: false, changedMeanwhile: current } : { restored: true };
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= GUARDED_ATTEMPTS) throw err;
    }
  }
}

export async function runRollout(api: RolloutApi, options: RolloutOptions): Promise<RolloutOutcome> {
  const { deadline } = options;
  const now = () => nowOf(options);
  const started = deadline.clock.now();
  failpoint('rollout-before-check');
  let { check, workload, leftover: found } = await inspect(api, options);
  const events = { recorded: [] as EventReasonName[], warnings: [] as string[] };
  const base = {
    target: describeRef(options.ref),
    check,
    fallbackSteps: [] as FallbackStep[],
    noReadyObservations: 0,
    progress: [] as NodeProgress[],
    events,
  };
  const audit = auditTrail(api, options, workload, events);
  const elapsed = () => deadline.clock.now() - started;
  if (options.checkOnly)
    return {
      ...base,
      action: 'checked',
      surged: false,
      strategyRestored: false,
      patches: [],
      durationMs: elapsed(),
      ...(found.state !== 'none' ? { interruptedRollout: leftoverReport(found, 'reported') } : {}),
    };
  if (found.state === 'in-progress') throw stillRunning(options, found);
  // An interrupted rollout's record: restored first (the workload back to its user's strategy, the
  // record gone), then this run goes on from the workload as it now is. A dry run only says so, and
  // shows its patches as they would apply to the original.
  let leftoverDone: LeftoverReport | undefined;
  let original = strategyOf(options.ref.kind, workload);
  if (found.state === 'unreadable') leftoverDone = leftoverReport(found, 'reported');
  else if (found.state === 'interrupted' || found.state === 'changed-since') {
    if (options.dryRun) {
      leftoverDone = leftoverReport(found, 'reported');
      if (found.state === 'interrupted') original = found.record.original;
      options.onWarning?.(`${found.message}; a rollout restores it first`);
    } else {
      leftoverDone = await recoverLeftover(api, options, workload, found);
      options.onWarning?.(`${leftoverDone.message}; ${LEFTOVER_DONE[leftoverDone.action]}, then this rollout goes on`);
      ({ check, workload } = await inspect(api, options));
      base.check = check;
      original = strategyOf(options.ref.kind, workload);
    }
  }
  const found2 = leftoverDone ? { interruptedRollout: leftoverDone } : {};

  const current = workload.spec?.template?.metadata?.annotations?.[FINGERPRINT_ANNOTATION];
  if (options.fingerprint && current === options.fingerprint && isComplete(options.ref.kind, workload)) {
    return { ...base, ...found2, action: 'unchanged', surged: false, strategyRestored: false, patches: [], durationMs: elapsed() };
  }
  // A refusal after a restore first still says what was restored (the hint's "nothing was changed" is about this run's restart).
  const saying = <E>(err: E): E => {
    if (leftoverDone && leftoverDone.action !== 'reported' && err instanceof ParError)
      err.details['interruptedRollout'] = `${leftoverDone.action}: ${leftoverDone.message}`;
    return err;
  };
  if (options.fallback && options.ref.kind === 'daemonset' && !check.capacityChecked) {
    throw saying(
      new RolloutError(
        'FALLBACK_UNAVAILABLE',
        '--fallback needs to read nodes (allocatable, taints, conditions) and the Pods on them in all namespaces, and this token may not list them',
        'Nothing was changed. Bind the ClusterRole par-identity-rollout-capacity (deploy/rbac-rollout-capacity.yaml) ' +
          'to this service account, or run without --fallback.',
      ),
    );
  }
  let mode: RestartMode;
  try {
    mode = decideSurge(check, options);
  } catch (err) {
    throw saying(err);
  }
  const surged = mode === 'surge';
  const strategyChanged = mode !== 'own';
  const restart = restartPatch(now(), options.fingerprint);
  const strategy = surged
    ? surgePatch(options.ref.kind, original, check.budget)
    : mode === 'delete-first'
      ? deleteFirstPatch(options.ref.kind)
      : undefined;
  // The record of the original goes in the very patch that changes the strategy (docs/rollout.md).
  const record = strategy
    ? newRecord(options.ref.kind, original, strategyOfPatch(options.ref.kind, strategy), now(), deadline.atMs)
    : undefined;
  const recordText = record ? JSON.stringify(record) : '';
  const firstWith = (rv: string | undefined) =>
    strategy ? guarded(combine(strategy, restart), rv, { [ORIGINAL_STRATEGY_ANNOTATION]: recordText }) : restart;
  const first = firstWith(workload.metadata?.resourceVersion);
  const patches = strategyChanged
    ? [first, guarded(restorePatch(options.ref.kind, original), undefined, { [ORIGINAL_STRATEGY_ANNOTATION]: null })]
    : [first];
  if (options.dryRun) {
    // As a rotation's pre-flight does: the apiserver judges the very first patch (RBAC, admission, validation) and stores nothing.
    // Without its resourceVersion: a dry run after an interrupted one judges the patch, not the restore it would do first.
    await api.patchWorkload(options.ref, firstWith(undefined), { dryRun: true });
    return { ...base, ...found2, action: 'dry-run', surged, strategyRestored: false, patches, durationMs: elapsed() };
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
  let strategyChangedMeanwhile: StrategyFields | undefined;
  let completed = false;
  let applied = false;
  const how = restartHow(surged, mode);
  const identity = options.fingerprint ? `identity fingerprint ${options.fingerprint}` : 'identity fingerprint unknown';
  try {
    failpoint('rollout-before-patch');
    await applyFirst(api, options, workload, original, firstWith);
    applied = true;
    failpoint('rollout-after-patch');
    await audit(EventReason.RolloutStarted, 'Normal', `restart with ${how}; ${identity}`);
    const pollMs = options.pollMs > 0 && Number.isFinite(options.pollMs) ? options.pollMs : DEFAULT_POLL_MS;
    let polls = 0;
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
          const step = await fallbackStep(
            { api, ref: options.ref, uid: workload.metadata?.uid ?? '', newRevision, budget: check.budget, now },
            pods,
          );
          if (step) {
            base.fallbackSteps.push(step);
            if (step.deletedPod)
              await audit(
                EventReason.RolloutFallback,
                'Warning',
                `capacity fallback on node ${step.node}: deleted old Pod ${step.deletedPod} before its replacement could schedule (best effort); ${identity}`,
              );
            note = step.deletedPod
              ? `fallback: deleted ${step.deletedPod} on ${step.node} to make room (best effort: another Pod could take the room)`
              : `fallback on ${step.node} skipped: ${step.skipped}`;
          }
        }
      }
      options.onProgress?.(base.progress, note, elapsed());
      if (polls++ === 0) failpoint('rollout-during-wait');
      if (isComplete(options.ref.kind, live)) {
        completed = true;
        await audit(EventReason.RolloutCompleted, 'Normal', `every Pod runs the new template (${how}); ${identity}`);
        break;
      }
      if (deadline.expired()) {
        throw new RolloutError(
          'ROLLOUT_TIMEOUT',
          `${describeRef(options.ref)} did not finish rolling out within ${deadline.describeLength()} ` +
            `(${base.progress.map((r) => `${r.node}: ${r.newReady ? 'new Ready' : 'waiting'}`).join(', ')})`,
          'The restart was undone and the original strategy restored: ' +
            'Pods not yet replaced keep running with the identity they have. ' +
            'Check why the new Pods are not Ready (kubectl describe pod), then run the rollout again.',
        );
      }
      // An abort ends the wait early; the loop's first line turns it into InterruptedError.
      await deadline.sleep(pollMs, options.signal).catch(() => undefined);
    }
  } catch (err) {
    const why = err instanceof ParError ? `${err.code}: ${err.message}` : String((err as Error)?.message ?? err);
    await audit(
      EventReason.RolloutFailed,
      'Warning',
      `rollout did not complete (the restart is being undone and the original strategy restored): ${why}; ${identity}`,
    );
    throw err;
  } finally {
    // On failure the restart is undone in the same patch that restores the strategy: with the
    // user's maxUnavailable back, the controller would otherwise replace old Pods delete-first.
    const undo = completed ? undefined : undoRestartPatch(workload.spec?.template?.metadata?.annotations);
    if (record) {
      failpoint('rollout-before-restore');
      const end = await restoreOwnChange(api, options, record, recordText, applied, undo);
      strategyRestored = end.restored;
      strategyChangedMeanwhile = end.changedMeanwhile;
      if (end.changedMeanwhile) {
        options.onWarning?.(
          `the strategy of ${describeRef(options.ref)} was changed by someone else during this rollout ` +
            `(now ${describeStrategy(end.changedMeanwhile)}; this run had set ${describeStrategy(record.changed)}): ` +
            `left as it is, not restored to ${describeStrategy(record.original)}`,
        );
      }
    } else if (undo) await api.patchWorkload(options.ref, undo);
  }
  return {
    ...base,
    ...found2,
    ...(strategyChangedMeanwhile ? { strategyChangedMeanwhile } : {}),
    action: 'rolled-out',
    surged,
    strategyRestored,
    patches,
    durationMs: elapsed(),
  };
}
