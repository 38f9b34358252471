import type { Io } from '../io.js';
import type { CommandResult } from '../output.js';
import type { DurationFlag } from '../time/index.js';

// The shape of the one command table (src/cli/table.ts). commander's program, the man page, the
// shell completion and the API (src/api) are all built from it, so a flag, its option name, its
// help, its default, its bounds and its examples are written once.

/**
 * The parsed command line: each flag's value under its option name (FlagSpec.option), each
 * positional argument under its name (argumentKey). What the API hands toOptions has the same shape.
 */
export type Raw = Record<string, unknown>;

interface CommandModule<O> {
  run(options: O, io: Io): Promise<CommandResult>;
}

export interface FlagSpec {
  /** commander syntax: `-c, --cfgpath <dir>`, `--no-verify`, `--timeout <duration>`. */
  flags: string;
  help: string;
  /** The key of the value in Raw, and the API's option name, when it is not the long flag in camelCase (`timeout` → `timeoutSeconds`). */
  option?: string;
  default?: string | number | string[];
  /** A duration: the unit of its value and its bounds. The CLI parses the text with them, the API checks a number against them. */
  duration?: DurationFlag;
  /** Turns the text into the option value (instead of the duration parser); throws a UsageError that never quotes the text. */
  parse?: (value: string) => string | number;
  /** Given more than once: every value, in order (an array, default empty). */
  repeatable?: true;
  choices?: readonly string[];
  /** Long name (camelCase, as commander keys it) of a flag this one cannot be combined with. */
  conflicts?: string;
  /** How the process reports or runs (--json, --no-color, watch's supervision): the API has no such option. */
  cliOnly?: true;
}

interface ArgumentSpec {
  /** `<action>`, `[command...]` */
  name: string;
  help: string;
  choices?: readonly string[];
}

interface Example {
  what: string;
  command: string;
}

interface CommandRun<O> {
  /** Imports src/commands/<name>.js (or a variant chosen by a flag) only when the command runs. */
  load(raw: Raw): Promise<CommandModule<O>>;
  /** The options object the module takes; tsc holds it to exactly that type (NoInfer: the module decides O). */
  toOptions(raw: Raw, io: Io): NoInfer<O>;
}

/** `O`: the options type of the command's module (tsc checks load and toOptions against it). The table holds them all as CommandSpec (some O). */
export interface CommandSpec<O = unknown> {
  name: string;
  description: string;
  arguments?: ArgumentSpec[];
  flags: FlagSpec[];
  /** 1–3, shown in --help and the man page. */
  examples: Example[];
  /** Name of the command in results and errors (`credentials set`); default: `name`. */
  resultName?: (raw: Raw) => string;
  /**
   * SIGINT/SIGTERM stop the run at its next safe point with INTERRUPTED (src/cli/stop-signals.ts):
   * the boundary passes the run a `signal` option. Without it the process's defaults, or the
   * command's own handling (watch, emulator), apply.
   */
  stopsOnSignal?: true;
  run: CommandRun<O>;
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

/** The long flag in camelCase without `no-` (commander's attribute name): `--no-keep-previous` → keepPrevious. */
function attributeOf(flag: FlagSpec): string {
  const long = flagNames(flag).find((n) => n.startsWith('--')) ?? flagNames(flag)[0]!;
  return long.replace(/^--?(no-)?/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Where a flag's value goes in Raw and in the API's options. */
export function optionOf(flag: FlagSpec): string {
  return flag.option ?? attributeOf(flag);
}
