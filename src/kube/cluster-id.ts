import type { CoreV1Api } from '@kubernetes/client-node';
import { isNotFound, kubeFailure } from './kube-errors.js';

// The cluster id the agent sends as orch_cluster_id: ConfigMap datadog-cluster-id/id in the
// cluster agent's OWN namespace (service-account namespace file, else default: agentNamespace() /
// ClusterConnection.agentNamespace), which is not kube_resources_namespace and so can differ from
// the Secret's namespace (docs/protocol.md §6). Missing: the kube-system namespace UID, which the agent then
// stores in that ConfigMap; we do the same, when the identity is written (reading changes nothing).

export const CLUSTER_ID_CONFIGMAP = 'datadog-cluster-id';

export interface ClusterId {
  id: string;
  source: string;
  /** False when the ConfigMap does not hold it yet: storeClusterId() then creates it. */
  stored: boolean;
}

/** `agentNamespace`: the cluster agent's own namespace, never the Secret's namespace. Reads only. */
export async function resolveClusterId(core: CoreV1Api, agentNamespace: string): Promise<ClusterId> {
  const namespace = agentNamespace;
  try {
    const cm = await core.readNamespacedConfigMap({ name: CLUSTER_ID_CONFIGMAP, namespace });
    const id = cm.data?.id;
    if (id) return { id, source: `ConfigMap ${namespace}/${CLUSTER_ID_CONFIGMAP}`, stored: true };
  } catch (err) {
    if (!isNotFound(err)) throw kubeFailure(err, `reading ConfigMap ${namespace}/${CLUSTER_ID_CONFIGMAP}`, 'Nothing was changed.');
  }
  let uid: string | undefined;
  try {
    uid = (await core.readNamespace({ name: 'kube-system' })).metadata?.uid;
  } catch (err) {
    throw kubeFailure(err, 'reading namespace kube-system (cluster id fallback)', 'Nothing was changed. Create ConfigMap datadog-cluster-id with key id, or allow get on namespaces/kube-system.');
  }
  if (!uid) throw kubeFailure(new Error('namespace kube-system has no uid'), 'resolving the cluster id', 'Nothing was changed.');
  return { id: uid, source: `kube-system namespace UID (ConfigMap ${namespace}/${CLUSTER_ID_CONFIGMAP} to be created with it)`, stored: false };
}

/**
 * Creates the ConfigMap with `id` (`dryRun`: the apiserver checks RBAC and admission, storing nothing).
 * Another agent may have created it meanwhile: then its value is returned, as the agent keeps it.
 */
export async function storeClusterId(core: CoreV1Api, agentNamespace: string, id: string, options: { dryRun: boolean }): Promise<{ id: string; createdByUs: boolean }> {
  const namespace = agentNamespace;
  try {
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: CLUSTER_ID_CONFIGMAP, namespace }, data: { id } }, ...(options.dryRun ? { dryRun: 'All' } : {}) });
    return { id, createdByUs: true };
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw kubeFailure(err, `${options.dryRun ? 'server-side dry run of creating' : 'creating'} ConfigMap ${namespace}/${CLUSTER_ID_CONFIGMAP}`, 'Nothing was changed.');
  }
  const existing = await resolveClusterId(core, namespace);
  return { id: existing.id, createdByUs: false };
}
