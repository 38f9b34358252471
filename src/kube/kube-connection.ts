import type { CoreV1Api } from '@kubernetes/client-node';
import { type ClusterConnection, resolveCluster } from './cluster-connection.js';

// The pre-pipeline entry point, kept so today's commands keep working: a ClusterConnection
// without namespace inputs. New code calls resolveCluster() once per run and passes it on.

export interface KubeConnectionOptions {
  kubeconfig?: string;
  context?: string;
  /** `kubernetes_kubeconfig_path` from the agent config. */
  configKubeconfig?: string;
  env: NodeJS.ProcessEnv;
}

export type KubeConnection = ClusterConnection;

export function connectKube(options: KubeConnectionOptions): Promise<KubeConnection> {
  return resolveCluster(options);
}

export async function coreApi(conn: KubeConnection): Promise<CoreV1Api> {
  return conn.core();
}

export { serviceAccountDir, serviceAccountNamespace } from './cluster-connection.js';
