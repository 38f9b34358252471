import { describe, expect, it } from 'vitest';
import {
  ChildExitError,
  type CodeOf,
  ConfigError,
  ConflictError,
  CredentialsRejectedError,
  ERROR_CODES,
  type ErrorCode,
  EXIT_CODE_DOCS,
  EnrollmentError,
  ExitCode,
  IdentityDecodeError,
  InterruptedError,
  KubernetesError,
  ParError,
  ReloadApplyError,
  RolloutError,
  StorageError,
  UsageError,
  VerificationError,
} from '../../src/errors.js';

// The closed code table is the only place a code's class and exit status are written. The types keep
// the rest honest (a class takes only its own rows' codes; the exit status is read from the row): each
// expected type error below fails `npm run lint` (tsc) the day its line compiles.

const rows = Object.entries(ERROR_CODES) as [ErrorCode, (typeof ERROR_CODES)[ErrorCode]][];

/** One way to construct an error of each family with a given code, as the product does. */
const construct: Record<string, (code: never) => ParError<ErrorCode>> = {
  ParError: (code) => new ParError(code, 'm', 'h'),
  UsageError: () => new UsageError('m'),
  ConfigError: (code) => new ConfigError(code, 'm', 'h'),
  IdentityDecodeError: () => new IdentityDecodeError('field', 'm'),
  CredentialsRejectedError: () => new CredentialsRejectedError(401, 'https://api.example'),
  EnrollmentError: (code) => new EnrollmentError(code, 'm', 'h'),
  StorageError: (code) => new StorageError(code, 'm', 'h'),
  ConflictError: () => new ConflictError('m', 'h'),
  VerificationError: (code) => new VerificationError('m', 'h', {}, code),
  KubernetesError: (code) => new KubernetesError(code, 'm', 'h'),
  RolloutError: (code) => new RolloutError(code, 'm', 'h'),
  InterruptedError: () => new InterruptedError('step'),
  ReloadApplyError: (code) => new ReloadApplyError(code, 'm', 'h'),
  ChildExitError: (code) => new ChildExitError(code, 'm', 'h', 1),
};

describe('the error code table is closed', () => {
  it.each(rows)('%s: constructed by the class its row names, with the exit status its row names', (code, row) => {
    const err = construct[row.family]!(code as never);
    expect(err.code).toBe(code);
    expect(err).toBeInstanceOf(ParError);
    expect(err.constructor.name).toBe(row.family);
    // ChildExitError exits with the supervised command's status (1 here); every other error with its row's.
    expect(err.exitCode).toBe(row.family === 'ChildExitError' ? 1 : ExitCode[row.exit]);
  });

  it('the types refuse a code thrown with another class than its row names', () => {
    // Only rows whose family is ParError itself may be thrown as a bare ParError.
    const locked: CodeOf<'ParError'> = 'LOCKED';
    expect(new ParError(locked, 'm', 'h').exitCode).toBe(ExitCode.locked);
    // Compiled, never run: tsc is the judge of these lines.
    const refused = () => {
      // @ts-expect-error SECRET_MISSING is a KubernetesError row
      void new ParError('SECRET_MISSING', 'm', 'h');
      // @ts-expect-error KUBE_FORBIDDEN is not a ConfigError row
      void new ConfigError('KUBE_FORBIDDEN', 'm', 'h');
      // @ts-expect-error not a code at all
      void new StorageError('IDENTITY_MSSING', 'm', 'h');
      // @ts-expect-error the exit status is the row's: a constructor has nowhere to pass another one
      void new ParError('LOCKED', 'm', 'h', {}, {}, 'locked');
    };
    expect(typeof refused).toBe('function');
  });

  it('every exit status a row names is documented, and each meaning is one line', () => {
    const documented = new Set(EXIT_CODE_DOCS.map((d) => d.name));
    for (const [code, row] of rows) {
      expect(documented.has(row.exit), code).toBe(true);
      expect(row.meaning, code).not.toMatch(/\n/);
      expect(row.meaning.length, code).toBeLessThan(120);
    }
    expect(EXIT_CODE_DOCS.map((d) => d.code)).toEqual(EXIT_CODE_DOCS.map((d) => ExitCode[d.name]));
  });

  it('the rows agreed with the other work streams are there', () => {
    expect(ERROR_CODES.LOCKED).toMatchObject({ exit: 'locked' });
    expect(ExitCode.locked).toBe(11);
    expect(ExitCode.outcomeUnknown).toBe(12);
    expect(ExitCode.unavailable).toBe(13);
    for (const [code, exit] of [
      ['OUTCOME_UNKNOWN', 12],
      ['KEYCHAIN_UNAVAILABLE', 13],
      ['TLS_UNTRUSTED', 5],
      ['KUBE_TLS_UNTRUSTED', 9],
      ['KUBE_TIMEOUT', 9],
      ['API_KEY_INVALID', 4],
    ] as const) {
      expect(ExitCode[ERROR_CODES[code].exit], code).toBe(exit);
    }
  });
});
