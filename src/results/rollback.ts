import type { Envelope, OneOf } from './envelope.js';
import type { TargetWhere, VerifyReport } from './identity.js';
import type { AgentReload, PlanEntry } from './rotation.js';

/** A rollback that happened: the previous identity is in service, the replaced one is the previous. */
export type RolledBackResult = Envelope<'rollback', 'ok'> &
  TargetWhere &
  OneOf<{ backupFile: string | null }, { resourceVersion: string | null }> & {
    dryRun?: undefined;
    urn: string;
    replacedUrn: string | null;
    fingerprint: string;
    restartHint: string;
    /** Cluster agent only: what the running agent does with the restored Secret (docs/protocol.md §6d). */
    agentReload?: AgentReload;
    /** Rolling back again is the roll forward. */
    rollbackCommand: string;
    verify: VerifyReport;
  };

/** `rollback --dry-run`: every check passed; nothing was changed. */
export type RollbackPlanResult = Envelope<'rollback', 'ok'> &
  TargetWhere & {
    dryRun: true;
    /** The identity the rollback would put back in service. */
    urn: string | null;
    replacedUrn: string | null;
    plan: PlanEntry[];
    durationMs: number;
  };

export type RollbackResult = RolledBackResult | RollbackPlanResult;
