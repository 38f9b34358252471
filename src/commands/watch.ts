import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { isoString, retryPolicyFromEnv, systemClock } from '../time/index.js';
import { ChildExitError, ConfigError, ParError, StorageError, toParError, UsageError } from '../errors.js';
import { preflightIdentityDirectory } from '../storage/index.js';
import type { DecodedIdentity } from '../identity/index.js';
import type { Io } from '../io.js';
import type { ClusterTarget } from '../kube/cluster-connection.js';
import type { SecretRef } from '../kube/identity-secret.js';
import { HELM_SECRET_NAME } from '../kube/secret-target.js';
import { type CommandResult, createReporter, type OutputOptions, type Reporter, SCHEMA_VERSION } from '../output.js';
import {
  ApplyQueue,
  type ApplyStep,
  type ChildExit,
  eventToJson,
  type HealthServer,
  type IdentityWatch,
  parseListenAddress,
  parseSignalName,
  type SignalTarget,
  SupervisedChild,
  sendSignal,
  startHealthServer,
  type WatchEvent,
  watchIdentity,
  writeIdentityOutput,
} from '../reload/index.js';
import { clusterTargetAccess } from '../rotation/cluster-session.js';
import { loadTargetConfig, locateClusterSecret, type TargetOptions } from '../rotation/resolve-target.js';

// `par-identity watch`: follow the identity Secret and hand every valid change on — to a file, a
// signal, a supervised command — until SIGTERM/SIGINT (docs/protocol.md §8). Events go to stderr as log
// lines, or to stdout as JSON lines with --json; neither ever carries key material.

export interface WatchOptions extends OutputOptions, Pick<TargetOptions, 'cfgPath' | 'extraCfg' | 'kubeconfig' | 'context' | 'namespace' | 'secretName'> {
  /** Identity file to keep up to date (atomic, 0600, previous kept as .bak). */
  output?: string;
  /** Process to signal after each rotation was written. */
  signalPid?: number;
  /** File holding the pid to signal (read at every signal). */
  pidfile?: string;
  /** Signal for --signal/--pidfile and for --on-change signal: HUP, USR1, … */
  signalName: string;
  /** Command to supervise (everything after --); empty for none. */
  command: string[];
  /** What a rotation does to the supervised command. */
  onChange: 'restart' | 'signal';
  /** Grace period between SIGTERM and SIGKILL when the command is stopped or restarted. */
  killTimeoutSeconds: number;
  /** Random 0…N ms wait before applying a rotation. */
  splayMs: number;
  /** Full re-list period; 0 turns the backstop off. */
  relistIntervalSeconds: number;
  /** ADDR for /healthz, /readyz, /metrics. */
  listen?: string;
  /** /healthz fails after this long without a watch event or list; default 2 × the re-list interval. */
  healthzStaleSeconds?: number;
}

/** Where SIGTERM/SIGINT (and the signals forwarded to a child) come from: `process`, or an emitter in tests. */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];
const FORWARDED_SIGNALS: NodeJS.Signals[] = ['SIGHUP', 'SIGUSR1', 'SIGUSR2'];

interface Plan {
  signal: NodeJS.Signals;
  signalTarget?: SignalTarget;
  listen?: string;
  relistIntervalMs: number;
  staleMs: number;
}

function plan(options: WatchOptions): Plan {
  const nonNegative = (value: number, flag: string) => {
    if (!Number.isFinite(value) || value < 0) throw new UsageError(`${flag} must be a non-negative number, got ${value}`);
    return value;
  };
  const relistIntervalMs = nonNegative(options.relistIntervalSeconds, '--relist-interval') * 1000;
  nonNegative(options.splayMs, '--splay');
  nonNegative(options.killTimeoutSeconds, '--kill-timeout');
  if (options.signalPid !== undefined && options.pidfile !== undefined) throw new UsageError('--signal and --pidfile name the same thing: give one of them');
  if (options.signalPid !== undefined && (!Number.isSafeInteger(options.signalPid) || options.signalPid <= 0)) throw new UsageError(`--signal must be a process id, got ${options.signalPid}`);
  const signalsSomeone = options.signalPid !== undefined || options.pidfile !== undefined;
  if (signalsSomeone && !options.output) throw new UsageError('--signal/--pidfile tell a process that --output PATH changed: add --output PATH');
  if (options.onChange === 'signal' && options.command.length === 0) throw new UsageError('--on-change signal applies to a supervised command: add -- <command...>');
  if (options.listen) parseListenAddress(options.listen);
  const signal = parseSignalName(options.signalName);
  const staleMs = options.healthzStaleSeconds !== undefined ? nonNegative(options.healthzStaleSeconds, '--healthz-stale') * 1000 : Math.max(2 * relistIntervalMs, 60_000);
  return {
    signal,
    ...(signalsSomeone ? { signalTarget: { signal, ...(options.signalPid !== undefined ? { pid: options.signalPid } : { pidfile: options.pidfile! }) } } : {}),
    ...(options.listen ? { listen: options.listen } : {}),
    relistIntervalMs,
    staleMs,
  };
}

/** Log lines on stderr, or JSON lines on stdout: one function per event so both stay in step. */
function eventWriter(io: Io, options: OutputOptions, report: Reporter, secretName: string) {
  const stamp = () => isoString(io.now());
  const json = (payload: Record<string, unknown>) => io.stdout(`${JSON.stringify({ schemaVersion: SCHEMA_VERSION, ...payload })}\n`);
  const describe = (e: WatchEvent): { level: 'info' | 'warn'; text: string } | undefined => {
    const kept = (fp: string | undefined) => (fp ? `keeping identity ${fp}` : 'no identity loaded yet');
    switch (e.type) {
      case 'loaded':
        return e.reason === 'initial'
          ? { level: 'info', text: `loaded identity ${e.urn} (fingerprint ${e.fingerprint}, resourceVersion ${e.resourceVersion})` }
          : { level: 'info', text: `reloaded: ${e.changed.join(' and ')} changed → ${e.urn} (fingerprint ${e.fingerprint}, was ${e.previousFingerprint}; resourceVersion ${e.resourceVersion}${e.splayMs ? `, after ${e.splayMs} ms splay` : ''})` };
      case 'rejected':
        return { level: 'warn', text: `resourceVersion ${e.resourceVersion} of the Secret holds an invalid identity (${e.error.message}); not applied, ${kept(e.keptFingerprint)}` };
      case 'deleted':
        return { level: 'warn', text: `the Secret was deleted; ${kept(e.keptFingerprint)}` };
      case 'missing': {
        const helm = secretName === HELM_SECRET_NAME ? '' : ` (Helm and the Operator name it ${HELM_SECRET_NAME}: pass --secret-name if that is the one)`;
        return { level: 'warn', text: `the Secret does not exist; ${kept(e.keptFingerprint)}, waiting for it${helm}` };
      }
      case 'listed':
        return e.reason === 'start' ? undefined : { level: 'info', text: `re-listed the Secret (${e.reason}), resourceVersion ${e.resourceVersion}` };
      case 'watch-error':
        return { level: 'warn', text: `${e.error.message} (attempt ${e.attempt}); ${e.error.hint}` };
      case 'ignored':
        return { level: 'warn', text: `ignored ${e.reason}; ${kept(e.keptFingerprint)}` };
    }
  };
  return {
    event(e: WatchEvent) {
      if (options.json) return json(eventToJson(e));
      const line = describe(e);
      if (line) report[line.level](`${stamp()} ${line.text}`);
    },
    note(event: string, fields: Record<string, unknown>, text: string) {
      if (options.json) json({ event, time: isoString(io.now()), ...fields });
      else report.info(`${stamp()} ${text}`);
    },
    failure(event: string, err: ParError, fields: Record<string, unknown> = {}) {
      if (options.json) json({ event, time: isoString(io.now()), error: { code: err.code, message: err.message, hint: err.hint }, ...fields });
      else report.warn(`${stamp()} ${err.message}; ${err.hint}`);
    },
  };
}

type EventWriter = ReturnType<typeof eventWriter>;

/** The hand-over step that keeps `path` up to date: atomic, 0600, the previous identity as PATH.bak. */
export function outputStep(path: string, on: { warning(message: string): void; written(path: string, fingerprint: string): void }): ApplyStep {
  return async (identity) => {
    const written = await writeIdentityOutput(path, identity);
    for (const warning of written.warnings) on.warning(warning);
    on.written(path, identity.key.kid);
  };
}

/** The hand-over steps the flags ask for, in order: file, then signal, then the supervised command. */
function applySteps(options: WatchOptions, p: Plan, outputPath: string | undefined, child: SupervisedChild | undefined, io: Io, out: EventWriter): ApplyStep[] {
  const steps: ApplyStep[] = [];
  if (outputPath) {
    steps.push(
      outputStep(outputPath, {
        warning: (warning) => out.note('warning', { message: warning }, `warning: ${warning}`),
        written: (path, fingerprint) => out.note('written', { path, fingerprint }, `wrote ${path} (fingerprint ${fingerprint})`),
      }),
    );
  }
  if (p.signalTarget) {
    const target = p.signalTarget;
    steps.push(async (identity, reason) => {
      if (reason === 'initial') return;
      const pid = await sendSignal(target);
      out.note('signalled', { pid, signal: target.signal, fingerprint: identity.key.kid }, `sent ${target.signal} to process ${pid}`);
    });
  }
  if (child) {
    steps.push(async (identity, reason) => {
      const env = childEnv(io.env, outputPath!, identity);
      if (reason === 'initial' || child.starts === 0) {
        child.start(env);
        out.note('child-started', { pid: child.pid ?? null, command: options.command[0] }, `started ${options.command[0]} (pid ${child.pid ?? '?'})`);
      } else if (options.onChange === 'signal') {
        if (!child.signal(p.signal)) throw new UsageError(`cannot send ${p.signal} to ${options.command[0]}: it is not running`);
        out.note('child-signalled', { pid: child.pid ?? null, signal: p.signal }, `sent ${p.signal} to ${options.command[0]} (pid ${child.pid})`);
      } else {
        await child.restart(env);
        out.note('child-restarted', { pid: child.pid ?? null }, `restarted ${options.command[0]} with the new identity (pid ${child.pid ?? '?'})`);
      }
    });
  }
  return steps;
}

/** What the supervised command gets: the file to read, and non-secret facts about what is in it. */
export function childEnv(base: NodeJS.ProcessEnv, path: string, identity: DecodedIdentity): NodeJS.ProcessEnv {
  return { ...base, PAR_IDENTITY_FILE: path, PAR_IDENTITY_URN: identity.record.urn, PAR_IDENTITY_FINGERPRINT: identity.key.kid };
}

function requireWatchEnabled(config: { getBool(key: string): boolean; sourceOf(key: string): string }): void {
  for (const key of ['private_action_runner.enabled', 'private_action_runner.identity_use_k8s_secret']) {
    if (!config.getBool(key)) {
      throw new ConfigError(
        'WATCH_DISABLED',
        `${key} is false (from ${config.sourceOf(key)}): this runner does not take its identity from a Secret`,
        'Nothing is watched. Set private_action_runner.enabled and private_action_runner.identity_use_k8s_secret to true (or DD_PRIVATE_ACTION_RUNNER_ENABLED=true), then run again.',
      );
    }
  }
}

/** Resolves with the name of the first stop signal; also forwards signals to the child once there is one. */
function listenForSignals(signals: SignalSource, getChild: () => SupervisedChild | undefined, forward: boolean) {
  let onStop!: (signal: NodeJS.Signals) => void;
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    onStop = resolve;
  });
  const handlers = new Map<NodeJS.Signals, () => void>();
  for (const signal of STOP_SIGNALS) handlers.set(signal, () => onStop(signal));
  if (forward) for (const signal of FORWARDED_SIGNALS) handlers.set(signal, () => getChild()?.signal(signal));
  for (const [signal, handler] of handlers) signals.on(signal, handler);
  const detach = () => {
    for (const [signal, handler] of handlers) signals.off(signal, handler);
  };
  return { stopped, detach };
}

/**
 * The Secret `watch` follows and the connection to follow it on: the cluster agent config, the
 * run's cluster connection, the Secret's namespace and name, and the check that this config keeps
 * an enabled runner identity in a Secret. Shared with the API's watchIdentity (src/api).
 */
export async function resolveWatchedSecret(
  options: Pick<TargetOptions, 'cfgPath' | 'extraCfg' | 'kubeconfig' | 'context' | 'namespace' | 'secretName'>,
  io: Io,
  report: Reporter,
): Promise<{ conn: ClusterTarget; ref: SecretRef }> {
  const config = await loadTargetConfig('cluster-secret', options, io, report);
  const { session, resolved } = await locateClusterSecret(config, clusterTargetAccess(options, { kubeconfig: config.getString('kubernetes_kubeconfig_path') }, io, report), options, io, report);
  requireWatchEnabled(config);
  return { conn: session.conn, ref: { namespace: resolved.namespace, name: resolved.name } };
}

/**
 * One memory-reducing garbage collection, once the first identity is handed on: from then on the
 * watcher idles, often for days, and V8 collects only as it allocates, so the start-up garbage (config
 * and kubeconfig parsing, module loading) and the young generation grown meanwhile would stay resident.
 * This gives about 3 MiB back. Node has no API for it: the collector V8 exposes with --expose-gc is
 * taken from a fresh context. Best effort; a failure changes nothing else.
 */
function releaseStartupMemory(): void {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (options: { type: 'major'; flavor: 'last-resort' }) => void;
    setFlagsFromString('--no-expose-gc');
    gc({ type: 'major', flavor: 'last-resort' });
  } catch {
    // the watcher works the same, with a little more memory
  }
}

/** An --output that cannot be written is found now, not at the first rotation. */
export async function checkOutput(output: string): Promise<void> {
  try {
    await preflightIdentityDirectory(output);
  } catch (err) {
    if (!(err instanceof ParError)) throw err;
    throw new StorageError(err.code, `--output ${output}: ${err.message}`, 'Nothing is watched. Make the directory of --output writable by this user, or choose another --output, then start watch again.', err.details);
  }
}

export function run(options: WatchOptions, io: Io): Promise<CommandResult> {
  return runWatch(options, io, process);
}

export async function runWatch(options: WatchOptions, io: Io, signals: SignalSource): Promise<CommandResult> {
  const p = plan(options);
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
      child = new SupervisedChild({ command: options.command[0]!, args: options.command.slice(1), stdoutToStderr: options.json, stopTimeoutMs: options.killTimeoutSeconds * 1000 });
    }

    if (options.output) await checkOutput(options.output);
    const w = watchIdentity({ connection: cluster.conn, ...cluster.ref, relistIntervalMs: p.relistIntervalMs, splayMs: options.splayMs, retryPolicy: retryPolicyFromEnv(io.env) });
    watcher = w;
    const q = new ApplyQueue({
      steps: applySteps(options, p, outputPath, child, io, out),
      policy: retryPolicyFromEnv(io.env),
      clock: systemClock,
      onApplied: () => {
        lastApplyFailed = false;
      },
      onError: (err, attempt, retryInMs) => {
        lastApplyFailed = true;
        w.metrics.applyFailed();
        out.failure('apply-error', toParError(err), { attempt, retryInMs });
      },
    });
    queue = q;
    w.events.on('event', (e) => {
      out.event(e);
      if (e.type === 'loaded') q.push(w.current()!);
    });
    report.step(`watch Secret ${cluster.ref.namespace}/${cluster.ref.name} (re-list every ${p.relistIntervalMs / 1000} s${options.splayMs ? `, splay 0…${options.splayMs} ms` : ''})`);
    if (p.listen) {
      health = await startHealthServer(p.listen, { metrics: w.metrics, ready: () => w.current() !== undefined && !lastApplyFailed, staleMs: p.staleMs, now: () => io.now().getTime() });
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
function result(w: IdentityWatch, options: WatchOptions, stoppedBy: string | undefined, childExit: ChildExit | undefined): CommandResult {
  const identity = w.current();
  const data: Record<string, unknown> = {
    stoppedBy: stoppedBy ?? 'child-exit',
    secret: w.ref,
    ...(identity ? { urn: identity.record.urn, fingerprint: identity.key.kid } : {}),
    reloads: w.metrics.reloads,
    reloadErrors: w.metrics.reloadErrors,
    watchRestarts: w.metrics.watchRestarts,
    ...(childExit ? { childExitStatus: childExit.status } : {}),
  };
  if (childExit && childExit.status !== 0) {
    const what = childExit.error ? `could not be started (${childExit.error.message})` : `exited with status ${childExit.status}${childExit.signal ? ` (${childExit.signal})` : ''}`;
    throw new ChildExitError(childExit.error ? 'CHILD_START_FAILED' : 'CHILD_EXITED', `the supervised command ${options.command[0]} ${what}`, 'watch stopped with it and exits with its status. Check the command, then start watch again.', childExit.status, { status: childExit.status });
  }
  const by = stoppedBy ? `stopped by ${stoppedBy}` : `the supervised command exited with status ${childExit?.status}`;
  return {
    command: 'watch',
    data,
    summary: [`watch ${by} after ${w.metrics.reloads} reload(s)${identity ? `; last identity ${identity.record.urn} (fingerprint ${identity.key.kid})` : '; no identity was loaded'}`],
  };
}
