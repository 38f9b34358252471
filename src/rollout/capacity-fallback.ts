import type { V1DaemonSet, V1Node, V1Pod } from '@kubernetes/client-node';
import { freeOnNode, podRequests } from './eligibility.js';
import { nodeStateProblems, untoleratedTaints } from './node-fit.js';
import type { RolloutApi } from './rollout-api.js';
import { isReady } from './rollout-status.js';
import type { WorkloadRef } from './workload-ref.js';
import { failpoint } from '../failpoint.js';
import { isoString } from '../time/index.js';
import type { FallbackStep } from '../results/rotation.js';

// Delete-before-create for one node whose surge Pod cannot fit (docs/rollout.md §6). Fail closed: every
// condition is re-read from the live cluster, one node per step, and the old Pod is deleted with a
// UID precondition so a replacement of the same name is never deleted by mistake.

const RESERVATION_ANNOTATION = 'par-identity.datadoghq.com/fallback-reservation';

export type { FallbackStep };

/** Other nodes failing only because the Pod is pinned elsewhere, in old and new scheduler wording. */
const PINNED_ELSEWHERE = [
  /^node\(s\) didn't match Pod's node affinity\/selector$/,
  /^node\(s\) didn't satisfy plugin\(s\) \[NodeAffinity\]$/,
];

/** Only a lack of cpu/memory on the node the Pod is pinned to (other nodes are expected affinity mismatches). */
// exported for tests: the scheduler messages it accepts, one by one
export function onlyCapacityShortage(message: string | undefined): boolean {
  if (!message) return false;
  const match = /nodes are available: (.*)$/s.exec(message);
  if (!match) return false;
  // The scheduler's own reasons end where the PostFilter part ("preemption: ...") begins.
  const filter = match[1]!.split(/\.\s+(?:no new claims to deallocate, )?preemption:/)[0]!.replace(/\.$/, '');
  let capacity = false;
  for (const reason of filter.split(/, /)) {
    const text = reason.replace(/^\d+ /, '').trim();
    if (/^Insufficient (cpu|memory)$/.test(text)) capacity = true;
    else if (!PINNED_ELSEWHERE.some((re) => re.test(text))) return false;
  }
  return capacity;
}

function pendingUnschedulable(pod: V1Pod): string | undefined {
  if (pod.status?.phase !== 'Pending' || pod.spec?.nodeName || pod.status?.nominatedNodeName) return undefined;
  const cond = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  return cond?.status === 'False' && cond.reason === 'Unschedulable' ? cond.message : undefined;
}

// exported for tests: each way a Pod is pinned to a node
export function targetNode(pod: V1Pod): string | undefined {
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const term of terms) {
    const field = term.matchFields?.find((f) => f.key === 'metadata.name' && f.operator === 'In');
    if (field?.values?.length === 1) return field.values[0];
  }
  return undefined;
}

function nodeProblems(node: V1Node, pod: V1Pod): string[] {
  return [...nodeStateProblems(node), ...untoleratedTaints(node, pod.spec)];
}

interface FallbackContext {
  api: RolloutApi;
  ref: WorkloadRef;
  /** The DaemonSet as seen when the rollout started. */
  uid: string;
  /** Revision hash of the new Pods; a change means someone else changed the DaemonSet. */
  newRevision: string;
  budget: number;
  now: () => Date;
}

/** At most one deletion per call. Returns what it did or why it did nothing. */
export async function fallbackStep(ctx: FallbackContext, pods: V1Pod[]): Promise<FallbackStep | undefined> {
  const isNew = (p: V1Pod) => p.metadata?.labels?.['controller-revision-hash'] === ctx.newRevision;
  const candidate = pods.find((p) => isNew(p) && onlyCapacityShortage(pendingUnschedulable(p)) && targetNode(p));
  if (!candidate) return undefined;
  const node = targetNode(candidate)!;
  const skip = (skipped: string): FallbackStep => ({ node, skipped });
  // Re-read everything: status and deletions are observed at different times.
  const ds = (await ctx.api.readWorkload(ctx.ref)) as V1DaemonSet;
  if (ds.metadata?.uid !== ctx.uid) return skip('the DaemonSet was replaced (UID changed)');
  if ((ds.metadata?.generation ?? 0) !== (ds.status?.observedGeneration ?? -1))
    return skip('the controller has not observed the latest generation yet');
  const livePods = await ctx.api.podsOf(ctx.ref, ds);
  if (!livePods.some((p) => isNew(p))) return skip('the current revision changed');
  const old = livePods.filter((p) => !isNew(p) && p.spec?.nodeName === node && !p.metadata?.deletionTimestamp);
  const availableOld = old.filter(isReady);
  // No old Pod left: an earlier step (or the controller) already made room; the scheduler is next.
  if (old.length === 0) return undefined;
  if (old.length !== 1 || availableOld.length !== 1)
    return skip(`expected exactly one available old Pod on ${node}, found ${availableOld.length} of ${old.length}`);
  const nodeObj = (await ctx.api.nodes()).find((n) => n.metadata?.name === node);
  if (!nodeObj) return skip(`node ${node} is gone`);
  const problems = nodeProblems(nodeObj, candidate);
  if (problems.length) return skip(problems.join(', '));
  const oldPod = availableOld[0]!;
  const oldNeeds = podRequests(oldPod.spec);
  const newNeeds = podRequests(candidate.spec);
  if (oldNeeds.milliCpu <= 0 && oldNeeds.bytes <= 0) return skip('the old Pod requests nothing, so deleting it frees nothing');
  const free = freeOnNode(nodeObj, await ctx.api.podsOnNode(node));
  if (free.milliCpu + oldNeeds.milliCpu < newNeeds.milliCpu || free.bytes + oldNeeds.bytes < newNeeds.bytes)
    return skip('the new Pod would not fit even after removing the old one');
  const terminatingNodes = new Set(livePods.filter((p) => p.metadata?.deletionTimestamp).map((p) => p.spec?.nodeName));
  const used = (ds.status?.numberUnavailable ?? 0) + terminatingNodes.size;
  if (used >= ctx.budget)
    return skip(`budget used: ${ds.status?.numberUnavailable ?? 0} unavailable + ${terminatingNodes.size} terminating ≥ ${ctx.budget}`);
  await ctx.api.annotatePod(ctx.ref.namespace, candidate.metadata!.name!, {
    [RESERVATION_ANNOTATION]: `${node} ${isoString(ctx.now())} replaces ${oldPod.metadata?.name}`,
  });
  try {
    // A test stops here and replaces the old Pod by one of the same name (a new UID): on a real
    // apiserver that is the only way to prove the precondition below refuses the delete (409).
    failpoint('rollout-before-fallback-delete');
    await ctx.api.deletePod(ctx.ref.namespace, oldPod.metadata!.name!, oldPod.metadata!.uid!);
  } catch (err) {
    // 409 from the UID precondition: a new Pod took that name meanwhile, and it is never deleted.
    if ((err as { code?: string }).code === 'CONFLICT')
      return skip(`Pod ${oldPod.metadata?.name} was replaced meanwhile (UID changed); not deleted`);
    throw err;
  }
  return { node, deletedPod: oldPod.metadata!.name! };
}
