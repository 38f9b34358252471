import { isoString } from '../time/index.js';
import type { NewIdentity, VerifiedMark } from './target.js';

/**
 * The mark of a new identity the signed health check accepted before it was written (docs/identity-lifecycle.md §1):
 * both targets record it with the write itself, with the name its runner was enrolled with.
 */
export function verifiedMarkOf(next: NewIdentity, verifiedAt: Date): VerifiedMark {
  return {
    fingerprint: next.key.kid,
    urn: next.urn,
    verifiedAt: isoString(verifiedAt),
    ...(next.runnerName ? { runnerName: next.runnerName } : {}),
  };
}
