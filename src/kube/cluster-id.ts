import type { CoreV1Api, V1ConfigMap } from '@kubernetes/client-node';
import { KubernetesError } from '../errors.js';
import { apiStatus, isNotFound, kubeFailure } from './kube-errors.js';

// The cluster id the agent sends as orch_cluster_id: ConfigMap datadog-cluster-id/id in the
// cluster agent's OWN Pod namespace, which is not kube_resources_namespace and so can differ from
// the Secret's namespace; the caller picks that namespace (docs/protocol.md §6c). Missing, or an id
// that is not 36 bytes: the kube-system namespace UID, which the agent then stores in that ConfigMap
// (creating it, or replacing the bad id); we do the same, when the identity is written.

export const CLUSTER_ID_CONFIGMAP = 'datadog-cluster-id';

/** The agent keeps an id only when it is 36 bytes long (a UUID); anything else it replaces. */
const CLUSTER_ID_BYTES = 36;

export interface ClusterId {
  id: string;
  source: string;
  /** False when the ConfigMap does not hold a valid id yet: storeClusterId() then stores it. */
  stored: boolean;
  /** The ConfigMap exists with an id the agent would replace: the one read, updated in place. */
  replaces?: V1ConfigMap;
}

/** `where`: the cluster agent's own namespace and why it is that one. Reads only. */
export async function resolveClusterId(core: CoreV1Api, where: { namespace: string; source: string }): Promise<ClusterId> {
  const { namespace } = where;
  const label = `ConfigMap ${namespace}/${CLUSTER_ID_CONFIGMAP}`;
  let existing: V1ConfigMap | undefined;
  try {
    existing = await core.readNamespacedConfigMap({ name: CLUSTER_ID_CONFIGMAP, namespace });
    const id = existing.data?.id;
    if (id !== undefined && Buffer.byteLength(id, 'utf8') === CLUSTER_ID_BYTES) return { id, source: label, stored: true };
  } catch (err) {
    if (apiStatus(err).code === 403) {
      // Not "grant the verb" blindly: the namespace may be the wrong one, and the operator must see why it was taken.
      throw new KubernetesError(
        'KUBE_FORBIDDEN',
        `reading ${label}: forbidden (namespace ${namespace} from ${where.source})`,
        `Nothing was changed. If ${namespace} is the cluster agent's namespace, ` +
          `grant get on configmaps/${CLUSTER_ID_CONFIGMAP} there (the agent's own Role has it); ` +
          `if it is not, run inside the agent's Pod or pass -n with the agent's namespace.`,
        { httpStatus: 403 },
      );
    }
    if (!isNotFound(err)) throw kubeFailure(err, `reading ${label}`, 'Nothing was changed.');
  }
  let uid: string | undefined;
  try {
    uid = (await core.readNamespace({ name: 'kube-system' })).metadata?.uid;
  } catch (err) {
    throw kubeFailure(
      err,
      'reading namespace kube-system (cluster id fallback)',
      'Nothing was changed. Create ConfigMap datadog-cluster-id with key id, or allow get on namespaces/kube-system.',
    );
  }
  if (!uid) throw kubeFailure(new Error('namespace kube-system has no uid'), 'resolving the cluster id', 'Nothing was changed.');
  if (existing)
    return {
      id: uid,
      source: `kube-system namespace UID (${label} holds an id that is not ${CLUSTER_ID_BYTES} bytes: replaced with it, as the agent does)`,
      stored: false,
      replaces: existing,
    };
  return { id: uid, source: `kube-system namespace UID (${label} to be created with it)`, stored: false };
}

/**
 * Creates the ConfigMap with the id, or replaces the bad id of the one read (`dryRun`: the apiserver
 * checks RBAC and admission, storing nothing). Another agent may have created it meanwhile: then its
 * value is returned, as the agent keeps it.
 */
export async function storeClusterId(
  core: CoreV1Api,
  namespace: string,
  wanted: ClusterId,
  options: { dryRun: boolean },
): Promise<{ id: string; createdByUs: boolean }> {
  const { id } = wanted;
  const dryRun = options.dryRun ? { dryRun: 'All' } : {};
  const verb = wanted.replaces ? 'updating' : 'creating';
  try {
    if (wanted.replaces) {
      const body = { ...wanted.replaces, data: { ...(wanted.replaces.data ?? {}), id } };
      await core.replaceNamespacedConfigMap({ name: CLUSTER_ID_CONFIGMAP, namespace, body, ...dryRun });
    } else {
      await core.createNamespacedConfigMap({
        namespace,
        body: { metadata: { name: CLUSTER_ID_CONFIGMAP, namespace }, data: { id } },
        ...dryRun,
      });
    }
    return { id, createdByUs: true };
  } catch (err) {
    if ((err as { code?: number }).code !== 409)
      throw kubeFailure(
        err,
        `${options.dryRun ? `server-side dry run of ${verb}` : verb} ConfigMap ${namespace}/${CLUSTER_ID_CONFIGMAP}`,
        'Nothing was changed.',
      );
  }
  const existing = await resolveClusterId(core, { namespace, source: 'the same namespace' });
  return { id: existing.id, createdByUs: false };
}
