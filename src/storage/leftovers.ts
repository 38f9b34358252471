import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { TEMP_MARK } from './file-primitives.js';
import { lockPathOf, readHolder, staleReason, TAKEOVER_MARK } from './lock.js';
import { pidAlive } from './pid.js';
import { shownPath } from './shown-name.js';

// What crashed or interrupted runs left beside an identity file, found by reading only (`status`
// lists them; this never removes or takes over anything). Identities kept aside (<name>.restore-*,
// <name>.corrupt-*) are not here: listRecoverableIdentities reports them with their content.
//   stale-lock  <name>.lock whose holder is gone on this host (the next writing run takes it over)
//   invalid-lock <name>.lock that names no holder in the form this tool writes (another program's, or
//               planted by whoever may write the directory): never taken over, never removed by the tool
//   takeover    <name>.lock.takeover-<nonce>: a taker that died mid-takeover (docs/locking.md §2)
//   temp        .<name>*.tmp-<pid>-<random> of a writer whose pid is gone (src/storage/atomic-write.ts,
//               src/storage/lock.ts): the next writing run's sweep deletes it, or keeps an identity
//               found nowhere else as <name>.restore-*

export interface Leftover {
  /** As shown: a name found in the directory passes through the sanitizer (src/storage/shown-name.ts). */
  path: string;
  kind: 'stale-lock' | 'invalid-lock' | 'takeover' | 'temp';
  /** Why it is a leftover (never its content). */
  detail: string;
}

/** The leftovers beside `identityPath`, sorted by name; an unreadable directory has none to list. */
export async function listLeftovers(identityPath: string): Promise<Leftover[]> {
  const dir = dirname(identityPath);
  const base = basename(identityPath);
  const lockPath = lockPathOf(identityPath);
  const lockName = basename(lockPath);
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch {
    return [];
  }
  const found: Leftover[] = [];
  if (names.includes(lockName)) {
    const holder = await readHolder(lockPath);
    const stale = typeof holder === 'string' ? undefined : staleReason(holder);
    if (stale && typeof holder !== 'string')
      found.push({ path: lockPath, kind: 'stale-lock', detail: `taken by pid ${holder.pid} since ${holder.since}; ${stale}` });
    // Reported, never acted on: none of its fields is read (docs/security.md §5).
    if (holder === 'unreadable')
      found.push({ path: lockPath, kind: 'invalid-lock', detail: 'names no holder in the form par-identity writes' });
  }
  for (const name of names) {
    const full = join(dir, name);
    if (name.startsWith(`${lockName}${TAKEOVER_MARK}`)) {
      const holder = await readHolder(full);
      const alive = typeof holder !== 'string' && !staleReason(holder);
      // A live taker's guard lasts a few file operations: only a dead one's is a leftover.
      if (!alive)
        found.push({
          path: shownPath(dir, name),
          kind: 'takeover',
          detail: typeof holder === 'string' ? 'names no holder' : `left by pid ${holder.pid} (${staleReason(holder)})`,
        });
      continue;
    }
    if (!name.startsWith(`.${base}`) || !name.includes(TEMP_MARK)) continue;
    const pid = Number(/\.tmp-(\d+)-/.exec(name)?.[1]);
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && pidAlive(pid)) continue;
    found.push({
      path: shownPath(dir, name),
      kind: 'temp',
      detail: Number.isSafeInteger(pid) && pid > 0 ? `written by pid ${pid}, which is gone` : 'names no writer pid',
    });
  }
  return found;
}
