import { apiKeyHash } from '../identity/api-key-hash.js';

// ShouldReenroll (docs/protocol.md §4), predicted: at its next start the runner drops the stored identity
// and enrolls a new one, silently, when a stored value differs from what it resolves then.

interface StoredHostFacts {
  hostname?: string;
  apiKeyHash?: string;
}

export function predictReenroll(stored: StoredHostFacts, resolvedHostname: string, agentApiKey: string | undefined): string[] {
  const reasons: string[] = [];
  if (stored.hostname && stored.hostname !== resolvedHostname) {
    reasons.push(`stored hostname ${stored.hostname} differs from the hostname the agent resolves (${resolvedHostname || '""'})`);
  }
  if (stored.apiKeyHash && agentApiKey !== undefined && stored.apiKeyHash !== apiKeyHash(agentApiKey.trim())) {
    reasons.push('stored api_key_hash differs from the hash of the API key the agent reads');
  }
  return reasons;
}
