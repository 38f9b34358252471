import { Argument, type Command, Option } from 'commander';
import type { Io } from '../io.js';
import { renderError, renderResult } from '../output.js';
import { VERSION } from '../version.js';
import { RedactingCommand } from './redacting-command.js';
import { GLOBAL_FLAGS, outputOptions } from './shared-flags.js';
import { InterruptedError, UsageError, usageHint } from '../errors.js';
import { stopOnSignals } from './stop-signals.js';
import { parseDurationFlag } from '../time/index.js';
import { shownDefault } from './duration-flags.js';
import { rejectedValue } from './value-parsers.js';
import { argumentKey, type CommandSpec, type FlagSpec, optionOf, type ProgramSpec, type Raw } from './spec.js';
import { choiceParser } from './value-parsers.js';

// commander's program, built from the command table. Commands are imported when chosen, so
// `--help` never loads the Kubernetes client, nor the YAML parsers.

const collect = (value: string, previous: string[]) => [...previous, value];

function option(flag: FlagSpec): Option {
  const opt = new Option(flag.flags, flag.help);
  // choices() for the help line, then our parser, whose error does not quote the value.
  if (flag.choices) opt.choices(flag.choices).argParser(choiceParser(opt.long ?? flag.flags, flag.choices));
  const duration = flag.duration;
  if (flag.parse) opt.argParser(flag.parse);
  else if (duration) opt.argParser((value: string) => parseDurationFlag(value, duration, rejectedValue(duration.flag, value)));
  if (flag.repeatable) opt.argParser(collect).default(flag.default ?? []);
  if (flag.default !== undefined) opt.default(flag.default, flag.duration ? shownDefault(flag) : undefined);
  if (flag.conflicts) opt.conflicts(flag.conflicts);
  return opt;
}

function examplesText(spec: CommandSpec): string {
  if (spec.examples.length === 0) return '';
  return `\nExamples:\n${spec.examples.map((e) => `  # ${e.what}\n  $ ${e.command}`).join('\n')}\n`;
}

/** The one error boundary: a result is rendered, an error becomes output plus process.exitCode. */
async function runCommand(spec: CommandSpec, raw: Raw, io: Io): Promise<void> {
  const out = outputOptions(raw, io);
  const command = spec.resultName?.(raw) ?? spec.name;
  // A second signal renders its own error and exits at once; the first stops the run (stop-signals.ts).
  const stop = spec.stopsOnSignal ? stopOnSignals((err) => renderError(err, io, { ...out, command })) : undefined;
  try {
    const given = spec.run.toOptions(raw, io);
    const options = stop ? { ...(given as object), signal: stop.signal } : given;
    const result = await (await spec.run.load(raw)).run(options, io);
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
function levelOf(raw: Raw): Io['level'] {
  if (raw.quiet) return 'quiet';
  return raw.verbose ? 'verbose' : undefined;
}

function addCommand(program: Command, spec: CommandSpec, io: Io): void {
  const cmd = program.command(spec.name).description(spec.description);
  for (const arg of spec.arguments ?? []) {
    const argument = new Argument(arg.name, arg.help);
    if (arg.choices) argument.argParser(choiceParser(`<${argumentKey(arg)}>`, arg.choices));
    cmd.addArgument(argument);
  }
  for (const flag of spec.flags) cmd.addOption(option(flag));
  cmd.addHelpText('after', examplesText(spec));
  cmd.action(async (...args: unknown[]) => {
    const positional = Object.fromEntries((spec.arguments ?? []).map((arg, i) => [argumentKey(arg), args[i]]));
    const parsed = cmd.opts();
    // commander keys a value by its long flag; the table by the option it fills.
    const flags = Object.fromEntries(spec.flags.map((flag) => [optionOf(flag), parsed[new Option(flag.flags).attributeName()]]));
    // --json, --no-color, -q and -v are the program's: commander takes them before or after the command.
    const globals = program.opts();
    // Which flags were typed (not defaulted): -c given or not decides whether a config path is read (src/session).
    const givenOptions = spec.flags.filter((flag) => cmd.getOptionValueSource(new Option(flag.flags).attributeName()) === 'cli').map(optionOf);
    const raw: Raw = { ...flags, ...positional, givenOptions, json: Boolean(flags.json || globals.json), ...(globals.color === false ? { color: false } : {}), quiet: Boolean(globals.quiet), verbose: Boolean(globals.verbose) };
    const level = levelOf(raw);
    await runCommand(spec, raw, level ? { ...io, level } : io);
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
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s), ...(helpWidth === undefined ? {} : { getOutHelpWidth: helpWidth }) })
    .exitOverride();
  for (const flag of GLOBAL_FLAGS) program.addOption(new Option(flag.flags, flag.help));
  for (const spec of table.commands) addCommand(program, spec, io);
  return program;
}
