/** An intstr.IntOrString as JSON carries it: a number, or a string such as "25%". */
type IntOrString = number | string;

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
 * intstr.GetScaledValueFromIntOrPercent: an int as is, a percentage of `total` rounded up or down.
 * Throws for strings that are not percentages, as the Go function returns an error.
 */
export function scaledValue(value: IntOrString | undefined | null, total: number, roundUp: boolean): number {
  if (value === undefined || value === null) throw new Error('nil value for IntOrString');
  if (typeof value === 'number') return Math.trunc(value);
  if (!value.endsWith('%')) throw new Error(`invalid value for IntOrString: invalid type: string is not a percentage`);
  const n = Number(value.slice(0, -1));
  if (!Number.isInteger(n)) throw new Error(`invalid value for IntOrString: invalid value ${JSON.stringify(value)}`);
  const exact = (n * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
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
