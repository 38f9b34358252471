import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import { CLUSTER_AGENT_LAYOUT, describeSecret, HELM_RUNNER_LAYOUT, kubeFailure, apiStatus } from '../kube/index.js';
import { assessLeftover, describeRef, FINGERPRINT_ANNOTATION, type LeftoverReport, leftoverReport, rolloutApi, type WorkloadRef } from '../rollout/index.js';
import { ageOf } from './age.js';
import type { ClusterSession } from './cluster-session.js';
import { rotatedAtOf } from './targets/secret-base.js';
import { isoString } from '../time/index.js';
import type { PodRow, SecretRow } from '../results/status.js';

// Read-only views across a fleet: every identity Secret the token can see (`status --all-namespaces`)
// and which Pod of a workload runs which identity (`status --pods`).

interface FleetSecrets {
  rows: SecretRow[];
  /** Namespaces whose Secrets this token may not list: named, never silently skipped. */
  unreadable: { namespace: string; reason: string }[];
  how: string;
}

function rowOf(secret: V1Secret, now: Date): SecretRow | undefined {
  const data = secret.data ?? {};
  const layout = data[CLUSTER_AGENT_LAYOUT.privateKey] !== undefined ? 'cluster-agent' : data[HELM_RUNNER_LAYOUT.privateKey] !== undefined ? 'helm-runner' : undefined;
  if (!layout) return undefined;
  const ref = { namespace: secret.metadata?.namespace ?? '', name: secret.metadata?.name ?? '' };
  const state = describeSecret(ref, secret, layout === 'cluster-agent' ? CLUSTER_AGENT_LAYOUT : HELM_RUNNER_LAYOUT);
  const at = rotatedAtOf(secret);
  const identity = state.state === 'present' ? state.identity : undefined;
  return {
    ...ref,
    layout,
    urn: identity?.record.urn ?? null,
    fingerprint: identity?.key.kid ?? null,
    rotatedAt: at?.at ?? null,
    ageSeconds: ageOf(at?.at, now),
    ...(identity ? {} : { problem: state.state === 'present' ? (state.error?.message ?? 'does not decode') : 'missing' }),
  };
}

export async function identitySecretsEverywhere(session: ClusterSession, now: Date): Promise<FleetSecrets> {
  const { core } = session;
  const collect = (items: V1Secret[]) => items.map((s) => rowOf(s, now)).filter((r): r is SecretRow => r !== undefined);
  try {
    const all = await core.listSecretForAllNamespaces({});
    return { rows: collect(all.items), unreadable: [], how: 'one cluster-wide list' };
  } catch (err) {
    if (apiStatus(err).code !== 403) throw kubeFailure(err, 'listing Secrets in all namespaces', 'Nothing was changed.');
  }
  // No cluster-wide right: go namespace by namespace, and name the ones we cannot read.
  let namespaces: string[];
  try {
    namespaces = (await core.listNamespace({})).items.map((n) => n.metadata?.name ?? '').filter(Boolean);
  } catch (err) {
    throw kubeFailure(err, 'listing namespaces (needed when Secrets cannot be listed cluster-wide)', 'Nothing was changed. Grant list on secrets cluster-wide, or list on namespaces plus list on secrets per namespace.');
  }
  const rows: SecretRow[] = [];
  const unreadable: { namespace: string; reason: string }[] = [];
  for (const namespace of namespaces) {
    try {
      rows.push(...collect((await core.listNamespacedSecret({ namespace })).items));
    } catch (err) {
      const { code, status } = apiStatus(err);
      if (code !== 403 && code !== 404) throw kubeFailure(err, `listing Secrets in ${namespace}`, 'Nothing was changed.');
      unreadable.push({ namespace, reason: code === 403 ? 'forbidden' : (status?.message ?? 'not found') });
    }
  }
  return { rows, unreadable, how: `${namespaces.length} namespaces one by one` };
}

function podReady(pod: V1Pod): boolean {
  return !pod.metadata?.deletionTimestamp && (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** The fingerprint each Pod started with comes from the annotation `rollout` stamps on the template. */
export async function podsOfWorkload(session: ClusterSession, ref: WorkloadRef, currentFingerprint: string | null, now: Date): Promise<{ pods: PodRow[]; previousRemovable: boolean; reason: string; interruptedRollout?: LeftoverReport }> {
  const api = await rolloutApi(session.conn);
  const workload = await api.readWorkload(ref);
  // A strategy an interrupted rollout left changed (its record on the workload): reported, never acted on here.
  const leftover = assessLeftover(ref.kind, workload, { now });
  const pods = (await api.podsOf(ref, workload)).map((pod) => {
    const fingerprint = pod.metadata?.annotations?.[FINGERPRINT_ANNOTATION] ?? null;
    const created = pod.metadata?.creationTimestamp;
    return {
      name: pod.metadata?.name ?? '?',
      node: pod.spec?.nodeName ?? null,
      ready: podReady(pod),
      fingerprint,
      runsCurrent: currentFingerprint !== null && fingerprint === currentFingerprint,
      ageSeconds: created ? ageOf(isoString(new Date(created as unknown as string)), now) : null,
    };
  });
  const stale = pods.filter((p) => !p.runsCurrent);
  const previousRemovable = pods.length > 0 && stale.length === 0 && pods.every((p) => p.ready);
  const reason = pods.length === 0
    ? `${describeRef(ref)} has no Pods`
    : stale.length
      ? `${stale.length} of ${pods.length} Pods do not run the identity in service (${stale.map((p) => p.name).join(', ')}): keep the previous runner in Datadog`
      : pods.every((p) => p.ready)
        ? 'every Pod runs the identity in service and is Ready: the previous runner can be removed in Datadog'
        : 'every Pod runs the identity in service, but not all are Ready yet';
  return { pods, previousRemovable, reason, ...(leftover.state !== 'none' ? { interruptedRollout: leftoverReport(leftover, 'reported') } : {}) };
}
