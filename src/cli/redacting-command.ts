import { Command } from 'commander';

// commander quotes an unknown option as typed, value included: `--api-key=SECRET` would print the
// key. Only the option's name is quoted here (`--api-key`, `-k`), for the program and every command.

/** `--name=value` → `--name`; `-kVALUE` → `-k`. */
function optionNameOf(arg: string): string {
  if (arg.startsWith('--')) return arg.split('=', 1)[0]!;
  return arg.slice(0, 2);
}

export class RedactingCommand extends Command {
  override createCommand(name?: string): RedactingCommand {
    return new RedactingCommand(name);
  }

  /** Overrides commander's (undeclared in its typings) unknownOption; the suggestion still works on the name. */
  unknownOption(flag: string): void {
    (Command.prototype as unknown as { unknownOption(flag: string): void }).unknownOption.call(this, optionNameOf(flag));
  }
}
