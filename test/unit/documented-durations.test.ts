import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ageThreshold, DURATIONS, shownDefault } from '../../src/cli/duration-flags.js';
import { PROGRAM } from '../../src/cli/table.js';
import { parseDurationFlag } from '../../src/time/index.js';

// Every duration an operator may copy — README, docs/, the shipped manifests and the commands' own
// examples — is one the parser accepts: a CronJob copied from deploy/ with a bare number would now stop
// at a usage error instead of rotating on its schedule.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FLAGS = [...new Set(Object.values(DURATIONS).map((d) => d.flag))];

/** `--flag VALUE`, `--flag=VALUE`, and the YAML list form (`- --flag` then `- VALUE`). */
function durationsIn(text: string): { flag: string; value: string }[] {
  const found: { flag: string; value: string }[] = [];
  for (const flag of FLAGS) {
    const inline = new RegExp(`${flag}[ =]"?(-?\\d[^\\s\`'"|),;]*)`, 'g');
    for (const m of text.matchAll(inline)) found.push({ flag, value: m[1]! });
    const listed = new RegExp(`- ${flag}\\s*\\n\\s*- "?([^"\\s]+)"?`, 'g');
    for (const m of text.matchAll(listed)) found.push({ flag, value: m[1]! });
  }
  return found;
}

function accepts(flag: string, value: string): boolean {
  try {
    if (flag === '--if-older-than') ageThreshold(value);
    else parseDurationFlag(value, Object.values(DURATIONS).find((d) => d.flag === flag && d.maxMs >= 86_400_000) ?? DURATIONS.timeout);
    return true;
  } catch {
    return false;
  }
}

const SOURCES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(join(ROOT, 'deploy')).map((f) => `deploy/${f}`),
];

describe('documented durations', () => {
  it('the scan finds the shipped CronJob threshold and the sidecar splay', () => {
    const all = SOURCES.flatMap((file) => durationsIn(readFileSync(join(ROOT, file), 'utf8')));
    expect(all).toContainEqual({ flag: '--if-older-than', value: '90d' });
    expect(all).toContainEqual({ flag: '--splay', value: '5s' });
    expect(durationsIn('args:\n  - --splay\n  - "5000"\n')).toEqual([{ flag: '--splay', value: '5000' }]);
    expect(accepts('--splay', '5000')).toBe(false);
  });

  it.each(SOURCES)('%s: every duration carries its unit and is within bounds', (file) => {
    const rejected = durationsIn(readFileSync(join(ROOT, file), 'utf8')).filter((d) => !accepts(d.flag, d.value));
    expect(rejected).toEqual([]);
  });

  it("every command's examples", () => {
    const rejected = PROGRAM.commands
      .flatMap((spec) => spec.examples.flatMap((e) => durationsIn(e.command)))
      .filter((d) => !accepts(d.flag, d.value));
    expect(rejected).toEqual([]);
  });

  // Issue 25: "default values in --help carry their units". A duration flag's default is shown as it
  // may be typed (2m, not 120), a bare 0 only where zero means off or none; a default the help text
  // states itself (--healthz-stale's) names its unit too.
  it("every duration flag's default in --help carries its unit", () => {
    const flags = PROGRAM.commands.flatMap((spec) =>
      Object.values(spec.flags)
        .filter((f) => f.duration)
        .map((f) => ({ command: spec.name, flag: f })),
    );
    expect(flags.length).toBeGreaterThan(5);
    for (const { command, flag } of flags) {
      if (flag.default !== undefined) {
        const shown = shownDefault(flag);
        expect(shown === '0' || accepts(flag.duration!.flag, shown), `${command} ${flag.long}: default ${shown}`).toBe(true);
        expect(shown, `${command} ${flag.long}`).toMatch(/^(0|\d+(ms|s|m|h|d))$/);
      }
      // A number in the help text's own "(default …)" is a duration with its unit, or 0 (an exit status and a factor aside).
      for (const m of flag.help.matchAll(/\(default[^)]*\)/g)) {
        for (const n of m[0].matchAll(/(?<![\w-]|exit )(\d+)(\w*)(?! ×)/g))
          expect(n[1] === '0' || /^(ms|s|m|h|d)$/.test(n[2]!), `${command} ${flag.long}: ${m[0]}`).toBe(true);
      }
    }
  });
});
