import type { Deadline } from '../time/index.js';
import type { TargetOptions } from '../command-options.js';
import type { AgentConfig } from '../config/index.js';
import type { Io } from '../io.js';
import type { ClusterAccess } from '../kube/cluster-session.js';
import type { Reporter } from '../output.js';
import type { ClusterAgentReport } from '../results/identity.js';
import type { IdentityTarget, TargetKind } from './target.js';

// What the session's target resolution (src/session/resolve-target.ts) hands a run, and what the
// resolve step asks of it. The pipeline takes the resolver from the command that starts it and never
// imports the session: the session sits above the pipeline (docs/architecture.md, "Layers").

export interface ResolvedTarget {
  config: AgentConfig;
  target: IdentityTarget;
  cluster: ClusterAccess;
  /** The running cluster agent whose settings the run took (off-cluster, cluster-agent Secret). */
  agent?: ClusterAgentReport;
  /** The environment the run's later steps read (the agent's enrollment-endpoint switch included). */
  env?: NodeJS.ProcessEnv;
}

/** What a run asks of the resolution besides the options. */
export interface ResolveChecks {
  requireEnabled: boolean;
  /** The command's deadline: no Kubernetes request outlives it. */
  deadline?: Deadline;
  /** The run's requests signal (src/rotation/runner.ts): no Kubernetes request outlives a stop. */
  signal?: AbortSignal;
  /** status: a namespace mismatch warns, an unknown namespace is looked for (docs/protocol.md §6c). */
  readOnly?: boolean;
  /** A rotation, which creates a missing Secret: --create confirms a namespace not known to be the agent's. */
  create?: { confirmed: boolean };
  /** Where the running agent's settings lead elsewhere than this run's: `stop` (a rotation) or `report` (status, rollback). */
  agentSettings?: 'stop' | 'report';
  /** --override-agent-settings: go on with this run's settings, listing what is overridden. */
  overrideAgentSettings?: boolean;
}

/** src/session/resolve-target.ts's resolveTarget, passed down by the command. */
export type TargetResolver = (
  kind: TargetKind,
  options: TargetOptions,
  io: Io,
  report: Reporter,
  checks: ResolveChecks,
) => Promise<ResolvedTarget>;
