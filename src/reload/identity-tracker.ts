import type { V1Secret } from '@kubernetes/client-node';
import { IdentityDecodeError, type ParError } from '../errors.js';
import type { DecodedIdentity } from '../identity/index.js';
import { describeSecret, SECRET_KEYS, type SecretRef } from '../kube/identity-secret.js';
import type { ChangedField } from './watch-events.js';

// Decides what a replica does with each observation of its identity Secret (docs/protocol.md §8): reload
// when `urn` OR `private_key` changed, only after the new content decoded and checked; keep the
// current identity on invalid content, on deletion and when the Secret is missing.

export type TrackerDecision =
  | { action: 'load'; identity: DecodedIdentity; reason: 'initial' | 'rotated'; resourceVersion: string }
  | { action: 'reject'; error: ParError; resourceVersion: string }
  | { action: 'keep'; why: 'unchanged' | 'already-rejected' | 'deleted' | 'missing'; resourceVersion?: string };

/** The two values that make an identity, as the API returns them (base64): equal strings, equal identity. */
interface RawIdentity {
  privateKey: string | undefined;
  urn: string | undefined;
  /** Set on content refused for a carried value: the same key and URN with other values is new content. */
  carried?: string;
}

/** The Secret's other values a written identity file carries along (api_key_hash, orch_cluster_id). */
const MAX_CARRIED_VALUE_LENGTH = 256;

const carriedOf = (secret: V1Secret): string =>
  `${secret.data?.[SECRET_KEYS.apiKeyHash] ?? ''}\n${secret.data?.[SECRET_KEYS.clusterId] ?? ''}`;

const sameRaw = (a: RawIdentity | undefined, b: RawIdentity, secret?: V1Secret): boolean =>
  a !== undefined &&
  a.privateKey === b.privateKey &&
  a.urn === b.urn &&
  (a.carried === undefined || secret === undefined || a.carried === carriedOf(secret));

export function changedFields(previous: DecodedIdentity | undefined, next: DecodedIdentity): ChangedField[] {
  if (!previous) return [];
  const changed: ChangedField[] = [];
  if (previous.record.urn !== next.record.urn) changed.push('urn');
  if (previous.record.privateKey !== next.record.privateKey) changed.push('private_key');
  return changed;
}

export class IdentityTracker {
  /** Latest content accepted (applied, or waiting for its splay). */
  private accepted: RawIdentity | undefined;
  /** Latest content refused, so a re-list of the same bad content is not reported again. */
  private rejected: RawIdentity | undefined;
  private applied: DecodedIdentity | undefined;

  constructor(private readonly ref: SecretRef) {}

  current(): DecodedIdentity | undefined {
    return this.applied;
  }

  observe(secret: V1Secret): TrackerDecision {
    const resourceVersion = secret.metadata?.resourceVersion ?? '';
    const raw: RawIdentity = { privateKey: secret.data?.[SECRET_KEYS.privateKey], urn: secret.data?.[SECRET_KEYS.urn] };
    if (sameRaw(this.accepted, raw)) {
      this.rejected = undefined;
      return { action: 'keep', why: 'unchanged', resourceVersion };
    }
    if (sameRaw(this.rejected, raw, secret)) return { action: 'keep', why: 'already-rejected', resourceVersion };
    let state: ReturnType<typeof describeSecret>;
    try {
      state = describeSecret(this.ref, secret);
    } catch (err) {
      // Data that are not strings: refused as an identity that does not decode, the current one kept.
      this.rejected = raw;
      return { action: 'reject', error: new IdentityDecodeError('data', (err as Error).message), resourceVersion };
    }
    if (state.state === 'missing') return this.missing();
    if (!state.identity) {
      this.rejected = raw;
      return { action: 'reject', error: state.error ?? new IdentityDecodeError('secret', 'does not decode'), resourceVersion };
    }
    // The Go reader ignores the other keys; a file written from this identity carries the hash and cluster id along.
    const apiKeyHash = state.data[SECRET_KEYS.apiKeyHash];
    const orchClusterId = state.data[SECRET_KEYS.clusterId];
    // Bounded as the URN is (docs/security.md): a SHA-256 in hex is 64 characters, a cluster id 36.
    for (const [key, value] of [
      [SECRET_KEYS.apiKeyHash, apiKeyHash],
      [SECRET_KEYS.clusterId, orchClusterId],
    ] as const) {
      if (value && value.length > MAX_CARRIED_VALUE_LENGTH) {
        this.rejected = { ...raw, carried: carriedOf(secret) };
        return {
          action: 'reject',
          error: new IdentityDecodeError(key, `is ${value.length} characters long (at most ${MAX_CARRIED_VALUE_LENGTH}); not printed`),
          resourceVersion,
        };
      }
    }
    const reason = this.accepted ? 'rotated' : 'initial';
    this.accepted = raw;
    this.rejected = undefined;
    const record = { ...state.identity.record, ...(apiKeyHash ? { apiKeyHash } : {}), ...(orchClusterId ? { orchClusterId } : {}) };
    return { action: 'load', identity: { ...state.identity, record }, reason, resourceVersion };
  }

  deleted(resourceVersion: string): TrackerDecision {
    return { action: 'keep', why: 'deleted', resourceVersion };
  }

  missing(): TrackerDecision {
    return { action: 'keep', why: 'missing' };
  }

  /** Makes `identity` current; returns the one it replaces, or false when it is the same identity. */
  commit(identity: DecodedIdentity): { previous: DecodedIdentity | undefined } | false {
    const previous = this.applied;
    if (previous && changedFields(previous, identity).length === 0) return false;
    this.applied = identity;
    return { previous };
  }
}
