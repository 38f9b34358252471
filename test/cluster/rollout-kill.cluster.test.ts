import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../e2e/run-cli.js';
import { type AgentWorld, agentWorld } from './agent-world.js';
import { CLUSTER_KIND, eventually, startTestCluster, type TestCluster, workloadsRun } from './test-cluster.js';

// Issue 31 point 5 on the cluster of this run (the real control plane with `npm run test:cluster`):
// `rollout` killed with SIGKILL at each boundary where it has the strategy changed (right after its
// patch, during its wait, right before its restore). The record of the original strategy is on the
// workload; `rollout --check` and `status --pods` report it; the next `rollout` restores it and
// removes the record. Every assertion reads the cluster through kubectl.

const RECORD = 'par-identity.datadoghq.com/original-strategy';
let cluster: TestCluster;
let w: AgentWorld;
const pool = `kill-${randomBytes(3).toString('hex')}`;
const nodes = [`${pool}-a`, `${pool}-b`];

beforeAll(async () => {
  cluster = await startTestCluster();
  if (!workloadsRun.skip)
    await cluster.addNodes(nodes.map((name) => ({ name, cpu: '2', memory: '4Gi', labels: { 'par-test-pool': pool } })));
  w = await agentWorld(cluster, 'kill');
  expect((await w.rotate(['--no-verify'])).code).toBe(0);
});
afterAll(async () => {
  if (!workloadsRun.skip) await cluster?.removeNodes(nodes);
  await w?.close();
  await cluster?.close();
});

function podTemplate(app: string) {
  return {
    metadata: { labels: { app } },
    spec: {
      nodeSelector: { 'par-test-pool': pool },
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'runner',
          image: 'registry.example/par:1',
          readinessProbe: { httpGet: { path: '/ready', port: 8080 } },
          resources: { requests: { cpu: '300m', memory: '64Mi' } },
          envFrom: [{ secretRef: { name: 'private-action-runner-identity' } }],
        },
      ],
    },
  };
}

async function deployment(name: string, replicas: number) {
  await cluster.create({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: w.ns },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: podTemplate(name) },
  });
  await eventually(
    async () => {
      const d = await cluster.getJson('deployment', name, w.ns);
      return d && (d.status?.availableReplicas ?? 0) === replicas && (d.status?.updatedReplicas ?? 0) === replicas;
    },
    `${replicas} available replicas of ${name}`,
    60_000,
    250,
  );
}

async function daemonSet(name: string) {
  await cluster.create({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: w.ns },
    spec: {
      selector: { matchLabels: { app: name } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      template: podTemplate(name),
    },
  });
  await eventually(
    async () => {
      const d = await cluster.getJson('daemonset', name, w.ns);
      return d && (d.status?.numberReady ?? 0) === nodes.length && (d.status?.updatedNumberScheduled ?? 0) === nodes.length;
    },
    `${nodes.length} Ready Pods of ${name}`,
    60_000,
    250,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: Kubernetes objects read by test assertions only
const live = async (kind: string, name: string) => (await cluster.getJson(kind, name, w.ns)) as Record<string, any>;
const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { env: { ...w.env, ...env }, timeoutMs: 120_000 });
const rollout = (target: string, ...extra: string[]) => [
  'rollout',
  target,
  '-n',
  w.ns,
  '--kubeconfig',
  cluster.adminKubeconfig,
  '--poll-interval',
  '200ms',
  ...extra,
];
const statusPods = (target: string) => [
  'status',
  '--secret',
  '--secret-name',
  'private-action-runner-identity',
  '-n',
  w.ns,
  '--kubeconfig',
  cluster.adminKubeconfig,
  '--pods',
  target,
  '--json',
];

describe.skipIf(workloadsRun.skip)(
  `rollout killed (SIGKILL) while it has the strategy changed, on the ${CLUSTER_KIND} cluster ${workloadsRun.label}`,
  () => {
    for (const point of ['rollout-after-patch', 'rollout-during-wait', 'rollout-before-restore']) {
      it(`Deployment, killed at ${point}: the record is on it, --check and status --pods report it, the next rollout restores 25%/25% and removes it`, async () => {
        const name = `d-${point.replace('rollout-', '')}`;
        await deployment(name, 2);
        const before = (await live('deployment', name)).spec.strategy;
        expect(before).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } });

        const killed = await cli(rollout(`deployment/${name}`), { PAR_IDENTITY_FAILPOINT: point });
        expect(killed.signal, killed.stderr).toBe('SIGKILL');
        const left = await live('deployment', name);
        expect(left.spec.strategy.rollingUpdate).toEqual({ maxSurge: '25%', maxUnavailable: 0 });
        expect(JSON.parse(left.metadata.annotations[RECORD]).original).toEqual({
          type: 'RollingUpdate',
          maxSurge: '25%',
          maxUnavailable: '25%',
        });

        const check = await cli(rollout(`deployment/${name}`, '--check', '--json'));
        expect(check.code, check.stderr).toBe(0);
        const found = JSON.parse(check.stdout).interruptedRollout;
        expect(found).toMatchObject({ state: 'interrupted', action: 'reported', original: { maxSurge: '25%', maxUnavailable: '25%' } });
        expect(found.message).toMatch(
          /^strategy changed by an interrupted par-identity rollout at \S+Z \(original: maxSurge 25%, maxUnavailable 25%; now: maxSurge 25%, maxUnavailable 0; pid \d+ is gone\)$/,
        );
        const status = await cli(statusPods(`deployment/${name}`));
        expect(JSON.parse(status.stdout), status.stderr).toMatchObject({ interruptedRollout: { state: 'interrupted' } });
        // Reading changed nothing.
        expect((await live('deployment', name)).metadata.annotations[RECORD]).toBe(left.metadata.annotations[RECORD]);

        const next = await cli(rollout(`deployment/${name}`, '--json'));
        expect(next.code, next.stderr).toBe(0);
        expect(JSON.parse(next.stdout)).toMatchObject({ interruptedRollout: { state: 'interrupted', action: 'restored' } });
        expect(next.stderr).toContain('restored first: the original strategy is back and the record removed');
        const after = await live('deployment', name);
        expect(after.spec.strategy).toEqual(before);
        expect(after.metadata.annotations?.[RECORD]).toBeUndefined();
      });
    }

    it('DaemonSet, killed right after its patch (maxSurge 1 / maxUnavailable 0): the next rollout puts back 0/1', async () => {
      await daemonSet('ds-kill');
      const killed = await cli(rollout('daemonset/ds-kill'), { PAR_IDENTITY_FAILPOINT: 'rollout-after-patch' });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      expect((await live('daemonset', 'ds-kill')).spec.updateStrategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
      const status = await cli(statusPods('daemonset/ds-kill'));
      expect(JSON.parse(status.stdout), status.stderr).toMatchObject({
        interruptedRollout: { state: 'interrupted', original: { maxSurge: 0, maxUnavailable: 1 } },
      });
      const next = await cli(rollout('daemonset/ds-kill', '--json'));
      expect(next.code, next.stderr).toBe(0);
      expect(JSON.parse(next.stdout)).toMatchObject({ interruptedRollout: { action: 'restored' } });
      const after = await live('daemonset', 'ds-kill');
      expect(after.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } });
      expect(after.metadata.annotations?.[RECORD]).toBeUndefined();
    });

    it('a strategy changed by hand after the kill is never clobbered: the record is removed and the run says so', async () => {
      await deployment('hand', 2);
      const killed = await cli(rollout('deployment/hand'), { PAR_IDENTITY_FAILPOINT: 'rollout-after-patch' });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      await cluster.kubectlOk([
        'patch',
        'deployment',
        'hand',
        '-n',
        w.ns,
        '--type',
        'merge',
        '-p',
        JSON.stringify({ spec: { strategy: { rollingUpdate: { maxSurge: 2, maxUnavailable: 1 } } } }),
      ]);
      const next = await cli(rollout('deployment/hand', '--json'));
      expect(next.code, next.stderr).toBe(0);
      expect(JSON.parse(next.stdout)).toMatchObject({
        interruptedRollout: { state: 'changed-since', action: 'record-removed', current: { maxSurge: 2, maxUnavailable: 1 } },
      });
      expect(next.stderr).toContain('changed since by someone else (now: maxSurge 2, maxUnavailable 1): left as it is');
      const after = await live('deployment', 'hand');
      expect(after.spec.strategy.rollingUpdate).toEqual({ maxSurge: 2, maxUnavailable: 1 });
      expect(after.metadata.annotations?.[RECORD]).toBeUndefined();
    });
  },
);
