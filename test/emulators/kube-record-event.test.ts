import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeEmulator, KubeObject } from '../../emulators/kube/index.js';
import { resolveCluster } from '../../src/kube/cluster-connection.js';
import { EventReason, identityNote, recordEvent } from '../../src/kube/events.js';
import { secret, startSeeded } from './kube-helpers.js';

// recordEvent through client-node against the emulator: what the apiserver stores, and a token
// without create on events getting a warning instead of an exception.

let emu: KubeEmulator;
let dir: string;
let stored: KubeObject;
const FP = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';
const URN = 'urn:dd:apps:on-prem-runner:us1:123:11111111-2222-3333-4444-555555555555';

async function connection(token: string) {
  const path = join(dir, `${token}.kubeconfig`);
  await emu.writeKubeconfig(path, { token, namespace: 'ns1' });
  return resolveCluster({ kubeconfig: path, env: {} });
}

beforeAll(async () => {
  emu = await startSeeded();
  dir = await mkdtemp(join(tmpdir(), 'record-event-'));
  stored = emu.createObject(secret('private-action-runner-identity', 'ns1'));
  emu.addToken('writer', {
    user: 'system:serviceaccount:ns1:rotator',
    namespace: 'ns1',
    rules: [{ apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] }],
  });
  emu.addToken('reader', {
    user: 'system:serviceaccount:ns1:reader',
    namespace: 'ns1',
    rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
  });
});
afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

describe('recordEvent against the emulator', () => {
  it('stores an events.k8s.io/v1 Event that the core/v1 view shows on the Secret', async () => {
    const note = identityNote('rotated', { urn: URN, fingerprint: FP }, {});
    const result = await recordEvent(
      await connection('writer'),
      {
        regarding: { kind: 'Secret', apiVersion: 'v1', namespace: 'ns1', name: stored.metadata.name!, uid: stored.metadata.uid! },
        reason: EventReason.IdentityRotated,
        note,
        type: 'Normal',
        action: 'Rotate',
      },
      { instance: 'cronjob-pod-1' },
    );
    expect(result.recorded).toBe(true);
    const name = (result as { name: string }).name;
    const core = emu.getObject('v1', 'Event', 'ns1', name)!;
    expect(core).toMatchObject({
      involvedObject: { kind: 'Secret', name: 'private-action-runner-identity', uid: stored.metadata.uid },
      reason: 'IdentityRotated',
      message: note,
      reportingComponent: 'par-identity',
      reportingInstance: 'cronjob-pod-1',
      action: 'Rotate',
      type: 'Normal',
    });
    expect(String(core['eventTime'])).toMatch(/\.\d{6}Z$/);
    expect(emu.requests.find((r) => r.verb === 'create' && r.resource === 'events')?.path).toBe(
      '/apis/events.k8s.io/v1/namespaces/ns1/events',
    );
  });

  it('returns a warning when the token may not create Events, and writes nothing', async () => {
    const before = emu.listObjects('v1', 'Event', 'ns1').length;
    const result = await recordEvent(await connection('reader'), {
      regarding: { kind: 'Secret', apiVersion: 'v1', namespace: 'ns1', name: 'private-action-runner-identity' },
      reason: EventReason.IdentityRolledBack,
      note: 'rolled back',
      type: 'Normal',
      action: 'Rollback',
    });
    expect(result).toMatchObject({ recorded: false, forbidden: true });
    expect((result as { warning: string }).warning).toContain('Grant create on events (API group events.k8s.io) in namespace ns1');
    expect(emu.listObjects('v1', 'Event', 'ns1')).toHaveLength(before);
    expect(emu.requests.some((r) => r.resource === 'events' && r.status === 403)).toBe(true);
  });
});
