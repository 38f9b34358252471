import type { EventEmitter } from 'node:events';
import type { KeyObject } from 'node:crypto';
import type { ParError } from '../errors.js';
import type { WatchEvent } from '../reload/watch-events.js';

// The public types of the programmatic API (`import … from 'par-identity'`). This file is shipped as
// a declaration file (dist/types/api/types.d.ts): it may import types only, and only from files that
// are shipped too (../errors.js, ../reload/watch-events.js) or from node:* — scripts/build.mjs fails
// the build on any other import in the declarations it ships.
//
// Options mirror the CLI flags (camelCase; durations as numbers in the unit their name says) and have
// the same defaults. Results are the objects `--json` prints (schema version 1). Nothing here ever
// holds an API key, an application key or key material, except LoadedIdentity, whose keys are
// node:crypto KeyObjects (they serialise to `{}`).

/** Progress as the CLI prints it on stderr. The API itself never prints. */
export interface ProgressEvent {
  level: 'step' | 'info' | 'warn';
  message: string;
}

/** Options every function takes. */
export interface CommonOptions {
  /** Agent config directory, or a .yaml file (`-c`). Default `/etc/datadog-agent`. */
  cfgPath?: string;
  /** Extra agent config files merged over it (`-E`). */
  extraCfg?: string[];
  /**
   * The environment the agent settings are read from as the agent reads them (`DD_*`, `KUBECONFIG`,
   * `HOME`, proxies, `NODE_EXTRA_CA_CERTS`…). Default `process.env`; never modified.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Called with every progress line (steps, notes, warnings). */
  onProgress?: (event: ProgressEvent) => void;
}

/** Which cluster, as kubectl picks it: `kubeconfig`, else KUBECONFIG, the Pod's service account, ~/.kube/config. */
export interface KubeOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

/**
 * The Datadog API key and application key. Sources in order: `apiKey`/`appKey` (the values) or
 * `apiKeyFile`/`appKeyFile` (one or the other), then `DD_API_KEY`/`DD_APP_KEY` of `env`, then the agent
 * config, then the OS keychain profile. None of them is required in the environment.
 */
export interface CredentialOptions {
  apiKey?: string;
  appKey?: string;
  apiKeyFile?: string;
  appKeyFile?: string;
  /** Keychain profile consulted last (`credentials set`). Default `"default"`. */
  profile?: string;
  /** X-Datadog-OnPrem-Version (like `7.66.0+commit.abc1234`) when the running agent does not answer on its IPC API. */
  agentVersion?: string;
}

interface RotationOptionsBase extends CommonOptions, CredentialOptions, KubeOptions {
  /** Deadline for enrollment and verification, seconds (0 < t ≤ 3600). Default 120. */
  timeoutSeconds?: number;
  /** Run every check, change nothing, and return the plan. */
  dryRun?: boolean;
  /** Prove with a signed health check that the server accepts the new key. Default true. */
  verify?: boolean;
  /** Create the runner's connections after enrolling, as the agent does. Default true. */
  connections?: boolean;
  /** Keep the previous identity in the Secret (Secret targets). Default true. */
  keepPrevious?: boolean;
  /** Rotate only when the identity in service is at least this old, seconds; else the result is `skipped`. */
  ifOlderThanSeconds?: number;
  /** Wait this long for another run's lock on the target, seconds. Default 0: throw `LOCKED` at once. */
  waitLockSeconds?: number;
  /** After the rotation, restart `deployment/<name>` or `daemonset/<name>` create-before-delete. */
  rollout?: string;
  /** With `rollout`: allow the DaemonSet capacity fallback. */
  fallback?: boolean;
  /** Deadline for `rollout`, seconds (≤ 86400). Default 600. */
  rolloutTimeoutSeconds?: number;
  /**
   * Stops the run: honoured before each step up to enrolling (then nothing was enrolled or changed:
   * `INTERRUPTED`) and by the rollout (which undoes its restart). Once a key is being enrolled the
   * run goes on to store and verify it, within `timeoutSeconds`.
   */
  signal?: AbortSignal;
}

/** `par-identity rotate-identity`: the local identity file, or with `k8sSecret` a Helm runner's Secret. */
export interface RotateIdentityOptions extends RotationOptionsBase {
  /** The identity file, instead of the one the config points at. */
  identityFile?: string;
  /** Rotate the Secret of a runner installed with the Helm chart (RUNNER_URN / RUNNER_PRIVATE_KEY) instead of a file. */
  k8sSecret?: string;
  /** The hostname to store, instead of asking the running agent or resolving it as the agent does. */
  hostname?: string;
}

/** `par-identity rotate-par-identity`: the cluster agent's identity Secret. */
export interface RotateParIdentityOptions extends RotationOptionsBase {
  /** Identity Secret name (else private_action_runner.identity_secret_name, then the default). */
  secretName?: string;
}

/** `par-identity status`. */
export interface StatusOptions extends CommonOptions, KubeOptions {
  identityFile?: string;
  /** The cluster agent's identity Secret instead of the file. */
  secret?: boolean;
  /** The Secret of a runner installed with the Helm chart instead of the file. */
  k8sSecret?: string;
  secretName?: string;
  /** Every identity Secret the token can read, one row each. */
  allNamespaces?: boolean;
  /** Which Pod of the workload runs which identity (`true`: deployment/datadog-cluster-agent). */
  pods?: string | true;
  /** Compare with this hostname instead of asking the running agent. */
  hostname?: string;
  /** Also prove online that the server accepts the identity. */
  verify?: boolean;
  /** Deadline for `verify`, seconds (0 < t ≤ 3600). Default 30. */
  timeoutSeconds?: number;
}

// ---- results: the `--json` objects ----

export type VerifyReport = { performed: false } | { performed: true; ok: boolean; status?: number; reason?: string; attempts: number };

export interface ConnectionsOutcome {
  skipped?: string;
  created: string[];
  failed: { integrationType: string; reason: string }[];
}

export interface RolloutSummary {
  target: string;
  action: 'checked' | 'dry-run' | 'unchanged' | 'rolled-out';
  surged: boolean;
  strategyRestored: boolean;
  fallbackSteps: unknown[];
  previousRunnerSafeToRemove: boolean;
}

interface ResultBase {
  schemaVersion: 1;
  /** More fields, depending on the target (README, "JSON output"); fields are only ever added within schema version 1. */
  [field: string]: unknown;
}

interface RotationResultBase extends ResultBase {
  command: 'rotate-identity' | 'rotate-par-identity';
  /** The file target. */
  identityFile?: string;
  /** The Secret targets. */
  namespace?: string;
  secretName?: string;
  durationMs: number;
}

/** A rotation that happened. */
export interface RotatedResult extends RotationResultBase {
  status: 'ok';
  dryRun?: undefined;
  urn: string;
  previousUrn: string | null;
  /** RFC 7638 thumbprint of the new public key. */
  fingerprint: string;
  backupFile?: string | null;
  resourceVersion?: string;
  action?: 'created' | 'updated';
  previousKept?: boolean;
  hostname?: string;
  clusterId?: string;
  agentVersion: { version: string; source: string; note?: string };
  connections: ConnectionsOutcome | null;
  restartHint: string;
  verify: VerifyReport;
  rollout: RolloutSummary | null;
  /** The CLI command that undoes it. */
  rollbackCommand: string;
}

/** `dryRun: true`: every check passed; nothing was enrolled or changed. */
export interface RotationPlanResult extends RotationResultBase {
  status: 'ok';
  dryRun: true;
  previousUrn: string | null;
  enrollmentUrl: string;
  plan: { step: string; action: string }[];
}

/** `ifOlderThanSeconds`: the identity in service is younger; nothing was enrolled or changed. */
export interface RotationSkippedResult extends RotationResultBase {
  status: 'skipped';
  dryRun?: undefined;
  urn: string | null;
  fingerprint: string | null;
  rotatedAt: string | null;
  ageSeconds: number | null;
  reason: string;
}

export type RotationResult = RotatedResult | RotationPlanResult | RotationSkippedResult;

export interface IdentitySummary {
  urn: string;
  orgId: number;
  runnerId: string;
  region: string;
  fingerprint: string;
}

/** `status` of one target. */
export interface IdentityStatusResult extends ResultBase, IdentitySummary {
  command: 'status';
  status: 'ok';
  target: 'file' | 'cluster-secret' | 'helm-secret';
  current: IdentitySummary;
  rotatedAt: string | null;
  ageSeconds: number | null;
  rollbackCommand: string;
  verify: VerifyReport;
  identityFile?: string;
  namespace?: string;
  secretName?: string;
  /** Secret targets: the identity a rollback would restore. */
  previous?: IdentitySummary | null;
  /** The file target: whether the agent would enroll again on its next start (hostname or API key changed), and why. */
  agentWouldReEnroll?: boolean;
  reEnrollReasons?: string[];
}

/** `status` with `allNamespaces`. */
export interface AllNamespacesStatusResult extends ResultBase {
  command: 'status';
  status: 'ok';
  allNamespaces: true;
  secrets: {
    namespace: string;
    name: string;
    layout: 'cluster-agent' | 'helm-runner';
    urn: string | null;
    fingerprint: string | null;
    rotatedAt: string | null;
    ageSeconds: number | null;
    problem?: string;
  }[];
  unreadableNamespaces: { namespace: string; reason: string }[];
  how: string;
}

/** `status` with `pods`. */
export interface PodsStatusResult extends ResultBase {
  command: 'status';
  status: 'ok';
  workload: string;
  urn: string | null;
  fingerprint: string | null;
  pods: { name: string; node: string | null; ready: boolean; fingerprint: string | null; runsCurrent: boolean; ageSeconds: number | null }[];
  previousRunnerRemovable: boolean;
  reason: string;
}

export type StatusResult = IdentityStatusResult | AllNamespacesStatusResult | PodsStatusResult;

// ---- watchIdentity ----

/** `par-identity watch` without the supervision: follow the cluster agent's identity Secret. */
export interface WatchIdentityOptions extends CommonOptions, KubeOptions {
  /** Identity Secret name (else private_action_runner.identity_secret_name, then the default). */
  secretName?: string;
  /** Keep this identity file up to date (atomic, mode 0600, the previous one as PATH.bak), like `--output`. */
  output?: string;
  /** Full re-list period, the backstop for a silently dead watch, ms (0 turns it off; ≤ 1 day). Default 600000. */
  relistIntervalMs?: number;
  /** Wait a random 0…splayMs before applying a rotation, so a fleet does not reload in lockstep (≤ 1 day). Default 0. */
  splayMs?: number;
  /** Aborting it stops the watch, as stop() does. */
  signal?: AbortSignal;
  /** Every event, in order (the `watch --json` lines). */
  onEvent?: (event: IdentityWatchEvent) => void;
  /** A new identity is current (the first one, then every valid rotation). */
  onLoaded?: (identity: LoadedIdentity, event: Extract<WatchEvent, { type: 'loaded' }>) => void;
  /** `output` was written with this identity. */
  onWritten?: (event: WrittenEvent) => void;
  /**
   * Something went wrong and the watch carries on with the identity it has: invalid Secret content
   * (`IDENTITY_INVALID`), a failed list or watch (`KUBE_*`, retried with backoff), a failed write of
   * `output` (retried).
   */
  onError?: (error: ParError, event: IdentityWatchEvent) => void;
}

/** `output` was written. */
export interface WrittenEvent {
  type: 'written';
  at: Date;
  path: string;
  fingerprint: string;
}

/** Writing `output` failed; retried with backoff until it succeeds or a newer identity arrives. */
export interface ApplyErrorEvent {
  type: 'apply-error';
  at: Date;
  error: ParError;
  attempt: number;
  retryInMs: number;
}

/** A warning about `output` (e.g. its directory could not be synced). */
export interface WarningEvent {
  type: 'warning';
  at: Date;
  message: string;
}

export type { WatchEvent };
export type IdentityWatchEvent = WatchEvent | WrittenEvent | ApplyErrorEvent | WarningEvent;

/** The identity to sign with. The keys are node:crypto KeyObjects; no field holds key material as text. */
export interface LoadedIdentity {
  readonly urn: string;
  readonly fingerprint: string;
  readonly orgId: number;
  readonly runnerId: string;
  readonly region: string;
  readonly hostname?: string;
  readonly apiKeyHash?: string;
  readonly orchClusterId?: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

export interface WatchMetrics {
  reloads: number;
  reloadErrors: number;
  watchRestarts: number;
  relists: number;
  /** Epoch ms of the last watch event or successful list. */
  lastActivityMs: number | undefined;
}

/** What a stopped watch reports (the last object of `watch --json`, without the child fields). */
export interface WatchSummary {
  secret: { namespace: string; name: string };
  urn?: string;
  fingerprint?: string;
  reloads: number;
  reloadErrors: number;
  watchRestarts: number;
  stoppedBy: 'stop' | 'abort';
}

export interface IdentityWatchEventMap {
  event: [IdentityWatchEvent];
}

export interface IdentityWatch {
  /** The Secret followed. */
  readonly secret: { namespace: string; name: string };
  /** Resolves with the first identity; rejects with `INTERRUPTED` when the watch stops first. */
  readonly ready: Promise<LoadedIdentity>;
  /** The identity to sign with now; undefined until the first valid one is loaded. */
  current(): LoadedIdentity | undefined;
  /** Every event on 'event', as onEvent gets them. Listeners run synchronously. */
  readonly events: EventEmitter<IdentityWatchEventMap>;
  /** Counters of this watch. */
  metrics(): WatchMetrics;
  /** The same counters as Prometheus text (what `watch --listen` serves on /metrics). */
  metricsText(): string;
  /** Closes the watch, waits for a write of `output` in progress, and cancels timers; idempotent. */
  stop(): Promise<WatchSummary>;
  /** Same as stop(). */
  close(): Promise<WatchSummary>;
  /** Resolves when the watch has stopped (stop(), close() or the signal). */
  readonly stopped: Promise<WatchSummary>;
  /** `await using watch = await watchIdentity(…)` stops it at the end of the block. */
  [Symbol.asyncDispose](): Promise<void>;
}
