import type { ServerResponse } from 'node:http';
import { apiVersionOf, type KindInfo, keyOf, servedForm } from './kinds.js';
import { type FieldRequirement, fieldsMatch, type LabelRequirement, labelsMatch } from './selectors.js';
import { expired } from './status-errors.js';
import type { Store } from './store.js';
import type { ChangeEvent, KubeObject } from './types.js';

interface WatchRequest {
  info: KindInfo;
  namespace?: string;
  labels: LabelRequirement[];
  fields: FieldRequirement[];
  resourceVersion: string;
  allowBookmarks: boolean;
  timeoutSeconds?: number;
  sendInitialEvents?: boolean;
}

type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

function fieldSet(info: KindInfo, obj: KubeObject): Record<string, string> {
  const f: Record<string, string> = { 'metadata.name': obj.metadata.name ?? '' };
  if (info.namespaced) f['metadata.namespace'] = obj.metadata.namespace ?? '';
  for (const [k, get] of Object.entries(info.fieldLabels)) f[k] = get(obj as Record<string, unknown>);
  return f;
}

export function selects(w: Pick<WatchRequest, 'info' | 'namespace' | 'labels' | 'fields'>, obj: KubeObject): boolean {
  if (w.namespace && obj.metadata.namespace !== w.namespace) return false;
  return labelsMatch(w.labels, obj.metadata.labels) && fieldsMatch(w.fields, fieldSet(w.info, obj));
}

/**
 * What a watcher with these selectors sees of one change, as the watch cache computes it:
 * an object moving into the selection is ADDED, one moving out is DELETED (old content, new RV).
 */
function project(w: WatchRequest, e: ChangeEvent): { type: WatchEventType; object: KubeObject } | undefined {
  const now = selects(w, e.object);
  const before = e.prev ? selects(w, e.prev) : false;
  if (e.type === 'ADDED') return now ? { type: 'ADDED', object: e.object } : undefined;
  if (e.type === 'DELETED') return before ? { type: 'DELETED', object: e.object } : undefined;
  if (now && before) return { type: 'MODIFIED', object: e.object };
  if (now) return { type: 'ADDED', object: e.object };
  if (before) {
    const gone = structuredClone(e.prev!);
    gone.metadata.resourceVersion = String(e.rv);
    return { type: 'DELETED', object: gone };
  }
  return undefined;
}

/** Open watch streams, so they can be ended together on close or dropped by a fault. */
export class WatchHub {
  private readonly open = new Set<{ end: () => void; drop: () => void; write?: (text: string) => void }>();

  add(entry: { end: () => void; drop: () => void; write?: (text: string) => void }): () => void {
    this.open.add(entry);
    return () => this.open.delete(entry);
  }

  endAll(): number {
    const all = [...this.open];
    for (const e of all) e.end();
    return all.length;
  }

  /** Writes raw text into every open stream (fault injection). */
  writeAll(text: string): number {
    const all = [...this.open].filter((e) => e.write);
    for (const e of all) e.write!(text);
    return all.length;
  }

  dropAll(): number {
    const all = [...this.open];
    for (const e of all) e.drop();
    return all.length;
  }

  get size(): number {
    return this.open.size;
  }
}

/** Puts kind and apiVersion first, as the apiserver's encoder does. */
export function withTypeMeta(info: KindInfo, obj: KubeObject): KubeObject {
  const typeMeta = { kind: info.kind, apiVersion: apiVersionOf(info) };
  return Object.assign({ ...typeMeta }, servedForm(info, obj), typeMeta);
}

/**
 * Streams watch events as newline-delimited JSON over a chunked 200 response. A resume point
 * older than the kept history gets a single ERROR event with a 410 Expired Status, as the
 * watch cache sends it, so informers re-list.
 */
export function serveWatch(store: Store, hub: WatchHub, res: ServerResponse, w: WatchRequest, bookmarkIntervalMs: number): void {
  const kindKey = keyOf(w.info);
  let lastRv = store.currentRv;
  let closed = false;
  const timers: NodeJS.Timeout[] = [];

  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  res.socket?.setNoDelay(true);
  res.flushHeaders();

  const send = (type: WatchEventType, object: unknown): void => {
    if (closed) return;
    res.write(`${JSON.stringify({ type, object })}\n`);
  };
  const sendObject = (type: WatchEventType, obj: KubeObject): void => {
    send(type, withTypeMeta(w.info, obj));
    lastRv = Math.max(lastRv, Number(obj.metadata.resourceVersion ?? 0));
  };
  const bookmark = (annotations?: Record<string, string>): void => {
    const rv = Math.max(lastRv, store.currentRv);
    const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
    if (annotations) metadata['annotations'] = annotations;
    send('BOOKMARK', { kind: w.info.kind, apiVersion: apiVersionOf(w.info), metadata });
  };

  let unsubscribe = (): void => {};
  let unregister = (): void => {};
  const cleanup = (): void => {
    if (closed) return;
    closed = true;
    for (const t of timers) clearTimeout(t);
    unsubscribe();
    unregister();
  };
  const end = (): void => {
    if (closed) return;
    cleanup();
    res.end();
  };
  const drop = (): void => {
    if (closed) return;
    cleanup();
    res.socket?.destroy();
    res.destroy();
  };
  res.on('close', cleanup);

  const rvParam = w.resourceVersion;
  const startRv = rvParam === '' || rvParam === '0' ? undefined : Number(rvParam);
  if (startRv !== undefined && (!Number.isFinite(startRv) || startRv < 0)) {
    send('ERROR', expired(`too old resource version: ${rvParam} (${store.oldestResumableRv})`).status);
    end();
    return;
  }
  if (startRv !== undefined && startRv < store.oldestResumableRv) {
    send('ERROR', expired(`too old resource version: ${startRv} (${store.oldestResumableRv})`).status);
    end();
    return;
  }

  // Both the backlog and the subscription are taken in this same tick, so no change falls between them.
  const backlog: Array<{ type: WatchEventType; object: KubeObject }> = [];
  if (startRv === undefined || w.sendInitialEvents) {
    for (const obj of store.list(kindKey, w.info.namespaced ? w.namespace : undefined)) {
      if (selects(w, obj)) backlog.push({ type: 'ADDED', object: obj });
    }
  } else {
    for (const e of store.changesAfter(kindKey, startRv) ?? []) {
      const p = project(w, e);
      if (p) backlog.push(p);
    }
  }
  unsubscribe = store.subscribe((e) => {
    if (e.kindKey !== kindKey) return;
    const p = project(w, e);
    if (p) sendObject(p.type, p.object);
  });
  unregister = hub.add({
    end,
    drop,
    write: (text) => {
      if (!closed) res.write(text);
    },
  });

  for (const b of backlog) sendObject(b.type, b.object);
  if (w.sendInitialEvents && w.allowBookmarks) bookmark({ 'k8s.io/initial-events-end': 'true' });

  if (w.allowBookmarks && bookmarkIntervalMs > 0) {
    const tick = (): void => {
      bookmark();
      timers.push(setTimeout(tick, bookmarkIntervalMs));
    };
    timers.push(setTimeout(tick, bookmarkIntervalMs));
  }
  if (w.timeoutSeconds !== undefined && w.timeoutSeconds > 0) {
    timers.push(
      setTimeout(() => {
        // The apiserver tries to leave a bookmark before a watch times out so the client resumes cheaply.
        if (w.allowBookmarks) bookmark();
        end();
      }, w.timeoutSeconds * 1000),
    );
  }
}
