import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import type { SecretRef } from '../kube/index.js';

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

/** Loads client-node once and returns a factory of informers on `ref`, each with its own cache. */
export async function secretInformerFactory(kc: KubeConfig, ref: SecretRef): Promise<SecretInformerFactory> {
  const k8s = await import('@kubernetes/client-node');
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const fieldSelector = fieldSelectorFor(ref);
  const path = `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets`;

  return (hooks) => {
    let stopped = false;

    /** client-node's Watch, asking for bookmarks and telling the hooks when a stream opens and carries events. */
    class ObservedWatch extends k8s.Watch {
      override async watch(watchPath: WatchArgs[0], query: WatchArgs[1], callback: WatchArgs[2], done: WatchArgs[3]): Promise<AbortController> {
        // ListWatch opens the watch after a list even when stop() came meanwhile: do not.
        if (stopped) return new AbortController();
        let failed = false;
        const controller = await super.watch(
          watchPath,
          { ...query, allowWatchBookmarks: true },
          (phase, obj, raw) => {
            if (!stopped) hooks.activity();
            callback(phase, obj, raw);
          },
          (err) => {
            if (err) failed = true;
            done(err);
          },
        );
        if (stopped) controller.abort();
        else if (!failed) hooks.watchOpened();
        return controller;
      }
    }

    const list = async () => {
      const result = await core.listNamespacedSecret({ namespace: ref.namespace, fieldSelector });
      if (!stopped) hooks.listed(result.items.find((s) => s.metadata?.name === ref.name), result.metadata?.resourceVersion ?? '');
      return result;
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
