import { afterEach, describe, expect, it } from 'vitest';
import type { KubeEmulator, KubeObject } from '../../emulators/kube/index.js';
import type { Pod, SimNodeSpec } from '../../emulators/kube/simulation/index.js';
import { isReady, nodes, type SimCluster, startCluster, stopCluster } from './kube-sim-helpers.js';

let cluster: SimCluster | undefined;
afterEach(async () => {
  const done = cluster;
  cluster = undefined;
  await stopCluster(done);
});

function pod(name: string, spec: Record<string, unknown> = {}, requests: Record<string, string> = { cpu: '100m', memory: '64Mi' }, port?: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      terminationGracePeriodSeconds: 3,
      containers: [{ name: 'main', image: 'app:1', resources: { requests }, ...(port ? { ports: [{ containerPort: port, hostPort: port }] } : {}) }],
      ...spec,
    },
  };
}

function get(emu: KubeEmulator, name: string): Pod | undefined {
  return emu.getObject('v1', 'Pod', 'default', name) as Pod | undefined;
}

/** Creates a Pod and waits until it is Ready. */
async function runReady(c: SimCluster, name: string, cpu: string): Promise<void> {
  c.emu.createObject(pod(name, {}, { cpu }));
  await c.sim.waitFor(() => isReady(get(c.emu, name)!), { what: `${name} Ready` });
}

function scheduled(emu: KubeEmulator, name: string): Record<string, unknown> | undefined {
  return get(emu, name)?.status?.conditions?.find((c) => c.type === 'PodScheduled') as Record<string, unknown> | undefined;
}

/** Five nodes that each refuse a Pod asking for disk=ssd, 1Gi and host port 8126 for a different reason. */
const MIXED: SimNodeSpec[] = [
  { name: 'n-cordoned', labels: { disk: 'ssd' }, unschedulable: true },
  { name: 'n-gpu', labels: { disk: 'ssd' }, taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] },
  { name: 'n-hdd', labels: { disk: 'hdd' } },
  { name: 'n-port', labels: { disk: 'ssd' } },
  { name: 'n-small', labels: { disk: 'ssd' }, memory: '512Mi' },
];

async function mixedCluster(messages?: 'v1.23'): Promise<SimCluster> {
  const c = await startCluster({ nodes: MIXED, ...(messages ? { scheduler: { messages } } : {}) });
  c.emu.createObject(pod('apm', { nodeName: 'n-port' }, { cpu: '10m' }, 8126));
  c.emu.createObject(pod('picky', { nodeSelector: { disk: 'ssd' } }, { cpu: '100m', memory: '1Gi' }, 8126));
  return c;
}

describe('simulated scheduler', () => {
  it('binds Pods that fit, spreading them over the least allocated nodes', async () => {
    cluster = await startCluster({ nodes: nodes(3) });
    const { emu, sim } = cluster;
    for (const n of ['p1', 'p2', 'p3']) emu.createObject(pod(n, {}, { cpu: '1' }));
    await sim.waitFor(() => ['p1', 'p2', 'p3'].every((n) => isReady(get(emu, n)!)), { what: 'three Ready Pods' });
    expect(['p1', 'p2', 'p3'].map((n) => get(emu, n)!.spec.nodeName).sort()).toEqual(['node-a', 'node-b', 'node-c']);
    expect(scheduled(emu, 'p1')).toMatchObject({ status: 'True' });
    const events = emu.listObjects('v1', 'Event', 'default').filter((e) => e['reason'] === 'Scheduled');
    expect(events.map((e) => e['message'])).toContain(`Successfully assigned default/p1 to ${get(emu, 'p1')!.spec.nodeName}`);
  });

  it('explains an unschedulable Pod node by node, as kube-scheduler words and sorts it', async () => {
    cluster = await mixedCluster();
    const { emu, sim } = cluster;
    const cond = await sim.waitFor(() => (scheduled(emu, 'picky')?.['status'] === 'False' ? scheduled(emu, 'picky') : undefined), { what: 'picky to fail' });
    expect(cond).toMatchObject({
      reason: 'Unschedulable',
      message:
        "0/5 nodes are available: 1 Insufficient memory, 1 node(s) didn't have free ports for the requested pod ports, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable. no new claims to deallocate, preemption: 0/5 nodes are available: 2 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling.",
    });
    expect(get(emu, 'picky')?.status?.phase).toBe('Pending');
    const failed = emu.listObjects('v1', 'Event', 'default').find((e) => e['reason'] === 'FailedScheduling');
    expect(failed).toMatchObject({ type: 'Warning', message: cond['message'], source: { component: 'default-scheduler' } });
  });

  it('names the taint and doubles the final period in the v1.23 wording', async () => {
    cluster = await mixedCluster('v1.23');
    const { emu, sim } = cluster;
    const cond = await sim.waitFor(() => (scheduled(emu, 'picky')?.['status'] === 'False' ? scheduled(emu, 'picky') : undefined), { what: 'picky to fail' });
    expect(cond['message']).toBe(
      "0/5 nodes are available: 1 Insufficient memory, 1 node(s) didn't have free ports for the requested pod ports, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable. preemption: 0/5 nodes are available: 2 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling..",
    );
  });

  it('binds a Pending Pod once capacity is freed, counting Terminating Pods until they are gone', async () => {
    cluster = await startCluster({ nodes: [{ name: 'only', cpu: '1' }] });
    const { emu, sim } = cluster;
    await runReady(cluster, 'big', '800m');
    emu.createObject(pod('next', {}, { cpu: '300m' }));
    await sim.waitFor(() => scheduled(emu, 'next')?.['reason'] === 'Unschedulable', { what: 'next Pending' });
    expect(scheduled(emu, 'next')?.['message']).toBe(
      '0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    );
    emu.deleteObject('v1', 'Pod', 'default', 'big');
    await sim.settle();
    expect(get(emu, 'big')?.metadata.deletionTimestamp).toBeDefined();
    expect(get(emu, 'next')?.spec.nodeName).toBeUndefined();
    await sim.waitFor(() => get(emu, 'next')?.spec.nodeName === 'only', { what: 'next to be bound' });
    expect(get(emu, 'big')).toBeUndefined();
  });

  it('counts Pods per node and memory together, and defaults requests to limits', async () => {
    cluster = await startCluster({ nodes: [{ name: 'tiny', cpu: '2', memory: '1Gi', pods: 1 }] });
    const { emu, sim } = cluster;
    emu.createObject(pod('first', {}, { cpu: '100m', memory: '64Mi' }));
    await sim.waitFor(() => get(emu, 'first')?.spec.nodeName === 'tiny', { what: 'first bound' });
    const limited = pod('second');
    (limited['spec'] as { containers: Array<Record<string, unknown>> }).containers[0]!['resources'] = { limits: { cpu: '500m', memory: '2Gi' } };
    const created = emu.createObject(limited) as Pod;
    expect(created.spec.containers[0]!.resources?.requests).toEqual({ cpu: '500m', memory: '2Gi' });
    expect(created.status?.['qosClass']).toBe('Guaranteed');
    await sim.waitFor(() => scheduled(emu, 'second')?.['reason'] === 'Unschedulable', { what: 'second Pending' });
    expect(scheduled(emu, 'second')?.['message']).toBe(
      '0/1 nodes are available: 1 Insufficient memory, 1 Too many pods. no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    );
  });

  it('preempts lower-priority Pods for a system-node-critical one and binds it once they are gone', async () => {
    cluster = await startCluster({ nodes: [{ name: 'busy', cpu: '1' }] });
    const { emu, sim } = cluster;
    await runReady(cluster, 'low', '800m');
    const high = emu.createObject(pod('high', { priorityClassName: 'system-node-critical' }, { cpu: '500m' })) as Pod;
    expect(high.spec.priority).toBe(2000001000);
    await sim.waitFor(() => get(emu, 'high')?.status?.nominatedNodeName === 'busy', { what: 'nomination' });
    const victim = get(emu, 'low');
    expect(victim?.metadata.deletionTimestamp).toBeDefined();
    expect(victim?.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'PreemptionByScheduler',
      message: 'default-scheduler: preempting to accommodate a higher priority pod',
    });
    // Retried while the victim terminates, the Pod keeps its nomination and does not preempt again.
    expect(scheduled(emu, 'high')?.['message']).toBe(
      '0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: not eligible due to a terminating pod on the nominated node.',
    );
    expect(emu.listObjects('v1', 'Event', 'default').filter((e) => e['reason'] === 'Preempted').map((e) => e['message'])).toEqual([
      `Preempted by pod ${high.metadata.uid} on node busy`,
    ]);
    await sim.waitFor(() => get(emu, 'high')?.spec.nodeName === 'busy' && !get(emu, 'low'), { what: 'high bound after low left' });
    expect(get(emu, 'high')?.status?.nominatedNodeName).toBeUndefined();
  });

  it('honours required pod affinity and anti-affinity, both ways', async () => {
    cluster = await startCluster({ nodes: nodes(2) });
    const { emu, sim } = cluster;
    const term = (app: string) => [{ labelSelector: { matchLabels: { app } }, topologyKey: 'kubernetes.io/hostname' }];
    const labelled = (name: string, app: string, affinity?: Record<string, unknown>) => {
      const p = pod(name, affinity ? { affinity } : {});
      p.metadata.labels = { app };
      return p;
    };
    emu.createObject(labelled('db-1', 'db', { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: term('db') } }));
    emu.createObject(labelled('db-2', 'db', { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: term('db') } }));
    await sim.waitFor(() => get(emu, 'db-1')?.spec.nodeName && get(emu, 'db-2')?.spec.nodeName, { what: 'two db Pods bound' });
    expect(get(emu, 'db-1')!.spec.nodeName).not.toBe(get(emu, 'db-2')!.spec.nodeName);
    emu.createObject(labelled('db-3', 'db', { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: term('db') } }));
    emu.createObject(labelled('cache', 'cache', { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: term('web') } }));
    await sim.waitFor(() => scheduled(emu, 'db-3')?.['reason'] === 'Unschedulable' && scheduled(emu, 'cache')?.['reason'] === 'Unschedulable', { what: 'both Pending' });
    expect(scheduled(emu, 'db-3')?.['message']).toBe(
      "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. no new claims to deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
    );
    expect(scheduled(emu, 'cache')?.['message']).toBe(
      "0/2 nodes are available: 2 node(s) didn't match pod affinity rules. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
    );
    // A plain Pod carrying the db label is refused by the db Pods' own anti-affinity.
    emu.createObject(labelled('intruder', 'db'));
    await sim.waitFor(() => scheduled(emu, 'intruder')?.['reason'] === 'Unschedulable', { what: 'intruder Pending' });
    expect(scheduled(emu, 'intruder')?.['message']).toContain("2 node(s) didn't satisfy existing pods anti-affinity rules.");
    emu.createObject(labelled('web', 'web'));
    await sim.waitFor(() => get(emu, 'cache')?.spec.nodeName !== undefined && get(emu, 'cache')?.spec.nodeName === get(emu, 'web')?.spec.nodeName, {
      what: 'cache next to web',
    });
  });

  it('reports a scheduler error when there is no node at all', async () => {
    cluster = await startCluster({ nodes: [] });
    const { emu, sim } = cluster;
    emu.createObject(pod('alone'));
    await sim.waitFor(() => scheduled(emu, 'alone'), { what: 'a PodScheduled condition' });
    expect(scheduled(emu, 'alone')).toMatchObject({ status: 'False', reason: 'SchedulerError', message: 'no nodes available to schedule pods' });
    sim.addNode({ name: 'late' });
    await sim.waitFor(() => get(emu, 'alone')?.spec.nodeName === 'late', { what: 'binding to the new node' });
  });
});
