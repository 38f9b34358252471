import { describe, expect, it } from 'vitest';
import {
  choiceFlag,
  durationFlag,
  flagNames,
  helpLines,
  negationFlag,
  switchFlag,
  textFlag,
  textsFlag,
  tristateFlag,
  type Values,
  valuesOf,
  withDefault,
} from '../../src/cli/flag.js';
import { PROGRAM } from '../../src/cli/table.js';
import { DURATIONS } from '../../src/cli/duration-flags.js';

// One typed definition per flag (src/cli/flag.ts): the values a command reads come from it, checked
// against its kind, and a flag several commands take says one thing everywhere.

describe('valuesOf', () => {
  const flags = {
    dryRun: switchFlag('--dry-run', 'd'),
    verify: negationFlag('--no-verify', 'v'),
    surge: tristateFlag('--surge', 's', 'no s'),
    name: textFlag('--name', 'n', 'n'),
    files: textsFlag('--file', 'f', 'f'),
    timeoutSeconds: withDefault(durationFlag('--timeout', 't', DURATIONS.timeout), 30),
    onChange: withDefault(choiceFlag('--on-change', 'a', 'a', ['restart', 'signal']), 'restart'),
  };

  it('fills each flag from its default, by kind, when nothing is given', () => {
    const values: Values<typeof flags> = valuesOf(flags, () => undefined);
    expect(values).toEqual({
      dryRun: false,
      verify: true,
      surge: undefined,
      name: undefined,
      files: [],
      timeoutSeconds: 30,
      onChange: 'restart',
    });
  });

  it('takes what is given, and nothing of another type under a typed name', () => {
    const given: Record<string, unknown> = {
      dryRun: true,
      verify: false,
      surge: false,
      name: 'x',
      files: ['a', 'b'],
      timeoutSeconds: 5,
      onChange: 'signal',
    };
    expect(valuesOf(flags, (option) => given[option])).toEqual(given);
    const wrong: Record<string, unknown> = {
      dryRun: 'yes',
      verify: 0,
      surge: 'no',
      name: 42,
      files: 'a',
      timeoutSeconds: '5',
      onChange: 1,
    };
    expect(valuesOf(flags, (option) => wrong[option])).toEqual({
      dryRun: false,
      verify: true,
      surge: undefined,
      name: undefined,
      files: [],
      timeoutSeconds: undefined,
      onChange: undefined,
    });
  });

  it('a tristate is two lines of help on one option', () => {
    expect(helpLines(flags.surge)).toEqual([
      { syntax: '--surge', help: 's' },
      { syntax: '--no-surge', help: 'no s' },
    ]);
    expect(flagNames(flags.surge)).toEqual(['--surge', '--no-surge']);
    expect(helpLines(textFlag('--namespace', 'ns', 'h', { short: '-n' }))).toEqual([{ syntax: '-n, --namespace <ns>', help: 'h' }]);
  });
});

describe('the table', () => {
  it('a flag several commands take has one help text, the same kind and the same option name everywhere (only its default differs)', () => {
    const seen = new Map<string, { command: string; option: string; help: string; kind: string }>();
    for (const spec of PROGRAM.commands) {
      for (const [option, flag] of Object.entries(spec.flags)) {
        const first = seen.get(flag.long);
        const here = { command: spec.name, option, help: flag.help, kind: flag.kind };
        if (!first) seen.set(flag.long, here);
        else expect({ ...here, command: first.command }, `${spec.name} ${flag.long}`).toEqual(first);
      }
    }
    expect([...seen.keys()]).toEqual(
      expect.arrayContaining([
        '--namespace',
        '--kubeconfig',
        '--context',
        '--timeout',
        '--json',
        '--dry-run',
        '--no-verify',
        '--profile',
        '--cfgpath',
      ]),
    );
  });
});
