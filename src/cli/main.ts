import { CommanderError } from 'commander';
import { processIo } from '../io.js';
import { errorEnvelope } from '../error-envelope.js';
import { ExitCode, UsageError, usageHint } from '../errors.js';
import { renderError, wantsColor } from '../output.js';
import { sanitizeServerString } from '../sanitize.js';
import { VERSION } from '../version.js';
import { buildProgram, withCommandHint } from './program.js';
import { PROGRAM } from './table.js';

/**
 * kubectl's `--dry-run=server|client|none` as its users type it. Our `--dry-run` already does every
 * check, the server-side dry run of the write included: `server` and `client` are that, `none` is no
 * dry run (kubectl's default). Any other value is refused naming the forms (commander alone would
 * answer "unknown option '--dry-run' (Did you mean --dry-run?)").
 */
// exported for tests: kubectl's --dry-run forms, checked without a process
export function kubectlDryRun(own: string[]): string[] {
  return own.flatMap((word) => {
    const value = /^--dry-run=(.*)$/.exec(word)?.[1];
    if (value === undefined) return [word];
    if (value === 'server' || value === 'client') return ['--dry-run'];
    if (value === 'none') return [];
    throw new UsageError(
      `--dry-run takes no value; ${sanitizeServerString(word, 80)} is not one of kubectl's forms`,
      "Nothing was run. Pass --dry-run (or kubectl's --dry-run=server / --dry-run=client, which mean the same here).",
    );
  });
}

export async function main(argvGiven: string[] = process.argv): Promise<void> {
  const io = processIo();
  const program = buildProgram(PROGRAM, io);
  // Options end at `--` (watch's supervised command may have a --json of its own).
  const end = argvGiven.indexOf('--', 2);
  const given = end < 0 ? argvGiven.slice(2) : argvGiven.slice(2, end);
  const json = given.includes('--json');
  const command = given.find((word) => PROGRAM.commands.some((c) => c.name === word));
  let own: string[];
  try {
    own = kubectlDryRun(given);
  } catch (err) {
    process.exitCode = renderError(withCommandHint(err, command), io, {
      json,
      color: wantsColor(io, given.includes('--no-color')),
      ...(command ? { command } : {}),
    });
    return;
  }
  const argv = [...argvGiven.slice(0, 2), ...own, ...(end < 0 ? [] : argvGiven.slice(end))];
  // A bare `par-identity` prints the program's help and exits 0 (the launcher's stored texts answer it
  // first; this is the path without them: PAR_IDENTITY_NO_FAST_HELP, another terminal width).
  if (own.length === 0) {
    io.stdout(program.helpInformation());
    return;
  }
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; every other commander complaint is a usage error (exit 2). commander
      // has said it on stderr already; --json still gets its one document.
      if (err.exitCode === 0) {
        process.exitCode = ExitCode.ok;
        return;
      }
      const usage = new UsageError(sanitizeServerString(err.message.replace(/^error: /, '')), usageHint(command));
      process.exitCode = usage.exitCode;
      if (json) io.stdout(`${JSON.stringify(errorEnvelope(usage, command))}\n`);
      return;
    }
    process.exitCode = renderError(withCommandHint(err, command), io, {
      json,
      color: wantsColor(io, own.includes('--no-color')),
      ...(command ? { command } : {}),
    });
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
