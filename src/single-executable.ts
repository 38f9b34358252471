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
 * executable may be renamed (par-identity-linux-x64). The npm package's command is par-identity
 * whatever script started Node (the launcher, or a program using the API: its own script name would
 * be no command to copy).
 */
export function programName(sea = runningAsSingleExecutable(), execPath = process.execPath): string {
  const name = sea ? basename(execPath) : 'par-identity';
  return /^[A-Za-z0-9._+-]+$/.test(name) ? name : 'par-identity';
}
