/**
 * Options of the enrollment API emulator and the values it falls back to.
 *
 * The default keys are obviously fake (they only ever unlock this emulator), so start-up
 * output may print them and shell demos may hard-code them.
 */

export const DEFAULT_API_KEY = '00000000000000000000000000emu0ak';
export const DEFAULT_APP_KEY = '0000000000000000000000000000000000emu0pk';
/** Accepted as an application key but lacking the scope to enroll: every owned enrollment gets 403. */
export const DEFAULT_FORBIDDEN_APP_KEY = '000000000000000000000000000000000emu0fpk';
const DEFAULT_ORG_ID = 1234567;
const DEFAULT_MAX_CLOCK_SKEW_SECONDS = 30;
/** Larger enrollment bodies get 413; a real body is under 1 KiB. */
export const MAX_REQUEST_BODY_BYTES = 64 * 1024;

export interface EnrollmentEmulatorOptions {
  /** Address of the main listener; default 127.0.0.1. */
  host?: string;
  /** Port of the main listener; 0 (default) picks a free one. */
  port?: number;
  /** Accepted DD-API-KEY values; default [DEFAULT_API_KEY]. */
  apiKeys?: string[];
  /** Accepted DD-APPLICATION-KEY values; default [DEFAULT_APP_KEY]. */
  appKeys?: string[];
  /** Known application keys without the enrollment scope (403); default [DEFAULT_FORBIDDEN_APP_KEY]. */
  forbiddenAppKeys?: string[];
  /** Org every runner is enrolled into; default DEFAULT_ORG_ID. */
  orgId?: number;
  /** Tolerance on the JWT `iat`/`exp` checks, in seconds; default DEFAULT_MAX_CLOCK_SKEW_SECONDS. */
  maxClockSkewSeconds?: number;
  /** Clock in epoch milliseconds, so tests can put JWT boundaries exactly; default Date.now. */
  now?: () => number;
}

export interface ResolvedEmulatorOptions {
  host: string;
  port: number;
  apiKeys: readonly string[];
  appKeys: readonly string[];
  forbiddenAppKeys: readonly string[];
  orgId: number;
  maxClockSkewSeconds: number;
  now: () => number;
}

export function resolveOptions(opts: EnrollmentEmulatorOptions = {}): ResolvedEmulatorOptions {
  const orgId = opts.orgId ?? DEFAULT_ORG_ID;
  if (!Number.isSafeInteger(orgId) || orgId <= 0) {
    throw new RangeError(`orgId must be a positive integer, got ${orgId}`);
  }
  const skew = opts.maxClockSkewSeconds ?? DEFAULT_MAX_CLOCK_SKEW_SECONDS;
  if (!Number.isFinite(skew) || skew < 0) {
    throw new RangeError(`maxClockSkewSeconds must be a non-negative number, got ${skew}`);
  }
  const resolved: ResolvedEmulatorOptions = {
    host: opts.host ?? '127.0.0.1',
    port: opts.port ?? 0,
    apiKeys: [...(opts.apiKeys ?? [DEFAULT_API_KEY])],
    appKeys: [...(opts.appKeys ?? [DEFAULT_APP_KEY])],
    forbiddenAppKeys: [...(opts.forbiddenAppKeys ?? [DEFAULT_FORBIDDEN_APP_KEY])],
    orgId,
    maxClockSkewSeconds: skew,
    now: opts.now ?? Date.now,
  };
  // An empty key would make a missing header look like a valid credential.
  for (const key of [...resolved.apiKeys, ...resolved.appKeys, ...resolved.forbiddenAppKeys]) {
    if (key === '') throw new RangeError('credential keys must be non-empty strings');
  }
  const overlap = resolved.appKeys.filter((k) => resolved.forbiddenAppKeys.includes(k));
  if (overlap.length > 0) throw new RangeError('an application key cannot be both accepted and forbidden');
  return resolved;
}
