import { join } from 'node:path';
import { sanitizeServerString } from '../sanitize.js';

// Names found by listing the identity's directory (recovery files, leftovers, set-aside pending keys)
// are chosen by whoever may write that directory, escape sequences included: they are shown, in text
// and in --json, only through the one sanitizer, capped at the longest name a Linux filesystem allows
// (docs/security.md §3). The name is used as found for every file operation; only what is shown changes.

const NAME_MAX = 255;

/** `dir/name` as shown to the operator. */
export function shownPath(dir: string, name: string): string {
  return join(dir, sanitizeServerString(name, NAME_MAX));
}
