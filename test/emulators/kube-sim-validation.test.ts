import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeEmulator } from '../../emulators/kube/index.js';
import { call, startSeeded } from './kube-helpers.js';
import { daemonSet, deployment } from './kube-sim-helpers.js';

let emu: KubeEmulator;
beforeAll(async () => {
  // Apps validation is the apiserver's: no simulation needed.
  emu = await startSeeded({ tls: false });
});
afterAll(() => emu.close());

const DS_PATH = '/apis/apps/v1/namespaces/default/daemonsets';
const DEPLOY_PATH = '/apis/apps/v1/namespaces/default/deployments';

function ds(name: string, rollingUpdate: Record<string, unknown>) {
  return daemonSet(name, rollingUpdate as never, { namespace: 'default' });
}

describe('apps validation of rollout strategies', () => {
  it('rejects a DaemonSet with both maxSurge and maxUnavailable non-zero', async () => {
    const res = await call(emu, 'POST', DS_PATH, { body: ds('both', { maxSurge: 1, maxUnavailable: 1 }) });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Invalid',
      code: 422,
      message:
        'DaemonSet.apps "both" is invalid: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero',
      details: {
        name: 'both',
        group: 'apps',
        kind: 'DaemonSet',
        causes: [
          {
            reason: 'FieldValueInvalid',
            field: 'spec.updateStrategy.rollingUpdate.maxSurge',
            message: 'Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero',
          },
        ],
      },
    });
    expect(emu.getObject('apps/v1', 'DaemonSet', 'default', 'both')).toBeUndefined();
  });

  it('rejects a DaemonSet whose maxSurge and maxUnavailable are both zero (percentages included)', async () => {
    const res = await call(emu, 'POST', DS_PATH, { body: ds('zero', { maxSurge: '0%', maxUnavailable: 0 }) });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('DaemonSet.apps "zero" is invalid: spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0');
    expect(res.body.details.causes).toEqual([
      { reason: 'FieldValueRequired', field: 'spec.updateStrategy.rollingUpdate.maxUnavailable', message: 'Required value: cannot be 0 when maxSurge is 0' },
    ]);
  });

  it('checks int-or-percent values: no percentage above 100 %, no malformed strings, no negative ints', async () => {
    const over = await call(emu, 'POST', DS_PATH, { body: ds('over', { maxSurge: '150%', maxUnavailable: 0 }) });
    expect(over.status).toBe(422);
    expect(over.body.message).toBe(
      'DaemonSet.apps "over" is invalid: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
    );
    const malformed = await call(emu, 'POST', DS_PATH, { body: ds('malformed', { maxSurge: 0, maxUnavailable: 'ten' }) });
    expect(malformed.status).toBe(422);
    expect(malformed.body.message).toBe(
      `DaemonSet.apps "malformed" is invalid: [spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"ten"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%'), spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0]`,
    );
    const negative = await call(emu, 'POST', DS_PATH, { body: ds('negative', { maxSurge: -1, maxUnavailable: 1 }) });
    expect(negative.status).toBe(422);
    expect(negative.body.message).toBe(
      'DaemonSet.apps "negative" is invalid: [spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or equal to 0, spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:-1, StrVal:""}: may not be set when maxUnavailable is non-zero]',
    );
    const fine = await call(emu, 'POST', DS_PATH, { body: ds('pct-surge', { maxSurge: '25%', maxUnavailable: 0 }) });
    expect(fine.status).toBe(201);
  });

  it('rejects a strategy patch that breaks the rule and leaves the DaemonSet untouched', async () => {
    const created = await call(emu, 'POST', DS_PATH, { body: ds('patched', {}) });
    expect(created.status).toBe(201);
    expect(created.body.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    const res = await call(emu, 'PATCH', `${DS_PATH}/patched`, {
      body: { spec: { updateStrategy: { rollingUpdate: { maxSurge: 1 } } } },
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(res.status).toBe(422);
    expect(res.body.message).toContain('spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}');
    const stored = emu.getObject('apps/v1', 'DaemonSet', 'default', 'patched')!;
    expect(stored.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    // Surge instead of unavailability, as the rollout command does: allowed.
    const ok = await call(emu, 'PATCH', `${DS_PATH}/patched`, {
      body: { spec: { updateStrategy: { rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } } },
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(ok.status).toBe(200);
    expect(ok.body.metadata.generation).toBe(2);
  });

  it('rejects a Deployment with maxSurge and maxUnavailable both 0, and a rollingUpdate under Recreate', async () => {
    const zero = await call(emu, 'POST', DEPLOY_PATH, { body: deployment('zero', 1, { maxSurge: 0, maxUnavailable: 0 }) });
    expect(zero.status).toBe(422);
    expect(zero.body.message).toBe(
      'Deployment.apps "zero" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0',
    );
    const created = await call(emu, 'POST', DEPLOY_PATH, { body: deployment('recreate', 1) });
    expect(created.body.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    const res = await call(emu, 'PATCH', `${DEPLOY_PATH}/recreate`, {
      body: { spec: { strategy: { type: 'Recreate' } } },
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe("Deployment.apps \"recreate\" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'");
    const fixed = await call(emu, 'PATCH', `${DEPLOY_PATH}/recreate`, {
      body: { spec: { strategy: { type: 'Recreate', rollingUpdate: null } } },
      contentType: 'application/merge-patch+json',
    });
    expect(fixed.status).toBe(200);
    expect(fixed.body.spec.strategy).toEqual({ type: 'Recreate' });
  });

  it('bumps generation and the DaemonSet template generation on template changes only', async () => {
    const created = await call(emu, 'POST', DS_PATH, { body: ds('gen', {}) });
    expect(created.body.metadata.generation).toBe(1);
    expect(created.body.metadata.annotations).toEqual({ 'deprecated.daemonset.template.generation': '1' });
    const labelled = await call(emu, 'PATCH', `${DS_PATH}/gen`, { body: { metadata: { labels: { team: 'x' } } }, contentType: 'application/merge-patch+json' });
    expect(labelled.body.metadata.generation).toBe(1);
    const strategy = await call(emu, 'PATCH', `${DS_PATH}/gen`, {
      body: { spec: { updateStrategy: { rollingUpdate: { maxUnavailable: 2 } } } },
      contentType: 'application/merge-patch+json',
    });
    expect(strategy.body.metadata.generation).toBe(2);
    expect(strategy.body.metadata.annotations['deprecated.daemonset.template.generation']).toBe('1');
    const restarted = await call(emu, 'PATCH', `${DS_PATH}/gen`, {
      body: { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2025-01-01T00:00:00Z' } } } } },
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(restarted.body.metadata.generation).toBe(3);
    expect(restarted.body.metadata.annotations['deprecated.daemonset.template.generation']).toBe('2');
  });

  it('requires restartPolicy Always in a DaemonSet template and a progress deadline above minReadySeconds', async () => {
    const body = ds('never', {});
    (body['spec'] as { template: { spec: Record<string, unknown> } }).template.spec['restartPolicy'] = 'Never';
    const res = await call(emu, 'POST', DS_PATH, { body });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('DaemonSet.apps "never" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"');
    const slow = await call(emu, 'POST', DEPLOY_PATH, { body: deployment('slow', 1, {}, { minReadySeconds: 700 }) });
    expect(slow.status).toBe(422);
    expect(slow.body.message).toBe('Deployment.apps "slow" is invalid: spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds');
  });
});
