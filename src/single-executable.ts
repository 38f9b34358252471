import { isSea } from 'node:sea';

/**
 * True inside the Node single executable (dist/sea/par-identity-linux-*): there the bundle is one
 * blob and require() reaches only built-in modules, so native modules and the separate emulator
 * bundle cannot be loaded.
 */
export function runningAsSingleExecutable(): boolean {
  return isSea();
}
