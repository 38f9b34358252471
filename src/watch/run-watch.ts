import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildExitError, toParError } from '../errors.js';
import type { Io } from '../io.js';
import { type CommandResult, createReporter, resultJson } from '../output.js';
import type { Envelope } from '../results/envelope.js';
import type { WatchResult } from '../results/watch.js';
import {
  ApplyQueue,
  type ChildExit,
  type HealthServer,
  type IdentityWatch,
  SupervisedChild,
  startHealthServer,
  watchIdentity,
} from '../reload/index.js';
import { retryPolicyFromEnv, systemClock } from '../time/index.js';
import { eventWriter } from './event-writer.js';
import { applySteps } from './hand-over.js';
import { releaseStartupMemory } from './startup-memory.js';
import { memoryReleaser, stopOptimisingCompilers } from './steady-memory.js';
import { listenForSignals, type SignalSource } from './stop-signals.js';
import type { WatchOptions } from './watch-options.js';
import { planWatch } from './watch-plan.js';
import { checkOutput, resolveWatchedSecret } from './watched-secret.js';

// `par-identity watch`: follow the identity Secret and hand every valid change on — to a file, a
// signal, a supervised command — until SIGTERM/SIGINT (docs/protocol.md §8).

export async function runWatch(options: WatchOptions, io: Io, signals: SignalSource): Promise<CommandResult<WatchResult>> {
  const p = planWatch(options);
  const report = createReporter(io, options);
  const hasChild = options.command.length > 0;
  let child: SupervisedChild | undefined;
  const signalWatch = listenForSignals(signals, () => child, hasChild);
  let watcher: IdentityWatch | undefined;
  let health: HealthServer | undefined;
  let queue: ApplyQueue | undefined;
  let tempDir: string | undefined;
  let childExit: ChildExit | undefined;
  let stoppedBy: string | undefined;
  /** /readyz is false while the last identity could not be handed on (file, signal, child). */
  let lastApplyFailed = false;
  let removeTempOnExit: (() => void) | undefined;
  stopOptimisingCompilers();
  const memory = memoryReleaser();
  try {
    report.step('resolve config and cluster');
    const cluster = await resolveWatchedSecret(options, io, report);
    const out = eventWriter(io, options, report, cluster.ref.name);
    if (hasChild && !options.output) {
      tempDir = await mkdtemp(join(tmpdir(), 'par-identity-watch-'));
      // Even on an exit that skips `finally` (uncaught error), no key stays behind in the temp file.
      const dirToRemove = tempDir;
      removeTempOnExit = () => rmSync(dirToRemove, { recursive: true, force: true });
      process.once('exit', removeTempOnExit);
    }
    const outputPath = options.output ?? (tempDir ? join(tempDir, 'privateactionrunner_private_identity.json') : undefined);
    if (hasChild) {
      child = new SupervisedChild({
        command: options.command[0]!,
        args: options.command.slice(1),
        stdoutToStderr: options.json,
        stopTimeoutMs: options.killTimeoutSeconds * 1000,
      });
    }

    if (options.output) await checkOutput(options.output);
    const w = watchIdentity({
      connection: cluster.conn,
      ...cluster.ref,
      relistIntervalMs: p.relistIntervalMs,
      splayMs: options.splayMs,
      retryPolicy: retryPolicyFromEnv(io.env),
    });
    watcher = w;
    // Metrics show as current only an identity handed on (written, signalled, given to the command).
    w.metrics.expectHandOn();
    const q = new ApplyQueue({
      steps: applySteps(options, p, outputPath, child, io, out),
      policy: retryPolicyFromEnv(io.env),
      clock: systemClock,
      onApplied: (identity) => {
        lastApplyFailed = false;
        w.metrics.applied(identity.key.kid, identity.record.urn, io.now().getTime());
        memory.request();
      },
      onError: (err, attempt, retryInMs) => {
        lastApplyFailed = true;
        memory.request();
        w.metrics.applyFailed();
        out.failure('apply-error', toParError(err), { attempt, retryInMs });
      },
    });
    queue = q;
    w.events.on('event', (e) => {
      out.event(e);
      // A loaded identity's garbage is asked for once its hand-over is over (onApplied, onError).
      if (e.type === 'loaded') q.push(w.current()!);
      else memory.request();
    });
    const splay = options.splayMs ? `, splay 0…${options.splayMs} ms` : '';
    report.step(`watch Secret ${cluster.ref.namespace}/${cluster.ref.name} (re-list every ${p.relistIntervalMs / 1000} s${splay})`);
    if (p.listen) {
      health = await startHealthServer(p.listen, {
        metrics: w.metrics,
        ready: () => w.metrics.fingerprint !== undefined && !lastApplyFailed,
        staleMs: p.staleMs,
        now: () => io.now().getTime(),
      });
      out.note('listening', { address: health.address }, `serving /healthz, /readyz and /metrics on http://${health.address}`);
    }

    const first = await Promise.race([w.ready.then(() => undefined), signalWatch.stopped]);
    if (!first) void q.idle().then(() => setImmediate(releaseStartupMemory));
    if (first) stoppedBy = first;
    else if (child) {
      const supervised = child;
      const end = await Promise.race([
        q.idle().then(async () => ({ exit: await supervised.exited, signal: undefined })),
        signalWatch.stopped.then((signal) => ({ exit: undefined, signal })),
      ]);
      stoppedBy = end.signal;
      // A stop signal goes on to the command; watch ends when it does, with its status.
      childExit = end.exit ?? (end.signal ? await supervised.stop(end.signal) : undefined);
    } else {
      stoppedBy = await signalWatch.stopped;
    }
  } finally {
    memory.cancel();
    signalWatch.detach();
    await watcher?.stop();
    queue?.stop();
    await queue?.idle();
    await health?.close();
    if (child && !childExit) await child.stop('SIGTERM');
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
    if (removeTempOnExit) process.off('exit', removeTempOnExit);
  }
  return result(watcher!, options, stoppedBy, childExit);
}

/** What `watch` reports when it ends; a supervised command that failed makes it fail with the same status. */
function result(
  w: IdentityWatch,
  options: WatchOptions,
  stoppedBy: string | undefined,
  childExit: ChildExit | undefined,
): CommandResult<WatchResult> {
  const identity = w.current();
  const data: Omit<WatchResult, keyof Envelope> = {
    stoppedBy: stoppedBy ?? 'child-exit',
    secret: w.ref,
    ...(identity ? { urn: identity.record.urn, fingerprint: identity.key.kid } : {}),
    reloads: w.metrics.reloads,
    reloadErrors: w.metrics.reloadErrors,
    watchRestarts: w.metrics.watchRestarts,
    ...(childExit ? { childExitStatus: childExit.status } : {}),
  };
  if (childExit && childExit.status !== 0) {
    const what = childExit.error
      ? `could not be started (${childExit.error.message})`
      : `exited with status ${childExit.status}${childExit.signal ? ` (${childExit.signal})` : ''}`;
    throw new ChildExitError(
      childExit.error ? 'CHILD_START_FAILED' : 'CHILD_EXITED',
      `the supervised command ${options.command[0]} ${what}`,
      'watch stopped with it and exits with its status. Check the command, then start watch again.',
      childExit.status,
      { status: childExit.status },
    );
  }
  const by = stoppedBy ? `stopped by ${stoppedBy}` : `the supervised command exited with status ${childExit?.status}`;
  const last = identity ? `; last identity ${identity.record.urn} (fingerprint ${identity.key.kid})` : '; no identity was loaded';
  return { json: resultJson('watch', data), summary: [`watch ${by} after ${w.metrics.reloads} reload(s)${last}`] };
}
