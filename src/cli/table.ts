import type { CompletionOptions } from '../commands/completion.js';
import { rollout, watch } from './cluster-commands.js';
import { rollback, status } from './inspection-commands.js';
import { rotateIdentity, rotateParIdentity } from './rotation-commands.js';
import { choiceArgument, defineCommand, type ProgramSpec } from './spec.js';
import { credentials, emulator } from './tool-commands.js';

// The one command table: commander's program (src/cli/program.ts), the man page
// (src/cli/docs/man-page.ts) and the shell completion (src/cli/docs/completion.ts) all read it.

const completion = defineCommand({
  name: 'completion',
  description: 'print a shell completion script (bash, zsh or fish) for every command and flag',
  arguments: {
    shell: choiceArgument(
      '<shell>',
      'bash | zsh | fish: the script; contexts | namespaces: the names the scripts complete --context and -n with (from the kubeconfig)',
      ['bash', 'zsh', 'fish', 'contexts', 'namespaces'],
    ),
  },
  flags: {},
  examples: [
    { what: 'Complete commands and flags in bash', command: 'source <(par-identity completion bash)' },
    { what: 'Install for fish', command: 'par-identity completion fish > ~/.config/fish/completions/par-identity.fish' },
  ],
  run: {
    load: () => import('../commands/completion.js'),
    // The table renders its own completion: the command module only prints it.
    toOptions: (v): CompletionOptions => ({
      shell: v.shell,
      script: async (shell: string) => (await import('./docs/completion.js')).renderCompletion(PROGRAM, shell),
    }),
  },
});

const version = defineCommand({
  name: 'version',
  description: 'print the version, the commit it was built from, the Node.js, the platform, and whether this is the single executable',
  flags: {},
  examples: [{ what: 'What to paste into a bug report', command: 'par-identity version' }],
  run: {
    load: () => import('../commands/version.js'),
    toOptions: (): Record<string, never> => ({}),
  },
});

export const PROGRAM: ProgramSpec = {
  name: 'par-identity',
  description: 'Rotate the identity (ECDSA P-256 key + runner URN) of a Datadog Private Action Runner, safely.',
  commands: [rotateIdentity, rotateParIdentity, status, rollback, credentials, rollout, completion, emulator, watch, version],
};
