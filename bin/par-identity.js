#!/usr/bin/env node
// The launcher runs on whatever `node` is first on PATH. It checks the version before anything an old
// Node lacks is imported (a static import of a missing export fails at link time, before any line
// runs), so this file has no static import and uses only syntax every Node since 14 parses.
// NODE_UNSUPPORTED_EXIT is the exit status of ERROR_CODES.NODE_UNSUPPORTED (`unavailable`); a test
// checks the two agree.
const NODE_UNSUPPORTED_EXIT = 13;
const NEEDED_MAJOR = 24;
if (Number(process.versions.node.split('.')[0]) < NEEDED_MAJOR) {
  const message = `par-identity needs Node.js ${NEEDED_MAJOR} or newer; this is Node.js ${process.version}. Nothing was changed.`;
  const hint = `Put Node.js ${NEEDED_MAJOR}+ first on PATH, or use the single executable par-identity-linux-x64, which carries its own Node (built by npm run build:sea in a checkout).`;
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify({ schemaVersion: 1, status: 'error', code: 'NODE_UNSUPPORTED', exitCode: NODE_UNSUPPORTED_EXIT, message, hint })}\n`);
  }
  process.stderr.write(`error[NODE_UNSUPPORTED]: ${message} ${hint}\n`);
  process.exit(NODE_UNSUPPORTED_EXIT);
}

// A pure help request (`--help`, `-h`, `help`, `<command> --help`, `<command> -h`, `help <command>`) or
// `--version`/`-V`, and nothing else on the line, is answered from dist/help.js without importing the
// bundle: building commander's program and loading the product's code is most of a `--help` (issue 25:
// at most 1.3x a bare `node -e 0`; docs/architecture.md, "Start-up and memory"). The build renders
// those texts with the bundle's own commander program from the command table, so they are its output,
// not a copy. Anything else, an extra flag or an unknown command included, takes the full path, which
// says what it always said. commander wraps help to the terminal's width when stdout is a terminal (80
// columns otherwise): each text is kept with the widths it is printed at, and a terminal of another
// width takes the full path too. PAR_IDENTITY_NO_FAST_HELP=1 always takes it (the tests compare the two).
const HELP_FLAGS = ['--help', '-h'];
/** { help: command } for a help request ('' the program's), { version: true } for --version / -V, else undefined. */
function fastRequest(args) {
  if (args.length === 1 && (HELP_FLAGS.includes(args[0]) || args[0] === 'help')) return { help: '' };
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) return { version: true };
  if (args.length === 2 && HELP_FLAGS.includes(args[1])) return { help: args[0] };
  if (args.length === 2 && args[0] === 'help') return { help: args[1] };
  return undefined;
}
/** The stored text for the request at the width commander would wrap to, or undefined. */
async function storedText(request) {
  const { HELP, VERSION } = await import('../dist/help.js');
  if (request.version) return VERSION;
  if (!Object.hasOwn(HELP, request.help)) return undefined;
  // commander: process.stdout.isTTY ? process.stdout.columns : undefined, then 80. isatty() is the same
  // test without creating process.stdout (for a pipe, a stream costing about a tenth of a bare node's start).
  const width = (process.getBuiltinModule('node:tty').isatty(1) ? process.stdout.columns : undefined) ?? 80;
  const variant = HELP[request.help].find(([first, last]) => first <= width && width <= last);
  return variant?.[2];
}
/** Writes all of `text` to fd 1; whatever a direct write cannot take (a full non-blocking pipe, EPIPE) goes through process.stdout as commander's would. */
function writeOut(text) {
  const bytes = Buffer.from(text);
  let done = 0;
  try {
    while (done < bytes.length) done += process.getBuiltinModule('node:fs').writeSync(1, bytes, done);
  } catch {
    process.stdout.write(bytes.subarray(done));
  }
}
// `watch` idles for days, and V8's optimising compilers cost it memory it never gives back: the first
// optimising compilation (Maglev, which node's own path handling triggers while it loads this file,
// before any line here runs) maps about 2.5 MiB of compiler code of the node binary, and kept an idle
// watch above its 60 MiB goal (issue 25). Only flags given at start-up keep the compilers out, so
// `watch` replaces this process with a node started with them (process.execve: same pid, stdio and
// environment; nothing of the product loaded yet). The flags change nothing but the compilers: where
// execve is missing (Windows) or fails, watch runs here, and src/watch/steady-memory.ts turns them off
// for every later compilation. A test holds WATCH_V8_FLAGS equal to its COMPILERS_OFF_FLAGS.
// docs/architecture.md, "Start-up and memory".
const WATCH_V8_FLAGS = ['--no-maglev', '--no-turbofan'];
function restartWatchWithoutCompilers() {
  const args = process.argv.slice(2);
  const end = args.indexOf('--');
  // The global flags take no value: the command is the first word that is not a flag (commandWord).
  const command = (end < 0 ? args : args.slice(0, end)).find((word) => !word.startsWith('-'));
  if (command !== 'watch' || typeof process.execve !== 'function' || process.execArgv.includes(WATCH_V8_FLAGS[0])) return;
  try {
    process.execve(process.execPath, [process.execPath, ...WATCH_V8_FLAGS, ...process.execArgv, process.argv[1], ...args]);
  } catch {
    // not replaced: watch runs in this process, its compilers turned off a little later
  }
}

const request = process.env.PAR_IDENTITY_NO_FAST_HELP ? undefined : fastRequest(process.argv.slice(2));
const stored = request ? await storedText(request) : undefined;
if (stored !== undefined) writeOut(stored);
else await runBundle();

// Node's on-disk V8 code cache for the bundle: later runs skip most of the parsing and compiling of the
// modules they load (about a fifth of the start-up of a Kubernetes command, and less memory). Kept in the
// user's own cache directory, not the shared temp dir; any failure (read-only home) only turns it off,
// as does NODE_DISABLE_COMPILE_CACHE=1. The bundle is imported afterwards so that it is cached too.
// getBuiltinModule, not import: no ES module wrapper of each built-in is built (docs/architecture.md).
async function runBundle() {
  restartWatchWithoutCompilers();
  const { enableCompileCache } = process.getBuiltinModule('node:module');
  try {
    const dir = privateCacheDir();
    if (dir) enableCompileCache(dir);
  } catch {
    // no cache: same behaviour, slower start
  }
  const { main } = await import('../dist/par-identity.js');
  await main();
}

// The cache holds V8 code this process runs: in a directory another user could write (a HOME of /tmp,
// an XDG_CACHE_HOME or ~/.cache of another user, as under sudo), a planted entry would run as root. So
// it is used only when each directory of the path from the cache base down is a real directory of this
// user that nobody else may write, and the base sits in a directory that others may write only when it
// is sticky (docs/security.md §2); otherwise it stays off.
function privateCacheDir() {
  const { lstatSync, mkdirSync, statSync } = process.getBuiltinModule('node:fs');
  const { homedir } = process.getBuiltinModule('node:os');
  const { dirname, join } = process.getBuiltinModule('node:path');
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  const parent = statSync(dirname(base));
  if (parent.mode & 0o002 && !(parent.mode & 0o1000)) return undefined;
  const dirs = [base, join(base, 'par-identity'), join(base, 'par-identity', 'node-compile-cache')];
  for (const dir of dirs) {
    let stats = lstatSync(dir, { throwIfNoEntry: false });
    if (!stats) {
      mkdirSync(dir, { mode: 0o700 });
      stats = lstatSync(dir);
    }
    if (!stats.isDirectory() || stats.uid !== process.geteuid?.() || stats.mode & 0o022) return undefined;
  }
  return dirs.at(-1);
}
