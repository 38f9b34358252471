import type { StrategyFields } from './strategy-record.js';
import type { WorkloadKind } from './workload-ref.js';
import { isoString } from '../time/index.js';

// Create-before-delete for the length of one rollout, and back to exactly what the user had.

export const FINGERPRINT_ANNOTATION = 'par-identity.datadoghq.com/identity-fingerprint';
const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';

function strategyPatch(kind: WorkloadKind, rollingUpdate: { maxSurge: number | string; maxUnavailable: number | string }): object {
  return kind === 'deployment'
    ? { spec: { strategy: { type: 'RollingUpdate', rollingUpdate } } }
    : { spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate } } };
}

/** Deployment: maxSurge ≥ 1, maxUnavailable 0. DaemonSet: maxSurge = budget, maxUnavailable 0. */
export function surgePatch(kind: WorkloadKind, original: StrategyFields, budget: number): object {
  if (kind === 'deployment') {
    const surge = original.maxSurge ?? undefined;
    const keep = surge !== undefined && surge !== 0 && surge !== '0%' ? surge : 1;
    return strategyPatch(kind, { maxSurge: keep, maxUnavailable: 0 });
  }
  return strategyPatch(kind, { maxSurge: budget, maxUnavailable: 0 });
}

/** The fallback where no node has room for a surge replica: delete one old Pod before its replacement, one at a time. */
export function deleteFirstPatch(kind: WorkloadKind): object {
  return strategyPatch(kind, { maxSurge: 0, maxUnavailable: 1 });
}

/** Back to `original`; an unset field gets the apiserver's default (the value it had, as the server defaults every write). */
export function restorePatch(kind: WorkloadKind, original: StrategyFields): object {
  const defaults = kind === 'deployment' ? { maxSurge: '25%', maxUnavailable: '25%' } : { maxSurge: 0, maxUnavailable: 1 };
  return strategyPatch(kind, {
    maxSurge: original.maxSurge ?? defaults.maxSurge,
    maxUnavailable: original.maxUnavailable ?? defaults.maxUnavailable,
  });
}

export function restartPatch(now: Date, fingerprint: string | undefined): object {
  const annotations: Record<string, string> = { [RESTARTED_AT_ANNOTATION]: isoString(now).replace(/\.\d{3}Z$/, 'Z') };
  if (fingerprint) annotations[FINGERPRINT_ANNOTATION] = fingerprint;
  return { spec: { template: { metadata: { annotations } } } };
}

/** Merges two strategic-merge patches that touch disjoint parts of spec. */
export function combine(a: object, b: object): object {
  const spec = { ...(a as { spec: object }).spec, ...(b as { spec: object }).spec };
  return { spec };
}

/** Puts the restart annotations back as they were, so the controller returns to the old revision. */
export function undoRestartPatch(originalAnnotations: Record<string, string> | undefined): object {
  // No annotations before: remove the map itself, so the template equals the old revision exactly.
  if (!originalAnnotations) return { spec: { template: { metadata: { annotations: null } } } };
  const annotations: Record<string, string | null> = {};
  for (const key of [RESTARTED_AT_ANNOTATION, FINGERPRINT_ANNOTATION]) annotations[key] = originalAnnotations?.[key] ?? null;
  return { spec: { template: { metadata: { annotations } } } };
}
