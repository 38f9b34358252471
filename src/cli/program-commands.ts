import { type CommandInput, choiceArgument, defineCommand, type ProgramSpec } from './spec.js';

// The commands about the program itself: its shell completion and its version. As in
// rotation-commands.ts, each command's options type is what its toOptions builds (declared apart from
// the defineCommand literal, so the command module names it with `import type`). completion renders
// the table it belongs to: table.ts hands the table over as a function, so neither file imports the other.

const completionArguments = {
  shell: choiceArgument(
    '<shell>',
    'bash | zsh | fish: the script; contexts | namespaces: the names the scripts complete --context and -n with (from the kubeconfig)',
    ['bash', 'zsh', 'fish', 'contexts', 'namespaces'],
  ),
};

type CompletionInput = CommandInput<Record<never, never>, typeof completionArguments>;

/** The table renders its own completion: the command module only prints it. */
function completionOptions(v: CompletionInput, table: () => ProgramSpec) {
  return {
    shell: v.shell,
    /** The script for that shell, rendered from the command table; undefined for a shell it does not know. */
    script: async (shell: string) => (await import('./docs/completion.js')).renderCompletion(table(), shell),
  };
}

/** What src/commands/completion.ts takes: the shell asked for, and the script renderer. */
export type CompletionOptions = ReturnType<typeof completionOptions>;

/** `completion`, over the table `table()` gives (table.ts: the program it is part of). */
export function completionCommand(table: () => ProgramSpec) {
  return defineCommand({
    name: 'completion',
    description: 'print a shell completion script (bash, zsh or fish) for every command and flag',
    arguments: completionArguments,
    flags: {},
    examples: [
      { what: 'Complete commands and flags in bash', command: 'source <(par-identity completion bash)' },
      { what: 'Install for fish', command: 'par-identity completion fish > ~/.config/fish/completions/par-identity.fish' },
    ],
    run: {
      load: () => import('../commands/completion.js'),
      toOptions: (v: CompletionInput) => completionOptions(v, table),
    },
  });
}

/** version has no flags: nothing to pass. */
function versionOptions() {
  return {};
}

/** What src/commands/version.ts takes: nothing. */
export type VersionOptions = ReturnType<typeof versionOptions>;

export const version = defineCommand({
  name: 'version',
  description: 'print the version, the commit it was built from, the Node.js, the platform, and whether this is the single executable',
  flags: {},
  examples: [{ what: 'What to paste into a bug report', command: 'par-identity version' }],
  run: {
    load: () => import('../commands/version.js'),
    toOptions: versionOptions,
  },
});
