import { decodePrivateJwk } from '../identity/index.js';
import type { Io } from '../io.js';
import { connectKube, coreApi, DEFAULT_SECRET_NAME, HELM_SECRET_NAME, readIdentitySecret, serviceAccountNamespace } from '../kube/index.js';
import { type CommandResult, createReporter, type OutputOptions, type Reporter } from '../output.js';
import { describeRef, parseWorkloadRef, type RolloutOutcome, rolloutApi, runRollout, type WorkloadRef } from '../rollout/index.js';

export interface RolloutCommandOptions extends OutputOptions {
  target: string;
  namespace?: string;
  kubeconfig?: string;
  context?: string;
  checkOnly: boolean;
  surge: boolean | 'auto';
  fallback: boolean;
  identitySecret?: string;
  timeoutSeconds: number;
  pollMs: number;
  dryRun: boolean;
  /** Set by a rotation that already knows the new fingerprint. */
  fingerprint?: string;
}

/** The fingerprint of the identity the Pods should run: from the identity Secret when one is found. */
async function secretFingerprint(core: Awaited<ReturnType<typeof coreApi>>, namespace: string, names: string[]): Promise<string | undefined> {
  for (const name of names) {
    const state = await readIdentitySecret(core, { namespace, name }).catch(() => undefined);
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

function renderCheck(outcome: RolloutOutcome): string[] {
  const c = outcome.check;
  return [
    `${outcome.target}: ${c.verdict}`,
    ...c.findings.map((f) => `  ${f.severity === 'blocker' ? 'BLOCKED' : f.severity}: ${f.message} [${f.code}]`),
    `  identity: ${c.identity.ways.join('; ')}${c.identity.restartNeeded ? ' → a restart is needed' : ''}`,
    ...c.nodes.map((n) => `  node ${n.node}: ${n.verdict} (${n.reasons.join(', ')})`),
  ];
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

export async function rolloutWith(ref: WorkloadRef, options: RolloutCommandOptions, io: Io, report: Reporter): Promise<RolloutOutcome> {
  const conn = await connectKube({ ...(options.kubeconfig ? { kubeconfig: options.kubeconfig } : {}), ...(options.context ? { context: options.context } : {}), env: io.env });
  for (const warning of conn.warnings) report.warn(warning);
  const secretNames = [options.identitySecret ?? DEFAULT_SECRET_NAME, HELM_SECRET_NAME].filter((n, i, all) => all.indexOf(n) === i);
  const fingerprint = options.fingerprint ?? (await secretFingerprint(await coreApi(conn), ref.namespace, secretNames));
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    report.step(`${options.checkOnly ? 'check' : 'roll out'} ${describeRef(ref)}${fingerprint ? ` (identity fingerprint ${fingerprint})` : ''}`);
    return await runRollout(await rolloutApi(conn), {
      ref,
      checkOnly: options.checkOnly,
      surge: options.surge,
      fallback: options.fallback,
      ...(fingerprint ? { fingerprint } : {}),
      identitySecretNames: secretNames,
      timeoutMs: options.timeoutSeconds * 1000,
      pollMs: options.pollMs,
      dryRun: options.dryRun,
      signal: controller.signal,
      now: () => io.now(),
      onProgress: progressPrinter(io, report),
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

export async function run(options: RolloutCommandOptions, io: Io): Promise<CommandResult> {
  const report = createReporter(io, options);
  const namespace = options.namespace ?? serviceAccountNamespace(io.env) ?? 'default';
  const ref = parseWorkloadRef(options.target, namespace);
  const outcome = await rolloutWith(ref, options, io, report);
  const summary = renderCheck(outcome);
  if (outcome.action === 'dry-run') summary.push('dry run: would apply these patches:', ...outcome.patches.map((p) => `  ${JSON.stringify(p)}`));
  if (outcome.action === 'unchanged') summary.push('unchanged: every Pod already runs this identity fingerprint');
  if (outcome.action === 'rolled-out') {
    summary.push(
      `rolled out ${outcome.surged ? 'create-before-delete (surge)' : "with the workload's own strategy"}${outcome.strategyRestored ? '; original strategy restored' : ''}`,
      ...outcome.fallbackSteps.map((s) => `  fallback on ${s.node}: ${s.deletedPod ? `deleted old Pod ${s.deletedPod} first (best effort)` : `skipped (${s.skipped})`}`),
    );
  }
  return { command: 'rollout', data: { ...outcome }, summary };
}
