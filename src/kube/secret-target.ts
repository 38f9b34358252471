import type { AgentConfig } from '../config/index.js';
import { serviceAccountNamespace } from './service-account.js';

// Which Secret: flag, then agent config, then the connection's namespace (context, service account), then the default.

export const DEFAULT_SECRET_NAME = 'private-action-runner-identity';
/** The name Helm and the Datadog Operator deploy: worth pointing at when the default is missing. */
export const HELM_SECRET_NAME = 'datadog-private-action-runner-identity';

export interface ResolvedSecretTarget {
  namespace: string;
  namespaceSource: string;
  name: string;
  nameSource: string;
}

export function resolveSecretTarget(
  config: AgentConfig,
  env: NodeJS.ProcessEnv,
  flags: { namespace?: string; secretName?: string; fallbackNamespace?: { namespace: string; source: string } },
): ResolvedSecretTarget {
  const configNs = config.getString('kube_resources_namespace');
  const saNs = serviceAccountNamespace(env);
  // After the agent's own setting comes the connection's default (the context's namespace, then the
  // service account's), as kubectl would pick it.
  const fallback = flags.fallbackNamespace ?? (saNs ? { namespace: saNs, source: 'service-account namespace file' } : { namespace: 'default', source: 'default' });
  const [namespace, namespaceSource] = flags.namespace
    ? [flags.namespace, '--namespace']
    : configNs
      ? [configNs, `kube_resources_namespace (${config.sourceOf('kube_resources_namespace')})`]
      : [fallback.namespace, fallback.source];
  const configName = config.getString('private_action_runner.identity_secret_name');
  const [name, nameSource] = flags.secretName
    ? [flags.secretName, '--secret-name']
    : [configName ?? DEFAULT_SECRET_NAME, config.sourceOf('private_action_runner.identity_secret_name')];
  return { namespace, namespaceSource, name, nameSource };
}
