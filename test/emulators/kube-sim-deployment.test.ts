import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../emulators/kube/index.js';
import { POD_TEMPLATE_HASH_LABEL, type Pod } from '../../emulators/kube/simulation/index.js';
import { kubeConfigFor } from './kube-helpers.js';
import { deployment, deploymentRolledOut, isReady, nodes, podsOf, restart, type SimCluster, startCluster, status, stopCluster, trackReadiness } from './kube-sim-helpers.js';

let cluster: SimCluster | undefined;
afterEach(async () => {
  const done = cluster;
  cluster = undefined;
  await stopCluster(done);
});

const NS = 'default';

function replicaSets(cluster: SimCluster, app: string): KubeObject[] {
  return cluster.emu.listObjects('apps/v1', 'ReplicaSet', NS).filter((rs) => rs.metadata.labels?.['app'] === app);
}

function live(pods: Pod[]): Pod[] {
  return pods.filter((p) => !p.metadata.deletionTimestamp);
}

function condition(obj: KubeObject | undefined, type: string): Record<string, string> | undefined {
  return ((obj?.['status'] as { conditions?: Array<Record<string, string>> } | undefined)?.conditions ?? []).find((c) => c['type'] === type);
}

describe('Deployment controller', () => {
  it('rolls with maxSurge 1 / maxUnavailable 0: never fewer Ready Pods than replicas, never more than replicas + 1', async () => {
    cluster = await startCluster({ nodes: nodes(3) });
    const { emu, sim } = cluster;
    const apps = kubeConfigFor(emu).makeApiClient(AppsV1Api);
    await apps.createNamespacedDeployment({ namespace: NS, body: deployment('web', 3, { maxSurge: 1, maxUnavailable: 0 }) as never });
    await sim.waitFor(() => deploymentRolledOut(emu, NS, 'web'), { what: 'the first rollout' });
    const [first] = replicaSets(cluster, 'web');
    expect(first!.metadata.name).toBe(`web-${first!.metadata.labels?.[POD_TEMPLATE_HASH_LABEL]}`);
    expect(first!.metadata.annotations).toMatchObject({
      'deployment.kubernetes.io/revision': '1',
      'deployment.kubernetes.io/desired-replicas': '3',
      'deployment.kubernetes.io/max-replicas': '4',
    });
    expect(podsOf(emu, NS, 'web').every((p) => p.metadata.name?.startsWith(`${first!.metadata.name}-`))).toBe(true);

    const seen = trackReadiness(emu, NS, 'web');
    await apps.patchNamespacedDeployment(
      { name: 'web', namespace: NS, body: { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2025-01-01T00:00:00Z' } } } } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    await sim.waitFor(() => deploymentRolledOut(emu, NS, 'web') && live(podsOf(emu, NS, 'web')).length === 3 && emu.getObject('apps/v1', 'Deployment', NS, 'web')!.metadata.generation === 2, {
      what: 'the second rollout',
    });
    seen.stop();
    expect(seen.minReady).toBe(3);
    expect(seen.maxLive).toBe(4);

    const d = emu.getObject('apps/v1', 'Deployment', NS, 'web')!;
    expect(d.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('2');
    const rsList = replicaSets(cluster, 'web');
    const fresh = rsList.find((rs) => rs.metadata.annotations?.['deployment.kubernetes.io/revision'] === '2')!;
    expect((fresh['spec'] as { replicas: number }).replicas).toBe(3);
    expect(rsList.filter((rs) => rs !== fresh).map((rs) => (rs['spec'] as { replicas: number }).replicas)).toEqual([0]);
    expect(status(d)).toMatchObject({ observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 });
    expect('unavailableReplicas' in status(d)).toBe(false);
    expect(condition(d, 'Available')).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' });
    expect(condition(d, 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'NewReplicaSetAvailable',
      message: `ReplicaSet "${fresh.metadata.name}" has successfully progressed.`,
    });
    const scaling = emu
      .listObjects('v1', 'Event', NS)
      .filter((e) => e['reason'] === 'ScalingReplicaSet')
      .map((e) => e['message']);
    expect(scaling).toContain(`Scaled up replica set ${fresh.metadata.name} from 0 to 1`);
    expect(scaling).toContain(`Scaled down replica set ${first!.metadata.name} from 3 to 2`);
  });

  it('rolls with maxSurge 0 / maxUnavailable 1: an old Pod goes before its replacement is created', async () => {
    cluster = await startCluster({ nodes: nodes(3) });
    const { emu, sim } = cluster;
    emu.createObject(deployment('api', 3, { maxSurge: 0, maxUnavailable: 1 }));
    await sim.waitFor(() => deploymentRolledOut(emu, NS, 'api'), { what: 'the first rollout' });
    const seen = trackReadiness(emu, NS, 'api');
    restart(emu, 'Deployment', NS, 'api', '2025-01-01T00:00:00Z');
    await sim.waitFor(() => deploymentRolledOut(emu, NS, 'api') && emu.getObject('apps/v1', 'Deployment', NS, 'api')!.metadata.generation === 2, {
      what: 'the second rollout',
    });
    seen.stop();
    expect(seen.maxLive).toBe(3);
    expect(seen.minReady).toBe(2);
  });

  it('rounds a percentage surge up and unavailability down: 25%/25% of 1 replica is create-before-delete', async () => {
    cluster = await startCluster({ nodes: nodes(1) });
    const { emu, sim } = cluster;
    const d = deployment('solo', 1);
    delete (d['spec'] as { strategy?: unknown }).strategy;
    emu.createObject(d);
    await sim.waitFor(() => deploymentRolledOut(emu, NS, 'solo'), { what: 'the first rollout' });
    expect((emu.getObject('apps/v1', 'Deployment', NS, 'solo')!['spec'] as { strategy: unknown }).strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
    });
    const seen = trackReadiness(emu, NS, 'solo');
    restart(emu, 'Deployment', NS, 'solo', '2025-01-01T00:00:00Z');
    await sim.waitFor(() => deploymentRolledOut(emu, NS, 'solo') && replicaSets(cluster!, 'solo').length === 2, { what: 'the second rollout' });
    seen.stop();
    expect(seen.minReady).toBe(1);
    expect(seen.maxLive).toBe(2);
  });

  it('reports Ready before available while minReadySeconds runs', async () => {
    cluster = await startCluster({ nodes: nodes(2) });
    const { emu, sim } = cluster;
    emu.createObject(deployment('slow', 2, { maxSurge: 1, maxUnavailable: 0 }, { minReadySeconds: 3 }));
    const seen = await sim.waitFor(
      () => {
        const s = status(emu.getObject('apps/v1', 'Deployment', NS, 'slow'));
        return (s['readyReplicas'] ?? 0) === 2 && (s['availableReplicas'] ?? 0) === 0 ? s : undefined;
      },
      { what: 'two Ready, none available' },
    );
    expect(seen['unavailableReplicas']).toBe(2);
    expect(condition(emu.getObject('apps/v1', 'Deployment', NS, 'slow'), 'Available')).toMatchObject({ status: 'False', reason: 'MinimumReplicasUnavailable' });
    await sim.waitFor(() => deploymentRolledOut(emu, NS, 'slow'), { what: 'availability' });
  });

  it('stalls on a never-Ready replacement, keeps the old Pods, and times out progressing', async () => {
    cluster = await startCluster({ nodes: nodes(3) });
    const { emu, sim } = cluster;
    emu.createObject(deployment('stuck', 3, { maxSurge: 1, maxUnavailable: 0 }, { progressDeadlineSeconds: 5 }));
    await sim.waitFor(() => deploymentRolledOut(emu, NS, 'stuck'), { what: 'the first rollout' });
    const before = podsOf(emu, NS, 'stuck');
    restart(emu, 'Deployment', NS, 'stuck', '2025-01-01T00:00:00Z', { 'sim.kube-emulator.local/readiness': 'never' });
    const timedOut = await sim.waitFor(
      () => {
        const c = condition(emu.getObject('apps/v1', 'Deployment', NS, 'stuck'), 'Progressing');
        return c?.['reason'] === 'ProgressDeadlineExceeded' ? c : undefined;
      },
      { what: 'ProgressDeadlineExceeded' },
    );
    const fresh = replicaSets(cluster, 'stuck').find((rs) => rs.metadata.annotations?.['deployment.kubernetes.io/revision'] === '2')!;
    expect(timedOut).toMatchObject({ status: 'False', message: `ReplicaSet "${fresh.metadata.name}" has timed out progressing.` });
    const pods = podsOf(emu, NS, 'stuck');
    expect(pods).toHaveLength(4);
    for (const old of before) {
      const now = pods.find((p) => p.metadata.uid === old.metadata.uid);
      expect(now?.metadata.deletionTimestamp).toBeUndefined();
      expect(now && isReady(now)).toBe(true);
    }
    expect(status(emu.getObject('apps/v1', 'Deployment', NS, 'stuck'))).toMatchObject({ replicas: 4, updatedReplicas: 1, availableReplicas: 3, unavailableReplicas: 1 });
  });

  it('does not roll a paused Deployment but still observes its generation, and rolls once resumed', async () => {
    cluster = await startCluster({ nodes: nodes(2) });
    const { emu, sim } = cluster;
    emu.createObject(deployment('held', 2, { maxSurge: 1, maxUnavailable: 0 }));
    await sim.waitFor(() => deploymentRolledOut(emu, NS, 'held'), { what: 'the first rollout' });
    const pods = podsOf(emu, NS, 'held').map((p) => p.metadata.uid);
    const obj = emu.getObject('apps/v1', 'Deployment', NS, 'held')!;
    (obj['spec'] as { paused: boolean }).paused = true;
    emu.updateObject(obj);
    restart(emu, 'Deployment', NS, 'held', '2025-01-01T00:00:00Z');
    const paused = await sim.waitFor(
      () => {
        const d = emu.getObject('apps/v1', 'Deployment', NS, 'held')!;
        return status(d)['observedGeneration'] === d.metadata.generation && condition(d, 'Progressing')?.['reason'] === 'DeploymentPaused' ? d : undefined;
      },
      { what: 'the paused Deployment to be observed' },
    );
    await sim.settle();
    expect(paused.metadata.generation).toBe(3);
    expect(condition(paused, 'Progressing')).toMatchObject({ status: 'Unknown', message: 'Deployment is paused' });
    expect(replicaSets(cluster, 'held')).toHaveLength(1);
    expect(podsOf(emu, NS, 'held').map((p) => p.metadata.uid)).toEqual(pods);
    expect(deploymentRolledOut(emu, NS, 'held')).toBe(false);

    const again = emu.getObject('apps/v1', 'Deployment', NS, 'held')!;
    (again['spec'] as { paused: boolean }).paused = false;
    emu.updateObject(again);
    await sim.waitFor(() => deploymentRolledOut(emu, NS, 'held') && replicaSets(cluster!, 'held').length === 2, { what: 'the resumed rollout' });
    expect(live(podsOf(emu, NS, 'held')).some((p) => pods.includes(p.metadata.uid))).toBe(false);
  });

  it('scales proportionally and deletes a ReplicaSet with its Pods through the garbage collector', async () => {
    cluster = await startCluster({ nodes: nodes(2) });
    const { emu, sim } = cluster;
    emu.createObject(deployment('scale', 2, { maxSurge: 1, maxUnavailable: 0 }));
    await sim.waitFor(() => deploymentRolledOut(emu, NS, 'scale'), { what: 'the first rollout' });
    const d = emu.getObject('apps/v1', 'Deployment', NS, 'scale')!;
    (d['spec'] as { replicas: number }).replicas = 5;
    emu.updateObject(d);
    await sim.waitFor(() => deploymentRolledOut(emu, NS, 'scale') && live(podsOf(emu, NS, 'scale')).length === 5, { what: 'scale up' });
    expect(replicaSets(cluster, 'scale')[0]!.metadata.annotations?.['deployment.kubernetes.io/desired-replicas']).toBe('5');
    emu.deleteObject('apps/v1', 'Deployment', NS, 'scale');
    await sim.waitFor(() => replicaSets(cluster!, 'scale').length === 0 && live(podsOf(emu, NS, 'scale')).length === 0, { what: 'garbage collection' });
  });
});
