// The one error family. Every failure the operator can meet is a ParError with a stable `code`
// (scripts match on it), an exit status (runbooks branch on it) and a hint saying what to do next.
// Messages never contain key material: callers pass names and fingerprints, never values.

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
  unavailable: 13,
  interrupted: 130,
} as const;

export type ExitCodeName = keyof typeof ExitCode;

export interface ErrorDetails {
  [key: string]: string | number | boolean | null | undefined | string[];
}

export class ParError extends Error {
  readonly code: string;
  readonly exitCode: number;
  readonly hint: string;
  readonly details: ErrorDetails;

  constructor(
    code: string,
    exit: ExitCodeName,
    message: string,
    hint: string,
    details: ErrorDetails = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ParError';
    this.code = code;
    this.exitCode = ExitCode[exit];
    this.hint = hint;
    this.details = details;
  }
}

export class UsageError extends ParError {
  constructor(message: string, hint = 'Run `par-identity <command> --help` for the accepted flags.') {
    super('USAGE', 'usage', message, hint);
  }
}

export class ConfigError extends ParError {
  constructor(code: string, message: string, hint: string, details?: ErrorDetails) {
    super(code, 'config', message, hint, details);
  }
}

/** A stored or received identity that does not decode; `field` names the offending part. */
export class IdentityDecodeError extends ParError {
  readonly field: string;
  constructor(field: string, message: string, hint = 'The identity was not used. Restore a good copy or rotate again.') {
    super('IDENTITY_INVALID', 'storage', `${field}: ${message}`, hint, { field });
    this.field = field;
  }
}

export class CredentialsRejectedError extends ParError {
  constructor(status: number, endpoint: string) {
    super(
      'CREDENTIALS_REJECTED',
      'credentialsRejected',
      `the Datadog API rejected the credentials (HTTP ${status}) at ${endpoint}`,
      'Nothing was changed. Check the API key and application key, and that the application key has the On-Prem Runner scopes, then run again.',
      { status, endpoint },
    );
  }
}

export class EnrollmentError extends ParError {
  constructor(code: string, message: string, hint: string, details?: ErrorDetails, cause?: unknown) {
    super(code, 'enrollmentFailed', message, hint, details, { cause });
  }
}

export class StorageError extends ParError {
  constructor(code: string, message: string, hint: string, details?: ErrorDetails, cause?: unknown) {
    super(code, 'storage', message, hint, details, { cause });
  }
}

export class ConflictError extends ParError {
  constructor(message: string, hint: string, details?: ErrorDetails) {
    super('CONFLICT', 'conflict', message, hint, details);
  }
}

export class VerificationError extends ParError {
  constructor(message: string, hint: string, details?: ErrorDetails) {
    super('VERIFICATION_FAILED', 'verificationFailed', message, hint, details);
  }
}

export class KubernetesError extends ParError {
  constructor(code: string, message: string, hint: string, details?: ErrorDetails, cause?: unknown) {
    super(code, 'kubernetes', message, hint, details, { cause });
  }
}

export class InterruptedError extends ParError {
  constructor(step: string) {
    super('INTERRUPTED', 'interrupted', `interrupted during: ${step}`, 'Run `par-identity status` to see what is in place.');
  }
}

/** `watch`: a loaded identity could not be handed on (signal target missing, bad pidfile). Reported, not fatal. */
export class ReloadApplyError extends ParError {
  constructor(code: string, message: string, hint: string, details?: ErrorDetails, cause?: unknown) {
    super(code, 'config', message, hint, details, { cause });
  }
}

/**
 * `watch -- <command>`: the supervised command ended or could not start. `watch` exits with the
 * command's own status (128 + signal number when a signal ended it, 127 when it could not start).
 */
export class ChildExitError extends ParError {
  constructor(code: string, message: string, hint: string, exitStatus: number, details?: ErrorDetails) {
    super(code, 'internal', message, hint, details);
    (this as { exitCode: number }).exitCode = exitStatus;
  }
}

/** Wraps anything that is not already one of ours, so the boundary renders one shape. */
export function toParError(err: unknown): ParError {
  if (err instanceof ParError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ParError(
    'INTERNAL',
    'internal',
    `unexpected failure: ${message}`,
    'This is a bug in par-identity. Run `par-identity status` to see what is in place, and report the message above.',
  );
}

/** The exit-code contract, as documented in README and the man page. */
export const EXIT_CODE_DOCS: { code: number; name: ExitCodeName; meaning: string }[] = [
  { code: 0, name: 'ok', meaning: 'success (for a dry run: every check passed)' },
  { code: 1, name: 'internal', meaning: 'unexpected failure (a bug): nothing is half-written, see the message' },
  { code: 2, name: 'usage', meaning: 'unknown command or flag, or an invalid flag value' },
  { code: 3, name: 'config', meaning: 'agent config unreadable or invalid, runner disabled, credentials missing' },
  { code: 4, name: 'credentialsRejected', meaning: 'the Datadog API rejected the API/application key (HTTP 401/403)' },
  { code: 5, name: 'enrollmentFailed', meaning: 'enrollment refused, bad response, redirect refused, or deadline exceeded' },
  { code: 6, name: 'conflict', meaning: 'someone else changed the identity meanwhile; nothing was overwritten' },
  { code: 7, name: 'storage', meaning: 'identity file or backup missing, corrupt, or not writable' },
  { code: 8, name: 'verificationFailed', meaning: 'the new identity was stored but the server did not accept it' },
  { code: 9, name: 'kubernetes', meaning: 'Kubernetes API unreachable, forbidden, or misconfigured' },
  { code: 10, name: 'rolloutFailed', meaning: 'the restart/rollout did not complete' },
  { code: 13, name: 'unavailable', meaning: 'a facility is not available here (the OS keychain, or the emulators in the single executable)' },
  { code: 130, name: 'interrupted', meaning: 'interrupted (SIGINT)' },
];
