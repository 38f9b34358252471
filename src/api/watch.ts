import { EventEmitter } from 'node:events';
import { InterruptedError, type ParError, toParError } from '../errors.js';
import type { DecodedIdentity } from '../identity/index.js';
import { createReporter } from '../output.js';
import { ApplyQueue, type WatchEvent, watchIdentity as watchSecret } from '../reload/index.js';
import { retryPolicyFromEnv, systemClock } from '../time/index.js';
import { outputStep } from '../watch/hand-over.js';
import { checkOutput, resolveWatchedSecret } from '../watch/watched-secret.js';
import { apiIo, WATCH_DEFAULTS } from './options.js';
import type {
  IdentityWatch,
  IdentityWatchEvent,
  IdentityWatchEventMap,
  LoadedIdentity,
  WatchIdentityOptions,
  WatchSummary,
  WrittenEvent,
} from './types.js';

// The API's watchIdentity: `par-identity watch` without the process around it. The same Secret
// resolution and enabled check (src/watch), the same watcher (src/reload) and the same
// --output hand-over (ApplyQueue + outputStep); events go to the caller's callbacks and emitter
// instead of stdout. No signal handlers, no exit hooks, no child process, no listening socket.
// Loaded by src/api.ts when first called.

/**
 * A callback runs outside the watcher's own work: one that throws is reported as an uncaught
 * exception (as a throwing event listener would be), and the watch goes on.
 */
function deliver(call: () => void): void {
  try {
    call();
  } catch (err) {
    queueMicrotask(() => {
      throw err;
    });
  }
}

function errorOf(event: IdentityWatchEvent): ParError | undefined {
  return event.type === 'rejected' || event.type === 'watch-error' || event.type === 'apply-error' ? event.error : undefined;
}

export async function startWatch(o: WatchIdentityOptions): Promise<IdentityWatch> {
  const signal = o.signal;
  const aborted = (when: string) => new InterruptedError(`watchIdentity: the signal was aborted ${when}; nothing is watched`);
  if (signal?.aborted) throw aborted('before the watch started');
  const io = apiIo(o);
  const report = createReporter(io, { json: true, color: false });
  let target: Awaited<ReturnType<typeof resolveWatchedSecret>>;
  try {
    target = await resolveWatchedSecret(
      {
        cfgPath: o.cfgPath ?? WATCH_DEFAULTS.cfgPath,
        cfgPathGiven: o.cfgPath !== undefined,
        extraCfg: o.extraCfg ?? [],
        ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
        ...(o.context ? { context: o.context } : {}),
        ...(o.namespace ? { namespace: o.namespace } : {}),
        ...(o.secretName ? { secretName: o.secretName } : {}),
      },
      io,
      report,
    );
    if (o.output) await checkOutput(o.output);
  } catch (err) {
    throw toParError(err);
  }
  if (signal?.aborted) throw aborted('while the watch was being set up');

  const secret = { ...target.ref };
  const events = new EventEmitter<IdentityWatchEventMap>();
  const policy = retryPolicyFromEnv(io.env);
  const loadedOf = new WeakMap<DecodedIdentity, LoadedIdentity>();
  const loaded = (identity: DecodedIdentity): LoadedIdentity => {
    let view = loadedOf.get(identity);
    if (!view) {
      const { record, key, urn } = identity;
      view = Object.freeze({
        urn: record.urn,
        fingerprint: key.kid,
        orgId: urn.orgId,
        runnerId: urn.runnerId,
        region: urn.region,
        ...(record.hostname ? { hostname: record.hostname } : {}),
        ...(record.apiKeyHash ? { apiKeyHash: record.apiKeyHash } : {}),
        ...(record.orchClusterId ? { orchClusterId: record.orchClusterId } : {}),
        privateKey: key.privateKey,
        publicKey: key.publicKey,
      });
      loadedOf.set(identity, view);
    }
    return view;
  };

  const publish = (event: IdentityWatchEvent): void => {
    if (o.onEvent) deliver(() => o.onEvent?.(event));
    deliver(() => events.emit('event', event));
    const error = errorOf(event);
    if (error && o.onError) deliver(() => o.onError?.(error, event));
  };

  const watch = watchSecret({
    connection: target.conn,
    ...secret,
    relistIntervalMs: o.relistIntervalMs ?? WATCH_DEFAULTS.relistIntervalMs,
    splayMs: o.splayMs ?? WATCH_DEFAULTS.splayMs,
    retryPolicy: policy,
  });
  const queue = o.output
    ? new ApplyQueue({
        steps: [
          outputStep(o.output, {
            warning: (message) => publish({ type: 'warning', at: new Date(), message }),
            written: (path, fingerprint) => {
              const event: WrittenEvent = { type: 'written', at: new Date(), path, fingerprint };
              publish(event);
              if (o.onWritten) deliver(() => o.onWritten?.(event));
            },
          }),
        ],
        policy,
        clock: systemClock,
        onApplied: () => undefined,
        onError: (err, attempt, retryInMs) => {
          watch.metrics.applyFailed();
          publish({ type: 'apply-error', at: new Date(), error: toParError(err), attempt, retryInMs });
        },
      })
    : undefined;
  watch.events.on('event', (event: WatchEvent) => {
    publish(event);
    if (event.type !== 'loaded') return;
    const identity = watch.current()!;
    queue?.push(identity);
    if (o.onLoaded) deliver(() => o.onLoaded?.(loaded(identity), event));
  });

  const ready = watch.ready.then(loaded);
  // A caller that never awaits `ready` gets no unhandled rejection when it stops first.
  ready.catch(() => undefined);

  let finish!: (summary: WatchSummary) => void;
  const stopped = new Promise<WatchSummary>((resolve) => {
    finish = resolve;
  });
  let stopping: Promise<WatchSummary> | undefined;
  const stop = (by: WatchSummary['stoppedBy']): Promise<WatchSummary> => {
    stopping ??= (async () => {
      signal?.removeEventListener('abort', onAbort);
      await watch.stop();
      queue?.stop();
      await queue?.idle();
      const identity = watch.current();
      const summary: WatchSummary = {
        secret,
        ...(identity ? { urn: identity.record.urn, fingerprint: identity.key.kid } : {}),
        reloads: watch.metrics.reloads,
        reloadErrors: watch.metrics.reloadErrors,
        watchRestarts: watch.metrics.watchRestarts,
        stoppedBy: by,
      };
      finish(summary);
      return summary;
    })();
    return stopping;
  };
  const onAbort = () => void stop('abort');
  signal?.addEventListener('abort', onAbort, { once: true });

  return {
    secret,
    ready,
    events,
    stopped,
    current: () => {
      const identity = watch.current();
      return identity ? loaded(identity) : undefined;
    },
    metrics: () => ({
      reloads: watch.metrics.reloads,
      reloadErrors: watch.metrics.reloadErrors,
      watchRestarts: watch.metrics.watchRestarts,
      relists: watch.metrics.relists,
      lastActivityMs: watch.metrics.lastActivityMs,
    }),
    metricsText: () => watch.metrics.render(systemClock.now()),
    stop: () => stop('stop'),
    close: () => stop('stop'),
    async [Symbol.asyncDispose]() {
      await stop('stop');
    },
  };
}
