import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import { CLUSTER_AGENT_LAYOUT, describeSecret, HELM_RUNNER_LAYOUT, kubeFailure, apiStatus } from '../kube/index.js';
import {
  assessLeftover,
  describeRef,
  FINGERPRINT_ANNOTATION,
  type LeftoverReport,
  leftoverReport,
  rolloutApi,
  type WorkloadRef,
} from '../rollout/index.js';
import { ageOf } from '../rotation/age.js';
import type { ClusterSession } from '../kube/cluster-session.js';
import { rotatedAtOf } from '../rotation/targets/secret-base.js';
import { isoString } from '../time/index.js';
import type { PodRow, SecretRow } from '../results/status.js';
import { agentVersionOfImage, type ReloadBehaviour, reloadBehaviour } from '../agent/reload-behaviour.js';
import { sanitizeServerString } from '../sanitize.js';

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
  const layout =
    data[CLUSTER_AGENT_LAYOUT.privateKey] !== undefined
      ? 'cluster-agent'
      : data[HELM_RUNNER_LAYOUT.privateKey] !== undefined
        ? 'helm-runner'
        : undefined;
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
    throw kubeFailure(
      err,
      'listing namespaces (needed when Secrets cannot be listed cluster-wide)',
      'Nothing was changed. Grant list on secrets cluster-wide, or list on namespaces plus list on secrets per namespace.',
    );
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

/** The agent container's image: the Helm chart and the Operator both name it `cluster-agent`. */
function agentImage(pod: V1Pod): string | undefined {
  const containers = pod.spec?.containers ?? [];
  return (containers.find((c) => c.name === 'cluster-agent') ?? containers[0])?.image;
}

/**
 * Which identity a Pod runs: the one it started with (the `rollout` annotation), else what its agent
 * does with a changed Secret (docs/protocol.md §6d). A Pod whose agent reloads is current; one whose
 * agent may have reloaded is unknown, never reported as running the previous identity.
 */
// exported for tests: each pairing of fingerprints and reload behaviours
export function podIdentity(
  fingerprint: string | null,
  currentFingerprint: string | null,
  behaviour: ReloadBehaviour,
): { identity: PodRow['identity']; how: string } {
  if (currentFingerprint === null)
    return { identity: behaviour.reloads === 'none' ? 'previous' : 'unknown', how: 'no identity in service' };
  if (fingerprint === currentFingerprint) return { identity: 'current', how: 'started with it (rollout annotation)' };
  if (behaviour.reloads === 'urn-change') return { identity: 'current', how: `reloaded: ${behaviour.why}` };
  return { identity: behaviour.reloads === 'none' ? 'previous' : 'unknown', how: behaviour.why };
}

/**
 * Which identity each Pod runs. The fingerprint it started with comes from the annotation `rollout`
 * stamps on the template; a Pod that started with another one still runs the current identity when its
 * agent reloads a changed Secret, and may when its version is unknown (docs/protocol.md §6d): such a
 * Pod is never reported as running another identity. `readsAtStartOnly`: the runner takes its identity
 * from environment variables (the Helm runner chart), which no running container sees change.
 */
export async function podsOfWorkload(
  session: ClusterSession,
  ref: WorkloadRef,
  currentFingerprint: string | null,
  now: Date,
  readsAtStartOnly = false,
): Promise<{ pods: PodRow[]; previousRemovable: boolean; reason: string; interruptedRollout?: LeftoverReport }> {
  const api = await rolloutApi(session.conn);
  const workload = await api.readWorkload(ref);
  // A strategy an interrupted rollout left changed (its record on the workload): reported, never acted on here.
  const leftover = assessLeftover(ref.kind, workload, { now });
  const pods = (await api.podsOf(ref, workload)).map((pod): PodRow => {
    const fingerprint = pod.metadata?.annotations?.[FINGERPRINT_ANNOTATION] ?? null;
    const created = pod.metadata?.creationTimestamp;
    const version = agentVersionOfImage(agentImage(pod));
    const behaviour: ReloadBehaviour = readsAtStartOnly
      ? { reloads: 'none', why: 'it reads the identity from environment variables, set when the container starts' }
      : reloadBehaviour(version);
    const { identity, how } = podIdentity(fingerprint, currentFingerprint, behaviour);
    return {
      name: pod.metadata?.name ?? '?',
      node: pod.spec?.nodeName ?? null,
      ready: podReady(pod),
      fingerprint,
      runsCurrent: identity === 'current',
      identity,
      agentVersion: version === undefined ? null : sanitizeServerString(version, 64),
      how,
      ageSeconds: created ? ageOf(isoString(new Date(created as unknown as string)), now) : null,
    };
  });
  const previous = pods.filter((p) => p.identity === 'previous');
  const unknown = pods.filter((p) => p.identity === 'unknown');
  const previousRemovable = pods.length > 0 && previous.length === 0 && unknown.length === 0 && pods.every((p) => p.ready);
  const names = (list: PodRow[]) => list.map((p) => p.name).join(', ');
  const reason =
    pods.length === 0
      ? `${describeRef(ref)} has no Pods`
      : previous.length
        ? `${previous.length} of ${pods.length} Pods do not run the identity in service (${names(previous)}): keep the previous runner in Datadog`
        : unknown.length
          ? `${unknown.length} of ${pods.length} Pods may still run the previous identity (${names(unknown)}; ${unknown[0]!.how}): ` +
            'keep the previous runner in Datadog until they restart'
          : pods.every((p) => p.ready)
            ? 'every Pod runs the identity in service and is Ready: the previous runner can be removed in Datadog'
            : 'every Pod runs the identity in service, but not all are Ready yet';
  return {
    pods,
    previousRemovable,
    reason,
    ...(leftover.state !== 'none' ? { interruptedRollout: leftoverReport(leftover, 'reported') } : {}),
  };
}
