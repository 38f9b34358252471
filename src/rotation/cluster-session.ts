import type { CoreV1Api } from '@kubernetes/client-node';
import type { Io } from '../io.js';
import { connectKube, coreApi, type KubeConnection, serviceAccountNamespace } from '../kube/index.js';
import type { Reporter } from '../output.js';

// One Kubernetes connection per run: resolved the first time a step needs the cluster, then handed
// to every later step (Secret, cluster-id ConfigMap, rollout), so a run can never write the Secret
// on one cluster and roll out on another.

export interface ClusterFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export interface ClusterSession {
  conn: KubeConnection;
  core: CoreV1Api;
  /** -n, else the context's namespace, else the service-account namespace, else default. */
  namespace: string;
  namespaceSource: string;
}

export type ClusterAccess = () => Promise<ClusterSession>;

function defaultNamespace(flags: ClusterFlags, conn: KubeConnection, env: NodeJS.ProcessEnv): [string, string] {
  if (flags.namespace) return [flags.namespace, '--namespace'];
  const fromContext = conn.context ? conn.kc.getContextObject(conn.context)?.namespace : undefined;
  if (fromContext) return [fromContext, `context ${conn.context}`];
  const fromServiceAccount = serviceAccountNamespace(env);
  if (fromServiceAccount) return [fromServiceAccount, 'service-account namespace file'];
  return ['default', 'default'];
}

/** `configKubeconfig` is kubernetes_kubeconfig_path from the agent config, when there is one. */
export function clusterAccess(flags: ClusterFlags, configKubeconfig: string | undefined, io: Io, report: Reporter): ClusterAccess {
  let session: Promise<ClusterSession> | undefined;
  return () => {
    session ??= (async () => {
      const conn = await connectKube({
        ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
        ...(flags.context ? { context: flags.context } : {}),
        ...(configKubeconfig ? { configKubeconfig } : {}),
        env: io.env,
      });
      const [namespace, namespaceSource] = defaultNamespace(flags, conn, io.env);
      report.info(`kubernetes: ${conn.server} (${conn.source}${conn.context ? `, context ${conn.context}` : ''})`);
      return { conn, core: await coreApi(conn), namespace, namespaceSource };
    })();
    return session;
  };
}
