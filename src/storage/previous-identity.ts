import { type DecodedIdentity, decodeIdentity } from '../identity/identity-record.js';

// Which identity a Secret keeps as its "previous" after a rotation: the current one when it decodes,
// else the valid previous one already there — a corrupt current key must never push out the last
// identity that works. Pure: data in (decoded Secret values), data out; the kube layer writes it.

interface IdentityKeyNames {
  privateKey: string;
  urn: string;
  previousPrivateKey: string;
  previousUrn: string;
}

interface RotatedSecretValues {
  /** Plain (not base64) values to write: the new identity, `extra`, and the previous identity kept. */
  values: Record<string, string>;
  /** `current`: the replaced identity is now previous_*; `kept`: the current keys did not decode, the valid previous_* stay; `none`. */
  previous: 'current' | 'kept' | 'none';
  /** The current keys were present but did not decode (say so; they are not written back). */
  currentCorrupt: boolean;
}

function decodes(privateKey: string | undefined, urn: string | undefined): boolean {
  if (!privateKey || !urn) return false;
  try {
    decodeIdentity({ privateKey, urn });
    return true;
  } catch {
    return false;
  }
}

export function rotatedSecretValues(
  existing: Record<string, string>,
  next: { privateKey: string; urn: string },
  names: IdentityKeyNames,
  options: { keepPrevious: boolean; extra?: Record<string, string> },
): RotatedSecretValues {
  const values: Record<string, string> = { [names.privateKey]: next.privateKey, [names.urn]: next.urn, ...(options.extra ?? {}) };
  const currentPresent = Boolean(existing[names.privateKey] || existing[names.urn]);
  const currentValid = decodes(existing[names.privateKey], existing[names.urn]);
  const currentCorrupt = currentPresent && !currentValid;
  if (!options.keepPrevious) return { values, previous: 'none', currentCorrupt };
  if (currentValid) {
    values[names.previousPrivateKey] = existing[names.privateKey]!;
    values[names.previousUrn] = existing[names.urn]!;
    return { values, previous: 'current', currentCorrupt };
  }
  if (decodes(existing[names.previousPrivateKey], existing[names.previousUrn])) {
    values[names.previousPrivateKey] = existing[names.previousPrivateKey]!;
    values[names.previousUrn] = existing[names.previousUrn]!;
    return { values, previous: 'kept', currentCorrupt };
  }
  return { values, previous: 'none', currentCorrupt };
}

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
export function previousToKeep(current: { identity?: DecodedIdentity; previous?: DecodedIdentity }, mark: { fingerprint: string; unverified?: string } | undefined): KeptPrevious {
  const { identity, previous } = current;
  // Only an identity this tool wrote and saw fail (or not yet pass) is passed over; one the agent
  // enrolled by itself is in service and kept as usual.
  if (identity && previous && mark?.unverified === identity.key.kid && previous.key.kid === mark.fingerprint) {
    return { kept: previous, unverifiedDropped: identity };
  }
  const kept = identity ?? previous;
  return kept ? { kept } : {};
}
