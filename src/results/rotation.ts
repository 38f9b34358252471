import type { Envelope, OneOf } from './envelope.js';
import type { TargetWhere, VerifyReport } from './identity.js';

/** What the running cluster agent does with a changed identity Secret, and the version that says so. */
export interface AgentReload {
  reloads: 'urn-change' | 'none' | 'unknown';
  why: string;
  agentVersion: string | null;
  versionSource: string | null;
}

/** One step of a dry run: what it checked, what the real step would do. */
export interface PlanEntry {
  step: string;
  action: string;
}

/** X-Datadog-OnPrem-Version sent, and where it came from. */
export interface AgentVersionChoice {
  version: string;
  source: 'agent IPC' | '--agent-version' | 'cluster agent image' | 'par-identity version';
  /** Why the agent was not asked or did not answer. */
  note?: string;
}

/** The runner's connections, created after enrolling as the agent creates them (best effort). */
export interface ConnectionsOutcome {
  skipped?: string;
  created: string[];
  failed: { integrationType: string; reason: string }[];
}

/** The DaemonSet capacity fallback on one node. */
export interface FallbackStep {
  node: string;
  deletedPod?: string;
  skipped?: string;
}

/** The strategy fields a rollout changes, as they are on the workload (null: not set). */
export interface StrategyFields {
  type: string | null;
  maxSurge: number | string | null;
  maxUnavailable: number | string | null;
}

/** A strategy record an earlier rollout left on its workload (docs/rollout.md), and what this run did about it. */
export interface LeftoverReport {
  state: 'unreadable' | 'in-progress' | 'interrupted' | 'changed-since';
  message: string;
  changedAt?: string;
  by?: { host: string; pid: number };
  original?: StrategyFields;
  changed?: StrategyFields;
  current?: StrategyFields;
  /** What this run did: reported only (--check, dry run, status), restored the original, or left the strategy and removed the record. */
  action: 'reported' | 'restored' | 'record-removed';
}

export interface RolloutSummary {
  target: string;
  action: 'checked' | 'dry-run' | 'unchanged' | 'rolled-out';
  surged: boolean;
  strategyRestored: boolean;
  fallbackSteps: FallbackStep[];
  previousRunnerSafeToRemove: boolean;
  /** The strategy record an interrupted earlier rollout left, and what this one did about it (docs/rollout.md). */
  interruptedRollout?: LeftoverReport;
  /** Someone changed the strategy during this rollout: their value, left as it is. */
  strategyChangedMeanwhile?: StrategyFields;
}

/** What writing the file left. */
export interface FileWriteFacts {
  backupFile: string | null;
  /** Where a live file that did not decode was kept aside. */
  keptAside: string | null;
}

/** What writing a Secret left. */
export interface SecretWriteFacts {
  resourceVersion: string;
  action: 'created' | 'updated';
  previousKept: boolean;
}

/** How the new runner was named: the hostname stored (file, Helm runner), the cluster id (cluster agent). */
export interface RunnerNaming {
  hostname?: string;
  hostnameSource?: string | null;
  clusterId?: string;
}

export type RotationCommand = 'rotate-identity' | 'rotate-par-identity';

/**
 * The runner whose identity the rotation replaced: it stays registered in Datadog. `removedByDatadog`
 * (docs/protocol.md §14): an API-key-only (ownerless) node-agent runner is deleted by Datadog after 35
 * days without contact; an owned runner and the cluster agent's runner never are.
 */
export interface PreviousRunner {
  urn: string;
  /** The name it was enrolled with, when this tool enrolled and verified it (the verified mark keeps it). */
  name?: string;
  removedByDatadog: 'after-35-days-inactive' | 'never';
}

/** A rotation that happened. */
export type RotatedResult = Envelope<RotationCommand, 'ok'> &
  TargetWhere &
  OneOf<FileWriteFacts, SecretWriteFacts> &
  RunnerNaming & {
    dryRun?: undefined;
    urn: string;
    previousUrn: string | null;
    /** The runner replaced, and whether Datadog removes it by itself; null when nothing was replaced. */
    previousRunner: PreviousRunner | null;
    /** RFC 7638 thumbprint of the new public key. */
    fingerprint: string;
    agentVersion: AgentVersionChoice;
    connections: ConnectionsOutcome | null;
    restartHint: string;
    /** Cluster agent only: what the running agent does with the new Secret (docs/protocol.md §6d). */
    agentReload?: AgentReload;
    verify: VerifyReport;
    rollout: RolloutSummary | null;
    /** The CLI command that undoes it. */
    rollbackCommand: string;
    durationMs: number;
  };

/** What a dry run proved of the keys with Datadog's read-only key checks (docs/protocol.md §13). */
export interface CredentialCheck {
  /** `accepted`: /api/v1/validate accepted it; `unproven`: the check could not tell (see `unproven`). */
  apiKey: 'accepted' | 'unproven';
  /** `accepted`: /api/v2/validate_keys accepted it with the API key; null under API-key-only enrollment (none is sent). */
  appKey: 'accepted' | 'unproven' | null;
  /** What the dry run did not prove, and why. */
  unproven: string[];
}

/** `dryRun: true`: every check passed; nothing was enrolled or changed. */
export type RotationPlanResult = Envelope<RotationCommand, 'ok'> &
  TargetWhere &
  RunnerNaming & {
    dryRun: true;
    previousUrn: string | null;
    enrollmentUrl: string;
    /** The Datadog site (URN region, API host) and where it came from (docs/configuration.md, "Site"). */
    site: string;
    siteSource: string;
    /** The Secret targets: whether the write would create or update it. */
    action?: 'create' | 'update';
    /** What was proven of the keys, and what was not. */
    credentials: CredentialCheck;
    plan: PlanEntry[];
    durationMs: number;
  };

/** `ifOlderThanSeconds`: the identity in service is younger; nothing was enrolled or changed. */
export type RotationSkippedResult = Envelope<RotationCommand, 'skipped'> &
  TargetWhere & {
    dryRun?: undefined;
    urn: string | null;
    fingerprint: string | null;
    rotatedAt: string | null;
    ageSeconds: number | null;
    reason: string;
    durationMs: number;
  };

export type RotationResult = RotatedResult | RotationPlanResult | RotationSkippedResult;
