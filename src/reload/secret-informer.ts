import type { CoreV1Api, KubeConfig, V1Secret } from '@kubernetes/client-node';
import type { RequestLimits } from '../kube/kube-clients.js';
import type { SecretRef } from '../kube/index.js';
import { strictWatch } from './strict-watch.js';

// One list+watch on exactly one Secret, built on client-node's ListWatch. The field selector
// metadata.name=<name> is on the list AND the watch, so a Role that grants get/list/watch with
// resourceNames: [<name>] is enough (protocol §6). ListWatch itself re-lists after a 410 Expired
// and resumes after a watch that ended cleanly; on any other error it stops, and the supervisor
// restarts it.

export interface SecretInformerHooks {
  /** The Secret was added or changed (from the list or the watch). */
  upsert(secret: V1Secret): void;
  deleted(secret: V1Secret): void;
  /** A list succeeded; `secret` is undefined when it does not exist. */
  listed(secret: V1Secret | undefined, resourceVersion: string): void;
  /** Any watch event, bookmarks included: the watch is alive. */
  activity(): void;
  /** A watch request was answered 200: the stream is open. */
  watchOpened(): void;
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

export function fieldSelectorFor(ref: SecretRef): string {
  return `metadata.name=${ref.name}`;
}

type WatchArgs = Parameters<import('@kubernetes/client-node').Watch['watch']>;

export interface InformerConnection {
  kubeConfig: KubeConfig;
  /** A CoreV1Api with per-request timeouts (ClusterConnection.core()); else one is made from kubeConfig. */
  core?: CoreV1Api;
  limits?: RequestLimits;
}

/** Loads client-node once and returns a factory of informers on `ref`, each with its own cache. */
export async function secretInformerFactory(conn: InformerConnection, ref: SecretRef): Promise<SecretInformerFactory> {
  const k8s = await import('@kubernetes/client-node');
  const kc = conn.kubeConfig;
  const core = conn.core ?? kc.makeApiClient(k8s.CoreV1Api);
  const limits = conn.limits ?? {};
  const fieldSelector = fieldSelectorFor(ref);
  const path = `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets`;

  return (hooks) => {
    let stopped = false;

    /** Our strict reading of the stream (strict-watch.ts), asking for bookmarks and telling the hooks when a stream opens and carries events. */
    class ObservedWatch extends k8s.Watch {
      override async watch(watchPath: WatchArgs[0], query: WatchArgs[1], callback: WatchArgs[2], done: WatchArgs[3]): Promise<AbortController> {
        // ListWatch opens the watch after a list even when stop() came meanwhile: do not.
        if (stopped) return new AbortController();
        let opened = false;
        const controller = await strictWatch(
          k8s,
          kc,
          ref,
          limits,
          { ignored: (reason) => !stopped && hooks.ignored(reason) },
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
      }
    }

    const list = async () => {
      const result = await core.listNamespacedSecret({ namespace: ref.namespace, fieldSelector });
      // Only our Secret goes into ListWatch's cache: anything else would be applied as ours, and an
      // item without metadata would throw inside it.
      const items = (result.items ?? []).filter((s) => {
        const ours = s?.metadata?.name === ref.name && (s.metadata.namespace === undefined || s.metadata.namespace === ref.namespace);
        if (!ours && !stopped) hooks.ignored(`a listed object that is not Secret ${ref.namespace}/${ref.name}`);
        return ours;
      });
      if (!stopped) hooks.listed(items[0], result.metadata?.resourceVersion ?? '');
      return { ...result, items };
    };
    const informer = new k8s.ListWatch<V1Secret>(path, new ObservedWatch(kc), list, false, undefined, fieldSelector);
    const unlessStopped =
      <A extends unknown[]>(fn: (...args: A) => void) =>
      (...args: A) => {
        if (!stopped) fn(...args);
      };
    informer.on('add', unlessStopped(hooks.upsert));
    informer.on('update', unlessStopped(hooks.upsert));
    informer.on('delete', unlessStopped(hooks.deleted));
    informer.on('error', unlessStopped(hooks.failed));
    return {
      start: () => informer.start(),
      stop: () => {
        stopped = true;
        void informer.stop();
      },
    };
  };
}
