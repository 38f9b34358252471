import { type Flag, flagNames } from '../flag.js';
import type { ProgramSpec } from '../spec.js';

// Completion scripts generated from the command table that also builds --help and the man page. What a
// flag's value completes to is part of its definition (Flag.completes): files, `--context` the
// kubeconfig's contexts, `-n`/`--namespace` the namespaces its contexts name (both
// listed by `par-identity completion contexts|namespaces`, which reads the kubeconfig as kubectl does,
// `--kubeconfig` of the line being completed included), any other value nothing (never the flags). The
// first argument of a command with choices (`credentials set|show|delete`, `completion bash|…`) completes
// to those choices.

type ValueKind = 'file' | 'context' | 'namespace' | 'other';

interface Spec {
  name: string;
  description: string;
  /** The flags --help lists, help flag included. */
  flags: string[];
  /** Each flag name that takes a value, with what its value completes to. */
  values: Map<string, ValueKind>;
  /** The choices of the first argument, if it has any. */
  choices: readonly string[];
}

/** What the flag's value completes to; undefined for a flag that takes none (`[value]` is optional: none either). */
function kindOf(flag: Flag): ValueKind | undefined {
  if (flag.value === undefined || flag.kind === 'text-or-true') return undefined;
  return flag.completes ?? 'other';
}

function specs(program: ProgramSpec): Spec[] {
  return program.commands.map((c) => {
    const values = new Map<string, ValueKind>();
    const flags = Object.values(c.flags);
    for (const flag of flags) {
      const kind = kindOf(flag);
      if (kind) for (const name of flagNames(flag)) values.set(name, kind);
    }
    return {
      name: c.name,
      description: c.description,
      flags: [...flags.flatMap(flagNames), '-h', '--help'],
      values,
      choices: Object.values(c.arguments ?? {})[0]?.choices ?? [],
    };
  });
}

const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

const namesOf = (s: Spec, kind: ValueKind) => [...s.values].filter(([, k]) => k === kind).map(([name]) => name);

function bash(all: Spec[]): string {
  const cases = all
    .map(
      (s) =>
        `    ${s.name}) opts=${quote(s.flags.join(' '))}; args=${quote(s.choices.join(' '))}; ` +
        `files=${quote(` ${namesOf(s, 'file').join(' ')} `)}; values=${quote(` ${namesOf(s, 'other').join(' ')} `)} ;;`,
    )
    .join('\n');
  return `# bash completion for par-identity; load with: source <(par-identity completion bash)
_par_identity_names() {
  # The kubeconfig of the line being completed: its --kubeconfig, else KUBECONFIG / ~/.kube/config.
  local i kubeconfig=
  for (( i = 2; i < COMP_CWORD; i++ )); do
    [ "\${COMP_WORDS[i]}" = --kubeconfig ] && kubeconfig=\${COMP_WORDS[i+1]}
  done
  if [ -n "$kubeconfig" ]; then KUBECONFIG=$kubeconfig "\${COMP_WORDS[0]}" completion "$1" 2>/dev/null; else "\${COMP_WORDS[0]}" completion "$1" 2>/dev/null; fi
}
_par_identity() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} cmd=\${COMP_WORDS[1]} opts= args= files= values=
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W ${quote(`${all.map((s) => s.name).join(' ')} --help --version`)} -- "$cur") )
    return
  fi
  case "$cmd" in
${cases}
  esac
  case "$files" in *" $prev "*) COMPREPLY=( $(compgen -f -- "$cur") ); return ;; esac
  case "$prev" in
    --context) COMPREPLY=( $(compgen -W "$(_par_identity_names contexts)" -- "$cur") ); return ;;
    -n|--namespace) COMPREPLY=( $(compgen -W "$(_par_identity_names namespaces)" -- "$cur") ); return ;;
  esac
  case "$values" in *" $prev "*) COMPREPLY=(); return ;; esac
  if [ "$COMP_CWORD" -eq 2 ] && [ -n "$args" ] && [[ "$cur" != -* ]]; then
    COMPREPLY=( $(compgen -W "$args" -- "$cur") )
    return
  fi
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  if [ \${#COMPREPLY[@]} -eq 0 ] && [[ "$cur" != -* ]]; then COMPREPLY=( $(compgen -f -- "$cur") ); fi
}
complete -F _par_identity par-identity
`;
}

function zshFlag(s: Spec, flag: string): string {
  const kind = s.values.get(flag);
  if (kind === 'file') return quote(`${flag}[]:file:_files`);
  if (kind === 'context') return `${quote(`${flag}[]:context:`)}'($(par-identity completion contexts 2>/dev/null))'`;
  if (kind === 'namespace') return `${quote(`${flag}[]:namespace:`)}'($(par-identity completion namespaces 2>/dev/null))'`;
  if (kind === 'other') return quote(`${flag}[]:value: `);
  return quote(`${flag}[]`);
}

function zsh(all: Spec[]): string {
  const commands = all.map((s) => `    ${quote(`${s.name}:${s.description.replace(/:/g, '\\:')}`)}`).join('\n');
  const cases = all
    .map(
      (s) =>
        `    ${s.name}) _arguments ${s.flags.map((f) => zshFlag(s, f)).join(' ')} ` +
        `${s.choices.length ? quote(`1:argument:(${s.choices.join(' ')})`) : "'*:file:_files'"} ;;`,
    )
    .join('\n');
  return `#compdef par-identity
# zsh completion for par-identity; load with: source <(par-identity completion zsh)
_par_identity() {
  local -a commands
  commands=(
${commands}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  case $words[2] in
${cases}
  esac
}
compdef _par_identity par-identity
`;
}

function fish(all: Spec[]): string {
  const lines = ['# fish completion for par-identity; load with: par-identity completion fish | source', 'complete -c par-identity -f'];
  for (const s of all) {
    const when = `-n '__fish_seen_subcommand_from ${s.name}'`;
    lines.push(`complete -c par-identity -n __fish_use_subcommand -a ${s.name} -d ${quote(s.description)}`);
    if (s.choices.length) lines.push(`complete -c par-identity ${when} -a ${quote(s.choices.join(' '))}`);
    for (const flag of s.flags) {
      const opt = flag.startsWith('--') ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`;
      const kind = s.values.get(flag);
      const value =
        kind === 'file'
          ? ' -r -F'
          : kind === 'context'
            ? " -x -a '(par-identity completion contexts 2>/dev/null)'"
            : kind === 'namespace'
              ? " -x -a '(par-identity completion namespaces 2>/dev/null)'"
              : kind === 'other'
                ? ' -x'
                : '';
      lines.push(`complete -c par-identity ${when} ${opt}${value}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export function renderCompletion(program: ProgramSpec, shell: string): string | undefined {
  const all = specs(program);
  if (shell === 'bash') return bash(all);
  if (shell === 'zsh') return zsh(all);
  if (shell === 'fish') return fish(all);
  return undefined;
}
