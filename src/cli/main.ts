import { CommanderError } from 'commander';
import { processIo } from '../io.js';
import { usageHint } from '../errors.js';
import { renderError, SCHEMA_VERSION, wantsColor } from '../output.js';
import { sanitizeServerString } from '../sanitize.js';
import { VERSION } from '../version.js';
import { buildProgram, withCommandHint } from './program.js';
import { PROGRAM } from './table.js';

export async function main(argv: string[] = process.argv): Promise<void> {
  const io = processIo();
  const program = buildProgram(PROGRAM, io);
  // Options end at `--` (watch's supervised command may have a --json of its own).
  const end = argv.indexOf('--', 2);
  const own = end < 0 ? argv.slice(2) : argv.slice(2, end);
  const json = own.includes('--json');
  const command = own.find((word) => PROGRAM.commands.some((c) => c.name === word));
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; every other commander complaint is a usage error (exit 2). commander
      // has said it on stderr already; --json still gets its one document.
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      if (json && err.exitCode !== 0) {
        const message = sanitizeServerString(err.message.replace(/^error: /, ''));
        io.stdout(`${JSON.stringify({ schemaVersion: SCHEMA_VERSION, status: 'error', ...(command ? { command } : {}), code: 'USAGE', exitCode: 2, message, hint: usageHint(command) })}\n`);
      }
      return;
    }
    process.exitCode = renderError(withCommandHint(err, command), io, { json, color: wantsColor(io, own.includes('--no-color')), ...(command ? { command } : {}) });
  }
}

export async function renderManPage(): Promise<string> {
  const { renderManPage: render } = await import('./docs/man-page.js');
  return render(PROGRAM, VERSION);
}

/** The source of dist/help.js, the help texts the launcher prints without loading this bundle (scripts/build.mjs). */
export async function renderHelpModule(): Promise<string> {
  const { renderHelpModule: render } = await import('./docs/help-texts.js');
  return render(PROGRAM);
}

/** README.md with its generated blocks rewritten (scripts/sync-readme.mjs). */
export async function syncReadme(readme: string): Promise<string> {
  const { syncReadme: sync } = await import('./docs/exit-status.js');
  return sync(readme);
}
