import type { DurationFlag } from '../time/index.js';

// One typed definition per flag (issue 32): its names, its value (kind, parser, default), its help.
// commander's option (src/cli/program.ts), the value a command's toOptions reads (Values<F>, typed
// by tsc from the definitions), the API's schema (src/api/options.ts), --help, the man page and the
// completion all come from it. Nothing reads a flag back out of commander's syntax text.

/**
 * What a flag's value is, and so what the API checks an option against:
 * - switch: `--dry-run`, false unless given;
 * - negation: `--no-verify`, true unless given (the option is the name without `no-`);
 * - tristate: `--surge` and `--no-surge` on one option, undefined when neither is given;
 * - text: `<value>`, a string (through `parse` when it has a format);
 * - texts: `<value>` given again and again, every value in order;
 * - duration: `<duration>`, a number in the unit of its bounds;
 * - count: `<n>`, a whole number (its parser checks the range);
 * - choice: one of `choices`;
 * - text-or-true: `[value]`, the value, or true when the flag is given without one.
 */
type FlagKind = 'switch' | 'negation' | 'tristate' | 'text' | 'texts' | 'duration' | 'count' | 'choice' | 'text-or-true';

/** What a flag's value completes to in the shell (src/cli/docs/completion.ts); no value: nothing. */
type Completes = 'file' | 'context' | 'namespace';

/** `V`: the type of the flag's value in Values (undefined when it may be absent). */
export interface Flag<V = unknown> {
  readonly kind: FlagKind;
  /** `--kubeconfig`, `--no-verify` */
  readonly long: string;
  /** `-n` */
  readonly short?: string;
  /** The placeholder of the value in help: `ns` → `<ns>` (`[ns]` for text-or-true). */
  readonly value?: string;
  readonly help: string;
  /** The value when the flag is not given (per command for the shared flags: withDefault). */
  readonly default?: V;
  /** Turns the text into the value; throws a UsageError that never quotes a secret-looking text (value-parsers.ts). */
  readonly parse?: (text: string) => NonNullable<V>;
  /** A duration: the unit of its value and its bounds; the CLI parses the text with them, the API checks a number against them. */
  readonly duration?: DurationFlag;
  readonly choices?: readonly string[];
  readonly completes?: Completes;
  /** The option (key in the command's flags) of a flag this one cannot be combined with. */
  readonly conflicts?: string;
  /** How the process reports or runs (--json, --no-color, watch's supervision): the API has no such option. */
  readonly cliOnly?: true;
  /** tristate: the help of the `--no-` form. */
  readonly negationHelp?: string;
  /** Never set: carries V for Values<F> (a method, so a Flag<string> is still a Flag<unknown>). */
  valueType?(value: V): V;
}

/** A command's flags, by the option each fills (the key of its value in Values, and the API's option name). */
export type Flags = Readonly<Record<string, Flag>>;

type ValueOf<F> = F extends { valueType?(value: infer V): unknown } ? V : never;

/** The typed values of a command's flags: what toOptions reads, under the option names. */
export type Values<F extends Flags> = { -readonly [K in keyof F]: ValueOf<F[K]> };

interface Extra<V> {
  short?: string;
  parse?: (text: string) => V;
  completes?: Completes;
  conflicts?: string;
  cliOnly?: true;
}

export const switchFlag = (long: string, help: string, extra: Pick<Extra<boolean>, 'short' | 'cliOnly'> = {}): Flag<boolean> => ({
  kind: 'switch',
  long,
  help,
  ...extra,
});

export const negationFlag = (long: `--no-${string}`, help: string, extra: Pick<Extra<boolean>, 'cliOnly'> = {}): Flag<boolean> => ({
  kind: 'negation',
  long,
  help,
  ...extra,
});

export const tristateFlag = (long: string, help: string, negationHelp: string): Flag<boolean | undefined> => ({
  kind: 'tristate',
  long,
  help,
  negationHelp,
});

export const textFlag = <T extends string = string>(
  long: string,
  value: string,
  help: string,
  extra: Extra<T> = {},
): Flag<T | undefined> => ({ kind: 'text', long, value, help, ...extra });

export const textsFlag = (
  long: string,
  value: string,
  help: string,
  extra: Pick<Extra<string>, 'short' | 'completes'> = {},
): Flag<string[]> => ({ kind: 'texts', long, value, help, default: [], ...extra });

/** `value`: the placeholder, `duration` unless the value is another kind of length of time (an `age`). */
export const durationFlag = (
  long: string,
  help: string,
  duration: DurationFlag,
  own?: { value: string; parse: (text: string) => number },
): Flag<number | undefined> => ({
  kind: 'duration',
  long,
  value: 'duration',
  help,
  duration,
  ...own,
});

export const countFlag = (long: string, value: string, help: string, parse: (text: string) => number): Flag<number | undefined> => ({
  kind: 'count',
  long,
  value,
  help,
  parse,
});

export const choiceFlag = <const C extends readonly string[]>(
  long: string,
  value: string,
  help: string,
  choices: C,
): Flag<C[number] | undefined> => ({ kind: 'choice', long, value, help, choices });

export const textOrTrueFlag = (
  long: string,
  value: string,
  help: string,
  parse: (text: string) => string,
): Flag<string | true | undefined> => ({ kind: 'text-or-true', long, value, help, parse });

/** The same flag with a default (per command: `--timeout` is 2m for a rotation, 30s for status): its value is then always there. */
export function withDefault<V>(
  flag: Flag<V>,
  value: NonNullable<V>,
  duration?: DurationFlag,
): Flag<NonNullable<V>> & { readonly default: NonNullable<V> } {
  const { default: _none, valueType: _type, ...rest } = flag;
  return { ...rest, default: value, ...(duration ? { duration } : {}) };
}

/** commander syntax of one line of help: `-n, --namespace <ns>`, `--pods [workload]`. */
function syntaxOf(flag: Flag, long = flag.long): string {
  const value = flag.value === undefined ? '' : flag.kind === 'text-or-true' ? ` [${flag.value}]` : ` <${flag.value}>`;
  return `${flag.short ? `${flag.short}, ` : ''}${long}${value}`;
}

/** The lines of help a flag has (a tristate two: `--surge` and `--no-surge`), as commander syntax and help text. */
export function helpLines(flag: Flag): { syntax: string; help: string }[] {
  const first = { syntax: syntaxOf(flag), help: flag.help };
  if (flag.kind !== 'tristate') return [first];
  return [first, { syntax: `--no-${flag.long.slice(2)}`, help: flag.negationHelp ?? '' }];
}

/** Every name the flag answers to: ['-n', '--namespace'], ['--surge', '--no-surge']. */
export function flagNames(flag: Flag): string[] {
  return [...(flag.short ? [flag.short] : []), flag.long, ...(flag.kind === 'tristate' ? [`--no-${flag.long.slice(2)}`] : [])];
}

/**
 * The value of a flag from what commander (or an API caller) holds for it, undefined when not given:
 * checked against its kind, so a value of the wrong type never reaches a command under a typed name.
 */
function typedValue(flag: Flag, given: unknown): unknown {
  const value = given === undefined ? flag.default : given;
  switch (flag.kind) {
    case 'switch':
      return value === true;
    case 'negation':
      return value !== false;
    case 'tristate':
      return typeof value === 'boolean' ? value : undefined;
    case 'texts':
      return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
    case 'duration':
    case 'count':
      return typeof value === 'number' ? value : undefined;
    case 'text-or-true':
      return value === true || typeof value === 'string' ? value : undefined;
    default:
      return typeof value === 'string' ? value : undefined;
  }
}

/** The typed values of `flags` from `given(option)` (commander's parsed value, or the API caller's option). */
export function valuesOf<F extends Flags>(flags: F, given: (option: string, flag: Flag) => unknown): Values<F> {
  const values: Record<string, unknown> = {};
  for (const [option, flag] of Object.entries(flags)) values[option] = typedValue(flag, given(option, flag));
  // Each value was just checked against its flag's kind, which is what Values<F> says of it.
  return values as Values<F>;
}
