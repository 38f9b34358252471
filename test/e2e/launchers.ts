import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe } from 'vitest';
import type { RunOptions } from './run-cli.js';

// The two ways the tool ships, for suites that must hold for both (the hostile-*.test.ts suites):
// the built binary (bin/ + dist/, under Node) and the single executable of this platform, built by
// `npm run build:sea`. Where the executable is not built, its half of a suite is skipped and its
// name says why.

const SINGLE_EXECUTABLE = fileURLToPath(new URL('../../dist/sea/par-identity-linux-x64', import.meta.url));

export interface Launcher {
  name: string;
  /** Passed to runCli/startCli (and the fixtures' run). */
  options: Pick<RunOptions, 'executable'>;
  /** Why this launcher cannot run here; undefined when it can. */
  missing?: string;
  /** The single executable carries no emulator (`par-identity emulator` is the built binary's). */
  hasEmulator: boolean;
}

const seaMissing =
  process.platform !== 'linux' || process.arch !== 'x64'
    ? `no linux-x64 single executable for ${process.platform}-${process.arch}`
    : existsSync(SINGLE_EXECUTABLE)
      ? undefined
      : 'the single executable is not built (npm run build:sea)';

export const LAUNCHERS: Launcher[] = [
  { name: 'built binary', options: {}, hasEmulator: true },
  {
    name: 'single executable',
    options: { executable: SINGLE_EXECUTABLE },
    ...(seaMissing ? { missing: seaMissing } : {}),
    hasEmulator: false,
  },
];

/** One describe block per launcher, named for it; skipped, with the reason in its name, where it cannot run. */
export function describeEachLauncher(title: string, body: (launcher: Launcher) => void, options: { needsEmulator?: boolean } = {}): void {
  for (const launcher of LAUNCHERS) {
    const missing =
      launcher.missing ?? (options.needsEmulator && !launcher.hasEmulator ? 'the single executable has no emulator command' : undefined);
    describe.skipIf(missing !== undefined)(`${title} [${launcher.name}]${missing ? ` [SKIPPED: ${missing}]` : ''}`, () => body(launcher));
  }
}
