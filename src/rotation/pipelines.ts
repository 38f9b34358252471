import { type Io, ioClock } from '../io.js';
import { Deadline } from '../time/index.js';
import { type CommandResult, createReporter } from '../output.js';
import type { RollbackResult } from '../results/rollback.js';
import type { RotationCommand, RotationResult } from '../results/rotation.js';
import type { IdentityStatusResult } from '../results/status.js';
import type { InspectInput, RollbackInput, RotationInput } from '../command-options.js';
import { rollbackPlanResult, rollbackResult } from './renderers/rollback-result.js';
import { rotationPlanResult, rotationResult, skippedResult } from './renderers/rotation-result.js';
import { statusResult } from './renderers/status-result.js';
import type { TargetResolver } from './resolved-target.js';
import type { Run, RunSpec, Step } from './run.js';
import { runSteps } from './runner.js';
import { connections } from './steps/connections.js';
import { enroll } from './steps/enroll.js';
import { generate } from './steps/generate.js';
import { inspect } from './steps/inspect.js';
import { lock } from './steps/lock.js';
import { preflight } from './steps/preflight.js';
import { read } from './steps/read.js';
import { readBack } from './steps/read-back.js';
import { resolve } from './steps/resolve.js';
import { restore } from './steps/restore.js';
import { rollout } from './steps/rollout.js';
import { verify } from './steps/verify.js';
import { write } from './steps/write.js';
import type { TargetKind } from './target.js';

// THE pipeline and the subsets of it each command runs. A step that fails stops the run. The
// identity a rotation or a rollback puts in service is proven online BEFORE it is written where a
// runner reads it (verify, then write, then read back): a key the server rejects is never written,
// so there is nothing to roll back, and a check with no verdict writes nothing either
// (docs/identity-lifecycle.md §3). --no-verify writes without the check. The roll-out comes after
// the write, so Pods only restart onto an identity the server accepted. With --dry-run every step
// runs its plan instead.

const ROTATION_STEPS: readonly Step<RotationInput>[] = [
  resolve,
  lock,
  read,
  preflight,
  generate,
  enroll,
  verify,
  write,
  readBack,
  connections,
  rollout,
];
const ROLLBACK_STEPS: readonly Step<RollbackInput>[] = [resolve, lock, read, verify, restore];
/** status reads only; without --verify it does not go online at all. */
const statusSteps = (options: InspectInput): readonly Step<InspectInput>[] => [
  resolve,
  lock,
  read,
  inspect,
  ...(options.verify ? [verify] : []),
];

function start<O extends RotationInput | RollbackInput | InspectInput>(spec: RunSpec<O>, io: Io): Run<O> {
  const startedMs = io.now().getTime();
  return {
    spec,
    io,
    report: createReporter(io, spec.options),
    startedMs,
    deadline: Deadline.after(spec.options.timeoutSeconds * 1000, ioClock(io)),
  };
}

export async function runRotation(
  command: RotationCommand,
  kind: TargetKind,
  options: RotationInput,
  io: Io,
  resolveTarget: TargetResolver,
): Promise<CommandResult<RotationResult>> {
  // A Helm runner's config is often no more than its credentials: only the other two need it enabled.
  const r = start(
    { command, kind, options, access: 'write', requireEnabled: kind !== 'helm-secret', createsMissing: true, enrolls: true, resolveTarget },
    io,
  );
  const plan = await runSteps(ROTATION_STEPS, r);
  if (r.skipped) return skippedResult(r, command);
  return options.dryRun ? rotationPlanResult(r, command, plan) : rotationResult(r, command);
}

export async function runRollback(
  kind: TargetKind,
  options: RollbackInput,
  io: Io,
  resolveTarget: TargetResolver,
): Promise<CommandResult<RollbackResult>> {
  const r = start({ command: 'rollback', kind, options, access: 'write', requireEnabled: false, resolveTarget }, io);
  const plan = await runSteps(ROLLBACK_STEPS, r);
  return options.dryRun ? rollbackPlanResult(r, plan) : rollbackResult(r);
}

export async function runStatus(
  kind: TargetKind,
  options: InspectInput,
  io: Io,
  resolveTarget: TargetResolver,
): Promise<CommandResult<IdentityStatusResult>> {
  const r = start({ command: 'status', kind, options, access: 'read', requireEnabled: false, resolveTarget }, io);
  await runSteps(statusSteps(options), r);
  return statusResult(r);
}
