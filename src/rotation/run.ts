import type { ConnectionsOutcome } from '../enrollment/index.js';
import type { DecodedIdentity, PrivateIdentityKey } from '../identity/index.js';
import type { Io } from '../io.js';
import type { Reporter } from '../output.js';
import type { CredentialCheck } from '../results/rotation.js';
import type { SiteRegion } from '../results/status.js';
import type { RolloutOutcome } from '../rollout/run-rollout.js';
import type { WorkloadRef } from '../rollout/workload-ref.js';
import type { ClusterSession } from '../kube/cluster-session.js';
import type { EnrollmentContext } from './enrollment-context.js';
import type { RunOptions } from '../command-options.js';
import type { ResolvedTarget, TargetResolver } from './resolved-target.js';
import type {
  CurrentIdentity,
  NewIdentity,
  Preflight,
  RestoreOutcome,
  TargetFacts,
  TargetKind,
  TargetLock,
  WriteOutcome,
} from './target.js';
import type { Deadline } from '../time/index.js';
import type { VerifyReport } from './verify-step.js';

// What one run of a pipeline is: what was asked (the spec) and what its steps pass each other. A
// step knows nothing of which command runs it: it reads the spec's properties, never its name.

export interface RunSpec<O extends RunOptions = RunOptions> {
  /** The command name results and errors carry. */
  command: 'rotate-identity' | 'rotate-par-identity' | 'rollback' | 'status';
  kind: TargetKind;
  options: O;
  /**
   * `write`: the target's lock is held from the lock step until the run ends. `read` (status): it is
   * taken only to finish what a crashed run left, and skipped when a live run holds it; a missing
   * Secret then reads as missing instead of being created or refused.
   */
  access: 'write' | 'read';
  /** Refuse a runner whose config does not enable it (rotations of the file and of the cluster agent's Secret). */
  requireEnabled: boolean;
  /** A rotation creates a missing cluster-agent Secret, only where it is sure to be the agent's (docs/protocol.md §6c). */
  createsMissing?: boolean;
  /** The run enrolls a new runner (a rotation): what it resolves must lead where the agent's settings do (src/session/runner-settings.ts). */
  enrolls?: boolean;
  /** The session's target resolution (src/session/resolve-target.ts), handed down by the command: the pipeline never imports the session. */
  resolveTarget: TargetResolver;
}

/** Each field is set by exactly one step. */
export interface Run<O extends RunOptions = RunOptions> {
  spec: RunSpec<O>;
  io: Io;
  report: Reporter;
  startedMs: number;
  /**
   * The command's --timeout, from the start of the run: every request (Kubernetes, enrollment, health
   * check) gets the smaller of its own timeout and what is left of it (docs/architecture.md §Deadlines).
   * The rollout step replaces it with none: its wait has --rollout-timeout and its undo must not be cut.
   */
  deadline: Deadline;
  /**
   * Aborted when the run's signal stops it, except while an atomic step runs: every Kubernetes and
   * Datadog request of the run listens to it. Set by the runner before the first step.
   */
  requests?: AbortSignal;
  resolved?: ResolvedTarget;
  lock?: TargetLock;
  current?: CurrentIdentity;
  preflight?: Preflight;
  ctx?: EnrollmentContext;
  rollout?: { session: ClusterSession; ref: WorkloadRef };
  key?: PrivateIdentityKey;
  next?: NewIdentity;
  enrolled?: { runnerId: string; runnerName: string };
  /** Set by the generate step: the key and runner are an earlier run's pending ones, enrolled but never proven; nothing is enrolled again. */
  resumed?: true;
  /** --dry-run: what Datadog's key checks proved. */
  credentialCheck?: CredentialCheck;
  connections?: ConnectionsOutcome;
  written?: WriteOutcome;
  restored?: RestoreOutcome;
  facts?: TargetFacts;
  /** The identity in service once the run's change is made: read back, restored, or (status) read. */
  inService?: DecodedIdentity;
  /** What the run changed, for the messages that depend on it. */
  change?: 'rotated' | 'rolled back';
  verify?: VerifyReport;
  rolledOut?: RolloutOutcome;
  /** status: the site the agent reads against the identity's region. */
  siteRegion?: SiteRegion;
  /** Set by the read step when --if-older-than finds nothing due: the run stops there, successfully. */
  skipped?: { reason: string; ageSeconds: number | null };
}

export interface Step<O extends RunOptions = RunOptions> {
  name: string;
  title: string;
  /**
   * The step changes the target (write, restore, rollout): a stop signal never aborts its requests, it
   * runs to its end and the run stops after it (src/rotation/runner.ts).
   */
  atomic?: true;
  run(r: Run<O>): Promise<void>;
  /** The dry-run form: the step's checks without side effects; returns what the real step would do. */
  plan(r: Run<O>): Promise<string>;
}

export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`pipeline order: ${what} is not set yet`);
  return value;
}

export function elapsedMs(r: Run): number {
  return r.io.now().getTime() - r.startedMs;
}
