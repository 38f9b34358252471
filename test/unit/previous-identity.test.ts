import { describe, expect, it } from 'vitest';
import { decodeIdentity } from '../../src/identity/index.js';
import { previousToKeep, rotatedSecretValues } from '../../src/storage/previous-identity.js';
import { newIdentity } from '../fixtures/test-identities.js';

const NAMES = { privateKey: 'private_key', urn: 'urn', previousPrivateKey: 'previous_private_key', previousUrn: 'previous_urn' };

describe('rotatedSecretValues', () => {
  const [current, previous, next] = [newIdentity(), newIdentity(), newIdentity()];
  const nextValues = { privateKey: next.privateKey, urn: next.urn };

  it('a valid current identity becomes previous_*', () => {
    const existing = { private_key: current.privateKey, urn: current.urn, previous_private_key: previous.privateKey, previous_urn: previous.urn };
    expect(rotatedSecretValues(existing, nextValues, NAMES, { keepPrevious: true, extra: { orch_cluster_id: 'c' } })).toEqual({
      values: { private_key: next.privateKey, urn: next.urn, orch_cluster_id: 'c', previous_private_key: current.privateKey, previous_urn: current.urn },
      previous: 'current',
      currentCorrupt: false,
    });
  });

  it.each([
    ['a corrupt key', { private_key: 'not-a-key', urn: 'urn:dd:apps:on-prem-runner:us1:1:r' }],
    ['a missing URN', { private_key: 'x' }],
    ['a key with a bad URN', { urn: 'nonsense' }],
  ])('current with %s: the valid previous_* are kept, and the corruption is flagged', (_, broken) => {
    const existing = { ...broken, previous_private_key: previous.privateKey, previous_urn: previous.urn };
    expect(rotatedSecretValues(existing, nextValues, NAMES, { keepPrevious: true })).toEqual({
      values: { private_key: next.privateKey, urn: next.urn, previous_private_key: previous.privateKey, previous_urn: previous.urn },
      previous: 'kept',
      currentCorrupt: true,
    });
  });

  it('both corrupt: no previous written; --no-keep-previous: none whatever is there', () => {
    expect(rotatedSecretValues({ private_key: 'x', urn: 'y', previous_private_key: 'z', previous_urn: 'w' }, nextValues, NAMES, { keepPrevious: true }).previous).toBe('none');
    const dropped = rotatedSecretValues({ private_key: current.privateKey, urn: current.urn }, nextValues, NAMES, { keepPrevious: false });
    expect(dropped).toEqual({ values: { private_key: next.privateKey, urn: next.urn }, previous: 'none', currentCorrupt: false });
  });

  it('an empty Secret is a first rotation, not a corrupt one', () => {
    expect(rotatedSecretValues({}, nextValues, NAMES, { keepPrevious: true })).toEqual({ values: { private_key: next.privateKey, urn: next.urn }, previous: 'none', currentCorrupt: false });
  });
});

// docs/identity-lifecycle.md §2
describe('previousToKeep', () => {
  const [verified, failed, agentOwn] = [newIdentity(), newIdentity(), newIdentity()].map((t) => decodeIdentity({ privateKey: t.privateKey, urn: t.urn }));
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
