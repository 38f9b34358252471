import { KubernetesError, ParError, StorageError, VerificationError } from '../errors.js';
import type { Io } from '../io.js';
import { type CommandResult, createReporter, type OutputOptions } from '../output.js';
import { ageOf, describeAge } from './age.js';
import { commandLine } from './command-line.js';
import { resolveTarget, type TargetOptions } from './resolve-target.js';
import { summaryOf, type TargetKind } from './target.js';
import { describeVerify, type VerifyReport, verifyWithConfig } from './verify-step.js';

// `status` for every target: what is in service, what a rollback would restore, the target's own
// facts, and optionally the online proof that the server accepts it.

export interface InspectOptions extends OutputOptions, TargetOptions {
  verify: boolean;
  timeoutSeconds: number;
}

export async function runInspect(kind: TargetKind, options: InspectOptions, io: Io): Promise<CommandResult> {
  const report = createReporter(io, options);
  const { config, target } = await resolveTarget(kind, options, io, report, { requireEnabled: false, kubeDeadline: true });
  // Status takes the lock only to finish what a crashed run left (the sweep keeps every identity);
  // when a live run holds it, status just reads.
  const held = await target.lock(0).catch((err: unknown) => {
    if (err instanceof ParError && err.code === 'LOCKED') {
      report.info(`${target.label} is locked by a running par-identity: reading without the sweep`);
      return undefined;
    }
    throw err;
  });
  for (const warning of held?.warnings ?? []) report.warn(warning);
  await held?.release();
  const current = await target.read().catch((err: unknown) => {
    // Status reports a missing Secret as missing rather than as a rotation would (create / refuse).
    if (err instanceof KubernetesError && err.code === 'SECRET_MISSING') return undefined;
    throw err;
  });
  const rollbackCommand = commandLine(['par-identity', 'rollback', ...target.selector]);
  if (!current || current.state === 'missing') {
    if (kind === 'file') {
      throw new StorageError('IDENTITY_MISSING', `no identity file at ${target.where.identityFile}`, 'Run `par-identity rotate-identity` to enroll one, or point --identity-file/-c at the right place.', { path: String(target.where.identityFile) });
    }
    throw new KubernetesError('SECRET_MISSING', `${target.label} does not exist`, 'Rotate to create it, or pass -n/--secret-name (--k8s-secret) for the right one.');
  }
  if (current.state === 'corrupt' || !current.identity) {
    throw new StorageError(
      'IDENTITY_CORRUPT',
      `${target.label} holds no valid identity: ${current.problem?.message ?? 'it does not decode'}`,
      current.previous ? `Restore the previous identity with \`${rollbackCommand}\`, or rotate again.` : 'Rotate again.',
      { ...(kind === 'file' ? { path: String(target.where.identityFile) } : {}) },
    );
  }
  const facts = await target.facts(current);
  for (const warning of facts.warnings) report.warn(warning);
  let verify: VerifyReport = { performed: false };
  if (options.verify) {
    report.step('verify online (signed health check)');
    verify = await verifyWithConfig(config, current.identity, target.flavor, io, report, options.timeoutSeconds);
  }
  const now = summaryOf(current.identity);
  const age = ageOf(current.rotatedAt, io.now());
  if (verify.performed && !verify.ok) {
    throw new VerificationError(`the server did not accept ${now?.urn}: ${verify.reason}`, `Rotate again, or roll back with \`${rollbackCommand}\` if the previous identity is the one that works.`, { urn: now?.urn ?? null });
  }
  return {
    command: 'status',
    data: { target: target.kind, ...target.where, ...now, current: now, rotatedAt: current.rotatedAt ?? null, ageSeconds: age, ...facts.data, rollbackCommand, verify },
    summary: [
      `identity: ${now?.urn}  (${target.label})`,
      `  org / runner: ${now?.orgId} / ${now?.runnerId} (region ${now?.region})`,
      `  fingerprint:  ${now?.fingerprint}`,
      `  written:      ${current.rotatedAt ? `${current.rotatedAt} (${describeAge(age ?? 0)} ago; from ${current.rotatedAtSource})` : 'unknown'}`,
      ...facts.lines,
      `  verified:     ${options.verify ? describeVerify(verify) : 'not checked (add --verify)'}`,
    ],
  };
}
