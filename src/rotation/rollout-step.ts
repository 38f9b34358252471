import { decodePrivateJwk } from '../identity/index.js';
import type { Io } from '../io.js';
import { DEFAULT_SECRET_NAME, HELM_SECRET_NAME, isNotFound, kubeFailure, readIdentitySecret } from '../kube/index.js';
import type { Reporter } from '../output.js';
import { RolloutError } from '../errors.js';
import { describeRef, FINGERPRINT_ANNOTATION, RESTARTED_AT_ANNOTATION, type RolloutOutcome, rolloutApi, runRollout, type WorkloadRef } from '../rollout/index.js';
import type { ClusterSession } from './cluster-session.js';
import { isoString } from '../time/index.js';

// Restarting a workload so every Pod runs the identity in service, on the run's one cluster
// connection: used by `rollout` and by the roll-out step of every rotation.

export interface RolloutRequest {
  checkOnly: boolean;
  surge: boolean | 'auto';
  fallback: boolean;
  identitySecret?: string;
  timeoutSeconds: number;
  pollMs: number;
  dryRun: boolean;
  /** Set by a rotation that already knows the new fingerprint. */
  fingerprint?: string;
  /** reportingInstance of the rollout Events: the hostname the rotation resolved. */
  eventInstance?: string;
  /** Stops the rollout (which then undoes its restart); without it, SIGINT/SIGTERM of this process do. */
  signal?: AbortSignal;
}

/** The fingerprint of the identity the Pods should run: from the identity Secret when one is found. */
async function secretFingerprint(session: ClusterSession, namespace: string, names: string[]): Promise<string | undefined> {
  for (const name of names) {
    const state = await readIdentitySecret(session.core, { namespace, name }).catch(() => undefined);
    if (state?.state !== 'present') continue;
    const key = state.data.private_key ?? state.data.RUNNER_PRIVATE_KEY;
    if (!key) continue;
    try {
      return decodePrivateJwk(key).kid;
    } catch {
      // An undecodable identity gives no fingerprint; the restart still happens.
    }
  }
  return undefined;
}

function progressPrinter(io: Io, report: Reporter) {
  let last = '';
  let lastNote = '';
  return (rows: { node: string; readyPods: number; newReady: boolean; oldPods: number }[], note?: string) => {
    const line = rows.map((r) => `${r.node}: ${r.newReady ? (r.oldPods ? 'new Ready, old terminating' : 'done') : `waiting (${r.readyPods} Ready)`}`).join(' | ');
    if (line !== last && (io.isTTY || !last || rows.every((r) => r.newReady))) report.info(line);
    last = line;
    if (note && note !== lastNote) report.warn(note);
    lastNote = note ?? lastNote;
  };
}

/**
 * Before anything is enrolled: the workload exists and this token may patch it. The apiserver runs
 * the very restart patch as a server-side dry run (RBAC, admission, validation), storing nothing.
 */
export async function precheckRollout(session: ClusterSession, ref: WorkloadRef): Promise<string> {
  const api = await rolloutApi(session.conn);
  let workload: Awaited<ReturnType<typeof api.readWorkload>>;
  try {
    workload = await api.readWorkload(ref);
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause ?? err;
    if (isNotFound(cause) || (err as { details?: { httpStatus?: number } }).details?.httpStatus === 404) {
      throw new RolloutError('WORKLOAD_MISSING', `--rollout names ${describeRef(ref)}, which does not exist`, 'Nothing was enrolled and nothing was changed. Check the workload name and -n, then run again.');
    }
    throw err;
  }
  // The rollout follows the workload's Pods: a token that cannot list them would fail after enrolling.
  await api.podsOf(ref, workload);
  const k8s = await import('../kube/client-node-api.js');
  const apps = session.conn.apps();
  const strategic = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);
  const body = { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: isoString(0), [FINGERPRINT_ANNOTATION]: 'dry-run' } } } } };
  const request = { name: ref.name, namespace: ref.namespace, body, fieldManager: 'par-identity', dryRun: 'All' };
  try {
    await (ref.kind === 'deployment' ? apps.patchNamespacedDeployment(request, strategic) : apps.patchNamespacedDaemonSet(request, strategic));
  } catch (err) {
    throw kubeFailure(err, `server-side dry run of the restart patch of ${describeRef(ref)}`, 'Nothing was enrolled and nothing was changed.');
  }
  return `rollout of ${describeRef(ref)}: the workload exists, its Pods can be listed, and the restart patch is allowed (server-side dry run)`;
}

export async function rolloutWorkload(session: ClusterSession, ref: WorkloadRef, request: RolloutRequest, io: Io, report: Reporter): Promise<RolloutOutcome> {
  const secretNames = [request.identitySecret ?? DEFAULT_SECRET_NAME, HELM_SECRET_NAME].filter((n, i, all) => all.indexOf(n) === i);
  const fingerprint = request.fingerprint ?? (await secretFingerprint(session, ref.namespace, secretNames));
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  // A caller with its own signal (the API) gets no process signal handlers it did not ask for.
  const viaProcess = !request.signal;
  if (request.signal) {
    if (request.signal.aborted) controller.abort();
    else request.signal.addEventListener('abort', onSignal, { once: true });
  } else {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  try {
    report.step(`${request.checkOnly ? 'check' : 'roll out'} ${describeRef(ref)}${fingerprint ? ` (identity fingerprint ${fingerprint})` : ''}`);
    return await runRollout(await rolloutApi(session.conn), {
      ref,
      checkOnly: request.checkOnly,
      surge: request.surge,
      fallback: request.fallback,
      ...(fingerprint ? { fingerprint } : {}),
      identitySecretNames: secretNames,
      timeoutMs: request.timeoutSeconds * 1000,
      pollMs: request.pollMs,
      dryRun: request.dryRun,
      signal: controller.signal,
      now: () => io.now(),
      onProgress: progressPrinter(io, report),
      onWarning: (message) => report.warn(message),
      ...(request.eventInstance ? { eventInstance: request.eventInstance } : {}),
    });
  } finally {
    if (viaProcess) {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    } else request.signal?.removeEventListener('abort', onSignal);
  }
}
