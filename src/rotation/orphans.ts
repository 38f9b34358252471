import type { PossibleOrphan } from '../results/status.js';

// The words for a key an interrupted enrollment left (docs/identity-lifecycle.md §3): rotations warn
// with them, status prints them.

export function describeOrphan(o: PossibleOrphan): string {
  if (!o.decodes) return `${o.path}, which does not decode: inspect it, then ${removal(o)}`;
  const runner = o.runnerName ? `runner "${o.runnerName}"` : 'a runner';
  if (o.urn) {
    const why = o.rejected ? ', which the signed health check rejected: it was never written' : '';
    return `the key ${o.fingerprint} (created ${o.createdAt ?? 'at an unknown time'}) in ${o.path}: it is registered in Datadog as ${runner} ${o.urn}${why}, and no identity holds it (a possible orphan). Remove that runner in Datadog, then ${removal(o)}`;
  }
  return `the key ${o.fingerprint} (created ${o.createdAt ?? 'at an unknown time'}) in ${o.path}: it may be registered in Datadog as ${runner} that no identity holds (a possible orphan). Remove that runner in Datadog if it exists, then ${removal(o)}`;
}

/** A Secret's key is removed from the Secret (never the Secret itself); a file is deleted. */
function removal(o: PossibleOrphan): string {
  const secret = /^Secret ([^/ ]+)\/(\S+) key (\S+)$/.exec(o.path);
  if (!secret) return `delete ${o.path}`;
  return `remove only that data key from the Secret: kubectl -n ${secret[1]} patch secret ${secret[2]} --type json -p '[{"op":"remove","path":"/data/${secret[3]}"}]'`;
}
