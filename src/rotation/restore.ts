import { VerificationError } from '../errors.js';
import type { Io } from '../io.js';
import { type CommandResult, createReporter, type OutputOptions } from '../output.js';
import { commandLine } from './command-line.js';
import { resolveTarget, type TargetOptions } from './resolve-target.js';
import type { TargetKind } from './target.js';
import { describeVerify, type VerifyReport, verifyWithConfig } from './verify-step.js';

// `rollback` for every target: the previous identity goes back in service through the target's own
// guard (atomic rename / resourceVersion), and the replaced one becomes the previous.

export interface RestoreOptions extends OutputOptions, TargetOptions {
  verify: boolean;
  timeoutSeconds: number;
  /** --wait-lock: how long to wait for another run's lock on the target. */
  waitLockSeconds?: number;
}

export async function runRestore(kind: TargetKind, options: RestoreOptions, io: Io): Promise<CommandResult> {
  const report = createReporter(io, options);
  report.step('resolve config and target');
  const { config, target } = await resolveTarget(kind, options, io, report, { requireEnabled: false, kubeDeadline: true });
  report.step(`lock ${target.label}`);
  const held = await target.lock(options.waitLockSeconds ?? 0);
  for (const note of held.notes) report.info(note);
  for (const warning of held.warnings) report.warn(warning);
  let outcome: Awaited<ReturnType<typeof target.restore>>;
  try {
    report.step(`restore the previous identity in ${target.label}`);
    outcome = await target.restore(await target.read());
  } finally {
    await held.release();
  }
  for (const warning of outcome.warnings) report.warn(warning);
  const urn = outcome.restored.record.urn;
  let verify: VerifyReport = { performed: false };
  if (options.verify) {
    report.step('verify online (signed health check)');
    verify = await verifyWithConfig(config, outcome.restored, target.flavor, io, report, options.timeoutSeconds);
  }
  const again = commandLine(['par-identity', 'rollback', ...target.selector]);
  if (verify.performed && !verify.ok) {
    throw new VerificationError(
      `rolled back ${target.label} to ${urn}, but the server did not accept it: ${verify.reason}`,
      `The runner may have been removed in Datadog. Roll forward again with \`${again}\` or rotate anew.`,
      { urn, ...target.where } as Record<string, string>,
    );
  }
  return {
    command: 'rollback',
    data: { urn, replacedUrn: outcome.replacedUrn, fingerprint: outcome.restored.key.kid, ...target.where, ...outcome.data, restartHint: target.restartCommand(), rollbackCommand: again, verify },
    summary: [
      `rolled back ${target.label} to: ${urn}`,
      `  fingerprint:  ${outcome.restored.key.kid}`,
      ...outcome.lines,
      `  verified:     ${describeVerify(verify)}`,
      `next: ${target.restartAdvice()}`,
      `undo: ${again}`,
    ],
  };
}
