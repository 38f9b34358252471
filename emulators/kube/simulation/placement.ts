import { type LabelRequirement, labelsMatch } from '../selectors.js';
import { selectorMatches } from './objects.js';
import type { NodeObject, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodAffinityTerm, Taint, Toleration } from './types.js';

/** v1helper ToleratesTaint: effect (empty tolerates all), key (empty with Exists tolerates all keys), operator. */
function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  const op = t.operator ?? 'Equal';
  if (op === 'Exists') return true;
  if (op === 'Equal') return (t.value ?? '') === (taint.value ?? '');
  return false;
}

export function tolerates(tolerations: Toleration[] | undefined, taint: Taint): boolean {
  return (tolerations ?? []).some((t) => toleratesTaint(t, taint));
}

/** FindMatchingUntoleratedTaint: the first taint passing `filter` that no toleration tolerates. */
export function untoleratedTaint(
  taints: Taint[] | undefined,
  tolerations: Toleration[] | undefined,
  filter: (t: Taint) => boolean,
): Taint | undefined {
  return (taints ?? []).find((t) => filter(t) && !tolerates(tolerations, t));
}

export const noScheduleOrExecute = (t: Taint): boolean => t.effect === 'NoSchedule' || t.effect === 'NoExecute';

function requirement(r: NodeSelectorRequirement): LabelRequirement {
  const op =
    r.operator === 'In' ? 'in' : r.operator === 'NotIn' ? 'notin' : r.operator === 'Exists' ? 'exists' : r.operator === 'DoesNotExist' ? '!' : r.operator === 'Gt' ? 'gt' : 'lt';
  return { key: r.key, op, values: r.values ?? [] };
}

/** One NodeSelectorTerm: its label expressions and field expressions (only metadata.name exists) all hold. An empty term matches nothing. */
function termMatches(term: NodeSelectorTerm, node: NodeObject): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  if (!labelsMatch(exprs.map(requirement), node.metadata.labels)) return false;
  const fieldSet = { 'metadata.name': node.metadata.name ?? '' };
  return fields.every((f) => f.key === 'metadata.name' && labelsMatch([requirement(f)], fieldSet));
}

/** nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): nodeSelector labels and the required terms (ORed). */
export function matchesRequiredAffinity(pod: Pod, node: NodeObject): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries(pod.spec.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const required = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  return (required.nodeSelectorTerms ?? []).some((t) => termMatches(t, node));
}

/**
 * The NodeAffinity plugin's PreFilter: when every term pins metadata.name with In, only those
 * nodes are evaluated (undefined: all nodes; an empty set: the terms conflict).
 */
export function preFilterNodeNames(pod: Pod): Set<string> | undefined {
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return undefined;
  let names: Set<string> | undefined;
  for (const t of terms) {
    let termNames: Set<string> | undefined;
    for (const r of t.matchFields ?? []) {
      if (r.key !== 'metadata.name' || r.operator !== 'In') continue;
      const s = new Set(r.values ?? []);
      termNames = termNames ? new Set([...termNames].filter((n) => s.has(n))) : s;
    }
    if (!termNames) return undefined;
    names = new Set([...(names ?? []), ...termNames]);
  }
  return names;
}

/** A bound Pod and the labels of its node, as the scheduler snapshot holds them. */
export interface PlacedPod {
  pod: Pod;
  nodeLabels: Record<string, string>;
}

/**
 * Whether `candidate` is selected by `term` of `owner`: the term's namespaces (the owner's own
 * when none are named and there is no namespaceSelector; an empty namespaceSelector means all)
 * and its labelSelector (a missing one selects nothing).
 */
function termSelects(term: PodAffinityTerm, owner: Pod, candidate: Pod, namespaceLabels: (ns: string) => Record<string, string> | undefined): boolean {
  if (!term.labelSelector) return false;
  const ns = candidate.metadata.namespace ?? '';
  const named = term.namespaces ?? [];
  let inScope: boolean;
  if (named.length === 0 && !term.namespaceSelector) inScope = ns === owner.metadata.namespace;
  else inScope = named.includes(ns) || (term.namespaceSelector ? selectorMatches(term.namespaceSelector, namespaceLabels(ns)) : false);
  return inScope && selectorMatches(term.labelSelector, candidate.metadata.labels);
}

function sameDomain(key: string, a: Record<string, string>, b: Record<string, string>): boolean {
  return a[key] !== undefined && a[key] === b[key];
}

/**
 * The InterPodAffinity filter (required terms only), in its order: the Pod's affinity
 * (unresolvable), its anti-affinity, then the anti-affinity of Pods already placed.
 */
export function interPodAffinityFailure(
  pod: Pod,
  nodeLabels: Record<string, string>,
  placed: PlacedPod[],
  namespaceLabels: (ns: string) => Record<string, string> | undefined,
): { code: 'Unschedulable' | 'UnschedulableAndUnresolvable'; reason: string } | undefined {
  const affinity = pod.spec.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  if (affinity.length > 0) {
    const inDomain = (t: PodAffinityTerm): boolean => placed.some((p) => sameDomain(t.topologyKey, nodeLabels, p.nodeLabels) && termSelects(t, pod, p.pod, namespaceLabels));
    const anyMatch = affinity.some((t) => placed.some((p) => termSelects(t, pod, p.pod, namespaceLabels)));
    // The first Pod of a group that selects itself may go anywhere its topology keys exist.
    const selfMatch = !anyMatch && affinity.every((t) => termSelects(t, pod, pod, namespaceLabels) && nodeLabels[t.topologyKey] !== undefined);
    if (!selfMatch && !affinity.every(inDomain)) return { code: 'UnschedulableAndUnresolvable', reason: "node(s) didn't match pod affinity rules" };
  }
  const anti = pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  if (anti.some((t) => placed.some((p) => sameDomain(t.topologyKey, nodeLabels, p.nodeLabels) && termSelects(t, pod, p.pod, namespaceLabels)))) {
    return { code: 'Unschedulable', reason: "node(s) didn't match pod anti-affinity rules" };
  }
  for (const p of placed) {
    const terms = p.pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
    if (terms.some((t) => sameDomain(t.topologyKey, nodeLabels, p.nodeLabels) && termSelects(t, p.pod, pod, namespaceLabels))) {
      return { code: 'Unschedulable', reason: "node(s) didn't satisfy existing pods anti-affinity rules" };
    }
  }
  return undefined;
}
