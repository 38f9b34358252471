import { nowTimestamp } from '../registry.js';
import { labelSelectorMatches } from '../selectors.js';
import type { KubeObject } from '../types.js';
import type { Condition, LabelSelector } from './types.js';

export { nowTimestamp };

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
  [key: string]: unknown;
}

/** metav1.NewControllerRef. */
export function controllerRef(owner: KubeObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name!,
    uid: owner.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return (obj.metadata.ownerReferences as OwnerReference[] | undefined)?.find((r) => r.controller === true);
}

export function isControlledBy(obj: KubeObject, owner: KubeObject): boolean {
  return controllerOf(obj)?.uid === owner.metadata.uid;
}

/** metav1.LabelSelectorAsSelector + Matches. An empty selector matches everything. */
export function selectorMatches(selector: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  return labelSelectorMatches(selector, labels);
}

export function isSelectorEmpty(selector: LabelSelector | undefined): boolean {
  return !selector || (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0);
}

export function findCondition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** Replaces or appends one condition, keeping lastTransitionTime when the status did not change. */
export function setCondition(conditions: Condition[] | undefined, next: Condition): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === next.type);
  if (i < 0) return [...list, next];
  const cur = list[i]!;
  const merged = { ...next };
  if (cur.status === next.status && cur.lastTransitionTime !== undefined) merged.lastTransitionTime = cur.lastTransitionTime;
  list[i] = merged;
  return list;
}

/** The JSON of the API omits zero-valued `omitempty` integers; the simulation's status writes do the same. */
export function omitZero<T extends Record<string, unknown>>(status: T, keep: string[] = []): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(status)) {
    if (v === undefined) continue;
    if (v === 0 && !keep.includes(k)) continue;
    out[k] = v;
  }
  return out as T;
}

export function isDeleting(obj: KubeObject): boolean {
  return Boolean(obj.metadata.deletionTimestamp);
}


