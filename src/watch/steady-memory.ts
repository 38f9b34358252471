import { setFlagsFromString } from 'node:v8';
import { releaseStartupMemory } from './startup-memory.js';

// What keeps a watch process at the memory it settled at, over days of changes, re-lists and watch
// restarts (docs/architecture.md, "Start-up and memory": a long-running watch). A soak found no object
// retained from one change to the next: RSS rose with V8's optimising compilers, which tier a function up
// only after many calls (at one change every few minutes, over hours, each step touching compiler code
// of the node binary and leaving its compilation memory in malloc's arenas), and with garbage a quiet
// process would not collect for a long time (native memory behind it, key objects, included).

/**
 * The V8 flags that keep the optimising tiers (Maglev, TurboFan) out. bin/par-identity.js starts
 * `watch` with them (the first optimising compilation happens while node loads the launcher, before
 * any code can turn them off: docs/architecture.md, "Start-up and memory"); a unit test holds its list
 * equal to this one.
 */
// exported for tests: the test holds bin/'s WATCH_V8_FLAGS equal to it
export const COMPILERS_OFF_FLAGS: readonly string[] = ['--no-maglev', '--no-turbofan'];

/**
 * Turns V8's optimising tiers off for the rest of the process: what watch runs per change is a few
 * milliseconds in the interpreter and the baseline compiler. Only the CLI's own process: a program
 * that imports the API keeps its optimising compilers. Best effort.
 */
export function stopOptimisingCompilers(): void {
  try {
    for (const flag of COMPILERS_OFF_FLAGS) setFlagsFromString(flag);
  } catch {
    // the watcher works the same, its memory creeping up over hours instead of staying put
  }
}

/**
 * The command a command line runs, read before any of the program is loaded: the first word that is
 * not a flag, before `--` (the global flags take no value). A wrong answer only changes which
 * compilers run, never what the command does.
 */
export function commandWord(args: readonly string[]): string | undefined {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).find((word) => !word.startsWith('-'));
}

/** Quiet time after the last request before the collection, so a burst of changes costs one. */
// exported for tests: the test moves fake timers in fractions of it
export const RELEASE_DELAY_MS = 1000;

/**
 * Asks for one memory-reducing collection after work that left garbage (a change handed on, a
 * re-list, a restarted watch); requests within RELEASE_DELAY_MS of the first share it.
 */
export function memoryReleaser(release: () => void = releaseStartupMemory, delayMs = RELEASE_DELAY_MS) {
  let timer: NodeJS.Timeout | undefined;
  return {
    request(): void {
      if (timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        release();
      }, delayMs);
      // Never what keeps the process alive.
      timer.unref();
    },
    cancel(): void {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
