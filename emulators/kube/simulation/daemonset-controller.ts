import { isDeepStrictEqual } from 'node:util';
import { scaledValue } from '../intstr.js';
import { TEMPLATE_GENERATION_ANNOTATION } from '../strategy.js';
import type { KubeObject } from '../types.js';
import { create, get, list, remove, type SimContext, update } from './context.js';
import { computeHash } from './hash.js';
import { controllerRef, isControlledBy, isDeleting, isSelectorEmpty, omitZero } from './objects.js';
import { matchesRequiredAffinity, noScheduleOrExecute, untoleratedTaint } from './placement.js';
import { byCreationScheduledFirst, isAvailable, isReady, isTerminal, isTerminating, phaseOf, targetNodeName } from './pods.js';
import { podFromTemplate } from './replicaset-controller.js';
import type { DaemonSet, NodeObject, Pod, PodTemplate, Toleration } from './types.js';

const COMPONENT = 'daemonset-controller';
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';
const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

interface ControllerRevision extends KubeObject {
  data?: unknown;
  revision?: number;
}

/** util.AddOrUpdateDaemonPodTolerations: what every DaemonSet Pod tolerates. */
function daemonTolerations(template: PodTemplate): Toleration[] {
  const list: Toleration[] = [...(template.spec.tolerations ?? [])];
  const add = (key: string, effect: string): void => {
    const t: Toleration = { key, operator: 'Exists', effect };
    const i = list.findIndex((x) => x.key === key && x.effect === effect);
    if (i >= 0) list[i] = t;
    else list.push(t);
  };
  add('node.kubernetes.io/not-ready', 'NoExecute');
  add('node.kubernetes.io/unreachable', 'NoExecute');
  add('node.kubernetes.io/disk-pressure', 'NoSchedule');
  add('node.kubernetes.io/memory-pressure', 'NoSchedule');
  add('node.kubernetes.io/pid-pressure', 'NoSchedule');
  add('node.kubernetes.io/unschedulable', 'NoSchedule');
  if (template.spec.hostNetwork) add('node.kubernetes.io/network-unavailable', 'NoSchedule');
  return list;
}

/** The patch a ControllerRevision stores: the template, to be restored with $patch: replace. */
function revisionData(ds: DaemonSet): unknown {
  return { spec: { template: { ...structuredClone(ds.spec.template), $patch: 'replace' } } };
}

function surgeCount(ds: DaemonSet, desired: number): number {
  const s = ds.spec.updateStrategy;
  if ((s?.type ?? 'RollingUpdate') !== 'RollingUpdate' || s?.rollingUpdate?.maxSurge === undefined) return 0;
  return scaledValue(s.rollingUpdate.maxSurge, desired, true);
}

function unavailableCount(ds: DaemonSet, desired: number): number {
  const s = ds.spec.updateStrategy;
  if ((s?.type ?? 'RollingUpdate') !== 'RollingUpdate' || !s?.rollingUpdate) return 0;
  return scaledValue(s.rollingUpdate.maxUnavailable ?? 0, desired, true);
}

/**
 * The DaemonSet controller (pkg/controller/daemon): ControllerRevisions (the current one stores
 * the live template), Pods pinned to their node by required node affinity
 * (matchFields metadata.name In [node]) and labelled controller-revision-hash, the manage loop,
 * the rolling update with maxUnavailable or with maxSurge, history cleanup and status.
 */
export class DaemonSetController {
  constructor(private readonly ctx: SimContext) {}

  sync(): void {
    const nodes = list<NodeObject>(this.ctx, 'v1', 'Node');
    for (const ds of list<DaemonSet>(this.ctx, 'apps/v1', 'DaemonSet')) {
      if (isDeleting(ds) || isSelectorEmpty(ds.spec.selector)) continue;
      const history = this.constructHistory(ds);
      if (!history) continue;
      const hash = history.cur.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';
      const changed = this.manage(ds, nodes, hash);
      // The controller only rolls once its creations and deletions are observed (expectations).
      if (!changed && (ds.spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') this.rollingUpdate(ds, nodes, hash);
      this.cleanupHistory(ds, history.old);
      this.updateStatus(ds, nodes, hash);
    }
  }

  /** NodeShouldRunDaemonPod: [shouldRun, shouldContinueRunning]. */
  shouldRun(ds: DaemonSet, node: NodeObject): [boolean, boolean] {
    const tpl = ds.spec.template.spec;
    if (tpl.nodeName && tpl.nodeName !== node.metadata.name) return [false, false];
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: { ...tpl, nodeName: node.metadata.name } } as Pod;
    if (!matchesRequiredAffinity(pod, node)) return [false, false];
    const tolerations = daemonTolerations(ds.spec.template);
    if (untoleratedTaint(node.spec?.taints, tolerations, noScheduleOrExecute)) {
      return [false, !untoleratedTaint(node.spec?.taints, tolerations, (t) => t.effect === 'NoExecute')];
    }
    return [true, true];
  }

  private ownedPods(ds: DaemonSet): Pod[] {
    return list<Pod>(this.ctx, 'v1', 'Pod', ds.metadata.namespace).filter(
      (p) => isControlledBy(p, ds) && !(isTerminating(p) && isTerminal(p)),
    );
  }

  /** getNodesToDaemonPods: Pods by the node they are (or will be) on. */
  private podsByNode(ds: DaemonSet): Map<string, Pod[]> {
    const map = new Map<string, Pod[]>();
    for (const p of this.ownedPods(ds)) {
      const node = targetNodeName(p);
      if (!node) continue;
      map.set(node, [...(map.get(node) ?? []), p]);
    }
    return map;
  }

  private isUpdated(ds: DaemonSet, pod: Pod, hash: string): boolean {
    const generation = ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
    const labels = pod.metadata.labels ?? {};
    return (hash !== '' && labels[CONTROLLER_REVISION_HASH_LABEL] === hash) || (generation !== undefined && labels[TEMPLATE_GENERATION_LABEL] === generation);
  }

  private constructHistory(ds: DaemonSet): { cur: ControllerRevision; old: ControllerRevision[] } | undefined {
    const owned = list<ControllerRevision>(this.ctx, 'apps/v1', 'ControllerRevision', ds.metadata.namespace).filter((cr) => isControlledBy(cr, ds));
    const wanted = revisionData(ds);
    const current: ControllerRevision[] = [];
    const old: ControllerRevision[] = [];
    for (let cr of owned) {
      if (!cr.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL]) {
        cr = update(this.ctx, { ...cr, metadata: { ...cr.metadata, labels: { ...(cr.metadata.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: cr.metadata.name! } } }) ?? cr;
      }
      (isDeepStrictEqual(cr.data, wanted) ? current : old).push(cr);
    }
    const nextRevision = Math.max(0, ...old.map((cr) => Number(cr.revision ?? 0))) + 1;
    let cur: ControllerRevision | undefined;
    if (current.length === 0) {
      cur = this.snapshot(ds, nextRevision, wanted);
      if (!cur) return undefined;
    } else {
      cur = current.reduce((a, b) => (Number(b.revision ?? 0) >= Number(a.revision ?? 0) ? b : a));
      for (const dup of current) {
        if (dup === cur) continue;
        for (const p of this.ownedPods(ds)) {
          if (p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] === cur.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL]) continue;
          update(this.ctx, { ...p, metadata: { ...p.metadata, labels: { ...(p.metadata.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: cur.metadata.labels![CONTROLLER_REVISION_HASH_LABEL]! } } });
        }
        remove(this.ctx, dup);
      }
      if (Number(cur.revision ?? 0) < nextRevision) cur = update(this.ctx, { ...cur, revision: nextRevision }) ?? cur;
    }
    return { cur, old };
  }

  private snapshot(ds: DaemonSet, revision: number, data: unknown): ControllerRevision | undefined {
    const hash = computeHash(ds.spec.template, ds.status?.collisionCount);
    const name = `${ds.metadata.name}-${hash}`;
    const created = create<ControllerRevision>(this.ctx, {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name,
        namespace: ds.metadata.namespace,
        labels: { ...(ds.spec.template.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: hash },
        ...(ds.metadata.annotations ? { annotations: { ...ds.metadata.annotations } } : {}),
        ownerReferences: [controllerRef(ds)],
      },
      data,
      revision,
    });
    if (created) return created;
    const existing = get<ControllerRevision>(this.ctx, 'apps/v1', 'ControllerRevision', ds.metadata.namespace, name);
    if (existing && isDeepStrictEqual(existing.data, data)) return existing;
    // A hash collision with a different template: bump collisionCount; the next sync hashes anew.
    const fresh = get<DaemonSet>(this.ctx, 'apps/v1', 'DaemonSet', ds.metadata.namespace, ds.metadata.name!);
    if (fresh) update(this.ctx, { ...fresh, status: { ...(fresh.status ?? {}), collisionCount: (fresh.status?.collisionCount ?? 0) + 1 } });
    return undefined;
  }

  /** manage + podsShouldBeOnNode: creates missing Pods, removes failed, excess and misplaced ones. Returns whether it wrote anything. */
  private manage(ds: DaemonSet, nodes: NodeObject[], hash: string): boolean {
    const byNode = this.podsByNode(ds);
    const surge = surgeCount(ds, 1) > 0;
    const toCreate: string[] = [];
    const toDelete: Pod[] = [];
    const minReady = ds.spec.minReadySeconds ?? 0;
    for (const node of nodes) {
      const name = node.metadata.name!;
      const [shouldRun, shouldContinue] = this.shouldRun(ds, node);
      const pods = byNode.get(name);
      if (shouldRun && !pods) {
        toCreate.push(name);
        continue;
      }
      if (shouldContinue) {
        const running: Pod[] = [];
        for (const p of pods ?? []) {
          if (isTerminating(p)) continue;
          const phase = phaseOf(p);
          if (phase === 'Failed' || phase === 'Succeeded') toDelete.push(p);
          else running.push(p);
        }
        if (!surge) {
          if (running.length > 1) toDelete.push(...[...running].sort(byCreationScheduledFirst(this.ctx)).slice(1));
          continue;
        }
        if (running.length <= 1) {
          if (running.length === 0 && shouldRun) toCreate.push(name);
          continue;
        }
        // Surging: two Pods only while the oldest new one is not available and the oldest old one is Ready.
        let oldestNew: Pod | undefined;
        let oldestOld: Pod | undefined;
        for (const p of [...running].sort(byCreationScheduledFirst(this.ctx))) {
          if (p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] === hash) {
            if (!oldestNew) {
              oldestNew = p;
              continue;
            }
          } else if (!oldestOld) {
            oldestOld = p;
            continue;
          }
          toDelete.push(p);
        }
        if (oldestNew && oldestOld && (!isReady(oldestOld) || isAvailable(this.ctx, oldestNew, minReady))) toDelete.push(oldestOld);
      } else if (pods) {
        for (const p of pods) if (!isTerminating(p)) toDelete.push(p);
      }
    }
    // Unscheduled Pods aimed at nodes that no longer exist.
    const nodeNames = new Set(nodes.map((n) => n.metadata.name!));
    for (const [node, pods] of byNode) if (!nodeNames.has(node)) toDelete.push(...pods.filter((p) => !p.spec.nodeName));
    return this.syncNodes(ds, toDelete, toCreate, hash);
  }

  private syncNodes(ds: DaemonSet, toDelete: Pod[], toCreate: string[], hash: string): boolean {
    let wrote = false;
    const generation = ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
    for (const nodeName of toCreate) {
      const template = structuredClone(ds.spec.template);
      template.spec.tolerations = daemonTolerations(template);
      template.spec.affinity = {
        ...(template.spec.affinity ?? {}),
        nodeAffinity: {
          ...(template.spec.affinity?.nodeAffinity ?? {}),
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }],
          },
        },
      };
      const labels: Record<string, string> = { [CONTROLLER_REVISION_HASH_LABEL]: hash };
      if (generation !== undefined) labels[TEMPLATE_GENERATION_LABEL] = generation;
      const pod = create<Pod>(this.ctx, podFromTemplate(template, ds, labels));
      if (pod) {
        wrote = true;
        this.ctx.events.record(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, COMPONENT);
      }
    }
    for (const pod of toDelete) {
      if (remove(this.ctx, pod)) {
        wrote = true;
        this.ctx.events.record(ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`, COMPONENT);
      }
    }
    return wrote;
  }

  /** findUpdatedPodsOnNode: at most one new and one old non-deleted Pod, else undefined. */
  private splitNode(ds: DaemonSet, pods: Pod[], hash: string): { newPod?: Pod; oldPod?: Pod } | undefined {
    let newPod: Pod | undefined;
    let oldPod: Pod | undefined;
    for (const p of pods) {
      if (isTerminating(p)) continue;
      if (this.isUpdated(ds, p, hash)) {
        if (newPod) return undefined;
        newPod = p;
      } else {
        if (oldPod) return undefined;
        oldPod = p;
      }
    }
    return { newPod, oldPod };
  }

  /** rollingUpdate (update.go): the maxUnavailable path when maxSurge is 0, else the surge path. */
  private rollingUpdate(ds: DaemonSet, nodes: NodeObject[], hash: string): void {
    const byNode = this.podsByNode(ds);
    const nodeByName = new Map(nodes.map((n) => [n.metadata.name!, n]));
    let desired = 0;
    for (const node of nodes) {
      if (!this.shouldRun(ds, node)[0]) continue;
      desired++;
      if (!byNode.has(node.metadata.name!)) byNode.set(node.metadata.name!, []);
    }
    let maxUnavailable = unavailableCount(ds, desired);
    const maxSurge = surgeCount(ds, desired);
    if (desired > 0 && maxUnavailable === 0 && maxSurge === 0) maxUnavailable = 1;
    const minReady = ds.spec.minReadySeconds ?? 0;
    const available = (p: Pod): boolean => isAvailable(this.ctx, p, minReady);

    if (maxSurge === 0) {
      let numUnavailable = 0;
      const replacements: Pod[] = [];
      const candidates: Pod[] = [];
      for (const [, pods] of byNode) {
        const split = this.splitNode(ds, pods, hash);
        if (!split) {
          numUnavailable++;
          continue;
        }
        const { newPod, oldPod } = split;
        if ((!oldPod && !newPod) || (oldPod && newPod)) numUnavailable++;
        else if (newPod) {
          if (!available(newPod)) numUnavailable++;
        } else if (oldPod) {
          if (!available(oldPod)) {
            replacements.push(oldPod);
            numUnavailable++;
          } else if (numUnavailable < maxUnavailable) candidates.push(oldPod);
        }
      }
      const remaining = Math.min(Math.max(0, maxUnavailable - numUnavailable), candidates.length);
      this.syncNodes(ds, [...replacements, ...candidates.slice(0, remaining)], [], hash);
      return;
    }

    const toDelete: Pod[] = [];
    const shouldNotRun: Pod[] = [];
    const candidateNodes: string[] = [];
    const allowedNodes: string[] = [];
    let numSurge = 0;
    let numAvailable = 0;
    for (const [nodeName, pods] of byNode) {
      const split = this.splitNode(ds, pods, hash);
      if (!split) {
        numSurge++;
        continue;
      }
      const { newPod, oldPod } = split;
      if (oldPod) {
        if (available(oldPod)) numAvailable++;
      } else if (newPod && available(newPod)) numAvailable++;
      if (!oldPod) continue;
      const node = nodeByName.get(nodeName);
      if (!newPod) {
        const runs = node ? this.shouldRun(ds, node)[0] : false;
        if (!available(oldPod)) {
          // An unavailable old Pod is replaced at once, outside the surge limit.
          if (!runs) toDelete.push(oldPod);
          else allowedNodes.push(nodeName);
        } else if (!runs) shouldNotRun.push(oldPod);
        else if (numSurge < maxSurge) candidateNodes.push(nodeName);
        continue;
      }
      // Already surged here: a new Pod not yet available holds its slot; once available, the old Pod goes.
      if (!available(newPod)) {
        numSurge++;
        continue;
      }
      toDelete.push(oldPod);
    }
    const deletable = Math.min(numAvailable - desired, shouldNotRun.length);
    if (deletable > 0) toDelete.push(...shouldNotRun.slice(0, deletable));
    const remaining = Math.min(Math.max(0, maxSurge - numSurge), candidateNodes.length);
    this.syncNodes(ds, toDelete, [...allowedNodes, ...candidateNodes.slice(0, remaining)], hash);
  }

  private cleanupHistory(ds: DaemonSet, old: ControllerRevision[]): void {
    const limit = ds.spec.revisionHistoryLimit ?? 10;
    let toKill = old.length - limit;
    if (toKill <= 0) return;
    const live = new Set(
      list<Pod>(this.ctx, 'v1', 'Pod', ds.metadata.namespace)
        .filter((p) => isControlledBy(p, ds))
        .map((p) => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL])
        .filter(Boolean),
    );
    for (const cr of [...old].sort((a, b) => Number(a.revision ?? 0) - Number(b.revision ?? 0))) {
      if (toKill <= 0) break;
      if (live.has(cr.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL])) continue;
      remove(this.ctx, cr);
      toKill--;
    }
  }

  /** updateDaemonSetStatus: counts per node from its oldest Pod (scheduled first). */
  private updateStatus(ds: DaemonSet, nodes: NodeObject[], hash: string): void {
    const fresh = get<DaemonSet>(this.ctx, 'apps/v1', 'DaemonSet', ds.metadata.namespace, ds.metadata.name!);
    if (!fresh || fresh.metadata.uid !== ds.metadata.uid) return;
    const byNode = this.podsByNode(fresh);
    const minReady = fresh.spec.minReadySeconds ?? 0;
    let desired = 0;
    let current = 0;
    let misscheduled = 0;
    let ready = 0;
    let updated = 0;
    let available = 0;
    for (const node of nodes) {
      const [shouldRun] = this.shouldRun(fresh, node);
      const pods = byNode.get(node.metadata.name!) ?? [];
      if (!shouldRun) {
        if (pods.length > 0) misscheduled++;
        continue;
      }
      desired++;
      if (pods.length === 0) continue;
      current++;
      const pod = [...pods].sort(byCreationScheduledFirst(this.ctx))[0]!;
      if (isReady(pod)) {
        ready++;
        if (isAvailable(this.ctx, pod, minReady)) available++;
      }
      if (this.isUpdated(fresh, pod, hash)) updated++;
    }
    const previous = fresh.status ?? {};
    const counts = omitZero(
      {
        currentNumberScheduled: current,
        numberMisscheduled: misscheduled,
        desiredNumberScheduled: desired,
        numberReady: ready,
        observedGeneration: fresh.metadata.generation ?? 1,
        updatedNumberScheduled: updated,
        numberAvailable: available,
        numberUnavailable: desired - available,
      },
      ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady'],
    );
    const status: Record<string, unknown> = { ...counts };
    if (previous.collisionCount !== undefined) status['collisionCount'] = previous.collisionCount;
    if (previous['conditions'] !== undefined) status['conditions'] = previous['conditions'];
    if (isDeepStrictEqual(status, previous)) return;
    update(this.ctx, { ...fresh, status });
  }
}
