import type { Io } from '../io.js';
import type { CommandResult } from '../output.js';
import type { Flags, Values } from './flag.js';

// The shape of the one command table (src/cli/table.ts): one typed definition per command
// (defineCommand). commander's program, the man page, the shell completion and the API (src/api) are
// all built from it, so a flag, its option name, its value's type, its help, its default, its bounds
// and its examples are written once (src/cli/flag.ts).

interface CommandModule<O> {
  run(options: O, io: Io): Promise<CommandResult>;
}

/**
 * The stop the boundary adds to the options of a command that stopsOnSignal: the CLI's SIGINT/SIGTERM
 * (program.ts, stop-signals.ts) or the API caller's AbortSignal. A command's options type names it
 * beside what its toOptions builds (`ReturnType<typeof rotateIdentityOptions> & Stoppable`).
 */
export interface Stoppable {
  signal?: AbortSignal;
}

/** A positional argument; `V` its value's type. */
export interface ArgumentSpec<V = unknown> {
  /** `<action>`, `[command...]`: how help shows it. */
  name: string;
  help: string;
  choices?: readonly string[];
  /** `[command...]`: every word left. */
  variadic?: true;
  /** Never set: carries V for the command's input (a method, so an ArgumentSpec<string> is an ArgumentSpec<unknown>). */
  valueType?(value: V): V;
}

export const argument = (name: string, help: string): ArgumentSpec<string> => ({ name, help });
export const choiceArgument = <const C extends readonly string[]>(name: string, help: string, choices: C): ArgumentSpec<C[number]> => ({
  name,
  help,
  choices,
});
export const variadicArgument = (name: string, help: string): ArgumentSpec<string[]> => ({ name, help, variadic: true });

/** A command's positional arguments, in order, by the key their value has in the input. */
export type Arguments = Readonly<Record<string, ArgumentSpec>>;

type ArgumentValues<A extends Arguments> = { -readonly [K in keyof A]: A[K] extends { valueType?(value: infer V): unknown } ? V : never };

/** What every run is given besides its flags: how it reports, and which options were typed rather than defaulted. */
export interface RunContext {
  /** --json, before or after the command. */
  json: boolean;
  /** false: --no-color (before or after the command). */
  color: boolean;
  /** The options given (not defaulted): the CLI reads commander's value source, the API the call. */
  givenOptions: readonly string[];
}

/** What toOptions reads: every flag's typed value, every argument's, and the run's context. */
export type CommandInput<F extends Flags, A extends Arguments = Record<never, never>> = Values<F> & ArgumentValues<A> & RunContext;

interface Example {
  what: string;
  command: string;
}

interface CommandRun<O, F extends Flags, A extends Arguments> {
  /** Imports src/commands/<name>.js (or a variant chosen by a flag) only when the command runs. */
  load(input: CommandInput<F, A>): Promise<CommandModule<O>>;
  /**
   * The options object the module takes, from the flags' and arguments' values: O is what it returns.
   * Declared beside the definition (`function rotateIdentityOptions(v: CommandInput<…>, io: Io)`), so
   * the module can name its options type (`ReturnType<typeof rotateIdentityOptions>`) with
   * `import type` without tsc going round through `load`.
   */
  toOptions(input: CommandInput<F, A>, io: Io): O;
}

/**
 * What defineCommand checks: O comes from toOptions (NoInfer on load), and the module's `run` must
 * take every object toOptions builds (a function type, not a method: checked one way, not both).
 */
interface DefinedRun<O, F extends Flags, A extends Arguments> extends CommandRun<O, F, A> {
  load(input: CommandInput<F, A>): Promise<{ run: (options: NoInfer<O>, io: Io) => Promise<CommandResult> }>;
}

/** `O`: the options toOptions builds, which the command's module takes; `F` its flags, `A` its arguments. */
export interface CommandSpec<O = unknown, F extends Flags = Flags, A extends Arguments = Arguments> {
  name: string;
  description: string;
  arguments?: A;
  flags: F;
  /** 1–3, shown in --help and the man page. */
  examples: Example[];
  /** Name of the command in results and errors (`credentials set`); default: `name`. */
  resultName?(input: CommandInput<F, A>): string;
  /**
   * SIGINT/SIGTERM stop the run at its next safe point with INTERRUPTED (src/cli/stop-signals.ts):
   * the boundary passes the run a `signal` option. Without it the process's defaults, or the
   * command's own handling (watch, emulator), apply.
   */
  stopsOnSignal?: true;
  run: CommandRun<O, F, A>;
}

interface DefinedCommand<O, F extends Flags, A extends Arguments> extends CommandSpec<O, F, A> {
  run: DefinedRun<O, F, A>;
}

/**
 * One typed definition of a command: tsc infers its flags' and arguments' types from their definitions,
 * its options type from toOptions, and checks that the module loaded takes those options.
 */
export function defineCommand<O, F extends Flags, A extends Arguments = Record<never, never>>(
  spec: DefinedCommand<O, F, A>,
): CommandSpec<O, F, A> {
  return spec;
}

export interface ProgramSpec {
  name: string;
  description: string;
  // biome-ignore lint/suspicious/noExplicitAny: the table holds commands of every options type; each was checked by defineCommand.
  commands: CommandSpec<any, Flags, Arguments>[];
}
