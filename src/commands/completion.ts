import type { CompletionOptions } from '../cli/program-commands.js';
import { UsageError } from '../errors.js';
import type { Io } from '../io.js';
import { type CommandResult, resultJson } from '../output.js';

/**
 * Prints the script itself on stdout (no summary wrapping), so `source <(...)` works. `contexts` and
 * `namespaces` print the names the scripts complete --context and -n with, one a line (the kubeconfig
 * as kubectl finds it; the scripts pass a --kubeconfig of the line as KUBECONFIG).
 */
export async function run(
  options: CompletionOptions,
  io: Io,
): Promise<CommandResult<ReturnType<typeof resultJson<'completion', { shell: string }>>>> {
  if (options.shell === 'contexts' || options.shell === 'namespaces') {
    const { kubeconfigNames } = await import('../kube/cluster-connection.js');
    const names = await kubeconfigNames(io.env);
    const list = options.shell === 'contexts' ? names.contexts : names.namespaces;
    // Names a shell will offer for typing: only those that need no quoting.
    io.stdout(
      list
        .filter((n) => /^[A-Za-z0-9._@:/-]+$/.test(n))
        .map((n) => `${n}\n`)
        .join(''),
    );
    return { json: resultJson('completion', { shell: options.shell }), summary: [] };
  }
  const script = await options.script(options.shell);
  if (!script) throw new UsageError(`no completion for shell ${JSON.stringify(options.shell)}`, 'Use one of: bash, zsh, fish.');
  io.stdout(script);
  return { json: resultJson('completion', { shell: options.shell }), summary: [] };
}
