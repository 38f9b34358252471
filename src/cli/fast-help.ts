// A pure help request (nothing at all, `--help`, `-h`, `help`, `<command> --help`, `<command> -h`, `help <command>`) or
// `--version`/`-V`, and nothing else on the line, is answered from the texts stored in dist/help.js
// without loading the product: building commander's program and evaluating the product's modules is
// most of a `--help` (issue 25: at most 1.3x a bare `node -e 0`; docs/architecture.md, "Start-up and
// memory"). Both launchers use this one module: bin/par-identity.js imports dist/help.js (this module
// bundled with the texts) before it imports the bundle, and the single executable's entry calls it
// before it evaluates the CLI's modules. Anything else, an extra flag or an unknown command included,
// takes the full path, which says what it always said. commander wraps help to the terminal's width
// when stdout is a terminal (80 columns otherwise): each text is kept with the widths it is printed at,
// and a terminal of another width takes the full path too. PAR_IDENTITY_NO_FAST_HELP=1 always takes it
// (the tests compare the two). Only node built-ins, reached through process.getBuiltinModule: this
// module is evaluated before anything else of the product.

/** [first width, last width, text]: the text commander prints at every width of the range. */
export type HelpVariant = [number, number, string];

interface StoredTexts {
  /** What `--version` prints. */
  VERSION: string;
  /** Command name ('' the program's) → its variants. */
  HELP: Record<string, HelpVariant[]>;
}

type Request = { help: string } | { version: true };

const HELP_FLAGS = ['--help', '-h'];

/** { help: command } for a help request ('' the program's), { version: true } for --version / -V, else undefined. */
function fastRequest(args: readonly string[]): Request | undefined {
  const [first, second] = args;
  // A bare `par-identity` is a request for the program's help (exit 0), as `gh` and `kubectl` answer it.
  if (args.length === 0) return { help: '' };
  if (args.length === 1 && first !== undefined && (HELP_FLAGS.includes(first) || first === 'help')) return { help: '' };
  if (args.length === 1 && (first === '--version' || first === '-V')) return { version: true };
  if (args.length === 2 && first !== undefined && second !== undefined && HELP_FLAGS.includes(second)) return { help: first };
  if (args.length === 2 && first === 'help' && second !== undefined) return { help: second };
  return undefined;
}

/** The width commander wraps help to: the terminal's columns when stdout is one, else undefined (then 80). */
function helpWidth(): number {
  // isatty() is commander's test without creating process.stdout (for a pipe, a stream costing about a
  // tenth of a bare node's start).
  return (process.getBuiltinModule('node:tty').isatty(1) ? process.stdout.columns : undefined) ?? 80;
}

/** The stored answer to `args` when it is a pure help or version request printed at a stored width, else undefined. */
export function storedAnswer(args: readonly string[], texts: StoredTexts, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.PAR_IDENTITY_NO_FAST_HELP) return undefined;
  const request = fastRequest(args);
  if (!request) return undefined;
  if ('version' in request) return texts.VERSION;
  if (!Object.hasOwn(texts.HELP, request.help)) return undefined;
  const width = helpWidth();
  return texts.HELP[request.help]?.find(([first, last]) => first <= width && width <= last)?.[2];
}

/** Writes all of `text` to fd 1; whatever a direct write cannot take (a full non-blocking pipe, EPIPE) goes through process.stdout as commander's would. */
export function writeOut(text: string): void {
  const bytes = Buffer.from(text);
  let done = 0;
  try {
    while (done < bytes.length) done += process.getBuiltinModule('node:fs').writeSync(1, bytes, done);
  } catch {
    process.stdout.write(bytes.subarray(done));
  }
}
