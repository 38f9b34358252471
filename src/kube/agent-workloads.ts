import type { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { sanitizeServerString } from '../sanitize.js';
import { apiStatus, kubeFailure } from './kube-errors.js';

// Where the cluster agent runs, seen from off-cluster (docs/protocol.md §6c): the Deployments
// the datadog Helm chart and the Datadog Operator label as the cluster agent, and where identity
// Secrets of a name exist. Evidence only: a list RBAC forbids is said, never an error.

/**
 * One selector per installer: the Helm chart puts app.kubernetes.io/component=cluster-agent on its
 * cluster-agent Deployment; the Operator puts agent.datadoghq.com/component=cluster-agent (and the
 * app.kubernetes.io one too).
 */
const CLUSTER_AGENT_SELECTORS = ['app.kubernetes.io/component=cluster-agent', 'agent.datadoghq.com/component=cluster-agent'] as const;

export interface Sightings {
  /** "namespace/name", sorted, each once. */
  found: string[];
  /** Why a list could not be made (RBAC), printable; empty when every list answered. */
  unlisted: string[];
}

function why(err: unknown, what: string): string {
  const { code, status } = apiStatus(err);
  if (code === 403) return `listing ${what} is forbidden to this user`;
  return `listing ${what} failed (${sanitizeServerString(status?.message ?? (err as Error).message ?? String(err)).slice(0, 200)})`;
}

/**
 * Cluster-agent Deployments by their Helm/Operator labels, in `namespace` or (undefined) in every
 * namespace. `strict`: only a refusal (403) is evidence; any other failure (unreachable, credentials,
 * deadline) is thrown, as the run that needs the agent cannot go on without it.
 */
export async function findClusterAgentWorkloads(apps: AppsV1Api, namespace?: string, strict = false): Promise<Sightings> {
  const found = new Set<string>();
  const unlisted: string[] = [];
  const where = namespace ? `in namespace ${namespace}` : 'in all namespaces';
  for (const labelSelector of CLUSTER_AGENT_SELECTORS) {
    try {
      const list = namespace
        ? await apps.listNamespacedDeployment({ namespace, labelSelector })
        : await apps.listDeploymentForAllNamespaces({ labelSelector });
      for (const d of list.items) found.add(`${d.metadata?.namespace}/${d.metadata?.name}`);
    } catch (err) {
      if (strict && apiStatus(err).code !== 403)
        throw kubeFailure(err, `listing cluster-agent Deployments ${where}`, 'Nothing was enrolled and nothing was changed.');
      const reason = why(err, `Deployments ${where}`);
      if (!unlisted.includes(reason)) unlisted.push(reason);
    }
  }
  return { found: [...found].sort(), unlisted };
}

/** Secrets named `name` in every namespace. */
export async function findSecretsNamed(core: CoreV1Api, name: string): Promise<Sightings> {
  try {
    const list = await core.listSecretForAllNamespaces({ fieldSelector: `metadata.name=${name}` });
    return { found: list.items.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`).sort(), unlisted: [] };
  } catch (err) {
    return { found: [], unlisted: [why(err, 'Secrets in all namespaces')] };
  }
}

/** The namespaces of the sightings, each once. */
export function namespacesOf(s: Sightings): string[] {
  return [...new Set(s.found.map((f) => f.split('/')[0] ?? ''))].filter(Boolean);
}

/** "found X, Y" / "none found" plus what could not be listed, for a message. */
export function describeSightings(what: string, s: Sightings): string {
  const seen = s.found.length ? `${what}: ${s.found.join(', ')}` : `${what}: none found`;
  return s.unlisted.length ? `${seen} (${s.unlisted.join('; ')})` : seen;
}
