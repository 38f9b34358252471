import type { OutputOptions } from './output-options.js';

// What the pipelines NEED of a run (RotationInput, RollbackInput, InspectInput and the parts they are
// made of), declared by the pipeline's side. A command's options type is not written here: it is
// derived from its definition in src/cli (its flags and toOptions), and tsc checks at the call in
// src/commands/<name>.ts that those options satisfy the input the pipeline declares here. Types only
// (and the one default path), so the API's shipped declarations read them without loading the pipeline.

/** The agent's config directory when -c / cfgPath is not given. */
export const DEFAULT_CFGPATH = '/etc/datadog-agent';

/** -c was given: `cfgPathGiven` when the caller knows (the CLI reads commander's value source), else a path other than the default. */
export function configPathGiven(options: { cfgPath?: string; cfgPathGiven?: boolean }): boolean {
  return options.cfgPathGiven ?? (options.cfgPath !== undefined && options.cfgPath !== DEFAULT_CFGPATH);
}

/** The OS keychain profile when `--profile` / `profile` is not given. */
export const DEFAULT_PROFILE = 'default';

/** Which agent config is read (`-c`, `-E`), for every command that reads it. */
interface ConfigLocation {
  /** Agent config directory, or a .yaml file (`-c`). */
  cfgPath: string;
  /** Extra agent config files merged over it (`-E`), in order. */
  extraCfg: string[];
  /**
   * `-c` was given rather than defaulted. Off-cluster, a command for the cluster agent reads no
   * default config path: the running agent's settings are used (docs/configuration.md).
   */
  cfgPathGiven?: boolean;
}

/** Which cluster, as kubectl picks it: `kubeconfig`, else KUBECONFIG, the Pod's service account, ~/.kube/config. */
interface KubeLocation {
  kubeconfig?: string;
  context?: string;
  /** Namespace of the identity Secret (else kube_resources_namespace, the service account's, default). */
  namespace?: string;
}

/** The one target a run acts on, and how it is found. */
export interface TargetOptions extends ConfigLocation, KubeLocation {
  /** The identity file, instead of the one the config points at. */
  identityFile?: string;
  /** The Secret of a runner installed with the Helm chart (RUNNER_URN / RUNNER_PRIVATE_KEY) instead of a file. */
  k8sSecret?: string;
  /** Identity Secret name (else private_action_runner.identity_secret_name, then the default). */
  secretName?: string;
  /** Keep the replaced identity in the Secret (previous_* / PREVIOUS_RUNNER_*). */
  keepPrevious?: boolean;
  /** After the rotation, restart `deployment/<name>` or `daemonset/<name>` create-before-delete. */
  rollout?: string;
  /** The hostname to store or compare with, instead of asking the running agent (IPC) or resolving it as the agent does. */
  hostname?: string;
  /** The agent's version when it does not answer on IPC: X-Datadog-OnPrem-Version, and the cluster_name rule of the hostname chain. */
  agentVersion?: string;
  /** Read the DD_* environment of the running runner process instead of this process's own. */
  envFromRunner?: boolean;
  /** The cluster agent whose settings are used: `deployment/NAME` (else found by its labels). */
  agent?: string;
  /** Go on when a local setting leads to another outcome than the running agent's; the output lists it. */
  overrideAgentSettings?: boolean;
}

/**
 * The Datadog API key and application key. Sources in order: `apiKey`/`appKey` (the values, which
 * only a program passes: a flag value is world-readable in /proc) or `apiKeyFile`/`appKeyFile`, then
 * `DD_API_KEY`/`DD_APP_KEY`, then the agent config, then the OS keychain profile.
 */
export interface CredentialFlags {
  apiKey?: string;
  appKey?: string;
  apiKeyFile?: string;
  appKeyFile?: string;
  /** Keychain profile consulted last (`credentials set`); default `default`. Its site goes with its keys. */
  profile?: string;
  /** X-Datadog-OnPrem-Version (like `7.66.0+commit.abc1234`) when the running agent does not answer on its IPC API. */
  agentVersion?: string;
}

/** What every pipeline run takes. */
export interface RunOptions extends OutputOptions, TargetOptions {
  /** Deadline, seconds: of enrollment and verification for a rotation, of the verification for status and rollback. */
  timeoutSeconds: number;
  /** Prove with a signed health check that the server accepts the identity put (or found) in service. */
  verify: boolean;
  /** Run every check, change nothing, and return the plan. */
  dryRun?: boolean;
  /** Wait this long for another run's lock on the target, seconds (0: fail at once with `LOCKED`). */
  waitLockSeconds?: number;
  /**
   * Stops the run: the CLI's SIGINT/SIGTERM (src/cli/stop-signals.ts), or the API caller's. Honoured
   * between steps (the run then throws INTERRUPTED saying what is in place, src/rotation/interruption.ts);
   * it aborts the requests of a step under way, except in a step that changes the target (write,
   * restore, rollout), which runs to its end — the rollout undoes its restart.
   */
  signal?: AbortSignal;
  /**
   * The OS keychain profile (`credentials set`), default `default`: a rotation's last source of keys;
   * its stored site is the site of every run whose API key is (or, for a run that reads no key, would
   * be) the profile's (docs/configuration.md, "Site").
   */
  profile?: string;
}

export interface RotationInput extends RunOptions, CredentialFlags {
  dryRun: boolean;
  /** With `rollout`: allow the DaemonSet capacity fallback. */
  fallback: boolean;
  /** Deadline for `rollout`, seconds. */
  rolloutTimeoutSeconds: number;
  /** Rotate only when the identity in service is at least this old, seconds; else the result is `skipped`. */
  ifOlderThanSeconds?: number;
  /** false: do not create the runner's connections after enrolling (the agent creates them per actions_allowlist). */
  connections?: boolean;
  /** --create: create a missing cluster-agent Secret in a namespace not known to be the agent's (docs/protocol.md §6c). */
  create?: boolean;
  /** Enroll even when the site's region is not the region of the URN replaced (docs/configuration.md, "Region"). */
  allowRegionChange?: boolean;
  /**
   * Go on where a local setting leads to another outcome than the running agent's, or the identity holds
   * fields a newer agent wrote; the output lists what was overridden.
   */
  overrideAgentSettings?: boolean;
}

export interface RollbackInput extends RunOptions {
  dryRun: boolean;
  /** Restore even an identity holding fields a newer agent wrote, or where a local setting leads to another outcome than the running agent's. */
  overrideAgentSettings?: boolean;
}

/** status reads only: it has no dry run and never waits for a lock. */
export type InspectInput = Omit<RunOptions, 'dryRun' | 'waitLockSeconds' | 'signal'>;
