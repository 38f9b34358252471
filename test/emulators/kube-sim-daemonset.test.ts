import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CONTROLLER_REVISION_HASH_LABEL, type Pod } from '../../emulators/kube/simulation/index.js';
import { findKubectl } from './kube-helpers.js';
import {
  daemonSet,
  daemonSetRolledOut,
  isReady,
  nodes,
  observe,
  podsOf,
  restart,
  type SimCluster,
  startCluster,
  status,
  stopCluster,
  tenantPod,
} from './kube-sim-helpers.js';

let cluster: SimCluster | undefined;
afterEach(async () => {
  const done = cluster;
  cluster = undefined;
  await stopCluster(done);
});

const NS = 'datadog';

const kubectlPath = findKubectl();

function kubectl(config: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(kubectlPath!, ['--kubeconfig', config, ...args], { env: { ...process.env, KUBECONFIG: '' } }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

function targetNode(p: Pod): string | undefined {
  return p.spec.nodeName ?? p.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]?.matchFields?.[0]?.values?.[0];
}

function hashOf(p: Pod): string | undefined {
  return p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL];
}

describe('DaemonSet controller', () => {
  it('creates one Pod per node, pinned by node affinity, with ControllerRevisions and status', async () => {
    cluster = await startCluster({ nodes: nodes(3) });
    const { emu, sim } = cluster;
    emu.createObject(daemonSet('agent', {}, { cpu: '100m' }));
    await sim.waitFor(() => daemonSetRolledOut(emu, NS, 'agent'), { what: 'the first rollout' });

    const pods = podsOf(emu, NS, 'agent');
    expect(pods.map((p) => p.spec.nodeName).sort()).toEqual(['node-a', 'node-b', 'node-c']);
    for (const p of pods) {
      expect(p.metadata.name).toMatch(/^agent-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(p.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual([
        { matchFields: [{ key: 'metadata.name', operator: 'In', values: [p.spec.nodeName] }] },
      ]);
      expect(p.spec.tolerations?.map((t) => `${t.key}:${t.effect}`)).toEqual([
        'node.kubernetes.io/not-ready:NoExecute',
        'node.kubernetes.io/unreachable:NoExecute',
        'node.kubernetes.io/disk-pressure:NoSchedule',
        'node.kubernetes.io/memory-pressure:NoSchedule',
        'node.kubernetes.io/pid-pressure:NoSchedule',
        'node.kubernetes.io/unschedulable:NoSchedule',
      ]);
      expect(p.metadata.labels?.['pod-template-generation']).toBe('1');
      expect(p.metadata.ownerReferences).toEqual([
        expect.objectContaining({ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', controller: true, blockOwnerDeletion: true }),
      ]);
      expect(p.status?.phase).toBe('Running');
    }
    const revisions = emu.listObjects('apps/v1', 'ControllerRevision', NS);
    expect(revisions).toHaveLength(1);
    const [rev] = revisions;
    expect(rev!['revision']).toBe(1);
    expect(rev!.metadata.name).toBe(`agent-${rev!.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL]}`);
    const ds = emu.getObject('apps/v1', 'DaemonSet', NS, 'agent')!;
    expect((rev!['data'] as { spec: { template: unknown } }).spec.template).toEqual({ ...(ds['spec'] as { template: object }).template, $patch: 'replace' });
    expect(new Set(pods.map(hashOf))).toEqual(new Set([rev!.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL]]));
    expect(ds['status']).toEqual({
      currentNumberScheduled: 3,
      desiredNumberScheduled: 3,
      numberAvailable: 3,
      numberMisscheduled: 0,
      numberReady: 3,
      observedGeneration: 1,
      updatedNumberScheduled: 3,
    });
  });

  it('surges: each old Pod is deleted only after its replacement was Ready for minReadySeconds, never more than maxSurge at once', async () => {
    cluster = await startCluster({ nodes: nodes(4) });
    const { emu, sim } = cluster;
    const minReadySeconds = 2;
    emu.createObject(daemonSet('agent', { maxSurge: 1, maxUnavailable: 0 }, { cpu: '100m', minReadySeconds }));
    await sim.waitFor(() => daemonSetRolledOut(emu, NS, 'agent'), { what: 'the first rollout' });
    const oldHash = hashOf(podsOf(emu, NS, 'agent')[0]!);

    const readyAt = new Map<string, number>();
    const deletedAt = new Map<string, number>();
    const violations: string[] = [];
    let maxSurging = 0;
    const stop = observe(emu, () => {
      const now = Date.now();
      const pods = podsOf(emu, NS, 'agent');
      let surging = 0;
      for (const node of ['node-a', 'node-b', 'node-c', 'node-d']) {
        const here = pods.filter((p) => targetNode(p) === node);
        const fresh = here.filter((p) => hashOf(p) !== oldHash && !p.metadata.deletionTimestamp);
        const old = here.filter((p) => hashOf(p) === oldHash);
        for (const p of fresh) if (isReady(p) && !readyAt.has(p.metadata.uid!)) readyAt.set(p.metadata.uid!, now);
        if (!here.some((p) => isReady(p) && !p.metadata.deletionTimestamp)) violations.push(`${node} had no Ready Pod`);
        for (const o of old) {
          if (!o.metadata.deletionTimestamp || deletedAt.has(o.metadata.uid!)) continue;
          deletedAt.set(o.metadata.uid!, now);
          const since = fresh.map((p) => readyAt.get(p.metadata.uid!)).find((t) => t !== undefined);
          if (since === undefined) violations.push(`${node}: old Pod deleted before its replacement was Ready`);
          else if (now - since < minReadySeconds * sim.secondMs) violations.push(`${node}: old Pod deleted ${now - since} ms after its replacement became Ready`);
        }
        // A surge slot is held by a new Pod that is not Ready yet next to a live old Pod. Once the new Pod is
        // Ready the controller frees the slot: in one sync it creates the next node's Pod before it deletes
        // this node's old one (syncNodes creates, then deletes), so that moment is not a second surge.
        if (fresh.some((p) => !isReady(p)) && old.some((p) => !p.metadata.deletionTimestamp)) surging++;
      }
      maxSurging = Math.max(maxSurging, surging);
    });
    restart(emu, 'DaemonSet', NS, 'agent', '2025-01-01T00:00:00Z');
    await sim.waitFor(() => daemonSetRolledOut(emu, NS, 'agent') && podsOf(emu, NS, 'agent').length === 4, { what: 'the surge rollout' });
    stop();

    expect([...new Set(violations)]).toEqual([]);
    expect(maxSurging).toBe(1);
    expect(deletedAt.size).toBe(4);
    const pods = podsOf(emu, NS, 'agent');
    expect(pods.every((p) => hashOf(p) !== oldHash && isReady(p))).toBe(true);
    const ds = emu.getObject('apps/v1', 'DaemonSet', NS, 'agent')!;
    expect(ds.metadata.generation).toBe(2);
    expect(ds.metadata.annotations?.['deprecated.daemonset.template.generation']).toBe('2');
    expect(pods.every((p) => p.metadata.labels?.['pod-template-generation'] === '2')).toBe(true);
    const revisions = emu.listObjects('apps/v1', 'ControllerRevision', NS).map((r) => r['revision']).sort();
    expect(revisions).toEqual([1, 2]);
  });

  it('leaves a surge Pod Pending with the scheduler message when its node is full, and resumes once the old Pod is deleted by uid', async () => {
    cluster = await startCluster({ nodes: nodes(3, { cpu: '1' }) });
    const { emu, sim } = cluster;
    // A tenant on node-b takes 850m: the old agent (100m) still fits, a second one does not.
    emu.createObject(tenantPod('tenant', 'node-b', '850m'));
    // maxSurge 2: the stuck Pod holds one slot indefinitely, the other nodes roll through the second.
    emu.createObject(daemonSet('agent', { maxSurge: 2, maxUnavailable: 0 }, { cpu: '100m' }));
    await sim.waitFor(() => daemonSetRolledOut(emu, NS, 'agent'), { what: 'the first rollout' });
    restart(emu, 'DaemonSet', NS, 'agent', '2025-01-01T00:00:00Z');
    const pending = await sim.waitFor(
      () => podsOf(emu, NS, 'agent').find((p) => !p.spec.nodeName && p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False')),
      { what: 'a Pending surge Pod' },
    );
    expect(targetNode(pending)).toBe('node-b');
    expect(pending.status?.conditions?.find((c) => c.type === 'PodScheduled')).toMatchObject({
      status: 'False',
      reason: 'Unschedulable',
      message:
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. no new claims to deallocate, preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
    });
    expect(pending.status?.nominatedNodeName).toBeUndefined();
    // The rest of the rollout goes on; node-b is stuck with its old Pod Running.
    await sim.waitFor(() => status(emu.getObject('apps/v1', 'DaemonSet', NS, 'agent'))['updatedNumberScheduled'] === 2, { what: 'two nodes updated' });
    await sim.settle();
    const onB = podsOf(emu, NS, 'agent').filter((p) => targetNode(p) === 'node-b');
    expect(onB).toHaveLength(2);
    const oldOnB = onB.find((p) => p.spec.nodeName === 'node-b')!;
    expect(oldOnB.status?.phase).toBe('Running');
    expect(isReady(oldOnB)).toBe(true);
    expect(status(emu.getObject('apps/v1', 'DaemonSet', NS, 'agent'))).toMatchObject({ desiredNumberScheduled: 3, updatedNumberScheduled: 2, numberAvailable: 3 });
    const events = emu.listObjects('v1', 'Event', NS).filter((e) => e['reason'] === 'FailedScheduling');
    expect(events.map((e) => (e['involvedObject'] as { name: string }).name)).toContain(pending.metadata.name);

    // The fallback's move: delete exactly that old Pod, guarded by its uid.
    emu.deleteObject('v1', 'Pod', NS, oldOnB.metadata.name!, { preconditions: { uid: oldOnB.metadata.uid } });
    await sim.waitFor(() => daemonSetRolledOut(emu, NS, 'agent') && podsOf(emu, NS, 'agent').length === 3, { what: 'the rollout to finish' });
    expect(podsOf(emu, NS, 'agent').find((p) => p.metadata.uid === pending.metadata.uid)?.spec.nodeName).toBe('node-b');
  });

  it('accepts maxSurge with host ports, and the surge Pod then waits for a free port (hostPort and hostNetwork)', async () => {
    cluster = await startCluster({ nodes: nodes(3) });
    const { emu, sim } = cluster;
    emu.createObject(daemonSet('apm', { maxSurge: 1, maxUnavailable: 0 }, { cpu: '10m', hostPort: 8126 }));
    const net = daemonSet('net', { maxSurge: 1, maxUnavailable: 0 }, { cpu: '10m' });
    const netSpec = (net['spec'] as { template: { spec: { hostNetwork?: boolean; containers: Array<Record<string, unknown>> } } }).template.spec;
    netSpec.hostNetwork = true;
    netSpec.containers[0]!['ports'] = [{ containerPort: 5000 }];
    const created = emu.createObject(net);
    // Defaulting turns a hostNetwork container port into a host port.
    expect((created['spec'] as { template: { spec: { containers: Array<{ ports: unknown }> } } }).template.spec.containers[0]!.ports).toEqual([
      { containerPort: 5000, hostPort: 5000, protocol: 'TCP' },
    ]);
    await sim.waitFor(() => daemonSetRolledOut(emu, NS, 'apm') && daemonSetRolledOut(emu, NS, 'net'), { what: 'the first rollouts' });
    restart(emu, 'DaemonSet', NS, 'apm', '2025-01-01T00:00:00Z');
    restart(emu, 'DaemonSet', NS, 'net', '2025-01-01T00:00:00Z');
    const message =
      "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. no new claims to deallocate, preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.";
    for (const app of ['apm', 'net']) {
      const pending = await sim.waitFor(() => podsOf(emu, NS, app).find((p) => p.status?.conditions?.some((c) => c.reason === 'Unschedulable')), {
        what: `a Pending ${app} Pod`,
      });
      expect(pending.status?.conditions?.find((c) => c.type === 'PodScheduled')?.message).toBe(message);
    }
    expect(daemonSetRolledOut(emu, NS, 'apm')).toBe(false);
  });

  it('never places a surge Pod next to an old one that its required hostname anti-affinity excludes', async () => {
    cluster = await startCluster({ nodes: nodes(3) });
    const { emu, sim } = cluster;
    const ds = daemonSet('spread', { maxSurge: 1, maxUnavailable: 0 }, { cpu: '10m' });
    (ds['spec'] as { template: { spec: Record<string, unknown> } }).template.spec['affinity'] = {
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'spread' } }, topologyKey: 'kubernetes.io/hostname' }] },
    };
    emu.createObject(ds);
    await sim.waitFor(() => daemonSetRolledOut(emu, NS, 'spread'), { what: 'the first rollout' });
    restart(emu, 'DaemonSet', NS, 'spread', '2025-01-01T00:00:00Z');
    const pending = await sim.waitFor(() => podsOf(emu, NS, 'spread').find((p) => p.status?.conditions?.some((c) => c.reason === 'Unschedulable')), {
      what: 'a Pending surge Pod',
    });
    expect(pending.status?.conditions?.find((c) => c.type === 'PodScheduled')?.message).toBe(
      "0/3 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. no new claims to deallocate, preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
    );
  });

  it('uses the older wording when asked to (v1.23 scheduler messages)', async () => {
    cluster = await startCluster({ nodes: nodes(3, { cpu: '1' }), scheduler: { messages: 'v1.23' } });
    const { emu, sim } = cluster;
    emu.createObject(tenantPod('tenant', 'node-c', '950m'));
    emu.createObject(daemonSet('agent', {}, { cpu: '100m' }));
    const pending = await sim.waitFor(() => podsOf(emu, NS, 'agent').find((p) => p.status?.conditions?.some((c) => c.reason === 'Unschedulable')), {
      what: 'a Pending agent Pod',
    });
    expect(pending.status?.conditions?.find((c) => c.type === 'PodScheduled')?.message).toBe(
      "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling..",
    );
  });

  it('stalls on a never-Ready replacement: it holds its surge slot and the old Pod keeps running', async () => {
    cluster = await startCluster({ nodes: nodes(3) });
    const { emu, sim } = cluster;
    emu.createObject(daemonSet('agent', { maxSurge: 1, maxUnavailable: 0 }, { cpu: '100m', minReadySeconds: 1 }));
    await sim.waitFor(() => daemonSetRolledOut(emu, NS, 'agent'), { what: 'the first rollout' });
    const before = podsOf(emu, NS, 'agent');
    restart(emu, 'DaemonSet', NS, 'agent', '2025-01-01T00:00:00Z', { 'sim.kube-emulator.local/readiness': 'never' });
    const stuck = await sim.waitFor(() => podsOf(emu, NS, 'agent').find((p) => p.status?.phase === 'Running' && !before.some((b) => b.metadata.uid === p.metadata.uid)), {
      what: 'the replacement to run',
    });
    // Many reconcile passes and minReadySeconds periods later, nothing moved.
    await new Promise((resolve) => setTimeout(resolve, 10 * sim.secondMs));
    await sim.settle();
    const pods = podsOf(emu, NS, 'agent');
    expect(pods).toHaveLength(4);
    expect(isReady(pods.find((p) => p.metadata.uid === stuck.metadata.uid)!)).toBe(false);
    for (const old of before) {
      const now = pods.find((p) => p.metadata.uid === old.metadata.uid)!;
      expect(now.metadata.deletionTimestamp).toBeUndefined();
      expect(now.status?.phase).toBe('Running');
      expect(isReady(now)).toBe(true);
    }
    expect(stuck.status?.containerStatuses?.[0]).toMatchObject({ ready: false, started: true });
    const s = status(emu.getObject('apps/v1', 'DaemonSet', NS, 'agent'));
    // Each node's oldest Pod is still the old one; a zero count is omitted, as omitempty does.
    expect(s).toMatchObject({ numberAvailable: 3, numberReady: 3, currentNumberScheduled: 3 });
    expect('updatedNumberScheduled' in s).toBe(false);
    expect(daemonSetRolledOut(emu, NS, 'agent')).toBe(false);
  });

  it('replaces old Pods that are not yet available at once, beyond maxSurge', async () => {
    cluster = await startCluster({ nodes: nodes(3), secondMs: 10 });
    const { emu, sim } = cluster;
    // minReadySeconds 100 (1 s here): right after the first rollout the old Pods are Ready but not available.
    emu.createObject(daemonSet('agent', { maxSurge: 1, maxUnavailable: 0 }, { cpu: '100m', minReadySeconds: 100 }));
    await sim.waitFor(() => status(emu.getObject('apps/v1', 'DaemonSet', NS, 'agent'))['numberReady'] === 3, { what: 'three Ready Pods' });
    const old = podsOf(emu, NS, 'agent');
    expect(status(emu.getObject('apps/v1', 'DaemonSet', NS, 'agent'))['numberAvailable']).toBeUndefined();
    restart(emu, 'DaemonSet', NS, 'agent', '2025-01-01T00:00:00Z', { 'sim.kube-emulator.local/readiness': 'never' });
    await sim.waitFor(() => podsOf(emu, NS, 'agent').length === 6, { what: 'a replacement on every node' });
    await sim.settle();
    // Both stay: the old Pods are Ready, their replacements are not.
    expect(old.every((o) => podsOf(emu, NS, 'agent').some((p) => p.metadata.uid === o.metadata.uid && !p.metadata.deletionTimestamp))).toBe(true);
  });

  it('drops an unready old Pod next to a replacement that is not Ready either, which frees the surge slot', async () => {
    cluster = await startCluster({ nodes: nodes(3) });
    const { emu, sim } = cluster;
    emu.createObject(daemonSet('agent', { maxSurge: 1, maxUnavailable: 0 }, { cpu: '100m' }));
    await sim.waitFor(() => daemonSetRolledOut(emu, NS, 'agent'), { what: 'the first rollout' });
    const sick = podsOf(emu, NS, 'agent').find((p) => p.spec.nodeName === 'node-a')!;
    sim.setPodBehavior((p) => (p.metadata.uid === sick.metadata.uid ? { crashLoop: true } : undefined));
    await sim.waitFor(() => status(emu.getObject('apps/v1', 'DaemonSet', NS, 'agent'))['numberAvailable'] === 2, { what: 'node-a to go unavailable' });
    restart(emu, 'DaemonSet', NS, 'agent', '2025-01-01T00:00:00Z', { 'sim.kube-emulator.local/readiness': 'never' });
    await sim.waitFor(() => podsOf(emu, NS, 'agent').filter((p) => p.status?.phase === 'Running' && hashOf(p) !== hashOf(sick)).length === 2, {
      what: 'two replacements running',
    });
    await new Promise((resolve) => setTimeout(resolve, 5 * sim.secondMs));
    await sim.settle();
    const fresh = podsOf(emu, NS, 'agent').filter((p) => hashOf(p) !== hashOf(sick));
    // node-a holds no surge slot once its old Pod is gone: one more node got a replacement.
    expect(fresh).toHaveLength(2);
    expect(fresh.map(targetNode)).toContain('node-a');
    // Neither Pod on node-a is Ready, so the manage loop keeps only the new one.
    const sickNow = emu.getObject('v1', 'Pod', NS, sick.metadata.name!);
    expect(sickNow === undefined || sickNow.metadata.deletionTimestamp !== undefined).toBe(true);
    const healthyOld = podsOf(emu, NS, 'agent').filter((p) => hashOf(p) === hashOf(sick) && p.metadata.uid !== sick.metadata.uid);
    expect(healthyOld).toHaveLength(2);
    expect(healthyOld.every((p) => !p.metadata.deletionTimestamp && isReady(p))).toBe(true);
  });

  it('with maxSurge 0 deletes an old Pod first and creates its replacement only once the old one is gone', async () => {
    cluster = await startCluster({ nodes: nodes(3) });
    const { emu, sim } = cluster;
    emu.createObject(daemonSet('agent', {}, { cpu: '100m' }));
    await sim.waitFor(() => daemonSetRolledOut(emu, NS, 'agent'), { what: 'the first rollout' });
    expect((emu.getObject('apps/v1', 'DaemonSet', NS, 'agent')!['spec'] as { updateStrategy: unknown }).updateStrategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 0, maxUnavailable: 1 },
    });
    const oldHash = hashOf(podsOf(emu, NS, 'agent')[0]!);
    const gone = new Map<string, number>();
    const order: string[] = [];
    let maxDown = 0;
    const stopOrder = emu.onChange((e) => {
      if (e.kindKey !== 'v1/Pod') return;
      const p = e.object as Pod;
      if (e.type === 'DELETED' && hashOf(p) === oldHash) {
        gone.set(targetNode(p)!, e.rv);
        order.push(`deleted ${targetNode(p)}`);
      }
      if (e.type === 'ADDED' && hashOf(p) !== oldHash) order.push(`created ${targetNode(p)}${gone.has(targetNode(p)!) ? '' : ' (old still there)'}`);
    });
    const stopDown = observe(emu, () => {
      const pods = podsOf(emu, NS, 'agent');
      const down = ['node-a', 'node-b', 'node-c'].filter((n) => !pods.some((p) => targetNode(p) === n && isReady(p) && !p.metadata.deletionTimestamp));
      maxDown = Math.max(maxDown, down.length);
    });
    restart(emu, 'DaemonSet', NS, 'agent', '2025-01-01T00:00:00Z');
    await sim.waitFor(() => daemonSetRolledOut(emu, NS, 'agent') && podsOf(emu, NS, 'agent').length === 3, { what: 'the rollout' });
    stopOrder();
    stopDown();
    expect(order.filter((o) => o.startsWith('created'))).toHaveLength(3);
    expect(order.filter((o) => o.includes('old still there'))).toEqual([]);
    expect(maxDown).toBe(1);
  });

  it.skipIf(!kubectlPath && process.env['CI'] !== 'true')('is restarted and followed by kubectl rollout restart / rollout status', async () => {
    cluster = await startCluster({ nodes: nodes(3) }, true);
    const { emu, sim } = cluster;
    const dir = await mkdtemp(join(tmpdir(), 'kube-sim-'));
    try {
      const config = join(dir, 'config');
      await emu.writeKubeconfig(config);
      // minReadySeconds 10 (200 ms here) per node: slow enough for kubectl to watch the rollout progress.
      emu.createObject(daemonSet('agent', { maxSurge: 1, maxUnavailable: 0 }, { cpu: '100m', minReadySeconds: 10 }));
      await sim.waitFor(() => daemonSetRolledOut(emu, NS, 'agent'), { what: 'the first rollout' });
      const restarted = await kubectl(config, ['-n', NS, 'rollout', 'restart', 'daemonset/agent']);
      expect(restarted).toEqual({ code: 0, out: 'daemonset.apps/agent restarted\n' });
      const followed = await kubectl(config, ['-n', NS, 'rollout', 'status', 'daemonset/agent', '--timeout=20s']);
      expect(followed.code).toBe(0);
      expect(followed.out).toContain('daemon set "agent" successfully rolled out');
      expect(followed.out).toContain('Waiting for daemon set "agent" rollout to finish');
      expect(daemonSetRolledOut(emu, NS, 'agent')).toBe(true);
      const table = await kubectl(config, ['-n', NS, 'get', 'pods', '-l', 'app=agent', '-o', 'custom-columns=NODE:.spec.nodeName,READY:.status.containerStatuses[0].ready', '--no-headers']);
      expect(table.out.trim().split('\n').map((l) => l.trim().replace(/\s+/g, ' ')).sort()).toEqual(['node-a true', 'node-b true', 'node-c true']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
