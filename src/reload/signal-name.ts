import { constants } from 'node:os';
import { UsageError } from '../errors.js';

// --signal-name's values, in a module of its own so the command table can check the flag as it is parsed.

/** `HUP`, `SIGHUP` or `hup` → `SIGHUP`; anything the platform does not know is a usage error. */
export function parseSignalName(name: string): NodeJS.Signals {
  const upper = name.trim().toUpperCase();
  const full = (upper.startsWith('SIG') ? upper : `SIG${upper}`) as NodeJS.Signals;
  if (!(full in constants.signals))
    throw new UsageError(`--signal-name ${JSON.stringify(name)} is not a signal name (try HUP, USR1, USR2, TERM)`);
  return full;
}
