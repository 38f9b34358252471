import type { AgentConfig } from '../config/index.js';
import { serviceAccountNamespace } from './cluster-connection.js';

// Which Secret: flag, then agent config, then the service-account namespace, then the default.

export const DEFAULT_SECRET_NAME = 'private-action-runner-identity';
/** The name Helm and the Datadog Operator deploy: worth pointing at when the default is missing. */
export const HELM_SECRET_NAME = 'datadog-private-action-runner-identity';

export interface ResolvedSecretTarget {
  namespace: string;
  namespaceSource: string;
  name: string;
  nameSource: string;
}

export function resolveSecretTarget(config: AgentConfig, env: NodeJS.ProcessEnv, flags: { namespace?: string; secretName?: string }): ResolvedSecretTarget {
  const configNs = config.getString('kube_resources_namespace');
  const saNs = serviceAccountNamespace(env);
  const [namespace, namespaceSource] = flags.namespace
    ? [flags.namespace, '--namespace']
    : configNs
      ? [configNs, `kube_resources_namespace (${config.sourceOf('kube_resources_namespace')})`]
      : saNs
        ? [saNs, 'service-account namespace file']
        : ['default', 'default'];
  const configName = config.getString('private_action_runner.identity_secret_name');
  const [name, nameSource] = flags.secretName
    ? [flags.secretName, '--secret-name']
    : [configName ?? DEFAULT_SECRET_NAME, config.sourceOf('private_action_runner.identity_secret_name')];
  return { namespace, namespaceSource, name, nameSource };
}
