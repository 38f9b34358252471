import type { CoreV1Api } from '@kubernetes/client-node';
import { type AgentConfig, loadAgentConfig } from '../config/index.js';
import type { Io } from '../io.js';
import { type KubeConnection, type ResolvedSecretTarget, resolveCluster, resolveSecretTarget, type SecretRef } from '../kube/index.js';
import type { Reporter } from '../output.js';

export interface ClusterTargetOptions {
  cfgPath: string;
  extraCfg: string[];
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  secretName?: string;
  /** The command's --timeout: no Kubernetes request outlives it. */
  timeoutSeconds?: number;
}

export interface ClusterTarget {
  config: AgentConfig;
  conn: KubeConnection;
  core: CoreV1Api;
  target: ResolvedSecretTarget;
  ref: SecretRef;
}

/** The cluster agent reads datadog-cluster.yaml; a lone datadog.yaml is accepted and named. */
export async function resolveClusterTarget(options: ClusterTargetOptions, io: Io, report: Reporter): Promise<ClusterTarget> {
  const deadlineAt = options.timeoutSeconds ? Date.now() + options.timeoutSeconds * 1000 : undefined;
  const config = await loadAgentConfig({ cfgPath: options.cfgPath, extraFiles: options.extraCfg, env: io.env, fileNames: ['datadog-cluster.yaml', 'datadog.yaml'] });
  report.info(config.file ? `config: ${config.files.join(', ')}` : `config: no datadog-cluster.yaml or datadog.yaml in ${options.cfgPath}; environment only`);
  const configNs = config.getString('kube_resources_namespace');
  const conn = await resolveCluster({
    ...(options.kubeconfig ? { kubeconfig: options.kubeconfig } : {}),
    ...(options.context ? { context: options.context } : {}),
    ...(options.namespace ? { namespace: options.namespace } : {}),
    ...(config.getString('kubernetes_kubeconfig_path') ? { configKubeconfig: config.getString('kubernetes_kubeconfig_path')! } : {}),
    ...(configNs ? { configNamespace: { value: configNs, source: config.sourceOf('kube_resources_namespace') } } : {}),
    env: io.env,
    ...(deadlineAt ? { limits: { remainingMs: () => deadlineAt - Date.now() } } : {}),
  });
  for (const warning of conn.warnings) report.warn(warning);
  report.info(`kubernetes: ${conn.server} (${conn.source}${conn.context ? `, context ${conn.context}` : ''})`);
  const target = { ...resolveSecretTarget(config, io.env, options), namespace: conn.namespace, namespaceSource: conn.namespaceSource };
  report.info(`secret: ${target.namespace}/${target.name} (namespace from ${target.namespaceSource}, name from ${target.nameSource})`);
  return { config, conn, core: conn.core(), target, ref: { namespace: target.namespace, name: target.name } };
}
