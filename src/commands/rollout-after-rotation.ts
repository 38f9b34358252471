import type { Io } from '../io.js';
import type { Reporter } from '../output.js';
import { parseWorkloadRef } from '../rollout/index.js';
import { rolloutWith } from './rollout.js';

// `--rollout <workload>` on the rotate commands: the rotation is only complete when every Pod runs
// the new identity, and only then is the previous runner safe to remove.

export interface RolloutFlags {
  rollout?: string;
  fallback?: boolean;
  rolloutTimeoutSeconds?: number;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export async function rolloutAfterRotation(
  options: RolloutFlags & { json: boolean; color: boolean },
  fingerprint: string,
  namespace: string,
  io: Io,
  report: Reporter,
): Promise<{ data: Record<string, unknown> | null; summary: string[] }> {
  const note = 'note: The previous runner stays registered in Datadog (and keeps working) until you remove it there.';
  if (!options.rollout) return { data: null, summary: [note] };
  const ref = parseWorkloadRef(options.rollout, namespace);
  const outcome = await rolloutWith(
    ref,
    {
      ...options,
      target: options.rollout,
      namespace,
      checkOnly: false,
      surge: 'auto',
      fallback: Boolean(options.fallback),
      timeoutSeconds: options.rolloutTimeoutSeconds ?? 600,
      pollMs: Number(io.env.PAR_IDENTITY_ROLLOUT_POLL_MS ?? 1000),
      dryRun: false,
      fingerprint,
    },
    io,
    report,
  );
  const allNew = outcome.action === 'rolled-out' || outcome.action === 'unchanged';
  return {
    data: { target: outcome.target, action: outcome.action, surged: outcome.surged, strategyRestored: outcome.strategyRestored, fallbackSteps: outcome.fallbackSteps, previousRunnerSafeToRemove: allNew },
    summary: [
      `  rollout:      ${outcome.target} ${outcome.action}${outcome.surged ? ' (create-before-delete)' : ''}`,
      allNew ? 'every Pod runs the new identity: the previous runner is now safe to remove in Datadog.' : note,
    ],
  };
}
