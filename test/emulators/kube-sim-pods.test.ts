import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeEmulator, KubeObject } from '../../emulators/kube/index.js';
import type { Pod } from '../../emulators/kube/simulation/index.js';
import { kubeConfigFor, parseErrorBody, RawWatch } from './kube-helpers.js';
import { isReady, nodes, type SimCluster, startCluster, stopCluster } from './kube-sim-helpers.js';

let cluster: SimCluster | undefined;
afterEach(async () => {
  const done = cluster;
  cluster = undefined;
  await stopCluster(done);
});

function pod(name: string, extra: Record<string, unknown> = {}, annotations?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', ...(annotations ? { annotations } : {}) },
    spec: { terminationGracePeriodSeconds: 5, containers: [{ name: 'main', image: 'app:1', readinessProbe: { exec: { command: ['true'] } } }], ...extra },
  };
}

function get(emu: KubeEmulator, name: string): Pod | undefined {
  return emu.getObject('v1', 'Pod', 'default', name) as Pod | undefined;
}

describe('simulated kubelet and graceful deletion', () => {
  it('starts a bound Pod, makes it Ready after the probe delay, and shows the usual status', async () => {
    cluster = await startCluster({ nodes: nodes(1), kubelet: { startDelayMs: 30, readyDelayMs: 40 } });
    const { emu, sim } = cluster;
    const t0 = Date.now();
    emu.createObject(pod('probed'));
    emu.createObject(pod('plain', { containers: [{ name: 'main', image: 'app:1' }] }));
    const running = await sim.waitFor(() => (get(emu, 'probed')?.status?.phase === 'Running' ? Date.now() : undefined), { what: 'Running' });
    const ready = await sim.waitFor(() => (isReady(get(emu, 'probed')!) ? Date.now() : undefined), { what: 'Ready' });
    // Only bounds measured from t0 (taken before the Pod exists) are sound: the kubelet cannot start
    // the Pod before t0 + startDelayMs nor make it Ready before t0 + startDelayMs + readyDelayMs, and
    // each observation comes after the change. A difference of two observation times is not (under
    // load "Running" may be seen late, or in the same pass as "Ready").
    expect(running - t0).toBeGreaterThanOrEqual(30);
    expect(ready - t0).toBeGreaterThanOrEqual(30 + 40);
    const p = get(emu, 'probed')!;
    expect(p.spec.nodeName).toBe('node-a');
    expect(p.status).toMatchObject({ phase: 'Running', hostIP: expect.any(String), podIP: expect.stringMatching(/^10\.244\./), qosClass: 'BestEffort' });
    expect(p.status?.conditions?.map((c) => `${c.type}=${c.status}`).sort()).toEqual([
      'ContainersReady=True',
      'Initialized=True',
      'PodReadyToStartContainers=True',
      'PodScheduled=True',
      'Ready=True',
    ]);
    expect(p.status?.containerStatuses?.[0]).toMatchObject({ name: 'main', ready: true, started: true, restartCount: 0, state: { running: {} } });
    // Without a readinessProbe "Ready" only means started: no probe delay.
    const plain = get(emu, 'plain')!;
    expect(isReady(plain)).toBe(true);
  });

  it('keeps a never-ready Pod Running but unready, crash-loops, and fails image pulls', async () => {
    cluster = await startCluster({ nodes: nodes(1), secondMs: 5 });
    const { emu, sim } = cluster;
    emu.createObject(pod('never', {}, { 'sim.kube-emulator.local/readiness': 'never' }));
    emu.createObject(pod('crash', {}, { 'sim.kube-emulator.local/crash-loop': 'true' }));
    emu.createObject(pod('nopull', {}, { 'sim.kube-emulator.local/image-pull': 'fail' }));
    const never = await sim.waitFor(() => (get(emu, 'never')?.status?.phase === 'Running' ? get(emu, 'never') : undefined), { what: 'never Running' });
    expect(never.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [main]',
    });
    const crash = await sim.waitFor(
      () => {
        const p = get(emu, 'crash');
        return Number(p?.status?.containerStatuses?.[0]?.['restartCount'] ?? 0) >= 2 ? p : undefined;
      },
      { what: 'two restarts' },
    );
    expect(crash.status?.containerStatuses?.[0]).toMatchObject({ ready: false, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, reason: 'Error' } } });
    expect(isReady(crash)).toBe(false);
    const nopull = await sim.waitFor(
      () => (get(emu, 'nopull')?.status?.containerStatuses?.[0]?.['state'] as { waiting?: { reason: string } } | undefined)?.waiting?.reason === 'ImagePullBackOff' && get(emu, 'nopull'),
      { what: 'ImagePullBackOff' },
    );
    expect(nopull.status?.phase).toBe('Pending');
    const reasons = emu.listObjects('v1', 'Event', 'default').map((e) => `${(e['involvedObject'] as { name: string }).name}:${e['reason']}`);
    expect(reasons).toEqual(expect.arrayContaining(['never:Unhealthy', 'crash:BackOff', 'nopull:Failed']));
  });

  it('lets a behaviour function override annotations and defaults', async () => {
    cluster = await startCluster({ nodes: nodes(1) });
    const { emu, sim } = cluster;
    sim.setPodBehavior((p) => (p.metadata.name === 'slow' ? { readiness: 'never' } : undefined));
    emu.createObject(pod('slow', {}, { 'sim.kube-emulator.local/readiness': 'ready' }));
    emu.createObject(pod('fast'));
    await sim.waitFor(() => isReady(get(emu, 'fast')!) && get(emu, 'slow')?.status?.phase === 'Running', { what: 'both running' });
    await sim.settle();
    expect(isReady(get(emu, 'slow')!)).toBe(false);
    sim.setPodBehavior(undefined);
    await sim.waitFor(() => isReady(get(emu, 'slow')!), { what: 'slow Ready once the override is gone' });
  });

  it('keeps a deleted bound Pod Terminating for its grace period, then its kubelet removes it', async () => {
    cluster = await startCluster({ nodes: nodes(1) });
    const { emu, sim } = cluster;
    const core = kubeConfigFor(emu).makeApiClient(CoreV1Api);
    emu.createObject(pod('graceful'));
    await sim.waitFor(() => isReady(get(emu, 'graceful')!), { what: 'Ready' });
    const watch = await RawWatch.open(emu, `/api/v1/namespaces/default/pods?watch=true&fieldSelector=metadata.name%3Dgraceful&resourceVersion=${emu.resourceVersion}`);
    const t0 = Date.now();
    const answer = (await core.deleteNamespacedPod({ name: 'graceful', namespace: 'default' })) as V1Pod;
    expect(answer.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    expect(answer.metadata?.deletionGracePeriodSeconds).toBe(5);
    expect(get(emu, 'graceful')?.metadata.deletionTimestamp).toBeDefined();
    const [modified, deleted] = await watch.waitFor(2);
    watch.close();
    expect(modified?.type).toBe('MODIFIED');
    expect(deleted?.type).toBe('DELETED');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(5 * sim.secondMs);
    expect(get(emu, 'graceful')).toBeUndefined();
    expect(emu.listObjects('v1', 'Event', 'default').some((e) => e['reason'] === 'Killing' && e['message'] === 'Stopping container main')).toBe(true);
  });

  it('deletes at once a Pod without a node, a finished Pod, and one deleted with gracePeriodSeconds 0', async () => {
    cluster = await startCluster({ nodes: [] });
    const { emu } = cluster;
    const core = kubeConfigFor(emu).makeApiClient(CoreV1Api);
    emu.createObject(pod('unbound'));
    await core.deleteNamespacedPod({ name: 'unbound', namespace: 'default' });
    expect(get(emu, 'unbound')).toBeUndefined();
    const done = emu.createObject(pod('done', { nodeName: 'gone-node' }));
    emu.updateObject({ ...done, status: { phase: 'Succeeded' } });
    await core.deleteNamespacedPod({ name: 'done', namespace: 'default' });
    expect(get(emu, 'done')).toBeUndefined();
    emu.createObject(pod('forced', { nodeName: 'gone-node' }));
    await core.deleteNamespacedPod({ name: 'forced', namespace: 'default', gracePeriodSeconds: 0 });
    expect(get(emu, 'forced')).toBeUndefined();
    emu.createObject(pod('stays', { nodeName: 'gone-node' }));
    await core.deleteNamespacedPod({ name: 'stays', namespace: 'default' });
    // No kubelet confirms on a node that does not exist: Terminating it stays.
    expect(get(emu, 'stays')?.metadata.deletionTimestamp).toBeDefined();
  });

  it('answers 409 to a uid-preconditioned delete that meets a recreated Pod of the same name', async () => {
    cluster = await startCluster({ nodes: nodes(1) });
    const { emu, sim } = cluster;
    const core = kubeConfigFor(emu).makeApiClient(CoreV1Api);
    const first = emu.createObject(pod('agent-x'));
    await sim.waitFor(() => isReady(get(emu, 'agent-x')!), { what: 'Ready' });
    await core.deleteNamespacedPod({ name: 'agent-x', namespace: 'default', body: { preconditions: { uid: first.metadata.uid } } });
    await sim.waitFor(() => !get(emu, 'agent-x'), { what: 'the first Pod to be gone' });
    const second = emu.createObject(pod('agent-x'));
    let failure: { code: number; body: Record<string, unknown> } | undefined;
    try {
      await core.deleteNamespacedPod({ name: 'agent-x', namespace: 'default', body: { preconditions: { uid: first.metadata.uid } } });
    } catch (e) {
      failure = { code: (e as { code: number }).code, body: parseErrorBody(e) };
    }
    expect(failure?.code).toBe(409);
    expect(failure?.body).toMatchObject({
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on pods "agent-x": Precondition failed: UID in precondition: ${first.metadata.uid}, UID in object meta: ${second.metadata.uid}`,
    });
    expect(get(emu, 'agent-x')?.metadata.uid).toBe(second.metadata.uid);
    expect(get(emu, 'agent-x')?.metadata.deletionTimestamp).toBeUndefined();
  });

  it('taints nodes by condition, marks their Pods unready, and leaves Terminating Pods on a dead node', async () => {
    cluster = await startCluster({ nodes: nodes(1) });
    const { emu, sim } = cluster;
    emu.createObject(pod('on-a'));
    emu.createObject(pod('leaving'));
    await sim.waitFor(() => isReady(get(emu, 'on-a')!) && isReady(get(emu, 'leaving')!), { what: 'Ready' });
    sim.setNodeCondition('node-a', 'MemoryPressure', 'True');
    sim.cordon('node-a');
    await sim.waitFor(() => ((emu.getObject('v1', 'Node', undefined, 'node-a')!['spec'] as { taints?: unknown[] }).taints ?? []).length === 2, { what: 'taints' });
    expect((emu.getObject('v1', 'Node', undefined, 'node-a')!['spec'] as { taints: unknown[] }).taints).toEqual([
      { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' },
    ]);
    sim.setNodeCondition('node-a', 'Ready', 'False');
    emu.deleteObject('v1', 'Pod', 'default', 'leaving');
    await sim.waitFor(() => !isReady(get(emu, 'on-a')!), { what: 'the Pod to be marked unready' });
    await new Promise((resolve) => setTimeout(resolve, 8 * sim.secondMs));
    await sim.settle();
    expect(get(emu, 'leaving')?.metadata.deletionTimestamp).toBeDefined();
    const taints = (emu.getObject('v1', 'Node', undefined, 'node-a')!['spec'] as { taints: Array<{ key: string; effect: string }> }).taints;
    expect(taints.map((t) => `${t.key}:${t.effect}`)).toEqual([
      'node.kubernetes.io/memory-pressure:NoSchedule',
      'node.kubernetes.io/unschedulable:NoSchedule',
      'node.kubernetes.io/not-ready:NoSchedule',
      'node.kubernetes.io/not-ready:NoExecute',
    ]);
    sim.setNodeCondition('node-a', 'Ready', 'True');
    await sim.waitFor(() => !get(emu, 'leaving') && isReady(get(emu, 'on-a')!), { what: 'the node to recover' });
  });
});
