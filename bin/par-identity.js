#!/usr/bin/env node
// The launcher runs on whatever `node` is first on PATH. It checks the version before anything an old
// Node lacks is imported (a static import of a missing export fails at link time, before any line
// runs), so this file has no static import and uses only syntax every Node since 14 parses. The error,
// its exit status and its --json object come from dist/launcher-error.js (src/launcher-error.ts, built
// for any Node): exit statuses are written in src/errors.ts only.
const NEEDED_MAJOR = 24;
if (Number(process.versions.node.split('.')[0]) < NEEDED_MAJOR) {
  const { nodeUnsupported } = await import('../dist/launcher-error.js');
  const failure = nodeUnsupported(process.version, NEEDED_MAJOR, process.argv.includes('--json'));
  if (failure.stdout) process.stdout.write(failure.stdout);
  process.stderr.write(failure.stderr);
  process.exit(failure.exitCode);
}

// A pure help or version request (`--help`, `help <command>`, `<command> -h`, `--version`…, nothing else
// on the line) is answered from dist/help.js without importing the bundle: the texts commander prints,
// rendered by the build, and the rule that picks one (src/cli/fast-help.ts, which the single
// executable's entry uses too; docs/architecture.md, "Start-up and memory"). Only a line of one or two
// words holding a help or version word can be such a request, so nothing else imports help.js (nor does
// a run with PAR_IDENTITY_NO_FAST_HELP=1, which always takes the full path).
const HELP_WORDS = ['--help', '-h', 'help', '--version', '-V'];
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

const args = process.argv.slice(2);
const mayBeHelp = !process.env.PAR_IDENTITY_NO_FAST_HELP && args.length <= 2 && (args.length === 0 || args.some((word) => HELP_WORDS.includes(word)));
const helpTexts = mayBeHelp ? await import('../dist/help.js') : undefined;
const stored = helpTexts?.storedAnswer(args, helpTexts);
if (stored !== undefined) helpTexts.writeOut(stored);
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
