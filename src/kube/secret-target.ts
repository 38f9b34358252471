import type { AgentConfig } from '../config/index.js';
import { ConfigError, KubernetesError } from '../errors.js';
import { serviceAccountNamespace } from './service-account.js';

// Which Secret (docs/protocol.md §6c): the namespace the agent reads it from, never a guess. The
// agent reads kube_resources_namespace, else its own Pod's namespace: -n, else kube_resources_namespace,
// else (inside a Pod) the service-account namespace. A kubeconfig context's namespace is never taken.

export const DEFAULT_SECRET_NAME = 'private-action-runner-identity';
/** The name Helm and the Datadog Operator deploy: worth pointing at when the default is missing. */
export const HELM_SECRET_NAME = 'datadog-private-action-runner-identity';

export interface ResolvedSecretTarget {
  namespace: string;
  namespaceSource: string;
  name: string;
  nameSource: string;
  /**
   * The namespace is the agent's for sure: kube_resources_namespace is set (the agent reads only it),
   * or, without it, we run in a Pod of that namespace. A bare -n off-cluster is not.
   */
  agentsForSure: boolean;
  /** kube_resources_namespace is set: the cluster-id ConfigMap's namespace cannot follow the Secret's. */
  configNamespace: boolean;
}

interface SecretTargetFlags {
  namespace?: string;
  secretName?: string;
  /**
   * Read-only commands (status, watch): a -n that differs from kube_resources_namespace is a warning,
   * not a refusal, and an unknown namespace may still be found by the caller (`undefined` namespace).
   */
  readOnly?: boolean;
  /** Off-cluster: the namespace of the cluster agent's Deployment, its own Pod's (src/session found it). */
  agentNamespace?: string;
}

export function resolveSecretTarget(
  config: AgentConfig,
  env: NodeJS.ProcessEnv,
  flags: SecretTargetFlags,
): ResolvedSecretTarget & { warnings: string[] } {
  const configNs = config.getString('kube_resources_namespace');
  const configSource = `kube_resources_namespace (${config.sourceOf('kube_resources_namespace')})`;
  const saNs = serviceAccountNamespace(env);
  const warnings: string[] = [];
  if (flags.namespace && configNs && flags.namespace !== configNs) {
    const said = `-n ${flags.namespace} differs from ${configSource} = ${configNs}: the agent reads its identity Secret from ${configNs} only`;
    if (!flags.readOnly)
      throw new ConfigError(
        'NAMESPACE_MISMATCH',
        said,
        `Nothing was enrolled and nothing was changed. Drop -n, or pass -n ${configNs}; change kube_resources_namespace first if the agent is to move.`,
      );
    warnings.push(said);
  }
  const configName = config.getString('private_action_runner.identity_secret_name');
  const [name, nameSource] = flags.secretName
    ? [flags.secretName, '--secret-name']
    : [configName ?? DEFAULT_SECRET_NAME, config.sourceOf('private_action_runner.identity_secret_name')];
  const [namespace, namespaceSource] = flags.namespace
    ? [flags.namespace, '--namespace']
    : configNs
      ? [configNs, configSource]
      : saNs
        ? [saNs, 'service-account namespace file (inside the Pod)']
        : flags.agentNamespace
          ? [flags.agentNamespace, "the cluster agent's namespace (its Deployment's; no kube_resources_namespace)"]
          : [undefined, undefined];
  if (!namespace || !namespaceSource) throw namespaceUnknown();
  const agentsForSure = configNs ? namespace === configNs : (saNs ?? flags.agentNamespace) === namespace;
  return { namespace, namespaceSource, name, nameSource, agentsForSure, configNamespace: Boolean(configNs), warnings };
}

/**
 * `candidates`: the namespaces where cluster-agent Deployments were found, so the hint names the `-n` to
 * pass rather than a placeholder to fill in; with none found, it names the kubectl query that finds it.
 */
export function namespaceUnknown(lookedFor = '', candidates: string[] = []): KubernetesError {
  const pass =
    candidates.length === 1
      ? `Pass -n ${candidates[0]} (where the cluster-agent Deployment was found)`
      : candidates.length > 1
        ? `Pass -n with the namespace of the cluster agent that runs this runner: one of ${candidates.join(', ')}`
        : "Pass -n with the cluster agent's namespace (kubectl get deploy -A -l app.kubernetes.io/component=cluster-agent finds it)";
  const looked = lookedFor ? `; ${lookedFor}` : '';
  return new KubernetesError(
    'NAMESPACE_UNKNOWN',
    "the cluster agent's namespace is unknown: no -n, no kube_resources_namespace, and not inside a Pod " +
      `(a kubeconfig context's namespace is never taken for the identity Secret)${looked}`,
    `Nothing was enrolled and nothing was changed. ${pass}, or set kube_resources_namespace.`,
  );
}
