import { basename } from 'node:path';
import { isSea } from 'node:sea';

/**
 * True inside the Node single executable (dist/sea/par-identity-linux-*): there the bundle is one
 * blob and require() reaches only built-in modules, so native modules and the separate emulator
 * bundle cannot be loaded.
 */
export function runningAsSingleExecutable(): boolean {
  return isSea();
}

/**
 * The name the operator ran, for the commands printed to copy (undo:, next:, hints): the single
 * executable may be renamed (par-identity-linux-x64), the npm launcher is par-identity (or
 * bin/par-identity.js, shown without .js). Falls back to par-identity.
 */
export function programName(argv: readonly string[] = process.argv, sea = runningAsSingleExecutable(), execPath = process.execPath): string {
  const name = basename(sea ? execPath : (argv[1] ?? '')).replace(/\.[cm]?js$/, '');
  return /^[A-Za-z0-9._+-]+$/.test(name) ? name : 'par-identity';
}
