import type { EventEmitter } from 'node:events';
import type { KeyObject } from 'node:crypto';
import type { ParError } from '../errors.js';
import type { WatchEvent } from '../reload/watch-events.js';
import type { InspectInput, RotationInput } from '../command-options.js';
import type { WatchCounters } from '../results/watch.js';
import type { WatchOptions } from '../watch/watch-options.js';

// The public types of the programmatic API (`import … from 'par-identity'`). This file is shipped as
// a declaration file (dist/types/api/types.d.ts): it may import types only, and only from files that
// are shipped too (types-only files: errors, options, results, events) or from node:* —
// scripts/build.mjs fails the build on any other import in the declarations it ships.
//
// Options are what the commands' flags fill (camelCase, durations as numbers in the unit their name
// says), with the flags' defaults, written here from the pipeline's documented inputs
// (src/command-options.ts) and held by tsc to the definitions' flags (src/api/options.ts), not derived
// from them: docs/architecture.md, "Where the code still differs". Results are the objects `--json`
// prints (schema version 1). Nothing here ever holds an API key, an application key or key
// material, except LoadedIdentity, whose keys are node:crypto KeyObjects (they serialise to `{}`).

/** Progress as the CLI prints it on stderr. The API itself never prints. */
export interface ProgressEvent {
  level: 'step' | 'info' | 'warn';
  message: string;
}

/** What only a program gives, to every function. */
export interface CommonOptions {
  /**
   * The environment the agent settings are read from as the agent reads them (`DD_*`, `KUBECONFIG`,
   * `HOME`, proxies, `NODE_EXTRA_CA_CERTS`…). Default `process.env`; never modified.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Called with every progress line (steps, notes, warnings). */
  onProgress?: (event: ProgressEvent) => void;
}

/**
 * The pipeline's input for a command (src/command-options.ts: what its flags fill, in the unit their
 * name says), every one optional with the flag's default, without the ones of the terminal (json,
 * color) and without those the command has no flag for.
 */
type OptionsOf<O, NoFlag extends keyof O> = Partial<Omit<O, 'json' | 'color' | 'cfgPathGiven' | NoFlag>>;

/** `par-identity rotate-identity`: the local identity file, or with `k8sSecret` a Helm runner's Secret. */
export interface RotateIdentityOptions extends CommonOptions, OptionsOf<RotationInput, 'secretName' | 'create' | 'agent'> {}

/** `par-identity rotate-par-identity`: the cluster agent's identity Secret. */
export interface RotateParIdentityOptions
  extends CommonOptions,
    OptionsOf<RotationInput, 'identityFile' | 'k8sSecret' | 'hostname' | 'envFromRunner'> {}

/** `par-identity status`. */
export interface StatusOptions extends CommonOptions, OptionsOf<InspectInput, 'keepPrevious' | 'rollout'> {
  /** The cluster agent's identity Secret (current and previous_*) instead of the identity file. */
  secret?: boolean;
  /** Every identity Secret the token can list, one row each. */
  allNamespaces?: boolean;
  /** Which Pod of the workload runs which identity (`true`: the cluster agent's Deployment). */
  pods?: string | true;
}

// ---- results: the `--json` objects, the very types the commands' renderers build (src/results) ----

export type { Envelope } from '../results/envelope.js';
export type {
  AgentSettingReport,
  ClusterAgentReport,
  FileWhere,
  IdentitySummary,
  SecretWhere,
  TargetKind,
  TargetWhere,
  VerifyReport,
} from '../results/identity.js';
export type {
  AgentVersionChoice,
  ConnectionsOutcome,
  FallbackStep,
  FileWriteFacts,
  PlanEntry,
  RolloutSummary,
  RotatedResult,
  RotationCommand,
  RotationPlanResult,
  RotationResult,
  RotationSkippedResult,
  RunnerNaming,
  SecretWriteFacts,
} from '../results/rotation.js';
export type {
  AllNamespacesStatusResult,
  FileFacts,
  IdentityStatusResult,
  PendingHolder,
  PodRow,
  PodsStatusResult,
  PossibleOrphan,
  RecoverableIdentity,
  SecretFacts,
  SecretRow,
  SiteRegion,
  StatusFinding,
  StatusResult,
  StatusWord,
} from '../results/status.js';

// ---- watchIdentity ----

/** `par-identity watch` without the supervision: follow the cluster agent's identity Secret. */
export interface WatchIdentityOptions
  extends CommonOptions,
    Partial<Pick<WatchOptions, 'cfgPath' | 'extraCfg' | 'kubeconfig' | 'context' | 'namespace' | 'secretName' | 'output' | 'splayMs'>> {
  /** Full re-list period, the backstop for a silently dead watch, ms (0 turns it off; within the bounds of --relist-interval, default its default). */
  relistIntervalMs?: number;
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

/** What a stopped watch reports (the last object of `watch --json`, without the child's fields). */
export interface WatchSummary extends WatchCounters {
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
