import type { KubeObject } from '../types.js';
import { list, remove, type SimContext } from './context.js';
import type { OwnerReference } from './objects.js';

/** The kinds whose dependents the simulation collects, and the kinds that own them. */
const DEPENDENTS: Array<[string, string]> = [
  ['apps/v1', 'ReplicaSet'],
  ['apps/v1', 'ControllerRevision'],
  ['batch/v1', 'Job'],
  ['v1', 'Pod'],
];

/**
 * The garbage collector with background propagation: an object whose owners (by uid) are all
 * gone is deleted. Foreground deletion and orphaning are not simulated.
 */
export class GarbageCollector {
  constructor(private readonly ctx: SimContext) {}

  sync(): void {
    for (const [apiVersion, kind] of DEPENDENTS) {
      for (const obj of list<KubeObject>(this.ctx, apiVersion, kind)) {
        const owners = (obj.metadata.ownerReferences as OwnerReference[] | undefined) ?? [];
        if (owners.length === 0 || obj.metadata.deletionTimestamp) continue;
        // Background, as the collector deletes: a Job it collects takes its Pods along (batch/v1 would orphan them by default).
        if (owners.every((o) => !this.ownerExists(o, obj.metadata.namespace))) remove(this.ctx, obj, { propagationPolicy: 'Background' });
      }
    }
  }

  private ownerExists(ref: OwnerReference, namespace: string | undefined): boolean {
    if (!this.ctx.emu.kinds.byApiVersionKind(ref.apiVersion, ref.kind)) return true;
    const owner = this.ctx.emu.getObject(ref.apiVersion, ref.kind, namespace, ref.name);
    return owner !== undefined && owner.metadata.uid === ref.uid;
  }
}
