// Date.prototype.toISOString, computed from the UTC fields: V8's own toISOString looks up the local
// time zone's name in ICU as it formats (its ISO output never shows it), which maps about 1 MiB of ICU
// data into every process that prints a timestamp. Same string, same RangeError for an invalid date.

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

export function isoString(date: Date | number): string {
  const d = typeof date === 'number' ? new Date(date) : date;
  const year = d.getUTCFullYear();
  // Outside 0000–9999 (or invalid) the built-in's expanded years and its RangeError are kept.
  if (!(year >= 0 && year <= 9999)) return d.toISOString();
  return `${pad(year, 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}Z`;
}
