import type { AppsV1Api, CoreV1Api, V1Deployment } from '@kubernetes/client-node';
import { ConfigError } from '../errors.js';
import { findClusterAgentWorkloads, type Sightings } from '../kube/agent-workloads.js';
import { apiStatus, kubeFailure } from '../kube/kube-errors.js';
import { sanitizeServerString } from '../sanitize.js';
import type { ObjectRead, ObjectReader } from './pod-template.js';

// Which cluster agent a run acts for (docs/configuration.md, "The running agent's settings"): the one
// --agent names, else the one Deployment the Helm chart's or the Operator's labels mark. Several and
// no way to choose: the run stops and names them.

type AgentLookup =
  | { found: V1Deployment; how: string }
  /** None found, or the Deployment could not be read: `looked` says where, and what was refused; `seen`: the labelled Deployments listed. */
  | { found?: undefined; looked: string; denied?: string; seen?: Sightings };

function forbidden(verb: string, what: string): string {
  return `${verb} ${what}: forbidden to this user`;
}

/**
 * `explicit`: --agent's NAME, read in `namespace` (-n, else kubectl's namespace). Else the labelled
 * Deployments in -n, or in every namespace, falling back to the kubeconfig's namespace when a
 * cluster-wide list is refused.
 */
export async function findClusterAgent(
  apps: AppsV1Api,
  where: { explicit?: string; namespace: string; namespaceGiven: boolean },
): Promise<AgentLookup> {
  if (where.explicit) {
    const what = `deployment ${where.namespace}/${where.explicit}`;
    try {
      return {
        found: await apps.readNamespacedDeployment({ name: where.explicit, namespace: where.namespace }),
        how: `--agent deployment/${where.explicit}`,
      };
    } catch (err) {
      const { code } = apiStatus(err);
      if (code === 404) return { looked: `${what} (--agent): does not exist` };
      if (code === 403) return { looked: what, denied: forbidden('get', what) };
      throw kubeFailure(err, `reading the cluster agent's ${what}`, 'Nothing was enrolled and nothing was changed.');
    }
  }
  let seen: Sightings = await findClusterAgentWorkloads(apps, where.namespaceGiven ? where.namespace : undefined, true);
  let looked =
    'cluster-agent Deployments (labels app.kubernetes.io/component=cluster-agent, ' +
    `agent.datadoghq.com/component=cluster-agent) ${where.namespaceGiven ? `in namespace ${where.namespace}` : 'in all namespaces'}`;
  if (!where.namespaceGiven && seen.found.length === 0 && seen.unlisted.length > 0) {
    const cut = seen.unlisted.join('; ');
    seen = await findClusterAgentWorkloads(apps, where.namespace, true);
    looked += ` (${cut}), then in namespace ${where.namespace}`;
  }
  if (seen.found.length > 1) {
    const choices = seen.found.map((f) => `--agent deployment/${f.slice(f.indexOf('/') + 1)} -n ${f.slice(0, f.indexOf('/'))}`);
    throw new ConfigError(
      'AGENT_AMBIGUOUS',
      `several cluster agents found: ${seen.found.join(', ')}; the run cannot tell which one the identity is for`,
      `Nothing was enrolled and nothing was changed. Name one: ${choices.join(', or ')}.`,
      { clusterAgents: seen.found },
    );
  }
  const only = seen.found[0];
  if (!only)
    return {
      looked: seen.unlisted.length ? `${looked} (${seen.unlisted.join('; ')})` : looked,
      ...(seen.unlisted.length ? { denied: seen.unlisted.join('; ') } : {}),
      seen,
    };
  const [namespace = '', name = ''] = only.split('/');
  try {
    return { found: await apps.readNamespacedDeployment({ name, namespace }), how: `found by its labels (${looked})` };
  } catch (err) {
    if (apiStatus(err).code === 403)
      return { looked: `deployment ${only} (found by its labels)`, denied: forbidden('get', `deployment ${only}`), seen };
    throw kubeFailure(err, `reading the cluster agent's deployment ${only}`, 'Nothing was enrolled and nothing was changed.');
  }
}

/** The ConfigMaps and Secrets a Pod template references, read with the run's client: a refusal says which verb on which object. */
export function objectReader(core: CoreV1Api): ObjectReader {
  return async (kind, namespace, name): Promise<ObjectRead> => {
    try {
      if (kind === 'configmap') return { data: (await core.readNamespacedConfigMap({ name, namespace })).data ?? {} };
      const secret = await core.readNamespacedSecret({ name, namespace });
      const data = Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
      return { data: { ...data, ...(secret.stringData ?? {}) } };
    } catch (err) {
      const { code } = apiStatus(err);
      if (code === 404) return { missing: true };
      if (code === 403) return { denied: forbidden('get', `${kind} ${namespace}/${sanitizeServerString(name, 120)}`) };
      throw kubeFailure(
        err,
        `reading ${kind} ${namespace}/${name} (referenced by the cluster agent)`,
        'Nothing was enrolled and nothing was changed.',
      );
    }
  };
}
