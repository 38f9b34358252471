import { UsageError } from '../errors.js';
import type { Io } from '../io.js';
import type { ProgramSpec } from '../cli/spec.js';
import type { CommandResult } from '../output.js';

export interface CompletionOptions {
  shell: string;
  program: ProgramSpec;
}

/** Prints the script itself on stdout (no summary wrapping), so `source <(...)` works. */
export async function run(options: CompletionOptions, io: Io): Promise<CommandResult> {
  const { renderCompletion } = await import('../docs/completion.js');
  const script = renderCompletion(options.program, options.shell);
  if (!script) throw new UsageError(`no completion for shell ${JSON.stringify(options.shell)}`, 'Use one of: bash, zsh, fish.');
  io.stdout(script);
  return { command: 'completion', data: { shell: options.shell }, summary: [] };
}
