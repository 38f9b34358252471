import type { AgentConfig } from '../config/index.js';
import type { AgentFlavor } from '../enrollment/index.js';
import type { ParError } from '../errors.js';
import type { DecodedIdentity, PrivateIdentityKey } from '../identity/index.js';
import type { OneOf } from '../results/envelope.js';
import type { IdentitySummary, TargetKind, TargetWhere } from '../results/identity.js';
import type { AgentReload, FileWriteFacts, SecretWriteFacts } from '../results/rotation.js';
import type { FileFacts, PossibleOrphan, SecretFacts } from '../results/status.js';
import type { PendingAmendment, PendingKeyRead } from '../storage/pending-key.js';
import type { RunHolder } from '../storage/run-holder.js';

// The one interface every place an identity can live implements: the local identity file, the
// cluster agent's Secret, and the Helm standalone runner's Secret. The steps of the pipeline talk to
// this interface only; a target knows nothing of the steps.

export type { TargetKind };

/** What the target holds before anything is changed. */
export interface CurrentIdentity {
  state: 'missing' | 'ok' | 'corrupt';
  identity?: DecodedIdentity;
  /** The identity a rollback would restore (file backup, previous_* keys). */
  previous?: DecodedIdentity;
  /** Why the current identity does not decode. */
  problem?: ParError;
  /** The identity that last passed the signed health check, as recorded by the target (docs/identity-lifecycle.md §1). */
  lastVerified?: VerifiedMark;
  /** When the identity in service was written (RFC 3339), and how we know. */
  rotatedAt?: string;
  rotatedAtSource?: string;
  /**
   * Fields of the stored identity this tool does not know (a newer agent's; docs/protocol.md §5, docs/protocol.md §6):
   * keys of the identity file's JSON, or data keys of the cluster agent's Secret. A rewrite would drop
   * them, so a rotation or rollback stops unless --override-agent-settings.
   */
  unknownFields?: string[];
  /** The same for the identity a rollback would restore (the file backup). */
  previousUnknownFields?: string[];
  /** Human lines describing what was read (never key material). */
  notes: string[];
  warnings: string[];
}

export interface VerifiedMark {
  fingerprint: string;
  urn: string;
  verifiedAt: string;
  /** An identity this tool wrote after it whose check has not passed: the one a later rotation does not keep. */
  unverified?: string;
  /** The name the identity's runner was enrolled with, when this tool enrolled it: how a later rotation names the runner it replaces. */
  runnerName?: string;
}

/** How the new runner is named and which flavor enrolls it (docs/protocol.md §3). */
export interface EnrollmentNaming {
  flavor: AgentFlavor;
  runnerNamePrefix: string;
  hostname?: string;
  /** Where the hostname came from (`agent IPC`, `config hostname`, `EC2 instance id`, …). */
  hostnameSource?: string;
  clusterId?: string;
}

export interface Preflight {
  naming: EnrollmentNaming;
  notes: string[];
  warnings: string[];
}

export interface NewIdentity {
  key: PrivateIdentityKey;
  urn: string;
  apiKeyHash: string;
  /** The hostname the runner resolves, stored so it does not re-enroll (files only). */
  hostname?: string;
  /** When the signed health check accepted it, before the write: the write records it as the last verified identity. */
  verifiedAt?: Date;
  /** The name it was enrolled with, recorded with the verified mark. */
  runnerName?: string;
}

export interface WriteOutcome {
  /** Whether the replaced identity stays available for rollback (backup file or previous_* keys). */
  previousKept: boolean;
  /** What the write did besides the identity (the cluster-id ConfigMap it created). */
  notes: string[];
  warnings: string[];
  /** Target-specific facts for --json. */
  data: OneOf<FileWriteFacts, SecretWriteFacts>;
  /** Target-specific summary lines. */
  lines: string[];
}

export interface RestoreOutcome {
  restored: DecodedIdentity;
  replacedUrn: string | null;
  warnings: string[];
  data: OneOf<{ backupFile: string | null }, { resourceVersion: string | null }>;
  lines: string[];
}

export interface TargetFacts {
  data: OneOf<FileFacts, SecretFacts>;
  /** Keys of interrupted enrollments kept beside this target (docs/identity-lifecycle.md §3). */
  possibleOrphans?: PossibleOrphan[];
  /** Pending keys whose run is still under way: not orphans (docs/identity-lifecycle.md §3). */
  rotationsInProgress?: PossibleOrphan[];
  lines: string[];
  warnings: string[];
}

/** What the pending record says besides the key: the runner it may become, and the run that keeps it (docs/identity-lifecycle.md §3). */
export interface PendingMeta {
  createdAt: Date;
  runnerName: string;
  enrollmentUrl: string;
  holder?: RunHolder;
}

/**
 * Where a new key waits from before its enrollment request until the identity holding it is written
 * (docs/identity-lifecycle.md §3), so a crash in between leaves a key the next run finds and reports.
 */
export interface PendingKeys {
  /** Where the pending key is kept, for messages: `<file>.pending`, or the Secret and its data key. */
  readonly where: string;
  /** Kept durably (fsynced) before the request leaves. */
  keep(key: PrivateIdentityKey, meta: PendingMeta): Promise<void>;
  /** Adds what the run learnt to the pending record (the URN after enrolling, a rejection), keeping its other fields; nothing when there is none. */
  amend(change: PendingAmendment): Promise<void>;
  /** The pending record with its key (never printed), when there is one that decodes. */
  read(): Promise<PendingKeyRead | undefined>;
  /** After the write, or after a refusal that proves nothing was registered. */
  clear(): Promise<void>;
  /** The pending key of an interrupted run, moved aside under a name nothing deletes, or undefined. */
  setAside(now: Date): Promise<PossibleOrphan | undefined>;
  /** Read only: the pending key (with its holder, when the record names one) and those set aside. */
  list(): Promise<PossibleOrphan[]>;
}

/** Held while a run changes a target; released on every exit path. */
export interface TargetLock {
  release(): Promise<void>;
  /** What the lock step reports (who holds it, what the sweep found). */
  notes: string[];
  warnings: string[];
}

export interface IdentityTarget {
  readonly kind: TargetKind;
  /** "identity file /etc/…", "Secret datadog/private-action-runner-identity". */
  readonly label: string;
  readonly config: AgentConfig;
  /** The flavor the runner that reads this target runs as (enrollment body, health check). */
  readonly flavor: AgentFlavor;
  /** Flags that select exactly this target, so printed commands act on the same thing. */
  readonly selector: string[];
  /** The fields every result about this target carries (identityFile, or namespace and secretName). */
  readonly where: TargetWhere;
  /**
   * Exclusive right to change the target: `<file>.lock` for the file (then the sweep of interrupted
   * writes, under the lock); nothing for a Secret, whose resourceVersion guard is the lock.
   * `takeOver: false` (a reading run): a stale lock is left in place and reported as LOCKED.
   */
  lock(waitSeconds: number, options?: { takeOver?: boolean; signal?: AbortSignal }): Promise<TargetLock>;
  /** The pending key store of this target; a target without one enrolls with the key in memory only. */
  readonly pending?: PendingKeys;
  read(): Promise<CurrentIdentity>;
  /** Every check that would make the write fail, with no side effect (in a real run as in a dry run). */
  preflight(current: CurrentIdentity): Promise<Preflight>;
  /** The write as a plan line, for --dry-run. */
  describeWrite(current: CurrentIdentity): string;
  write(current: CurrentIdentity, next: NewIdentity): Promise<WriteOutcome>;
  /** Re-reads the target and proves it holds exactly `next`. */
  readBack(next: NewIdentity): Promise<DecodedIdentity>;
  /** Puts the previous identity back in service and keeps the replaced one as the previous. */
  restore(current: CurrentIdentity): Promise<RestoreOutcome>;
  /** restore()'s checks with no side effect (the previous identity decodes, the write is allowed), as a plan line. */
  planRestore(current: CurrentIdentity): Promise<string>;
  /**
   * Records that `identity`, now in service, passed the signed health check; throws on failure (the
   * caller warns). A Secret returns its new resourceVersion.
   */
  recordVerified(identity: DecodedIdentity, at: Date): Promise<{ resourceVersion?: string }>;
  /** Facts for `status` besides the identities themselves. */
  facts(current: CurrentIdentity): Promise<TargetFacts>;
  /** What an operator does after a change here so the runner loads it (a sentence). */
  restartAdvice(): string;
  /** The undo of a run that created the target (there is nothing to roll back to): delete what was created. */
  undoCreation?(): string;
  /** The restart command alone when there is one, else the advice. */
  restartCommand(): string;
  /** The cluster agent's version and its source, learnt during the run (docs/protocol.md §6d). */
  noteAgentVersion?(version: string, source: string): void;
  /** False when the running agent loads the change by itself: no restart to print. */
  restartNeeded?(): boolean;
  /** What the running agent does with the change, for --json (docs/protocol.md §6d). */
  reload?(): AgentReload;
}

/** What status and the Secret targets print about an identity: names and fingerprint, never the key. */
export function summaryOf(identity: DecodedIdentity): IdentitySummary;
export function summaryOf(identity: DecodedIdentity | undefined): IdentitySummary | null;
export function summaryOf(identity: DecodedIdentity | undefined): IdentitySummary | null {
  return identity
    ? {
        urn: identity.record.urn,
        orgId: identity.urn.orgId,
        runnerId: identity.urn.runnerId,
        region: identity.urn.region,
        fingerprint: identity.key.kid,
      }
    : null;
}
