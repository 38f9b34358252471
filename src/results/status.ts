import type { Envelope, OneOf } from './envelope.js';
import type { IdentitySummary, TargetKind, TargetWhere, VerifyReport } from './identity.js';
import type { LeftoverReport } from './rotation.js';

/** A file an interrupted run left that holds an identity (`status` lists it; nothing deletes it). */
export interface RecoverableIdentity {
  path: string;
  kind: 'restore' | 'corrupt';
  /** Byte-identical to the live file or the backup: redundant, safe to delete. */
  sameAs: 'live' | 'backup' | null;
  decodes: boolean;
  urn?: string;
  fingerprint?: string;
  /** Why it does not decode (never its content). */
  error?: string;
}

/**
 * A key sent (or about to be sent) for enrollment by a run that did not finish: a runner may be
 * registered in Datadog that no identity holds (docs/identity-lifecycle.md §3). Never the key itself.
 */
export interface PossibleOrphan {
  /** The file (or `Secret <ns>/<name> key <key>`) that holds the key. */
  path: string;
  /** `pending`: left by the interrupted run itself; `set aside`: found and kept by a later rotation. */
  state: 'pending' | 'set aside';
  /** The JWK thumbprint of the key: the runner's public key in Datadog has it. */
  fingerprint: string | null;
  createdAt: string | null;
  /** The runner_name the enrollment sent: how to find the runner in Datadog. */
  runnerName: string | null;
  /** The runner the enrollment registered, when the run got that far (the record names it before its health check). */
  urn?: string;
  /** The signed health check answered 401/403 for it: nothing was written; the runner is to be removed in Datadog. */
  rejected?: true;
  decodes: boolean;
  /**
   * The run that keeps a `pending` key, when its record names one (docs/identity-lifecycle.md §3):
   * while it may still be under way the key is listed in `rotationsInProgress`, not as an orphan.
   */
  holder?: PendingHolder;
}

/** Who keeps a pending key, and whether that run may still be under way as status sees it. */
export interface PendingHolder {
  host: string;
  pid: number;
  /** The run's deadline (its --timeout); null when only the lock on the file names the holder. */
  deadline: string | null;
  lives: boolean;
  /** `process`: checked on this host (pid and its start time); `deadline`: another host or pid namespace; `lock`: a live process holds the file's lock. */
  checkedBy: 'process' | 'deadline' | 'lock';
  why: string;
}

/** What `status` reports, in `--json` `status` (the word of the finding that sets the exit status; `ok` when none). */
export type StatusWord = 'ok' | 'reenroll-predicted' | 'possible-orphan' | 'rotation-in-progress' | 'pods-on-another-identity';

/** One thing status found, whatever the exit precedence: scripts read the list, not only the exit status. */
export interface StatusFinding {
  kind: Exclude<StatusWord, 'ok'>;
  /** The exit status this finding alone would give (0 for a rotation in progress). */
  exitCode: number;
  message: string;
  /** The file or Secret key concerned (orphans, rotations in progress). */
  path?: string;
  fingerprint?: string | null;
}

/** Fields every `status --json` carries: the word, the exit status, every finding. */
interface StatusVerdict {
  exitCode: number;
  findings: StatusFinding[];
}

/** A file a crashed or interrupted run left beside the identity, found by reading only (src/storage/leftovers.ts). */
interface LeftoverFile {
  path: string;
  /**
   * stale-lock: <file>.lock of a holder gone on this host; invalid-lock: <file>.lock that names no holder;
   * takeover: <file>.lock.takeover-<nonce> of a dead taker; temp: a dead writer's temporary file.
   */
  kind: 'stale-lock' | 'invalid-lock' | 'takeover' | 'temp';
  /** Why it is a leftover (the holder's pid and why it is gone), never its content. */
  detail: string;
}

/** What status says of the identity file besides the identity. */
export interface FileFacts {
  recoverable: RecoverableIdentity[];
  /** Stale lock, takeover files and temporary files left beside the identity; listed, never removed by status. */
  leftovers: LeftoverFile[];
  /** How the path was found (flag, identity_file_path, next to the config…). */
  source: string;
  /** The hostname the agent compares with the stored one, and where it came from. */
  hostname: string;
  hostnameSource: string;
  file: { mode: string; uid: number; gid: number } | null;
  backup: (((IdentitySummary & { path: string }) | { path: string; corrupt: true }) & { writtenAt: string | null }) | null;
  /** Where a rotation would take its API key from (never the value). */
  apiKeySource: string;
  /** Whether the agent would enroll again on its next start (hostname or API key changed), and why. */
  agentWouldReEnroll: boolean;
  reEnrollReasons: string[];
}

/** What status says of a Secret besides the identity. */
export interface SecretFacts {
  resourceVersion: string | null;
  /** The identity a rollback would restore. */
  previous: IdentitySummary | null;
  labels: Record<string, string>;
  /** The cluster agent's Secret: its orch_cluster_id. */
  clusterId?: string | null;
}

/** The site the agent reads and the region it gives, against the identity's URN region (docs/configuration.md, "Region"). */
export interface SiteRegion {
  site: string;
  /** Where the site came from: a config file, `env DD_SITE`, `dd_url (…)`, `default`. */
  source: string;
  /** The region the agent derives from that site. */
  region: string;
  /** The region in the URN of the identity in service. */
  identityRegion: string;
  matchesIdentity: boolean;
}

/** `status` of one target. */
/** The identity that last passed the signed health check in a rotation or rollback, and where it is now. */
export interface LastVerified {
  fingerprint: string;
  urn: string;
  verifiedAt: string;
  is: 'current' | 'previous' | 'neither';
}

export type IdentityStatusResult = Envelope<'status', Exclude<StatusWord, 'pods-on-another-identity'>> &
  StatusVerdict &
  IdentitySummary &
  TargetWhere &
  OneOf<FileFacts, SecretFacts> & {
    target: TargetKind;
    current: IdentitySummary;
    rotatedAt: string | null;
    ageSeconds: number | null;
    /** null when no run of par-identity recorded one. */
    lastVerified: LastVerified | null;
    /** Keys of interrupted enrollments; any makes status exit 15 (orphanPossible). */
    possibleOrphans: PossibleOrphan[];
    /** Pending keys whose run is still under way (its holder lives): not orphans; status exits 0 for them. */
    rotationsInProgress: PossibleOrphan[];
    rollbackCommand: string;
    verify: VerifyReport;
    /** The site's region against the identity's: a mismatch is a finding (a rotation would move the runner). */
    siteRegion: SiteRegion;
    /** Fields of the stored identity this tool does not know (a newer agent's); a rotation or rollback stops on them. */
    unknownFields: string[];
  };

/** One identity Secret of `status --all-namespaces`. */
export interface SecretRow {
  namespace: string;
  name: string;
  layout: 'cluster-agent' | 'helm-runner';
  urn: string | null;
  fingerprint: string | null;
  rotatedAt: string | null;
  ageSeconds: number | null;
  problem?: string;
}

/** `status` with `allNamespaces`. */
export type AllNamespacesStatusResult = Envelope<'status', 'ok'> &
  StatusVerdict & {
    allNamespaces: true;
    secrets: SecretRow[];
    /** Namespaces whose Secrets this token may not list: named, never silently skipped. */
    unreadableNamespaces: { namespace: string; reason: string }[];
    how: string;
  };

/** One Pod of `status --pods`. */
export interface PodRow {
  name: string;
  node: string | null;
  ready: boolean;
  fingerprint: string | null;
  runsCurrent: boolean;
  /** 'unknown': the agent's version does not tell whether it reloaded the change (docs/protocol.md §6d). */
  identity: 'current' | 'previous' | 'unknown';
  /** The agent container's image tag. */
  agentVersion: string | null;
  /** Why the Pod is said to run that identity. */
  how: string;
  ageSeconds: number | null;
}

/** `status` with `pods`. */
export type PodsStatusResult = Envelope<'status', 'ok' | 'pods-on-another-identity'> &
  StatusVerdict &
  TargetWhere & {
    workload: string;
    urn: string | null;
    fingerprint: string | null;
    pods: PodRow[];
    previousRunnerRemovable: boolean;
    reason: string;
    /** A strategy an interrupted `rollout` left changed on the workload (docs/rollout.md); `rollout` restores it. */
    interruptedRollout?: LeftoverReport;
  };

export type StatusResult = IdentityStatusResult | AllNamespacesStatusResult | PodsStatusResult;
