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

// Node's on-disk V8 code cache for the bundle: later runs skip most of the parsing and compiling of the
// modules they load (about a fifth of the start-up of a Kubernetes command, and less memory). Kept in the
// user's own cache directory, not the shared temp dir; any failure (read-only home) only turns it off,
// as does NODE_DISABLE_COMPILE_CACHE=1. The bundle is imported afterwards so that it is cached too.
// getBuiltinModule, not import: no ES module wrapper of each built-in is built (docs/architecture.md).
const { enableCompileCache } = process.getBuiltinModule('node:module');
const { homedir } = process.getBuiltinModule('node:os');
const { join } = process.getBuiltinModule('node:path');
try {
  enableCompileCache(join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'par-identity', 'node-compile-cache'));
} catch {
  // no cache: same behaviour, slower start
}
const { main } = await import('../dist/par-identity.js');
await main();
