import { describe, expect, it } from 'vitest';
import { decodeIdentity } from '../../src/identity/index.js';
import { previousToKeep } from '../../src/storage/previous-identity.js';
import { newIdentity } from '../fixtures/test-identities.js';

// docs/identity-lifecycle.md §2
describe('previousToKeep', () => {
  const [verified, failed, agentOwn] = [newIdentity(), newIdentity(), newIdentity()].map((t) =>
    decodeIdentity({ privateKey: t.privateKey, urn: t.urn }),
  );
  const mark = { fingerprint: verified!.key.kid, unverified: failed!.key.kid };

  it('the identity in service, normally', () => {
    expect(previousToKeep({ identity: failed, previous: verified }, undefined)).toEqual({ kept: failed });
    expect(previousToKeep({ identity: failed, previous: verified }, { fingerprint: failed!.key.kid })).toEqual({ kept: failed });
  });

  it('the verified previous identity when the one in service is the marked unverified one', () => {
    expect(previousToKeep({ identity: failed, previous: verified }, mark)).toEqual({ kept: verified, unverifiedDropped: failed });
  });

  it('an identity the agent enrolled by itself is kept as usual', () => {
    expect(previousToKeep({ identity: agentOwn, previous: verified }, mark)).toEqual({ kept: agentOwn });
  });

  it('a corrupt current identity keeps the valid previous one; none when neither is valid', () => {
    expect(previousToKeep({ previous: verified }, mark)).toEqual({ kept: verified });
    expect(previousToKeep({}, mark)).toEqual({});
  });
});
