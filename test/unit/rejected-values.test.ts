import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import type { CommandSpec, ProgramSpec } from '../../src/cli/spec.js';
import { PROGRAM } from '../../src/cli/table.js';
import { rejectedValue } from '../../src/cli/value-parsers.js';
import type { Io } from '../../src/io.js';
import { renderError } from '../../src/output.js';

// One rule for rejected values (README, "Rejected values"), walked over every flag and every argument
// with choices of every command of the command table: a bad value is rejected before the command runs,
// with a usage error (exit 2) that names the flag and quotes the value as kubectl does, except for a
// secret flag or a value that looks like a key, which show only their length. A flag that takes any
// text is listed below with what checks it; a new flag must be added to one side or the other.

/** Flags whose text is taken as given at parse time: what they name is looked up by the command. */
const FREE_TEXT: Record<string, string> = {
  '--cfgpath': 'a directory or file, read by the config loader',
  '--extracfgpath': 'a file, read by the config loader',
  '--identity-file': 'a file, checked by the identity target',
  '--api-key-file': 'a file or -, read by the credential loader (a secret flag: its errors give the length)',
  '--app-key-file': 'a file or -, read by the credential loader (a secret flag: its errors give the length)',
  '--profile': 'a keychain profile name',
  '--kubeconfig': 'a file, read as kubectl reads it',
  '--context': 'a kubeconfig context, looked up in the kubeconfig',
  '--namespace': 'a namespace, sent to the apiserver',
  '--secret-name': 'a Secret name, sent to the apiserver',
  '--k8s-secret': 'a Secret name, sent to the apiserver',
  '--identity-secret': 'a Secret name, sent to the apiserver',
  '--hostname': 'a hostname, validated with the agent rules by the hostname step',
  '--site': 'a Datadog site, stored as given',
  '--kubeconfig-out': 'a file the emulator writes',
  '--output': 'a file watch keeps up to date, checked before watching',
  '--pidfile': 'a file read at every signal',
};

const KEY = '0123456789abcdef0123456789abcdef01234567';
const BAD = 'not valid!';

function fakeIo(): Io & { err: string[] } {
  const err: string[] = [];
  return {
    err,
    stdout: () => undefined,
    stderr: (t) => void err.push(t),
    env: {},
    now: () => new Date(0),
    isTTY: false,
    stdinIsTTY: false,
    readStdin: async () => '',
    promptHidden: async () => '',
  };
}

/** The table with every command replaced by one that only says it was reached. */
const ACCEPTING: ProgramSpec = {
  ...PROGRAM,
  commands: PROGRAM.commands.map(
    (spec): CommandSpec => ({
      ...spec,
      run: {
        load: async () => ({ run: async () => ({ json: { schemaVersion: 1, status: 'ok', command: spec.name }, summary: [] }) }),
        toOptions: () => ({}),
      },
    }),
  ),
};

/** Parses argv as main() does; the error output, or 'accepted'. */
async function outcome(argv: string[]): Promise<{ accepted: true } | { accepted: false; exitCode: number; text: string }> {
  const io = fakeIo();
  try {
    await buildProgram(ACCEPTING, io).parseAsync(argv, { from: 'user' });
    return { accepted: true };
  } catch (err) {
    if (err instanceof CommanderError) return { accepted: false, exitCode: err.exitCode === 0 ? 0 : 2, text: io.err.join('') };
    const exitCode = renderError(err, io, { json: false, color: false });
    return { accepted: false, exitCode, text: io.err.join('') };
  }
}

interface Case {
  command: string;
  name: string;
  argv: (value: string) => string[];
}

const FLAGS: Case[] = PROGRAM.commands.flatMap((spec) =>
  Object.values(spec.flags)
    .filter((f) => f.value !== undefined)
    .map((f) => {
      const long = f.long;
      const before = Object.values(spec.arguments ?? {})
        .filter((a) => a.name.startsWith('<'))
        .map((a) => a.choices?.[0] ?? 'deployment/x');
      return { command: spec.name, name: long, argv: (value: string) => [spec.name, ...before, `${long}=${value}`] };
    }),
);

const ARGUMENTS: Case[] = PROGRAM.commands.flatMap((spec) =>
  Object.entries(spec.arguments ?? {})
    .filter(([, a]) => a.choices)
    .map(([key]) => ({ command: spec.name, name: `<${key}>`, argv: (value: string) => [spec.name, value] })),
);

describe('the rule', () => {
  it.each([
    ['--port', 'abc', '"abc"'],
    ['--port', 'a\u001bb\u202ec', '"a\\u001bb\\u202ec"'],
    ['--port', KEY, 'a 40-character value'],
    ['--timeout', `x${'F'.repeat(32)}`, 'a 33-character value'],
    ['--api-key-file', 'short', 'a 5-character value'],
  ])('%s %j → %s', (flag, value, shown) => expect(rejectedValue(flag, value)).toBe(shown));
});

describe('every flag of every command, given a bad value', () => {
  it('the walk covers the table', () => {
    expect(FLAGS.length).toBeGreaterThan(60);
    expect(new Set(FLAGS.map((c) => c.command))).toEqual(
      new Set(PROGRAM.commands.filter((s) => Object.values(s.flags).some((f) => f.value !== undefined)).map((s) => s.name)),
    );
  });

  it.each(FLAGS.map((c) => [`${c.command} ${c.name}`, c] as const))('%s', async (_name, c) => {
    const plain = await outcome(c.argv(BAD));
    const key = await outcome(c.argv(KEY));
    if (c.name in FREE_TEXT) {
      // Taken as given: the command checks what it names.
      expect(plain.accepted, `${c.name} is listed as free text`).toBe(true);
      return;
    }
    expect(
      plain.accepted,
      `${c.name} accepted ${JSON.stringify(BAD)}: give it a parser in src/cli/value-parsers.ts, or list it in FREE_TEXT`,
    ).toBe(false);
    if (plain.accepted || key.accepted) throw new Error(`${c.name} accepted a key-like value`);
    expect(plain.exitCode).toBe(2);
    expect(plain.text).toContain(c.name);
    expect(plain.text).toContain(`got ${JSON.stringify(BAD)}`);
    expect(key.exitCode).toBe(2);
    expect(key.text).toContain(`got a ${KEY.length}-character value`);
    expect(key.text).not.toContain(KEY.slice(4, 20));
  });

  it.each(ARGUMENTS.map((c) => [`${c.command} ${c.name}`, c] as const))('%s', async (_name, c) => {
    const plain = await outcome(c.argv('nope'));
    const key = await outcome(c.argv(KEY));
    if (plain.accepted || key.accepted) throw new Error(`${c.name} accepted a bad value`);
    expect(plain.text).toContain(`${c.name} must be one of`);
    expect(plain.text).toContain('got "nope"');
    expect(key.text).toContain(`got a ${KEY.length}-character value`);
    expect(key.text).not.toContain(KEY.slice(4, 20));
  });

  it('every free-text flag is still a flag of the table', () => {
    const names = new Set(FLAGS.map((c) => c.name));
    expect(Object.keys(FREE_TEXT).filter((n) => !names.has(n))).toEqual([]);
  });
});
