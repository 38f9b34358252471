// How old the identity in service is: for `status`, and for `--if-older-than` on every rotation.

/** Whole seconds since `rotatedAt` (RFC 3339), or null when unknown. Never negative (clock skew). */
export function ageOf(rotatedAt: string | undefined, now: Date): number | null {
  if (!rotatedAt) return null;
  const at = Date.parse(rotatedAt);
  return Number.isNaN(at) ? null : Math.max(0, Math.floor((now.getTime() - at) / 1000));
}

export function describeAge(seconds: number): string {
  if (seconds >= 86_400) return `${Math.floor(seconds / 86_400)}d ${Math.floor((seconds % 86_400) / 3600)}h`;
  if (seconds >= 3600) return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`;
  if (seconds >= 60) return `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
  return `${seconds}s`;
}

/**
 * Whether a scheduled rotation is due. A missing identity, one that does not decode, or one whose
 * age is unknown is due: skipping those would leave a runner without a working identity.
 */
export function rotationDue(
  current: { state: string; rotatedAt?: string },
  olderThanSeconds: number,
  now: Date,
): { due: boolean; ageSeconds: number | null; reason: string } {
  const age = ageOf(current.rotatedAt, now);
  if (current.state !== 'ok')
    return { due: true, ageSeconds: age, reason: current.state === 'missing' ? 'no identity yet' : 'the current identity does not decode' };
  if (age === null) return { due: true, ageSeconds: null, reason: 'the age of the current identity is unknown' };
  if (age >= olderThanSeconds)
    return {
      due: true,
      ageSeconds: age,
      reason: `the current identity is ${describeAge(age)} old (threshold ${describeAge(olderThanSeconds)})`,
    };
  return {
    due: false,
    ageSeconds: age,
    reason: `the current identity is ${describeAge(age)} old, younger than ${describeAge(olderThanSeconds)}`,
  };
}
