import { flagNames, type ProgramSpec } from '../spec.js';

// Completion scripts generated from the command table that also builds --help and the man page.

interface Spec {
  name: string;
  description: string;
  flags: string[];
}

function specs(program: ProgramSpec): Spec[] {
  return program.commands.map((c) => ({
    name: c.name,
    description: c.description,
    // The flags --help lists, help flag included.
    flags: [...c.flags.flatMap(flagNames), '-h', '--help'],
  }));
}

const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

function bash(all: Spec[]): string {
  const cases = all.map((s) => `    ${s.name}) opts=${quote(s.flags.join(' '))} ;;`).join('\n');
  return `# bash completion for par-identity; load with: source <(par-identity completion bash)
_par_identity() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd=\${COMP_WORDS[1]} opts
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W ${quote(`${all.map((s) => s.name).join(' ')} --help --version`)} -- "$cur") )
    return
  fi
  case "$cmd" in
${cases}
    *) opts='' ;;
  esac
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  [ \${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=( $(compgen -f -- "$cur") )
}
complete -F _par_identity par-identity
`;
}

function zsh(all: Spec[]): string {
  const commands = all.map((s) => `    ${quote(`${s.name}:${s.description.replace(/:/g, '\\:')}`)}`).join('\n');
  const cases = all.map((s) => `    ${s.name}) _arguments ${s.flags.map((f) => quote(`${f}[]`)).join(' ')} '*:file:_files' ;;`).join('\n');
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
    lines.push(`complete -c par-identity -n __fish_use_subcommand -a ${s.name} -d ${quote(s.description)}`);
    for (const flag of s.flags) {
      const opt = flag.startsWith('--') ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`;
      lines.push(`complete -c par-identity -n '__fish_seen_subcommand_from ${s.name}' ${opt}`);
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
