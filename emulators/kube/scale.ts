import type { KindInfo } from './kinds.js';
import { badRequest, conflict } from './status-errors.js';
import type { KubeObject } from './types.js';

/** The autoscaling/v1 Scale view of a Deployment or ReplicaSet, as the scale subresource serves it. */
export function toScale(obj: KubeObject): KubeObject {
  const spec = (obj['spec'] ?? {}) as { replicas?: number; selector?: { matchLabels?: Record<string, string> } };
  const status = (obj['status'] ?? {}) as { replicas?: number };
  const labels = spec.selector?.matchLabels ?? {};
  const selector = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
  const m = obj.metadata;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: spec.replicas ?? 0 },
    status: { replicas: status.replicas ?? 0, ...(selector ? { selector } : {}) },
  };
}

/** Folds a written Scale back into its object: only spec.replicas changes, guarded by the Scale's resourceVersion. */
export function applyScale(info: KindInfo, obj: KubeObject, scale: unknown): KubeObject {
  const s = scale as { metadata?: { resourceVersion?: string; name?: string }; spec?: { replicas?: unknown } };
  if (!s || typeof s !== 'object') throw badRequest('the object provided is unrecognized (must be of type Scale)');
  if (s.metadata?.name && s.metadata.name !== obj.metadata.name) {
    throw badRequest(`the name of the object (${s.metadata.name}) does not match the name on the URL (${obj.metadata.name})`);
  }
  const rv = s.metadata?.resourceVersion;
  if (rv && rv !== obj.metadata.resourceVersion) throw conflict(info, obj.metadata.name!);
  const next = structuredClone(obj);
  const spec = (next['spec'] ?? {}) as Record<string, unknown>;
  spec['replicas'] = s.spec?.replicas ?? 0;
  next['spec'] = spec;
  return next;
}
