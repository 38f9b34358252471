import { milliValue, wholeValue } from '../quantity.js';
import type { SimContext } from './context.js';
import { findCondition } from './objects.js';
import type { Container, Pod } from './types.js';

export function phaseOf(pod: Pod): string {
  return pod.status?.phase ?? 'Pending';
}

/** Succeeded or Failed: the containers are gone for good. */
export function isTerminal(pod: Pod): boolean {
  const phase = phaseOf(pod);
  return phase === 'Succeeded' || phase === 'Failed';
}

export function isTerminating(pod: Pod): boolean {
  return Boolean(pod.metadata.deletionTimestamp);
}

/** controller.IsPodActive: not terminal and not being deleted. */
export function isActive(pod: Pod): boolean {
  return !isTerminal(pod) && !isTerminating(pod);
}

/** podutil.IsPodReady: the Ready condition is True (a Terminating Pod can still be Ready). */
export function isReady(pod: Pod): boolean {
  return findCondition(pod.status?.conditions, 'Ready')?.status === 'True';
}

/**
 * When the Pod is (or becomes) available for minReadySeconds, in ms; undefined when not Ready.
 * podutil.IsPodAvailable: Ready, and Ready since at least minReadySeconds (lastTransitionTime +
 * minReadySeconds <= now).
 */
function availableAt(ctx: SimContext, pod: Pod, minReadySeconds: number | undefined): number | undefined {
  const since = ctx.tracker.readySinceMs(pod);
  if (since === undefined) return undefined;
  return since + (minReadySeconds ?? 0) * ctx.secondMs;
}

/** IsPodAvailable; also asks for a pass when the Pod will become available, so minReadySeconds is honoured on time. */
export function isAvailable(ctx: SimContext, pod: Pod, minReadySeconds: number | undefined, now = Date.now()): boolean {
  const at = availableAt(ctx, pod, minReadySeconds);
  if (at === undefined) return false;
  if (!minReadySeconds || at <= now) return true;
  ctx.wakeAt(at);
  return false;
}

export interface Resources {
  milliCpu: number;
  memory: number;
  ephemeralStorage: number;
}

function containerRequests(c: Container): Resources {
  const req = c.resources?.requests ?? {};
  return { milliCpu: milliValue(req['cpu']), memory: wholeValue(req['memory']), ephemeralStorage: wholeValue(req['ephemeral-storage']) };
}

/**
 * The scheduler's computePodResourceRequest: the sum over containers, at least the largest init
 * container, plus the Pod overhead.
 */
export function podRequests(pod: Pod): Resources {
  const total: Resources = { milliCpu: 0, memory: 0, ephemeralStorage: 0 };
  for (const c of pod.spec.containers ?? []) {
    const r = containerRequests(c);
    total.milliCpu += r.milliCpu;
    total.memory += r.memory;
    total.ephemeralStorage += r.ephemeralStorage;
  }
  for (const c of pod.spec.initContainers ?? []) {
    const r = containerRequests(c);
    total.milliCpu = Math.max(total.milliCpu, r.milliCpu);
    total.memory = Math.max(total.memory, r.memory);
    total.ephemeralStorage = Math.max(total.ephemeralStorage, r.ephemeralStorage);
  }
  const overhead = pod.spec.overhead ?? {};
  total.milliCpu += milliValue(overhead['cpu']);
  total.memory += wholeValue(overhead['memory']);
  return total;
}

export interface HostPort {
  ip: string;
  protocol: string;
  port: number;
}

/** The host ports a Pod claims (hostNetwork ports were turned into host ports by defaulting). */
export function hostPorts(pod: Pod): HostPort[] {
  const out: HostPort[] = [];
  for (const c of [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])]) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort) continue;
      out.push({ ip: p.hostIP || '0.0.0.0', protocol: p.protocol || 'TCP', port: p.hostPort });
    }
  }
  return out;
}

/** HostPortInfo.CheckConflict: same protocol and port, and the same IP or a wildcard on either side. */
export function portsConflict(a: HostPort, b: HostPort): boolean {
  if (a.protocol !== b.protocol || a.port !== b.port) return false;
  return a.ip === b.ip || a.ip === '0.0.0.0' || b.ip === '0.0.0.0';
}

export function priorityOf(pod: Pod): number {
  return typeof pod.spec.priority === 'number' ? pod.spec.priority : 0;
}

/**
 * util.GetTargetNodeName: spec.nodeName, or for an unscheduled DaemonSet Pod the node named by
 * its required node affinity (matchFields metadata.name In [node]).
 */
export function targetNodeName(pod: Pod): string | undefined {
  if (pod.spec.nodeName) return pod.spec.nodeName;
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const t of terms) {
    for (const r of t.matchFields ?? []) {
      if (r.key === 'metadata.name' && r.operator === 'In' && r.values?.length === 1) return r.values[0];
    }
  }
  return undefined;
}

/** Sorts oldest first as podByCreationTimestampAndPhase does: bound Pods first, then by creation. */
export function byCreationScheduledFirst(ctx: SimContext): (a: Pod, b: Pod) => number {
  return (a, b) => {
    const sa = a.spec.nodeName ? 0 : 1;
    const sb = b.spec.nodeName ? 0 : 1;
    if (sa !== sb) return sa - sb;
    return ctx.tracker.compareCreation(a, b);
  };
}
