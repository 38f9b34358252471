import type { PossibleOrphan } from '../results/status.js';

// The words for a key an interrupted enrollment left (docs/identity-lifecycle.md §3): rotations warn
// with them, status prints them.

export function describeOrphan(o: PossibleOrphan): string {
  if (!o.decodes) return `${o.path}, which does not decode: inspect it, then delete it`;
  const runner = o.runnerName ? `runner "${o.runnerName}"` : 'a runner';
  return `the key ${o.fingerprint} (created ${o.createdAt ?? 'at an unknown time'}) in ${o.path}: it may be registered in Datadog as ${runner} that no identity holds (a possible orphan). Remove that runner in Datadog if it exists, then delete ${o.path}`;
}
