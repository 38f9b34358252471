import { setFlagsFromString } from 'node:v8';
import { releaseStartupMemory } from './startup-memory.js';

// What keeps a watch process at the memory it settled at, over days of changes, re-lists and watch
// restarts (docs/architecture.md, "Start-up and memory": a long-running watch). A soak found no object
// retained from one change to the next: RSS rose with V8's optimising compilers, which tier a function up
// only after many calls (at one change every few minutes, over hours, each step touching compiler code
// of the node binary and leaving its compilation memory in malloc's arenas), and with garbage a quiet
// process would not collect for a long time (native memory behind it, key objects, included).

/**
 * Turns V8's optimising tiers (Maglev, TurboFan) off for the rest of the process: what watch runs per
 * change is a few milliseconds in the interpreter and the baseline compiler. Only the CLI's own
 * process: a program that imports the API keeps its optimising compilers. Best effort.
 */
export function stopOptimisingCompilers(): void {
  try {
    setFlagsFromString('--no-maglev');
    setFlagsFromString('--no-turbofan');
  } catch {
    // the watcher works the same, its memory creeping up over hours instead of staying put
  }
}

/** Quiet time after the last request before the collection, so a burst of changes costs one. */
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
