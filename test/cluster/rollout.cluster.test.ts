import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeIdentity } from '../../src/identity/index.js';
import { runCli, startCli } from '../e2e/run-cli.js';
import { type AgentWorld, agentWorld } from './agent-world.js';
import { watchCoverage } from './pod-watch.js';
import { CLUSTER_KIND, eventually, startTestCluster, stoppedByFailpoint, type TestCluster, workloadsRun } from './test-cluster.js';

// `par-identity rollout` of a Deployment and a DaemonSet across Nodes whose Pods become Ready after
// a delay (kwok on the real cluster, the simulation on the emulator), with the cluster's own
// controllers and scheduler doing the surge; the capacity fallback on a Node whose allocatable CPU
// leaves no room for a second Pod (the real scheduler: Insufficient cpu).

const FINGERPRINT = 'par-identity.datadoghq.com/identity-fingerprint';
let cluster: TestCluster;
let w: AgentWorld;
let kid: string;
// Nodes of this file alone (a label the workloads select), so other files' Nodes stay out of it.
const pool = `pool-${randomBytes(3).toString('hex')}`;
const nodes = ['a', 'b', 'c'].map((n) => `${pool}-${n}`);
const small = `${pool}-small`;

beforeAll(async () => {
  cluster = await startTestCluster();
  if (!workloadsRun.skip)
    await cluster.addNodes(nodes.map((name) => ({ name, cpu: '2', memory: '4Gi', labels: { 'par-test-pool': pool } })));
  w = await agentWorld(cluster, 'rollout');
  expect((await w.rotate(['--no-verify'])).code).toBe(0);
  const data = await w.secretData();
  kid = decodeIdentity({ privateKey: data.private_key!, urn: data.urn! }).key.kid;
});
afterAll(async () => {
  if (!workloadsRun.skip) await cluster?.removeNodes([...nodes, small]);
  await w?.close();
  await cluster?.close();
});

function podTemplate(app: string, selectPool = pool) {
  return {
    metadata: { labels: { app } },
    spec: {
      nodeSelector: { 'par-test-pool': selectPool },
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'runner',
          image: 'registry.example/par:1',
          readinessProbe: { httpGet: { path: '/ready', port: 8080 } },
          resources: { requests: { cpu: '600m', memory: '128Mi' } },
          envFrom: [{ secretRef: { name: 'private-action-runner-identity' } }],
        },
      ],
    },
  };
}

async function daemonSet(name: string, selectPool = pool) {
  await cluster.create({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: w.ns },
    spec: {
      selector: { matchLabels: { app: name } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      template: podTemplate(name, selectPool),
    },
  });
}

async function deployment(name: string, replicas: number) {
  await cluster.create({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: w.ns },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: podTemplate(name) },
  });
}

interface PodList {
  items: Array<{
    metadata: { name: string; annotations?: Record<string, string>; deletionTimestamp?: string };
    spec: { nodeName?: string };
    status?: { conditions?: Array<{ type: string; status: string }> };
  }>;
}
const podsOf = async (app: string) =>
  JSON.parse(await cluster.kubectlOk(['get', 'pods', '-n', w.ns, '-l', `app=${app}`, '-o', 'json'])) as PodList;
const readyPods = async (app: string) =>
  (await podsOf(app)).items.filter(
    (p) => !p.metadata.deletionTimestamp && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
  );
const allReady = (app: string, count: number) =>
  eventually(
    async () => (await readyPods(app)).length === count && (await podsOf(app)).items.length === count,
    `${count} Ready Pods of ${app}`,
    60_000,
    250,
  );

const rollout = (...args: string[]) =>
  runCli(['rollout', ...args, '-n', w.ns, '--kubeconfig', cluster.adminKubeconfig, '--poll-interval', '200ms'], {
    env: w.env,
    timeoutMs: 120_000,
  });

describe.skipIf(workloadsRun.skip)(`rollout on the ${CLUSTER_KIND} cluster ${workloadsRun.label}`, () => {
  it('DaemonSet: --check reports every node can surge and writes nothing', async () => {
    await daemonSet('check');
    await allReady('check', 3);
    const generation = (await cluster.getJson('daemonset', 'check', w.ns))!.metadata.generation;
    const run = await rollout('daemonset/check', '--check', '--json');
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { check: { verdict: string; nodes: { node: string; verdict: string }[] } };
    expect(out.check.verdict, run.stdout).toBe('can surge');
    expect(out.check.nodes.map((n) => [n.node, n.verdict]).sort()).toEqual(nodes.map((n) => [n, 'can surge']));
    expect((await cluster.getJson('daemonset', 'check', w.ns))!.metadata.generation).toBe(generation);
  });

  it('DaemonSet: surge create-before-delete, no node ever without a Ready Pod, strategy restored, Events recorded', async () => {
    await daemonSet('par');
    await allReady('par', 3);
    const coverage = await watchCoverage(cluster.adminKubeconfig, w.ns, 'app=par', { nodes });
    const run = await rollout('daemonset/par', '--json');
    await coverage.stop();
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ action: 'rolled-out', surged: true, strategyRestored: true });
    expect(coverage.gaps).toEqual([]);
    const ds = (await cluster.getJson('daemonset', 'par', w.ns))!;
    expect(ds.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    expect(ds.spec.template.metadata.annotations[FINGERPRINT]).toBe(kid);
    const pods = await readyPods('par');
    expect(pods).toHaveLength(3);
    expect(pods.every((p) => p.metadata.annotations?.[FINGERPRINT] === kid)).toBe(true);
    // The audit trail, as kubectl shows it.
    const events = await cluster.kubectlOk(['events', '-n', w.ns, '--for', 'daemonset/par']);
    expect(events).toMatch(/Normal\s+RolloutStarted\s+DaemonSet\/par/);
    expect(events).toMatch(/Normal\s+RolloutCompleted\s+DaemonSet\/par/);
    const describe = await cluster.kubectlOk(['describe', 'daemonset', 'par', '-n', w.ns]);
    expect(describe.slice(describe.indexOf('\nEvents:'))).toMatch(new RegExp(`RolloutStarted\\s+\\S+\\s+par-identity\\s+.*${kid}`));
  });

  it('Deployment: surge, never fewer Ready replicas than desired, strategy restored', async () => {
    await deployment('dep', 2);
    await allReady('dep', 2);
    const original = (await cluster.getJson('deployment', 'dep', w.ns))!.spec.strategy;
    const coverage = await watchCoverage(cluster.adminKubeconfig, w.ns, 'app=dep', { minimum: 2 });
    const run = await rollout('deployment/dep', '--json');
    await coverage.stop();
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ action: 'rolled-out', surged: true, strategyRestored: true });
    expect(coverage.gaps).toEqual([]);
    expect((await cluster.getJson('deployment', 'dep', w.ns))!.spec.strategy).toEqual(original);
    const pods = await readyPods('dep');
    expect(pods.length).toBeGreaterThanOrEqual(2);
    expect(pods.every((p) => p.metadata.annotations?.[FINGERPRINT] === kid)).toBe(true);
  });

  describe('capacity fallback on a node with small allocatable CPU', () => {
    // One node of 1 CPU: a 600m runner Pod fits, a second (the surge) does not: Insufficient cpu.
    const smallPool = `${pool}-s`;
    beforeAll(async () => {
      if (!workloadsRun.skip) await cluster.addNodes([{ name: small, cpu: '1', memory: '4Gi', labels: { 'par-test-pool': smallPool } }]);
    });

    it('--check names the full node; without --fallback the rollout is refused before any change', async () => {
      await daemonSet('full', smallPool);
      await allReady('full', 1);
      const check = await rollout('daemonset/full', '--check', '--json');
      expect(check.code, check.stderr).toBe(0);
      const out = JSON.parse(check.stdout) as { check: { nodes: { node: string; verdict: string }[] } };
      expect(out.check.nodes).toEqual([expect.objectContaining({ node: small, verdict: 'needs fallback' })]);
      const generation = (await cluster.getJson('daemonset', 'full', w.ns))!.metadata.generation;
      const run = await rollout('daemonset/full');
      expect(run.code).toBe(10);
      expect(run.stderr).toContain('error[NEEDS_FALLBACK]');
      expect(run.stderr).toContain(small);
      expect((await cluster.getJson('daemonset', 'full', w.ns))!.metadata.generation).toBe(generation);
    });

    it('with --fallback the full node is done delete-before-create and ends on the new template', async () => {
      const run = await rollout('daemonset/full', '--fallback', '--json');
      expect(run.code, run.stderr).toBe(0);
      const out = JSON.parse(run.stdout) as { fallbackSteps: { node: string; deletedPod?: string }[] };
      expect(out.fallbackSteps.filter((s) => s.deletedPod).map((s) => s.node)).toEqual([small]);
      await allReady('full', 1);
      expect((await readyPods('full'))[0]!.metadata.annotations?.[FINGERPRINT]).toBe(kid);
      const events = await cluster.kubectlOk(['events', '-n', w.ns, '--for', 'daemonset/full']);
      expect(events).toMatch(/Warning\s+RolloutFallback\s+DaemonSet\/full/);
    });

    it('room taken after the check: the surge Pod stays Pending (Insufficient cpu from the scheduler) and --fallback makes room', async () => {
      // 1500m: the check finds room for a second 600m Pod; then, with the run stopped right before its
      // first patch, another Pod takes 500m, so the surge Pod cannot fit and the scheduler says why.
      const mid = `${pool}-mid`;
      const midPool = `${pool}-m`;
      if (!workloadsRun.skip) await cluster.addNodes([{ name: mid, cpu: '1500m', memory: '4Gi', labels: { 'par-test-pool': midPool } }]);
      try {
        await daemonSet('late', midPool);
        await allReady('late', 1);
        const cli = startCli(
          [
            'rollout',
            'daemonset/late',
            '--fallback',
            '--json',
            '-n',
            w.ns,
            '--kubeconfig',
            cluster.adminKubeconfig,
            '--poll-interval',
            '200ms',
          ],
          {
            env: { ...w.env, PAR_IDENTITY_FAILPOINT: 'rollout-before-patch:stop' },
          },
        );
        cli.child.stdin.end();
        await stoppedByFailpoint(cli.child.pid!);
        await cluster.create({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'hog', namespace: w.ns },
          spec: {
            nodeName: mid,
            terminationGracePeriodSeconds: 0,
            containers: [{ name: 'hog', image: 'registry.example/hog:1', resources: { requests: { cpu: '500m' } } }],
          },
        });
        cli.child.kill('SIGCONT');
        const { code } = await cli.exit;
        expect(code, cli.stderr()).toBe(0);
        const out = JSON.parse(cli.stdout()) as {
          check: { nodes: { verdict: string }[] };
          fallbackSteps: { node: string; deletedPod?: string }[];
        };
        expect(out.check.nodes.map((n) => n.verdict)).toEqual(['can surge']);
        expect(out.fallbackSteps.filter((s) => s.deletedPod).map((s) => s.node)).toEqual([mid]);
        // The trigger was the scheduler's own word for it, recorded on the surge Pod.
        const scheduling = await cluster.kubectlOk([
          'get',
          'events',
          '-n',
          w.ns,
          '--field-selector',
          'reason=FailedScheduling',
          '-o',
          'json',
        ]);
        expect(JSON.stringify(JSON.parse(scheduling).items.map((e: { message?: string; note?: string }) => e.message ?? e.note))).toMatch(
          /Insufficient cpu/,
        );
        await allReady('late', 1);
        expect((await readyPods('late'))[0]!.metadata.annotations?.[FINGERPRINT]).toBe(kid);
      } finally {
        await cluster.kubectl(['delete', 'pod', 'hog', '-n', w.ns, '--wait=false']);
        await cluster.removeNodes([mid]);
      }
    });
  });
});
