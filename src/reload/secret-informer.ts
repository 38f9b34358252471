import type { V1Secret } from '@kubernetes/client-node';
import { KubernetesError } from '../errors.js';
import type { KubeTransport } from '../kube/kube-transport.js';
import type { SecretRef } from '../kube/identity-secret.js';
import { strictWatch, type WatchCallback, type WatchDone } from './strict-watch.js';

// One list+watch on exactly one Secret. The field selector metadata.name=<name> is on the list AND the
// watch, so a Role that grants get/list/watch with resourceNames: [<name>] is enough (docs/protocol.md §6).
// ListWatch below is client-node's ListWatch (cache.js) ported as it is, over the cluster's transport
// (kube-transport.ts, the one every command uses) instead of the library, so an idle watcher never loads it: it re-lists after a 410 Expired, resumes
// from its resourceVersion after a watch that ended cleanly or timed out waiting for its answer, and
// on any other error stops; the supervisor restarts it.

// exported for tests: the fake informers implement it
export interface SecretInformerHooks {
  /** The Secret was added or changed (from the list or the watch). */
  upsert(secret: V1Secret): void;
  deleted(secret: V1Secret): void;
  /** A list succeeded; `secret` is undefined when it does not exist. */
  listed(secret: V1Secret | undefined, resourceVersion: string): void;
  /** Any watch event, bookmarks included: the watch is alive. */
  activity(): void;
  /** The first event of a watch stream arrived: the stream carries events. */
  watchOpened(): void;
  /** A watch request was answered 200: the stream is open (it may stay quiet for hours). */
  streamOpened?(): void;
  /** The list or the watch failed with something other than 410; the informer has stopped. */
  failed(err: unknown): void;
  /** An object that is not ours came from the list or the watch; it was not applied. */
  ignored(reason: string): void;
}

export interface SecretInformer {
  /** Lists when it has no resourceVersion (first start, after 410), else resumes the watch. */
  start(): Promise<void>;
  /** Aborts the open watch; no hook is called afterwards. */
  stop(): void;
}

export type SecretInformerFactory = (hooks: SecretInformerHooks) => SecretInformer;

function fieldSelectorFor(ref: SecretRef): string {
  return `metadata.name=${ref.name}`;
}

interface SecretList {
  metadata?: { resourceVersion?: string };
  items: V1Secret[];
}

type WatchFn = (path: string, query: Record<string, string>, callback: WatchCallback, done: WatchDone) => Promise<AbortController>;

interface ListWatchHandlers {
  add(obj: V1Secret): void;
  update(obj: V1Secret): void;
  delete(obj: V1Secret): void;
  error(err: unknown): void;
}

type Cache = Map<string, Map<string, V1Secret>>;
const keyOf = (obj: V1Secret) => ({ namespace: obj.metadata?.namespace || '', name: obj.metadata?.name || '' });

/** client-node's ListWatch (v2.0.1 cache.js) for our one Secret: same states, same order of calls. */
class ListWatch {
  static readonly BASE_RECONNECT_DELAY_MS = 1000;
  static readonly MAX_RECONNECT_DELAY_MS = 30_000;
  private objects: Cache = new Map();
  private resourceVersion = '';
  private stopped = false;
  private reconnectDelayMs = 0;
  private hasConnected = false;
  private request: AbortController | undefined;
  /** Ends a reconnect delay early on stop() (client-node's delay ran to its end, keeping the process up to 30 s). */
  private delayAbort: AbortController | undefined;

  constructor(
    private readonly path: string,
    private readonly fieldSelector: string,
    private readonly listFn: () => Promise<SecretList>,
    private readonly watch: WatchFn,
    private readonly handlers: ListWatchHandlers,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    this.reconnectDelayMs = 0;
    this.hasConnected = false;
    await this.doneHandler(null);
  }

  stop(): void {
    this.stopped = true;
    this.delayAbort?.abort();
    this.abortRequest();
  }

  private abortRequest(): void {
    this.request?.abort();
    this.request = undefined;
  }

  private async doneHandler(err: unknown): Promise<void> {
    this.abortRequest();
    const e = err as { statusCode?: unknown; code?: unknown; name?: unknown } | null;
    if (e && (e.statusCode === 410 || e.code === 410)) {
      this.resourceVersion = '';
    } else if (e && e.name === 'TimeoutError') {
      // No answer to the watch request in time: reconnect from the last resourceVersion at once.
      this.reconnectDelayMs = 0;
    } else if (e) {
      this.handlers.error(err);
      return;
    }
    if (this.stopped) return;
    if (!this.resourceVersion) {
      let list: SecretList;
      try {
        list = await this.listFn();
      } catch (listErr) {
        this.handlers.error(listErr);
        return;
      }
      this.deleteItems(list.items);
      for (const obj of list.items ?? []) this.addOrUpdate(obj);
      this.resourceVersion = list.metadata ? list.metadata.resourceVersion || '' : '';
    }
    const query: Record<string, string> = { resourceVersion: this.resourceVersion, fieldSelector: this.fieldSelector };
    if (this.reconnectDelayMs > 0 && this.hasConnected) await this.delay(this.reconnectDelayMs);
    if (this.hasConnected)
      this.reconnectDelayMs = Math.min(
        this.reconnectDelayMs > 0 ? this.reconnectDelayMs * 2 : ListWatch.BASE_RECONNECT_DELAY_MS,
        ListWatch.MAX_RECONNECT_DELAY_MS,
      );
    this.hasConnected = true;
    this.request = await this.watch(this.path, query, this.watchHandler.bind(this), this.doneHandler.bind(this));
  }

  private delay(ms: number): Promise<void> {
    const abort = new AbortController();
    this.delayAbort = abort;
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      abort.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private watchHandler(phase: string, apiObj: unknown): void {
    const obj = apiObj as V1Secret & { code?: unknown };
    switch (phase) {
      case 'ERROR':
        // 410: the stream ends next and the list starts over.
        if (obj.code === 410) this.resourceVersion = '';
        return;
      case 'ADDED':
      case 'MODIFIED':
        this.addOrUpdate(obj);
        break;
      case 'DELETED':
        this.deleteObject(obj);
        break;
      case 'BOOKMARK':
        break;
    }
    this.reconnectDelayMs = 0;
    this.resourceVersion = obj.metadata ? obj.metadata.resourceVersion || '' : '';
  }

  /** What the new list no longer holds is reported deleted. */
  private deleteItems(items: V1Secret[] | undefined): void {
    const fresh: Cache = new Map();
    for (const obj of items ?? []) {
      const { namespace, name } = keyOf(obj);
      if (!fresh.has(namespace)) fresh.set(namespace, new Map());
      fresh.get(namespace)!.set(name, obj);
    }
    for (const [namespace, old] of this.objects.entries()) {
      const now = fresh.get(namespace);
      if (now) {
        for (const [name, obj] of old.entries()) {
          if (!now.has(name)) {
            old.delete(name);
            this.handlers.delete(obj);
          }
        }
      } else {
        this.objects.delete(namespace);
        for (const obj of old.values()) this.handlers.delete(obj);
      }
    }
  }

  private addOrUpdate(obj: V1Secret): void {
    const { namespace, name } = keyOf(obj);
    let byName = this.objects.get(namespace);
    if (!byName) {
      byName = new Map();
      this.objects.set(namespace, byName);
    }
    const found = byName.get(name);
    if (!found) {
      byName.set(name, obj);
      this.handlers.add(obj);
    } else if (!(found.metadata?.resourceVersion != null && found.metadata.resourceVersion === obj.metadata?.resourceVersion)) {
      byName.set(name, obj);
      this.handlers.update(obj);
    }
  }

  private deleteObject(obj: V1Secret): void {
    const { namespace, name } = keyOf(obj);
    const byName = this.objects.get(namespace);
    if (!byName) return;
    if (byName.delete(name)) {
      this.handlers.delete(obj);
      if (byName.size === 0) this.objects.delete(namespace);
    }
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A factory of informers on `ref` over `http`, each with its own cache. */
export function secretInformerFactory(http: KubeTransport, ref: SecretRef): SecretInformerFactory {
  const fieldSelector = fieldSelectorFor(ref);
  const path = `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets`;

  return (hooks) => {
    let stopped = false;

    /** Our strict reading of the stream (strict-watch.ts), asking for bookmarks and telling the hooks when a stream opens and carries events. */
    const watch: WatchFn = async (watchPath, query, callback, done) => {
      // ListWatch opens the watch after a list even when stop() came meanwhile: do not.
      if (stopped) return new AbortController();
      let opened = false;
      const controller = await strictWatch(
        http,
        ref,
        http.limits,
        { ignored: (reason) => !stopped && hooks.ignored(reason), opened: () => !stopped && hooks.streamOpened?.() },
        watchPath,
        { ...query, allowWatchBookmarks: true },
        (phase, obj, raw) => {
          if (stopped) return;
          if (!opened) {
            opened = true;
            hooks.watchOpened();
          }
          hooks.activity();
          return callback(phase, obj, raw);
        },
        done,
      );
      if (stopped) controller.abort();
      return controller;
    };

    const list = async (): Promise<SecretList> => {
      const result = await http.getJson(path, { fieldSelector });
      if (!isObject(result) || (result.items !== undefined && result.items !== null && !Array.isArray(result.items))) {
        throw new KubernetesError(
          'WATCH_MALFORMED',
          `listing Secret ${ref.namespace}/${ref.name}: the API server sent an answer that is not a list`,
          'Nothing was applied and the current identity is kept; the list is retried with backoff.',
        );
      }
      const metadata = isObject(result.metadata) ? (result.metadata as SecretList['metadata']) : undefined;
      // Only our Secret goes into the cache: anything else would be applied as ours.
      const items = ((result.items as unknown[] | undefined) ?? []).filter((s): s is V1Secret => {
        const secret = s as V1Secret | undefined;
        const ours =
          secret?.metadata?.name === ref.name && (secret.metadata.namespace === undefined || secret.metadata.namespace === ref.namespace);
        if (!ours && !stopped) hooks.ignored(`a listed object that is not Secret ${ref.namespace}/${ref.name}`);
        return ours;
      });
      if (!stopped) hooks.listed(items[0], metadata?.resourceVersion ?? '');
      return { ...(metadata ? { metadata } : {}), items };
    };

    const unlessStopped =
      <A extends unknown[]>(fn: (...args: A) => void) =>
      (...args: A) => {
        if (!stopped) fn(...args);
      };
    const informer = new ListWatch(path, fieldSelector, list, watch, {
      add: unlessStopped(hooks.upsert),
      update: unlessStopped(hooks.upsert),
      delete: unlessStopped(hooks.deleted),
      error: unlessStopped(hooks.failed),
    });
    return {
      start: () => informer.start(),
      stop: () => {
        stopped = true;
        informer.stop();
      },
    };
  };
}
