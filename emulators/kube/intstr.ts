const PERCENT = /^[0-9]+%$/;

/** validation.IsValidPercent's message (apimachinery). */
export const INVALID_PERCENT_MESSAGE =
  "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

export function isValidPercent(value: string): boolean {
  return PERCENT.test(value);
}

/** The percentage of a valid percent string, else undefined (apps validation's getPercentValue). */
export function percentValue(value: unknown): number | undefined {
  if (typeof value !== 'string' || !isValidPercent(value)) return undefined;
  return Number.parseInt(value.slice(0, -1), 10);
}

/**
 * apps validation's getIntOrPercentValue: the percentage of a percent string, the number of an
 * int, and for other strings whatever strconv.Atoi makes of them (0 when it fails).
 */
export function intOrPercentValue(value: unknown): number {
  const pct = percentValue(value);
  if (pct !== undefined) return pct;
  if (typeof value === 'number') return Math.trunc(value);
  if (typeof value === 'string' && /^[+-]?\d+$/.test(value)) return Number.parseInt(value, 10);
  return 0;
}

/**
 * How field errors print an intstr.IntOrString held by value: its String method has a pointer
 * receiver, so the Go error falls back to %#v.
 */
export function goIntOrString(value: unknown): string {
  if (typeof value === 'string') return `intstr.IntOrString{Type:1, IntVal:0, StrVal:${JSON.stringify(value)}}`;
  const n = typeof value === 'number' ? Math.trunc(value) : 0;
  return `intstr.IntOrString{Type:0, IntVal:${n}, StrVal:""}`;
}
