import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMPILERS_OFF_FLAGS, commandWord } from '../../src/watch/steady-memory.js';

// watch runs without V8's optimising compilers from its start (docs/architecture.md, "Start-up and
// memory"): the npm launcher restarts it with flags it cannot import from src/ (it must run on any
// Node), the single executable turns them off in its first module. Both read the command the same way.
const LAUNCHER = fileURLToPath(new URL('../../bin/par-identity.js', import.meta.url));

describe("watch's compiler flags", () => {
  it('the launcher starts watch with the very flags steady-memory turns on', () => {
    const listed = /const WATCH_V8_FLAGS = \[([^\]]*)\];/.exec(readFileSync(LAUNCHER, 'utf8'))?.[1];
    expect(listed).toBeDefined();
    expect(JSON.parse(`[${listed!.replaceAll("'", '"')}]`)).toEqual(COMPILERS_OFF_FLAGS);
  });

  it.each([
    [['watch'], 'watch'],
    [['watch', '--json', '-c', '/etc/datadog-agent'], 'watch'],
    [['--json', 'watch'], 'watch'],
    [['-q', '--no-color', '-v', 'watch', '--output', 'x'], 'watch'],
    [['status', 'watch'], 'status'],
    [['--json', 'status', '--secret'], 'status'],
    [['--', 'watch'], undefined],
    [['--json'], undefined],
    [[], undefined],
  ])('commandWord(%j) is %s', (args, command) => {
    expect(commandWord(args)).toBe(command);
  });
});
