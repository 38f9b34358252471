import type { ChangeEvent, ChangeType, KubeObject } from './types.js';

function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

/**
 * Versioned object storage shared by every kind, standing in for etcd plus the watch cache:
 * one global revision counter, a bounded history of changes (for watch resume and exact-RV
 * reads) and synchronous change listeners.
 */
export class Store {
  private rv = 0;
  private readonly data = new Map<string, Map<string, KubeObject>>();
  private history: ChangeEvent[] = [];
  /** Every change with rv > compactedRv is still in `history`. */
  private compactedRv = 0;
  private readonly listeners = new Set<(e: ChangeEvent) => void>();

  constructor(private readonly historyLimit: number) {}

  get currentRv(): number {
    return this.rv;
  }

  /** The smallest RV a watch can resume from; older RVs are answered with 410 Expired. */
  get oldestResumableRv(): number {
    return this.compactedRv;
  }

  private bucket(kindKey: string): Map<string, KubeObject> {
    let b = this.data.get(kindKey);
    if (!b) {
      b = new Map();
      this.data.set(kindKey, b);
    }
    return b;
  }

  get(kindKey: string, namespace: string | undefined, name: string): KubeObject | undefined {
    const o = this.data.get(kindKey)?.get(objectKey(namespace, name));
    return o ? structuredClone(o) : undefined;
  }

  /** Objects sorted by namespace/name, the order of etcd keys and so of apiserver lists. */
  list(kindKey: string, namespace?: string): KubeObject[] {
    return sortByKey(
      [...(this.data.get(kindKey)?.values() ?? [])]
        .filter((o) => namespace === undefined || o.metadata.namespace === namespace)
        .map((o) => structuredClone(o)),
    );
  }

  /** Stores (or removes, for DELETED) `object`, stamping the next resourceVersion on it. */
  commit(kindKey: string, type: ChangeType, object: KubeObject): KubeObject {
    const name = object.metadata.name!;
    const key = objectKey(object.metadata.namespace, name);
    const bucket = this.bucket(kindKey);
    const prev = bucket.get(key);
    this.rv++;
    const stored = structuredClone(object);
    stored.metadata.resourceVersion = String(this.rv);
    if (type === 'DELETED') bucket.delete(key);
    else bucket.set(key, stored);
    const event: ChangeEvent = { type, kindKey, rv: this.rv, object: stored };
    if (prev) event.prev = prev;
    this.history.push(event);
    while (this.history.length > this.historyLimit) {
      const dropped = this.history.shift()!;
      this.compactedRv = dropped.rv;
    }
    for (const l of [...this.listeners]) {
      try {
        l(event);
      } catch {
        // A failing observer must not undo or block a committed write.
      }
    }
    return structuredClone(stored);
  }

  /** Changes with rv > `rv` for one kind; undefined when history no longer reaches back that far. */
  changesAfter(kindKey: string | undefined, rv: number): ChangeEvent[] | undefined {
    if (rv < this.compactedRv) return undefined;
    return this.history.filter((e) => e.rv > rv && (kindKey === undefined || e.kindKey === kindKey));
  }

  /** The objects of one kind as they were at `rv`, rebuilt by undoing later changes. */
  stateAt(kindKey: string, rv: number): KubeObject[] | undefined {
    if (rv >= this.rv) return this.list(kindKey);
    if (rv < this.compactedRv) return undefined;
    const state = new Map<string, KubeObject>();
    for (const [k, o] of this.data.get(kindKey) ?? []) state.set(k, o);
    for (let i = this.history.length - 1; i >= 0; i--) {
      const e = this.history[i]!;
      if (e.rv <= rv) break;
      if (e.kindKey !== kindKey) continue;
      const key = objectKey(e.object.metadata.namespace, e.object.metadata.name!);
      if (e.type === 'ADDED') state.delete(key);
      else state.set(key, e.prev!);
    }
    return sortByKey([...state.values()].map((o) => structuredClone(o)));
  }

  compact(): void {
    this.history = [];
    this.compactedRv = this.rv;
  }

  subscribe(listener: (e: ChangeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

function sortByKey(objects: KubeObject[]): KubeObject[] {
  return objects.sort((a, b) => {
    const ka = objectKey(a.metadata.namespace, a.metadata.name ?? '');
    const kb = objectKey(b.metadata.namespace, b.metadata.name ?? '');
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
}
