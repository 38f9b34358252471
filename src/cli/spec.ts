import type { Io } from '../io.js';
import type { CommandResult } from '../output.js';

// The shape of the one command table (src/cli/table.ts). commander's program, the man page and the
// shell completion are all built from it, so a flag, its help, its default and its examples are
// written once.

/** commander's parsed options plus the positional arguments, keyed by argument name. */
export type Raw = Record<string, unknown>;

export interface CommandModule<O> {
  run(options: O, io: Io): Promise<CommandResult>;
}

export interface FlagSpec {
  /** commander syntax: `-c, --cfgpath <dir>`, `--no-verify`, `--timeout <duration>`. */
  flags: string;
  help: string;
  default?: string | number | string[];
  /** Turns the text into the option value; throws a UsageError that never quotes the text. */
  parse?: (value: string, previous: never) => unknown;
  choices?: readonly string[];
  /** Long name (camelCase, as commander keys it) of a flag this one cannot be combined with. */
  conflicts?: string;
}

export interface ArgumentSpec {
  /** `<action>`, `[command...]` */
  name: string;
  help: string;
  choices?: readonly string[];
}

export interface Example {
  what: string;
  command: string;
}

export interface CommandSpec {
  name: string;
  description: string;
  arguments?: ArgumentSpec[];
  flags: FlagSpec[];
  /** 1–3, shown in --help and the man page. */
  examples: Example[];
  /** Name of the command in results and errors (`credentials set`); default: `name`. */
  resultName?: (raw: Raw) => string;
  run: {
    /** Imports src/commands/<name>.js (or a variant chosen by a flag) only when the command runs. */
    // biome-ignore lint/suspicious/noExplicitAny: each command module has its own options type; toOptions builds it.
    load(raw: Raw): Promise<CommandModule<any>>;
    toOptions(raw: Raw, io: Io): unknown;
  };
}

export interface ProgramSpec {
  name: string;
  description: string;
  commands: CommandSpec[];
}

/** `<action>` → action, `[command...]` → command: the key a positional argument has in Raw. */
export function argumentKey(arg: ArgumentSpec): string {
  return arg.name.replace(/[<>[\].]/g, '');
}

/** `-c, --cfgpath <dir>` → ['-c', '--cfgpath']. */
export function flagNames(flag: FlagSpec): string[] {
  return [...flag.flags.matchAll(/(?:^|[\s,|])(--?[\w-]+)/g)].map((m) => m[1]!);
}
