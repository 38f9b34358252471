import { list, type SimContext, update } from './context.js';
import { findCondition, nowTimestamp } from './objects.js';
import type { Condition, NodeConditionType, NodeObject, Pod, SimNodeSpec, Taint } from './types.js';

/** The kubelet's reason and message for each node condition status. */
const CONDITION_TEXT: Record<NodeConditionType, Record<'True' | 'False' | 'Unknown', [string, string]>> = {
  Ready: {
    True: ['KubeletReady', 'kubelet is posting ready status'],
    False: ['KubeletNotReady', 'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized'],
    Unknown: ['NodeStatusUnknown', 'Kubelet stopped posting node status.'],
  },
  MemoryPressure: {
    True: ['KubeletHasInsufficientMemory', 'kubelet has insufficient memory available'],
    False: ['KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
    Unknown: ['NodeStatusUnknown', 'Kubelet stopped posting node status.'],
  },
  DiskPressure: {
    True: ['KubeletHasDiskPressure', 'kubelet has disk pressure'],
    False: ['KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
    Unknown: ['NodeStatusUnknown', 'Kubelet stopped posting node status.'],
  },
  PIDPressure: {
    True: ['KubeletHasInsufficientPID', 'kubelet has insufficient PID available'],
    False: ['KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
    Unknown: ['NodeStatusUnknown', 'Kubelet stopped posting node status.'],
  },
  NetworkUnavailable: {
    True: ['NoRouteCreated', 'Node created without a route'],
    False: ['RouteCreated', 'RouteController created a route'],
    Unknown: ['NodeStatusUnknown', 'Kubelet stopped posting node status.'],
  },
};

export function nodeCondition(type: NodeConditionType, status: 'True' | 'False' | 'Unknown', reason?: string, message?: string): Condition {
  const [r, m] = CONDITION_TEXT[type][status];
  const ts = nowTimestamp();
  return { type, status, lastHeartbeatTime: ts, lastTransitionTime: ts, reason: reason ?? r, message: message ?? m };
}

let nodeIndex = 0;

/** A Node object as a freshly registered kubelet (plus the node IPAM and lifecycle controllers) leaves it. */
export function buildNode(spec: SimNodeSpec): NodeObject {
  const i = nodeIndex++ % 250;
  const cpu = spec.cpu ?? '4';
  const memory = spec.memory ?? '8Gi';
  const pods = String(spec.pods ?? 110);
  const storage = spec.ephemeralStorage ?? '100Gi';
  const resources = { cpu, memory, pods, 'ephemeral-storage': storage };
  const wanted = { Ready: 'True', MemoryPressure: 'False', DiskPressure: 'False', PIDPressure: 'False', ...(spec.conditions ?? {}) } as Record<
    NodeConditionType,
    'True' | 'False' | 'Unknown'
  >;
  const order: NodeConditionType[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'];
  if (spec.conditions?.NetworkUnavailable) order.unshift('NetworkUnavailable');
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: spec.name,
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': spec.name,
        'kubernetes.io/os': 'linux',
        ...(spec.labels ?? {}),
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true', ...(spec.annotations ?? {}) },
    },
    spec: {
      podCIDR: `10.244.${i}.0/24`,
      podCIDRs: [`10.244.${i}.0/24`],
      ...(spec.taints ? { taints: spec.taints } : {}),
      ...(spec.unschedulable ? { unschedulable: true } : {}),
    },
    status: {
      capacity: { ...resources },
      allocatable: { ...resources },
      conditions: order.map((t) => nodeCondition(t, wanted[t])),
      addresses: [
        { type: 'InternalIP', address: `172.18.${Math.floor(i / 250)}.${(i % 250) + 2}` },
        { type: 'Hostname', address: spec.name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: '',
        systemUUID: '',
        bootID: '',
        kernelVersion: '6.8.0',
        osImage: 'Simulated Linux',
        containerRuntimeVersion: 'containerd://2.0.0',
        kubeletVersion: 'v1.35.0-sim',
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
      images: [],
    },
  };
}

/** The taints TaintNodesByCondition and taint-based eviction put on nodes. */
const CONDITION_TAINTS: Array<{ type: string; status: string; taints: Taint[] }> = [
  {
    type: 'Ready',
    status: 'False',
    taints: [
      { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' },
    ],
  },
  {
    type: 'Ready',
    status: 'Unknown',
    taints: [
      { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' },
    ],
  },
  { type: 'MemoryPressure', status: 'True', taints: [{ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }] },
  { type: 'DiskPressure', status: 'True', taints: [{ key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule' }] },
  { type: 'PIDPressure', status: 'True', taints: [{ key: 'node.kubernetes.io/pid-pressure', effect: 'NoSchedule' }] },
  { type: 'NetworkUnavailable', status: 'True', taints: [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }] },
];

const MANAGED_KEYS = new Set([...CONDITION_TAINTS.flatMap((c) => c.taints.map((t) => t.key)), 'node.kubernetes.io/unschedulable']);

function taintId(t: Taint): string {
  return `${t.key}:${t.effect}`;
}

/**
 * The node lifecycle controller's share: taints that follow node conditions and
 * spec.unschedulable, and Pods on a node that is not Ready marked not Ready (MarkPodsNotReady).
 * NoExecute eviction is not simulated.
 */
export class NodeLifecycle {
  constructor(private readonly ctx: SimContext) {}

  sync(): void {
    const notReadyNodes = new Set<string>();
    for (const node of list<NodeObject>(this.ctx, 'v1', 'Node')) {
      const conditions = node.status?.conditions ?? [];
      const ready = findCondition(conditions, 'Ready')?.status ?? 'Unknown';
      if (ready !== 'True') notReadyNodes.add(node.metadata.name!);
      const desired: Taint[] = [];
      for (const rule of CONDITION_TAINTS) {
        const status = rule.type === 'Ready' ? ready : (findCondition(conditions, rule.type)?.status ?? 'False');
        if (status === rule.status) desired.push(...rule.taints);
      }
      if (node.spec?.unschedulable) desired.push({ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' });
      const current = node.spec?.taints ?? [];
      const kept = current.filter((t) => !MANAGED_KEYS.has(t.key) || desired.some((d) => taintId(d) === taintId(t)));
      const added = desired
        .filter((d) => !current.some((t) => taintId(t) === taintId(d)))
        .map((d) => (d.effect === 'NoExecute' ? { ...d, timeAdded: nowTimestamp() } : d));
      if (added.length === 0 && kept.length === current.length) continue;
      const taints = [...kept, ...added];
      const next = structuredClone(node);
      next.spec = { ...(next.spec ?? {}) };
      if (taints.length > 0) next.spec.taints = taints;
      else delete next.spec.taints;
      update(this.ctx, next);
    }
    if (notReadyNodes.size === 0) return;
    for (const pod of list<Pod>(this.ctx, 'v1', 'Pod')) {
      if (!pod.spec.nodeName || !notReadyNodes.has(pod.spec.nodeName)) continue;
      const ready = findCondition(pod.status?.conditions, 'Ready');
      if (!ready || ready.status === 'False') continue;
      const next = structuredClone(pod);
      next.status = {
        ...(next.status ?? {}),
        conditions: (next.status?.conditions ?? []).map((c) => (c.type === 'Ready' ? { ...c, status: 'False', lastTransitionTime: nowTimestamp() } : c)),
      };
      update(this.ctx, next);
    }
  }
}
