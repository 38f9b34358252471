import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  buildEvent,
  EventReason,
  type EventsWriter,
  identityNote,
  microTime,
  recordEvent,
  secretIdentityEvent,
} from '../../src/kube/events.js';

const FP_NEW = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';
const FP_OLD = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';
const URN_NEW = 'urn:dd:apps:on-prem-runner:us1:123:11111111-2222-3333-4444-555555555555';
const URN_OLD = 'urn:dd:apps:on-prem-runner:us1:123:aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
const secret = { kind: 'Secret', apiVersion: 'v1', namespace: 'datadog', name: 'private-action-runner-identity', uid: 'u-1' };
const fixed = () => new Date('2026-03-04T05:06:07.089Z');

function writer(fn: EventsWriter['createNamespacedEvent']): EventsWriter {
  return { createNamespacedEvent: fn };
}

describe('identityNote', () => {
  it('names the new and previous fingerprint and URN, nothing else', () => {
    expect(identityNote('rotated', { urn: URN_NEW, fingerprint: FP_NEW }, { urn: URN_OLD, fingerprint: FP_OLD })).toBe(
      `rotated: fingerprint ${FP_NEW} (urn ${URN_NEW}); previous fingerprint ${FP_OLD} (urn ${URN_OLD})`,
    );
    expect(identityNote('rotated', { urn: URN_NEW, fingerprint: FP_NEW }, {}, 'first rotation')).toBe(
      `rotated: fingerprint ${FP_NEW} (urn ${URN_NEW}); previous fingerprint none (urn none); first rotation`,
    );
  });

  it('does not echo values that are not a fingerprint or a URN (a key passed by mistake stays out)', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----';
    const note = identityNote('rotated', { urn: 'urn:evil\u001b[31m', fingerprint: pem }, { urn: URN_OLD, fingerprint: FP_OLD });
    expect(note).toBe(
      `rotated: fingerprint (not a valid value) (urn (not a valid value)); previous fingerprint ${FP_OLD} (urn ${URN_OLD})`,
    );
  });
});

describe('secretIdentityEvent', () => {
  it('builds the IdentityRotated / IdentityRolledBack Event on the Secret', () => {
    expect(secretIdentityEvent('rotated', secret, { urn: URN_NEW, fingerprint: FP_NEW }, { urn: URN_OLD, fingerprint: FP_OLD })).toEqual({
      regarding: secret,
      reason: 'IdentityRotated',
      action: 'Rotate',
      type: 'Normal',
      note: `identity rotated: fingerprint ${FP_NEW} (urn ${URN_NEW}); previous fingerprint ${FP_OLD} (urn ${URN_OLD})`,
    });
    const back = secretIdentityEvent(
      'rolled back',
      { namespace: 'datadog', name: 's' },
      { urn: URN_OLD, fingerprint: FP_OLD },
      { urn: URN_NEW, fingerprint: FP_NEW },
    );
    expect(back).toMatchObject({
      reason: 'IdentityRolledBack',
      action: 'Rollback',
      regarding: { kind: 'Secret', apiVersion: 'v1', namespace: 'datadog', name: 's' },
    });
    expect(back.regarding).not.toHaveProperty('uid');
  });
});

describe('buildEvent', () => {
  it('fills the events.k8s.io/v1 fields the apiserver requires', () => {
    const ev = buildEvent(
      { regarding: secret, reason: EventReason.IdentityRotated, note: 'n', type: 'Normal', action: 'Rotate' },
      { instance: 'node-1', now: fixed },
    );
    expect(ev).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { namespace: 'datadog' },
      eventTime: '2026-03-04T05:06:07.089000Z',
      reportingController: 'par-identity',
      reportingInstance: 'node-1',
      action: 'Rotate',
      reason: 'IdentityRotated',
      type: 'Normal',
      note: 'n',
      regarding: secret,
    });
    expect(ev.metadata?.name).toMatch(/^private-action-runner-identity\.[0-9a-f]+$/);
  });

  it('withholds a note that carries key material, and cuts a long instance name', () => {
    const jwk = '{"kty":"EC","crv":"P-256","d":"secret","x":"a","y":"b"}';
    const ev = buildEvent(
      { regarding: secret, reason: EventReason.IdentityRotated, note: `oops ${jwk}`, type: 'Normal', action: 'Rotate' },
      { instance: 'h'.repeat(300), now: fixed },
    );
    expect(ev.note).toBe('(note withheld: it looked like key material)');
    // The apiserver's limit is 128 bytes of UTF-8; the cut is marked ("…" is 3 of them).
    expect(Buffer.byteLength(ev.reportingInstance!)).toBe(128);
    expect(ev.reportingInstance).toMatch(/^h+… \(\d+ more characters\)$/);
    const blob = buildEvent({
      regarding: secret,
      reason: EventReason.IdentityRotated,
      note: `x ${'QUJD'.repeat(40)}`,
      type: 'Normal',
      action: 'Rotate',
    });
    expect(blob.note).toBe('(note withheld: it looked like key material)');
  });

  it('writes eventTime as a MicroTime (six fractional digits)', () => {
    expect(microTime(new Date('2026-01-01T00:00:00.000Z'))).toBe('2026-01-01T00:00:00.000000Z');
  });
});

describe('recordEvent', () => {
  const input = { regarding: secret, reason: EventReason.IdentityRotated, note: 'rotated', type: 'Normal' as const, action: 'Rotate' };

  it('returns the created name', async () => {
    const calls: unknown[] = [];
    const result = await recordEvent(
      writer(async (p) => {
        calls.push(p);
        return { ...p.body, metadata: { ...p.body.metadata, name: 'made' } };
      }),
      input,
      { now: fixed, instance: 'h' },
    );
    expect(result).toEqual({ recorded: true, name: 'made', namespace: 'datadog' });
    expect(calls).toHaveLength(1);
  });

  it('turns a 403 into a warning that names the missing rule, never an exception', async () => {
    const body = JSON.stringify({
      kind: 'Status',
      code: 403,
      message: 'events.events.k8s.io is forbidden: User "x" cannot create resource "events"',
    });
    const result = await recordEvent(
      writer(async () => {
        throw new ApiException(403, 'Forbidden', body, {});
      }),
      input,
    );
    expect(result).toEqual({
      recorded: false,
      reason: 'IdentityRotated',
      forbidden: true,
      warning:
        'Event IdentityRotated not recorded on Secret datadog/private-action-runner-identity: forbidden. Grant create on events (API group events.k8s.io) in namespace datadog to keep an audit trail in the cluster.',
    });
  });

  it('turns other API errors and network errors into warnings with the server message sanitised', async () => {
    const server = await recordEvent(
      writer(async () => {
        throw new ApiException(
          422,
          'Invalid',
          JSON.stringify({ message: 'Event.events.k8s.io "x" is invalid:\u001b[2J action: Required value' }),
          {},
        );
      }),
      input,
    );
    expect(server).toMatchObject({
      recorded: false,
      forbidden: false,
      warning:
        'Event IdentityRotated not recorded on Secret datadog/private-action-runner-identity: HTTP 422 Event.events.k8s.io "x" is invalid: action: Required value',
    });
    const network = await recordEvent(
      writer(async () => {
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
      }),
      input,
    );
    expect(network).toMatchObject({
      recorded: false,
      forbidden: false,
      warning: 'Event IdentityRotated not recorded on Secret datadog/private-action-runner-identity: connect ECONNREFUSED 127.0.0.1:1',
    });
  });
});
