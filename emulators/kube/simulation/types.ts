import type { KubeObject } from '../types.js';

/** Typed views of the fields the simulation reads; everything else passes through untouched. */

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string | null;
  lastProbeTime?: string | null;
  lastUpdateTime?: string;
  lastHeartbeatTime?: string;
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  timeAdded?: string;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface PodAffinityTerm {
  labelSelector?: LabelSelector | null;
  namespaces?: string[];
  namespaceSelector?: LabelSelector | null;
  topologyKey: string;
}

interface Affinity {
  nodeAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] };
    preferredDuringSchedulingIgnoredDuringExecution?: unknown[];
  };
  podAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[]; [key: string]: unknown };
  podAntiAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[]; [key: string]: unknown };
}

interface ContainerPort {
  containerPort: number;
  hostPort?: number;
  hostIP?: string;
  protocol?: string;
  name?: string;
}

export interface Container {
  name: string;
  image?: string;
  ports?: ContainerPort[];
  readinessProbe?: unknown;
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  [key: string]: unknown;
}

interface PodSpec {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  affinity?: Affinity;
  tolerations?: Toleration[];
  containers: Container[];
  initContainers?: Container[];
  hostNetwork?: boolean;
  schedulerName?: string;
  schedulingGates?: unknown[];
  priority?: number;
  preemptionPolicy?: string;
  overhead?: Record<string, unknown>;
  restartPolicy?: string;
  terminationGracePeriodSeconds?: number;
  [key: string]: unknown;
}

interface PodStatus {
  phase?: string;
  conditions?: Condition[];
  nominatedNodeName?: string;
  startTime?: string;
  containerStatuses?: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

export interface Pod extends KubeObject {
  spec: PodSpec;
  status?: PodStatus;
}

export interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; [key: string]: unknown };
  spec: PodSpec;
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

export interface NodeObject extends KubeObject {
  spec?: { unschedulable?: boolean; taints?: Taint[]; podCIDR?: string; [key: string]: unknown };
  status?: {
    allocatable?: Record<string, string>;
    capacity?: Record<string, string>;
    conditions?: Condition[];
    addresses?: Array<{ type: string; address: string }>;
    [key: string]: unknown;
  };
}

export interface ReplicaSet extends KubeObject {
  spec: { replicas?: number; minReadySeconds?: number; selector: LabelSelector; template: PodTemplate };
  status?: Record<string, unknown>;
}

export interface Deployment extends KubeObject {
  spec: {
    replicas?: number;
    paused?: boolean;
    minReadySeconds?: number;
    revisionHistoryLimit?: number;
    progressDeadlineSeconds?: number;
    selector: LabelSelector;
    template: PodTemplate;
    strategy?: { type?: string; rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string } };
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    unavailableReplicas?: number;
    conditions?: Condition[];
    collisionCount?: number;
    [key: string]: unknown;
  };
}

export interface DaemonSet extends KubeObject {
  spec: {
    minReadySeconds?: number;
    revisionHistoryLimit?: number;
    selector: LabelSelector;
    template: PodTemplate;
    updateStrategy?: { type?: string; rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string } };
  };
  status?: Record<string, unknown> & { collisionCount?: number };
}

export interface Job extends KubeObject {
  spec: {
    parallelism?: number;
    completions?: number | null;
    backoffLimit?: number;
    activeDeadlineSeconds?: number;
    suspend?: boolean;
    selector?: LabelSelector;
    template: PodTemplate;
  };
  status?: {
    startTime?: string;
    completionTime?: string;
    active?: number;
    succeeded?: number;
    failed?: number;
    conditions?: Condition[];
    [key: string]: unknown;
  };
}

/** How a simulated kubelet runs one Pod. Unset fields fall back to annotations, then to the options. */
export interface PodBehavior {
  /** From binding until the containers run (image pull + start). */
  startDelayMs?: number;
  /** From start until a readinessProbe first succeeds (Pods without one are Ready when started). */
  readyDelayMs?: number;
  /** 'never': the readiness probe keeps failing, the Pod runs but is never Ready. */
  readiness?: 'ready' | 'never';
  /** The main process exits right after each start: CrashLoopBackOff, never Ready. */
  crashLoop?: boolean;
  /** 'fail': ErrImagePull then ImagePullBackOff, the Pod stays Pending. */
  imagePull?: 'ok' | 'fail';
  /** How long the containers take to stop once the Pod is Terminating (capped by its grace period). */
  exitDelayMs?: number;
}

/** A Node to add to the simulated cluster. Quantities are Kubernetes quantities ("4", "3500m", "8Gi"). */
export interface SimNodeSpec {
  name: string;
  /** Allocatable cpu (default "4"). */
  cpu?: string;
  /** Allocatable memory (default "8Gi"). */
  memory?: string;
  /** Allocatable pods (default 110). */
  pods?: number;
  ephemeralStorage?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
  /** Initial condition statuses; Ready defaults to True, the pressure conditions to False. */
  conditions?: Partial<Record<NodeConditionType, 'True' | 'False' | 'Unknown'>>;
}

export type NodeConditionType = 'Ready' | 'MemoryPressure' | 'DiskPressure' | 'PIDPressure' | 'NetworkUnavailable';

/**
 * Which kube-scheduler's wording the Unschedulable messages follow.
 * - 'v1.35' (default): a DaemonSet Pod's other nodes are "node(s) didn't satisfy plugin(s) [NodeAffinity]"
 *   (NodeAffinity PreFilter narrows to the pinned node), taints are "node(s) had untolerated taint(s)",
 *   and PostFilter messages are "no new claims to deallocate, preemption: ..." (DRA on by default).
 * - 'v1.23': every node runs the filters ("node(s) didn't match Pod's node affinity/selector"), taints
 *   name key and value, and the message ends "preemption: ...." as those versions printed it.
 */
export type SchedulerMessageStyle = 'v1.35' | 'v1.23';

export interface ClusterSimulationOptions {
  /** Nodes created at start. */
  nodes?: SimNodeSpec[];
  /** How many real milliseconds one Kubernetes second lasts (minReadySeconds, grace periods, deadlines, back-offs). Default 1000. */
  secondMs?: number;
  /** Full resync period of every controller, in ms (the informer resync). Default 1000. */
  tickMs?: number;
  kubelet?: {
    /** Default time from binding until containers run. Default 0. */
    startDelayMs?: number;
    /** Default time from start until a readinessProbe passes. Default 0. */
    readyDelayMs?: number;
    /** Fixed time a Terminating Pod stays before its kubelet removes it; default its grace period (scaled by secondMs). */
    terminationGraceMs?: number;
    /** Per-Pod behaviour; wins over annotations and the defaults above. */
    podBehavior?: (pod: Pod) => PodBehavior | undefined;
  };
  scheduler?: {
    messages?: SchedulerMessageStyle;
    /** Pods naming another schedulerName are left alone. Default "default-scheduler". */
    schedulerName?: string;
  };
  /** Turn single controllers off (all on by default). */
  controllers?: {
    deployments?: boolean;
    replicaSets?: boolean;
    daemonSets?: boolean;
    jobs?: boolean;
    garbageCollector?: boolean;
    nodeLifecycle?: boolean;
    scheduler?: boolean;
    kubelet?: boolean;
  };
  /** Record core/v1 Events as the components do (default true). */
  events?: boolean;
  /** Receives errors thrown inside a reconcile pass (default: console.error). */
  onError?: (error: unknown) => void;
}

export interface WaitOptions {
  /** Default 5000. */
  timeoutMs?: number;
  /** Named in the timeout error. */
  what?: string;
}

export interface ClusterSimulation {
  /** Creates a Node (Ready, with allocatable resources, addresses and the standard labels). */
  addNode(spec: SimNodeSpec): KubeObject;
  /** Read-modify-write of a Node object (spec or status); the node lifecycle controller then reconciles taints. */
  updateNode(name: string, mutate: (node: NodeObject) => void): KubeObject;
  /** Sets one node condition as its kubelet would report it (reason and message default to the kubelet's). */
  setNodeCondition(name: string, type: NodeConditionType, status: 'True' | 'False' | 'Unknown', reason?: string, message?: string): KubeObject;
  /** spec.unschedulable, as kubectl cordon / uncordon set it. */
  cordon(name: string, unschedulable?: boolean): KubeObject;
  removeNode(name: string): void;
  /** Replaces the per-Pod behaviour function (undefined removes it). */
  setPodBehavior(fn: ((pod: Pod) => PodBehavior | undefined) | undefined): void;
  /** Runs reconcile passes until nothing changes any more (pending timers are not waited for). */
  settle(): Promise<void>;
  /**
   * Resolves with the first truthy value of `check`, evaluated after every committed change and
   * every pass; rejects after timeoutMs.
   */
  waitFor<T>(check: () => T | undefined | null | false, opts?: WaitOptions): Promise<T>;
  /** Stops every controller and timer. Idempotent. */
  stop(): void;
  readonly stopped: boolean;
  /** Real ms per Kubernetes second. */
  readonly secondMs: number;
}
