import type { EmulatorOptions } from '../cli/tool-commands.js';
import { ParError } from '../errors.js';
import type { Io } from '../io.js';
import { type CommandResult, type OutputOptions, resultJson } from '../output.js';
import { runningAsSingleExecutable } from '../single-executable.js';
import { VERSION } from '../version.js';
import { writePrivateFile } from '../storage/index.js';

/**
 * What this command needs of dist/emulators.js (emulators/run-emulators.ts implements it). Declared here
 * because nothing in src/ imports emulators/ (test/unit/api-options.test.ts guards it).
 */
export interface EmulatorBundle {
  startEmulators(
    options: Omit<EmulatorOptions, keyof OutputOptions> & { writeKubeconfig(path: string, text: string): Promise<void> },
  ): Promise<{ info: Record<string, unknown>; lines: string[]; requests(): number; close(): Promise<void> }>;
}

function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/**
 * The emulators are their own bundle, dist/emulators.js, next to the files of this bundle. The
 * specifier is computed at run time so the product bundler never follows it into the emulator code.
 */
async function loadEmulators(): Promise<EmulatorBundle> {
  if (runningAsSingleExecutable()) {
    throw new ParError(
      'EMULATOR_UNAVAILABLE',
      'the single executable does not contain the emulators',
      'Run `par-identity emulator` from the npm package installed from a checkout ' +
        `(npm ci && npm pack, then npm install -g ./par-identity-${VERSION}.tgz: docs/install.md), ` +
        'or in the checkout itself (npm run build, then bin/par-identity.js emulator).',
    );
  }
  const bundle = new URL('./emulators.js', import.meta.url).href;
  return (await import(bundle)) as EmulatorBundle;
}

/** Long-running: prints where the emulators listen at once (a JSON line with --json), stops on SIGINT/SIGTERM. */
export async function run(options: EmulatorOptions, io: Io): Promise<CommandResult> {
  const { startEmulators } = await loadEmulators();
  // The kubeconfig is written by this bundle's writer, so a refusal is its own ParError (exit 7).
  const { info, lines, requests, close } = await startEmulators({
    ...options,
    writeKubeconfig: (path, text) => writePrivateFile(path, text, 'kubeconfig files'),
  });
  // Listen for the signals before saying "listening": a caller may stop us the moment it reads that.
  const stopped = untilSignal();
  if (options.json) io.stdout(`${JSON.stringify({ schemaVersion: 1, status: 'listening', command: 'emulator', ...info })}\n`);
  else io.stdout(`${lines.join('\n')}\nPress Ctrl-C to stop.\n`);
  const signal = await stopped;
  await close();
  return { json: resultJson('emulator', { stoppedBy: signal, requests: requests() }), summary: [`emulator stopped (${signal})`] };
}
