import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildUrn, encodePrivateJwk, generateIdentityKey } from '../../src/identity/index.js';
import { type AgentWorld, agentWorld, SECRET } from './agent-world.js';
import { CLUSTER_KIND, eventually, startTestCluster, type TestCluster, workloadsRun } from './test-cluster.js';

// status -A (every identity Secret the token can read) and status --pods (which Pod runs which
// identity) against Pods that the cluster's own controllers made: ReplicaSets of a Deployment,
// ControllerRevisions of a DaemonSet.

let cluster: TestCluster;
let w: AgentWorld;
const node = `status-${randomBytes(3).toString('hex')}`;

beforeAll(async () => {
  cluster = await startTestCluster();
  if (!workloadsRun.skip) await cluster.addNodes([{ name: node, cpu: '8', memory: '16Gi', labels: { 'par-test-pool': node } }]);
  w = await agentWorld(cluster, 'status');
  expect((await w.rotate(['--no-verify'])).code).toBe(0);
});
afterAll(async () => {
  if (!workloadsRun.skip) await cluster?.removeNodes([node]);
  await w?.close();
  await cluster?.close();
});

const template = (app: string) => ({
  metadata: { labels: { app } },
  spec: {
    nodeSelector: { 'par-test-pool': node },
    terminationGracePeriodSeconds: 0,
    containers: [
      {
        name: 'agent',
        image: 'registry.example/agent:7',
        readinessProbe: { httpGet: { path: '/ready', port: 5555 } },
        resources: { requests: { cpu: '100m' } },
        envFrom: [{ secretRef: { name: SECRET } }],
      },
    ],
  },
});

const status = (...args: string[]) => w.run(['status', ...args, '-c', w.dir, '--kubeconfig', cluster.adminKubeconfig, '--json']);
const readyCount = async (app: string) =>
  (
    JSON.parse(await cluster.kubectlOk(['get', 'pods', '-n', w.ns, '-l', `app=${app}`, '-o', 'json'])).items as Array<{
      metadata: { deletionTimestamp?: string };
      status?: { conditions?: Array<{ type: string; status: string }> };
    }>
  ).filter((p) => !p.metadata.deletionTimestamp && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'))
    .length;

describe(`status on the ${CLUSTER_KIND} cluster`, () => {
  it('-A lists the cluster agent and Helm runner Secrets of every namespace, and no other Secret', async () => {
    const other = await cluster.freshNamespace('status-helm');
    await cluster.create(
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'par-runner', namespace: other },
        type: 'Opaque',
        stringData: {
          RUNNER_URN: buildUrn({ region: 'us1', orgId: 5, runnerId: 'helm' }),
          RUNNER_PRIVATE_KEY: encodePrivateJwk(generateIdentityKey()),
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'unrelated', namespace: other },
        type: 'Opaque',
        stringData: { password: 'x' },
      },
    );
    const run = await w.run(['status', '-A', '--kubeconfig', cluster.adminKubeconfig, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const rows = (JSON.parse(run.stdout).secrets as { namespace: string; name: string; layout: string }[])
      .filter((r) => r.namespace === w.ns || r.namespace === other)
      .map((r) => `${r.namespace}/${r.name}:${r.layout}`)
      .sort();
    expect(rows).toEqual([`${w.ns}/${SECRET}:cluster-agent`, `${other}/par-runner:helm-runner`].sort());
  });

  it.skipIf(workloadsRun.skip)(
    `--pods of a Deployment: its Pods run the previous identity until a rollout, then the current one ${workloadsRun.label}`,
    async () => {
      await cluster.create({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'datadog-cluster-agent', namespace: w.ns },
        spec: { replicas: 2, selector: { matchLabels: { app: 'dca' } }, template: template('dca') },
      });
      await eventually(async () => (await readyCount('dca')) === 2, '2 Ready cluster agent Pods', 60_000, 250);
      const before = await status('--secret', '--pods');
      // Pods on another identity: exit 17 (podsOnOtherIdentity), the previous runner still needed.
      expect(before.code, before.stderr).toBe(17);
      const stale = JSON.parse(before.stdout) as { pods: { name: string; runsCurrent: boolean }[]; previousRunnerRemovable: boolean };
      expect(stale.pods).toHaveLength(2);
      expect(stale.pods.every((p) => !p.runsCurrent)).toBe(true);
      expect(stale.previousRunnerRemovable).toBe(false);
      const rolled = await w.run(
        ['rollout', 'deployment/datadog-cluster-agent', '-n', w.ns, '--kubeconfig', cluster.adminKubeconfig, '--poll-interval', '200ms'],
        { timeoutMs: 120_000 },
      );
      expect(rolled.code, rolled.stderr).toBe(0);
      await eventually(
        async () => {
          const after = await status('--secret', '--pods');
          const view = JSON.parse(after.stdout) as { pods: { runsCurrent: boolean }[]; previousRunnerRemovable: boolean };
          return view.pods.length === 2 && view.pods.every((p) => p.runsCurrent) && view.previousRunnerRemovable && after.code === 0;
        },
        'every Pod on the current identity',
        60_000,
        250,
      );
    },
  );

  it.skipIf(workloadsRun.skip)(`--pods of a DaemonSet (Pods of its ControllerRevisions) ${workloadsRun.label}`, async () => {
    await cluster.create({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'datadog-agent', namespace: w.ns },
      spec: { selector: { matchLabels: { app: 'agent' } }, template: template('agent') },
    });
    await eventually(async () => (await readyCount('agent')) === 1, 'the agent Pod Ready', 60_000, 250);
    const run = await status('--secret', '--pods', 'daemonset/datadog-agent');
    expect(run.code, run.stderr).toBe(17);
    const view = JSON.parse(run.stdout) as { pods: { name: string; node?: string; runsCurrent: boolean }[] };
    expect(view.pods).toHaveLength(1);
    expect(view.pods[0]!.runsCurrent).toBe(false);
  });
});
