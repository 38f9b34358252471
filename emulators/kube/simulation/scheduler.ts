import { milliValue, wholeValue } from '../quantity.js';
import { list, remove, type SimContext, update } from './context.js';
import { findCondition, nowTimestamp, setCondition } from './objects.js';
import {
  interPodAffinityFailure,
  matchesRequiredAffinity,
  noScheduleOrExecute,
  type PlacedPod,
  preFilterNodeNames,
  tolerates,
  untoleratedTaint,
} from './placement.js';
import { type HostPort, hostPorts, isTerminal, isTerminating, podRequests, portsConflict, priorityOf, type Resources } from './pods.js';
import type { NodeObject, Pod, SchedulerMessageStyle } from './types.js';

const COMPONENT = 'default-scheduler';

/** Filter reasons, worded as the in-tree plugins word them. */
const REASONS = {
  unschedulable: 'node(s) were unschedulable',
  taint: 'node(s) had untolerated taint(s)',
  affinity: "node(s) didn't match Pod's node affinity/selector",
  ports: "node(s) didn't have free ports for the requested pod ports",
  tooManyPods: 'Too many pods',
  cpu: 'Insufficient cpu',
  memory: 'Insufficient memory',
  ephemeralStorage: 'Insufficient ephemeral-storage',
  preFilterNodeAffinity: "node(s) didn't satisfy plugin(s) [NodeAffinity]",
  affinityConflict: 'pod affinity terms conflict',
  notHelpful: 'Preemption is not helpful for scheduling',
  noVictims: 'No preemption victims found for incoming pod',
} as const;

type Code = 'Unschedulable' | 'UnschedulableAndUnresolvable';

interface FilterStatus {
  code: Code;
  reasons: string[];
}

/** A framework.NodeInfo: the node and what its bound (non-terminal) Pods request. */
class NodeState {
  readonly name: string;
  readonly allocatable: Resources & { pods: number };
  requested: Resources = { milliCpu: 0, memory: 0, ephemeralStorage: 0 };
  ports: HostPort[] = [];
  pods: Pod[] = [];

  constructor(readonly node: NodeObject) {
    this.name = node.metadata.name!;
    const a = node.status?.allocatable ?? {};
    this.allocatable = {
      milliCpu: milliValue(a['cpu']),
      memory: wholeValue(a['memory']),
      ephemeralStorage: a['ephemeral-storage'] === undefined ? Number.MAX_SAFE_INTEGER : wholeValue(a['ephemeral-storage']),
      pods: a['pods'] === undefined ? 110 : wholeValue(a['pods']),
    };
  }

  add(pod: Pod): void {
    const r = podRequests(pod);
    this.requested = {
      milliCpu: this.requested.milliCpu + r.milliCpu,
      memory: this.requested.memory + r.memory,
      ephemeralStorage: this.requested.ephemeralStorage + r.ephemeralStorage,
    };
    this.ports = [...this.ports, ...hostPorts(pod)];
    this.pods = [...this.pods, pod];
  }

  /** A copy holding only the Pods `keep` accepts. */
  filtered(keep: (pod: Pod) => boolean): NodeState {
    const copy = new NodeState(this.node);
    for (const p of this.pods) if (keep(p)) copy.add(p);
    return copy;
  }

  withExtra(pods: Pod[]): NodeState {
    if (pods.length === 0) return this;
    const copy = this.filtered(() => true);
    for (const p of pods) copy.add(p);
    return copy;
  }
}

function histogram(counts: Map<string, number>): string {
  // sort.Strings over "<count> <reason>", as FitError.Error builds it.
  return [...counts.entries()]
    .map(([reason, n]) => `${n} ${reason}`)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .join(', ');
}

function count(counts: Map<string, number>, reason: string, n = 1): void {
  counts.set(reason, (counts.get(reason) ?? 0) + n);
}

/**
 * kube-scheduler's default profile, reduced to what Deployments and DaemonSets meet: PreFilter
 * (NodeAffinity's node-name narrowing), the filters NodeUnschedulable, TaintToleration,
 * NodeAffinity, NodePorts and NodeResourcesFit in that order (the first failing one decides a
 * node's reasons), LeastAllocated-like scoring, DefaultPreemption, and the FitError message.
 */
export class Scheduler {
  private readonly style: SchedulerMessageStyle;
  private readonly schedulerName: string;
  /** The cycle's snapshot of every node, for filters that look beyond one node (InterPodAffinity). */
  private snapshot = new Map<string, NodeState>();

  constructor(private readonly ctx: SimContext) {
    this.style = ctx.options.scheduler?.messages ?? 'v1.35';
    this.schedulerName = ctx.options.scheduler?.schedulerName ?? COMPONENT;
  }

  sync(): void {
    const nodes = list<NodeObject>(this.ctx, 'v1', 'Node');
    const pods = list<Pod>(this.ctx, 'v1', 'Pod');
    const states = new Map(nodes.map((n) => [n.metadata.name!, new NodeState(n)]));
    for (const p of pods) if (p.spec.nodeName && !isTerminal(p)) states.get(p.spec.nodeName)?.add(p);
    this.snapshot = states;
    const pending = pods
      .filter(
        (p) =>
          !p.spec.nodeName &&
          !isTerminating(p) &&
          !isTerminal(p) &&
          (p.spec.schedulerName ?? COMPONENT) === this.schedulerName &&
          (p.spec.schedulingGates ?? []).length === 0,
      )
      .sort((a, b) => priorityOf(b) - priorityOf(a) || this.ctx.tracker.compareCreation(a, b));
    for (const pod of pending) this.scheduleOne(pod, states, pending);
  }

  private filter(pod: Pod, s: NodeState): FilterStatus | undefined {
    const node = s.node;
    if (node.spec?.unschedulable && !tolerates(pod.spec.tolerations, { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' })) {
      return { code: 'UnschedulableAndUnresolvable', reasons: [REASONS.unschedulable] };
    }
    const taint = untoleratedTaint(node.spec?.taints, pod.spec.tolerations, noScheduleOrExecute);
    if (taint) {
      const reason = this.style === 'v1.23' ? `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}` : REASONS.taint;
      return { code: 'UnschedulableAndUnresolvable', reasons: [reason] };
    }
    if (!matchesRequiredAffinity(pod, node)) return { code: 'UnschedulableAndUnresolvable', reasons: [REASONS.affinity] };
    const wanted = hostPorts(pod);
    if (wanted.some((w) => s.ports.some((u) => portsConflict(w, u)))) return { code: 'Unschedulable', reasons: [REASONS.ports] };
    const reasons: string[] = [];
    if (s.pods.length + 1 > s.allocatable.pods) reasons.push(REASONS.tooManyPods);
    const req = podRequests(pod);
    if (req.milliCpu > 0 && req.milliCpu > s.allocatable.milliCpu - s.requested.milliCpu) reasons.push(REASONS.cpu);
    if (req.memory > 0 && req.memory > s.allocatable.memory - s.requested.memory) reasons.push(REASONS.memory);
    if (req.ephemeralStorage > 0 && req.ephemeralStorage > s.allocatable.ephemeralStorage - s.requested.ephemeralStorage) {
      reasons.push(REASONS.ephemeralStorage);
    }
    if (reasons.length > 0) return { code: 'Unschedulable', reasons };
    const interPod = interPodAffinityFailure(pod, node.metadata.labels ?? {}, this.placedPods(s), (ns) => this.ctx.emu.getObject('v1', 'Namespace', undefined, ns)?.metadata.labels);
    return interPod ? { code: interPod.code, reasons: [interPod.reason] } : undefined;
  }

  /** Every placed Pod with its node's labels, this node's Pods taken from `s` (which may be a what-if copy). */
  private placedPods(s: NodeState): PlacedPod[] {
    const out: PlacedPod[] = [];
    for (const other of this.snapshot.values()) {
      const source = other.name === s.name ? s : other;
      for (const pod of source.pods) out.push({ pod, nodeLabels: other.node.metadata.labels ?? {} });
    }
    if (!this.snapshot.has(s.name)) for (const pod of s.pods) out.push({ pod, nodeLabels: s.node.metadata.labels ?? {} });
    return out;
  }

  /** RunFilterPluginsWithNominatedPods: Pods nominated to the node with at least this priority count as placed. */
  private filterWithNominated(pod: Pod, s: NodeState, pending: Pod[]): FilterStatus | undefined {
    const nominated = pending.filter(
      (p) => p !== pod && p.status?.nominatedNodeName === s.name && priorityOf(p) >= priorityOf(pod) && !p.spec.nodeName,
    );
    return this.filter(pod, s.withExtra(nominated));
  }

  private scheduleOne(pod: Pod, states: Map<string, NodeState>, pending: Pod[]): void {
    const all = [...states.values()];
    if (all.length === 0) {
      this.markUnschedulable(pod, 'SchedulerError', 'no nodes available to schedule pods');
      return;
    }
    const statuses = new Map<string, FilterStatus>();
    let candidates = all;
    let absentReason: string | undefined;
    if (this.style === 'v1.35') {
      const names = preFilterNodeNames(pod);
      if (names && names.size === 0) {
        const message = `0/${all.length} nodes are available: ${REASONS.affinityConflict}.`;
        this.markUnschedulable(pod, 'Unschedulable', this.withPostFilter(message, `0/${all.length} nodes are available: ${all.length} ${REASONS.notHelpful}.`));
        return;
      }
      if (names) {
        candidates = all.filter((s) => names.has(s.name));
        absentReason = REASONS.preFilterNodeAffinity;
      }
    }
    const feasible: NodeState[] = [];
    for (const s of candidates) {
      const st = this.filterWithNominated(pod, s, pending);
      if (st) statuses.set(s.name, st);
      else feasible.push(s);
    }
    if (feasible.length > 0) {
      this.bind(pod, this.pickNode(pod, feasible));
      return;
    }
    const counts = new Map<string, number>();
    for (const st of statuses.values()) for (const r of st.reasons) count(counts, r);
    if (absentReason && all.length > statuses.size) count(counts, absentReason, all.length - statuses.size);
    const message = `0/${all.length} nodes are available: ${histogram(counts)}.`;
    const preemption = this.preempt(pod, states, statuses);
    if (preemption.nominated) {
      this.markUnschedulable(pod, 'Unschedulable', message, preemption.nominated);
      return;
    }
    this.markUnschedulable(pod, 'Unschedulable', this.withPostFilter(message, preemption.message!));
  }

  /** FitError.Error with the PostFilter plugins' message appended. */
  private withPostFilter(message: string, preemption: string): string {
    if (this.style === 'v1.23') return `${message} preemption: ${preemption}.`;
    return `${message} no new claims to deallocate, preemption: ${preemption}`;
  }

  /** Least allocated cpu and memory after placing the Pod; ties go to the first node by name. */
  private pickNode(pod: Pod, feasible: NodeState[]): NodeState {
    const req = podRequests(pod);
    const score = (s: NodeState): number => {
      const cpu = s.allocatable.milliCpu > 0 ? (s.allocatable.milliCpu - s.requested.milliCpu - req.milliCpu) / s.allocatable.milliCpu : 0;
      const mem = s.allocatable.memory > 0 ? (s.allocatable.memory - s.requested.memory - req.memory) / s.allocatable.memory : 0;
      return (cpu + mem) / 2;
    };
    let best = feasible[0]!;
    for (const s of feasible.slice(1)) if (score(s) > score(best)) best = s;
    return best;
  }

  private bind(pod: Pod, s: NodeState): void {
    const next = structuredClone(pod);
    next.spec.nodeName = s.name;
    const status = { ...(next.status ?? {}) };
    delete status.nominatedNodeName;
    status.conditions = setCondition(
      (status.conditions ?? []).filter((c) => c.type !== 'PodScheduled'),
      { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: nowTimestamp() },
    );
    next.status = status;
    const bound = update(this.ctx, next);
    if (!bound) return;
    s.add(bound);
    this.ctx.events.record(bound, 'Normal', 'Scheduled', `Successfully assigned ${pod.metadata.namespace}/${pod.metadata.name} to ${s.name}`, COMPONENT);
  }

  private markUnschedulable(pod: Pod, reason: string, message: string, nominated?: string): void {
    const current = findCondition(pod.status?.conditions, 'PodScheduled');
    const nominatedNow = pod.status?.nominatedNodeName;
    const wantNominated = nominated ?? nominatedNow;
    if (current?.status === 'False' && current.reason === reason && current.message === message && nominatedNow === wantNominated) return;
    const next = structuredClone(pod);
    const status = { ...(next.status ?? {}) };
    status.phase = status.phase ?? 'Pending';
    status.conditions = setCondition(status.conditions, {
      type: 'PodScheduled',
      status: 'False',
      reason,
      message,
      lastProbeTime: null,
      lastTransitionTime: nowTimestamp(),
    });
    if (wantNominated) status.nominatedNodeName = wantNominated;
    next.status = status;
    const written = update(this.ctx, next);
    if (written) this.ctx.events.record(written, 'Warning', 'FailedScheduling', message, COMPONENT);
  }

  /**
   * DefaultPreemption's PostFilter: nodes whose failure is unresolvable are "not helpful"; on the
   * others, every lower-priority Pod is a potential victim; without any, "No preemption victims
   * found"; if the Pod still does not fit without them, that filter's reasons; otherwise the node
   * is a candidate, victims are reprieved from the highest priority down while the Pod still fits,
   * the Pod is nominated and the remaining victims are deleted.
   */
  private preempt(pod: Pod, states: Map<string, NodeState>, statuses: Map<string, FilterStatus>): { message?: string; nominated?: string } {
    if (pod.spec.preemptionPolicy === 'Never') return { message: 'not eligible due to preemptionPolicy=Never.' };
    const prio = priorityOf(pod);
    const nominated = pod.status?.nominatedNodeName;
    const onNominated = nominated ? states.get(nominated) : undefined;
    if (onNominated?.pods.some((p) => isTerminating(p) && priorityOf(p) < prio)) {
      return { message: 'not eligible due to a terminating pod on the nominated node.' };
    }
    const counts = new Map<string, number>();
    const candidates: Array<{ state: NodeState; victims: Pod[] }> = [];
    for (const s of states.values()) {
      const st = statuses.get(s.name);
      if (!st || st.code === 'UnschedulableAndUnresolvable') {
        count(counts, REASONS.notHelpful);
        continue;
      }
      const lower = s.pods.filter((p) => priorityOf(p) < prio);
      if (lower.length === 0) {
        count(counts, REASONS.noVictims);
        continue;
      }
      const without = s.filtered((p) => priorityOf(p) >= prio);
      const still = this.filter(pod, without);
      if (still) {
        for (const r of still.reasons) count(counts, r);
        continue;
      }
      let keep = without;
      const victims: Pod[] = [];
      const byImportance = [...lower].sort((a, b) => priorityOf(b) - priorityOf(a) || this.ctx.tracker.compareCreation(a, b));
      for (const v of byImportance) {
        const trial = keep.withExtra([v]);
        if (this.filter(pod, trial)) victims.push(v);
        else keep = trial;
      }
      candidates.push({ state: s, victims });
    }
    if (candidates.length === 0) return { message: `0/${states.size} nodes are available: ${histogram(counts)}.` };
    const highest = (c: { victims: Pod[] }): number => Math.max(Number.MIN_SAFE_INTEGER, ...c.victims.map(priorityOf));
    candidates.sort((a, b) => highest(a) - highest(b) || a.victims.length - b.victims.length || (a.state.name < b.state.name ? -1 : 1));
    const chosen = candidates[0]!;
    for (const victim of chosen.victims) {
      const marked = structuredClone(victim);
      marked.status = {
        ...(marked.status ?? {}),
        conditions: setCondition(marked.status?.conditions, {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'PreemptionByScheduler',
          message: `${this.schedulerName}: preempting to accommodate a higher priority pod`,
          lastTransitionTime: nowTimestamp(),
        }),
      };
      const written = update(this.ctx, marked) ?? victim;
      if (remove(this.ctx, written)) {
        this.ctx.events.record(written, 'Normal', 'Preempted', `Preempted by pod ${pod.metadata.uid} on node ${chosen.state.name}`, COMPONENT);
      }
    }
    return { nominated: chosen.state.name };
  }
}
