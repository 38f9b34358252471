import { commandWord, stopOptimisingCompilers } from './steady-memory.js';

// The first module the single executable evaluates (scripts/build-sea.mjs imports it before the CLI).
// For `watch`, V8's optimising compilers are turned off here, before the rest of the script runs: its
// module set-up would otherwise tier a few functions up, and the first such compilation maps about
// 2 MiB of compiler code that an idle watch keeps for days (docs/architecture.md, "Start-up and
// memory"). The npm launcher starts `watch` with the same flags instead (bin/par-identity.js): there
// node's own loading of the launcher compiles first.
if (commandWord(process.argv.slice(2)) === 'watch') stopOptimisingCompilers();
