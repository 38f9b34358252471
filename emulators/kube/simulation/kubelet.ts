import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { list, remove, type SimContext, update } from './context.js';
import { findCondition, nowTimestamp, setCondition } from './objects.js';
import { isTerminal } from './pods.js';
import type { Condition, Container, NodeObject, Pod, PodBehavior } from './types.js';

/** Annotations (usually set on a workload's Pod template) that steer the simulated kubelet for one Pod. */
const BEHAVIOR_ANNOTATIONS = {
  startDelayMs: 'sim.kube-emulator.local/start-delay-ms',
  readyDelayMs: 'sim.kube-emulator.local/ready-delay-ms',
  readiness: 'sim.kube-emulator.local/readiness',
  crashLoop: 'sim.kube-emulator.local/crash-loop',
  imagePull: 'sim.kube-emulator.local/image-pull',
  exitDelayMs: 'sim.kube-emulator.local/exit-delay-ms',
} as const;

/** CrashLoopBackOff: 10 s doubling up to 5 minutes (in simulated seconds). */
const BACKOFF_START_S = 10;
const BACKOFF_MAX_S = 300;

interface Runtime {
  node: string;
  boundAt: number;
  podIP: string;
  terminatingSince?: number;
  killingRecorded?: boolean;
  recorded: Set<string>;
}

function numberAnnotation(pod: Pod, key: string): number | undefined {
  const v = pod.metadata.annotations?.[key];
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

function fakeId(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function isNodeReady(node: NodeObject | undefined): boolean {
  return findCondition(node?.status?.conditions, 'Ready')?.status === 'True';
}

/** Compares statuses without the timestamps the kubelet writes, so an unchanged Pod is not rewritten. */
function withoutTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimes);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === 'lastTransitionTime' || k === 'lastProbeTime' || k === 'startedAt' || k === 'finishedAt' || k === 'startTime') continue;
      out[k] = withoutTimes(v);
    }
    return out;
  }
  return value;
}

/**
 * One kubelet per node, kwok-style: Pods bound to a Ready node are started after startDelayMs
 * (Running, containers started), become Ready at start when no container has a readinessProbe,
 * else readyDelayMs later; 'never' readiness keeps them Running but unready, crash loops restart
 * with back-off, failing pulls stay Pending. A Terminating Pod is removed (DELETE with grace 0 and
 * its uid as precondition) after its grace period, or after exitDelayMs when the process exits
 * sooner. Kubelets on a node that is not Ready do nothing, as a dead node's would.
 */
export class Kubelet {
  private readonly runtimes = new Map<string, Runtime>();
  private readonly podCounters = new Map<string, number>();

  constructor(private readonly ctx: SimContext) {}

  private behavior(pod: Pod): Required<Omit<PodBehavior, 'exitDelayMs'>> & { exitDelayMs?: number } {
    const k = this.ctx.options.kubelet ?? {};
    const a = pod.metadata.annotations ?? {};
    const fromFn = this.ctx.podBehavior?.(pod) ?? {};
    const readinessAnn = a[BEHAVIOR_ANNOTATIONS.readiness];
    const imagePullAnn = a[BEHAVIOR_ANNOTATIONS.imagePull];
    return {
      startDelayMs: fromFn.startDelayMs ?? numberAnnotation(pod, BEHAVIOR_ANNOTATIONS.startDelayMs) ?? k.startDelayMs ?? 0,
      readyDelayMs: fromFn.readyDelayMs ?? numberAnnotation(pod, BEHAVIOR_ANNOTATIONS.readyDelayMs) ?? k.readyDelayMs ?? 0,
      readiness: fromFn.readiness ?? (readinessAnn === 'never' ? 'never' : 'ready'),
      crashLoop: fromFn.crashLoop ?? a[BEHAVIOR_ANNOTATIONS.crashLoop] === 'true',
      imagePull: fromFn.imagePull ?? (imagePullAnn === 'fail' ? 'fail' : 'ok'),
      exitDelayMs: fromFn.exitDelayMs ?? numberAnnotation(pod, BEHAVIOR_ANNOTATIONS.exitDelayMs),
    };
  }

  sync(): void {
    const nodes = new Map(list<NodeObject>(this.ctx, 'v1', 'Node').map((n) => [n.metadata.name!, n]));
    const live = new Set<string>();
    for (const pod of list<Pod>(this.ctx, 'v1', 'Pod')) {
      const nodeName = pod.spec.nodeName;
      if (!nodeName) continue;
      const node = nodes.get(nodeName);
      live.add(pod.metadata.uid!);
      if (!node || !isNodeReady(node)) continue;
      const rt = this.runtime(pod, node);
      if (pod.metadata.deletionTimestamp) this.terminate(pod, rt);
      else if (!isTerminal(pod)) this.run(pod, rt, node);
    }
    for (const uid of this.runtimes.keys()) if (!live.has(uid)) this.runtimes.delete(uid);
  }

  private runtime(pod: Pod, node: NodeObject): Runtime {
    const uid = pod.metadata.uid!;
    let rt = this.runtimes.get(uid);
    if (!rt) {
      const n = (this.podCounters.get(node.metadata.name!) ?? 1) + 1;
      this.podCounters.set(node.metadata.name!, n);
      const cidr = String(node.spec?.podCIDR ?? '10.244.0.0/24').split('/')[0]!.split('.');
      const hostIP = node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '10.0.0.1';
      const podIP = pod.spec.hostNetwork ? hostIP : `${cidr[0]}.${cidr[1]}.${cidr[2]}.${(n % 252) + 2}`;
      rt = { node: node.metadata.name!, boundAt: Date.now(), podIP, recorded: new Set() };
      this.runtimes.set(uid, rt);
    }
    return rt;
  }

  private recordOnce(pod: Pod, rt: Runtime, key: string, type: 'Normal' | 'Warning', reason: string, message: string): void {
    if (rt.recorded.has(key)) return;
    rt.recorded.add(key);
    this.ctx.events.record(pod, type, reason, message, 'kubelet', rt.node);
  }

  private terminate(pod: Pod, rt: Runtime): void {
    const now = Date.now();
    rt.terminatingSince ??= now;
    const behavior = this.behavior(pod);
    const graceMs = this.ctx.options.kubelet?.terminationGraceMs ?? (pod.metadata.deletionGracePeriodSeconds ?? 0) * this.ctx.secondMs;
    const exitMs = behavior.exitDelayMs === undefined ? graceMs : Math.min(behavior.exitDelayMs, graceMs);
    for (const c of pod.spec.containers ?? []) this.recordOnce(pod, rt, `kill:${c.name}`, 'Normal', 'Killing', `Stopping container ${c.name}`);
    const due = rt.terminatingSince + exitMs;
    if (now < due) {
      this.ctx.wakeAt(due);
      return;
    }
    remove(this.ctx, pod, { gracePeriodSeconds: 0 });
  }

  private run(pod: Pod, rt: Runtime, node: NodeObject): void {
    const now = Date.now();
    const b = this.behavior(pod);
    const startAt = rt.boundAt + b.startDelayMs;
    const started = now >= startAt;
    if (!started) this.ctx.wakeAt(startAt);
    const hostIP = node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '10.0.0.1';
    const status = structuredClone(pod.status ?? {});
    const ts = nowTimestamp();
    status.hostIP = hostIP;
    status.hostIPs = [{ ip: hostIP }];
    status.startTime ??= ts;
    status.qosClass ??= 'BestEffort';
    let conditions: Condition[] = status.conditions ?? [];
    const set = (type: string, value: boolean, reason?: string, message?: string): void => {
      const c: Condition = { type, status: value ? 'True' : 'False', lastProbeTime: null, lastTransitionTime: ts };
      if (!value && reason) c.reason = reason;
      if (!value && message) c.message = message;
      conditions = setCondition(conditions, c);
    };
    const containers = pod.spec.containers ?? [];
    let phase = 'Pending';
    const readyNames: string[] = [];
    let statuses: Array<Record<string, unknown>>;
    if (!started) {
      statuses = containers.map((c) => this.containerStatus(pod, c, { waiting: { reason: 'ContainerCreating' } }, false, false, 0));
    } else if (b.imagePull === 'fail') {
      const backingOff = now >= startAt + BACKOFF_START_S * this.ctx.secondMs;
      if (!backingOff) this.ctx.wakeAt(startAt + BACKOFF_START_S * this.ctx.secondMs);
      const reason = backingOff ? 'ImagePullBackOff' : 'ErrImagePull';
      statuses = containers.map((c) => {
        const message = backingOff ? `Back-off pulling image "${c.image}"` : `failed to pull and unpack image "${c.image}": not found`;
        return this.containerStatus(pod, c, { waiting: { reason, message } }, false, false, 0);
      });
      for (const c of containers) this.recordOnce(pod, rt, `pullfail:${c.name}`, 'Warning', 'Failed', `Failed to pull image "${c.image}": not found`);
    } else {
      phase = 'Running';
      for (const c of containers) {
        this.recordOnce(pod, rt, `pulled:${c.name}`, 'Normal', 'Pulled', `Container image "${c.image}" already present on machine`);
        this.recordOnce(pod, rt, `created:${c.name}`, 'Normal', 'Created', `Created container: ${c.name}`);
        this.recordOnce(pod, rt, `started:${c.name}`, 'Normal', 'Started', `Started container ${c.name}`);
      }
      if (b.crashLoop) {
        const restarts = this.restartsSince(startAt, now);
        statuses = containers.map((c) =>
          this.containerStatus(
            pod,
            c,
            { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${this.backoffSeconds(restarts)}s restarting failed container=${c.name} pod=${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})` } },
            false,
            true,
            restarts,
            { terminated: { exitCode: 1, reason: 'Error', startedAt: ts, finishedAt: ts, containerID: this.containerId(pod, c) } },
          ),
        );
        for (const c of containers) {
          this.recordOnce(pod, rt, `backoff:${c.name}`, 'Warning', 'BackOff', `Back-off restarting failed container ${c.name} in pod ${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`);
        }
      } else {
        const startedAt = new Date(startAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
        statuses = containers.map((c) => {
          const probe = c.readinessProbe !== undefined && c.readinessProbe !== null;
          let ready = !probe;
          if (probe && b.readiness !== 'never') {
            const readyAt = startAt + b.readyDelayMs;
            ready = now >= readyAt;
            if (!ready) this.ctx.wakeAt(readyAt);
          }
          if (probe && b.readiness === 'never') {
            this.recordOnce(pod, rt, `unhealthy:${c.name}`, 'Warning', 'Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503');
          }
          if (ready) readyNames.push(c.name);
          return this.containerStatus(pod, c, { running: { startedAt } }, ready, true, 0);
        });
      }
    }
    const unready = containers.map((c) => c.name).filter((n) => !readyNames.includes(n));
    const allReady = started && unready.length === 0 && containers.length > 0;
    const notReadyMessage = `containers with unready status: [${unready.join(' ')}]`;
    set('PodReadyToStartContainers', true);
    set('Initialized', true);
    set('Ready', allReady, 'ContainersNotReady', notReadyMessage);
    set('ContainersReady', allReady, 'ContainersNotReady', notReadyMessage);
    status.conditions = conditions;
    status.phase = phase;
    status.podIP = rt.podIP;
    status.podIPs = [{ ip: rt.podIP }];
    status.containerStatuses = statuses;
    if ((pod.spec.initContainers ?? []).length > 0) {
      status.initContainerStatuses = (pod.spec.initContainers ?? []).map((c) =>
        this.containerStatus(pod, c, { terminated: { exitCode: 0, reason: 'Completed', startedAt: status.startTime, finishedAt: status.startTime } }, true, false, 0),
      );
    }
    if (b.crashLoop && started) {
      const next = this.nextRestartAt(startAt, now);
      this.ctx.wakeAt(next);
    }
    if (isDeepStrictEqual(withoutTimes(status), withoutTimes(pod.status ?? {}))) return;
    update(this.ctx, { ...pod, status });
  }

  private backoffSeconds(restarts: number): number {
    return Math.min(BACKOFF_START_S * 2 ** Math.max(0, restarts - 1), BACKOFF_MAX_S);
  }

  /** Restarts so far: the first crash at start, then one after each back-off. */
  private restartsSince(startAt: number, now: number): number {
    let restarts = 1;
    let t = startAt;
    while (restarts < 1000) {
      t += this.backoffSeconds(restarts) * this.ctx.secondMs;
      if (t > now) break;
      restarts++;
    }
    return restarts;
  }

  private nextRestartAt(startAt: number, now: number): number {
    let restarts = 1;
    let t = startAt;
    while (restarts < 1000) {
      t += this.backoffSeconds(restarts) * this.ctx.secondMs;
      if (t > now) return t;
      restarts++;
    }
    return now + BACKOFF_MAX_S * this.ctx.secondMs;
  }

  private containerId(pod: Pod, c: Container): string {
    return `containerd://${fakeId(`${pod.metadata.uid}/${c.name}`)}`;
  }

  private containerStatus(
    pod: Pod,
    c: Container,
    state: Record<string, unknown>,
    ready: boolean,
    started: boolean,
    restartCount: number,
    lastState: Record<string, unknown> = {},
  ): Record<string, unknown> {
    const image = String(c.image ?? '');
    const out: Record<string, unknown> = {
      name: c.name,
      image,
      imageID: started ? `${image.split(':')[0]}@sha256:${fakeId(image)}` : '',
      ready,
      started,
      restartCount,
      state,
      lastState,
    };
    if (started) out['containerID'] = this.containerId(pod, c);
    return out;
  }
}
