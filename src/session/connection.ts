import type { Io } from '../io.js';
import type { ClusterTarget, ResolveClusterOptions } from '../kube/cluster-connection.js';
import type { ClusterAccess, ClusterSession } from '../kube/cluster-session.js';
import type { Reporter } from '../output.js';
import type { Deadline } from '../time/index.js';

// One Kubernetes connection per run: resolved the first time a step needs the cluster, then handed
// to every later step (Secret, cluster-id ConfigMap, audit Events, rollout), so a run can never write
// the Secret on one cluster and roll out on another. Resolution follows kubectl (src/kube); its code is
// loaded the first time a run needs the cluster, so a local file run never loads it.

interface ClusterFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  /** The command's deadline (--timeout), when it has one: no Kubernetes request outlives it. */
  deadline?: Deadline;
  /** The run's requests signal: a stopped run aborts its Kubernetes requests. */
  signal?: AbortSignal;
}

/** A session on the resolved cluster only, without client-node's API clients (what `watch` uses). */
interface ClusterTargetSession {
  conn: ClusterTarget;
  namespace: string;
  namespaceSource: string;
}

interface AgentClusterSettings {
  /** kubernetes_kubeconfig_path from the agent config. */
  kubeconfig?: string;
  /** kube_resources_namespace, only where the target follows the agent config (the cluster agent's Secret). */
  namespace?: { value: string; source: string };
}

function resolveOptions(flags: ClusterFlags, agent: AgentClusterSettings, io: Io): ResolveClusterOptions {
  return {
    ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
    ...(flags.context ? { context: flags.context } : {}),
    ...(flags.namespace ? { namespace: flags.namespace } : {}),
    ...(agent.kubeconfig ? { configKubeconfig: agent.kubeconfig } : {}),
    ...(agent.namespace ? { configNamespace: agent.namespace } : {}),
    env: io.env,
    stdinIsTerminal: io.stdinIsTTY,
    ...(flags.deadline || flags.signal
      ? { limits: { ...(flags.deadline ? { deadline: flags.deadline } : {}), ...(flags.signal ? { signal: flags.signal } : {}) } }
      : {}),
  };
}

function announce(conn: ClusterTarget, report: Reporter): void {
  for (const warning of conn.warnings) report.warn(warning);
  report.info(
    `kubernetes: ${conn.server} (${conn.source}${conn.context ? `, context ${conn.context}` : ''}${conn.proxy ? `, through proxy ${conn.proxy}` : ''})`,
  );
}

export function clusterAccess(flags: ClusterFlags, agent: AgentClusterSettings, io: Io, report: Reporter): ClusterAccess {
  let session: Promise<ClusterSession> | undefined;
  const options = resolveOptions(flags, agent, io);
  return () => {
    session ??= (async () => {
      const { resolveCluster } = await import('../kube/cluster-connection.js');
      const conn = await resolveCluster(options);
      announce(conn, report);
      return { conn, core: conn.core(), namespace: conn.namespace, namespaceSource: conn.namespaceSource };
    })();
    return session;
  };
}

/** clusterAccess() without @kubernetes/client-node: the same resolution and the same lines, for `watch`. */
export function clusterTargetAccess(
  flags: ClusterFlags,
  agent: AgentClusterSettings,
  io: Io,
  report: Reporter,
): () => Promise<ClusterTargetSession> {
  let session: Promise<ClusterTargetSession> | undefined;
  const options = resolveOptions(flags, agent, io);
  return () => {
    session ??= (async () => {
      const { resolveClusterTarget } = await import('../kube/cluster-connection.js');
      const conn = await resolveClusterTarget(options);
      announce(conn, report);
      return { conn, namespace: conn.namespace, namespaceSource: conn.namespaceSource };
    })();
    return session;
  };
}
