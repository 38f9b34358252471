import { EventEmitter } from 'node:events';
import type { V1Secret } from '@kubernetes/client-node';
import { defaultRetryPolicy, type Clock, type RetryPolicy, systemClock } from '../time/index.js';
import { InterruptedError } from '../errors.js';
import type { DecodedIdentity } from '../identity/index.js';
import type { ClusterTarget } from '../kube/cluster-connection.js';
import type { SecretRef } from '../kube/identity-secret.js';
import { kubeFailure } from '../kube/kube-errors.js';
import type { KubeTransport } from '../kube/kube-transport.js';
import { KubernetesError } from '../errors.js';
import { changedFields, IdentityTracker, type TrackerDecision } from './identity-tracker.js';
import { DEFAULT_RELIST_INTERVAL_MS, InformerSupervisor } from './informer-supervisor.js';
import { ReloadMetrics } from './reload-metrics.js';
import { type SecretInformerFactory, secretInformerFactory } from './secret-informer.js';
import type { ListReason, WatchEvent } from './watch-events.js';

// The watcher as a library: follows one identity Secret and always has the last valid identity
// ready for the caller (a runner signs every call with current()). Nothing here prints.

export interface WatchIdentityOptions {
  /**
   * The cluster (resolveClusterTarget, or a ClusterConnection from resolveCluster): the list and watch
   * go through its transport, as every other request of par-identity (authentication, TLS, proxy,
   * per-request timeout). Unused when `informerFactory` replaces the informer.
   */
  connection?: ClusterTarget;
  namespace: string;
  name: string;
  /** Full re-list on a fresh watch this often, the backstop for a silently dead watch. Default 10 min; 0 turns it off. */
  relistIntervalMs?: number;
  /** Wait a random 0…splayMs before applying a rotation, so a fleet does not reload in lockstep. Default 0. */
  splayMs?: number;
  /** Restart backoff after watch/list errors. Default 1 s doubling to 30 s, equal jitter. */
  retryPolicy?: RetryPolicy;
  clock?: Clock;
  /** Randomness of the splay (tests pin it). Default Math.random. */
  random?: () => number;
  /** Replaces the Kubernetes informer (unit tests). */
  informerFactory?: SecretInformerFactory;
}

type LoadDecision = Extract<TrackerDecision, { action: 'load' }>;

interface WatchEventMap {
  event: [WatchEvent];
}

export interface IdentityWatch {
  readonly ref: SecretRef;
  /** The identity to sign with now; undefined until the first valid one is loaded. */
  current(): DecodedIdentity | undefined;
  /** Every event, in order, on 'event'. Listeners run synchronously and must not throw. */
  readonly events: EventEmitter<WatchEventMap>;
  /** Resolves with the first identity; rejects with INTERRUPTED when stop() comes first. */
  readonly ready: Promise<DecodedIdentity>;
  readonly metrics: ReloadMetrics;
  /** Closes the watch and cancels timers; idempotent. */
  stop(): Promise<void>;
}

export function watchIdentity(options: WatchIdentityOptions): IdentityWatch {
  const ref: SecretRef = { namespace: options.namespace, name: options.name };
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const splayMs = Math.max(0, options.splayMs ?? 0);
  const events = new EventEmitter<WatchEventMap>();
  const metrics = new ReloadMetrics({ namespace: ref.namespace, secret: ref.name }, clock.now());
  const tracker = new IdentityTracker(ref);
  const at = () => new Date(clock.now());
  let stopped = false;
  let supervisor: InformerSupervisor | undefined;
  const splay: { pending?: LoadDecision; timer?: AbortController } = {};

  let resolveReady!: (identity: DecodedIdentity) => void;
  let rejectReady!: (err: unknown) => void;
  const ready = new Promise<DecodedIdentity>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  // Callers that never await `ready` must not get an unhandled rejection from stop().
  ready.catch(() => undefined);

  const emit = (event: WatchEvent): void => {
    metrics.observe(event);
    events.emit('event', event);
  };
  const kept = () => {
    const fingerprint = tracker.current()?.key.kid;
    return fingerprint ? { keptFingerprint: fingerprint } : {};
  };

  const commit = (decision: LoadDecision, waitedMs: number): void => {
    const committed = tracker.commit(decision.identity);
    if (!committed) return;
    const { previous } = committed;
    const identity = decision.identity;
    emit({
      type: 'loaded',
      at: at(),
      reason: previous ? 'rotated' : 'initial',
      urn: identity.record.urn,
      fingerprint: identity.key.kid,
      ...(previous ? { previousUrn: previous.record.urn, previousFingerprint: previous.key.kid } : {}),
      changed: changedFields(previous, identity),
      resourceVersion: decision.resourceVersion,
      splayMs: waitedMs,
    });
    if (!previous) resolveReady(identity);
  };

  const load = (decision: LoadDecision): void => {
    if (decision.reason === 'initial' || splayMs === 0) {
      commit(decision, 0);
      return;
    }
    // Within one splay window the newest content wins; the wait started by the first change stands.
    splay.pending = decision;
    if (splay.timer) return;
    const timer = new AbortController();
    splay.timer = timer;
    const waitMs = Math.floor(random() * splayMs);
    clock.sleep(waitMs, timer.signal).then(
      () => {
        splay.timer = undefined;
        const pending = splay.pending;
        splay.pending = undefined;
        if (pending && !stopped) commit(pending, waitMs);
      },
      () => undefined,
    );
  };

  const decide = (decision: TrackerDecision): void => {
    if (decision.action === 'load') load(decision);
    else if (decision.action === 'reject')
      emit({ type: 'rejected', at: at(), resourceVersion: decision.resourceVersion, error: decision.error, ...kept() });
    else if (decision.why === 'deleted') emit({ type: 'deleted', at: at(), resourceVersion: decision.resourceVersion ?? '', ...kept() });
    else if (decision.why === 'missing') emit({ type: 'missing', at: at(), ...kept() });
  };

  const listener = {
    upsert: (secret: V1Secret) => decide(tracker.observe(secret)),
    deleted: (secret: V1Secret) => decide(tracker.deleted(secret.metadata?.resourceVersion ?? '')),
    listed: (secret: V1Secret | undefined, resourceVersion: string, reason: ListReason) => {
      emit({ type: 'listed', at: at(), reason, found: secret !== undefined, resourceVersion });
      if (!secret) decide(tracker.missing());
    },
    activity: () => metrics.activity(clock.now()),
    ignored: (reason: string) => emit({ type: 'ignored', at: at(), reason, ...kept() }),
    restarting: (err: unknown, attempt: number, retryInMs: number) => {
      const state = tracker.current() ? 'The current identity is kept' : 'No identity is loaded yet';
      const next = `${state}; retrying in ${formatDelay(retryInMs)}.`;
      const failure = kubeFailure(err, `watching Secret ${ref.namespace}/${ref.name}`, next);
      // Our own errors (a malformed stream, a credential that could not be had) pass kubeFailure as they
      // are: their hint gets the retry state too.
      const error =
        failure !== err || !(failure instanceof KubernetesError)
          ? failure
          : new KubernetesError(
              failure.code,
              failure.message,
              failure.code === 'WATCH_MALFORMED' ? `The event was not applied. ${next}` : `${failure.hint} ${next}`,
              failure.details,
            );
      emit({ type: 'watch-error', at: at(), error, attempt, retryInMs });
    },
  };

  let http: KubeTransport | undefined;
  const started = (async () => {
    let factory = options.informerFactory;
    if (!factory) {
      if (!options.connection) throw new TypeError('watchIdentity needs `connection` (or `informerFactory`)');
      http = options.connection.transport();
      factory = secretInformerFactory(http, ref);
    }
    if (stopped) return;
    supervisor = new InformerSupervisor({
      factory,
      listener,
      policy: options.retryPolicy ?? defaultRetryPolicy,
      clock,
      relistIntervalMs: options.relistIntervalMs ?? DEFAULT_RELIST_INTERVAL_MS,
    });
    supervisor.start();
  })();
  started.catch((err: unknown) => rejectReady(err));

  return {
    ref,
    events,
    ready,
    metrics,
    current: () => tracker.current(),
    async stop() {
      if (stopped) return;
      stopped = true;
      splay.timer?.abort();
      await started.catch(() => undefined);
      supervisor?.stop();
      // The watch's connections only: the transport stays usable for a caller that shares the cluster.
      http?.close();
      rejectReady(new InterruptedError(`waiting for the first identity from Secret ${ref.namespace}/${ref.name}`));
    },
  };
}

function formatDelay(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
