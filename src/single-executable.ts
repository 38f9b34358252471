import { basename } from 'node:path';

// node:sea through getBuiltinModule, not a static import: src/errors.ts needs programName, and the
// launcher's old-Node error (src/launcher-error.ts, built for any Node) bundles errors.ts; an import of
// node:sea, which Node before 20.12 does not have, would fail it before the error could be told.

/**
 * True inside the Node single executable (dist/sea/par-identity-linux-*): there the bundle is one
 * blob and require() reaches only built-in modules, so native modules and the separate emulator
 * bundle cannot be loaded.
 */
export function runningAsSingleExecutable(): boolean {
  return process.getBuiltinModule('node:sea').isSea();
}

/**
 * The name the operator ran, for the commands printed to copy (undo:, next:, hints). The single
 * executable may be renamed (par-identity-linux-x64) and is often run by its path from a scratch folder
 * (`/tmp/par-identity`, `./par-identity`), where a bare file name would be no command at all: so it is
 * argv[0] as typed (a bare name when the shell found it on PATH), else the file's own name. The npm
 * package's command is par-identity whatever script started Node (the launcher, or a program using the
 * API: its own script name would be no command to copy). A name with characters a shell would need
 * quoted is not shown as typed.
 */
export function programName(sea = runningAsSingleExecutable(), argv0 = process.argv0, execPath = process.execPath): string {
  if (!sea) return 'par-identity';
  for (const name of [argv0, basename(execPath)]) if (name && /^[A-Za-z0-9._+/-]+$/.test(name) && !name.endsWith('/')) return name;
  return 'par-identity';
}
