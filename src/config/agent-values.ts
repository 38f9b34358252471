// How the agent's config layer turns a stored value into what a caller asked for. Its GetBool and
// GetString (pkg/config/nodetreemodel/getter.go) are spf13/cast's ToBoolE and ToStringE, from the
// DataDog/cast v1.8.0 fork the agent pins (go.mod: replace github.com/spf13/cast); a value cast cannot
// convert is logged and read as false or "". docs/config-yaml.md has the table.

/** cast.ToBoolE: `ok` is false where the agent logs "failed to get configuration value" and uses false. */
export function castToBool(value: unknown): { value: boolean; ok: boolean } {
  if (typeof value === 'boolean') return { value, ok: true };
  if (value === null || value === undefined) return { value: false, ok: true };
  if (typeof value === 'number') return { value: value !== 0, ok: true };
  // strconv.ParseBool: exactly these spellings; no trimming, no yes/on (those are YAML words, and
  // only an unquoted YAML word is a boolean before it reaches cast).
  if (typeof value === 'string') {
    if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return { value: true, ok: true };
    if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return { value: false, ok: true };
  }
  return { value: false, ok: false };
}

/** strconv.FormatFloat(f, 'f', -1, 64): the shortest digits that read back as f, never an exponent. */
export function formatGoFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Number.POSITIVE_INFINITY) return '+Inf';
  if (f === Number.NEGATIVE_INFINITY) return '-Inf';
  const sign = f < 0 || Object.is(f, -0) ? '-' : '';
  const [mantissa, exp] = Math.abs(f).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const point = Number(exp) + 1;
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** cast.ToStringE: `ok` is false where the agent logs a warning and uses "" (lists, maps). */
export function castToString(value: unknown): { value: string; ok: boolean } {
  if (typeof value === 'string') return { value, ok: true };
  if (typeof value === 'boolean') return { value: String(value), ok: true };
  if (typeof value === 'number') return { value: formatGoFloat(value), ok: true };
  if (value === null || value === undefined) return { value: '', ok: true };
  return { value: '', ok: false };
}
