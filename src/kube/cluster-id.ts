import type { CoreV1Api } from '@kubernetes/client-node';
import { isNotFound, kubeFailure } from './kube-errors.js';

// The cluster id the agent sends as orch_cluster_id: ConfigMap datadog-cluster-id/id in the
// cluster agent's OWN namespace (service-account namespace file, else default: agentNamespace() /
// ClusterConnection.agentNamespace), which is not kube_resources_namespace and so can differ from
// the Secret's namespace (docs/protocol.md §6). Missing: the kube-system namespace UID, which the agent then
// stores in that ConfigMap; we do the same (not under dry-run).

export const CLUSTER_ID_CONFIGMAP = 'datadog-cluster-id';

export interface ClusterId {
  id: string;
  source: string;
  /** True when we created the ConfigMap (false under dry-run or when it existed). */
  created: boolean;
}

/** `agentNamespace`: the cluster agent's own namespace, never the Secret's namespace. */
export async function resolveClusterId(core: CoreV1Api, agentNamespace: string, options: { dryRun: boolean }): Promise<ClusterId> {
  const namespace = agentNamespace;
  try {
    const cm = await core.readNamespacedConfigMap({ name: CLUSTER_ID_CONFIGMAP, namespace });
    const id = cm.data?.id;
    if (id) return { id, source: `ConfigMap ${namespace}/${CLUSTER_ID_CONFIGMAP}`, created: false };
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
  if (options.dryRun) return { id: uid, source: 'kube-system namespace UID (ConfigMap not created: dry run)', created: false };
  try {
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: CLUSTER_ID_CONFIGMAP, namespace }, data: { id: uid } } });
  } catch (err) {
    // Another agent may have created it meanwhile: that value wins, as in the agent.
    if ((err as { code?: number }).code === 409) return resolveClusterId(core, namespace, options);
    throw kubeFailure(err, `creating ConfigMap ${namespace}/${CLUSTER_ID_CONFIGMAP}`, 'Nothing was enrolled.');
  }
  return { id: uid, source: `kube-system namespace UID (stored in new ConfigMap ${namespace}/${CLUSTER_ID_CONFIGMAP})`, created: true };
}
