import { Argument, type Command, Option } from 'commander';
import { InterruptedError, UsageError, usageHint } from '../errors.js';
import type { Io } from '../io.js';
import { renderError, renderResult } from '../output.js';
import { parseDurationFlag } from '../time/index.js';
import { VERSION } from '../version.js';
import { shownDefault } from './duration-flags.js';
import { type Flag, type Flags, helpLines, valuesOf } from './flag.js';
import { RedactingCommand } from './redacting-command.js';
import { GLOBAL_FLAGS, outputOptions } from './shared-flags.js';
import type { Arguments, CommandInput, CommandSpec, ProgramSpec } from './spec.js';
import { stopOnSignals } from './stop-signals.js';
import { choiceParser, rejectedValue } from './value-parsers.js';

// commander's program, built from the command table. Commands are imported when chosen, so
// `--help` never loads the Kubernetes client, nor the YAML parsers.

const collect = (value: string, previous: string[]) => [...previous, value];

/** commander's options for one flag (a tristate: `--surge` and `--no-surge`, on one attribute). */
function options(flag: Flag, flags: Flags): Option[] {
  const [first, ...rest] = helpLines(flag).map((line) => new Option(line.syntax, line.help));
  const opt = first!;
  // choices() for the help line, then our parser, whose error does not quote the value.
  if (flag.choices) opt.choices(flag.choices).argParser(choiceParser(flag.long, flag.choices));
  const duration = flag.duration;
  if (flag.parse) opt.argParser(flag.parse);
  else if (duration) opt.argParser((value: string) => parseDurationFlag(value, duration, rejectedValue(duration.flag, value)));
  if (flag.kind === 'texts') opt.argParser(collect).default([]);
  else if (flag.default !== undefined) opt.default(flag.default, flag.duration ? shownDefault(flag) : undefined);
  const other = flag.conflicts === undefined ? undefined : flags[flag.conflicts];
  if (other) opt.conflicts(new Option(other.long).attributeName());
  return [opt, ...rest];
}

/** The attribute commander keeps a flag's value under: the long name in camelCase, without `no-`. */
const attributeOf = (flag: Flag) => new Option(flag.long).attributeName();

function examplesText(spec: CommandSpec): string {
  if (spec.examples.length === 0) return '';
  return `\nExamples:\n${spec.examples.map((e) => `  # ${e.what}\n  $ ${e.command}`).join('\n')}\n`;
}

/** The one error boundary: a result is rendered, an error becomes output plus process.exitCode. */
async function runCommand(spec: CommandSpec, input: CommandInput<Flags, Arguments>, io: Io): Promise<void> {
  const out = outputOptions(input, io);
  const command = spec.resultName?.(input) ?? spec.name;
  // A second signal renders its own error and exits at once; the first stops the run (stop-signals.ts).
  const stop = spec.stopsOnSignal ? stopOnSignals((err) => renderError(err, io, { ...out, command })) : undefined;
  try {
    const given: unknown = spec.run.toOptions(input, io);
    const options = stop && typeof given === 'object' ? { ...given, signal: stop.signal } : given;
    const result = await (await spec.run.load(input)).run(options, io);
    renderResult(result, io, out);
    if (result.exitCode) process.exitCode = result.exitCode;
  } catch (err) {
    const signal = stop?.received();
    // The exit status follows the signal that stopped the run (SIGTERM: 143), whichever step noticed it.
    const shown = signal && err instanceof InterruptedError ? err.bySignal(signal) : err;
    process.exitCode = renderError(withCommandHint(shown, spec.name), io, { ...out, command });
  } finally {
    stop?.close();
  }
}

/** A UsageError without a hint of its own gets one naming the command that was run. */
export function withCommandHint(err: unknown, command: string | undefined): unknown {
  return err instanceof UsageError && err.generic ? new UsageError(err.message, usageHint(command)) : err;
}

/** -q / -v: how much progress stderr gets (the Io carries it to every Reporter of the run). */
function levelOf(globals: { quiet: boolean; verbose: boolean }): Io['level'] {
  if (globals.quiet) return 'quiet';
  return globals.verbose ? 'verbose' : undefined;
}

function addCommand(program: Command, spec: CommandSpec, io: Io): void {
  const cmd = program.command(spec.name).description(spec.description);
  const args = Object.entries(spec.arguments ?? {});
  for (const [key, arg] of args) {
    const argument = new Argument(arg.name, arg.help);
    if (arg.choices) argument.argParser(choiceParser(`<${key}>`, arg.choices));
    cmd.addArgument(argument);
  }
  for (const flag of Object.values(spec.flags)) for (const opt of options(flag, spec.flags)) cmd.addOption(opt);
  cmd.addHelpText('after', examplesText(spec));
  cmd.action(async (...given: unknown[]) => {
    const parsed = cmd.opts();
    // --json, --no-color, -q and -v are the program's: commander takes them before or after the command.
    const globals = valuesOf(GLOBAL_FLAGS, (_option, flag) => program.getOptionValue(attributeOf(flag)));
    const flags = valuesOf(spec.flags, (_option, flag) => parsed[attributeOf(flag)]);
    const positional: Record<string, unknown> = Object.fromEntries(args.map(([key], i) => [key, given[i]]));
    // Which flags were typed (not defaulted): -c given or not decides whether a config path is read (src/session).
    const givenOptions = Object.entries(spec.flags)
      .filter(([, flag]) => cmd.getOptionValueSource(attributeOf(flag)) === 'cli')
      .map(([option]) => option);
    const json = flags.json === true || globals.json;
    const color = flags.color !== false && globals.color;
    const input: CommandInput<Flags, Arguments> = { ...flags, ...positional, json, color, givenOptions };
    const level = levelOf(globals);
    await runCommand(spec, input, level ? { ...io, level } : io);
  });
}

/**
 * `helpWidth`: the width help is wrapped to, for the help texts rendered at build time
 * (src/cli/docs/help-texts.ts); without it commander's own: the terminal's columns, else 80.
 */
export function buildProgram(table: ProgramSpec, io: Io, helpWidth?: () => number): Command {
  const program = new RedactingCommand(table.name)
    .description(table.description)
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
      ...(helpWidth === undefined ? {} : { getOutHelpWidth: helpWidth }),
    })
    .exitOverride();
  for (const flag of Object.values(GLOBAL_FLAGS)) for (const opt of options(flag, GLOBAL_FLAGS)) program.addOption(opt);
  for (const spec of table.commands) addCommand(program, spec, io);
  return program;
}
