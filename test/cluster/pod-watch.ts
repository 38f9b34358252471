import { KubeConfig, Watch } from '@kubernetes/client-node';

// Every moment at which a node (or the whole workload) had no Ready Pod of a workload, seen through
// a watch on its Pods, as an operator's monitoring would see it. Used by the rollout tests (which
// must see no such moment) and the bench (node-seconds uncovered).

interface PodView {
  node: string | undefined;
  ready: boolean;
}

export interface Coverage {
  /** Names of the uncovered moments, e.g. "node n2: 0 Ready", in order. */
  gaps: string[];
  /** Sum over the watched nodes of the time they had no Ready Pod, in seconds. */
  nodeSecondsUncovered(): number;
  stop(): Promise<void>;
}

function isReady(pod: {
  metadata?: { deletionTimestamp?: unknown };
  status?: { conditions?: Array<{ type: string; status: string }> };
}): boolean {
  return !pod.metadata?.deletionTimestamp && (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/**
 * Watches the Pods matching `labelSelector` in `namespace`. perNode: each node of `nodes` must have
 * a Ready Pod; otherwise at least `minimum` Pods must be Ready.
 */
export async function watchCoverage(
  kubeconfigPath: string,
  namespace: string,
  labelSelector: string,
  opts: { nodes?: string[]; minimum?: number },
): Promise<Coverage> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const pods = new Map<string, PodView>();
  const gaps: string[] = [];
  const uncoveredSince = new Map<string, number>();
  let uncoveredMs = 0;
  let synced = false;
  const check = () => {
    if (!synced) return;
    const views = [...pods.values()];
    if (opts.nodes) {
      const now = performance.now();
      for (const node of opts.nodes) {
        const covered = views.some((p) => p.node === node && p.ready);
        if (!covered && !uncoveredSince.has(node)) {
          uncoveredSince.set(node, now);
          gaps.push(`node ${node}: 0 Ready`);
        } else if (covered && uncoveredSince.has(node)) {
          uncoveredMs += now - uncoveredSince.get(node)!;
          uncoveredSince.delete(node);
        }
      }
    } else {
      const ready = views.filter((p) => p.ready).length;
      if (ready < (opts.minimum ?? 1)) gaps.push(`${ready} Ready`);
    }
  };
  const path = `/api/v1/namespaces/${namespace}/pods`;
  // The initial state from a list, then the changes from its resourceVersion on.
  const { CoreV1Api } = await import('@kubernetes/client-node');
  const api = kc.makeApiClient(CoreV1Api);
  const list = await api.listNamespacedPod({ namespace, labelSelector });
  for (const p of list.items) pods.set(p.metadata!.name!, { node: p.spec?.nodeName, ready: isReady(p as never) });
  synced = true;
  check();
  const watch = new Watch(kc);
  const req = await watch.watch(
    path,
    { labelSelector, resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true },
    (type, obj: { metadata: { name: string }; spec?: { nodeName?: string } }) => {
      if (type === 'BOOKMARK') return;
      if (type === 'DELETED') pods.delete(obj.metadata.name);
      else pods.set(obj.metadata.name, { node: obj.spec?.nodeName, ready: isReady(obj as never) });
      check();
    },
    () => {},
  );
  return {
    gaps,
    nodeSecondsUncovered() {
      const now = performance.now();
      let open = 0;
      for (const since of uncoveredSince.values()) open += now - since;
      return (uncoveredMs + open) / 1000;
    },
    async stop() {
      req.abort();
    },
  };
}
