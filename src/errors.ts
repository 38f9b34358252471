import { programName } from './single-executable.js';

// The one error family. Every failure the operator can meet is a ParError with a stable `code`
// (scripts match on it), an exit status (runbooks branch on it) and a hint saying what to do next.
// Messages never contain key material: callers pass names and fingerprints, never values.
//
// ERROR_CODES is the closed list of codes, and the only place a code's class and exit status are
// written: each class takes only the codes of its own rows (CodeOf), and every error's exit status is
// read from its code's row, so a code missing from the table, thrown with another class, or exiting
// with another status than its row says does not compile. README and the man page print it.

export const ExitCode = {
  ok: 0,
  internal: 1,
  usage: 2,
  config: 3,
  credentialsRejected: 4,
  enrollmentFailed: 5,
  conflict: 6,
  storage: 7,
  verificationFailed: 8,
  kubernetes: 9,
  rolloutFailed: 10,
  locked: 11,
  outcomeUnknown: 12,
  unavailable: 13,
  reenrollPredicted: 14,
  orphanPossible: 15,
  verifyUnavailable: 16,
  podsOnOtherIdentity: 17,
  interrupted: 130,
  terminated: 143,
} as const;

type ExitCodeName = keyof typeof ExitCode;

/** The exit-code contract, as documented in README and the man page; each number is ExitCode's (written once, above). */
export const EXIT_CODE_DOCS: { code: number; name: ExitCodeName; meaning: string }[] = (
  [
    { name: 'ok', meaning: 'success (for a dry run: every check passed)' },
    { name: 'internal', meaning: 'unexpected failure (a bug): nothing is half-written, see the message' },
    { name: 'usage', meaning: 'unknown command or flag, or an invalid flag value' },
    { name: 'config', meaning: 'agent config unreadable or invalid, runner disabled, credentials missing' },
    { name: 'credentialsRejected', meaning: 'the Datadog API rejected the API/application key (HTTP 401/403)' },
    { name: 'enrollmentFailed', meaning: 'enrollment refused, bad response, redirect refused, TLS untrusted, or deadline exceeded' },
    { name: 'conflict', meaning: 'someone else changed the identity meanwhile; nothing was overwritten' },
    { name: 'storage', meaning: 'identity file or backup missing, corrupt, or not writable' },
    {
      name: 'verificationFailed',
      meaning:
        'the server rejected the identity (HTTP 401/403 to the signed health check): a rotation or rollback wrote nothing where a runner reads it',
    },
    { name: 'kubernetes', meaning: 'Kubernetes API unreachable, forbidden, timed out, or misconfigured' },
    { name: 'rolloutFailed', meaning: 'the restart/rollout did not complete' },
    {
      name: 'locked',
      meaning:
        'another run holds the lock on this target (or a rollout that may still run has the workload’s strategy changed); nothing was changed',
    },
    { name: 'outcomeUnknown', meaning: 'a write may or may not have been applied and reading back could not tell: check before acting' },
    { name: 'unavailable', meaning: 'a facility this run needs is not available here (e.g. the OS keychain)' },
    {
      name: 'reenrollPredicted',
      meaning:
        'status: the identity is readable, but the agent would re-enroll at its next start (the reasons are listed); nothing was changed',
    },
    {
      name: 'orphanPossible',
      meaning:
        'status: the identity is readable, but a run was interrupted after sending a key for enrollment: ' +
        'a runner may be registered in Datadog that no identity holds (listed with its key fingerprint; exit 14 takes precedence; ' +
        'a key whose rotation is still under way is no orphan)',
    },
    {
      name: 'verifyUnavailable',
      meaning:
        'the identity could not be proven before --timeout (5xx, timeouts, connection errors): not proven, nothing written, try again',
    },
    {
      name: 'podsOnOtherIdentity',
      meaning:
        'status --pods: some Pods of the workload do not run the identity in service (another fingerprint, or none recorded): ' +
        'keep the previous runner; nothing was changed',
    },
    { name: 'interrupted', meaning: 'interrupted by SIGINT (128 + 2): the run stopped at a safe point; the message says what is in place' },
    {
      name: 'terminated',
      meaning: 'interrupted by SIGTERM (128 + 15): the run stopped at a safe point; the message says what is in place',
    },
  ] as { name: ExitCodeName; meaning: string }[]
).map((row) => ({ code: ExitCode[row.name], ...row }));

/** The class a code is thrown with (ParError itself for codes without a family of their own). */
type ErrorFamily =
  | 'ParError'
  | 'UsageError'
  | 'ConfigError'
  | 'IdentityDecodeError'
  | 'CredentialsRejectedError'
  | 'EnrollmentError'
  | 'StorageError'
  | 'ConflictError'
  | 'VerificationError'
  | 'KubernetesError'
  | 'RolloutError'
  | 'InterruptedError'
  | 'ReloadApplyError'
  | 'ChildExitError';

interface ErrorCodeRow {
  family: ErrorFamily;
  exit: ExitCodeName;
  meaning: string;
}

export const ERROR_CODES = {
  INTERNAL: { family: 'ParError', exit: 'internal', meaning: 'an unexpected failure (a bug); the message says where' },
  USAGE: { family: 'UsageError', exit: 'usage', meaning: 'unknown command or flag, or an invalid flag value' },

  CONFIG_UNREADABLE: { family: 'ConfigError', exit: 'config', meaning: 'an agent config file (-c, -E) is missing or cannot be read' },
  CONFIG_YAML: { family: 'ConfigError', exit: 'config', meaning: 'an agent config file is not valid YAML' },
  CONFIG_VALUE: { family: 'ConfigError', exit: 'config', meaning: 'a config value has the wrong type or form' },
  RUNNER_DISABLED: { family: 'ConfigError', exit: 'config', meaning: 'private_action_runner.enabled is false' },
  CONFIG_NOT_FOUND: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'the config path given (-c, -E) does not exist, or no config file was found where the runner needs one',
  },
  SITE_INVALID: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'site (or dd_url) is not a Datadog site name (a URL, scheme, port or path): refused before anything happens',
  },
  REGION_CHANGE: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'the rotation would move the identity to another region than its URN; nothing enrolled (--allow-region-change)',
  },
  IDENTITY_FIELDS_UNKNOWN: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'the identity holds fields a newer agent wrote; nothing enrolled or restored (--override-agent-settings)',
  },
  IDENTITY_PATH_UNRESOLVED: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'no config and no --identity-file: the identity file path is unknown',
  },
  CREDENTIAL_MISSING: { family: 'ConfigError', exit: 'config', meaning: 'no API key or application key in any source' },
  CREDENTIAL_UNREADABLE: { family: 'ConfigError', exit: 'config', meaning: 'the --api-key-file/--app-key-file cannot be read' },
  CREDENTIAL_FORMAT: { family: 'ConfigError', exit: 'config', meaning: 'a key is not a plain key (whitespace, an ENC[] handle)' },
  SECRET_HANDLE_UNSUPPORTED: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'a key is an ENC[] secret handle, which par-identity does not resolve',
  },
  SECRET_STORAGE_DISABLED: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'the cluster agent config does not keep the identity in a Secret',
  },
  WATCH_DISABLED: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'watch: the config does not keep an enabled runner identity in a Secret',
  },
  CONFIG_YAML_ALIASES: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'an agent config file expands too many YAML aliases (bounded against alias bombs)',
  },
  CONFIG_TOO_LARGE: { family: 'ConfigError', exit: 'config', meaning: 'an agent config file is larger than par-identity reads (8 MiB)' },
  PROXY_INVALID: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'a proxy setting (proxy.*, DD_PROXY_*, HTTPS_PROXY) is not a usable URL',
  },
  SECRET_BACKEND_CONFIG: { family: 'ConfigError', exit: 'config', meaning: 'secret_backend_config is not a JSON object' },
  SECRET_BACKEND_FAILED: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'the secret_backend_command failed, timed out, or printed no usable JSON',
  },
  SECRET_BACKEND_PERMISSIONS: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'the secret_backend_command file has rights the agent refuses',
  },
  SECRET_UNRESOLVED: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'an ENC[] handle was missing, empty or in error in the backend output',
  },
  HOSTNAME_INVALID: { family: 'ConfigError', exit: 'config', meaning: 'a hostname (--hostname, config) fails the agent validation rules' },
  HOSTNAME_UNRESOLVED: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'neither the running agent nor the hostname chain gave a valid hostname, or the lookup did not finish before --timeout',
  },
  AGENT_VERSION_INVALID: {
    family: 'ConfigError',
    exit: 'config',
    meaning: '--agent-version is not in the agent format (7.66.0+commit.abc1234)',
  },
  NODE_UNSUPPORTED: {
    family: 'ParError',
    exit: 'unavailable',
    meaning: 'the Node.js running the npm package is older than 24 (the launcher, bin/par-identity.js, says so)',
  },
  RUNNER_ENV_UNAVAILABLE: {
    family: 'ConfigError',
    exit: 'config',
    meaning: '--env-from-runner, but no single runner process whose environment can be read',
  },
  EMULATOR_UNAVAILABLE: {
    family: 'ParError',
    exit: 'unavailable',
    meaning: 'the single executable carries no emulators: use the npm package for them',
  },
  KEYCHAIN_UNAVAILABLE: {
    family: 'ParError',
    exit: 'unavailable',
    meaning: 'the OS keychain is not available (no Secret Service, module not loadable)',
  },

  CREDENTIALS_REJECTED: {
    family: 'CredentialsRejectedError',
    exit: 'credentialsRejected',
    meaning: 'the Datadog API answered 401/403 to the API/application key',
  },
  API_KEY_INVALID: {
    family: 'ParError',
    exit: 'credentialsRejected',
    meaning: "Datadog's key validation endpoint says the API key is not valid",
  },
  APP_KEY_INVALID: {
    family: 'ParError',
    exit: 'credentialsRejected',
    meaning: "dry run: Datadog's key validation endpoint says the application key is not valid",
  },

  ENROLL_REJECTED: {
    family: 'EnrollmentError',
    exit: 'enrollmentFailed',
    meaning: 'the enrollment API refused the request (4xx other than 401/403/429)',
  },
  ENROLL_BAD_RESPONSE: {
    family: 'EnrollmentError',
    exit: 'enrollmentFailed',
    meaning: 'the enrollment API answer is malformed or too large',
  },
  ENROLL_REDIRECT_REFUSED: {
    family: 'EnrollmentError',
    exit: 'enrollmentFailed',
    meaning: 'the enrollment API redirected; redirects are never followed',
  },
  ENROLL_HOST_UNKNOWN: {
    family: 'EnrollmentError',
    exit: 'enrollmentFailed',
    meaning: 'the enrollment host name does not resolve (ENOTFOUND); not retried',
  },
  ENROLL_TIMEOUT: { family: 'EnrollmentError', exit: 'enrollmentFailed', meaning: 'enrollment did not succeed before --timeout' },
  TLS_UNTRUSTED: {
    family: 'EnrollmentError',
    exit: 'enrollmentFailed',
    meaning: "the Datadog endpoint's TLS certificate is not trusted (see NODE_EXTRA_CA_CERTS); not retried",
  },

  API_UNREACHABLE: { family: 'EnrollmentError', exit: 'enrollmentFailed', meaning: 'dry run: the Datadog API host cannot be reached' },
  API_KEY_CHECK_FAILED: {
    family: 'EnrollmentError',
    exit: 'enrollmentFailed',
    meaning: 'dry run: the API key check answered an unexpected status',
  },

  CONFLICT: {
    family: 'ConflictError',
    exit: 'conflict',
    meaning: 'the target changed between our read and our write; nothing was overwritten',
  },

  IDENTITY_INVALID: { family: 'IdentityDecodeError', exit: 'storage', meaning: 'a stored or received identity does not decode' },
  IDENTITY_MISSING: { family: 'StorageError', exit: 'storage', meaning: 'there is no identity file' },
  IDENTITY_CORRUPT: { family: 'StorageError', exit: 'storage', meaning: 'the identity file is not a valid identity' },
  NO_BACKUP: { family: 'StorageError', exit: 'storage', meaning: 'rollback: there is no previous identity to restore' },
  BACKUP_CORRUPT: { family: 'StorageError', exit: 'storage', meaning: 'rollback: the previous identity is not valid' },
  DIRECTORY_MISSING: { family: 'StorageError', exit: 'storage', meaning: "the identity file's directory does not exist" },
  DIRECTORY_NOT_WRITABLE: { family: 'StorageError', exit: 'storage', meaning: "the identity file's directory is not writable" },
  NOT_A_FILE: { family: 'StorageError', exit: 'storage', meaning: 'the identity path exists but is not a regular file' },
  READ_FAILED: { family: 'StorageError', exit: 'storage', meaning: 'the identity file cannot be read' },
  WRITE_FAILED: { family: 'StorageError', exit: 'storage', meaning: 'writing the identity file failed; the previous one is in place' },
  SINGLE_FILE_MOUNT: {
    family: 'StorageError',
    exit: 'storage',
    meaning: 'the identity file is a single-file mount that cannot be replaced atomically',
  },
  SYMLINK_REFUSED: {
    family: 'StorageError',
    exit: 'storage',
    meaning: 'the identity file or its backup is a symbolic link; it is never followed',
  },
  RECOVERY_NOT_FOUND: { family: 'StorageError', exit: 'storage', meaning: 'the recovery file named is not there or does not decode' },
  BACKUP_IN_USE: {
    family: 'StorageError',
    exit: 'storage',
    meaning: 'the backup holds an identity found nowhere else: it is not replaced',
  },
  READ_BACK_MISMATCH: { family: 'StorageError', exit: 'storage', meaning: 'what was written does not read back as written' },
  READ_ONLY_FILESYSTEM: { family: 'StorageError', exit: 'storage', meaning: "the identity file's directory is on a read-only mount" },
  DIRECTORY_UNSAFE: {
    family: 'StorageError',
    exit: 'storage',
    meaning: "the identity file's directory is writable by other users without the sticky bit",
  },
  NO_SPACE: {
    family: 'StorageError',
    exit: 'storage',
    meaning: "the identity file's file system is full or over quota (ENOSPC, EDQUOT); checked before enrolling",
  },
  FILE_OWNER_REFUSED: {
    family: 'StorageError',
    exit: 'storage',
    meaning: 'an existing identity or backup file belongs to another user; it is not written to',
  },

  VERIFICATION_FAILED: {
    family: 'VerificationError',
    exit: 'verificationFailed',
    meaning: 'the signed health check rejected the identity (401/403); a rotation or rollback wrote nothing',
  },
  VERIFY_UNAVAILABLE: {
    family: 'VerificationError',
    exit: 'verifyUnavailable',
    meaning: 'the signed health check did not answer yes or no before --timeout; nothing was written',
  },

  KUBE_NOT_CONFIGURED: {
    family: 'KubernetesError',
    exit: 'kubernetes',
    meaning: 'no kubeconfig, service account or context to use, or a kubeconfig value no request can use (named)',
  },
  KUBE_UNREACHABLE: { family: 'KubernetesError', exit: 'kubernetes', meaning: 'the Kubernetes API cannot be reached' },
  KUBE_UNAUTHORIZED: { family: 'KubernetesError', exit: 'kubernetes', meaning: 'the Kubernetes API rejected the credentials (401)' },
  KUBE_FORBIDDEN: { family: 'KubernetesError', exit: 'kubernetes', meaning: 'RBAC does not allow the request (403)' },
  KUBE_INVALID: { family: 'KubernetesError', exit: 'kubernetes', meaning: 'validation or admission refused the object (422)' },
  KUBE_API_ERROR: { family: 'KubernetesError', exit: 'kubernetes', meaning: 'the Kubernetes API answered another error status' },
  KUBE_TIMEOUT: { family: 'KubernetesError', exit: 'kubernetes', meaning: 'a Kubernetes request got no answer within its deadline' },
  KUBE_TLS_UNTRUSTED: {
    family: 'KubernetesError',
    exit: 'kubernetes',
    meaning: "the API server's TLS certificate is not trusted by the kubeconfig's CA",
  },
  KUBE_CREDENTIALS: {
    family: 'KubernetesError',
    exit: 'kubernetes',
    meaning: "the kubeconfig user's credential could not be had (exec plugin failed, OIDC token expired) or is not sendable",
  },
  KUBE_BAD_RESPONSE: {
    family: 'KubernetesError',
    exit: 'kubernetes',
    meaning: 'the Kubernetes API answered what it never sends (a body not JSON, Secret data not strings)',
  },
  KUBE_RESPONSE_TOO_LARGE: {
    family: 'KubernetesError',
    exit: 'kubernetes',
    meaning: 'a Kubernetes API answer was larger than par-identity reads',
  },
  SECRET_MISSING: { family: 'KubernetesError', exit: 'kubernetes', meaning: 'the identity Secret does not exist' },
  SECRET_NAME_MISMATCH: {
    family: 'KubernetesError',
    exit: 'kubernetes',
    meaning: "--secret-name differs from the agent config's identity_secret_name",
  },
  NAMESPACE_UNKNOWN: {
    family: 'KubernetesError',
    exit: 'kubernetes',
    meaning: "off-cluster with no -n and no kube_resources_namespace: the agent's namespace is unknown (never a kubeconfig context's)",
  },
  NAMESPACE_MISMATCH: {
    family: 'ConfigError',
    exit: 'config',
    meaning: '-n differs from kube_resources_namespace, the only namespace where the agent reads its Secret',
  },
  AGENT_SETTINGS_MISMATCH: {
    family: 'ConfigError',
    exit: 'config',
    meaning: "a local setting (-c, -E, DD_*) leads to another outcome than the running agent's (Deployment or process)",
  },
  AGENT_NOT_FOUND: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'no -c given, and no cluster-agent Deployment found (or readable) whose settings to use',
  },
  AGENT_AMBIGUOUS: {
    family: 'ConfigError',
    exit: 'config',
    meaning: 'several cluster-agent Deployments found: --agent deployment/NAME -n NAMESPACE chooses one',
  },
  SECRET_CREATE_UNCERTAIN: {
    family: 'KubernetesError',
    exit: 'kubernetes',
    meaning: "the Secret would be created in a namespace not known to be the agent's (no cluster agent there); --create confirms",
  },

  WORKLOAD_MISSING: {
    family: 'RolloutError',
    exit: 'rolloutFailed',
    meaning: 'the --rollout workload does not exist (checked before enrolling)',
  },
  FALLBACK_UNAVAILABLE: { family: 'RolloutError', exit: 'rolloutFailed', meaning: '--fallback needs node reads this token does not have' },
  ROLLOUT_TIMEOUT: {
    family: 'RolloutError',
    exit: 'rolloutFailed',
    meaning: 'the rollout did not finish before its deadline; the restart was undone',
  },
  SURGE_BLOCKED: { family: 'RolloutError', exit: 'rolloutFailed', meaning: 'a create-before-delete restart is not safe for this workload' },
  NEEDS_FALLBACK: {
    family: 'RolloutError',
    exit: 'rolloutFailed',
    meaning: 'some nodes have no room for a second Pod and --fallback was not given',
  },

  LOCKED: {
    family: 'ParError',
    exit: 'locked',
    meaning: 'another run holds this target’s lock, or a rollout that may still run changed the workload (the message names it)',
  },
  OUTCOME_UNKNOWN: { family: 'ParError', exit: 'outcomeUnknown', meaning: 'a write may have been applied and reading back could not tell' },

  WATCH_MALFORMED: {
    family: 'KubernetesError',
    exit: 'kubernetes',
    meaning: 'watch: the API server sent an event that is not a valid change of our Secret (the watch restarts)',
  },
  PIDFILE_UNREADABLE: { family: 'ReloadApplyError', exit: 'config', meaning: 'watch: the --pidfile cannot be read' },
  PIDFILE_INVALID: { family: 'ReloadApplyError', exit: 'config', meaning: 'watch: the --pidfile does not hold a process id' },
  PIDFILE_UNSAFE: {
    family: 'ReloadApplyError',
    exit: 'config',
    meaning: 'watch: the --pidfile is a link, not a file, owned by another user or writable by group or others',
  },
  SIGNAL_FAILED: { family: 'ReloadApplyError', exit: 'config', meaning: 'watch: the process to signal is gone or not ours to signal' },
  SIGNAL_FOREIGN: {
    family: 'ReloadApplyError',
    exit: 'config',
    meaning: 'watch: the --pidfile names a process of another user, which is not signalled',
  },
  CHILD_EXITED: {
    family: 'ChildExitError',
    exit: 'internal',
    meaning: "watch: the supervised command ended (watch exits with the command's status)",
  },
  CHILD_START_FAILED: { family: 'ChildExitError', exit: 'internal', meaning: 'watch: the supervised command could not start (exit 127)' },

  INTERRUPTED: {
    family: 'InterruptedError',
    exit: 'interrupted',
    meaning: 'SIGINT (130) or SIGTERM (143) stopped the run at a safe point; the message says what is in place',
  },
} as const satisfies Record<string, ErrorCodeRow>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes a class throws: those whose row names it as their family. */
export type CodeOf<F extends ErrorFamily> = { [C in ErrorCode]: (typeof ERROR_CODES)[C]['family'] extends F ? C : never }[ErrorCode];

interface ErrorDetails {
  [key: string]: string | number | boolean | null | undefined | string[];
}

/**
 * `C` is the set of codes this class may be constructed with: a family class narrows it to its own
 * rows; ParError itself takes only the rows whose family is ParError (NoInfer: the argument cannot
 * widen it). `code` stays the whole union, so any caught ParError can be compared with any code.
 */
export class ParError<C extends ErrorCode = CodeOf<'ParError'>> extends Error {
  readonly code: ErrorCode;
  readonly exitCode: number;
  readonly hint: string;
  readonly details: ErrorDetails;

  constructor(code: NoInfer<C>, message: string, hint: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ParError';
    this.code = code;
    this.exitCode = ExitCode[ERROR_CODES[code].exit];
    this.hint = hint;
    this.details = details;
  }
}

export class UsageError extends ParError<CodeOf<'UsageError'>> {
  declare readonly code: CodeOf<'UsageError'>;
  /** No hint of its own: the boundary, which knows the command, names it (usageHint). */
  readonly generic: boolean;
  constructor(message: string, hint?: string) {
    super('USAGE', message, hint ?? usageHint());
    this.generic = hint === undefined;
  }
}

/** "Run `par-identity status --help` …": the program as it was run and the actual command, never a placeholder. */
export function usageHint(command?: string): string {
  return command
    ? `Nothing was run. Run \`${programName()} ${command} --help\` for the accepted flags and values.`
    : `Nothing was run. Run \`${programName()} --help\` for the commands.`;
}

export class ConfigError extends ParError<CodeOf<'ConfigError'>> {
  declare readonly code: CodeOf<'ConfigError'>;
  constructor(code: CodeOf<'ConfigError'>, message: string, hint: string, details?: ErrorDetails) {
    super(code, message, hint, details);
  }
}

/** A stored or received identity that does not decode; `field` names the offending part. */
export class IdentityDecodeError extends ParError<CodeOf<'IdentityDecodeError'>> {
  declare readonly code: CodeOf<'IdentityDecodeError'>;
  readonly field: string;
  constructor(field: string, message: string, hint = 'The identity was not used. Restore a good copy or rotate again.') {
    super('IDENTITY_INVALID', `${field}: ${message}`, hint, { field });
    this.field = field;
  }
}

export class CredentialsRejectedError extends ParError<CodeOf<'CredentialsRejectedError'>> {
  declare readonly code: CodeOf<'CredentialsRejectedError'>;
  constructor(status: number, endpoint: string) {
    super(
      'CREDENTIALS_REJECTED',
      `the Datadog API rejected the credentials (HTTP ${status}) at ${endpoint}`,
      'Nothing was changed. Check the API key and application key, and that the application key has the On-Prem Runner scopes, then run again.',
      { status, endpoint },
    );
  }
}

export class EnrollmentError extends ParError<CodeOf<'EnrollmentError'>> {
  declare readonly code: CodeOf<'EnrollmentError'>;
  constructor(code: CodeOf<'EnrollmentError'>, message: string, hint: string, details?: ErrorDetails, cause?: unknown) {
    super(code, message, hint, details, { cause });
  }
}

export class StorageError extends ParError<CodeOf<'StorageError'>> {
  declare readonly code: CodeOf<'StorageError'>;
  constructor(code: CodeOf<'StorageError'>, message: string, hint: string, details?: ErrorDetails, cause?: unknown) {
    super(code, message, hint, details, { cause });
  }
}

export class ConflictError extends ParError<CodeOf<'ConflictError'>> {
  declare readonly code: CodeOf<'ConflictError'>;
  constructor(message: string, hint: string, details?: ErrorDetails) {
    super('CONFLICT', message, hint, details);
  }
}

export class VerificationError extends ParError<CodeOf<'VerificationError'>> {
  declare readonly code: CodeOf<'VerificationError'>;
  constructor(message: string, hint: string, details?: ErrorDetails, code: CodeOf<'VerificationError'> = 'VERIFICATION_FAILED') {
    super(code, message, hint, details);
  }
}

export class KubernetesError extends ParError<CodeOf<'KubernetesError'>> {
  declare readonly code: CodeOf<'KubernetesError'>;
  constructor(code: CodeOf<'KubernetesError'>, message: string, hint: string, details?: ErrorDetails, cause?: unknown) {
    super(code, message, hint, details, { cause });
  }
}

export type StopSignal = 'SIGINT' | 'SIGTERM';

/** Why a run's signal was aborted: the process signal's name when SIGINT/SIGTERM did it (src/cli/stop-signals.ts), else the caller's abort. */
export function stopSignalOf(signal: AbortSignal | undefined): StopSignal | undefined {
  const reason = signal?.reason as { stopSignal?: unknown } | undefined;
  return reason?.stopSignal === 'SIGINT' || reason?.stopSignal === 'SIGTERM' ? reason.stopSignal : undefined;
}

/** `stopped by SIGINT` (the CLI), or `stopped by the caller’s abort` (the API). */
export function stoppedBy(signal: AbortSignal | undefined): string {
  return `stopped by ${stopSignalOf(signal) ?? 'the caller’s abort'}`;
}

/**
 * A run stopped by SIGINT/SIGTERM (or the API caller's AbortSignal). The exit status follows the
 * signal as shells count it (128 + number): SIGINT 130, the row's; SIGTERM 143 (`terminated`), the
 * one other status this code exits with. `message`/`hint` say what is in place when the run knows.
 */
export class InterruptedError extends ParError<CodeOf<'InterruptedError'>> {
  declare readonly code: CodeOf<'InterruptedError'>;
  readonly signal: StopSignal | undefined;
  constructor(step: string, options: { message?: string; hint?: string; signal?: StopSignal | undefined; details?: ErrorDetails } = {}) {
    super(
      'INTERRUPTED',
      options.message ?? `interrupted during: ${step}`,
      options.hint ?? 'Run `par-identity status` to see what is in place.',
      { ...options.details, ...(options.signal ? { signal: options.signal } : {}) },
    );
    this.signal = options.signal;
    if (options.signal === 'SIGTERM') (this as { exitCode: number }).exitCode = ExitCode.terminated;
  }

  /** The same error as ended by `signal` (its exit status and the signal's name in front of the message). */
  bySignal(signal: StopSignal): InterruptedError {
    if (this.signal === signal) return this;
    return new InterruptedError('', { message: `${signal}: ${this.message}`, hint: this.hint, signal, details: this.details });
  }
}

/** `watch`: a loaded identity could not be handed on (signal recipient missing, bad pidfile). Reported, not fatal. */
export class ReloadApplyError extends ParError<CodeOf<'ReloadApplyError'>> {
  declare readonly code: CodeOf<'ReloadApplyError'>;
  constructor(code: CodeOf<'ReloadApplyError'>, message: string, hint: string, details?: ErrorDetails, cause?: unknown) {
    super(code, message, hint, details, { cause });
  }
}

/**
 * `watch -- <command>`: the supervised command ended or could not start. `watch` exits with the
 * command's own status (128 + signal number when a signal ended it, 127 when it could not start), the
 * one exit status not read from the table: the table's row (internal) is what the code means.
 */
export class ChildExitError extends ParError<CodeOf<'ChildExitError'>> {
  declare readonly code: CodeOf<'ChildExitError'>;
  constructor(code: CodeOf<'ChildExitError'>, message: string, hint: string, exitStatus: number, details?: ErrorDetails) {
    super(code, message, hint, details);
    (this as { exitCode: number }).exitCode = exitStatus;
  }
}

/** Wraps anything that is not already one of ours, so the boundary renders one shape. */
export function toParError(err: unknown): ParError {
  if (err instanceof ParError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ParError(
    'INTERNAL',
    `unexpected failure: ${message}`,
    'This is a bug in par-identity. Run `par-identity status` to see what is in place, and report the message above.',
    {},
    { cause: err },
  );
}

/** A rollout that did not complete; the message says what was undone. */
export class RolloutError extends ParError<CodeOf<'RolloutError'>> {
  declare readonly code: CodeOf<'RolloutError'>;
  constructor(code: CodeOf<'RolloutError'>, message: string, hint: string) {
    super(code, message, hint);
  }
}
