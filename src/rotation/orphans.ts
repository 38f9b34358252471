import type { PossibleOrphan } from '../results/status.js';

// The words for a key an interrupted enrollment left (docs/identity-lifecycle.md §3): rotations warn
// with them, status prints them.

export function describeOrphan(o: PossibleOrphan): string {
  if (!o.decodes) return `${o.path}, which does not decode: inspect it, then ${removal(o)}`;
  const runner = o.runnerName ? `runner "${o.runnerName}"` : 'a runner';
  if (o.urn) {
    const why = o.rejected ? ', which the signed health check rejected: it was never written' : '';
    return (
      `the key ${o.fingerprint} (created ${o.createdAt ?? 'at an unknown time'}) in ${o.path}: ` +
      `it is registered in Datadog as ${runner} ${o.urn}${why}, and no identity holds it (a possible orphan). ` +
      `Remove that runner in Datadog, then ${removal(o)}`
    );
  }
  return (
    `the key ${o.fingerprint} (created ${o.createdAt ?? 'at an unknown time'}) in ${o.path}: ` +
    `it may be registered in Datadog as ${runner} that no identity holds (a possible orphan). ` +
    `Remove that runner in Datadog if it exists, then ${removal(o)}`
  );
}

/** A Secret's key is removed from the Secret (never the Secret itself); a file is deleted. */
function removal(o: PossibleOrphan): string {
  const secret = /^Secret ([^/ ]+)\/(\S+) key (\S+)$/.exec(o.path);
  if (!secret) return `delete ${o.path}`;
  return (
    `remove only that data key from the Secret: kubectl -n ${secret[1]} patch secret ${secret[2]} --type json -p ` +
    `'[{"op":"remove","path":"/data/${secret[3]}"}]'`
  );
}

/**
 * Pending keys whose run may still be under way (their holder lives) are a rotation in progress, not
 * orphans (docs/identity-lifecycle.md §3). A record of an older version names no holder: it is a
 * rotation in progress only while a live process on this host holds the file's lock (`lockHolder`),
 * which a record of that run alone can have; otherwise a possible orphan, as before.
 */
export function splitPending(
  found: readonly PossibleOrphan[],
  lockHolder?: { pid: number; host: string; path: string },
): { possibleOrphans: PossibleOrphan[]; rotationsInProgress: PossibleOrphan[] } {
  const possibleOrphans: PossibleOrphan[] = [];
  const rotationsInProgress: PossibleOrphan[] = [];
  for (const o of found) {
    const byLock =
      o.state === 'pending' && !o.holder && lockHolder
        ? {
            ...o,
            holder: {
              host: lockHolder.host,
              pid: lockHolder.pid,
              deadline: null,
              lives: true,
              checkedBy: 'lock' as const,
              why: `pid ${lockHolder.pid} on host ${lockHolder.host} holds the lock ${lockHolder.path}`,
            },
          }
        : o;
    (byLock.holder?.lives ? rotationsInProgress : possibleOrphans).push(byLock);
  }
  return { possibleOrphans, rotationsInProgress };
}

/** A rotation under way, for status: the key it sent and who holds it. */
export function describeInProgress(o: PossibleOrphan): string {
  const runner = o.runnerName ? `runner "${o.runnerName}"` : 'its runner';
  return (
    `the key ${o.fingerprint} (created ${o.createdAt ?? 'at an unknown time'}) ` +
    `in ${o.path} belongs to a rotation under way (${o.holder?.why ?? 'its holder lives'}): ${runner} is the one going into service, ` +
    'not an orphan. Nothing to do; run status again once it has ended'
  );
}
