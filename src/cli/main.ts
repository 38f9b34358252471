import { CommanderError } from 'commander';
import { processIo } from '../io.js';
import { renderError, wantsColor } from '../output.js';
import { VERSION } from '../version.js';
import { buildProgram } from './program.js';
import { PROGRAM } from './table.js';

export async function main(argv: string[] = process.argv): Promise<void> {
  const io = processIo();
  const program = buildProgram(PROGRAM, io);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; every other commander complaint is a usage error (exit 2).
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    process.exitCode = renderError(err, io, { json: argv.includes('--json'), color: wantsColor(io, false) });
  }
}

export async function renderManPage(): Promise<string> {
  const { renderManPage: render } = await import('./docs/man-page.js');
  return render(PROGRAM, VERSION);
}

/** README.md with its generated blocks rewritten (scripts/sync-readme.mjs). */
export async function syncReadme(readme: string): Promise<string> {
  const { syncReadme: sync } = await import('./docs/exit-status.js');
  return sync(readme);
}
