import {
  type ClusterSimulation,
  type ClusterSimulationOptions,
  type KubeEmulator,
  type KubeObject,
  seedNamespaces,
  startKubeEmulator,
} from '../../emulators/kube/index.js';
import type { Pod } from '../../emulators/kube/simulation/index.js';

export interface SimCluster {
  emu: KubeEmulator;
  sim: ClusterSimulation;
  /** What the simulated components threw; stopCluster fails the test if any. */
  errors: unknown[];
}

/** Millisecond timings: one simulated second lasts 20 ms. */
export const FAST: ClusterSimulationOptions = {
  secondMs: 20,
  tickMs: 50,
  kubelet: { startDelayMs: 10, readyDelayMs: 10 },
};

export async function startCluster(opts: ClusterSimulationOptions = {}, tls = false): Promise<SimCluster> {
  const errors: unknown[] = [];
  const emu = await startKubeEmulator({
    tls,
    simulation: { ...FAST, ...opts, kubelet: { ...FAST.kubelet, ...(opts.kubelet ?? {}) }, onError: (e) => errors.push(e) },
  });
  seedNamespaces(emu, ['default', 'kube-system', 'datadog']);
  return { emu, sim: emu.simulation!, errors };
}

export async function stopCluster(cluster: SimCluster | undefined): Promise<void> {
  if (!cluster) return;
  await cluster.emu.close();
  if (cluster.errors.length > 0) throw new AggregateError(cluster.errors, 'the cluster simulation threw');
}

export function nodes(count: number, extra: { cpu?: string; memory?: string } = {}): Array<{ name: string; cpu?: string; memory?: string }> {
  return Array.from({ length: count }, (_, i) => ({ name: `node-${String.fromCharCode(97 + i)}`, ...extra }));
}

export interface WorkloadOptions {
  namespace?: string;
  cpu?: string;
  probe?: boolean;
  minReadySeconds?: number;
  templateAnnotations?: Record<string, string>;
  hostPort?: number;
  terminationGracePeriodSeconds?: number;
}

function podTemplate(name: string, o: WorkloadOptions) {
  return {
    metadata: { labels: { app: name }, ...(o.templateAnnotations ? { annotations: o.templateAnnotations } : {}) },
    spec: {
      terminationGracePeriodSeconds: o.terminationGracePeriodSeconds ?? 5,
      containers: [
        {
          name: 'agent',
          image: 'registry.example/agent:7.60.0',
          ...(o.cpu ? { resources: { requests: { cpu: o.cpu, memory: '64Mi' } } } : {}),
          ...(o.probe === false ? {} : { readinessProbe: { httpGet: { path: '/ready', port: 5555 } } }),
          ...(o.hostPort ? { ports: [{ containerPort: o.hostPort, hostPort: o.hostPort }] } : {}),
        },
      ],
    },
  };
}

function workload(kind: string, name: string, namespace: string, spec: Record<string, unknown>, o: WorkloadOptions): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: { name, namespace },
    spec: {
      selector: { matchLabels: { app: name } },
      ...(o.minReadySeconds ? { minReadySeconds: o.minReadySeconds } : {}),
      ...spec,
      template: podTemplate(name, o),
    },
  };
}

export function daemonSet(
  name: string,
  strategy: { maxSurge?: number | string; maxUnavailable?: number | string } | 'OnDelete' = {},
  o: WorkloadOptions = {},
): KubeObject {
  const updateStrategy = strategy === 'OnDelete' ? { type: 'OnDelete' } : { type: 'RollingUpdate', rollingUpdate: strategy };
  return workload('DaemonSet', name, o.namespace ?? 'datadog', { updateStrategy }, o);
}

export function deployment(
  name: string,
  replicas: number,
  rollingUpdate: { maxSurge?: number | string; maxUnavailable?: number | string } = {},
  o: WorkloadOptions & { progressDeadlineSeconds?: number } = {},
): KubeObject {
  const deadline = o.progressDeadlineSeconds ? { progressDeadlineSeconds: o.progressDeadlineSeconds } : {};
  return workload('Deployment', name, o.namespace ?? 'default', { replicas, ...deadline, strategy: { type: 'RollingUpdate', rollingUpdate } }, o);
}

/** A bare Pod bound to `node` that requests `cpu`: somebody else's load. */
export function tenantPod(name: string, node: string, cpu: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { nodeName: node, containers: [{ name: 'app', image: 'app:1', resources: { requests: { cpu } } }] },
  };
}

export function podsOf(emu: KubeEmulator, namespace: string, app: string): Pod[] {
  return (emu.listObjects('v1', 'Pod', namespace) as Pod[]).filter((p) => p.metadata.labels?.['app'] === app);
}

export function isReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

export function status(obj: KubeObject | undefined): Record<string, number | undefined> {
  return (obj?.['status'] ?? {}) as Record<string, number | undefined>;
}

/** What `kubectl rollout restart` writes: a template annotation, which bumps metadata.generation. */
export function restart(emu: KubeEmulator, kind: 'Deployment' | 'DaemonSet', namespace: string, name: string, stamp: string, extra: Record<string, string> = {}): KubeObject {
  const obj = emu.getObject('apps/v1', kind, namespace, name)!;
  const spec = obj['spec'] as { template: { metadata?: { annotations?: Record<string, string> } } };
  spec.template.metadata = {
    ...(spec.template.metadata ?? {}),
    annotations: { ...(spec.template.metadata?.annotations ?? {}), 'kubectl.kubernetes.io/restartedAt': stamp, ...extra },
  };
  return emu.updateObject(obj);
}

/** docs/rollout.md §2: observedGeneration caught up and updated = available = desired. */
export function daemonSetRolledOut(emu: KubeEmulator, namespace: string, name: string): boolean {
  const ds = emu.getObject('apps/v1', 'DaemonSet', namespace, name);
  const s = status(ds);
  const desired = s['desiredNumberScheduled'] ?? 0;
  return (
    desired > 0 &&
    (s['observedGeneration'] ?? 0) >= (ds?.metadata.generation ?? 1) &&
    (s['updatedNumberScheduled'] ?? 0) === desired &&
    (s['numberAvailable'] ?? 0) === desired
  );
}

export function deploymentRolledOut(emu: KubeEmulator, namespace: string, name: string): boolean {
  const d = emu.getObject('apps/v1', 'Deployment', namespace, name);
  if (!d) return false;
  const s = status(d);
  const want = (d['spec'] as { replicas: number }).replicas;
  return (
    (s['observedGeneration'] ?? 0) >= (d.metadata.generation ?? 1) &&
    (s['updatedReplicas'] ?? 0) === want &&
    (s['availableReplicas'] ?? 0) === want &&
    (s['replicas'] ?? 0) === want
  );
}

/** Runs `check` after every committed change until the returned function is called. */
export function observe(emu: KubeEmulator, check: () => void): () => void {
  check();
  return emu.onChange(() => check());
}

/** The fewest Ready and the most live (not Terminating) Pods of an app seen at any committed change. */
export function trackReadiness(emu: KubeEmulator, namespace: string, app: string): { minReady: number; maxLive: number; stop: () => void } {
  const seen = { minReady: Number.POSITIVE_INFINITY, maxLive: 0, stop: () => {} };
  seen.stop = observe(emu, () => {
    const live = podsOf(emu, namespace, app).filter((p) => !p.metadata.deletionTimestamp);
    seen.minReady = Math.min(seen.minReady, live.filter(isReady).length);
    seen.maxLive = Math.max(seen.maxLive, live.length);
  });
  return seen;
}
