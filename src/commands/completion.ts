import { UsageError } from '../errors.js';
import type { Io } from '../io.js';
import { type CommandResult, resultJson } from '../output.js';

export interface CompletionOptions {
  shell: string;
  /** The script for that shell, rendered from the command table by src/cli; undefined for a shell it does not know. */
  script(shell: string): Promise<string | undefined>;
}

/** Prints the script itself on stdout (no summary wrapping), so `source <(...)` works. */
export async function run(options: CompletionOptions, io: Io): Promise<CommandResult<ReturnType<typeof resultJson<'completion', { shell: string }>>>> {
  const script = await options.script(options.shell);
  if (!script) throw new UsageError(`no completion for shell ${JSON.stringify(options.shell)}`, 'Use one of: bash, zsh, fish.');
  io.stdout(script);
  return { json: resultJson('completion', { shell: options.shell }), summary: [] };
}
