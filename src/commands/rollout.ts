import type { Io } from '../io.js';
import { type CommandResult, createReporter, type OutputOptions, resultJson } from '../output.js';
import type { RolloutOutcome } from '../rollout/run-rollout.js';
import { parseWorkloadRef } from '../rollout/workload-ref.js';
import { clusterAccess } from '../rotation/cluster-session.js';
import { type RolloutRequest, rolloutWorkload } from '../rotation/rollout-step.js';

export interface RolloutCommandOptions extends OutputOptions, RolloutRequest {
  target: string;
  namespace?: string;
  kubeconfig?: string;
  context?: string;
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

export async function run(options: RolloutCommandOptions, io: Io): Promise<CommandResult> {
  const report = createReporter(io, options);
  // A malformed workload reference is a usage error before anything connects.
  parseWorkloadRef(options.target, options.namespace ?? 'default');
  // The rollout keeps its own deadline, and must still restore the strategy after it: no request deadline here.
  const session = await clusterAccess(options, {}, io, report)();
  const ref = parseWorkloadRef(options.target, session.namespace);
  const outcome = await rolloutWorkload(session, ref, options, io, report);
  const summary = renderCheck(outcome);
  if (outcome.action === 'dry-run') summary.push('dry run: the apiserver accepts the first patch (server-side dry run); would apply these patches:', ...outcome.patches.map((p) => `  ${JSON.stringify(p)}`));
  if (outcome.action === 'unchanged') summary.push('unchanged: every Pod already runs this identity fingerprint');
  if (outcome.action === 'rolled-out') {
    summary.push(
      `rolled out ${outcome.surged ? 'create-before-delete (surge)' : "with the workload's own strategy"}${outcome.strategyRestored ? '; original strategy restored' : ''}`,
      ...outcome.fallbackSteps.map((s) => `  fallback on ${s.node}: ${s.deletedPod ? `deleted old Pod ${s.deletedPod} first (best effort)` : `skipped (${s.skipped})`}`),
    );
  }
  return { json: resultJson('rollout', outcome), summary };
}
