import type { V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { IdentityTracker, type TrackerDecision } from '../../src/reload/identity-tracker.js';
import { identityData, newIdentity, type TestIdentity, secretData } from '../fixtures/test-identities.js';

// What a replica does with each observation of its Secret (docs/protocol.md §8), decision by decision.

const ref = { namespace: 'datadog', name: 'private-action-runner-identity' };
let rv = 0;
const secret = (data: Record<string, string> | undefined): V1Secret => ({
  metadata: { ...ref, resourceVersion: String(++rv) },
  ...(data ? { data } : {}),
});
const of = (id: TestIdentity, extra: Record<string, string> = {}) => secret(identityData(id, extra));

function summary(d: TrackerDecision): string {
  if (d.action === 'load') return `load ${d.reason} ${d.identity.key.kid}`;
  if (d.action === 'reject') return `reject ${d.error.code} ${(d.error.details as { field?: string }).field}`;
  return `keep ${d.why}`;
}

describe('IdentityTracker', () => {
  const a = newIdentity();
  const b = newIdentity();

  it.each<[string, (t: IdentityTracker) => TrackerDecision[], string[]]>([
    ['first valid content → initial load', (t) => [t.observe(of(a))], [`load initial ${a.fingerprint}`]],
    [
      'same content at a new resourceVersion → unchanged',
      (t) => [t.observe(of(a)), t.observe(of(a, { api_key_hash: 'f'.repeat(64) }))],
      [`load initial ${a.fingerprint}`, 'keep unchanged'],
    ],
    [
      'new private_key and urn → rotated',
      (t) => [t.observe(of(a)), t.observe(of(b))],
      [`load initial ${a.fingerprint}`, `load rotated ${b.fingerprint}`],
    ],
    [
      'only the urn changes → rotated',
      (t) => [t.observe(of(a)), t.observe(of({ ...a, urn: b.urn }))],
      [`load initial ${a.fingerprint}`, `load rotated ${a.fingerprint}`],
    ],
    [
      'only the private_key changes → rotated',
      (t) => [t.observe(of(a)), t.observe(of({ ...b, urn: a.urn }))],
      [`load initial ${a.fingerprint}`, `load rotated ${b.fingerprint}`],
    ],
    ['no data at all → rejected', (t) => [t.observe(secret(undefined))], ['reject IDENTITY_INVALID private_key']],
    ['urn missing → rejected', (t) => [t.observe(secret(secretData({ private_key: a.privateKey })))], ['reject IDENTITY_INVALID urn']],
    [
      'urn malformed → rejected',
      (t) => [t.observe(secret(secretData({ private_key: a.privateKey, urn: 'urn:dd:apps:on-prem-runner:us1:12' })))],
      ['reject IDENTITY_INVALID urn'],
    ],
    [
      'key padded → rejected',
      (t) => [t.observe(secret(secretData({ private_key: `${a.privateKey}=`, urn: a.urn })))],
      ['reject IDENTITY_INVALID private_key'],
    ],
    [
      'the same invalid content again → reported once',
      (t) => [
        t.observe(of(a)),
        t.observe(secret(secretData({ private_key: 'x', urn: a.urn }))),
        t.observe(secret(secretData({ private_key: 'x', urn: a.urn }))),
      ],
      [`load initial ${a.fingerprint}`, 'reject IDENTITY_INVALID private_key', 'keep already-rejected'],
    ],
    [
      'invalid, back to the current, then the invalid content again → reported again',
      (t) => [
        t.observe(of(a)),
        t.observe(secret(secretData({ private_key: 'x', urn: a.urn }))),
        t.observe(of(a)),
        t.observe(secret(secretData({ private_key: 'x', urn: a.urn }))),
      ],
      [`load initial ${a.fingerprint}`, 'reject IDENTITY_INVALID private_key', 'keep unchanged', 'reject IDENTITY_INVALID private_key'],
    ],
    [
      'a urn of 200 000 characters → rejected by its length',
      (t) => [t.observe(of(a)), t.observe(of({ ...b, urn: `${b.urn}${'r'.repeat(200_000)}` }))],
      [`load initial ${a.fingerprint}`, 'reject IDENTITY_INVALID urn'],
    ],
    [
      'an api_key_hash or orch_cluster_id past 256 characters → rejected; the same key with sane values then loads',
      (t) => [
        t.observe(of(a)),
        t.observe(of(b, { api_key_hash: 'f'.repeat(100_000) })),
        t.observe(of(b, { api_key_hash: 'f'.repeat(100_000) })),
        t.observe(of(b, { orch_cluster_id: 'c'.repeat(257) })),
        t.observe(of(b, { api_key_hash: 'f'.repeat(64) })),
      ],
      [
        `load initial ${a.fingerprint}`,
        'reject IDENTITY_INVALID api_key_hash',
        'keep already-rejected',
        'reject IDENTITY_INVALID orch_cluster_id',
        `load rotated ${b.fingerprint}`,
      ],
    ],
    ['deleted → keep', (t) => [t.observe(of(a)), t.deleted('9')], [`load initial ${a.fingerprint}`, 'keep deleted']],
    ['missing → keep', (t) => [t.missing()], ['keep missing']],
    [
      're-created with the same content after deletion → unchanged',
      (t) => [t.observe(of(a)), t.deleted('9'), t.observe(of(a))],
      [`load initial ${a.fingerprint}`, 'keep deleted', 'keep unchanged'],
    ],
  ])('%s', (_name, steps, expected) => {
    const tracker = new IdentityTracker(ref);
    expect(steps(tracker).map(summary)).toEqual(expected);
  });

  it('applies nothing until commit(), and commit() of the same identity is a no-op', () => {
    const tracker = new IdentityTracker(ref);
    const first = tracker.observe(of(a, { api_key_hash: 'e'.repeat(64), orch_cluster_id: 'c-1' }));
    expect(tracker.current()).toBeUndefined();
    if (first.action !== 'load') throw new Error('expected load');
    expect(first.identity.record).toEqual({ privateKey: a.privateKey, urn: a.urn, apiKeyHash: 'e'.repeat(64), orchClusterId: 'c-1' });
    expect(tracker.commit(first.identity)).toEqual({ previous: undefined });
    expect(tracker.current()?.key.kid).toBe(a.fingerprint);
    expect(tracker.commit(first.identity)).toBe(false);
    const second = tracker.observe(of(b));
    if (second.action !== 'load') throw new Error('expected load');
    expect(tracker.current()?.key.kid).toBe(a.fingerprint);
    expect(tracker.commit(second.identity)).toEqual({ previous: first.identity });
    expect(tracker.current()?.key.kid).toBe(b.fingerprint);
  });
});
