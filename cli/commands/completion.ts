/** ravenctl completion bash|zsh|fish: a completion script generated from the command tree. */
import { Argument, type Command } from 'commander';
import { action } from '../context.js';
import { addHelp } from '../help.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

interface Node {
  path: string[];
  subcommands: string[];
  options: string[];
}

function collectTree(cmd: Command, path: string[] = [], out: Node[] = []): Node[] {
  const options = cmd.options.flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)));
  out.push({ path, subcommands: cmd.commands.map((c) => c.name()), options: [...options, '--help'] });
  for (const sub of cmd.commands) collectTree(sub, [...path, sub.name()], out);
  return out;
}

export function completionScript(shell: Shell, program: Command): string {
  const nodes = collectTree(program);
  const globals = nodes[0]?.options ?? [];
  const words = (n: Node) => [...n.subcommands, ...n.options, ...(n.path.length > 0 ? globals : [])].join(' ');
  if (shell === 'bash' || shell === 'zsh') {
    const cases = nodes.map((n) => `    "${n.path.join(' ')}") opts="${words(n)}" ;;`).join('\n');
    const body = `_ravenctl_complete() {
  local cur path="" word i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    case "$word" in -*) continue ;; esac
    case " $(_ravenctl_children "$path") " in *" $word "*) path="\${path:+$path }$word" ;; esac
  done
  local opts
  case "$path" in
${cases}
    *) opts="" ;;
  esac
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
}
_ravenctl_children() {
  case "$1" in
${nodes.map((n) => `    "${n.path.join(' ')}") echo "${n.subcommands.join(' ')}" ;;`).join('\n')}
  esac
}
`;
    if (shell === 'bash') return `# ravenctl bash completion: eval "$(ravenctl completion bash)"\n${body}complete -F _ravenctl_complete ravenctl\n`;
    return `# ravenctl zsh completion: eval "$(ravenctl completion zsh)"\nautoload -U +X bashcompinit && bashcompinit\n${body}complete -F _ravenctl_complete ravenctl\n`;
  }
  // fish: one line per (path, candidate); a path is matched with __fish_seen_subcommand_from chains.
  const lines = ['# ravenctl fish completion: ravenctl completion fish | source', 'complete -c ravenctl -f'];
  for (const n of nodes) {
    const condition =
      n.path.length === 0
        ? '__fish_use_subcommand'
        : n.path.map((w) => `__fish_seen_subcommand_from ${w}`).join('; and ');
    for (const sub of n.subcommands) lines.push(`complete -c ravenctl -n '${condition}' -a ${sub}`);
    for (const opt of n.options.filter((o) => o.startsWith('--'))) {
      lines.push(`complete -c ravenctl -n '${condition}' -l ${opt.slice(2)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** `tree` comes from program.ts (a leaf never imports it: program.ts loads the leaves). */
export function register(cmd: Command, tree: { loadAllLeaves(): Promise<void> }): void {
  cmd.addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(SHELLS)).action(
    action<Record<string, never>>(async (_ctx, _opts, shell) => {
      let root: Command = cmd;
      while (root.parent) root = root.parent;
      await tree.loadAllLeaves();
      // A script, not data: printed as is even when stdout is not a terminal.
      process.stdout.write(completionScript(shell as Shell, root));
    }),
  );
  addHelp(cmd, {
    examples: [
      'ravenctl completion bash > ~/.local/share/bash-completion/completions/ravenctl',
      'eval "$(ravenctl completion zsh)"     # in ~/.zshrc',
      'ravenctl completion fish | source',
    ],
    network: false,
  });
}
