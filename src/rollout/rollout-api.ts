import type { AppsV1Api, CoreV1Api, V1DaemonSet, V1Deployment, V1Node, V1Pod } from '@kubernetes/client-node';
import type { ClusterConnection, RecordEventInput, RecordEventResult } from '../kube/index.js';
import { apiStatus, isNotFound, kubeFailure, recordEvent } from '../kube/index.js';
import type { Workload } from './eligibility.js';
import type { WorkloadRef } from './workload-ref.js';

// The few Kubernetes calls a rollout makes, behind one object so the orchestrator reads as steps.
// Namespaced (a Role suffices): get/patch the workload, list Pods of the workload's namespace,
// list PodDisruptionBudgets there (optional), create Events (optional); for the DaemonSet capacity
// fallback also patch and delete Pods. Cluster-scoped and optional (ClusterRole
// par-identity-rollout-capacity in deploy/): list nodes and list Pods in all namespaces, to compute
// per-node room (allocatable − requests of every Pod on the node) and check taints/conditions.

export interface RolloutApi {
  readWorkload(ref: WorkloadRef): Promise<Workload>;
  podsOf(ref: WorkloadRef, workload: Workload): Promise<V1Pod[]>;
  nodes(): Promise<V1Node[]>;
  podsOnNode(node: string): Promise<V1Pod[]>;
  /** undefined when the token may not list PodDisruptionBudgets in the workload's namespace. */
  pdbNames(ref: WorkloadRef): Promise<string[] | undefined>;
  /** `dryRun`: the apiserver runs the patch through RBAC, admission and validation, and stores nothing. */
  patchWorkload(ref: WorkloadRef, patch: object, options?: { dryRun?: boolean }): Promise<Workload>;
  annotatePod(namespace: string, name: string, annotations: Record<string, string>): Promise<void>;
  deletePod(namespace: string, name: string, uid: string): Promise<void>;
  /** Audit Event on the workload; never throws (a missing RBAC rule comes back as a warning). */
  recordEvent?(input: RecordEventInput, instance?: string): Promise<RecordEventResult>;
}

function selectorOf(workload: Workload): string {
  return Object.entries(workload.spec?.selector?.matchLabels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** `failureHint`: the next step a failed call's error names (a rotation's pre-flight: nothing was enrolled). */
export async function rolloutApi(
  conn: ClusterConnection,
  failureHint = 'The rollout was not started or is left as it is; run `par-identity rollout --check` to see the state.',
): Promise<RolloutApi> {
  const k8s = await import('../kube/client-node-api.js');
  const apps: AppsV1Api = conn.apps();
  const core: CoreV1Api = conn.core();
  const strategic = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);
  const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  const wrap = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      throw kubeFailure(err, what, failureHint);
    }
  };
  return {
    readWorkload: (ref) =>
      wrap(`reading ${ref.kind}/${ref.name}`, () =>
        ref.kind === 'deployment'
          ? apps.readNamespacedDeployment({ name: ref.name, namespace: ref.namespace })
          : apps.readNamespacedDaemonSet({ name: ref.name, namespace: ref.namespace }),
      ),
    podsOf: async (ref, workload) =>
      (
        await wrap(`listing the Pods of ${ref.kind}/${ref.name}`, () =>
          core.listNamespacedPod({ namespace: ref.namespace, labelSelector: selectorOf(workload) }),
        )
      ).items,
    nodes: async () => (await wrap('listing nodes', () => core.listNode())).items,
    podsOnNode: async (node) =>
      (await wrap(`listing Pods on node ${node}`, () => core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` }))).items,
    pdbNames: async (ref) => {
      try {
        const policy = conn.client(k8s.PolicyV1Api);
        return (await policy.listNamespacedPodDisruptionBudget({ namespace: ref.namespace })).items.map((p) => p.metadata?.name ?? '?');
      } catch (err) {
        if (isNotFound(err)) return [];
        // Informational only: a Role without it loses a note, not the rollout.
        if (apiStatus(err).code === 403) return undefined;
        throw kubeFailure(err, 'listing PodDisruptionBudgets', 'Nothing was changed.');
      }
    },
    patchWorkload: (ref, patch, options) => {
      const request = {
        name: ref.name,
        namespace: ref.namespace,
        body: patch,
        fieldManager: 'par-identity',
        ...(options?.dryRun ? { dryRun: 'All' } : {}),
      };
      return wrap(`${options?.dryRun ? 'server-side dry run of the restart patch of' : 'patching'} ${ref.kind}/${ref.name}`, () =>
        ref.kind === 'deployment' ? apps.patchNamespacedDeployment(request, strategic) : apps.patchNamespacedDaemonSet(request, strategic),
      ) as Promise<V1Deployment | V1DaemonSet>;
    },
    annotatePod: async (namespace, name, annotations) => {
      await wrap(`annotating Pod ${name}`, () => core.patchNamespacedPod({ name, namespace, body: { metadata: { annotations } } }, merge));
    },
    deletePod: async (namespace, name, uid) => {
      await wrap(`deleting Pod ${name}`, () => core.deleteNamespacedPod({ name, namespace, body: { preconditions: { uid } } }));
    },
    recordEvent: (input, instance) => recordEvent(conn, input, instance ? { instance } : {}),
  };
}
