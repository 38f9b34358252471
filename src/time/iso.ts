// Date.prototype.toISOString, computed from the UTC fields: V8's own toISOString looks up the local
// time zone's name in ICU as it formats (its ISO output never shows it), which maps about 1 MiB of ICU
// data into every process that prints a timestamp. Same string, same RangeError for an invalid date.

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

export function isoString(date: Date | number): string {
  const d = typeof date === 'number' ? new Date(date) : date;
  const year = d.getUTCFullYear();
  // Outside 0000–9999 (or invalid) the built-in's expanded years and its RangeError are kept.
  if (!(year >= 0 && year <= 9999)) return d.toISOString();
  const day = `${pad(year, 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  return `${day}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}Z`;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * An RFC 3339 time and nothing else. Date.parse alone is not enough for a time read from outside:
 * it accepts text in parentheses ("2026-01-01 (…)"), escape sequences included.
 */
export function isRfc3339(text: string): boolean {
  return RFC3339.test(text) && !Number.isNaN(Date.parse(text));
}
