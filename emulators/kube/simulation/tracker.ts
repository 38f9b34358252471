import type { ChangeEvent, KubeObject } from '../types.js';
import { findCondition } from './objects.js';
import type { Pod } from './types.js';

function isReadyNow(obj: KubeObject | undefined): boolean {
  return findCondition((obj as Pod | undefined)?.status?.conditions, 'Ready')?.status === 'True';
}

/**
 * What the simulation remembers beyond the stored objects, learned from the change stream:
 * the order objects were created in (creationTimestamp only has second precision) and the
 * millisecond at which each Pod last became Ready (the Ready condition's lastTransitionTime,
 * at full precision, for minReadySeconds).
 */
export class ObjectTracker {
  private readonly createdSeq = new Map<string, number>();
  private readonly readySince = new Map<string, number>();

  observe(e: ChangeEvent): void {
    const uid = e.object.metadata.uid;
    if (!uid) return;
    if (e.type === 'DELETED') {
      this.createdSeq.delete(uid);
      this.readySince.delete(uid);
      return;
    }
    if (e.type === 'ADDED') this.createdSeq.set(uid, e.rv);
    if (e.kindKey !== 'v1/Pod') return;
    const ready = isReadyNow(e.object);
    if (!ready) this.readySince.delete(uid);
    else if (!this.readySince.has(uid) || !isReadyNow(e.prev)) this.readySince.set(uid, Date.now());
  }

  /** Orders by creationTimestamp, then by creation order (a precise stand-in for sub-second timestamps), then name. */
  compareCreation(a: KubeObject, b: KubeObject): number {
    const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
    const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
    if (ta !== tb) return ta - tb;
    const sa = this.createdSeq.get(a.metadata.uid ?? '') ?? 0;
    const sb = this.createdSeq.get(b.metadata.uid ?? '') ?? 0;
    if (sa !== sb) return sa - sb;
    const na = a.metadata.name ?? '';
    const nb = b.metadata.name ?? '';
    return na < nb ? -1 : na > nb ? 1 : 0;
  }

  /** When the Pod became Ready (ms), or undefined when it is not Ready. */
  readySinceMs(pod: Pod): number | undefined {
    if (!isReadyNow(pod)) return undefined;
    const known = this.readySince.get(pod.metadata.uid ?? '');
    if (known !== undefined) return known;
    const t = Date.parse(findCondition(pod.status?.conditions, 'Ready')?.lastTransitionTime ?? '');
    return Number.isNaN(t) ? 0 : t;
  }
}
