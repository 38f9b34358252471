import type { V1DaemonSet, V1Deployment, V1Node, V1Pod, V1PodSpec, V1PodTemplateSpec } from '@kubernetes/client-node';
import { nodeStateProblems, selectsNode, untoleratedTaints } from './node-fit.js';
import { bytes, milliCpu } from './quantity.js';
import type { WorkloadKind } from './workload-ref.js';

// The fail-closed checks of the Operator prototype (docs/rollout.md §5) plus per-node room (docs/rollout.md §6): can a
// create-before-delete restart happen, does a node need the capacity fallback, or is it blocked?

type Verdict = 'can surge' | 'needs fallback' | 'blocked';

interface Finding {
  severity: 'blocker' | 'warning' | 'info';
  code: string;
  message: string;
}

interface NodeRoom {
  node: string;
  verdict: Verdict;
  reasons: string[];
  freeMilliCpu: number;
  freeBytes: number;
}

interface IdentityUse {
  /** How the Pods get the identity Secret; `restartNeeded` is false only for whole-volume mounts. */
  ways: string[];
  restartNeeded: boolean;
}

export interface RolloutCheck {
  kind: WorkloadKind;
  verdict: Verdict;
  findings: Finding[];
  nodes: NodeRoom[];
  identity: IdentityUse;
  /** DaemonSet: the user's maxUnavailable (or maxSurge if already surging), scaled to the Pods. */
  budget: number;
  /** False when the token may not read nodes or the Pods on them: no per-node room was computed. */
  capacityChecked: boolean;
}

export type Workload = V1Deployment | V1DaemonSet;

// exported for tests: the tests build views of this shape
export interface ClusterView {
  kind: WorkloadKind;
  workload: Workload;
  pods: V1Pod[];
  /** Every Pod bound to the nodes that matter, any owner: what the scheduler counts. */
  podsOnNodes: V1Pod[];
  nodes: V1Node[];
  /** undefined: the token may not list PodDisruptionBudgets in the namespace. */
  pdbNames: string[] | undefined;
  identitySecretNames: string[];
  /** Why node capacity could not be read (missing cluster-scoped rights); unset when it was read. */
  capacityUnavailable?: string;
}

export function podRequests(spec: V1PodSpec | undefined): { milliCpu: number; bytes: number } {
  const sum = (containers: V1PodSpec['containers'] | undefined) =>
    (containers ?? []).reduce(
      (acc, c) => ({
        milliCpu: acc.milliCpu + milliCpu(c.resources?.requests?.cpu),
        bytes: acc.bytes + bytes(c.resources?.requests?.memory),
      }),
      { milliCpu: 0, bytes: 0 },
    );
  const main = sum(spec?.containers);
  // Init containers run one at a time: the Pod needs the larger of their peak and the main sum.
  const init = (spec?.initContainers ?? []).reduce(
    (acc, c) => ({
      milliCpu: Math.max(acc.milliCpu, milliCpu(c.resources?.requests?.cpu)),
      bytes: Math.max(acc.bytes, bytes(c.resources?.requests?.memory)),
    }),
    { milliCpu: 0, bytes: 0 },
  );
  return { milliCpu: Math.max(main.milliCpu, init.milliCpu), bytes: Math.max(main.bytes, init.bytes) };
}

function isTerminal(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

// exported for tests: Kubernetes' rounding rules, checked alone
export function scaledIntOrPercent(value: number | string | undefined, total: number, fallback: number | string, roundUp: boolean): number {
  const v = value ?? fallback;
  if (typeof v === 'number') return v;
  const match = /^(\d+)%$/.exec(v);
  if (!match) return Number(v) || 0;
  const scaled = (Number(match[1]) * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

function template(workload: Workload): V1PodTemplateSpec | undefined {
  return workload.spec?.template;
}

function strategyFindings(view: ClusterView): { findings: Finding[]; budget: number } {
  const findings: Finding[] = [];
  if (view.kind === 'deployment') {
    const strategy = (view.workload as V1Deployment).spec?.strategy;
    if (strategy?.type === 'Recreate')
      findings.push({
        severity: 'blocker',
        code: 'STRATEGY_RECREATE',
        message: 'strategy Recreate deletes every Pod before creating new ones',
      });
    if ((view.workload as V1Deployment).spec?.paused)
      findings.push({ severity: 'blocker', code: 'PAUSED', message: 'the Deployment is paused (kubectl rollout restart refuses it too)' });
    return { findings, budget: 0 };
  }
  const ds = view.workload as V1DaemonSet;
  const strategy = ds.spec?.updateStrategy;
  if (strategy?.type === 'OnDelete')
    findings.push({ severity: 'blocker', code: 'STRATEGY_ONDELETE', message: 'strategy OnDelete never replaces Pods by itself' });
  const desired = ds.status?.desiredNumberScheduled ?? view.pods.length;
  const surge = scaledIntOrPercent(strategy?.rollingUpdate?.maxSurge as number | string | undefined, desired, 0, true);
  const unavailable = scaledIntOrPercent(strategy?.rollingUpdate?.maxUnavailable as number | string | undefined, desired, 1, true);
  const budget = Math.max(1, unavailable > 0 ? unavailable : surge);
  findings.push({
    severity: 'info',
    code: 'BUDGET',
    message: `budget ${budget} node(s) at a time (maxUnavailable ${unavailable}, maxSurge ${surge})`,
  });
  return { findings, budget };
}

function podSpecFindings(spec: V1PodSpec | undefined, labels: Record<string, string>): Finding[] {
  const findings: Finding[] = [];
  const containers = spec?.containers ?? [];
  const ports = containers.flatMap((c) => c.ports ?? []);
  if (!spec?.hostNetwork && ports.some((p) => p.hostPort)) {
    findings.push({
      severity: 'blocker',
      code: 'HOST_PORT',
      message: 'a container declares a hostPort: a second Pod cannot schedule on the same node',
    });
  }
  if (spec?.hostNetwork && ports.length > 0) {
    findings.push({
      severity: 'blocker',
      code: 'HOST_NETWORK_PORTS',
      message: 'hostNetwork with declared ports: Kubernetes turns them into host-port claims, and probes may reach the old process',
    });
  }
  const antiAffinity = spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  const selfAnti = antiAffinity.some(
    (term) =>
      term.topologyKey === 'kubernetes.io/hostname' &&
      Object.entries(term.labelSelector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
      (term.labelSelector?.matchLabels || term.labelSelector?.matchExpressions),
  );
  if (selfAnti)
    findings.push({
      severity: 'blocker',
      code: 'SELF_ANTI_AFFINITY',
      message: 'a required pod anti-affinity on kubernetes.io/hostname matches the workload itself',
    });
  if (containers.some((c) => !c.readinessProbe)) {
    findings.push({
      severity: 'blocker',
      code: 'NO_READINESS_PROBE',
      message: 'a container has no readinessProbe: "Ready" would only mean "started", so a surge proves nothing',
    });
  }
  return findings;
}

// exported for tests: each way a Pod spec reads the Secret
export function identityUse(spec: V1PodSpec | undefined, secretNames: string[]): IdentityUse {
  const named = (name: string | undefined) => name !== undefined && secretNames.includes(name);
  const ways: string[] = [];
  const volumes = new Map((spec?.volumes ?? []).filter((v) => named(v.secret?.secretName)).map((v) => [v.name, v.secret!.secretName!]));
  let restartNeeded = false;
  for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]) {
    for (const e of c.env ?? []) {
      if (named(e.valueFrom?.secretKeyRef?.name)) {
        ways.push(`env ${e.name} of container ${c.name}`);
        restartNeeded = true;
      }
    }
    for (const e of c.envFrom ?? []) {
      if (named(e.secretRef?.name)) {
        ways.push(`envFrom of container ${c.name}`);
        restartNeeded = true;
      }
    }
    for (const m of c.volumeMounts ?? []) {
      if (!volumes.has(m.name)) continue;
      if (m.subPath) {
        ways.push(`subPath mount ${m.mountPath} of container ${c.name}`);
        restartNeeded = true;
      } else ways.push(`volume mount ${m.mountPath} of container ${c.name} (refreshed by the kubelet; the process must re-read it)`);
    }
  }
  if (ways.length === 0) return { ways: ['no reference to the identity Secret found in the Pod template'], restartNeeded: true };
  return { ways, restartNeeded };
}

export function freeOnNode(node: V1Node, podsOnNodes: V1Pod[]): { milliCpu: number; bytes: number } {
  const name = node.metadata?.name;
  const used = podsOnNodes
    .filter((p) => p.spec?.nodeName === name && !isTerminal(p))
    .reduce(
      (acc, p) => {
        const r = podRequests(p.spec);
        return { milliCpu: acc.milliCpu + r.milliCpu, bytes: acc.bytes + r.bytes };
      },
      { milliCpu: 0, bytes: 0 },
    );
  return { milliCpu: milliCpu(node.status?.allocatable?.cpu) - used.milliCpu, bytes: bytes(node.status?.allocatable?.memory) - used.bytes };
}

function nodeRooms(view: ClusterView): NodeRoom[] {
  const need = podRequests(template(view.workload)?.spec);
  const nodesWithPods = new Set(view.pods.map((p) => p.spec?.nodeName).filter(Boolean));
  // A DaemonSet's nodes are those of its Pods; a Deployment's, those its Pods may be scheduled to
  // (nodeSelector, required node affinity, taints): room elsewhere is no room for its surge Pod.
  const spec = template(view.workload)?.spec;
  const relevant =
    view.kind === 'daemonset'
      ? view.nodes.filter((n) => nodesWithPods.has(n.metadata?.name))
      : view.nodes.filter((n) => selectsNode(n, spec) && untoleratedTaints(n, spec).length === 0);
  return relevant.map((node) => {
    const free = freeOnNode(node, view.podsOnNodes);
    const notReady = nodeStateProblems(node);
    const fits = free.milliCpu >= need.milliCpu && free.bytes >= need.bytes;
    const short = [
      ...(free.milliCpu < need.milliCpu ? [`cpu: ${free.milliCpu}m free, ${need.milliCpu}m needed`] : []),
      ...(free.bytes < need.bytes
        ? [`memory: ${Math.floor(free.bytes / 2 ** 20)}Mi free, ${Math.ceil(need.bytes / 2 ** 20)}Mi needed`]
        : []),
    ];
    const verdict: Verdict = notReady.length ? 'blocked' : fits ? 'can surge' : 'needs fallback';
    return {
      node: node.metadata?.name ?? '?',
      verdict,
      reasons: notReady.length ? notReady : fits ? ['room for a second Pod'] : short,
      freeMilliCpu: free.milliCpu,
      freeBytes: free.bytes,
    };
  });
}

export function checkRollout(view: ClusterView): RolloutCheck {
  const spec = template(view.workload)?.spec;
  const labels = template(view.workload)?.metadata?.labels ?? {};
  const { findings, budget } = strategyFindings(view);
  findings.push(...podSpecFindings(spec, labels));
  if (view.pdbNames === undefined)
    findings.push({
      severity: 'info',
      code: 'PDB_UNCHECKED',
      message: 'PodDisruptionBudgets not checked: the token may not list them in this namespace (informational only)',
    });
  else if (view.pdbNames.length)
    findings.push({
      severity: 'info',
      code: 'PDB',
      message: `PodDisruptionBudgets select these Pods (${view.pdbNames.join(', ')}); rollouts do not consult them, the fallback's budget does`,
    });
  const identity = identityUse(spec, view.identitySecretNames);
  if (!identity.restartNeeded)
    findings.push({
      severity: 'info',
      code: 'VOLUME_REFRESH',
      message:
        'the identity comes from a whole-volume Secret mount: the kubelet refreshes it, a restart is only needed if the process does not re-read it',
    });
  if (view.capacityUnavailable) {
    findings.push({
      severity: 'warning',
      code: 'CAPACITY_UNCHECKED',
      message:
        `node capacity not checked (${view.capacityUnavailable}): a surge Pod that does not fit stays Pending until --timeout, ` +
        'then the restart is undone; bind the ClusterRole par-identity-rollout-capacity for this check and for --fallback',
    });
  }
  const nodes = view.capacityUnavailable ? [] : nodeRooms(view);
  let verdict: Verdict = 'can surge';
  if (findings.some((f) => f.severity === 'blocker')) verdict = 'blocked';
  else if (view.kind === 'daemonset' && nodes.some((n) => n.verdict === 'needs fallback')) verdict = 'needs fallback';
  else if (
    view.kind === 'deployment' &&
    view.nodes.length > 0 &&
    !view.capacityUnavailable &&
    !nodes.some((n) => n.verdict === 'can surge')
  ) {
    const message = nodes.length
      ? 'no node has room for a surge replica'
      : "no node the Pods may be scheduled to (the template's nodeSelector, required node affinity and tolerations)";
    findings.push({ severity: 'blocker', code: 'NO_ROOM', message });
    verdict = 'blocked';
  }
  return { kind: view.kind, verdict, findings, nodes, identity, budget, capacityChecked: !view.capacityUnavailable };
}
