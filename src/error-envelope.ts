// THE --json error object, built here only: the CLI's boundary (src/output.ts renderError, and the
// usage errors commander reports itself, src/cli/main.ts) and the launcher's old-Node error
// (src/launcher-error.ts, bin/par-identity.js) all print this shape. No imports: the launcher's
// module bundles it for any Node.

/** The schema version of every --json object (fields are only ever added). */
export const SCHEMA_VERSION = 1;

interface ErrorEnvelopeFields {
  code: string;
  exitCode: number;
  message: string;
  hint: string;
  details?: Record<string, unknown>;
}

/** `{schemaVersion, status: 'error', command?, code, exitCode, message, hint, details?}`; details only when there are some. */
export function errorEnvelope(e: ErrorEnvelopeFields, command?: string): Record<string, unknown> {
  return {
    schemaVersion: SCHEMA_VERSION,
    status: 'error',
    ...(command ? { command } : {}),
    code: e.code,
    exitCode: e.exitCode,
    message: e.message,
    hint: e.hint,
    ...(e.details && Object.keys(e.details).length ? { details: e.details } : {}),
  };
}
