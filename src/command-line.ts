import { programName } from './single-executable.js';

// Commands printed for the operator to copy (undo:, next:) must act on the very target this run
// used, so they carry every selecting flag, quoted for a POSIX shell.

const SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

function shellQuote(word: string): string {
  return SAFE.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export function commandLine(words: string[]): string {
  return words.map(shellQuote).join(' ');
}

interface SelectorInput {
  cfgPath: string;
  extraCfg: string[];
  defaultCfgPath: string;
}

/** -c and -E as given (omitting -c when it is the default). */
export function configSelector(input: SelectorInput): string[] {
  return [...(input.cfgPath !== input.defaultCfgPath ? ['-c', input.cfgPath] : []), ...input.extraCfg.flatMap((file) => ['-E', file])];
}

interface KubeSelectorInput {
  kubeconfig?: string;
  context?: string;
}

export function kubeSelector(input: KubeSelectorInput): string[] {
  return [...(input.kubeconfig ? ['--kubeconfig', input.kubeconfig] : []), ...(input.context ? ['--context', input.context] : [])];
}

/**
 * The undo of a rotation: `rollback`, or, when the run created the target (nothing to roll back to,
 * `rollback` would fail NO_BACKUP), deleting what it created (docs/protocol.md §6c).
 */
export function undoCommandOf(target: { selector: string[]; undoCreation?(): string }, created: boolean): string {
  return created && target.undoCreation ? target.undoCreation() : rollbackCommandOf(target);
}

/** The `undo:` command of a run, and the roll-forward after a rollback: `rollback` on the very same target. */
export function rollbackCommandOf(target: { selector: string[] }): string {
  return commandLine([programName(), 'rollback', ...target.selector]);
}
