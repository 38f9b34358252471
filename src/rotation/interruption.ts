import { InterruptedError, ParError, stopSignalOf } from '../errors.js';
import { programName } from '../single-executable.js';
import { commandLine, kubeSelector, rollbackCommandOf } from '../command-line.js';
import type { Run, Step } from './run.js';

// What a run stopped by SIGINT/SIGTERM (or the API caller's signal) says: exactly what is in place,
// read from what the run's steps recorded (docs/output.md, "Interrupted runs"). The runner honours the
// stop between steps only (src/rotation/runner.ts): the write and the restore are never cut, so the
// target is always either untouched or completely written.

function statusCommand(r: Run): string {
  const target = r.resolved?.target;
  return commandLine([programName(), 'status', ...(target?.selector ?? [])]);
}

/**
 * What to do in Datadog about a runner a stopped run may have registered: remove it by its URN when
 * the enrollment answered, else look for it by the name this run gave it.
 */
function removeRunnerAdvice(r: Run): string {
  if (r.enrolled && r.next) return `Remove ${r.next.urn} in Datadog (On-Prem Runners)`;
  return `If Datadog now lists a runner named ${r.preflight?.naming.runnerNamePrefix ?? '<hostname>'}-<UTC time> created by this run, remove it there`;
}

/** `phase`: stopped at the boundary before `step`, or while `step` ran (a request of it was aborted). */
export function interruptedAt(r: Run, step: Step, phase: 'before' | 'during', cause?: unknown): InterruptedError {
  const signal = stopSignalOf(r.spec.options.signal);
  const by = signal ?? 'the caller’s abort';
  const target = r.resolved?.target;
  const label = target?.label ?? 'the identity';
  const where = phase === 'before' ? `before step "${step.title}"` : `during step "${step.title}"`;
  const details = { step: step.name, phase };
  const make = (inPlace: string, hint: string) =>
    new InterruptedError(step.name, { message: `stopped by ${by} ${where}: ${inPlace}`, hint, signal, details });
  // The --rollout workload's own restart when the run named one; else the target's advice, "Restart the
  // runner … identity." without its full stop, to sit inside a sentence.
  const rolloutCommand = r.rollout
    ? commandLine([
        programName(),
        'rollout',
        `${r.rollout.ref.kind}/${r.rollout.ref.name}`,
        '-n',
        r.rollout.ref.namespace,
        ...kubeSelector(r.spec.options),
      ])
    : undefined;
  const restart = rolloutCommand
    ? `restart ${r.rollout!.ref.kind}/${r.rollout!.ref.name} with \`${rolloutCommand}\``
    : (target?.restartAdvice() ?? 'restart the runner').replace(/\.$/, '');
  const Restart = restart.charAt(0).toUpperCase() + restart.slice(1);
  const runAgain = `Run \`${statusCommand(r)}\` to see it, then run ${r.spec.command} again when you want.`;

  if (r.spec.options.dryRun)
    return make(`nothing was changed (dry run): ${label} untouched`, 'Nothing to undo. Run the dry run again when you want.');

  // The rollout undoes its own restart when stopped, and says what it had restarted (src/rollout/run-rollout.ts).
  if (step.name === 'rollout' && phase === 'during' && cause instanceof ParError && cause.code === 'INTERRUPTED') {
    const inPlace = typeof cause.details?.inPlace === 'string' ? cause.details.inPlace : cause.message;
    return make(
      `the new identity ${r.next?.urn ?? ''} is written to ${label} ` +
        `and ${r.verify?.performed ? 'verified' : 'not verified (--no-verify)'}; the rollout was stopped: ${inPlace}`,
      `Restart the workload when you want: \`${rolloutCommand ?? commandLine([programName(), 'rollout'])}\`. ` +
        `Undo the rotation with \`${target ? rollbackCommandOf(target) : 'par-identity rollback'}\`.`,
    );
  }

  if (r.restored) {
    const verified = r.verify?.performed && r.verify.ok ? 'and verified' : 'but not verified';
    return make(
      `the previous identity ${r.restored.restored.record.urn} is back in service in ${label} ${verified}; ` +
        'the replaced one is kept as the previous identity; the runner was not restarted',
      `${r.verify?.performed && r.verify.ok ? '' : `Verify it with \`${statusCommand(r)} --verify\`. `}${Restart}.`,
    );
  }

  if (r.written && r.next) {
    const urn = r.next.urn;
    const verified = r.verify?.performed && r.verify.ok;
    const what = `the new identity ${urn} (fingerprint ${r.next.key.kid}) is written to ${label}${r.written.previousKept ? ', the previous one kept' : ''}`;
    const undo = target ? rollbackCommandOf(target) : 'par-identity rollback';
    if (verified) {
      const pending = [
        r.connections === undefined && step.name === 'connections' ? 'its connections were not created' : '',
        'the runner was not restarted',
      ]
        .filter(Boolean)
        .join('; ');
      return make(`${what} and verified; ${pending}`, `${Restart}. Undo with \`${undo}\`.`);
    }
    return make(
      `${what} but not verified (--no-verify); the runner was not restarted`,
      `Prove it with \`${statusCommand(r)} --verify\` before restarting the runner (${restart}); if Datadog does not accept it, undo with \`${undo}\`.`,
    );
  }

  // A target with a pending key store kept the key before the request left (docs/identity-lifecycle.md §3).
  const pending = target?.pending;
  // Enrolled with its URN in the pending record (a run that verifies): the next run verifies that key
  // again and writes it, instead of enrolling another runner (docs/identity-lifecycle.md §3).
  if (pending && r.enrolled && r.next && r.spec.options.verify) {
    const proven =
      r.verify?.performed && r.verify.ok
        ? 'and the health check accepted it'
        : step.name === 'verify' && phase === 'during'
          ? 'and its health check was cut off'
          : 'and not yet verified';
    return make(
      `runner ${r.next.urn} was enrolled with Datadog ${proven} (key fingerprint ${r.next.key.kid}); nothing was written: ` +
        `its private key is kept pending in ${pending.where}, not in service: ${label} otherwise untouched, ` +
        'the identity in service unchanged',
      `The next ${r.spec.command} verifies that same key again and writes it if Datadog accepts it, without enrolling another runner. ${runAgain}`,
    );
  }
  if (pending && r.key && (r.enrolled || (step.name === 'enroll' && phase === 'during'))) {
    const registered =
      r.enrolled && r.next
        ? `runner ${r.next.urn} was enrolled with Datadog`
        : 'the enrollment request was cut off, so Datadog may or may not have registered a runner';
    return make(
      `${registered} (key fingerprint ${r.key.kid}); its private key is kept pending in ${pending.where}, ` +
        `not in service: ${label} otherwise untouched, the identity in service unchanged`,
      `\`${statusCommand(r)}\` lists it as a possible orphan (exit 15) ` +
        `and the next ${r.spec.command} sets it aside. ${removeRunnerAdvice(r)}, then remove the pending key as status says.`,
    );
  }

  if (r.enrolled && r.next) {
    return make(
      `runner ${r.next.urn} was enrolled with Datadog (key fingerprint ${r.next.key.kid}), ` +
        `but its private key was never stored and is discarded: ${label} untouched, the identity in service unchanged`,
      `That runner can never connect: remove ${r.next.urn} in Datadog (On-Prem Runners). ${runAgain}`,
    );
  }

  if (step.name === 'enroll' && phase === 'during' && r.key) {
    return make(
      `the enrollment request was cut off, so Datadog may or may not have registered a runner for key fingerprint ${r.key.kid}, ` +
        `whose private key is discarded: ${label} untouched, the identity in service unchanged`,
      `If Datadog now lists a runner named ${r.preflight?.naming.runnerNamePrefix ?? '<hostname>'}-<UTC time> created by this run, ` +
        `remove it there. ${runAgain}`,
    );
  }

  return make(`nothing was enrolled or changed: ${label} untouched`, `Nothing to undo. ${runAgain}`);
}
