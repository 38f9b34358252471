import { isDeepStrictEqual } from 'node:util';
import { scaledValue } from '../intstr.js';
import { create, get, list, remove, type SimContext, update } from './context.js';
import { computeHash } from './hash.js';
import { controllerRef, findCondition, isControlledBy, isDeleting, isSelectorEmpty, nowTimestamp, omitZero } from './objects.js';
import { isTerminal } from './pods.js';
import type { Condition, Deployment, Pod, ReplicaSet } from './types.js';

const COMPONENT = 'deployment-controller';
const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
const DESIRED_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
const MAX_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
const NOT_COPIED = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  DESIRED_ANNOTATION,
  MAX_ANNOTATION,
  'deployment.kubernetes.io/error-selector-overlapping-with',
  'deployment.kubernetes.io/selector-updated-at',
]);

/** Progressing / Available reasons of pkg/controller/deployment/util. */
const DEPLOYMENT_REASONS = {
  replicaSetUpdated: 'ReplicaSetUpdated',
  newReplicaSetCreated: 'NewReplicaSetCreated',
  foundNewReplicaSet: 'FoundNewReplicaSet',
  newReplicaSetAvailable: 'NewReplicaSetAvailable',
  timedOut: 'ProgressDeadlineExceeded',
  paused: 'DeploymentPaused',
  resumed: 'DeploymentResumed',
  minimumReplicasAvailable: 'MinimumReplicasAvailable',
  minimumReplicasUnavailable: 'MinimumReplicasUnavailable',
} as const;

type Status = NonNullable<Deployment['status']>;

const replicasOf = (d: Deployment): number => d.spec.replicas ?? 1;
const rsReplicas = (rs: ReplicaSet): number => rs.spec.replicas ?? 0;
const rsStatus = (rs: ReplicaSet, key: string): number => Number(rs.status?.[key] ?? 0);
const isRolling = (d: Deployment): boolean => (d.spec.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
const hasProgressDeadline = (d: Deployment): boolean =>
  typeof d.spec.progressDeadlineSeconds === 'number' && d.spec.progressDeadlineSeconds !== 2147483647;

/** ResolveFenceposts: surge rounds up, unavailable rounds down, and both 0 means unavailable 1. */
function resolveFenceposts(d: Deployment): { surge: number; unavailable: number } {
  const ru = d.spec.strategy?.rollingUpdate;
  const desired = replicasOf(d);
  const surge = scaledValue(ru?.maxSurge ?? 0, desired, true);
  let unavailable = scaledValue(ru?.maxUnavailable ?? 0, desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

function maxUnavailable(d: Deployment): number {
  if (!isRolling(d) || replicasOf(d) === 0) return 0;
  return Math.min(resolveFenceposts(d).unavailable, replicasOf(d));
}

function maxSurge(d: Deployment): number {
  return isRolling(d) ? resolveFenceposts(d).surge : 0;
}

function withoutHash(template: unknown): unknown {
  const t = structuredClone(template) as { metadata?: { labels?: Record<string, string> } };
  if (t.metadata?.labels) {
    delete t.metadata.labels[POD_TEMPLATE_HASH_LABEL];
    if (Object.keys(t.metadata.labels).length === 0) delete t.metadata.labels;
  }
  return t;
}

function revisionOf(rs: ReplicaSet): number {
  return Number(rs.metadata.annotations?.[REVISION_ANNOTATION] ?? '0') || 0;
}

function sum(rsList: ReplicaSet[], f: (rs: ReplicaSet) => number): number {
  return rsList.reduce((n, rs) => n + f(rs), 0);
}

/** SetDeploymentCondition: no change for the same status and reason; the same status keeps lastTransitionTime; the condition moves to the end. */
function setDeploymentCondition(status: Status, next: Condition): void {
  const cur = findCondition(status.conditions, next.type);
  if (cur && cur.status === next.status && cur.reason === next.reason) return;
  const cond = { ...next };
  if (cur && cur.status === next.status) cond.lastTransitionTime = cur.lastTransitionTime;
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== next.type), cond];
}

function newCondition(type: string, status: Condition['status'], reason: string, message: string): Condition {
  const ts = nowTimestamp();
  return { type, status, lastUpdateTime: ts, lastTransitionTime: ts, reason, message };
}

/**
 * The Deployment controller (pkg/controller/deployment): ReplicaSets named after the
 * pod-template-hash, rolling updates within maxSurge / maxUnavailable, Recreate, proportional
 * scaling, paused Deployments (status only, no new ReplicaSet), revision annotations, history
 * cleanup and the Available / Progressing conditions.
 */
export class DeploymentController {
  /** Precise time of the last Progressing update per Deployment uid (conditions only have seconds). */
  private readonly progressAt = new Map<string, number>();

  constructor(private readonly ctx: SimContext) {}

  sync(): void {
    for (const d of list<Deployment>(this.ctx, 'apps/v1', 'Deployment')) {
      if (isDeleting(d) || isSelectorEmpty(d.spec.selector)) continue;
      this.syncDeployment(d);
    }
  }

  private replicaSetsOf(d: Deployment): ReplicaSet[] {
    return list<ReplicaSet>(this.ctx, 'apps/v1', 'ReplicaSet', d.metadata.namespace)
      .filter((rs) => isControlledBy(rs, d))
      .sort((a, b) => this.ctx.tracker.compareCreation(a, b));
  }

  private syncDeployment(initial: Deployment): void {
    let d = this.checkPausedConditions(initial);
    const rsList = this.replicaSetsOf(d);
    if (d.spec.paused || this.isScalingEvent(d, rsList)) {
      this.syncScale(d, rsList);
      return;
    }
    if (d.spec.strategy?.type === 'Recreate') {
      this.rolloutRecreate(d, rsList);
      return;
    }
    const found = this.getAllReplicaSetsAndSyncRevision(d, rsList, true);
    d = found.d;
    const newRS = found.newRS;
    if (!newRS) return;
    let oldRSs = found.oldRSs;
    let allRSs = [...oldRSs, newRS];
    const up = this.reconcileNewReplicaSet(allRSs, newRS, d);
    if (up.scaled) {
      this.syncRolloutStatus(allRSs.map((rs) => (rs === newRS ? up.rs : rs)), up.rs, d);
      return;
    }
    const down = this.reconcileOldReplicaSets(allRSs, oldRSs.filter((rs) => rsReplicas(rs) > 0), newRS, d);
    if (down.scaled) {
      oldRSs = oldRSs.map((rs) => down.updated.get(rs.metadata.uid!) ?? rs);
      allRSs = [...oldRSs, newRS];
      this.syncRolloutStatus(allRSs, newRS, d);
      return;
    }
    if (this.isComplete(d, d.status ?? {})) this.cleanup(oldRSs, d);
    this.syncRolloutStatus(allRSs, newRS, d);
  }

  private isComplete(d: Deployment, s: Status): boolean {
    const want = replicasOf(d);
    return (s.updatedReplicas ?? 0) === want && (s.replicas ?? 0) === want && (s.availableReplicas ?? 0) === want && (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 1);
  }

  private writeStatus(d: Deployment, status: Status): Deployment {
    const fresh = get<Deployment>(this.ctx, 'apps/v1', 'Deployment', d.metadata.namespace, d.metadata.name!);
    if (!fresh || fresh.metadata.uid !== d.metadata.uid) return d;
    const next = { ...fresh, metadata: { ...fresh.metadata, annotations: d.metadata.annotations ?? fresh.metadata.annotations }, status };
    if (!next.metadata.annotations) delete next.metadata.annotations;
    return update(this.ctx, next) ?? d;
  }

  private checkPausedConditions(d: Deployment): Deployment {
    if (!hasProgressDeadline(d)) return d;
    const cond = findCondition(d.status?.conditions, 'Progressing');
    if (cond?.reason === DEPLOYMENT_REASONS.timedOut) return d;
    const pausedExists = cond?.reason === DEPLOYMENT_REASONS.paused;
    const status = structuredClone(d.status ?? {});
    if (d.spec.paused && !pausedExists) {
      setDeploymentCondition(status, newCondition('Progressing', 'Unknown', DEPLOYMENT_REASONS.paused, 'Deployment is paused'));
    } else if (!d.spec.paused && pausedExists) {
      setDeploymentCondition(status, newCondition('Progressing', 'Unknown', DEPLOYMENT_REASONS.resumed, 'Deployment is resumed'));
      this.progressAt.set(d.metadata.uid!, Date.now());
    } else return d;
    return this.writeStatus(d, status);
  }

  private isScalingEvent(d: Deployment, rsList: ReplicaSet[]): boolean {
    const newRS = rsList.find((rs) => isDeepStrictEqual(withoutHash(rs.spec.template), withoutHash(d.spec.template)));
    if (!newRS) return false;
    for (const rs of rsList) {
      if (rsReplicas(rs) === 0) continue;
      const desired = rs.metadata.annotations?.[DESIRED_ANNOTATION];
      if (desired === undefined) continue;
      if (Number(desired) !== replicasOf(d)) return true;
    }
    return false;
  }

  /** getAllReplicaSetsAndSyncRevision / getNewReplicaSet. */
  private getAllReplicaSetsAndSyncRevision(
    initial: Deployment,
    rsList: ReplicaSet[],
    createIfMissing: boolean,
  ): { d: Deployment; newRS: ReplicaSet | undefined; oldRSs: ReplicaSet[] } {
    let d = initial;
    const existing = rsList.find((rs) => isDeepStrictEqual(withoutHash(rs.spec.template), withoutHash(d.spec.template)));
    const oldRSs = rsList.filter((rs) => rs !== existing);
    const newRevision = String(Math.max(0, ...oldRSs.map(revisionOf)) + 1);
    if (existing) {
      let rs = existing;
      const copy = structuredClone(existing);
      const annotationsChanged = this.setNewReplicaSetAnnotations(d, copy, newRevision, true);
      if (annotationsChanged || (copy.spec.minReadySeconds ?? 0) !== (d.spec.minReadySeconds ?? 0)) {
        copy.spec.minReadySeconds = d.spec.minReadySeconds ?? 0;
        rs = update(this.ctx, copy) ?? rs;
      }
      const status = structuredClone(d.status ?? {});
      let needsUpdate = this.setDeploymentRevision(d, rs.metadata.annotations?.[REVISION_ANNOTATION] ?? newRevision);
      if (hasProgressDeadline(d) && !findCondition(status.conditions, 'Progressing')) {
        setDeploymentCondition(status, newCondition('Progressing', 'True', DEPLOYMENT_REASONS.foundNewReplicaSet, `Found new replica set ${JSON.stringify(rs.metadata.name)}`));
        needsUpdate = true;
      }
      if (needsUpdate) d = this.writeStatus(d, status);
      return { d, newRS: rs, oldRSs };
    }
    if (!createIfMissing) return { d, newRS: undefined, oldRSs };
    const template = structuredClone(d.spec.template);
    const hash = computeHash(template, d.status?.collisionCount);
    template.metadata = { ...(template.metadata ?? {}), labels: { ...(template.metadata?.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash } };
    const selector = structuredClone(d.spec.selector);
    selector.matchLabels = { ...(selector.matchLabels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
    const draft: ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${d.metadata.name}-${hash}`,
        namespace: d.metadata.namespace,
        labels: { ...(template.metadata.labels ?? {}) },
        ownerReferences: [controllerRef(d)],
      },
      spec: { replicas: 0, minReadySeconds: d.spec.minReadySeconds ?? 0, selector, template },
    };
    draft.spec.replicas = this.newRSNewReplicas(d, [...oldRSs, draft], draft);
    this.setNewReplicaSetAnnotations(d, draft, newRevision, false);
    let created = create<ReplicaSet>(this.ctx, draft);
    if (!created) {
      const clash = get<ReplicaSet>(this.ctx, 'apps/v1', 'ReplicaSet', d.metadata.namespace, draft.metadata.name!);
      if (clash && isControlledBy(clash, d) && isDeepStrictEqual(withoutHash(clash.spec.template), withoutHash(d.spec.template))) created = clash;
      else {
        // A hash collision: a different template already owns this name. Bump collisionCount and retry next sync.
        const status = structuredClone(d.status ?? {});
        status.collisionCount = (status.collisionCount ?? 0) + 1;
        this.writeStatus(d, status);
        return { d, newRS: undefined, oldRSs };
      }
    }
    if ((created.spec.replicas ?? 0) > 0) {
      this.ctx.events.record(d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${created.metadata.name} from 0 to ${created.spec.replicas}`, COMPONENT);
    }
    const status = structuredClone(d.status ?? {});
    this.setDeploymentRevision(d, newRevision);
    if (hasProgressDeadline(d)) {
      setDeploymentCondition(status, newCondition('Progressing', 'True', DEPLOYMENT_REASONS.newReplicaSetCreated, `Created new replica set ${JSON.stringify(created.metadata.name)}`));
      this.progressAt.set(d.metadata.uid!, Date.now());
    }
    d = this.writeStatus(d, status);
    return { d, newRS: created, oldRSs };
  }

  private setDeploymentRevision(d: Deployment, revision: string): boolean {
    if (d.metadata.annotations?.[REVISION_ANNOTATION] === revision) return false;
    d.metadata.annotations = { ...(d.metadata.annotations ?? {}), [REVISION_ANNOTATION]: revision };
    return true;
  }

  private setNewReplicaSetAnnotations(d: Deployment, rs: ReplicaSet, newRevision: string, exists: boolean): boolean {
    const annotations = { ...(rs.metadata.annotations ?? {}) };
    let changed = false;
    for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
      if (NOT_COPIED.has(k) || annotations[k] === v) continue;
      annotations[k] = v;
      changed = true;
    }
    const oldRevision = annotations[REVISION_ANNOTATION];
    if ((Number(oldRevision ?? '0') || 0) < Number(newRevision)) {
      annotations[REVISION_ANNOTATION] = newRevision;
      if (oldRevision !== undefined) {
        const history = annotations[REVISION_HISTORY_ANNOTATION];
        annotations[REVISION_HISTORY_ANNOTATION] = history ? `${history},${oldRevision}` : oldRevision;
      }
      changed = true;
    }
    if (!exists) {
      annotations[DESIRED_ANNOTATION] = String(replicasOf(d));
      annotations[MAX_ANNOTATION] = String(replicasOf(d) + maxSurge(d));
      changed = true;
    }
    rs.metadata.annotations = annotations;
    return changed;
  }

  /** NewRSNewReplicas: how far the new ReplicaSet may grow now. */
  private newRSNewReplicas(d: Deployment, allRSs: ReplicaSet[], newRS: ReplicaSet): number {
    if (!isRolling(d)) return replicasOf(d);
    const desired = replicasOf(d);
    const surge = scaledValue(d.spec.strategy?.rollingUpdate?.maxSurge ?? 0, desired, true);
    const current = sum(allRSs, rsReplicas);
    const maxTotal = desired + surge;
    if (current >= maxTotal) return rsReplicas(newRS);
    const up = Math.min(maxTotal - current, desired - rsReplicas(newRS));
    return rsReplicas(newRS) + up;
  }

  private reconcileNewReplicaSet(allRSs: ReplicaSet[], newRS: ReplicaSet, d: Deployment): { scaled: boolean; rs: ReplicaSet } {
    const desired = replicasOf(d);
    if (rsReplicas(newRS) === desired) return { scaled: false, rs: newRS };
    const target = rsReplicas(newRS) > desired ? desired : this.newRSNewReplicas(d, allRSs, newRS);
    return this.scale(newRS, target, d);
  }

  private reconcileOldReplicaSets(
    allRSs: ReplicaSet[],
    activeOld: ReplicaSet[],
    newRS: ReplicaSet,
    d: Deployment,
  ): { scaled: boolean; updated: Map<string, ReplicaSet> } {
    const updated = new Map<string, ReplicaSet>();
    if (sum(activeOld, rsReplicas) === 0) return { scaled: false, updated };
    const minAvailable = replicasOf(d) - maxUnavailable(d);
    const newUnavailable = rsReplicas(newRS) - rsStatus(newRS, 'availableReplicas');
    const maxScaledDown = sum(allRSs, rsReplicas) - minAvailable - newUnavailable;
    if (maxScaledDown <= 0) return { scaled: false, updated };
    let old = [...activeOld].sort((a, b) => this.ctx.tracker.compareCreation(a, b));
    // cleanupUnhealthyReplicas: unavailable old replicas go first, they cost no availability.
    let cleaned = 0;
    old = old.map((rs) => {
      if (cleaned >= maxScaledDown || rsReplicas(rs) === 0) return rs;
      const unhealthy = rsReplicas(rs) - rsStatus(rs, 'availableReplicas');
      if (unhealthy <= 0) return rs;
      const n = Math.min(maxScaledDown - cleaned, unhealthy);
      const r = this.scale(rs, rsReplicas(rs) - n, d);
      cleaned += n;
      updated.set(rs.metadata.uid!, r.rs);
      return r.rs;
    });
    // scaleDownOldReplicaSetsForRollingUpdate: then as far as availability allows.
    const all = [...old, newRS];
    const available = sum(all, (rs) => rsStatus(rs, 'availableReplicas'));
    let scaledDown = 0;
    if (available > minAvailable) {
      const total = available - minAvailable;
      for (const rs of old) {
        if (scaledDown >= total) break;
        if (rsReplicas(rs) === 0) continue;
        const n = Math.min(rsReplicas(rs), total - scaledDown);
        const r = this.scale(rs, rsReplicas(rs) - n, d);
        updated.set(rs.metadata.uid!, r.rs);
        scaledDown += n;
      }
    }
    return { scaled: cleaned + scaledDown > 0, updated };
  }

  /** scaleReplicaSetAndRecordEvent: spec.replicas plus the desired/max replicas annotations. */
  private scale(rs: ReplicaSet, newScale: number, d: Deployment, operation?: string): { scaled: boolean; rs: ReplicaSet } {
    const before = rsReplicas(rs);
    const max = String(replicasOf(d) + maxSurge(d));
    const desired = String(replicasOf(d));
    const annotationsNeedUpdate = rs.metadata.annotations?.[DESIRED_ANNOTATION] !== desired || rs.metadata.annotations?.[MAX_ANNOTATION] !== max;
    if (before === newScale && !annotationsNeedUpdate) return { scaled: false, rs };
    const copy = structuredClone(rs);
    copy.spec.replicas = newScale;
    copy.metadata.annotations = { ...(copy.metadata.annotations ?? {}), [DESIRED_ANNOTATION]: desired, [MAX_ANNOTATION]: max };
    const written = update(this.ctx, copy);
    if (!written) return { scaled: false, rs };
    if (before !== newScale) {
      const op = operation ?? (before < newScale ? 'up' : 'down');
      this.ctx.events.record(d, 'Normal', 'ScalingReplicaSet', `Scaled ${op} replica set ${rs.metadata.name} from ${before} to ${newScale}`, COMPONENT);
      this.progressAt.set(d.metadata.uid!, Date.now());
    }
    return { scaled: before !== newScale, rs: written };
  }

  /** sync(): scaling events and paused Deployments: no new ReplicaSet, proportional scaling, status. */
  private syncScale(initial: Deployment, rsList: ReplicaSet[]): void {
    const found = this.getAllReplicaSetsAndSyncRevision(initial, rsList, false);
    const d = found.d;
    const newRS = found.newRS;
    let oldRSs = found.oldRSs;
    const scaled = this.proportionalScale(d, newRS, oldRSs);
    oldRSs = oldRSs.map((rs) => scaled.get(rs.metadata.uid!) ?? rs);
    const latestNew = newRS ? (scaled.get(newRS.metadata.uid!) ?? newRS) : undefined;
    if (d.spec.paused) this.cleanup(oldRSs, d);
    const allRSs = latestNew ? [...oldRSs, latestNew] : oldRSs;
    const status = this.calculateStatus(allRSs, latestNew, d);
    if (!isDeepStrictEqual(status, d.status ?? {})) this.writeStatus(d, status);
  }

  /** scale(): one active ReplicaSet takes everything; a saturated new one drains the old; else proportions of max-replicas. */
  private proportionalScale(d: Deployment, newRS: ReplicaSet | undefined, oldRSs: ReplicaSet[]): Map<string, ReplicaSet> {
    const out = new Map<string, ReplicaSet>();
    const desired = replicasOf(d);
    const all = newRS ? [...oldRSs, newRS] : [...oldRSs];
    const active = all.filter((rs) => rsReplicas(rs) > 0);
    let target: ReplicaSet | undefined;
    if (active.length === 1) target = active[0];
    else if (active.length === 0) target = newRS ?? [...oldRSs].sort((a, b) => this.ctx.tracker.compareCreation(b, a))[0];
    if (target || active.length <= 1) {
      if (target && rsReplicas(target) !== desired) out.set(target.metadata.uid!, this.scale(target, desired, d).rs);
      return out;
    }
    const saturated =
      newRS &&
      rsReplicas(newRS) === desired &&
      newRS.metadata.annotations?.[DESIRED_ANNOTATION] === String(desired) &&
      rsStatus(newRS, 'availableReplicas') === desired;
    if (saturated) {
      for (const rs of oldRSs) if (rsReplicas(rs) > 0) out.set(rs.metadata.uid!, this.scale(rs, 0, d).rs);
      return out;
    }
    if (!isRolling(d)) return out;
    const allowed = desired > 0 ? desired + maxSurge(d) : 0;
    const toAdd = allowed - sum(active, rsReplicas);
    if (toAdd === 0) return out;
    const bySize = [...active].sort(
      (a, b) => rsReplicas(b) - rsReplicas(a) || (toAdd > 0 ? this.ctx.tracker.compareCreation(b, a) : this.ctx.tracker.compareCreation(a, b)),
    );
    let added = 0;
    const sizes = new Map<string, number>();
    for (const rs of bySize) {
      let proportion = 0;
      if (rsReplicas(rs) !== 0 && toAdd !== added) {
        const fraction = this.replicaSetFraction(rs, d);
        const allowedLeft = toAdd - added;
        proportion = toAdd > 0 ? Math.min(fraction, allowedLeft) : Math.max(fraction, allowedLeft);
      }
      sizes.set(rs.metadata.uid!, rsReplicas(rs) + proportion);
      added += proportion;
    }
    bySize.forEach((rs, i) => {
      let size = sizes.get(rs.metadata.uid!)!;
      if (i === 0) size = Math.max(0, size + (toAdd - added));
      out.set(rs.metadata.uid!, this.scale(rs, size, d, toAdd > 0 ? 'up' : 'down').rs);
    });
    return out;
  }

  private replicaSetFraction(rs: ReplicaSet, d: Deployment): number {
    if (replicasOf(d) === 0) return -rsReplicas(rs);
    const maxReplicas = replicasOf(d) + maxSurge(d);
    let before = Number(rs.metadata.annotations?.[MAX_ANNOTATION] ?? '0') || 0;
    if (before === 0) before = d.status?.replicas ?? 0;
    if (before === 0) return 0;
    return Math.round((rsReplicas(rs) * maxReplicas) / before) - rsReplicas(rs);
  }

  private rolloutRecreate(initial: Deployment, rsList: ReplicaSet[]): void {
    let found = this.getAllReplicaSetsAndSyncRevision(initial, rsList, false);
    let d = found.d;
    let scaledDown = false;
    const oldRSs = found.oldRSs.map((rs) => {
      if (rsReplicas(rs) === 0) return rs;
      const r = this.scale(rs, 0, d);
      scaledDown ||= r.scaled;
      return r.rs;
    });
    const allOf = (n: ReplicaSet | undefined): ReplicaSet[] => (n ? [...oldRSs, n] : oldRSs);
    if (scaledDown) {
      this.syncRolloutStatus(allOf(found.newRS), found.newRS, d);
      return;
    }
    if (this.oldPodsRunning(found.newRS, oldRSs, d)) {
      this.syncRolloutStatus(allOf(found.newRS), found.newRS, d);
      return;
    }
    if (!found.newRS) {
      found = this.getAllReplicaSetsAndSyncRevision(d, this.replicaSetsOf(d), true);
      d = found.d;
    }
    let newRS = found.newRS;
    if (newRS) newRS = this.scale(newRS, replicasOf(d), d).rs;
    if (this.isComplete(d, d.status ?? {})) this.cleanup(oldRSs, d);
    this.syncRolloutStatus(allOf(newRS), newRS, d);
  }

  private oldPodsRunning(newRS: ReplicaSet | undefined, oldRSs: ReplicaSet[], d: Deployment): boolean {
    if (sum(oldRSs, (rs) => rsStatus(rs, 'replicas')) > 0) return true;
    const owners = new Set(oldRSs.map((rs) => rs.metadata.uid));
    return list<Pod>(this.ctx, 'v1', 'Pod', d.metadata.namespace).some((p) => {
      const owner = (p.metadata.ownerReferences as Array<{ uid: string; controller?: boolean }> | undefined)?.find((r) => r.controller);
      return owner !== undefined && owners.has(owner.uid) && owner.uid !== newRS?.metadata.uid && !isTerminal(p);
    });
  }

  /** cleanupDeployment: old, empty, fully observed ReplicaSets beyond revisionHistoryLimit go, oldest revision first. */
  private cleanup(oldRSs: ReplicaSet[], d: Deployment): void {
    const limit = d.spec.revisionHistoryLimit;
    if (typeof limit !== 'number') return;
    const cleanable = oldRSs.filter((rs) => !isDeleting(rs));
    const diff = cleanable.length - limit;
    if (diff <= 0) return;
    const sorted = [...cleanable].sort((a, b) => revisionOf(a) - revisionOf(b) || this.ctx.tracker.compareCreation(a, b));
    for (const rs of sorted.slice(0, diff)) {
      if (rsStatus(rs, 'replicas') !== 0 || rsReplicas(rs) !== 0 || (rs.metadata.generation ?? 1) > rsStatus(rs, 'observedGeneration')) continue;
      remove(this.ctx, rs);
    }
  }

  private calculateStatus(allRSs: ReplicaSet[], newRS: ReplicaSet | undefined, d: Deployment): Status {
    const available = sum(allRSs, (rs) => rsStatus(rs, 'availableReplicas'));
    const total = sum(allRSs, rsReplicas);
    const status: Status = omitZero({
      observedGeneration: d.metadata.generation ?? 1,
      replicas: sum(allRSs, (rs) => rsStatus(rs, 'replicas')),
      updatedReplicas: newRS ? rsStatus(newRS, 'replicas') : 0,
      readyReplicas: sum(allRSs, (rs) => rsStatus(rs, 'readyReplicas')),
      availableReplicas: available,
      unavailableReplicas: Math.max(0, total - available),
      collisionCount: d.status?.collisionCount,
    });
    status.conditions = structuredClone(d.status?.conditions ?? []);
    if (available >= replicasOf(d) - maxUnavailable(d)) {
      setDeploymentCondition(status, newCondition('Available', 'True', DEPLOYMENT_REASONS.minimumReplicasAvailable, 'Deployment has minimum availability.'));
    } else {
      setDeploymentCondition(status, newCondition('Available', 'False', DEPLOYMENT_REASONS.minimumReplicasUnavailable, 'Deployment does not have minimum availability.'));
    }
    return status;
  }

  /** syncRolloutStatus: status plus the Progressing condition (complete, progressing or timed out). */
  private syncRolloutStatus(allRSs: ReplicaSet[], newRS: ReplicaSet | undefined, d: Deployment): void {
    const status = this.calculateStatus(allRSs, newRS, d);
    if (!hasProgressDeadline(d)) status.conditions = (status.conditions ?? []).filter((c) => c.type !== 'Progressing');
    const current = findCondition(d.status?.conditions, 'Progressing');
    const complete = (status.replicas ?? 0) === (status.updatedReplicas ?? 0) && current?.reason === DEPLOYMENT_REASONS.newReplicaSetAvailable;
    const subject = newRS ? `ReplicaSet ${JSON.stringify(newRS.metadata.name)}` : `Deployment ${JSON.stringify(d.metadata.name)}`;
    if (hasProgressDeadline(d) && !complete) {
      if (this.isComplete(d, status)) {
        setDeploymentCondition(status, newCondition('Progressing', 'True', DEPLOYMENT_REASONS.newReplicaSetAvailable, `${subject} has successfully progressed.`));
      } else if (this.isProgressing(d, status)) {
        const cond = newCondition('Progressing', 'True', DEPLOYMENT_REASONS.replicaSetUpdated, `${subject} is progressing.`);
        if (current?.status === 'True') cond.lastTransitionTime = current.lastTransitionTime;
        status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== 'Progressing'), cond];
        this.progressAt.set(d.metadata.uid!, Date.now());
      } else if (this.timedOut(d, status)) {
        setDeploymentCondition(status, newCondition('Progressing', 'False', DEPLOYMENT_REASONS.timedOut, `${subject} has timed out progressing.`));
      }
    }
    if (isDeepStrictEqual(status, d.status ?? {})) return;
    this.writeStatus(d, status);
  }

  private isProgressing(d: Deployment, s: Status): boolean {
    const old = d.status ?? {};
    const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
    const newOld = (s.replicas ?? 0) - (s.updatedReplicas ?? 0);
    return (
      (s.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
      newOld < oldOld ||
      (s.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
      (s.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
    );
  }

  /** DeploymentTimedOut: no progress for progressDeadlineSeconds since the condition's last update. */
  private timedOut(d: Deployment, s: Status): boolean {
    const cond = findCondition(s.conditions, 'Progressing');
    if (!cond) return false;
    if (cond.reason === DEPLOYMENT_REASONS.newReplicaSetAvailable) return false;
    if (cond.reason === DEPLOYMENT_REASONS.timedOut) return true;
    const from = this.progressAt.get(d.metadata.uid!) ?? Date.parse(cond.lastUpdateTime ?? '');
    if (Number.isNaN(from)) return false;
    const deadline = from + (d.spec.progressDeadlineSeconds ?? 600) * this.ctx.secondMs;
    if (Date.now() > deadline) return true;
    this.ctx.wakeAt(deadline + 1);
    return false;
  }
}
