import type { V1Node, V1NodeSelectorRequirement, V1PodSpec, V1Taint, V1Toleration } from '@kubernetes/client-node';

// Whether a Pod of a template may go to a node at all, as the scheduler filters (docs/rollout.md §6):
// the node's state, its NoSchedule/NoExecute taints, the Pod's nodeSelector and required node
// affinity. The room on a node only matters for the nodes that pass.

function tolerates(tolerations: V1Toleration[], taint: V1Taint): boolean {
  return tolerations.some(
    (t) =>
      (t.operator === 'Exists' ? !t.key || t.key === taint.key : t.key === taint.key && (t.value ?? '') === (taint.value ?? '')) &&
      (!t.effect || t.effect === taint.effect),
  );
}

/** Why no new Pod can start on the node now: not Ready, under pressure, cordoned, being deleted. */
export function nodeStateProblems(node: V1Node): string[] {
  const problems: string[] = [];
  const conditions = node.status?.conditions ?? [];
  if (conditions.find((c) => c.type === 'Ready')?.status !== 'True') problems.push('node not Ready');
  for (const pressure of ['MemoryPressure', 'DiskPressure', 'PIDPressure'])
    if (conditions.find((c) => c.type === pressure)?.status === 'True') problems.push(pressure);
  if (node.spec?.unschedulable) problems.push('node cordoned');
  if (node.metadata?.deletionTimestamp) problems.push('node being deleted');
  return problems;
}

/** The node's NoSchedule/NoExecute taints that the Pod does not tolerate. */
export function untoleratedTaints(node: V1Node, spec: V1PodSpec | undefined): string[] {
  return (node.spec?.taints ?? [])
    .filter((taint) => (taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') && !tolerates(spec?.tolerations ?? [], taint))
    .map((taint) => `taint ${taint.key}:${taint.effect} not tolerated`);
}

function matches(requirement: V1NodeSelectorRequirement, value: string | undefined): boolean {
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      const [n, bound] = [Number(value), Number(values[0])];
      if (value === undefined || !Number.isInteger(n) || !Number.isInteger(bound)) return false;
      return requirement.operator === 'Gt' ? n > bound : n < bound;
    }
    default:
      // An operator this check does not know: the node may pass, so the check does not rule it out.
      return true;
  }
}

/** nodeSelector and requiredDuringSchedulingIgnoredDuringExecution: the node is one the Pod may be scheduled to. */
export function selectsNode(node: V1Node, spec: V1PodSpec | undefined): boolean {
  const labels = node.metadata?.labels ?? {};
  for (const [key, value] of Object.entries(spec?.nodeSelector ?? {})) if (labels[key] !== value) return false;
  const terms = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms?.length) return true;
  // Terms are ORed; the requirements of one term are ANDed.
  return terms.some((term) => {
    const expressions = term.matchExpressions ?? [];
    const fields = term.matchFields ?? [];
    // An empty term matches no node, as in Kubernetes.
    if (!expressions.length && !fields.length) return false;
    return (
      expressions.every((r) => matches(r, labels[r.key])) &&
      fields.every((r) => (r.key === 'metadata.name' ? matches(r, node.metadata?.name) : true))
    );
  });
}
