import { decodePrivateJwk } from '../identity/index.js';
import type { Io } from '../io.js';
import { DEFAULT_SECRET_NAME, HELM_SECRET_NAME, readIdentitySecret } from '../kube/index.js';
import { handOverDeadline } from '../kube/kube-clients.js';
import type { Reporter } from '../output.js';
import {
  describeRef,
  type NodeProgress,
  readWorkloadOrMissing,
  restartPatch,
  type RolloutOutcome,
  rolloutApi,
  runRollout,
  type WorkloadRef,
} from './index.js';
import type { ClusterSession } from '../kube/cluster-session.js';
import type { Deadline } from '../time/index.js';

// Restarting a workload so every Pod runs the identity in service, on the run's one cluster
// connection: used by `rollout` and by the roll-out step of every rotation.

export interface RolloutRequest {
  checkOnly: boolean;
  surge: boolean | 'auto';
  fallback: boolean;
  identitySecret?: string;
  /** When the rollout must be complete, on the run's clock (src/time/deadline.ts): its waits and its "now" follow it. */
  deadline: Deadline;
  pollMs: number;
  dryRun: boolean;
  /** Set by a rotation that already knows the new fingerprint. */
  fingerprint?: string;
  /** reportingInstance of the rollout Events: the hostname the rotation resolved. */
  eventInstance?: string;
  /**
   * Stops the rollout: the CLI's SIGINT/SIGTERM (src/cli/stop-signals.ts) or the API caller's. Before the
   * restart nothing is changed; during its wait the restart is undone. Without it the rollout runs to its end.
   */
  signal?: AbortSignal;
  /** Called right before the first change: the caller stops cutting the requests the undo needs. */
  onRestartBegins?: () => void;
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

/**
 * A wait is never silent for more than 10 s: a heartbeat line (elapsed, Pods ready/total) is due 9 s
 * after the last line, so that with the default 1 s poll it is printed by the 10th second.
 */
const HEARTBEAT_MS = 9_000;

// exported for tests: the heartbeat's timing, checked with a fake clock
export function progressPrinter(io: Pick<Io, 'isTTY'>, report: Reporter) {
  let last = '';
  let lastNote = '';
  let lastPrintedMs = 0;
  return (rows: NodeProgress[], note: string | undefined, elapsedMs: number) => {
    const line = rows
      .map((r) => `${r.node}: ${r.newReady ? (r.oldPods ? 'new Ready, old terminating' : 'done') : `waiting (${r.readyPods} Ready)`}`)
      .join(' | ');
    if (line !== last && (io.isTTY || !last || rows.every((r) => r.newReady))) {
      report.info(line);
      lastPrintedMs = elapsedMs;
    } else if (line !== last) report.detail(`${Math.round(elapsedMs / 1000)} s: ${line}`);
    else if (elapsedMs - lastPrintedMs >= HEARTBEAT_MS) {
      const ready = rows.reduce((n, r) => n + r.readyPods, 0);
      const total = rows.reduce((n, r) => n + r.pods, 0);
      const onNew = `${rows.filter((r) => r.newReady).length}/${rows.length} ${rows.length === 1 ? 'workload' : 'nodes'}`;
      report.info(`still waiting after ${Math.round(elapsedMs / 1000)} s: ${ready}/${total} Pods ready, ${onNew} on the new template`);
      lastPrintedMs = elapsedMs;
    }
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
  const api = await rolloutApi(session.conn, 'Nothing was enrolled and nothing was changed.');
  const workload = await readWorkloadOrMissing(api, ref, '--rollout names', 'Nothing was enrolled and nothing was changed.');
  // The rollout follows the workload's Pods: a token that cannot list them would fail after enrolling.
  await api.podsOf(ref, workload);
  // The fingerprint is not known before enrolling: a placeholder, the same shape as the real patch.
  await api.patchWorkload(ref, restartPatch(new Date(0), 'dry-run'), { dryRun: true });
  return `rollout of ${describeRef(ref)}: the workload exists, its Pods can be listed, and the restart patch is allowed (server-side dry run)`;
}

export async function rolloutWorkload(
  session: ClusterSession,
  ref: WorkloadRef,
  request: RolloutRequest,
  io: Io,
  report: Reporter,
): Promise<RolloutOutcome> {
  // The rollout's deadline replaces the command's from here: a rotation's --timeout ends where its rollout
  // begins. Once the restart begins, no deadline cuts the requests that may have to undo it.
  handOverDeadline(session.conn.limits, request.deadline);
  const secretNames = [request.identitySecret ?? DEFAULT_SECRET_NAME, HELM_SECRET_NAME].filter((n, i, all) => all.indexOf(n) === i);
  const fingerprint = request.fingerprint ?? (await secretFingerprint(session, ref.namespace, secretNames));
  report.step(
    `${request.checkOnly ? 'check' : 'roll out'} ${describeRef(ref)}${fingerprint ? ` (identity fingerprint ${fingerprint})` : ''}`,
  );
  return runRollout(await rolloutApi(session.conn), {
    ref,
    checkOnly: request.checkOnly,
    surge: request.surge,
    fallback: request.fallback,
    ...(fingerprint ? { fingerprint } : {}),
    identitySecretNames: secretNames,
    deadline: request.deadline,
    pollMs: request.pollMs,
    dryRun: request.dryRun,
    ...(request.signal ? { signal: request.signal } : {}),
    onRestartBegins: () => {
      handOverDeadline(session.conn.limits, undefined);
      request.onRestartBegins?.();
    },
    onProgress: progressPrinter(io, report),
    onWarning: (message) => report.warn(message),
    ...(request.eventInstance ? { eventInstance: request.eventInstance } : {}),
  });
}
