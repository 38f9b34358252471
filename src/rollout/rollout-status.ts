import type { V1DaemonSet, V1Deployment, V1Pod } from '@kubernetes/client-node';
import type { Workload } from './eligibility.js';
import type { WorkloadKind } from './workload-ref.js';

// When is a rollout done (docs/rollout.md §2), and what does each node/replica look like right now.

export function isComplete(kind: WorkloadKind, w: Workload): boolean {
  const observed = (w.status?.observedGeneration ?? 0) >= (w.metadata?.generation ?? 0);
  if (!observed) return false;
  if (kind === 'deployment') {
    const d = w as V1Deployment;
    const want = d.spec?.replicas ?? 1;
    const s = d.status ?? {};
    return (s.updatedReplicas ?? 0) === want && (s.availableReplicas ?? 0) === want && (s.replicas ?? 0) === want;
  }
  const s = (w as V1DaemonSet).status;
  const want = s?.desiredNumberScheduled ?? 0;
  return (s?.updatedNumberScheduled ?? 0) === want && (s?.numberAvailable ?? 0) === want;
}

export function isReady(pod: V1Pod): boolean {
  return !pod.metadata?.deletionTimestamp && pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

export interface NodeProgress {
  node: string;
  readyPods: number;
  /** Pods of the group not being deleted. */
  pods: number;
  newReady: boolean;
  oldPods: number;
}

/** Per node (DaemonSet) or per cluster (Deployment, one row "replicas"): Ready Pods and how many are new. */
export function progressOf(kind: WorkloadKind, pods: V1Pod[], isNew: (pod: V1Pod) => boolean): NodeProgress[] {
  const groups = new Map<string, V1Pod[]>();
  for (const pod of pods) {
    const key =
      kind === 'daemonset'
        ? (pod.spec?.nodeName ??
          pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.[0]?.matchFields?.[0]
            ?.values?.[0] ??
          '(unscheduled)')
        : 'replicas';
    groups.set(key, [...(groups.get(key) ?? []), pod]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([node, group]) => ({
      node,
      readyPods: group.filter(isReady).length,
      pods: group.filter((p) => !p.metadata?.deletionTimestamp).length,
      newReady: group.some((p) => isNew(p) && isReady(p)),
      oldPods: group.filter((p) => !isNew(p) && !p.metadata?.deletionTimestamp).length,
    }));
}

/** The revision label of a Pod: pod-template-hash (Deployment) or controller-revision-hash (DaemonSet). */
export function revisionOf(pod: V1Pod): string | undefined {
  return pod.metadata?.labels?.['pod-template-hash'] ?? pod.metadata?.labels?.['controller-revision-hash'];
}
