import type { WatchCommandOptions } from '../cli/cluster-commands.js';
import type { Io } from '../io.js';
import type { CommandResult } from '../output.js';
import type { WatchResult } from '../results/watch.js';
import { runWatch } from '../watch/run-watch.js';

// Follow the identity Secret and hand every valid change on until SIGTERM/SIGINT (src/watch;
// docs/protocol.md §8).

export function run(options: WatchCommandOptions, io: Io): Promise<CommandResult<WatchResult>> {
  return runWatch(options, io, process);
}
