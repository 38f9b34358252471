import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../types.js';
import { create, list, remove, type SimContext, update } from './context.js';
import { controllerRef, isControlledBy, isDeleting, omitZero, selectorMatches } from './objects.js';
import { isActive, isAvailable, isReady, phaseOf } from './pods.js';
import type { Pod, PodTemplate, ReplicaSet } from './types.js';

const COMPONENT = 'replicaset-controller';

/** controller.GetPodFromTemplate: a Pod of the template, named after its owner, owned by it. */
export function podFromTemplate(template: PodTemplate, owner: KubeObject, extraLabels: Record<string, string> = {}): KubeObject {
  const meta = template.metadata ?? {};
  const spec = structuredClone(template.spec);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${owner.metadata.name}-`,
      namespace: owner.metadata.namespace,
      labels: { ...(meta.labels ?? {}), ...extraLabels },
      ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
      ...(meta['finalizers'] ? { finalizers: [...(meta['finalizers'] as string[])] } : {}),
      ownerReferences: [controllerRef(owner)],
    },
    spec,
  };
}

const PHASE_RANK: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/**
 * ActivePodsWithRanks' order of Pods to delete first: unscheduled, then Pending before Unknown
 * before Running, not Ready before Ready, Ready for less time, more restarts, newer.
 */
function deletionOrder(ctx: SimContext): (a: Pod, b: Pod) => number {
  const restarts = (p: Pod): number =>
    (p.status?.containerStatuses ?? []).reduce((n, c) => Math.max(n, Number(c['restartCount'] ?? 0)), 0);
  return (a, b) => {
    const sa = a.spec.nodeName ? 1 : 0;
    const sb = b.spec.nodeName ? 1 : 0;
    if (sa !== sb) return sa - sb;
    const pa = PHASE_RANK[phaseOf(a)] ?? 1;
    const pb = PHASE_RANK[phaseOf(b)] ?? 1;
    if (pa !== pb) return pa - pb;
    const ra = isReady(a) ? 1 : 0;
    const rb = isReady(b) ? 1 : 0;
    if (ra !== rb) return ra - rb;
    if (ra && rb) {
      const ta = ctx.tracker.readySinceMs(a) ?? 0;
      const tb = ctx.tracker.readySinceMs(b) ?? 0;
      if (ta !== tb) return tb - ta;
    }
    const xa = restarts(a);
    const xb = restarts(b);
    if (xa !== xb) return xb - xa;
    return ctx.tracker.compareCreation(b, a);
  };
}

/** The ReplicaSet controller: keeps spec.replicas active Pods (Terminating ones do not count) and reports status. */
export class ReplicaSetController {
  constructor(private readonly ctx: SimContext) {}

  sync(): void {
    const pods = list<Pod>(this.ctx, 'v1', 'Pod');
    for (const rs of list<ReplicaSet>(this.ctx, 'apps/v1', 'ReplicaSet')) {
      if (isDeleting(rs)) continue;
      const owned = pods.filter((p) => p.metadata.namespace === rs.metadata.namespace && isControlledBy(p, rs));
      this.manage(rs, owned.filter(isActive));
      const after = list<Pod>(this.ctx, 'v1', 'Pod', rs.metadata.namespace).filter((p) => isControlledBy(p, rs));
      this.updateStatus(rs, after.filter(isActive));
    }
  }

  private manage(rs: ReplicaSet, active: Pod[]): void {
    const diff = active.length - (rs.spec.replicas ?? 1);
    if (diff < 0) {
      for (let i = 0; i < -diff; i++) {
        const pod = create<Pod>(this.ctx, podFromTemplate(rs.spec.template, rs));
        if (pod) this.ctx.events.record(rs, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, COMPONENT);
      }
    } else if (diff > 0) {
      const victims = [...active].sort(deletionOrder(this.ctx)).slice(0, diff);
      for (const pod of victims) {
        if (remove(this.ctx, pod)) this.ctx.events.record(rs, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`, COMPONENT);
      }
    }
  }

  private updateStatus(rs: ReplicaSet, active: Pod[]): void {
    const minReady = rs.spec.minReadySeconds ?? 0;
    const status = omitZero(
      {
        replicas: active.length,
        fullyLabeledReplicas: active.filter((p) => selectorMatches({ matchLabels: rs.spec.template.metadata?.labels ?? {} }, p.metadata.labels)).length,
        readyReplicas: active.filter(isReady).length,
        availableReplicas: active.filter((p) => isAvailable(this.ctx, p, minReady)).length,
        observedGeneration: rs.metadata.generation ?? 1,
      },
      ['replicas'],
    );
    const conditions = (rs.status as { conditions?: unknown } | undefined)?.conditions;
    const next = conditions ? { ...status, conditions } : status;
    if (isDeepStrictEqual(next, rs.status ?? {})) return;
    const fresh = this.ctx.emu.getObject('apps/v1', 'ReplicaSet', rs.metadata.namespace, rs.metadata.name!);
    if (!fresh || fresh.metadata.uid !== rs.metadata.uid) return;
    update(this.ctx, { ...fresh, status: next });
  }
}
