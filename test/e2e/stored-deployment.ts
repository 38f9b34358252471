import { createHash } from 'node:crypto';
import type { KubeEmulator, KubeObject } from '../../emulators/kube/index.js';

// The Kubernetes emulator stores workloads but runs no controllers (docs/emulators.md): tests of
// workload behaviour (surge, fallback, readiness) run on the real control plane (test/cluster). The
// rotation tests here only need a Deployment that "rolls out" once its template changes, so this
// test fixture stands in for the Deployment controller and the kubelet in the simplest way: one
// ReplicaSet per template, its Pods stored Ready at once, the old ones removed, the status complete.

// biome-ignore lint/suspicious/noExplicitAny: nested Kubernetes fields written by a test fixture
type Obj = KubeObject & { spec?: any; status?: any };

const hashOf = (template: unknown) => createHash('sha256').update(JSON.stringify(template)).digest('hex').slice(0, 10);

/**
 * Brings the Deployment's stored Pods and status to its current template: what a finished rollout
 * leaves; with `newPodsReady` false, what a stalled one leaves (new Pods never Ready, the old ones kept).
 */
function settle(kube: KubeEmulator, namespace: string, name: string, newPodsReady: boolean): void {
  const d = kube.getObject('apps/v1', 'Deployment', namespace, name) as Obj | undefined;
  if (!d || d.status?.observedGeneration === d.metadata.generation) return;
  const hash = hashOf(d.spec.template);
  const replicas = d.spec.replicas ?? 1;
  const labels = { ...d.spec.template.metadata?.labels, 'pod-template-hash': hash };
  const rsName = `${name}-${hash}`;
  if (!kube.getObject('apps/v1', 'ReplicaSet', namespace, rsName)) {
    const owner = { apiVersion: 'apps/v1', kind: 'Deployment', name, uid: d.metadata.uid, controller: true };
    kube.createObject({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: rsName, namespace, labels, ownerReferences: [owner] },
      spec: {
        replicas,
        selector: { matchLabels: labels },
        template: { ...d.spec.template, metadata: { ...d.spec.template.metadata, labels } },
      },
    } as KubeObject);
  }
  const rs = kube.getObject('apps/v1', 'ReplicaSet', namespace, rsName)!;
  const selector = d.spec.selector.matchLabels as Record<string, string>;
  const ours = kube
    .listObjects('v1', 'Pod', namespace)
    .filter((p) => Object.entries(selector).every(([k, v]) => p.metadata.labels?.[k] === v));
  const old = ours.filter((p) => p.metadata.labels?.['pod-template-hash'] !== hash);
  if (newPodsReady) for (const pod of old) kube.deleteObject('v1', 'Pod', namespace, pod.metadata.name!);
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  for (let i = ours.filter((p) => p.metadata.labels?.['pod-template-hash'] === hash).length; i < replicas; i++) {
    kube.createObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${rsName}-${Math.random().toString(36).slice(2, 7)}`,
        namespace,
        labels,
        annotations: d.spec.template.metadata?.annotations,
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rsName, uid: rs.metadata.uid, controller: true }],
      },
      spec: { ...d.spec.template.spec, nodeName: 'n1' },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: newPodsReady ? 'True' : 'False', lastTransitionTime: now }] },
    } as KubeObject);
  }
  const ready = newPodsReady ? replicas : old.length;
  const total = newPodsReady ? replicas : replicas + old.length;
  const status = {
    observedGeneration: d.metadata.generation,
    replicas: total,
    updatedReplicas: replicas,
    readyReplicas: ready,
    availableReplicas: ready,
  };
  kube.updateObject({ ...d, status } as KubeObject);
}

/**
 * Keeps the Deployment `namespace/name` rolled out: after each change of it (a restart patch, a
 * strategy change), its Pods are replaced by Ready Pods of the new template a moment later. Set
 * `newPodsReady` false on the returned object for a replacement that never becomes Ready.
 */
export function storedDeploymentRollouts(kube: KubeEmulator, namespace: string, name: string): { newPodsReady: boolean } {
  const behaviour = { newPodsReady: true };
  let scheduled = false;
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    // A moment, as a controller and kubelet take (the simulation took about as long): a signal sent as
    // the restart patch goes out must find the rollout still running.
    setTimeout(() => {
      scheduled = false;
      try {
        settle(kube, namespace, name, behaviour.newPodsReady);
      } catch {
        // The emulator closed, or a test changed the object meanwhile: the next change settles it.
      }
    }, 200);
  };
  kube.onChange((event) => {
    const obj = event.object as KubeObject;
    if (obj.kind === 'Deployment' && obj.metadata.namespace === namespace && obj.metadata.name === name) schedule();
  });
  schedule();
  return behaviour;
}
