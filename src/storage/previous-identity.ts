import type { DecodedIdentity } from '../identity/identity-record.js';

// Which identity a rotation keeps as its "previous" (a Secret's previous_* keys, a file's backup): the
// current one when it decodes, else the valid previous one already there — a corrupt current key must
// never push out the last identity that works. Pure: decoded identities in, the choice out.

interface KeptPrevious {
  /** The identity to keep as the previous (backup file, previous_* keys); undefined when none is valid. */
  kept?: DecodedIdentity;
  /** The identity in service never passed verification while the previous one did: it is not kept. */
  unverifiedDropped?: DecodedIdentity;
}

/**
 * Which identity a rotation keeps as the previous (docs/identity-lifecycle.md §2): the one in service,
 * unless the last verified identity is the previous one and the one in service is the one an earlier
 * rotation wrote and never saw pass (its check failed); then the verified one stays. A corrupt
 * current identity never pushes out a valid previous one.
 */
export function previousToKeep(
  current: { identity?: DecodedIdentity; previous?: DecodedIdentity },
  mark: { fingerprint: string; unverified?: string } | undefined,
): KeptPrevious {
  const { identity, previous } = current;
  // Only an identity this tool wrote and saw fail (or not yet pass) is passed over; one the agent
  // enrolled by itself is in service and kept as usual.
  if (identity && previous && mark?.unverified === identity.key.kid && previous.key.kid === mark.fingerprint) {
    return { kept: previous, unverifiedDropped: identity };
  }
  const kept = identity ?? previous;
  return kept ? { kept } : {};
}
